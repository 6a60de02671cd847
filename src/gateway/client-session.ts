import type { Logger } from 'pino';
import WebSocket from 'ws';
import { EventLogRestartedError, type ConversationSubscription, type SubscribeOutcome } from '../subscriptions/conversation-subscription';
import type { BatchProgressFrame } from '../batches/batch-progress';
import type { Principal } from '../auth/principal';
import { SESSION_TOKEN_SCOPE, sessionTokenMayFollow } from '../api/session-scope';
import { parseClientFrame, type ClientFrame, type FrameErrorCode, type ServerFrame, type ToolApprovalFrame, type ToolResultFrame } from './frames';

/** What a subscription follows: a conversation's events or a batch's progress. */
type Subject = { conversationId: string } | { batchId: string };

export type ToolResultOutcome = { ok: true; accepted: boolean } | { ok: false; code: FrameErrorCode; message: string };
/** A decision taken (or the same one stored before it), or why it was refused. */
export type ToolApprovalOutcome =
  | { ok: true; decision: { toolCallId: string; approved: boolean; reason: string | null; args: unknown; decidedAt: string } }
  /** `details`: the stored decision, when the refusal is `already_decided`. */
  | { ok: false; code: FrameErrorCode; message: string; details?: unknown };

/** What a session needs from the rest of the service; the gateway binds these. */
export interface SessionServices {
  /** Whether the conversation exists and is this user's. */
  ownsConversation(userId: string, conversationId: string): Promise<boolean>;
  subscribe(input: {
    conversationId: string;
    after: number | undefined;
    deliver(json: string, seq: number, appendedAt?: number): void;
    onError(error: Error): void;
  }): Promise<SubscribeOutcome>;
  answerToolCall(userId: string, frame: ToolResultFrame): Promise<ToolResultOutcome>;
  /** The same decision as `POST /v1/turns/:id/approvals`. */
  decideApproval(userId: string, frame: ToolApprovalFrame): Promise<ToolApprovalOutcome>;
  ownsBatch(userId: string, batchId: string): Promise<boolean>;
  followBatch(batchId: string, options: { send(frame: BatchProgressFrame): void; onEnd(): void }): Promise<{ stop(): void }>;
  /**
   * Sends an event frame, encoded once for every client of this gateway. `appendedAt`: when
   * a live event was appended (ms since the epoch), for the relay lag.
   */
  sendEvent(socket: WebSocket, eventJson: string, appendedAt?: number): void;
  /** A client was disconnected for falling too far behind (counted). */
  onSlowConsumer(): void;
  /** Whether the session may send one more frame now (its frame rate). */
  admitFrame(session: ClientSession): Promise<boolean>;
  logger: Logger;
}

export interface SessionLimits {
  /** A client whose unsent backlog passes this is disconnected; it resumes by `seq`. */
  maxBufferedBytes: number;
  maxSubscriptions: number;
}

/** Close codes the gateway uses. */
export const CLOSE = {
  slowConsumer: 1013,
  policyViolation: 1008,
  serviceRestart: 1012,
} as const;

/**
 * One websocket connection: its user, its subscriptions, and its frames handled one at a time
 * in arrival order (so that `subscribe` then `unsubscribe` cannot overtake each other).
 */
export class ClientSession {
  alive = true;
  private readonly subscriptions = new Map<string, ConversationSubscription>();
  private readonly batches = new Map<string, { stop(): void }>();
  private queue: Promise<void> = Promise.resolve();
  private closing = false;
  private rateLimitedAt = 0;

  constructor(
    readonly socket: WebSocket,
    /** Who opened it; a session token's (`viaSession`) follows what that token may read over HTTP. */
    private readonly principal: Pick<Principal, 'userId' | 'viaSession'>,
    private readonly services: SessionServices,
    private readonly limits: SessionLimits,
    /** Called before each frame goes out: the frames of one tick leave in one write (writes-per-tick.ts). */
    private readonly holdWrites: () => void,
  ) {
    socket.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    socket.on('pong', () => (this.alive = true));
    socket.on('close', () => this.dispose());
    socket.on('error', (error) => services.logger.debug({ err: error }, 'websocket error'));
  }

  get userId(): string {
    return this.principal.userId;
  }

  get subscriptionCount(): number {
    return this.subscriptions.size;
  }

  get batchSubscriptionCount(): number {
    return this.batches.size;
  }

  /** Conversations and batches together: both count against `maxSubscriptions`. */
  private get subscriptionTotal(): number {
    return this.subscriptions.size + this.batches.size;
  }

  private refuseSubscription(subject: Subject): void {
    this.send({ type: 'error', code: 'too_many_subscriptions', message: `at most ${this.limits.maxSubscriptions} subscriptions per connection`, ...subject });
  }

  /** A session token follows here only what it may read over HTTP: a `forbidden` error frame, as HTTP's 403. */
  private mayFollow(subject: Subject): boolean {
    if (!this.principal.viaSession || sessionTokenMayFollow(subject)) return true;
    const what = 'batchId' in subject ? 'following a batch' : 'following this';
    this.send({ type: 'error', code: 'forbidden', message: `${SESSION_TOKEN_SCOPE}; ${what} needs the API key`, ...subject });
    return false;
  }

  /** Sends a frame unless the client is too far behind, in which case it is disconnected. */
  send(frame: ServerFrame | string): void {
    if (this.closing || this.socket.readyState !== WebSocket.OPEN) return;
    if (this.socket.bufferedAmount > this.limits.maxBufferedBytes) return this.disconnectSlowConsumer();
    this.holdWrites();
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  close(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    this.dispose();
    this.socket.close(code, reason);
    // A peer that does not read never sees the close frame: drop it shortly after.
    setTimeout(() => this.socket.terminate(), 1000).unref();
  }

  private disconnectSlowConsumer(): void {
    this.services.onSlowConsumer();
    this.services.logger.info({ userId: this.userId }, 'websocket client too slow, disconnected');
    this.close(CLOSE.slowConsumer, 'too slow: reconnect and subscribe with after = your last seq');
  }

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    // The limiter answers in call order, so frames keep their order through it.
    void this.services.admitFrame(this).then((admitted) => (admitted ? this.accept(data, isBinary) : this.refuseFrame()));
  }

  private refuseFrame(): void {
    // One error a second at most: answering every frame of a flood would be a flood too.
    const now = Date.now();
    if (now - this.rateLimitedAt < 1000) return;
    this.rateLimitedAt = now;
    this.send({ type: 'error', code: 'rate_limited', message: 'too many frames; slow down' });
  }

  private accept(data: WebSocket.RawData, isBinary: boolean): void {
    const text = isBinary ? null : data.toString();
    const parsed = text === null ? ({ ok: false, code: 'bad_frame', message: 'frames must be JSON text, not binary' } as const) : parseClientFrame(text);
    if (!parsed.ok) return this.send({ type: 'error', code: parsed.code, message: parsed.message });
    this.queue = this.queue
      .then(() => this.handle(parsed.frame))
      .catch((error: unknown) => {
        this.services.logger.error({ err: error }, 'websocket frame failed');
        this.send({ type: 'error', code: 'internal', message: 'the frame could not be handled; try again' });
      });
  }

  private async handle(frame: ClientFrame): Promise<void> {
    switch (frame.type) {
      case 'ping':
        return this.send({ type: 'pong' });
      case 'subscribe':
        if ('batchId' in frame) return this.followBatch(frame.batchId);
        return this.subscribe(frame.conversationId, frame.after);
      case 'unsubscribe':
        if ('batchId' in frame) {
          this.stopFollowing({ batchId: frame.batchId });
          return this.send({ type: 'unsubscribed', batchId: frame.batchId });
        }
        this.stopFollowing({ conversationId: frame.conversationId });
        return this.send({ type: 'unsubscribed', conversationId: frame.conversationId });
      case 'tool-result': {
        const outcome = await this.services.answerToolCall(this.userId, frame);
        if (!outcome.ok) return this.send({ type: 'error', code: outcome.code, message: outcome.message });
        return this.send({ type: 'tool-result-ack', turnId: frame.turnId, toolCallId: frame.toolCallId, accepted: outcome.accepted });
      }
      case 'tool-approval': {
        const outcome = await this.services.decideApproval(this.userId, frame);
        const ids = { turnId: frame.turnId, toolCallId: frame.toolCallId };
        if (!outcome.ok)
          return this.send({ type: 'error', code: outcome.code, message: outcome.message, ...ids, ...(outcome.details === undefined ? {} : { details: outcome.details }) });
        return this.send({ type: 'tool-approval-ack', ...ids, ...outcome.decision });
      }
    }
  }

  /**
   * Whether a subscribe goes ahead: the session may follow the subject, it is this user's, and
   * with any earlier subscription to it stopped (a repeated subscribe starts again) there is
   * room for one more. A refusal is answered here.
   */
  private async admitSubscription(subject: Subject): Promise<boolean> {
    if (!this.mayFollow(subject)) return false;
    const owned = 'batchId' in subject ? await this.services.ownsBatch(this.userId, subject.batchId) : await this.services.ownsConversation(this.userId, subject.conversationId);
    if (!owned) {
      this.send({ type: 'error', code: 'not_found', message: 'batchId' in subject ? 'no such batch' : 'no such conversation', ...subject });
      return false;
    }
    this.stopFollowing(subject);
    if (this.subscriptionTotal < this.limits.maxSubscriptions) return true;
    this.refuseSubscription(subject);
    return false;
  }

  private stopFollowing(subject: Subject): void {
    if ('batchId' in subject) {
      this.batches.get(subject.batchId)?.stop();
      this.batches.delete(subject.batchId);
    } else {
      this.subscriptions.get(subject.conversationId)?.dispose();
      this.subscriptions.delete(subject.conversationId);
    }
  }

  /** A batch's progress: `batch-progress` frames while it changes, then `batch-finish`. */
  private async followBatch(batchId: string): Promise<void> {
    if (!(await this.admitSubscription({ batchId }))) return;
    this.send({ type: 'subscribed', batchId });
    // A batch that has already ended sends its batch-finish, and ends, before followBatch returns:
    // such a subscription is never registered, so it neither lingers nor counts.
    let ended = false;
    let following: { stop(): void } | undefined;
    following = await this.services.followBatch(batchId, {
      send: (frame) => this.send(frame),
      onEnd: () => {
        ended = true;
        if (following && this.batches.get(batchId) === following) this.batches.delete(batchId);
      },
    });
    if (this.closing || ended) return following.stop();
    this.batches.set(batchId, following);
  }

  private async subscribe(conversationId: string, after: number | undefined): Promise<void> {
    // A repeated subscribe restarts from its new `after`.
    if (!(await this.admitSubscription({ conversationId }))) return;
    const outcome = await this.services.subscribe({
      conversationId,
      after,
      deliver: (json, _seq, appendedAt) => {
        if (this.closing) return;
        if (this.socket.bufferedAmount > this.limits.maxBufferedBytes) return this.disconnectSlowConsumer();
        this.holdWrites();
        this.services.sendEvent(this.socket, json, appendedAt);
      },
      onError: (error) => {
        this.services.logger.warn({ err: error, conversationId }, 'subscription failed');
        this.stopFollowing({ conversationId });
        // A log that restarted cannot be resumed by seq: the client reloads, as for an expired cursor.
        if (EventLogRestartedError.isInstance(error)) {
          return this.send({ type: 'error', code: 'cursor_expired', message: error.message, conversationId, oldestSeq: error.oldestSeq });
        }
        this.send({ type: 'error', code: 'internal', message: 'the subscription broke; subscribe again with after', conversationId });
      },
    });
    if (!outcome.ok) {
      return this.send({
        type: 'error',
        code: outcome.code,
        message: outcome.message,
        conversationId,
        ...(outcome.code === 'cursor_expired' ? { oldestSeq: outcome.oldestSeq } : {}),
      });
    }
    if (this.closing) return outcome.subscription.dispose();
    this.subscriptions.set(conversationId, outcome.subscription);
    this.send({ type: 'subscribed', conversationId, seq: outcome.subscription.latestSeq });
    outcome.subscription.start();
  }

  private dispose(): void {
    for (const subscription of this.subscriptions.values()) subscription.dispose();
    this.subscriptions.clear();
    for (const following of this.batches.values()) following.stop();
    this.batches.clear();
  }
}
