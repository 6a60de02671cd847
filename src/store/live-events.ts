import type { Redis } from 'ioredis';

export type LiveListener = (json: string, seq: number) => void;

const SEQ_PREFIX = /^\{"seq":(\d+),/;

/**
 * A gateway's pub/sub side: one subscriber connection, one Redis channel per conversation that
 * has local listeners (subscribed on the first, unsubscribed after the last). Messages are
 * hints: a subscription reads the log to fill whatever pub/sub lost.
 */
export class LiveEvents {
  private readonly listeners = new Map<string, Set<LiveListener>>();
  private readonly subscribing = new Map<string, Promise<unknown>>();
  private readonly reconnectListeners = new Set<() => void>();
  private everReady = false;

  constructor(
    private readonly subscriber: Redis,
    private readonly channelOf: (conversationId: string) => string,
  ) {
    subscriber.on('message', (channel: string, json: string) => {
      const listeners = this.listeners.get(channel);
      if (!listeners) return;
      const seq = Number(SEQ_PREFIX.exec(json)?.[1] ?? 0);
      for (const listener of listeners) listener(json, seq);
    });
    // Messages published while the connection was down are gone: listeners re-read the log.
    subscriber.on('ready', () => {
      if (this.everReady) void this.afterReconnect();
      this.everReady = true;
    });
    if (subscriber.status === 'ready') this.everReady = true;
  }

  /** Resolves once Redis confirmed the subscription, so no event published after it is missed. */
  async listen(conversationId: string, listener: LiveListener): Promise<() => void> {
    const channel = this.channelOf(conversationId);
    let listeners = this.listeners.get(channel);
    if (!listeners) {
      listeners = new Set();
      this.listeners.set(channel, listeners);
      const subscribed = this.subscriber.subscribe(channel).finally(() => this.subscribing.delete(channel));
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

  /**
   * ioredis emits 'ready' before it re-subscribes, so a log read made at once could miss an
   * event published before the subscription is back, with no later hint to recover it. The
   * listeners run once our own SUBSCRIBE of every channel is confirmed.
   */
  private async afterReconnect(): Promise<void> {
    const channels = [...this.listeners.keys()];
    if (channels.length > 0) {
      try {
        await this.subscriber.subscribe(...channels);
      } catch {
        // The connection dropped again; its next 'ready' runs this again.
        return;
      }
    }
    for (const listener of this.reconnectListeners) listener();
  }

  private remove(channel: string, listener: LiveListener): void {
    const listeners = this.listeners.get(channel);
    if (!listeners?.delete(listener) || listeners.size > 0) return;
    this.listeners.delete(channel);
    this.subscriber.unsubscribe(channel).catch(() => undefined);
  }
}
