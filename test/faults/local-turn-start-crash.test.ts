import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { turnJobId } from '../../src/queue/turn-queue';
import { eventsOfTurn, startedAttempts, visibleStepTexts } from '../support/client-view';
import { faultProcesses } from '../support/fault-processes';
import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { spawnAllInOne, type AllInOneProcess } from '../support/processes';
import { markedScripted } from '../support/scripted';
import { startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/**
 * An all-in-one process (`npm start`: API and worker in one) starts the turns its API admits at
 * once in its own turn slots, the turn's job added delayed as the run's lease (LOCAL_TURN_STARTS).
 * SIGKILLed mid-stream, it stops extending the lease: the delay lapses and another worker takes
 * the job over, as it takes a dead worker's stalled job (worker-crashes.test.ts, case 1). Short
 * leases (LOCK_DURATION_MS 2 s).
 */
describe('an all-in-one killed while it runs a turn it started itself', () => {
  let harness: ToolTurnHarness;
  let dataDir: string;
  let allInOne: AllInOneProcess;
  const processes = faultProcesses(() => harness.stack);

  beforeAll(async () => {
    harness = await startToolTurnHarness({ workers: 0, env: { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' } });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-local-start-'));
    allInOne = await spawnAllInOne(harness.stack.childEnv({ DATA_DIR: dataDir, PLAYGROUND_DIR: path.join(dataDir, 'playground'), LOCAL_TURN_STARTS: 'true', LOG_LEVEL: 'warn' }));
  }, 120_000);
  afterAll(async () => {
    await allInOne?.kill('SIGKILL');
    await processes.stopAll();
    await harness.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('ends the turn once on another worker: the dead attempt dropped, nothing lost, every call in the ledger once', async () => {
    const api = apiClient(allInOne.url, harness.apiKey);
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const answer = 'the worker that took it over says this, once';
    const marker = `local-start-${randomBytes(6).toString('hex')}`;
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, {
      content: markedScripted({ attempts: [{ tokens: 400, tokenDelayMs: 10 }, { text: answer }] }, marker),
    });
    expect(posted.status).toBe(202);
    const turnId = posted.body.turnId as string;
    await client.waitFor((frame) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'text-delta');
    // Started in the all-in-one while its job waits out the lease: no worker took it.
    expect(await harness.stack.resources.turnQueue.getJobState(turnJobId(turnId))).toBe('delayed');

    await processes.addWorker();
    await allInOne.kill('SIGKILL');
    const events = eventsOfTurn(await client.waitForTurnEnd(turnId, 30_000), turnId);

    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(startedAttempts(events)).toEqual([1, 2]);
    const restart = events.findIndex((event) => event.type === 'turn-start' && event.attempt === 2);
    expect(events[restart + 1]).toMatchObject({ type: 'attempt-discarded', attempt: 1, step: 1 });
    // Dropping what the dead attempt sent leaves exactly the stored answer.
    expect(visibleStepTexts(events)).toEqual(new Map([[1, answer]]));
    const messages = (await harness.api.get(`/v1/conversations/${conversationId}`)).body.messages as any[];
    expect(messages.filter((message) => message.role === 'assistant').map((message) => message.content)).toEqual([answer]);
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body).toMatchObject({ status: 'completed', attempt: 2 });

    // One ledger line per request the model got: the killed one estimated, the other as reported.
    const { rows: lines } = await harness.stack.resources.db.query<{ attempt: number; outcome: string; estimated: boolean }>(
      'SELECT attempt, outcome, estimated FROM provider_calls WHERE turn_id = $1 ORDER BY started_at, id',
      [turnId],
    );
    expect(lines).toHaveLength(harness.providerRequests(marker).length);
    expect(lines.map((line) => [line.attempt, line.outcome, line.estimated])).toEqual([
      [1, 'discarded', true],
      [2, 'ok', false],
    ]);
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: [], events })).toEqual({ [turnId]: 'completed' });
    client.close();
  }, 60_000);
});
