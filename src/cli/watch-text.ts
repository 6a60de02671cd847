import type { SwitchyardEvent } from '@switchyard/protocol';

/** What `watch` follows, one frame at a time: as `--json` prints them. */
export type WatchFrame =
  { type: 'subscribed'; conversationId: string; after: number | null } | { type: 'event'; event: SwitchyardEvent } | { type: 'reloaded'; conversationId: string; lastSeq: number };

/** The longest a tool's arguments or result is shown on its card; the rest is cut with `…`. */
const CARD_VALUE_CHARS = 300;

/**
 * `watch` as a person reads it: the model's text as it streams, tool calls as cards (name, id,
 * arguments, then the result or the error with attempts and time) and one bracketed line per
 * status (a turn's start and end, steps, retries, approvals). Pure: each frame gives the text to
 * write, and the state kept is only where the output stands (mid-line, in reasoning) and the tool
 * names by call id, for the result cards. Event types it does not know are passed over, as the
 * client library does.
 */
export class WatchText {
  private atLineStart = true;
  private inReasoning = false;
  private readonly toolNames = new Map<string, string>();

  frame(frame: WatchFrame): string {
    switch (frame.type) {
      case 'subscribed':
        return this.line(`[watching ${frame.conversationId}${frame.after === null ? '' : ` after seq ${frame.after}`}; Ctrl-C stops]`);
      case 'reloaded':
        return this.line(`[the replay log no longer held where this was: reloaded at seq ${frame.lastSeq}]`);
      case 'event':
        return this.event(frame.event);
    }
  }

  private event(event: SwitchyardEvent): string {
    switch (event.type) {
      case 'text-delta':
        return this.stream(event.delta, false);
      case 'reasoning-delta':
        return this.stream(event.delta, true);
      case 'turn-start':
        return this.line(`[turn ${event.turnId} started${event.attempt > 1 ? `, attempt ${event.attempt}` : ''}]`);
      case 'step-start':
        return event.step > 1 ? this.line(`[step ${event.step}]`) : '';
      case 'tool-call-start':
        this.toolNames.set(event.toolCallId, event.toolName);
        return '';
      case 'tool-call-delta':
        // The arguments are shown whole on the card, once parsed.
        return '';
      case 'tool-call-end':
        return event.error
          ? this.line(`┌ ${this.nameOf(event.toolCallId)} (${event.toolCallId}): invalid arguments: ${event.error.message}`)
          : this.line(`┌ ${this.nameOf(event.toolCallId)} (${event.toolCallId}) ${shown(event.args)}`);
      case 'tool_processing_start':
        for (const call of event.toolCalls) this.toolNames.set(call.toolCallId, call.toolName);
        return this.line(`[running ${event.toolCalls.length} tool ${event.toolCalls.length === 1 ? 'call' : 'calls'}]`);
      case 'tool-call-request':
        this.toolNames.set(event.toolCallId, event.toolName);
        return this.line(`[${event.toolName} (${event.toolCallId}) waits for a client to run it]`);
      case 'tool-approval-request':
        this.toolNames.set(event.toolCallId, event.toolName);
        return this.line(`[${event.toolName} (${event.toolCallId}) waits for approval until ${event.expiresAt}: approve ${event.turnId} ${event.toolCallId} [--deny]]`);
      case 'tool-approval-response':
        return this.line(`[${this.nameOf(event.toolCallId)} (${event.toolCallId}) ${event.approved ? 'approved' : 'denied'}${event.reason ? `: ${event.reason}` : ''}]`);
      case 'turn-waiting':
        return this.line(`[waiting for the client's answers to ${event.toolCallIds.join(', ')}]`);
      case 'tool-result': {
        const took = `${event.attempts} ${event.attempts === 1 ? 'attempt' : 'attempts'}, ${Math.round(event.durationMs)} ms`;
        const name = this.nameOf(event.toolCallId);
        return event.error
          ? this.line(`└ ${name} (${event.toolCallId}) failed: ${event.error.code}: ${event.error.message} (${took})`)
          : this.line(`└ ${name} (${event.toolCallId}) → ${shown(event.result)} (${took})`);
      }
      case 'tool_processing_complete':
        return event.failed > 0 ? this.line(`[${event.results} tool results, ${event.failed} failed]`) : '';
      case 'step-finish':
        return event.finishReason === 'tool_calls' ? '' : this.line(`[step ${event.step}: ${event.finishReason}, ${event.usage.totalTokens} tokens]`);
      case 'attempt-discarded':
        return this.line(`[step ${event.step} starts again (attempt ${event.attempt}): what it showed since its start is dropped]`);
      case 'provider-retry':
        return this.line(`[the provider failed (${event.reason}): trying again in ${event.retryInMs} ms]`);
      case 'provider-fallback':
        return this.line(`[step ${event.step}: ${event.from.provider}/${event.from.model} failed (${event.reason}), on to ${event.to.provider}/${event.to.model}]`);
      case 'turn-finish':
        return this.line(`[turn finished: ${event.finishReason}, ${event.usage.totalTokens} tokens]`);
      case 'turn-error':
        return this.line(`[turn failed: ${event.error.code}: ${event.error.message}]`);
      case 'turn-cancelled':
        return this.line('[turn cancelled]');
      default:
        return '';
    }
  }

  /** Streamed text as it comes; reasoning is marked where it starts and set apart from the answer. */
  private stream(delta: string, reasoning: boolean): string {
    let out = '';
    if (reasoning !== this.inReasoning) {
      out += this.line(reasoning ? '[reasoning]' : '[answer]');
      this.inReasoning = reasoning;
    }
    if (delta === '') return out;
    this.atLineStart = delta.endsWith('\n');
    return out + delta;
  }

  /** A line of its own: after a newline where the streamed text stopped mid-line. */
  private line(text: string): string {
    const before = this.atLineStart ? '' : '\n';
    this.atLineStart = true;
    this.inReasoning = false;
    return `${before}${text}\n`;
  }

  private nameOf(toolCallId: string): string {
    return this.toolNames.get(toolCallId) ?? 'tool';
  }
}

/** A value on a card: its JSON, cut to {@link CARD_VALUE_CHARS}. */
function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');
  return text.length > CARD_VALUE_CHARS ? `${text.slice(0, CARD_VALUE_CHARS)}…` : text;
}
