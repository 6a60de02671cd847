/** The Switchyard client library: for browsers and Node (no Node-only imports). */
export { SwitchyardClient } from './switchyard-client.js';
export type {
  ApprovalAnswer,
  ClientToolAnswer,
  ConnectionState,
  RegenerateOptions,
  SubscribeOptions,
  Subscription,
  SwitchyardClientOptions,
  TurnOptions,
  WebSocketConstructor,
  WebSocketLike,
} from './switchyard-client.js';
export { httpApi, SwitchyardApiError } from './http-api.js';
export type { HttpCall, HttpOptions, TokenProvider } from './http-api.js';
export { applyTurnEvent, emptyTurnView, isTurnOver, turnViewOf } from './turn-view.js';
export type { CompactionView, ProviderFallbackView, StepView, ToolCallView, TurnView } from './turn-view.js';
export type { ApprovalRequest, ToolCallRequest } from './conversation-feed.js';
// From the protocol (@switchyard/protocol, bundled into this package): the event model, the HTTP
// answers the methods return and the bodies they send, inferred from the schemas the server
// checks, types and documents them with, and the history as the AI SDK's UI messages.
export { storedToUiMessages } from '@switchyard/protocol';
export type {
  ApprovalDecision,
  ClientToolAnswerAck,
  Conversation,
  ConversationMessage,
  ConversationWithMessages,
  CreateConversationRequest,
  HistoryUiMessage,
  HistoryUiPart,
  PendingApproval,
  PendingApprovalPage,
  StoredHistory,
  StoredMessage,
  StoredToolCall,
  StoredTurn,
  SwitchyardEvent,
  ToolProcessingData,
  ToolRunFacts,
  Turn,
  TurnAccepted,
  TurnContent,
  TurnDetail,
  TurnMetadata,
  TurnStatus,
  TurnToolCall,
} from '@switchyard/protocol';
