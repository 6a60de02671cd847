import { chatRequestAttributes, chatResponseAttributes, toolCallAttributes } from '../../../src/tracing/span-attributes';

describe('GenAI span attributes', () => {
  it('describes a chat request with the conventions names, the provider host and port only', () => {
    const attributes = chatRequestAttributes({
      model: 'gpt-4o-mini',
      conversationId: 'conv_1',
      turnId: 'turn_1',
      step: 2,
      providerUrl: 'https://user:secret@api.example.com/v1?tenant=acme',
    });
    expect(attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.conversation.id': 'conv_1',
      'switchyard.turn.id': 'turn_1',
      'switchyard.step': 2,
      'server.address': 'api.example.com',
      'server.port': 443,
    });
    expect(JSON.stringify(attributes)).not.toMatch(/secret|tenant/);
  });

  it('describes a response: finish reasons as an array, tokens, and the model only when the provider named one', () => {
    expect(chatResponseAttributes({ finishReason: 'stop', usage: { promptTokens: 12, completionTokens: 5 }, responseModel: 'gpt-4o-mini-2024', responseId: 'chatcmpl-1' })).toEqual(
      {
        'gen_ai.response.finish_reasons': ['stop'],
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.usage.output_tokens': 5,
        'gen_ai.response.model': 'gpt-4o-mini-2024',
        'gen_ai.response.id': 'chatcmpl-1',
      },
    );
    expect(chatResponseAttributes({ finishReason: 'length', usage: { promptTokens: 1, completionTokens: 2 } })).not.toHaveProperty('gen_ai.response.model');
  });

  it('describes a tool call by name, id, kind and attempts', () => {
    expect(toolCallAttributes({ toolName: 'calculator', toolCallId: 'call_1', kind: 'builtin', attempts: 2 })).toEqual({
      'gen_ai.tool.name': 'calculator',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.type': 'function',
      'switchyard.tool.kind': 'builtin',
      'switchyard.tool.attempts': 2,
    });
  });
});
