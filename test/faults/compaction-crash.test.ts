import { randomBytes } from 'node:crypto';
import { faultProcesses } from '../support/fault-processes';
import { apiClient } from '../support/http';
import { scripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

const isSummaryRequest = (body: any) => /^<conversation-to-summarise>/.test(body.messages.at(-1)?.content ?? '');

/**
 * docs/API.md, "Long conversations": a compaction belongs to its turn's step and is committed
 * once. A worker SIGKILLed while its summary request is out leaves the compaction to the next
 * attempt, which makes it again: one summary of the span, never two; the killed request is in the
 * usage ledger once, estimated.
 */
describe('a worker SIGKILLed during a compaction', () => {
  let stack: TestStack;
  const processes = faultProcesses(() => stack);

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0 });
  });
  afterAll(async () => {
    await processes.stopAll();
    await stack.close();
  });

  it('leaves the compaction to the next attempt, which stores one summary', async () => {
    const { apiKey } = await stack.createUser('compaction-crash');
    const api = apiClient(stack.url, apiKey);
    const worker = await processes.spawn('worker');
    const created = await api.post('/v1/conversations', { system: 'Be brief.', tools: ['calculator'], compaction: { triggerTokens: 500, keepRecentTokens: 100 } });
    const conversationId = created.body.id as string;
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
    try {
      for (let index = 0; index < 2; index++) {
        const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: `${randomBytes(4).toString('hex')} ${scripted({ tokens: 300 })}` });
        await client.waitForTurnEnd(posted.body.turnId);
      }
      // The next request the model gets, the summary request, is taken and never answered.
      stack.scripted.setFault({ hang: true, times: 1 });
      const summariesBefore = stack.scripted.requests.filter((request) => isSummaryRequest(request.body)).length;
      const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: 'and now?' });
      const turnId = posted.body.turnId as string;
      await client.waitFor((frame) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'compaction-start');
      await stack.scripted.waitForRequest(
        (request) => isSummaryRequest(request.body) && stack.scripted.requests.filter((each) => isSummaryRequest(each.body)).length > summariesBefore,
      );
      await worker.kill('SIGKILL');
      await processes.addWorker();

      const events = (await client.waitForTurnEnd(turnId, 60_000)).filter((event) => event.turnId === turnId);
      expect(events.at(-1)).toMatchObject({ type: 'turn-finish' });
      expect(events.filter((event) => event.type === 'turn-start').map((event) => event.attempt)).toEqual([1, 2]);
      expect(events.filter((event) => event.type === 'compaction-start')).toHaveLength(2);
      expect(events.filter((event) => event.type === 'compaction-finish')).toHaveLength(1);
      expect(stack.scripted.requests.filter((request) => isSummaryRequest(request.body)).length - summariesBefore).toBe(2);

      const { rows } = await stack.resources.db.query<any>('SELECT turn_id, step FROM compactions WHERE conversation_id = $1', [conversationId]);
      expect(rows).toEqual([{ turn_id: turnId, step: 1 }]);
      const turn = (await api.get(`/v1/turns/${turnId}`)).body;
      // The killed summary request is billed once, estimated from its marker; the one that took over as reported.
      expect(turn.providerCalls.map((call: any) => [call.kind, call.attempt, call.outcome])).toEqual([
        ['compaction', 1, 'discarded'],
        ['compaction', 2, 'ok'],
        ['step', 2, 'ok'],
      ]);
      const { rows: lines } = await stack.resources.db.query<any>(
        `SELECT kind, estimated, prompt_tokens FROM provider_calls WHERE turn_id = $1 AND kind = 'compaction' ORDER BY started_at`,
        [turnId],
      );
      expect(lines.map((line: any) => line.estimated)).toEqual([true, false]);
      expect(lines[0].prompt_tokens).toBeGreaterThan(0);
      expect((await api.get(`/v1/conversations/${conversationId}`)).body.compactions).toHaveLength(1);
    } finally {
      client.close();
    }
  });
});
