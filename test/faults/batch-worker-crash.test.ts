import type { RunningWorker } from '../../src/runtime/start-worker';
import { followBatchEvents } from '../support/batch-events';
import { checkInvariants } from '../support/invariants';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startToolHttpServer, type ToolHttpServer } from '../support/tool-servers';
import { scripted, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/** A worker process SIGKILLed in the middle of a batch: nothing is lost, no ended item runs again. */
describe('a batch whose worker dies', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;
  let victim: ServiceProcess | undefined;
  let survivor: RunningWorker | undefined;

  beforeAll(async () => {
    server = await startToolHttpServer();
    harness = await startToolTurnHarness({
      workers: 0,
      // Short locks and frequent repair passes, so that the dead worker's work is taken back in seconds.
      env: { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500', RECONCILE_INTERVAL_MS: '500' },
      toolFiles: {
        'charge.json': { name: 'charge', description: 'Charges', url: `${server.url}/charge`, fields: [{ name: 'amount', type: 'integer', required: true }], retries: 0 },
      },
    });
  });
  afterAll(async () => {
    await victim?.kill('SIGKILL');
    if (survivor) await harness.stack.stopWorker(survivor);
    await harness.close();
    await server.close();
  });

  it('finishes every item once on the surviving worker', async () => {
    victim = await spawnService('worker', harness.stack.childEnv());
    const items = Array.from({ length: 60 }, (_, i) =>
      i % 5 === 0
        ? {
            customId: `k${i}`,
            messages: [scripted({ steps: [{ toolCalls: [{ name: 'charge', arguments: { amount: i } }] }, { text: `charged ${i}`, tokens: 40, tokenDelayMs: 5 }] })],
          }
        : { customId: `k${i}`, messages: [scripted({ text: `item ${i}`, tokenDelayMs: 40 })] },
    );
    const batch = (await harness.api.post('/v1/batches', { items, concurrency: 12 })).body;
    const events = await followBatchEvents(harness.stack.url, harness.apiKey, batch.id);
    await events.waitFor((frame) => frame.type === 'batch-progress' && frame.counts.succeeded >= 10 && frame.counts.running > 0);
    const endedBefore = await harness.stack.resources.db.query<{ position: number; conversation_id: string }>(
      "SELECT position, conversation_id FROM batch_items WHERE batch_id = $1 AND status = 'succeeded'",
      [batch.id],
    );

    survivor = await harness.stack.addWorker();
    await victim.kill('SIGKILL');
    const finish = await events.finished(90_000);
    events.close();
    expect(finish).toMatchObject({ status: 'completed', counts: { total: 60, succeeded: 60, failed: 0, cancelled: 0 } });

    const lines = (await (await fetch(`${harness.stack.url}/v1/batches/${batch.id}/results`, { headers: { authorization: `Bearer ${harness.apiKey}` } })).text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.customId)).toEqual(items.map((item) => item.customId));
    for (const line of lines) expect(line.text).toBe(line.index % 5 === 0 ? `charged ${line.index}` : `item ${line.index}`);
    // Items that had ended kept their run: same conversation, one turn.
    for (const row of endedBefore.rows) expect(lines[row.position].conversationId).toBe(row.conversation_id);
    const turns = await harness.stack.resources.db.query<{ id: string; conversation_id: string }>(
      'SELECT t.id, t.conversation_id FROM turns t JOIN batch_items b ON b.conversation_id = t.conversation_id WHERE b.batch_id = $1',
      [batch.id],
    );
    expect(turns.rows).toHaveLength(60);
    const statuses = await checkInvariants(harness.stack.resources.db, { turnIds: turns.rows.map((row) => row.id), toolExecutions: server.executions('/charge') });
    expect(Object.values(statuses).every((status) => status === 'completed')).toBe(true);
    expect(server.executions('/charge').length).toBeGreaterThanOrEqual(12);
  }, 120_000);
});
