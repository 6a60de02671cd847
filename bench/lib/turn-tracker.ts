import type { ApiClient } from './api-client';
import { now } from './clock';
import type { ReceivedEvent, TimedWsClient } from './timed-ws-client';

/** Client-side timestamps of one turn, all on this process's monotonic clock (ms). */
export interface TurnTiming {
  conversationId: string;
  turnId?: string;
  /** Just before the POST was sent. */
  postedAt: number;
  /** When the POST's 202 arrived (often after the first events). */
  acceptedAt?: number;
  /** When the first event of each type arrived. */
  marks: Record<string, number>;
  firstDeltaAt?: number;
  lastDeltaAt?: number;
  toolProcessingStartAt?: number;
  toolProcessingCompleteAt?: number;
  /** The last `tool-result` of the turn's tool phase. */
  lastToolResultAt?: number;
  /** The step-start that follows the tool phase. */
  followUpStepStartAt?: number;
  lastStepFinishAt?: number;
  /** `failed` of tool_processing_complete: tool calls that did not succeed. */
  toolsFailed?: number;
  endedAt?: number;
  endType?: 'turn-finish' | 'turn-error' | 'turn-cancelled';
  /** Characters of text received in text-delta events (merged deltas included). */
  textChars: number;
  /** text-delta events received (fewer than tokens when Switchyard merged deltas). */
  deltaEvents: number;
  events: number;
}

const ENDINGS = new Set(['turn-finish', 'turn-error', 'turn-cancelled']);

interface OpenTurn {
  timing: TurnTiming;
  resolve: (timing: TurnTiming) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * Times turns from the events a subscribed client receives. One turn at a time per
 * conversation (Switchyard's own rule), so every event of a conversation that arrives after
 * `begin` belongs to the turn being timed, even before the POST has answered with its id.
 */
export class TurnTracker {
  private readonly open = new Map<string, OpenTurn>();

  listen(client: TimedWsClient): void {
    client.onEvent = (event, receivedAt) => this.handle(event, receivedAt);
  }

  handle(event: ReceivedEvent, receivedAt: number): void {
    const turn = this.open.get(event.conversationId);
    if (!turn) return;
    const timing = turn.timing;
    timing.events++;
    timing.turnId ??= event.turnId;
    timing.marks[event.type] ??= receivedAt;
    switch (event.type) {
      case 'text-delta':
        timing.firstDeltaAt ??= receivedAt;
        timing.lastDeltaAt = receivedAt;
        timing.textChars += event.delta?.length ?? 0;
        timing.deltaEvents++;
        return;
      case 'step-start':
        if (timing.toolProcessingCompleteAt !== undefined) timing.followUpStepStartAt ??= receivedAt;
        return;
      case 'step-finish':
        timing.lastStepFinishAt = receivedAt;
        return;
      case 'tool_processing_start':
        timing.toolProcessingStartAt ??= receivedAt;
        return;
      case 'tool-result':
        timing.lastToolResultAt = receivedAt;
        return;
      case 'tool_processing_complete':
        timing.toolProcessingCompleteAt ??= receivedAt;
        timing.toolsFailed = (timing.toolsFailed ?? 0) + Number(event.failed ?? 0);
        return;
    }
    if (!ENDINGS.has(event.type)) return;
    timing.endedAt = receivedAt;
    timing.endType = event.type as TurnTiming['endType'];
    clearTimeout(turn.timer);
    this.open.delete(event.conversationId);
    turn.resolve(timing);
  }

  /** Starts timing the next turn of a conversation; call it right before the POST. */
  begin(conversationId: string, timeoutMs = 60_000): Promise<TurnTiming> {
    if (this.open.has(conversationId)) throw new Error(`a turn of ${conversationId} is already being timed`);
    const timing: TurnTiming = { conversationId, postedAt: now(), marks: {}, textChars: 0, deltaEvents: 0, events: 0 };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.open.delete(conversationId);
        reject(new Error(`turn of ${conversationId} did not end within ${timeoutMs} ms (${timing.events} events seen)`));
      }, timeoutMs);
      this.open.set(conversationId, { timing, resolve, reject, timer });
    });
  }

  abandon(conversationId: string, error: Error): void {
    const turn = this.open.get(conversationId);
    if (!turn) return;
    clearTimeout(turn.timer);
    this.open.delete(conversationId);
    turn.reject(error);
  }

  /**
   * POSTs a turn and resolves with its timing once its last event arrived. The clock starts
   * before the request is written, so the API's own latency is part of every figure.
   */
  async runTurn(api: ApiClient, conversationId: string, content: string | undefined, timeoutMs?: number, options?: Record<string, unknown>): Promise<TurnTiming> {
    const ended = this.begin(conversationId, timeoutMs);
    // Handled here too, so a timeout while the POST is still out is not an unhandled rejection.
    ended.catch(() => undefined);
    try {
      const turnId = await api.postTurn(conversationId, content, options);
      const acceptedAt = now();
      const timing = await ended;
      timing.turnId ??= turnId;
      timing.acceptedAt = acceptedAt;
      return timing;
    } catch (error) {
      this.abandon(conversationId, error as Error);
      throw error;
    }
  }
}

/** POST → first text-delta of a turn that finished; a turn that did not finish (or streamed no text) stops the benchmark, as its figure would be wrong. */
export function firstTokenMs(timing: TurnTiming, what = 'a turn'): number {
  if (timing.endType !== 'turn-finish' || timing.firstDeltaAt === undefined) throw new Error(`${what} ended with ${timing.endType}`);
  return timing.firstDeltaAt - timing.postedAt;
}
