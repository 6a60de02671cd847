import { openAiLineToItem } from '../../../src/openai/batch-line';
import { outputLine } from '../../../src/openai/batch-output-lines';
import { planResponseTurn, createResponseSchema } from '../../../src/openai/response-request';
import type { BatchItemRecord } from '../../../src/store/batches-repository';

const usable = new Map([['calculator', { kind: 'builtin' as const }]]);
const line = (body: Record<string, unknown>) => ({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'm', ...body } });

describe('an OpenAI batch line as a Switchyard item', () => {
  it('takes system messages as the system prompt, one user message as the turn, splits functions between Switchyard tools and the caller, and keeps its settings', () => {
    const outcome = openAiLineToItem(
      line({
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'Q' },
        ],
        tools: [
          { type: 'function', function: { name: 'calculator' } },
          { type: 'function', function: { name: 'mine', parameters: { type: 'object' } } },
        ],
        tool_choice: 'required',
        temperature: 0.3,
      }),
      usable,
    );
    expect(outcome).toEqual({
      ok: true,
      customId: 'a',
      spec: {
        messages: ['Q'],
        system: 'S',
        model: 'm',
        tools: ['calculator'],
        functions: [{ name: 'mine', description: '', inputSchema: { type: 'object' } }],
        toolChoice: 'required',
        modelSettings: { temperature: 0.3 },
      },
    });
  });

  it('answers a conversation with one turn whose input is its messages, tool answers included', () => {
    const messages = [
      { role: 'user', content: 'Q' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'mine', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'R' },
    ];
    const outcome = openAiLineToItem(line({ messages }), usable);
    expect(outcome.ok && outcome.spec.messages).toEqual([{ role: 'user', content: { type: 'chat_messages', messages } }]);
  });

  it('refuses a line whose tool calls and tool messages do not pair, naming the message in the body', () => {
    const call = (id: string) => ({ id, type: 'function', function: { name: 'mine', arguments: '{}' } });
    const problems = (messages: unknown[]) => {
      const outcome = openAiLineToItem(line({ messages }), usable);
      return outcome.ok ? [] : outcome.problems;
    };
    const asking = { role: 'assistant', content: null, tool_calls: [call('c1'), call('c2')] };
    expect(problems([{ role: 'system', content: 'S' }, { role: 'user', content: 'Q' }, asking, { role: 'tool', tool_call_id: 'c1', content: 'R' }])).toEqual([
      { field: 'body.messages[2]', message: 'its tool_calls c2 have no tool message right after it' },
    ]);
    expect(problems([{ role: 'user', content: 'Q' }, asking, { role: 'user', content: 'more' }, { role: 'tool', tool_call_id: 'c1', content: 'R' }])).toEqual([
      { field: 'body.messages[1]', message: 'its tool_calls c1, c2 have no tool message right after it' },
    ]);
    expect(
      problems([
        { role: 'user', content: 'Q' },
        { role: 'tool', tool_call_id: 'c9', content: 'R' },
      ]),
    ).toEqual([{ field: 'body.messages[1]', message: 'the tool_call_id c9 is not a call of the assistant message right before this run of tool messages' }]);
  });

  it("refuses a line naming a client tool as a function without parameters, with OpenAI's code", () => {
    const outcome = openAiLineToItem(
      line({ messages: [{ role: 'user', content: 'Q' }], tools: [{ type: 'function', function: { name: 'confirm' } }] }),
      new Map([['confirm', { kind: 'client' as const }]]),
    );
    expect(outcome).toEqual({ ok: false, problems: [{ field: 'body.tools', code: 'unsupported_parameter', message: expect.stringContaining('"confirm"') }] });
  });

  it('names what is wrong with a line', () => {
    const outcome = openAiLineToItem({ custom_id: 'a', method: 'GET', url: '/v1/embeddings', body: { model: 'm', messages: [] } }, usable);
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.problems.map((problem) => problem.field)).toEqual(expect.arrayContaining(['method', 'url', 'body.messages']));
  });
});

describe('an ended item as an OpenAI output line', () => {
  const item = (status: BatchItemRecord['status'], result: BatchItemRecord['result']): BatchItemRecord =>
    ({
      batchId: 'batch_x',
      position: 3,
      line: 4,
      customId: 'c',
      spec: { messages: ['Q'], model: 'm' },
      status,
      run: 1,
      conversationId: 'conv_1',
      messageIndex: 0,
      result,
    }) as BatchItemRecord;

  it("is a chat.completion of the last step with the caller's calls, usage totals and what ran here", () => {
    const calls = [{ id: 'k', type: 'function' as const, function: { name: 'mine', arguments: '{}' } }];
    const usage = { promptTokens: 5, completionTokens: 7, totalTokens: 12 };
    const toolCalls = [{ toolName: 'calculator', args: {}, result: 1, attempts: 1 }];
    const out = outputLine(item('succeeded', { text: '', toolCalls, usage, turnId: 'turn_9', finishReason: 'tool_calls', callerToolCalls: calls }), {
      batchId: 'batch_x',
      endpoint: '/v1/chat/completions',
      created: 1,
      defaultModel: 'd',
    }) as any;
    expect(out).toMatchObject({ custom_id: 'c', error: null, response: { status_code: 200, request_id: 'turn_9' } });
    expect(out.response.body).toMatchObject({
      object: 'chat.completion',
      model: 'm',
      choices: [{ message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
      switchyard: { conversationId: 'conv_1', turnId: 'turn_9', toolCalls },
    });
  });

  it("puts a failed or cancelled item in the error file's shape", () => {
    const usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    expect(
      outputLine(item('cancelled', { text: '', toolCalls: [], usage, error: { code: 'cancelled', message: 'the batch was cancelled' } }), {
        batchId: 'batch_x',
        endpoint: '/v1/chat/completions',
        created: 1,
        defaultModel: 'd',
      }),
    ).toEqual({
      id: 'batch_req_x_3',
      custom_id: 'c',
      response: null,
      error: { code: 'batch_cancelled', message: 'the batch was cancelled' },
    });
  });
});

describe('a Responses request as a turn', () => {
  it('joins system and developer messages to the instructions, and keeps earlier items and outputs as chat messages', () => {
    const request = createResponseSchema.parse({
      instructions: 'I',
      input: [
        { role: 'developer', content: 'D' },
        { type: 'function_call', call_id: 'c1', name: 'mine', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'R' },
        { role: 'user', content: [{ type: 'input_text', text: 'Q' }] },
      ],
      tool_choice: { type: 'function', name: 'mine' },
    });
    const plan = planResponseTurn(request);
    expect(plan).toMatchObject({
      instructions: 'I\n\nD',
      toolChoice: { type: 'function', function: { name: 'mine' } },
      content: {
        type: 'chat_messages',
        messages: [
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'mine', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'R' },
          { role: 'user', content: [{ type: 'text', text: 'Q' }] },
        ],
      },
    });
    // The input's messages as they are, in its order: what the service pairs with the previous response's calls.
    expect(plan.messages).toEqual((plan.content as { messages: unknown[] }).messages);
    const outputsFirst = createResponseSchema.parse({
      input: [
        { type: 'function_call_output', call_id: 'c1', output: 'R' },
        { type: 'function_call', call_id: 'c1', name: 'mine', arguments: '{}' },
      ],
    });
    expect(planResponseTurn(outputsFirst).messages.map((message) => message.role)).toEqual(['tool', 'assistant']);
  });

  it('runs a single user message as it is, and refuses a field OpenAI does not have', () => {
    expect(planResponseTurn(createResponseSchema.parse({ input: 'hi', temperature: 1 })).content).toBe('hi');
    expect(createResponseSchema.safeParse({ input: 'hi', colour: 'red' }).success).toBe(false);
  });
});
