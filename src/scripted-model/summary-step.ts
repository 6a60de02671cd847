import type { ChatMessage } from './chat-request-schema';
import { lastUserText } from './message-text';
import type { Step } from './scenario-schema';

/**
 * The opening tag of Switchyard's compaction requests (src/turns/compaction-plan.ts): the model
 * is asked to summarise the transcript between it and its end tag. Spelt out here, not imported:
 * the scripted model stands in for a provider, which knows Switchyard only by what it sends.
 */
const TRANSCRIPT_OPENING = '<conversation-to-summarise>';
/** A summary quotes this many characters of each user line at most, and this many lines. */
const QUOTED_CHARS = 40;
const QUOTED_LINES = 6;

/**
 * A compaction request's answer, deterministically: how many lines the transcript had and the
 * user's lines quoted short, the earlier summary folded in as a count. Short, so that a
 * compacted request is much smaller than the one it replaces. Undefined for any other request.
 */
export function summaryStep(messages: readonly ChatMessage[]): Step | undefined {
  const text = lastUserText(messages);
  if (!text.startsWith(TRANSCRIPT_OPENING)) return undefined;
  const entries = text
    .slice(TRANSCRIPT_OPENING.length)
    .replace(/<\/conversation-to-summarise>\s*$/, '')
    .split(/\n\n(?=\[)/)
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const earlier = entries.filter((entry) => entry.startsWith('[summary of what came before]')).length;
  const said = entries.filter((entry) => entry.startsWith('[user] ')).map((entry) => quote(entry.slice('[user] '.length).replace(/\[\[scripted [\s\S]*\]\]/g, '')));
  const parts = [`Summary of ${entries.length - earlier} messages${earlier > 0 ? ' and an earlier summary' : ''}.`];
  if (said.length > 0)
    parts.push(
      `The user said: ${said
        .slice(-QUOTED_LINES)
        .map((line) => `"${line}"`)
        .join('; ')}.`,
    );
  return { text: parts.join(' ') };
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > QUOTED_CHARS ? `${flat.slice(0, QUOTED_CHARS - 1)}…` : flat;
}
