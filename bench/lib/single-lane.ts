import { ApiClient } from './api-client';
import { ConversationLane } from './conversation-lane';
import type { RunContext } from './run-context';
import { startSwitchyard, type StackOptions, type SwitchyardStack } from './switchyard-stack';
import { TimedWsClient } from './timed-ws-client';
import { TurnTracker } from './turn-tracker';

export interface TimedStack {
  stack: SwitchyardStack;
  api: ApiClient;
  client: TimedWsClient;
  /** Listens to `client`: each turn's timings, from its POST to its last event. */
  tracker: TurnTracker;
}

export interface SingleLane extends TimedStack {
  lane: ConversationLane;
}

/**
 * Runs `measure` on a Switchyard of its own followed by one websocket client whose events time
 * the turns; stops it all afterwards, whatever `measure` did.
 */
export async function withTimedStack<T>(context: RunContext, options: StackOptions, measure: (timed: TimedStack) => Promise<T>): Promise<T> {
  const stack = await startSwitchyard(context, options);
  const api = new ApiClient(stack.url, stack.apiKey);
  let client: TimedWsClient | undefined;
  try {
    client = await TimedWsClient.connect(stack.url, stack.apiKey);
    const tracker = new TurnTracker();
    tracker.listen(client);
    return await measure({ stack, api, client, tracker });
  } finally {
    await client?.close();
    api.close();
    await stack.stop();
  }
}

/** {@link withTimedStack}, its turns posted one at a time on a lane of conversations (a new one every `turnsPerConversation` turns). */
export async function withSingleLane<T>(context: RunContext, options: StackOptions & { turnsPerConversation: number }, measure: (lane: SingleLane) => Promise<T>): Promise<T> {
  const { turnsPerConversation, ...stackOptions } = options;
  return withTimedStack(context, stackOptions, (timed) => measure({ ...timed, lane: new ConversationLane(timed.client, timed.api, turnsPerConversation) }));
}
