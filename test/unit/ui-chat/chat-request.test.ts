import { AppError } from '../../../src/errors/app-error';
import { chatRequestSchema, readChatRequest } from '../../../src/ui-chat/chat-request';

/** Refusals name the field as the body writes it, in the wording every other route uses. */
describe('readChatRequest', () => {
  const refusal = (body: unknown): AppError => {
    try {
      readChatRequest(chatRequestSchema.parse(body));
    } catch (error) {
      return error as AppError;
    }
    throw new Error('the request was accepted');
  };
  const user = (parts: unknown[]) => ({ id: 'u', role: 'user', parts });

  it('names a bad part by its path from the body, with the shared formatter', () => {
    const error = refusal({
      id: 'c',
      messages: [
        user([{ type: 'text', text: 'hi' }]),
        user([
          { type: 'text', text: 'ok' },
          { type: 'text', text: 7 },
        ]),
      ],
    });
    expect(error.code).toBe('invalid_request');
    expect(error.details).toEqual([{ field: 'messages[1].parts[1].text', message: expect.stringContaining('string') }]);
    expect(error.message).toBe(`invalid request: "messages[1].parts[1].text": ${(error.details as any)[0].message}`);
  });

  it('names the message, its parts or the trigger when that is what is wrong', () => {
    expect(refusal({ id: 'c', messages: [user([{ type: 'step-start' }])] }).details).toEqual([
      { field: 'messages[0].parts', message: 'the user message has no text and no image' },
    ]);
    expect(refusal({ id: 'c', messages: [user([{ type: 'file', mediaType: 'application/pdf', url: 'data:,' }])] }).details).toEqual([
      { field: 'messages[0].parts[0].mediaType', message: 'only image files (mediaType image/*, with a url) can be sent' },
    ]);
    expect(refusal({ id: 'c', messages: [{ id: 'a', role: 'assistant', parts: [] }] }).details).toEqual([{ field: 'messages[0]', message: expect.stringMatching(/^nothing new/) }]);
    expect(refusal({ id: 'c', messages: [{ id: 'turn_1', role: 'assistant', parts: [] }], trigger: 'regenerate-message' }).details).toEqual([
      { field: 'messages[0].role', message: expect.stringMatching(/^to regenerate/) },
    ]);
  });

  it('reads regenerate-message as the last user message answered again, and a messageId naming it as its edit', () => {
    const read = (body: unknown) => readChatRequest(chatRequestSchema.parse(body));
    const question = { id: 'ui-1', role: 'user', parts: [{ type: 'text', text: 'again' }] };
    expect(read({ id: 'c', messages: [question], trigger: 'regenerate-message' })).toEqual({ kind: 'regenerate', messageId: 'ui-1' });
    expect(read({ id: 'c', messages: [question], trigger: 'submit-message', messageId: 'ui-1' })).toEqual({ kind: 'edit', messageId: 'ui-1', content: 'again' });
    expect(read({ id: 'c', messages: [question], trigger: 'submit-message' })).toEqual({ kind: 'message', messageId: 'ui-1', content: 'again' });
  });

  it('reads approval-responded parts as decisions, beside client tool answers', () => {
    const ask = readChatRequest(
      chatRequestSchema.parse({
        id: 'c',
        messages: [
          {
            id: 'turn_1',
            role: 'assistant',
            parts: [
              { type: 'tool-transfer', toolCallId: 'a', state: 'approval-responded', input: {}, approval: { id: 'appr_1', approved: false, reason: 'no' } },
              { type: 'tool-ask', toolCallId: 'b', state: 'output-available', input: {}, output: 'yes' },
              { type: 'tool-transfer', toolCallId: 'c', state: 'approval-requested', input: {}, approval: { id: 'appr_2' } },
            ],
          },
        ],
      }),
    );
    expect(ask).toEqual({
      kind: 'answers',
      turnId: 'turn_1',
      answers: [{ toolCallId: 'b', answer: { result: 'yes' } }],
      approvals: [{ toolCallId: 'a', approvalId: 'appr_1', approved: false, reason: 'no' }],
    });
    const undecided = {
      id: 'c',
      messages: [{ id: 't', role: 'assistant', parts: [{ type: 'tool-x', toolCallId: 'a', state: 'approval-responded', approval: { id: 'appr_1' } }] }],
    };
    expect(refusal(undecided).details).toEqual([{ field: 'messages[0].parts[0].approval.approved', message: expect.any(String) }]);
  });
});
