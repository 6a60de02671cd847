import { apiClient } from '../support/http';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startTestStack, type TestStack } from '../support/stack';
import { writeToolsDir } from '../support/tool-servers';
import { scripted } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';

const SPAN_KIND = { internal: 1, client: 3, producer: 4, consumer: 5 };

/**
 * OpenTelemetry traces from real API and worker processes, exported over OTLP/HTTP to a
 * receiver in the test: one trace from the API's admission of a turn to its tool calls.
 */
describe('traces', () => {
  let receiver: OtlpReceiver;
  let stack: TestStack;
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    stack = await startTestStack({ workers: 0 });
    const toolsDir = await writeToolsDir({
      'client.json': {
        tools: [
          { kind: 'client', name: 'confirm', description: 'Asks the user', timeoutMs: 60_000 },
          { kind: 'client', name: 'approved_confirm', description: 'Asks the user, once a person allows it', timeoutMs: 60_000, needsApproval: true },
        ],
      },
    });
    const env = stack.childEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', TOOLS_DIR: toolsDir });
    processes.push(...(await Promise.all([spawnService('api', env), spawnService('worker', env)])));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(processes.map((service) => service.kill('SIGTERM')));
    await stack.close();
    await receiver.close();
  });

  /** A user's conversation on the API process, with a websocket client subscribed to it. */
  async function openConversation() {
    const [api] = processes;
    const { apiKey } = await stack.createUser('traced');
    const http = apiClient(api!.url, apiKey);
    const conversationId = (await http.post('/v1/conversations', {})).body.id as string;
    const client = await TestWsClient.subscribed(api!.url, { apiKey }, conversationId);
    return { http, conversationId, client };
  }

  const admitSpan = (spans: ReceivedSpan[], turnId: string) => spans.find((span) => span.name === 'admit turn' && span.attributes['switchyard.turn.id'] === turnId);
  const count = (spans: ReceivedSpan[], traceId: string, prefix: string) => spans.filter((span) => span.traceId === traceId && span.name.startsWith(prefix)).length;

  it('joins a tool turn across the API, the queue and the worker, with GenAI attributes on its steps and tool calls', async () => {
    const { http, conversationId, client } = await openConversation();

    const secretText = 'the-user-said-something-private';
    const content = `${secretText} ${scripted({
      steps: [
        {
          toolCalls: [
            { name: 'calculator', arguments: { expression: '6*7' } },
            { name: 'current_time', arguments: { timeZone: 'UTC' } },
          ],
        },
        { text: 'Forty-two, and the time.' },
      ],
    })}`;
    const posted = await http.post(`/v1/conversations/${conversationId}/turns`, { content });
    expect(posted.status).toBe(202);
    const turnId = posted.body.turnId as string;
    await client.waitForTurnEnd(turnId);
    client.close();
    const turn = (await http.get(`/v1/turns/${turnId}`)).body;
    expect(turn.status).toBe('completed');

    const spans = await receiver.waitFor((received) => {
      const root = admitSpan(received, turnId);
      return !!root && count(received, root.traceId, 'run turn') >= 1 && count(received, root.traceId, 'chat ') === 2 && count(received, root.traceId, 'execute_tool') === 2;
    });
    const root = admitSpan(spans, turnId)!;
    const trace = spans.filter((span) => span.traceId === root.traceId);

    // The API's span starts the trace.
    expect(root).toMatchObject({
      service: 'switchyard-api',
      kind: SPAN_KIND.producer,
      parentSpanId: undefined,
      attributes: { 'gen_ai.conversation.id': conversationId, 'switchyard.turn.admission': 'created' },
    });

    // Every run of a turn job on the worker continues it. Its calls ran in the worker's local tool
    // slots, so no flow was added and no continuation job runs: the first job goes on with the turn.
    const jobRuns = trace.filter((span) => span.name === 'run turn');
    expect(jobRuns.map((span) => span.attributes['switchyard.job.name'])).toEqual(['run-turn']);
    for (const run of jobRuns) {
      expect(run).toMatchObject({ service: 'switchyard-worker', kind: SPAN_KIND.consumer, parentSpanId: root.spanId, attributes: { 'switchyard.turn.id': turnId } });
    }
    const firstRun = jobRuns[0]!;
    expect(firstRun.attributes['switchyard.turn.attempt']).toBe(1);

    // One chat span per completion request, under the job run that made it.
    const chats = trace.filter((span) => span.name.startsWith('chat ')).sort((a, b) => Number(a.attributes['switchyard.step']) - Number(b.attributes['switchyard.step']));
    const [toolStep, followUp] = chats;
    expect(toolStep!.parentSpanId).toBe(firstRun.spanId);
    expect(followUp!.parentSpanId).toBe(firstRun.spanId);
    for (const [chat, finishReason] of [
      [toolStep!, 'tool_calls'],
      [followUp!, 'stop'],
    ] as const) {
      expect(chat).toMatchObject({
        name: 'chat scripted',
        kind: SPAN_KIND.client,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'scripted',
          'gen_ai.response.model': 'scripted',
          'gen_ai.response.finish_reasons': [finishReason],
          'gen_ai.conversation.id': conversationId,
          'server.address': '127.0.0.1',
          // The models' provider and the Switchyard model the request went to (LLM_*: provider `default`).
          'switchyard.provider': 'default',
          'switchyard.model': 'scripted',
        },
      });
      expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    }
    const stepUsage = turn.steps.map((step: any) => [step.usage.promptTokens, step.usage.completionTokens]);
    expect(chats.map((chat) => [chat.attributes['gen_ai.usage.input_tokens'], chat.attributes['gen_ai.usage.output_tokens']])).toEqual(stepUsage);

    // The two parallel tool jobs are children of the step that asked for them.
    const tools = trace.filter((span) => span.name.startsWith('execute_tool')).sort((a, b) => a.name.localeCompare(b.name));
    expect(tools.map((span) => span.name)).toEqual(['execute_tool calculator', 'execute_tool current_time']);
    const callIds = Object.fromEntries(turn.toolCalls.map((call: any) => [call.toolName, call.toolCallId]));
    for (const tool of tools) {
      const toolName = tool.name.slice('execute_tool '.length);
      expect(tool).toMatchObject({
        service: 'switchyard-worker',
        kind: SPAN_KIND.internal,
        parentSpanId: toolStep!.spanId,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': toolName,
          'gen_ai.tool.call.id': callIds[toolName],
          'gen_ai.tool.type': 'function',
          'switchyard.tool.kind': 'builtin',
          'switchyard.tool.attempts': 1,
          'switchyard.tool.outcome': 'succeeded',
          'switchyard.turn.id': turnId,
        },
      });
    }

    // Contents stay out: neither the user's words, the tool arguments nor the model's answer.
    const exported = JSON.stringify(spans);
    for (const text of [secretText, '6*7', 'Forty-two']) expect(exported).not.toContain(text);
  }, 60_000);

  it('keeps a turn that waited for a client tool in its trace: the job its answer resumes joins it', async () => {
    const { http, conversationId, client } = await openConversation();
    const posted = await http.post(`/v1/conversations/${conversationId}/turns`, {
      content: scripted({ steps: [{ toolCalls: [{ name: 'confirm', arguments: {} }] }, { text: 'Thanks.' }] }),
    });
    const turnId = posted.body.turnId as string;
    const request = (await client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'turn-waiting' && frame.event.turnId === turnId)).event;
    // Answered over HTTP, by the API process: the resumed job is enqueued there, with the turn's stored trace.
    expect((await http.post(`/v1/turns/${turnId}/tool-results`, { toolCallId: request.toolCallIds[0], result: { confirmed: true } })).status).toBe(200);
    await client.waitForTurnEnd(turnId);
    client.close();

    const spans = await receiver.waitFor((received) => {
      const root = admitSpan(received, turnId);
      return !!root && count(received, root.traceId, 'run turn') === 2 && count(received, root.traceId, 'chat ') === 2;
    });
    const root = admitSpan(spans, turnId)!;
    const jobRuns = spans.filter((span) => span.traceId === root.traceId && span.name === 'run turn');
    expect(jobRuns.map((span) => span.attributes['switchyard.job.name']).sort()).toEqual(['continue-turn', 'run-turn']);
    for (const run of jobRuns) expect(run.parentSpanId).toBe(root.spanId);
    // A client tool runs in the browser: no execute_tool span on the worker.
    expect(count(spans, root.traceId, 'execute_tool')).toBe(0);
  }, 60_000);

  it("records each approval decision in the turn's trace, as a span event", async () => {
    const { http, conversationId, client } = await openConversation();
    const posted = await http.post(`/v1/conversations/${conversationId}/turns`, {
      content: scripted({ steps: [{ toolCalls: [{ name: 'approved_confirm', arguments: {} }] }, { text: 'Thanks.' }] }),
    });
    const turnId = posted.body.turnId as string;
    const request = (await client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'tool-approval-request' && frame.event.turnId === turnId)).event;
    expect((await http.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: false, reason: 'no' })).status).toBe(200);
    await client.waitForTurnEnd(turnId);
    client.close();

    const spans = await receiver.waitFor((received) => {
      const root = admitSpan(received, turnId);
      return !!root && count(received, root.traceId, 'decide_approval') === 1;
    });
    const root = admitSpan(spans, turnId)!;
    const decision = spans.find((span) => span.traceId === root.traceId && span.name === 'decide_approval approved_confirm')!;
    expect(decision.attributes).toMatchObject({ 'gen_ai.tool.call.id': request.toolCallId, 'switchyard.tool.approval.outcome': 'denied' });
    expect(decision.events).toEqual([{ name: 'tool_approval.decided', attributes: expect.objectContaining({ 'switchyard.tool.approval.outcome': 'denied' }) }]);
  }, 60_000);
});
