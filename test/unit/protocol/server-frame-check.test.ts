import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import { isServerFrame, serverFrameSchema } from '@switchyard/protocol';
import { serverFrameCheckModule } from '../../../packages/protocol/scripts/frame-check-source';

const GENERATED = path.join(__dirname, '../../../packages/protocol/src/server-frame-check.generated.ts');
const event = { conversationId: 'c', turnId: 't', seq: 3 };

describe('the generated check of server frames', () => {
  it('is what the schema generates now (run `npm run generate -w @switchyard/protocol` after changing the schemas)', () => {
    expect(readFileSync(GENERATED, 'utf8')).toBe(serverFrameCheckModule(serverFrameSchema));
  });

  it.each([
    ['subscribed', { type: 'subscribed', conversationId: 'c', seq: 0 }],
    ['an event', { type: 'event', event: { type: 'text-delta', delta: 'Hi', ...event } }],
    ['an event with more fields than this client knows', { type: 'event', event: { type: 'turn-start', attempt: 1, region: 'eu', ...event } }],
    [
      'a tool result with an error',
      { type: 'event', event: { type: 'tool-result', toolCallId: 'x', error: { code: 'e', message: 'm', retryable: false }, attempts: 2, durationMs: 1.5, ...event } },
    ],
    ['a tool call end with null args', { type: 'event', event: { type: 'tool-call-end', toolCallId: 'x', args: null, ...event } }],
    ['batch progress', { type: 'batch-finish', batchId: 'b', status: 'completed', counts: { total: 1, queued: 0, running: 0, waiting: 0, succeeded: 1, failed: 0, cancelled: 0 } }],
    ['an error frame', { type: 'error', code: 'cursor_expired', message: 'gone', conversationId: 'c', oldestSeq: 9 }],
    ['an unknown frame type', { type: 'hello' }],
    ['an unknown event type', { type: 'event', event: { type: 'tool-approval-request', ...event } }],
    ['a seq of 0', { type: 'event', event: { type: 'turn-cancelled', ...event, seq: 0 } }],
    ['a fractional seq', { type: 'event', event: { type: 'turn-cancelled', ...event, seq: 1.5 } }],
    ['a missing field', { type: 'event', event: { type: 'text-delta', ...event } }],
    [
      'a wrong enum value',
      { type: 'batch-finish', batchId: 'b', status: 'paused', counts: { total: 1, queued: 0, running: 0, waiting: 0, succeeded: 1, failed: 0, cancelled: 0 } },
    ],
    ['args missing (nullable, not optional)', { type: 'event', event: { type: 'tool-call-end', toolCallId: 'x', ...event } }],
    ['an array', []],
    ['null', null],
  ])('agrees with the zod schema on %s', (_name, frame) => {
    expect(isServerFrame(frame)).toBe(serverFrameSchema.safeParse(frame).success);
  });

  it('refuses to generate a check for a kind of schema it cannot express', () => {
    expect(() => serverFrameCheckModule(z.object({ name: z.string().check(z.minLength(1)) }))).toThrow(/not supported/);
    expect(() => serverFrameCheckModule(z.object({ when: z.date() }))).toThrow(/not supported/);
  });
});
