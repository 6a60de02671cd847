import type { CompactionPolicy } from '@switchyard/protocol';
import type { ModelRoute } from '../models/model-catalogue';
import type { ChatMessage, ToolDefinition } from '../providers/model-provider';
import type { ProviderError } from '../providers/provider-error';
import type { StoredMessage } from '../store/messages-repository';
import type { ProviderCallsRepository } from '../store/provider-calls-repository';
import { estimatePromptTokens } from '../usage/usage-estimate';
import { compactionLimits, countCorrection, planStep, requestMessages, rowIdOf, type ActiveSummary, type CompactionLimits } from './compaction-plan';
import { compactBeforeStep, type CompactionInput, type CompactionStepDeps } from './compaction-step';

/** A conversation's compaction as one attempt of a turn carries it from step to step. */
export interface CompactionState {
  policy: CompactionPolicy;
  limits: CompactionLimits;
  summary: ActiveSummary | null;
  /** The provider's count over the tokenizer's, from the conversation's last counted request. */
  correction: number;
  /** Steps of this attempt that compacted: a step compacts at most once. */
  compacted: Set<number>;
}

/**
 * The compaction state of an attempt whose conversation has a policy: its limits on the turn's
 * model, its latest summary on the path, the count correction. Null without a policy, or with
 * one the model cannot have (no window, no `triggerTokens`: refused where the policy was set,
 * possible only when the models file changed since), which `onInvalid` hears of.
 */
export async function loadCompactionState(
  deps: { providerCalls: Pick<ProviderCallsRepository, 'lastCounted'> },
  conversationId: string,
  policy: CompactionPolicy | null,
  route: ModelRoute | null,
  /** The latest summary on the path, as the attempt read it when it began (the history it read starts after it). */
  latest: ActiveSummary | null,
  onInvalid: (message: string) => void,
): Promise<CompactionState | null> {
  if (!policy) return null;
  const limits = compactionLimits(policy, route ? routeWindow(route) : undefined);
  if (!limits.ok) {
    onInvalid(limits.message);
    return null;
  }
  return {
    policy,
    limits: limits.limits,
    summary: latest,
    correction: countCorrection(await deps.providerCalls.lastCounted(conversationId)),
    compacted: new Set(),
  };
}

/** The smallest window of a route's targets; unknown when one of them has none. */
export function routeWindow(route: ModelRoute): number | undefined {
  const windows = route.targets.map((target) => target.contextWindow);
  return windows.every((window): window is number => window !== undefined) ? Math.min(...windows) : undefined;
}

export interface CompactedRequestInput extends Omit<CompactionInput, 'plan' | 'tokensAfter' | 'previous' | 'instructions' | 'model'> {
  system: string | null;
  path: StoredMessage[];
  tools: ToolDefinition[];
  state: CompactionState;
  /** The turn's model, which summarises when the policy names none. */
  model: string;
  /** A provider said the request is too long, or a caller asked: compact whatever the count says. */
  force?: boolean;
}

export type CompactedRequest =
  /** `counted`: the tokenizer's count of the messages (uncorrected), recorded with the call. */
  | { kind: 'ok'; messages: ChatMessage[]; counted: number }
  | { kind: 'failed'; code: 'context_length_exceeded'; message: string }
  /** Forced, with nothing before the last user message to summarise. */
  | { kind: 'nothing-to-compact'; tokens: number }
  | { kind: 'provider-failed'; error: ProviderError }
  | { kind: 'fenced' }
  | { kind: 'aborted' };

/**
 * A step's messages under its conversation's policy: as they are while they count under the
 * trigger, else after a compaction (stored, and kept in `state` for the attempt's next steps).
 * A tail that alone passes the trigger, or a step that compacted once already, fails the turn
 * `context_length_exceeded`: compacting again would not make it fit.
 */
export async function compactedRequest(deps: CompactionStepDeps, input: CompactedRequestInput): Promise<CompactedRequest> {
  const { state } = input;
  const overhead = input.tools.length > 0 ? estimatePromptTokens({ messages: [], tools: input.tools }) : 0;
  const raw = (messages: ChatMessage[]) => estimatePromptTokens({ messages }) + overhead;
  const countMessages = (messages: ChatMessage[]) => Math.ceil(estimatePromptTokens({ messages }) * state.correction);
  const countTokens = (messages: ChatMessage[]) => countMessages(messages) + Math.ceil(overhead * state.correction);
  const plan = planStep({
    system: input.system,
    summary: state.summary,
    path: input.path,
    limits: state.limits,
    countTokens: countMessages,
    requestOverhead: Math.ceil(overhead * state.correction),
    ...(input.force ? { force: true } : {}),
  });
  if (plan.kind === 'send') return { kind: 'ok', messages: plan.messages, counted: raw(plan.messages) };
  if (plan.kind === 'nothing-to-compact') return { kind: 'nothing-to-compact', tokens: plan.tokens };
  if (plan.kind === 'too-long') {
    return tooLong(`the messages that must be kept (from the last user message) count ${plan.tailTokens} tokens, over the compaction trigger of ${state.limits.triggerTokens}`);
  }
  if (state.compacted.has(input.step)) return tooLong('the step is still too long after its compaction');
  state.compacted.add(input.step);
  const compacted = await compactBeforeStep(deps, {
    ...input,
    model: input.state.policy.model ?? input.model,
    instructions: state.policy.instructions,
    previous: state.summary?.summary ?? null,
    plan,
    tokensAfter: (summary) => countTokens(requestMessages(input.system, { summary, upToRowId: rowIdOf(plan.upTo) }, input.path)),
  });
  switch (compacted.kind) {
    case 'compacted':
      state.summary = { summary: compacted.compaction.summary, upToRowId: compacted.compaction.upToRowId };
      break;
    case 'already-compacted':
      return tooLong('the step is still too long after its compaction');
    case 'failed':
      if (compacted.error.kind === 'context_length_exceeded') return tooLong(`the summary request itself is too long: ${compacted.error.message}`);
      return { kind: 'provider-failed', error: compacted.error };
    default:
      return compacted;
  }
  const messages = requestMessages(input.system, state.summary, input.path);
  return { kind: 'ok', messages, counted: raw(messages) };
}

function tooLong(message: string): CompactedRequest {
  return { kind: 'failed', code: 'context_length_exceeded', message };
}
