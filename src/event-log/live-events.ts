import type { RedisClient } from '../redis/redis-connection';
import { parseLiveMessage } from './live-message';

/** `appendedAt`: when the event was appended (ms since the epoch), when its producer said. */
export type LiveListener = (json: string, seq: number, appendedAt?: number) => void;

/**
 * A gateway's pub/sub side: one subscriber connection, one Redis channel per conversation that
 * has local listeners (subscribed on the first, unsubscribed after the last). Messages are
 * hints: a subscription reads the log to fill whatever pub/sub lost.
 *
 * `sharded`: the channels are sharded ones (SSUBSCRIBE, each on its slot's master), for a
 * cluster's subscriber connection made with `shardedSubscribers`.
 */
export class LiveEvents {
  private readonly listeners = new Map<string, Set<LiveListener>>();
  private readonly subscribing = new Map<string, Promise<unknown>>();
  private readonly reconnectListeners = new Set<() => void>();
  private everReady = false;
  private resyncing = false;
  private resyncAgain = false;

  constructor(
    private readonly subscriber: RedisClient,
    private readonly channelOf: (conversationId: string) => string,
    private readonly options: { sharded?: boolean } = {},
  ) {
    subscriber.on(options.sharded ? 'smessage' : 'message', (channel: string, message: string) => {
      const listeners = this.listeners.get(channel);
      if (!listeners) return;
      const { json, seq, appendedAt } = parseLiveMessage(message);
      for (const listener of listeners) listener(json, seq, appendedAt);
    });
    // Messages published while the connection was down are gone: listeners re-read the log.
    subscriber.on('ready', () => {
      if (this.everReady) void this.afterReconnect();
      this.everReady = true;
    });
    if (subscriber.status === 'ready') this.everReady = true;
    // A cluster stays 'ready' while one master is down: its sharded subscriber connection to
    // that master ends ('-node'), what was published there meanwhile is lost, and ioredis
    // makes a new one once the master is back ('subscribersReady', also sent after attempts
    // that failed).
    if (options.sharded) {
      subscriber.on('-node', () => void this.afterReconnect());
      subscriber.on('subscribersReady', () => void this.afterReconnect());
    }
  }

  /** Resolves once Redis confirmed the subscription, so no event published after it is missed. */
  async listen(conversationId: string, listener: LiveListener): Promise<() => void> {
    const channel = this.channelOf(conversationId);
    let listeners = this.listeners.get(channel);
    if (!listeners) {
      listeners = new Set();
      this.listeners.set(channel, listeners);
      const subscribed = this.subscribe(channel).finally(() => this.subscribing.delete(channel));
      this.subscribing.set(channel, subscribed);
    }
    listeners.add(listener);
    await this.subscribing.get(channel);
    return () => this.remove(channel, listener);
  }

  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  /** Channels with listeners here (for metrics and tests). */
  get channelCount(): number {
    return this.listeners.size;
  }

  private subscribe(channel: string): Promise<unknown> {
    return this.options.sharded ? this.subscriber.ssubscribe(channel) : this.subscriber.subscribe(channel);
  }

  /**
   * ioredis emits 'ready' before it re-subscribes, so a log read made at once could miss an
   * event published before the subscription is back, with no later hint to recover it. The
   * listeners run once our own SUBSCRIBE of every channel is confirmed. (A cluster's sharded
   * SSUBSCRIBE waits, retrying, until the channel's master serves again; sharded channels
   * of different slots are subscribed one by one.)
   */
  private async afterReconnect(): Promise<void> {
    if (this.resyncing) return void (this.resyncAgain = true);
    this.resyncing = true;
    try {
      const channels = [...this.listeners.keys()];
      if (channels.length > 0) {
        try {
          await (this.options.sharded ? Promise.all(channels.map((channel) => this.subscribe(channel))) : this.subscriber.subscribe(...channels));
        } catch {
          // The connection dropped again; its next 'ready' runs this again.
          return;
        }
      }
      for (const listener of this.reconnectListeners) listener();
    } finally {
      this.resyncing = false;
      if (this.resyncAgain) {
        this.resyncAgain = false;
        void this.afterReconnect();
      }
    }
  }

  private remove(channel: string, listener: LiveListener): void {
    const listeners = this.listeners.get(channel);
    if (!listeners?.delete(listener) || listeners.size > 0) return;
    this.listeners.delete(channel);
    (this.options.sharded ? this.subscriber.sunsubscribe(channel) : this.subscriber.unsubscribe(channel)).catch(() => undefined);
  }
}
