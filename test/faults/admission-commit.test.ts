import { randomInt } from 'node:crypto';
import type { Client } from 'pg';
import { connectDirect } from '../support/services';
import { checkInvariants } from '../support/invariants';
import { waitUntilStatementWaitsForLock } from '../support/lock-waits';
import { scripted, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/**
 * Admission enqueues a new turn's job once the turn is committed: while the commit is held
 * nothing of the turn runs, and a turn whose commit fails has no job at all. The commit is held
 * open by a deferred trigger that waits on a lock the test holds.
 */
describe('a turn whose admission is slow to commit, or fails to', () => {
  let harness: ToolTurnHarness;
  let gate: Client;
  const gateKey = randomInt(1, 2 ** 31 - 1);

  beforeAll(async () => {
    harness = await startToolTurnHarness();
    gate = await connectDirect(harness.stack.config.DATABASE_SCHEMA, harness.stack.config.DATABASE_URL);
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

  /** Posts a turn while its commit is held; what the conversation's subscriber saw meanwhile comes with the answer. */
  async function postWhileCommitHeld(conversationId: string, content: string, client: { events(): unknown[] }) {
    await gate.query('SELECT pg_advisory_lock($1)', [gateKey]);
    let answered = false;
    const posted = harness.api.post(`/v1/conversations/${conversationId}/turns`, { content }).then((response) => {
      answered = true;
      return response;
    });
    let whileHeld: { answered: boolean; events: unknown[]; queued: number };
    try {
      await waitUntilStatementWaitsForLock(gate, 'admit_turn_if_clear');
      whileHeld = { answered, events: [...client.events()], queued: await harness.stack.resources.turnQueue.getJobCountByTypes('active', 'wait', 'prioritized', 'delayed') };
    } finally {
      await gate.query('SELECT pg_advisory_unlock($1)', [gateKey]);
    }
    return { ...(await posted), whileHeld };
  }

  it('enqueues the turn only once its admission commits, and runs it once', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const posted = await postWhileCommitHeld(conversationId, scripted({ text: 'after the commit' }), client);
    // Before its commit the turn had no job, no answer and no event.
    expect(posted.whileHeld).toEqual({ answered: false, events: [], queued: 0 });
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
    const refused = await postWhileCommitHeld(conversationId, `refuse-commit ${scripted({ text: 'never' })}`, client);
    expect(refused.status).toBe(500);
    expect(await harness.stack.resources.turnQueue.getJobCountByTypes('active', 'wait', 'prioritized', 'delayed')).toBe(0);
    expect(await harness.stack.resources.turns.listForConversation(conversationId)).toEqual([]);
    const next = await harness.postTurn(conversationId, { text: 'next' });
    const events = await client.waitForTurnEnd(next.turnId);
    expect(events.map((event) => event.turnId)).toEqual(events.map(() => next.turnId));
    expect((await harness.api.get(`/v1/conversations/${conversationId}`)).body.messages.map((message: any) => message.role)).toEqual(['user', 'assistant']);
  });
});
