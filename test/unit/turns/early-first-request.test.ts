import type { BegunAttempt } from '../../../src/store/turns-repository';
import { sameFirstRequest } from '../../../src/turns/early-first-request';

const peeked = {
  turn: { id: 'turn_1', attempt: 1, input: 'hello', options: { model: 'scripted' } },
  restarted: true,
  previous: { status: 'queued', awaiting: null },
  conversation: { system: 'be brief', model: null, tools: null, requireApproval: null, compaction: null, modelSettings: null, responseFormat: null },
  agent: null,
  userAllowedTools: null,
  history: [{ id: 'msg_unwritten', role: 'user', content: 'hello', turnId: 'turn_1' }],
} as unknown as BegunAttempt;

describe('sameFirstRequest', () => {
  it('holds for the take of the predicted attempt with the same request, whatever ids the messages got', () => {
    const taken = {
      ...peeked,
      turn: { ...peeked.turn, startedAt: 'now' },
      history: [{ id: 'msg_42', role: 'user', content: 'hello', turnId: 'turn_1' }],
    } as unknown as BegunAttempt;
    expect(sameFirstRequest(peeked, taken)).toBe(true);
  });

  it('does not hold for another attempt, a continuation, other options, settings or history, or no history', () => {
    const variants: Partial<BegunAttempt>[] = [
      { turn: { ...peeked.turn, attempt: 2 } },
      { restarted: false },
      { turn: { ...peeked.turn, options: { model: 'other' } } },
      { conversation: { ...peeked.conversation, system: 'changed' } },
      { userAllowedTools: ['calculator'] },
      { history: [{ id: 'msg_1', role: 'user', content: 'earlier', turnId: 'turn_0' }, ...peeked.history!] },
      { history: undefined },
    ];
    for (const variant of variants) expect(sameFirstRequest(peeked, { ...peeked, ...variant } as BegunAttempt)).toBe(false);
  });
});
