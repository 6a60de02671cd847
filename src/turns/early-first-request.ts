import type { BegunAttempt } from '../store/turns-repository';
import { buildMessages } from './build-messages';

/**
 * Whether the take returned what the early first request was built from (turn-runner.ts,
 * `runWithEarlyFirstRequest`): a new attempt, the one predicted, of a turn whose input, options,
 * conversation settings, agent, allowed tools and history are those read beside it. Then the
 * request sent is the one the run would have sent after the take, and its answer may be shown;
 * anything else (the turn ended or taken by another job meanwhile, a setting or a message
 * changed between the two reads) abandons it.
 */
export function sameFirstRequest(peeked: BegunAttempt, taken: BegunAttempt): boolean {
  return taken.restarted && taken.turn.attempt === peeked.turn.attempt && taken.history !== undefined && requestBasis(taken) === requestBasis(peeked);
}

/** What a first step's request is made of, as one string (messages as the provider gets them: ids left out). */
function requestBasis(begun: BegunAttempt): string {
  const { turn, conversation, agent, userAllowedTools, history } = begun;
  return JSON.stringify([turn.input, turn.options, conversation, agent, userAllowedTools, buildMessages(null, history ?? [])]);
}
