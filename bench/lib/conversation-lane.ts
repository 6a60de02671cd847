import type { ApiClient } from './api-client';
import type { TimedWsClient } from './timed-ws-client';

/**
 * One client's sequence of conversations: a fresh one every `turnsPerConversation` turns. A
 * benchmark that kept posting to the same conversations would measure ever longer histories
 * (Switchyard loads them, the scripted model parses them), a cost the direct SDK baseline
 * with its one message never pays.
 */
export class ConversationLane {
  private current: string | undefined;
  private turns = 0;

  constructor(
    readonly client: TimedWsClient,
    /** The API the lane's turns are posted to (its client's gateway's process). */
    readonly api: ApiClient,
    private readonly turnsPerConversation: number,
  ) {}

  /** The conversation for the next turn, subscribed on this lane's client. */
  async next(): Promise<string> {
    if (!this.current || this.turns >= this.turnsPerConversation) {
      const id = await this.api.createConversation();
      await this.client.subscribe(id);
      if (this.current) this.client.unsubscribe(this.current);
      this.current = id;
      this.turns = 0;
    }
    this.turns++;
    return this.current;
  }

  release(): void {
    if (this.current && this.client.isOpen) this.client.unsubscribe(this.current);
    this.current = undefined;
  }
}
