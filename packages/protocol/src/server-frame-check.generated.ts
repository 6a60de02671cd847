// Generated from serverFrameSchema (./ws-frames.ts) by scripts/write-frame-check.ts:
// `npm run generate -w @switchyard/protocol`. Do not edit; a test fails when it is stale.
import { anyOf, array, boolean, nullable, number, object, oneOf, optional, string, unknown } from './shape-check.js';
import type { ReceivedServerFrame } from './ws-frames.js';

/** Whether a value is a frame the gateway sends, as serverFrameSchema would accept it. */
export const isServerFrame = anyOf(
  object({ "type": oneOf("subscribed"), "conversationId": string, "seq": number({ integer: true, minimum: 0 }) }),
  object({ "type": oneOf("subscribed"), "batchId": string }),
  object({ "type": oneOf("unsubscribed"), "conversationId": string }),
  object({ "type": oneOf("unsubscribed"), "batchId": string }),
  object({ "type": oneOf("batch-progress"), "batchId": string, "counts": object({ "total": number({ integer: true }), "queued": number({ integer: true }), "running": number({ integer: true }), "waiting": number({ integer: true }), "succeeded": number({ integer: true }), "failed": number({ integer: true }), "cancelled": number({ integer: true }) }), "usage": object({ "promptTokens": number({ integer: true, minimum: 0 }), "completionTokens": number({ integer: true, minimum: 0 }), "totalTokens": number({ integer: true, minimum: 0 }) }) }),
  object({ "type": oneOf("batch-finish"), "batchId": string, "status": oneOf("completed", "cancelled"), "counts": object({ "total": number({ integer: true }), "queued": number({ integer: true }), "running": number({ integer: true }), "waiting": number({ integer: true }), "succeeded": number({ integer: true }), "failed": number({ integer: true }), "cancelled": number({ integer: true }) }) }),
  object({ "type": oneOf("pong") }),
  object({ "type": oneOf("tool-result-ack"), "turnId": string, "toolCallId": string, "accepted": boolean }),
  object({ "type": oneOf("tool-approval-ack"), "turnId": string, "toolCallId": string, "approved": boolean, "reason": nullable(string), "args": unknown, "decidedAt": string }),
  object({ "type": oneOf("error"), "code": string, "message": string, "conversationId": optional(string), "batchId": optional(string), "oldestSeq": optional(number({ integer: true })), "turnId": optional(string), "toolCallId": optional(string), "details": optional(unknown) }),
  object({ "type": oneOf("event"), "event": anyOf(
      object({ "type": oneOf("turn-start"), "attempt": number({ integer: true, minimum: 0, exclusive: true }), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("step-start"), "step": number({ integer: true, minimum: 0, exclusive: true }), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("text-delta"), "delta": string, "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("reasoning-delta"), "delta": string, "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("tool-call-start"), "toolCallId": string, "toolName": string, "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("tool-call-delta"), "toolCallId": string, "argsTextDelta": string, "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("tool-call-end"), "toolCallId": string, "args": nullable(unknown), "error": optional(object({ "code": string, "message": string })), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("tool_processing_start"), "toolCalls": array(object({ "toolCallId": string, "toolName": string, "args": unknown })), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("tool-call-request"), "toolCallId": string, "toolName": string, "args": unknown, "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("tool-approval-request"), "toolCallId": string, "toolName": string, "args": unknown, "approvalId": string, "expiresAt": string, "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("tool-approval-response"), "toolCallId": string, "approved": boolean, "reason": optional(string), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("turn-waiting"), "toolCallIds": array(string), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("tool-result"), "toolCallId": string, "result": optional(unknown), "error": optional(object({ "code": string, "message": string })), "attempts": number({ integer: true, minimum: 0 }), "durationMs": number({ minimum: 0 }), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("tool_processing_complete"), "results": number({ integer: true, minimum: 0 }), "failed": number({ integer: true, minimum: 0 }), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("step-finish"), "step": number({ integer: true, minimum: 0, exclusive: true }), "finishReason": string, "usage": object({ "promptTokens": number({ integer: true, minimum: 0 }), "completionTokens": number({ integer: true, minimum: 0 }), "totalTokens": number({ integer: true, minimum: 0 }) }), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("attempt-discarded"), "attempt": number({ integer: true, minimum: 0, exclusive: true }), "step": number({ integer: true, minimum: 0, exclusive: true }), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("provider-retry"), "attempt": number({ integer: true, minimum: 0, exclusive: true }), "retryInMs": number({ minimum: 0 }), "reason": string, "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("provider-fallback"), "step": number({ integer: true, minimum: 0, exclusive: true }), "from": object({ "provider": string, "model": string }), "to": object({ "provider": string, "model": string }), "reason": string, "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("compaction-start"), "compactionId": string, "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("compaction-finish"), "compactionId": string, "tokensBefore": number({ integer: true, minimum: 0 }), "tokensAfter": number({ integer: true, minimum: 0 }), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("turn-finish"), "finishReason": string, "usage": object({ "promptTokens": number({ integer: true, minimum: 0 }), "completionTokens": number({ integer: true, minimum: 0 }), "totalTokens": number({ integer: true, minimum: 0 }) }), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("turn-error"), "error": object({ "code": string, "message": string }), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
      object({ "type": oneOf("turn-cancelled"), "conversationId": string, "turnId": string, "seq": number({ integer: true, minimum: 0, exclusive: true }) }),
    ) }),
) as (value: unknown) => value is ReceivedServerFrame;
