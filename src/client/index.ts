/** The Switchyard client library: for browsers and Node (no Node-only imports). */
export { SwitchyardClient } from './switchyard-client';
export type {
  ClientToolAnswer,
  ConnectionState,
  ConversationWithMessages,
  SubscribeOptions,
  Subscription,
  SwitchyardClientOptions,
  WebSocketConstructor,
  WebSocketLike,
} from './switchyard-client';
export { SwitchyardApiError } from './http-api';
export { applyTurnEvent, emptyTurnView, isTurnOver, turnViewOf } from './turn-view';
export type { StepView, ToolCallView, TurnView } from './turn-view';
export type { ToolCallRequest } from './conversation-feed';
export type { SwitchyardEvent } from '../events/event';
