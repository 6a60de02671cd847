import { ApiClient } from './api-client';
import { ConversationLane } from './conversation-lane';
import type { RunContext } from './run-context';
import { startSwitchyard, type StackOptions, type SwitchyardStack } from './switchyard-stack';
import { TimedWsClient } from './timed-ws-client';
import { TurnTracker } from './turn-tracker';

export interface SingleLane {
  stack: SwitchyardStack;
  api: ApiClient;
  client: TimedWsClient;
  tracker: TurnTracker;
  lane: ConversationLane;
}

/**
 * Runs `measure` on a Switchyard of its own followed by one websocket client, its turns posted
 * one at a time on a lane of conversations (a new one every `turnsPerConversation` turns); stops
 * it all afterwards, whatever `measure` did.
 */
export async function withSingleLane<T>(context: RunContext, options: StackOptions & { turnsPerConversation: number }, measure: (lane: SingleLane) => Promise<T>): Promise<T> {
  const { turnsPerConversation, ...stackOptions } = options;
  const stack = await startSwitchyard(context, stackOptions);
  const api = new ApiClient(stack.url, stack.apiKey);
  let client: TimedWsClient | undefined;
  try {
    client = await TimedWsClient.connect(stack.url, stack.apiKey);
    const tracker = new TurnTracker();
    tracker.listen(client);
    return await measure({ stack, api, client, tracker, lane: new ConversationLane(client, api, turnsPerConversation) });
  } finally {
    await client?.close();
    api.close();
    await stack.stop();
  }
}
