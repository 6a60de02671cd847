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
export { SwitchyardApiError } from './http-api.js';
export { applyTurnEvent, emptyTurnView, isTurnOver, turnViewOf } from './turn-view.js';
export type { StepView, ToolCallView, TurnView } from './turn-view.js';
export type { ApprovalRequest, ToolCallRequest } from './conversation-feed.js';
export type { SwitchyardEvent } from './protocol/event.js';
// The HTTP answers the methods return, inferred from the schemas the server types its answers with.
export type { Conversation, ConversationMessage, ConversationWithMessages } from './protocol/conversation-answers.js';
export type { ClientToolAnswerAck, Turn, TurnAccepted, TurnDetail, TurnStatus, TurnToolCall } from './protocol/turn-answers.js';
export type { ApprovalDecision, PendingApproval, PendingApprovalPage } from './protocol/approval-answers.js';
// The HTTP bodies the methods send, inferred from the schemas the server checks them with.
export type { CreateConversationRequest } from './protocol/conversation-requests.js';
export type { TurnContent } from './protocol/turn-content.js';
export { storedToUiMessages } from './ui-messages/stored-to-ui-messages.js';
export type { HistoryUiMessage, HistoryUiPart, StoredHistory, StoredMessage, StoredToolCall, StoredTurn } from './ui-messages/stored-to-ui-messages.js';
export type { ToolProcessingData, ToolRunFacts, TurnMetadata } from './ui-messages/ui-message-parts.js';
