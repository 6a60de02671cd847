import { randomUUID } from 'node:crypto';
import type { Usage } from '../events/event';
import type { TurnEvents } from '../event-log/turn-events';
import type { ModelCatalogue, Target } from '../models/model-catalogue';
import type { ConnectedProvider } from '../models/model-providers';
import type { ChatMessage } from '../providers/model-provider';
import { ProviderError } from '../providers/provider-error';
import type { Compaction, CompactionsRepository } from '../store/compactions-repository';
import type { Db } from '../store/db';
import type { ProviderCall, ProviderCallsRepository } from '../store/provider-calls-repository';
import { callRecord } from '../usage/call-record';
import { estimatePromptTokens, StreamedTokenTally } from '../usage/usage-estimate';
import type { InflightState } from '../event-log/inflight-state';
import { rowIdOf, summaryRequest, type CompactionPlan } from './compaction-plan';

export interface CompactionStepDeps {
  db: Db;
  compactions: Pick<CompactionsRepository, 'insert'>;
  providerCalls: Pick<ProviderCallsRepository, 'insert'>;
  providers: ReadonlyMap<string, ConnectedProvider>;
  models: Pick<ModelCatalogue, 'lookup'>;
}

export interface CompactionInput {
  turn: { id: string; conversationId: string; userId: string };
  attempt: number;
  /** The step the compaction comes before. */
  step: number;
  /** `compaction.model`, else the turn's. */
  model: string;
  instructions: string | undefined;
  /** The summary this one folds in. */
  previous: string | null;
  plan: Extract<CompactionPlan, { kind: 'compact' }>;
  /** The step's request with this summary in place of what it covers, counted. */
  tokensAfter: (summary: string) => number;
  events: TurnEvents;
  /** The turn's in-flight marker: it holds the summary request while it streams, for the ledger line of a worker that dies meanwhile. */
  inflight: InflightState;
  signal: AbortSignal;
  now: () => Date;
}

export type CompactionOutcome =
  | { kind: 'compacted'; compaction: Compaction }
  /** A later attempt owns the turn. */
  | { kind: 'fenced' }
  | { kind: 'aborted' }
  /** The step already has a compaction (of an earlier attempt): compacting again would not make it fit. */
  | { kind: 'already-compacted' }
  | { kind: 'failed'; error: ProviderError };

/**
 * Summarises the plan's span with the compaction model and stores the summary with the request's
 * ledger line in one transaction, fenced by the attempt: a worker that dies before that commit
 * leaves the compaction to the next attempt, one that commits leaves it done (the step's later
 * attempts read it). Announced by `compaction-start` and, once committed, `compaction-finish`.
 * The summary is not streamed to clients: it is no part of the answer.
 */
export async function compactBeforeStep(deps: CompactionStepDeps, input: CompactionInput): Promise<CompactionOutcome> {
  const id = `cmp_${randomUUID()}`;
  const route = deps.models.lookup(input.model);
  if (!route.ok) return { kind: 'failed', error: new ProviderError('rejected', route.message) };
  // The model's first target: a summary is one short request, not worth a fallback of its own;
  // a failure goes through the step's provider retries like the step's own.
  const target = route.route.targets[0]!;
  const connected = deps.providers.get(target.provider);
  if (!connected) return { kind: 'failed', error: new ProviderError('rejected', `provider "${target.provider}" has no URL in this process`) };
  const messages = summaryRequest(input.instructions, input.previous, input.plan.span);
  let release: () => void;
  try {
    release = await connected.slots.take(input.signal);
  } catch {
    return { kind: 'aborted' };
  }
  const startedAt = input.now();
  const callId = `pcall_${randomUUID()}`;
  const promptTokens = estimatePromptTokens({ messages });
  const tally = new StreamedTokenTally();
  const mark = () =>
    input.inflight.update(() => ({
      attempt: input.attempt,
      step: input.step,
      toolCalls: [],
      call: {
        id: callId,
        kind: 'compaction',
        provider: target.provider,
        model: target.model,
        startedAt: startedAt.toISOString(),
        promptTokens,
        completionTokens: tally.completionTokens,
        ...(target.price ? { price: target.price } : {}),
      },
    }));
  // Marked before it is sent (with its start event): the provider may bill it from its first token.
  mark();
  input.events.emit({ type: 'compaction-start', compactionId: id });
  const answer = await summarise(connected, target.model, messages, input.signal, (delta) => {
    tally.add(delta);
    mark();
  }).finally(release);
  input.inflight.streamEnded();
  if (input.signal.aborted) return { kind: 'aborted' };
  const call = compactionCall(input, callId, target, startedAt, answer);
  // Its ledger line is written below: the marker goes with the next announcement.
  input.inflight.clear();
  if (!answer.ok) {
    await deps.providerCalls.insert(call);
    return { kind: 'failed', error: answer.error };
  }
  const summary = answer.text.trim();
  const compaction: Compaction = {
    id,
    conversationId: input.turn.conversationId,
    turnId: input.turn.id,
    step: input.step,
    upToRowId: rowIdOf(input.plan.upTo),
    summary,
    tokensBefore: input.plan.tokensBefore,
    tokensAfter: input.tokensAfter(summary),
    model: target.model,
    usage: answer.usage,
    createdAt: input.now().toISOString(),
  };
  const stored = await deps.db.transaction(async (tx) => {
    // Billed whether or not the summary is kept: the line goes in either way.
    await deps.providerCalls.insert(call, tx);
    if (await deps.compactions.insert(compaction, input.attempt, tx)) return 'inserted' as const;
    const { rows } = await tx.query('SELECT 1 FROM compactions WHERE turn_id = $1 AND step = $2', [input.turn.id, input.step]);
    return rows.length > 0 ? ('exists' as const) : ('fenced' as const);
  });
  if (stored === 'fenced') return { kind: 'fenced' };
  if (stored === 'exists') return { kind: 'already-compacted' };
  input.events.emit({ type: 'compaction-finish', compactionId: id, tokensBefore: compaction.tokensBefore, tokensAfter: compaction.tokensAfter });
  return { kind: 'compacted', compaction };
}

type SummaryAnswer = { ok: true; text: string; usage: Usage } | { ok: false; error: ProviderError };

async function summarise(connected: ConnectedProvider, model: string, messages: ChatMessage[], signal: AbortSignal, onText: (delta: string) => void): Promise<SummaryAnswer> {
  let text = '';
  try {
    for await (const chunk of connected.provider.stream({ model, messages }, signal)) {
      if (chunk.type === 'text') {
        text += chunk.delta;
        onText(chunk.delta);
      }
      if (chunk.type === 'finish') return { ok: true, text, usage: chunk.usage };
    }
    return { ok: false, error: new ProviderError('truncated', 'the summary stream ended without a finish') };
  } catch (error) {
    return { ok: false, error: ProviderError.isInstance(error) ? error : new ProviderError('stream_error', String(error)) };
  }
}

function compactionCall(input: CompactionInput, id: string, target: Target, startedAt: Date, answer: SummaryAnswer): ProviderCall {
  const facts = { id, turn: input.turn, kind: 'compaction' as const, step: input.step, attempt: input.attempt, target, startedAt, endedAt: input.now() };
  // A failed summary counts nothing: its line says it failed, with no estimate.
  return callRecord(facts, answer.ok ? { usage: answer.usage } : { outcome: 'failed', error: { code: answer.error.kind, message: answer.error.message }, counted: null });
}
