import { randomUUID } from 'node:crypto';
import type { Span, Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics';
import { decideFallback } from '../models/fallback-decision';
import type { ModelRoute, Target } from '../models/model-catalogue';
import type { ConnectedProvider } from '../models/model-providers';
import type { TargetCooldowns } from '../models/target-cooldowns';
import { chooseTarget } from '../models/target-choice';
import type { CompletionRequest } from '../providers/model-provider';
import { ProviderError } from '../providers/provider-error';
import type { ProviderCall, ProviderCallsRepository } from '../store/provider-calls-repository';
import type { TurnEvents } from '../event-log/turn-events';
import type { InflightSnapshot, InflightState } from '../event-log/inflight-state';
import { endChatSpan, startChatSpan } from '../tracing/chat-span';
import { callRecord } from '../usage/call-record';
import { estimatePromptTokens, StreamedTokenTally } from '../usage/usage-estimate';
import { streamStep, type StepStreamResult, type StreamedPieces, type StreamStepOptions } from './stream-step';

export interface RoutingDeps {
  /** The providers of the models, as this process calls them. */
  providers: ReadonlyMap<string, ConnectedProvider>;
  cooldowns: Pick<TargetCooldowns, 'read' | 'claimProbe' | 'failed' | 'recovered'>;
  providerCalls: Pick<ProviderCallsRepository, 'insert'>;
  metrics: Pick<Metrics, 'timeToFirstToken' | 'providerFirstToken' | 'modelRequests' | 'providerFallbacks' | 'streamedTokens' | 'providerErrors'>;
  tracer: Tracer;
}

/** One step of a turn, as it is routed to its model's targets. */
export interface RoutedStepInput {
  turn: { id: string; conversationId: string; userId: string };
  attempt: number;
  step: number;
  route: ModelRoute;
  /** What the tokenizer counted the request at, where it was counted: recorded with the call (see provider-calls-repository.ts). */
  countedPromptTokens?: number;
  /** The request but its model, which each target names. */
  request: Omit<CompletionRequest, 'model'>;
  events: TurnEvents;
  inflight: InflightState;
  signal: AbortSignal;
  /** The job's span: each request's chat span is its child. */
  span: Span;
  log: Logger;
  /** `repair`: the request asks again for an answer that did not validate (structured output). */
  callKind?: ProviderCall['kind'];
  generateToolCallId: StreamStepOptions['generateToolCallId'];
  takenToolCallIds: StreamStepOptions['takenToolCallIds'];
  now: () => Date;
}

export type RoutedStep =
  /** `call` is the request that answered, its row to be recorded with the step; `chatSpan` ended. */
  | { kind: 'ok'; result: Extract<StepStreamResult, { ok: true }>; call: ProviderCall; startedAt: Date; chatSpan: Span }
  /** The turn fails: a refusal no other target is asked about, or a request too long for every target. */
  | { kind: 'failed'; code: 'provider_error' | 'context_length_exceeded'; message: string; outputSent: boolean }
  /** Every target cools down: the step waits under the provider retry rules; the soonest is back in `waitMs`. */
  | { kind: 'wait'; error: ProviderError; waitMs: number; outputSent: boolean }
  /** Our own signal stopped it (cancel, shutdown, a lost lock or fence). */
  | { kind: 'aborted'; outputSent: boolean };

/**
 * Streams one step on the first target of its model that is not cooling down, and on the next
 * ones while they fail as providers fail:
 * 1. choose the target (healthy, or the one probe of a target whose cooldown ended);
 * 2. wait for a slot of its provider (`maxConcurrency` in this process), then stream there;
 * 3. record the request (its own id, outcome, error, usage) and tell the cooldowns;
 * 4. on a failure: cool the target down and go on to the next (`provider-fallback`; after output
 *    `attempt-discarded` first and a new `step-start`), a too-long request to a target with a
 *    larger window, a refusal fails the turn; with no target left, the step waits.
 */
export async function streamRoutedStep(deps: RoutingDeps, input: RoutedStepInput): Promise<RoutedStep> {
  const { events, route, step } = input;
  const tried = new Set<number>();
  let forced: number | undefined;
  let left: { target: Target; reason: string; outputSent: boolean; error: ProviderError } | undefined;
  for (;;) {
    const choice =
      forced !== undefined
        ? { kind: 'target' as const, index: forced, target: route.targets[forced]!, probe: false }
        : await chooseTarget(deps.cooldowns, route.targets, tried, {
            probeMs: (target) => deps.providers.get(target.provider)?.timeoutMs ?? 60_000,
            onRedisError: (error) => input.log.warn({ err: error }, 'target cooldowns unreadable; trying targets in order'),
          });
    forced = undefined;
    if (choice.kind === 'none') {
      const error = left?.error ?? new ProviderError('server', `every target of model ${route.name} cools down`);
      return { kind: 'wait', error, waitMs: choice.waitMs, outputSent: left?.outputSent ?? false };
    }
    const { target, index } = choice;
    if (left) {
      // What a client showed of the step is dropped before it starts again elsewhere.
      if (left.outputSent) {
        events.emit({ type: 'attempt-discarded', attempt: input.attempt, step });
        input.inflight.clear();
      }
      events.emit({ type: 'provider-fallback', step, from: nameOf(left.target), to: nameOf(target), reason: left.reason });
      deps.metrics.providerFallbacks.inc({ reason: left.reason });
      if (left.outputSent) events.emit({ type: 'step-start', step });
    }
    tried.add(index);
    const connected = deps.providers.get(target.provider);
    if (!connected) return { kind: 'failed', code: 'provider_error', message: `provider "${target.provider}" has no URL in this process`, outputSent: false };
    let release: () => void;
    try {
      release = await connected.slots.take(input.signal);
    } catch {
      return { kind: 'aborted', outputSent: false };
    }
    const call = await requestOnce(deps, input, connected, target, choice.probe).finally(release);
    const { result } = call;
    if (result.ok) {
      if (choice.probe)
        await deps.cooldowns.recovered(target).catch((error: unknown) => input.log.warn({ err: error, provider: target.provider }, 'could not mark a target healthy'));
      return { kind: 'ok', result, call: call.record, startedAt: call.startedAt, chatSpan: call.chatSpan };
    }
    const outputSent = result.outputSent;
    await deps.providerCalls.insert(call.record);
    if (input.signal.aborted) return { kind: 'aborted', outputSent };
    const decision = decideFallback(result.error, route.targets, index);
    switch (decision.kind) {
      case 'abandon':
        return { kind: 'aborted', outputSent };
      case 'refused':
        return { kind: 'failed', code: 'provider_error', message: `provider "${target.provider}" refused the request: ${result.error.message}`, outputSent };
      case 'context-length-exceeded':
        // The runner compacts and sends it again where the conversation has a policy (docs/API.md, "Long conversations").
        return { kind: 'failed', code: 'context_length_exceeded', message: `too long for every target of model ${route.name}: ${result.error.message}`, outputSent };
      case 'larger-window':
        forced = decision.index;
        break;
      case 'cool-down':
        await deps.cooldowns
          .failed(target, result.error.retryAfterMs)
          .catch((error: unknown) => input.log.warn({ err: error, provider: target.provider }, 'could not record a target cooling down'));
        break;
    }
    input.log.warn(
      { step, provider: target.provider, model: target.model, providerError: result.error.kind, reason: result.error.message, outputSent },
      'provider request failed; the step goes on to the next target',
    );
    left = { target, reason: result.error.kind, outputSent, error: result.error };
  }
}

/** One request to one target, under its chat span, with its row (and ledger line) as it ended. */
async function requestOnce(deps: RoutingDeps, input: RoutedStepInput, connected: ConnectedProvider, target: Target, probe: boolean) {
  const startedAt = input.now();
  const id = `pcall_${randomUUID()}`;
  const chatSpan = startChatSpan(deps.tracer, input.span, {
    model: target.model,
    conversationId: input.turn.conversationId,
    turnId: input.turn.id,
    step: input.step,
    providerUrl: connected.baseURL,
    provider: target.provider,
    routedModel: input.route.name,
    probe,
  });
  // Counted only once output comes: a call cut before it is billed nothing here.
  let promptTokens: number | undefined;
  const tally = new StreamedTokenTally();
  let readToolCalls: (() => InflightSnapshot['toolCalls']) | undefined;
  let firstOutput = true;
  const result = await streamStep({
    provider: connected.provider,
    request: { ...input.request, model: target.model },
    events: input.events,
    signal: input.signal,
    generateToolCallId: input.generateToolCallId,
    ...(input.takenToolCallIds ? { takenToolCallIds: input.takenToolCallIds } : {}),
    onDelta: (delta) => tally.add(delta),
    onOutput: (toolCallsReader) => {
      if (firstOutput) {
        const seconds = (Date.now() - startedAt.getTime()) / 1000;
        deps.metrics.timeToFirstToken.observe(seconds);
        deps.metrics.providerFirstToken.observe({ provider: target.provider }, seconds);
        promptTokens = estimatePromptTokens(input.request);
      }
      firstOutput = false;
      readToolCalls = toolCallsReader ?? readToolCalls;
      // Throttled by the marker: its call's tokens are as of its last write.
      input.inflight.update(() => ({
        attempt: input.attempt,
        step: input.step,
        toolCalls: readToolCalls?.() ?? [],
        call: {
          id,
          provider: target.provider,
          model: target.model,
          startedAt: startedAt.toISOString(),
          promptTokens: promptTokens ?? 0,
          completionTokens: tally.completionTokens,
          ...(target.price ? { price: target.price } : {}),
        },
      }));
    },
  });
  input.inflight.streamEnded();
  endChatSpan(chatSpan, result);
  countStreamed(deps.metrics, result.streamed);
  const outcome = result.ok ? 'ok' : result.outputSent ? 'discarded' : 'failed';
  deps.metrics.modelRequests.inc({ provider: target.provider, model: target.model, outcome });
  if (!result.ok) deps.metrics.providerErrors.inc({ kind: result.error.kind });
  const record = callRecord(
    {
      id,
      turn: input.turn,
      kind: input.callKind ?? 'step',
      step: input.step,
      attempt: input.attempt,
      target,
      startedAt,
      endedAt: input.now(),
      ...(input.countedPromptTokens !== undefined ? { countedPromptTokens: input.countedPromptTokens } : {}),
    },
    result.ok
      ? { usage: result.output.usage }
      : {
          outcome: result.outputSent ? 'discarded' : 'failed',
          error: { code: result.error.kind, message: result.error.message },
          // Counted only once output came: a call cut before it is billed nothing here.
          counted: promptTokens === undefined ? null : { promptTokens, completionTokens: tally.completionTokens },
        },
  );
  return { result, record, startedAt, chatSpan };
}

function countStreamed(metrics: RoutingDeps['metrics'], streamed: StreamedPieces): void {
  if (streamed.text > 0) metrics.streamedTokens.inc({ kind: 'text' }, streamed.text);
  if (streamed.reasoning > 0) metrics.streamedTokens.inc({ kind: 'reasoning' }, streamed.reasoning);
  if (streamed.toolCall > 0) metrics.streamedTokens.inc({ kind: 'tool_call' }, streamed.toolCall);
}

function nameOf(target: Target): { provider: string; model: string } {
  return { provider: target.provider, model: target.model };
}
