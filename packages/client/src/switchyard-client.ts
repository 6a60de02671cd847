import {
  isEventEnvelope,
  isServerFrame,
  TERMINAL_EVENT_TYPES,
  type ApprovalDecision,
  type ApprovalDecisionRequest,
  type ClientFrame,
  type ClientToolAnswerAck,
  type ClientToolAnswerRequest,
  type CompactConversationRequest,
  type Conversation,
  type ConversationWithMessages,
  type CreateConversationRequest,
  type EventEnvelope,
  type PendingApprovalPage,
  type ReceivedServerFrame,
  type SwitchyardEvent,
  type Turn,
  type TurnAccepted,
  type TurnContent,
  type TurnDetail,
  type TurnRequest,
  type WsTicket,
} from '@switchyard/protocol';
import { AsyncQueue } from './async-queue.js';
import { ConversationFeed, type ApprovalRequest, type ToolCallRequest } from './conversation-feed.js';
import { httpCall, httpConnection, SwitchyardApiError, type HttpCall, type HttpConnection, type TokenProvider } from './http-api.js';
import { isTurnToolCalls, openClientCalls, turnsToCheck, type TurnToolCalls } from './open-client-calls.js';
import { replayTurnEvents } from './turn-replay.js';
import { applyTurnEvent, emptyTurnView, type TurnView } from './turn-view.js';

/**
 * The part of the WHATWG WebSocket the client uses, as both the browser's and the `ws` package's
 * class satisfy it unchanged. The handlers take `any`: each implementation types its events with
 * classes of its own (a handler's parameter must accept them all), and the client reads only
 * `data` of a message and `code` and `reason` of a close, which both have.
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: any) => void) | null;
  onmessage: ((event: any) => void) | null;
  onclose: ((event: any) => void) | null;
  onerror: ((event: any) => void) | null;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** Omit over each member of a union (TypeScript's own Omit merges them into one object). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A client tool's answer: its result, or its error (`POST /v1/turns/:id/tool-results` without the call's id). */
export type ClientToolAnswer = OmitEach<ClientToolAnswerRequest, 'toolCallId'>;
/** A person's decision on a call; `args` replaces the model's arguments (checked against the tool's schema). */
export type ApprovalAnswer = Omit<ApprovalDecisionRequest, 'toolCallId'>;
/** What a turn may set besides its message (model, tools, toolChoice, onBusy, idempotencyKey, …), as the server checks it. */
export type TurnOptions = Omit<TurnRequest, 'content' | 'regenerate' | 'fromMessageId'>;
/** A regenerate's options: {@link TurnOptions} and the user message to answer again. */
export type RegenerateOptions = Omit<TurnRequest, 'content' | 'regenerate'>;
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface SwitchyardClientOptions {
  /** The API's base URL, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /**
   * An API key, or (in browsers) a session token from `POST /v1/session-tokens`; or a function
   * giving one (possibly async, e.g. asking the page's backend), asked again whenever the server
   * answers 401 `token_expired`: the request is sent once more with the new token, and the
   * websocket's next ticket is got with it.
   */
  token: string | TokenProvider;
  /**
   * Defaults to `globalThis.WebSocket` (browsers, Node 22); on Node 20 pass `ws`'s. Without either,
   * a subscription's `ready` rejects with code `no_websocket`.
   */
  WebSocket?: WebSocketConstructor;
  fetch?: typeof fetch;
  /** Runs client tools (`tool-call-request`); what it returns is the result, what it throws the error. */
  onToolCall?(request: ToolCallRequest): unknown;
  /**
   * Called once per call of a subscribed conversation that waits for a person's approval, also
   * for one asked before the subscription, or while disconnected (the pending approvals are read
   * over HTTP then). Return (or resolve to) a decision to have it sent; return nothing to decide
   * later with `approve`.
   */
  onApprovalRequest?(request: ApprovalRequest): void | ApprovalAnswer | Promise<void | ApprovalAnswer>;
  /** Each change once: `connecting` (the first connection), `open`, `reconnecting` (each attempt after), `closed`. */
  onConnectionChange?(state: ConnectionState): void;
  /**
   * Backoff between reconnects, and between sends of a client tool's answer the server did not
   * take (network down): doubles from `initialDelayMs` (250) up to `maxDelayMs` (10 000), with jitter.
   */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /** How often the connection is checked with a `ping` frame (a dead one is replaced). */
  pingIntervalMs?: number;
  /**
   * How long a client tool's answer or an approval sent over the websocket waits for the
   * server's acknowledgement before it is sent again over HTTP. Default 10 000 ms.
   */
  ackTimeoutMs?: number;
}

export interface SubscribeOptions {
  /** Resume after this seq (exclusive); absent: from the oldest event the server keeps. */
  after?: number;
  /**
   * The server took the subscription (again, after a reconnect), before it sends the replay:
   * `latestSeq` is the conversation's latest seq then.
   */
  onSubscribed?(latestSeq: number): void;
  /** Every new event, in seq order, exactly once across reconnects. */
  onEvent?(event: SwitchyardEvent): void;
  /**
   * The server no longer keeps the events after the last seq seen (`cursor_expired`): the
   * conversation was reloaded over HTTP and the subscription resumes after its `lastSeq`.
   */
  onReload?(conversation: ConversationWithMessages): void;
  /** The subscription cannot go on (not found, credentials revoked). */
  onError?(error: SwitchyardApiError): void;
}

export interface Subscription {
  readonly conversationId: string;
  /** The last seq seen. */
  readonly lastSeq: number | undefined;
  /** Resolves when the server confirmed the (first) subscription. */
  readonly ready: Promise<void>;
  /** The subscription's events from now on. */
  events(): AsyncIterableIterator<SwitchyardEvent>;
  /** One turn's events (those already seen first), ending after its last. */
  turn(turnId: string): AsyncIterableIterator<SwitchyardEvent>;
  /**
   * Follows a turn to its end, calling `onView` on every change (`waiting-for-client`: it waits on
   * client tools). A turn that began before the subscription did is seen whole: its earlier
   * events are read from the replay log (`GET /v1/turns/:id/events`).
   */
  followTurn(turnId: string, onView?: (view: TurnView) => void): Promise<TurnView>;
  close(): void;
}

interface SubscriptionState {
  conversationId: string;
  feed: ConversationFeed;
  options: SubscribeOptions;
  /** Recent events, so that a turn posted just now can be followed from its first event. */
  recent: SwitchyardEvent[];
  listeners: Set<(event: SwitchyardEvent) => void>;
  /** The iterators open on it, ended when it closes or fails. */
  queues: Set<AsyncQueue<SwitchyardEvent>>;
  /** A resubscription after a gap is on its way: later events out of order are its to replay. */
  resubscribing: boolean;
  /** The pending approvals were read over HTTP after the first subscription. */
  approvalsRead: boolean;
  confirm(): void;
  fail(error: SwitchyardApiError): void;
}

const OPEN = 1;
const RECENT_EVENTS = 5_000;
const NO_WEBSOCKET =
  "no WebSocket implementation: this runtime has no globalThis.WebSocket (Node 20 has none); pass one as options.WebSocket, e.g. the ws package's: new SwitchyardClient({ ..., WebSocket })";

type AckFrame = Extract<ReceivedServerFrame, { type: 'tool-result-ack' | 'tool-approval-ack' | 'error' }>;
/** A frame sent over a socket, waiting for its acknowledgement (null: none will come on that socket). */
interface AckWaiter {
  socket: WebSocketLike;
  settle(ack: AckFrame | null): void;
}
const ackKey = (frameType: 'tool-result' | 'tool-approval', turnId: string, toolCallId: string) => `${frameType}\n${turnId}\n${toolCallId}`;
/** The HTTP status a refusal over the websocket would have had. */
const FRAME_ERROR_STATUS: Record<string, number> = { not_found: 404, already_decided: 409, rate_limited: 429, internal: 500 };
const retriable = (error: unknown) => error instanceof SwitchyardApiError && (error.status === 0 || error.status === 429 || error.status >= 500);

/**
 * Switchyard from a browser or Node: the HTTP API, and the websocket gateway with what every
 * front end otherwise writes by hand: ticket auth, reconnects with backoff that resume from
 * the last seq seen (no gap, no duplicate), a reload over HTTP when the server no longer keeps
 * that far back, client tools answered once, approvals shown once, and per-turn iteration. No
 * Node-only imports.
 */
export class SwitchyardClient {
  readonly http: HttpCall;
  private readonly connection: HttpConnection;
  private readonly subscriptions = new Map<string, SubscriptionState>();
  private socket: WebSocketLike | null = null;
  private connecting = false;
  private closed = false;
  private failures = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private awaitingPong = false;
  private readonly ackWaiters = new Map<string, Set<AckWaiter>>();

  constructor(private readonly options: SwitchyardClientOptions) {
    this.connection = httpConnection(options);
    this.http = httpCall(this.connection);
  }

  createConversation(body: CreateConversationRequest = {}): Promise<Conversation> {
    return this.http('POST', '/v1/conversations', body);
  }

  /**
   * The conversation with its path: the messages no edit or regenerate replaced, in order (each
   * with its `id`). `includeSuperseded`: the replaced ones too, marked `supersededBy`.
   */
  getConversation(conversationId: string, options: { includeSuperseded?: boolean } = {}): Promise<ConversationWithMessages> {
    const query = options.includeSuperseded ? '?include=superseded' : '';
    return this.http('GET', `/v1/conversations/${encodeURIComponent(conversationId)}${query}`);
  }

  /** Posts a turn (`content`: a string or content parts; `options`: model, tools, onBusy, …). */
  sendTurn(conversationId: string, content: TurnContent, options: TurnOptions = {}): Promise<TurnAccepted> {
    return this.http('POST', `/v1/conversations/${encodeURIComponent(conversationId)}/turns`, { content, ...options });
  }

  /**
   * A new turn answers the last user message again (or `fromMessageId`, a user message on the
   * path), superseding what followed it; `options` as {@link sendTurn}'s (onBusy, model, …).
   */
  regenerate(conversationId: string, options: RegenerateOptions = {}): Promise<TurnAccepted> {
    return this.http('POST', `/v1/conversations/${encodeURIComponent(conversationId)}/turns`, { ...options, regenerate: true });
  }

  /** A new turn replaces the user message `messageId` with `content` (superseding what followed it) and answers it. */
  editMessage(conversationId: string, messageId: string, content: TurnContent, options: TurnOptions = {}): Promise<TurnAccepted> {
    return this.http('POST', `/v1/conversations/${encodeURIComponent(conversationId)}/turns`, { ...options, content, fromMessageId: messageId });
  }

  /**
   * Summarises the conversation's messages before its kept tail now, as a turn of its own (its
   * events `compaction-start`, `compaction-finish`); `instructions` replace the policy's.
   */
  compactConversation(conversationId: string, request: CompactConversationRequest = {}): Promise<TurnAccepted> {
    return this.http('POST', `/v1/conversations/${encodeURIComponent(conversationId)}/compact`, request);
  }

  /** A new conversation holding copies of the path up to `messageId`, with `forkedFrom`. */
  forkConversation(conversationId: string, messageId: string): Promise<Conversation> {
    return this.http('POST', `/v1/conversations/${encodeURIComponent(conversationId)}/fork`, { messageId });
  }

  /** The turn with its steps, tool calls (and the running step's, still streaming), usage and timings. */
  getTurn(turnId: string): Promise<TurnDetail> {
    return this.http('GET', `/v1/turns/${encodeURIComponent(turnId)}`);
  }

  cancelTurn(turnId: string): Promise<Turn> {
    return this.http('POST', `/v1/turns/${encodeURIComponent(turnId)}/cancel`);
  }

  /**
   * Answers a client tool call: over the websocket when it is open, and done when the server
   * acknowledged it; over HTTP when the socket is not open, or when it closes (or stays silent
   * for `ackTimeoutMs`) before the acknowledgement, since the answer may never have arrived.
   * The first answer of a call wins, so one sent twice is harmless. `accepted: false`: the call
   * had its answer already (from another client, or this one's earlier send).
   */
  async answerToolCall(turnId: string, toolCallId: string, answer: ClientToolAnswer): Promise<{ accepted: boolean }> {
    const socket = this.socket;
    if (socket?.readyState === OPEN) {
      const ack = await this.sendForAck(socket, { type: 'tool-result', turnId, toolCallId, ...answer });
      if (ack?.type === 'tool-result-ack') return { accepted: ack.accepted };
    }
    const answered = await this.http<ClientToolAnswerAck>('POST', `/v1/turns/${encodeURIComponent(turnId)}/tool-results`, { toolCallId, ...answer });
    return { accepted: answered.accepted };
  }

  /** The calls of your conversations that wait for a person's decision, newest first (`GET /v1/approvals`). */
  listPendingApprovals(options: { conversationId?: string; limit?: number; cursor?: string } = {}): Promise<PendingApprovalPage> {
    const query = new URLSearchParams({ status: 'pending' });
    for (const [name, value] of Object.entries(options)) if (value !== undefined) query.set(name, String(value));
    return this.http('GET', `/v1/approvals?${query}`);
  }

  /**
   * Decides a call that waits for approval: over the websocket when it is open (done when the
   * server acknowledged it), else or when no acknowledgement came, over HTTP; sent again while
   * the network or the server fails (the first decision wins, so a repeat answers the stored
   * one). Resolves to the stored decision; a refusal rejects (409 `already_decided` when the
   * call was decided the other way, 404 for a call that is not yours).
   */
  approve(turnId: string, toolCallId: string, approved: boolean, reason?: string, args?: ApprovalAnswer['args']): Promise<ApprovalDecision> {
    const answer = { approved, ...(reason === undefined ? {} : { reason }), ...(args === undefined ? {} : { args }) };
    return this.untilDelivered(() => this.decideOnce(turnId, toolCallId, answer));
  }

  private async decideOnce(turnId: string, toolCallId: string, answer: ApprovalAnswer): Promise<ApprovalDecision> {
    const socket = this.socket;
    if (socket?.readyState === OPEN) {
      const ack = await this.sendForAck(socket, { type: 'tool-approval', turnId, toolCallId, ...answer });
      if (ack?.type === 'tool-approval-ack') return { toolCallId, approved: ack.approved, reason: ack.reason, args: ack.args, decidedAt: ack.decidedAt };
      if (ack?.type === 'error') throw new SwitchyardApiError(FRAME_ERROR_STATUS[ack.code] ?? 400, ack.code, ack.message, ack.details);
    }
    return this.http<ApprovalDecision>('POST', `/v1/turns/${encodeURIComponent(turnId)}/approvals`, { toolCallId, ...answer });
  }

  /** Sends the frame and waits for its acknowledgement (or refusal) on that socket; null when none came. */
  private sendForAck(socket: WebSocketLike, frame: Extract<ClientFrame, { type: 'tool-result' | 'tool-approval' }>): Promise<AckFrame | null> {
    const key = ackKey(frame.type, frame.turnId, frame.toolCallId);
    const waiters = this.ackWaiters.get(key) ?? new Set<AckWaiter>();
    this.ackWaiters.set(key, waiters);
    return new Promise((resolve) => {
      const waiter: AckWaiter = {
        socket,
        settle: (ack) => {
          clearTimeout(timer);
          waiters.delete(waiter);
          if (waiters.size === 0 && this.ackWaiters.get(key) === waiters) this.ackWaiters.delete(key);
          resolve(ack);
        },
      };
      const timer = setTimeout(() => waiter.settle(null), this.options.ackTimeoutMs ?? 10_000);
      waiters.add(waiter);
      socket.send(JSON.stringify(frame));
    });
  }

  /** The answers sent on a socket that closed will never be acknowledged there. */
  private abandonAcks(socket: WebSocketLike): void {
    for (const waiters of [...this.ackWaiters.values()]) for (const waiter of [...waiters]) if (waiter.socket === socket) waiter.settle(null);
  }

  subscribe(conversationId: string, options: SubscribeOptions = {}): Subscription {
    if (this.subscriptions.has(conversationId)) throw new Error(`already subscribed to ${conversationId}`);
    let confirm = () => {};
    let fail: (error: SwitchyardApiError) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      confirm = resolve;
      fail = reject;
    });
    ready.catch(() => undefined);
    const state: SubscriptionState = {
      conversationId,
      feed: new ConversationFeed(options.after),
      options,
      recent: [],
      listeners: new Set(),
      queues: new Set(),
      resubscribing: false,
      approvalsRead: false,
      confirm,
      fail: (error) => {
        fail(error);
        options.onError?.(error);
        this.subscriptions.delete(conversationId);
        for (const queue of state.queues) queue.end(error);
      },
    };
    this.subscriptions.set(conversationId, state);
    if (this.socket?.readyState === OPEN) this.sendSubscribe(state);
    else this.connect();

    const iterate = (filter: (event: SwitchyardEvent) => boolean, endsAfter: (event: SwitchyardEvent) => boolean, replay: SwitchyardEvent[]) => {
      const stop = () => {
        state.listeners.delete(listener);
        state.queues.delete(queue);
      };
      const queue: AsyncQueue<SwitchyardEvent> = new AsyncQueue(stop);
      state.queues.add(queue);
      const listener = (event: SwitchyardEvent) => {
        if (!filter(event)) return;
        queue.push(event);
        if (!endsAfter(event)) return;
        queue.end();
        stop();
      };
      for (const event of replay) listener(event);
      state.listeners.add(listener);
      return queue;
    };
    return {
      conversationId,
      get lastSeq() {
        return state.feed.lastSeq;
      },
      ready,
      events: () =>
        iterate(
          () => true,
          () => false,
          [],
        ),
      turn: (turnId) => {
        const ofTurn = (event: SwitchyardEvent) => event.turnId === turnId;
        return iterate(ofTurn, (event) => TERMINAL_EVENT_TYPES.has(event.type), state.recent.filter(ofTurn));
      },
      followTurn: async (turnId, onView) => {
        let view = emptyTurnView(turnId, conversationId);
        const apply = (event: SwitchyardEvent) => {
          view = applyTurnEvent(view, event);
          onView?.(view);
        };
        const ofTurn = (event: SwitchyardEvent) => event.turnId === turnId;
        const ends = (event: SwitchyardEvent) => TERMINAL_EVENT_TYPES.has(event.type);
        let first = true;
        for await (const event of iterate(ofTurn, ends, state.recent.filter(ofTurn))) {
          // The subscription began after the turn did (`after`, a reload): the events it missed
          // (the step-start its text belongs to, the text before) come from the replay log.
          if (first && !(event.type === 'turn-start' && event.attempt === 1)) {
            for (const earlier of await replayTurnEvents(this.connection, turnId, event.seq)) apply(earlier);
          }
          first = false;
          apply(event);
        }
        return view;
      },
      close: () => {
        this.subscriptions.delete(conversationId);
        for (const queue of state.queues) queue.end();
        this.send({ type: 'unsubscribe', conversationId });
      },
    };
  }

  /** Closes the websocket for good; subscriptions end. */
  close(): void {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.pingTimer);
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000, 'client closed');
    if (socket) this.abandonAcks(socket);
    for (const state of this.subscriptions.values()) for (const queue of state.queues) queue.end();
    this.subscriptions.clear();
    this.options.onConnectionChange?.('closed');
  }

  private connect(): void {
    if (this.closed || this.connecting || this.socket) return;
    const WebSocketClass = this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    // No reconnect can bring one: everyone waiting is told what to pass.
    if (!WebSocketClass) return this.failAll(new SwitchyardApiError(0, 'no_websocket', NO_WEBSOCKET));
    this.connecting = true;
    // A reconnect was reported as it was scheduled.
    if (this.failures === 0) this.options.onConnectionChange?.('connecting');
    void this.openSocket(WebSocketClass).then(
      () => {
        this.connecting = false;
      },
      (error: unknown) => {
        this.connecting = false;
        // Credentials refused: no reconnect can help; everyone waiting is told.
        if (error instanceof SwitchyardApiError && (error.status === 401 || error.status === 403)) return this.failAll(error);
        this.scheduleReconnect();
      },
    );
  }

  /** A ticket for each connection: browsers cannot set headers on a websocket handshake. */
  private async openSocket(WebSocketClass: WebSocketConstructor): Promise<void> {
    const { ticket } = await this.http<WsTicket>('POST', '/v1/ws-tickets');
    if (this.closed) return;
    const url = `${this.options.baseUrl.replace(/\/+$/, '').replace(/^http/, 'ws')}/v1/ws?ticket=${encodeURIComponent(ticket)}`;
    const socket = new WebSocketClass(url);
    this.socket = socket;
    socket.onopen = () => {
      this.options.onConnectionChange?.('open');
      for (const state of this.subscriptions.values()) this.sendSubscribe(state);
      this.startPinging(socket);
    };
    socket.onmessage = (message: { data: unknown }) => this.receive(String(message.data));
    socket.onerror = () => undefined;
    socket.onclose = (event: { code: number; reason: string }) => {
      this.abandonAcks(socket);
      if (this.socket !== socket) return;
      this.socket = null;
      clearInterval(this.pingTimer);
      if (this.closed) return;
      // 1008: the key was revoked (or the origin refused); reconnecting would only be refused.
      if (event.code === 1008) return this.failAll(new SwitchyardApiError(401, 'unauthorized', event.reason || 'the connection was refused'));
      this.scheduleReconnect();
    };
  }

  private scheduleReconnect(): void {
    if (this.closed || this.subscriptions.size === 0) return;
    this.options.onConnectionChange?.('reconnecting');
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.connect(), this.backoff(this.failures++));
  }

  private startPinging(socket: WebSocketLike): void {
    clearInterval(this.pingTimer);
    this.awaitingPong = false;
    this.pingTimer = setInterval(() => {
      // No pong since the last ping: the connection is dead though no close came; replace it.
      if (this.awaitingPong) return socket.close(4000, 'no pong');
      this.awaitingPong = true;
      this.send({ type: 'ping' });
    }, this.options.pingIntervalMs ?? 20_000);
  }

  private receive(text: string): void {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    // Not a frame this client knows: a newer server's; ignored, but an event's seq still counts.
    if (!isServerFrame(frame)) {
      const event = (frame as { type?: unknown; event?: unknown } | null)?.event;
      if ((frame as { type?: unknown } | null)?.type === 'event' && isEventEnvelope(event)) this.passOver(event);
      return;
    }
    this.awaitingPong = false;
    switch (frame.type) {
      case 'subscribed': {
        if (!('conversationId' in frame)) return;
        const state = this.subscriptions.get(frame.conversationId);
        if (!state) return;
        this.failures = 0;
        state.resubscribing = false;
        state.feed.subscribed(frame.seq);
        state.options.onSubscribed?.(frame.seq);
        state.confirm();
        if (!state.approvalsRead && this.options.onApprovalRequest) {
          state.approvalsRead = true;
          // Asked before this subscription's first event (`after`): only the server's list has it.
          void this.readPendingApprovals(state.conversationId).then(
            (pending) => {
              state.feed.addApprovals(pending);
              this.askApprovals(state);
            },
            () => undefined,
          );
        }
        this.askApprovals(state);
        return this.runClientTools(state);
      }
      case 'event':
        return this.deliver(frame.event as SwitchyardEvent);
      case 'error':
        return this.onErrorFrame(frame);
      case 'tool-result-ack':
        return this.settleAcks(ackKey('tool-result', frame.turnId, frame.toolCallId), frame);
      case 'tool-approval-ack':
        return this.settleAcks(ackKey('tool-approval', frame.turnId, frame.toolCallId), frame);
      case 'unsubscribed':
      case 'pong':
      case 'batch-progress':
      case 'batch-finish':
        return;
    }
  }

  private settleAcks(key: string, frame: AckFrame): void {
    for (const waiter of [...(this.ackWaiters.get(key) ?? [])]) waiter.settle(frame);
  }

  private passOver(event: EventEnvelope): void {
    const state = this.subscriptions.get(event.conversationId);
    if (state && state.feed.passOver(event.seq) === 'gap' && !state.resubscribing) this.resubscribe(state);
  }

  private deliver(event: SwitchyardEvent): void {
    const state = this.subscriptions.get(event.conversationId);
    if (!state) return;
    const verdict = state.feed.accept(event);
    if (verdict === 'duplicate') return;
    if (verdict === 'gap') {
      if (!state.resubscribing) this.resubscribe(state);
      return;
    }
    state.recent.push(event);
    if (state.recent.length > RECENT_EVENTS) state.recent.splice(0, state.recent.length - RECENT_EVENTS);
    state.options.onEvent?.(event);
    for (const listener of [...state.listeners]) listener(event);
    this.runClientTools(state);
    this.askApprovals(state);
  }

  private onErrorFrame(frame: Extract<ReceivedServerFrame, { type: 'error' }>): void {
    // A refused decision names its call.
    if (frame.turnId && frame.toolCallId) return this.settleAcks(ackKey('tool-approval', frame.turnId, frame.toolCallId), frame);
    const state = frame.conversationId ? this.subscriptions.get(frame.conversationId) : undefined;
    if (!state) return;
    if (frame.code === 'cursor_expired' || frame.code === 'bad_cursor') return void this.reload(state);
    // The server's side of the subscription broke: subscribing again resumes it by seq.
    if (frame.code === 'internal') return this.resubscribe(state);
    state.fail(new SwitchyardApiError(frame.code === 'not_found' ? 404 : 400, frame.code, frame.message));
  }

  /** The events after our last seq are gone: read the conversation as it stands, go on from there. */
  private async reload(state: SubscriptionState): Promise<void> {
    try {
      const conversation = await this.getConversation(state.conversationId);
      const known = state.feed.openRequests();
      const turns = this.options.onToolCall ? await this.turnsWithToolCalls(turnsToCheck(known, conversation.messages)) : [];
      const approvals = this.options.onApprovalRequest ? await this.readPendingApprovals(state.conversationId) : [];
      state.feed.reloaded(conversation.lastSeq, openClientCalls(turns, known, conversation.lastSeq), approvals);
      state.options.onReload?.(conversation);
      this.resubscribe(state);
    } catch (error) {
      if (error instanceof SwitchyardApiError && error.status !== 0) return state.fail(error);
      this.socket?.close(4001, 'reload failed');
    }
  }

  /** Each turn's tool calls as the server has them; a turn that is gone, or not in a shape this client knows, has none. */
  private async turnsWithToolCalls(turnIds: string[]): Promise<TurnToolCalls[]> {
    const turns: TurnToolCalls[] = [];
    for (const turnId of turnIds) {
      const turn = await this.getTurn(turnId).catch((error: unknown) => {
        if (error instanceof SwitchyardApiError && error.status === 404) return null;
        throw error;
      });
      if (isTurnToolCalls(turn)) turns.push(turn);
    }
    return turns;
  }

  /** A repeated subscribe restarts the server's side from the new `after`. */
  private resubscribe(state: SubscriptionState): void {
    state.resubscribing = true;
    this.sendSubscribe(state);
  }

  private sendSubscribe(state: SubscriptionState): void {
    const after = state.feed.lastSeq;
    this.send({ type: 'subscribe', conversationId: state.conversationId, ...(after === undefined ? {} : { after }) });
  }

  /** Every page of the conversation's pending approvals. */
  private async readPendingApprovals(conversationId: string): Promise<ApprovalRequest[]> {
    const pending: ApprovalRequest[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.untilDelivered(() => this.listPendingApprovals({ conversationId, limit: 100, ...(cursor ? { cursor } : {}) }));
      pending.push(...page.data);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return pending;
  }

  private askApprovals(state: SubscriptionState): void {
    const handler = this.options.onApprovalRequest;
    if (!handler) return;
    for (const request of state.feed.takeUndecided()) {
      void (async () => {
        const answer = await handler(request);
        if (answer) await this.approve(request.turnId, request.toolCallId, answer.approved, answer.reason, answer.args);
      })().catch(() => undefined);
    }
  }

  private runClientTools(state: SubscriptionState): void {
    const handler = this.options.onToolCall;
    if (!handler) return;
    for (const request of state.feed.takeRunnable()) {
      void (async () => {
        let answer: ClientToolAnswer;
        try {
          answer = { result: (await handler(request)) ?? null };
        } catch (error) {
          answer = { error: { code: 'client_tool_error', message: error instanceof Error ? error.message : String(error) } };
        }
        await this.answerUntilAcknowledged(request, answer);
      })();
    }
  }

  /**
   * Sends a client tool's answer until the server has it: a connection that dropped with the
   * answer on it, or a network or server failure of the HTTP fallback, only means it goes again
   * (the first answer of a call wins, so a repeat is harmless). A refusal (the turn is gone, or
   * the call is not a client call) ends it, as does closing the client.
   */
  private async answerUntilAcknowledged(request: ToolCallRequest, answer: ClientToolAnswer): Promise<void> {
    await this.untilDelivered(() => this.answerToolCall(request.turnId, request.toolCallId, answer)).catch(() => undefined);
  }

  /**
   * Tries `send` until it is answered: a network failure, 429 or 5xx only means it goes again
   * after a backoff; a refusal rejects at once, as does the last failure once the client is closed.
   */
  private async untilDelivered<T>(send: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await send();
      } catch (error) {
        if (!retriable(error) || this.closed) throw error;
        await new Promise((resolve) => setTimeout(resolve, this.backoff(attempt)));
      }
    }
  }

  /** The delay before the attempt after `failures` failed ones: doubling, capped, with jitter. */
  private backoff(failures: number): number {
    const initial = this.options.reconnect?.initialDelayMs ?? 250;
    const max = this.options.reconnect?.maxDelayMs ?? 10_000;
    const ceiling = Math.min(max, initial * 2 ** failures);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private failAll(error: SwitchyardApiError): void {
    for (const state of [...this.subscriptions.values()]) state.fail(error);
    this.options.onConnectionChange?.('closed');
  }

  private send(frame: ClientFrame): void {
    if (this.socket?.readyState === OPEN) this.socket.send(JSON.stringify(frame));
  }
}
