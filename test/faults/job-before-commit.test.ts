import { randomInt } from 'node:crypto';
import type { Client } from 'pg';
import { connectDirect } from '../support/services';
import { checkInvariants } from '../support/invariants';
import { scripted, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/**
 * Admission enqueues a new turn's job while the transaction that records the turn commits. A
 * worker that takes the job before the commit waits for it; one whose turn never commits runs
 * nothing. The commit is held open by a deferred trigger that waits on a lock the test holds.
 */
describe('a turn job taken before its admission commits', () => {
  let harness: ToolTurnHarness;
  let gate: Client;
  const gateKey = randomInt(1, 2 ** 31 - 1);

  beforeAll(async () => {
    harness = await startToolTurnHarness();
    gate = await connectDirect(harness.stack.config.DATABASE_SCHEMA);
    await gate.query(`
      CREATE FUNCTION commit_gate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_lock_shared(${gateKey});
        PERFORM pg_advisory_unlock_shared(${gateKey});
        IF NEW.input::text LIKE '%refuse-commit%' THEN RAISE EXCEPTION 'commit refused by the test'; END IF;
        RETURN NULL;
      END $$;
      CREATE CONSTRAINT TRIGGER commit_gate AFTER INSERT ON turns DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION commit_gate();
    `);
  });
  afterAll(async () => {
    await gate.end();
    await harness.close();
  });

  /** Resolves once a worker waits for an admission's row lock on a conversation. */
  async function workerWaitsForCommit(): Promise<void> {
    for (;;) {
      const { rows } = await gate.query<{ waiting: string }>(
        `SELECT count(*) AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'SELECT 1 FROM conversations WHERE id = $1 FOR KEY SHARE'`,
      );
      if (Number(rows[0]!.waiting) > 0) return;
    }
  }

  async function postWhileCommitHeld(conversationId: string, content: string) {
    await gate.query('SELECT pg_advisory_lock($1)', [gateKey]);
    const posted = harness.api.post(`/v1/conversations/${conversationId}/turns`, { content });
    try {
      await workerWaitsForCommit();
    } finally {
      await gate.query('SELECT pg_advisory_unlock($1)', [gateKey]);
    }
    return posted;
  }

  it('runs the turn once its admission commits', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const posted = await postWhileCommitHeld(conversationId, scripted({ text: 'after the commit' }));
    expect(posted.status).toBe(202);
    const events = (await client.waitForTurnEnd(posted.body.turnId)).filter((event) => event.turnId === posted.body.turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(events.filter((event) => event.type === 'turn-start')).toEqual([expect.objectContaining({ attempt: 1 })]);
    const statuses = await checkInvariants(harness.stack.resources.db, { turnIds: [posted.body.turnId], toolExecutions: [], events: client.events() });
    expect(statuses).toEqual({ [posted.body.turnId]: 'completed' });
  });

  it('runs nothing for a turn whose admission never commits, and the next turn runs', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const refused = await postWhileCommitHeld(conversationId, `refuse-commit ${scripted({ text: 'never' })}`);
    expect(refused.status).toBe(500);
    expect(await harness.stack.resources.turns.listForConversation(conversationId)).toEqual([]);
    const next = await harness.postTurn(conversationId, { text: 'next' });
    const events = await client.waitForTurnEnd(next.turnId);
    expect(events.map((event) => event.turnId)).toEqual(events.map(() => next.turnId));
    expect((await harness.api.get(`/v1/conversations/${conversationId}`)).body.messages.map((message: any) => message.role)).toEqual(['user', 'assistant']);
  });
});
