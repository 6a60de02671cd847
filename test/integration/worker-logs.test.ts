import { apiClient } from '../support/http';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startTestStack, type TestStack } from '../support/stack';
import { scripted } from '../support/tool-turns';

/**
 * A worker's log is one JSON line per event, and the lines of a turn carry its ids as fields
 * (conversationId, turnId, step, toolCallId), so that one query over the logs of every process
 * finds a turn, a step or a tool call.
 */
describe("a worker's log lines for a tool turn", () => {
  let stack: TestStack;
  let worker: ServiceProcess;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0 });
    worker = await spawnService('worker', stack.childEnv());
  }, 30_000);
  afterAll(async () => {
    await worker.kill();
    await stack.close();
  });

  it('name the turn, the step and the tool call in fields, from the turn start to its end', async () => {
    const { apiKey } = await stack.createUser('logs');
    const api = apiClient(stack.url, apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const scenario = {
      steps: [
        {
          toolCalls: [
            { name: 'calculator', arguments: { expression: '6*7' } },
            { name: 'calculator', arguments: { expression: '2+3' } },
          ],
        },
        { text: 'both done' },
      ],
    };
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted(scenario) });
    expect(posted.status).toBe(202);
    const turnId = posted.body.turnId as string;

    const ended = await worker.waitForLog((line) => line.msg === 'turn ended' && line.turnId === turnId);
    expect(ended).toMatchObject({ conversationId, turnId, status: 'completed', finishReason: 'stop', steps: 2 });

    const lines = worker
      .stdout()
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .filter((line) => line.turnId === turnId);
    const named = (msg: string) => lines.filter((line) => line.msg === msg);

    expect(named('turn started')).toEqual([expect.objectContaining({ conversationId, turnId, attempt: 1, step: 1 })]);
    expect(named('step finished')).toEqual([
      expect.objectContaining({ conversationId, turnId, step: 1, finishReason: 'tool_calls', toolCalls: 2 }),
      expect.objectContaining({ conversationId, turnId, step: 2, finishReason: 'stop', toolCalls: 0 }),
    ]);

    const toolCallIds = ((await api.get(`/v1/turns/${turnId}`)).body.toolCalls as { toolCallId: string }[]).map((call) => call.toolCallId);
    expect(toolCallIds).toHaveLength(2);
    for (const toolCallId of toolCallIds) {
      const ids = { conversationId, turnId, step: 1, toolCallId, tool: 'calculator' };
      expect(named('tool call started').filter((line) => line.toolCallId === toolCallId)).toEqual([expect.objectContaining(ids)]);
      expect(named('tool call finished').filter((line) => line.toolCallId === toolCallId)).toEqual([
        expect.objectContaining({ ...ids, status: 'succeeded', durationMs: expect.any(Number) }),
      ]);
    }

    // The ids are fields to query on, never words of the message.
    for (const line of lines) {
      for (const id of [conversationId, turnId, ...toolCallIds]) expect(line.msg).not.toContain(id);
    }
  });
});
