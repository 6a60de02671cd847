import { randomUUID } from 'node:crypto';
import type { Span, Tracer } from '@opentelemetry/api';
import type { RedisClient } from '../redis/redis-connection';
import type { Logger } from 'pino';
import type { EventPayload, Usage } from '../events/event';
import type { Metrics } from '../metrics/metrics';
import type { ChatMessage, ToolDefinition } from '../providers/model-provider';
import type { ModelCatalogue, ModelLookup } from '../models/model-catalogue';
import type { ProviderCall } from '../store/provider-calls-repository';
import { streamRoutedStep, type RoutedStep, type RoutingDeps } from './routed-step';
import type { ConversationsRepository } from '../store/conversations-repository';
import { AttemptFencedError } from '../event-log/event-log';
import type { Queryable } from '../store/db';
import type { StoredMessage } from '../store/messages-repository';
import type { NewToolCall } from '../store/tool-calls-repository';
import type { NewToolApproval } from '../store/tool-approvals-repository';
import type { BegunAttempt, StepRecord, Turn } from '../store/turns-repository';
import { attemptOpeningEvents } from './attempt-opening';
import type { ModelSettings } from '../providers/model-settings';
import { DEFAULT_REPAIR_ATTEMPTS, providerResponseFormat, type ResponseFormat } from '../providers/response-format';
import { checkOutput, repairMessages } from './structured-output';
import { turnSettings, type TurnSettings } from './agent-settings';
import { buildMessages } from './build-messages';
import { startAtUserMessage } from './history-window';
import { compactedRequest, loadCompactionState, type CompactionState } from './compacted-request';
import { countCorrection } from './compaction-plan';
import type { CompactionsRepository } from '../store/compactions-repository';
import type { ProviderCallsRepository } from '../store/provider-calls-repository';
import { ProviderError } from '../providers/provider-error';
import { InflightState } from '../event-log/inflight-state';
import { lostCallLine } from '../usage/lost-call';
import { budgetSubjects, budgetWakeUp, firstReached, periodStarts, type BudgetExceeded } from '../usage/budget-decision';
import type { BudgetsRepository } from '../usage/store/budgets-repository';
import { inOfferOrder, offeredToolNames } from '../tool-calls/offered-tools';
import { prepareToolCalls } from '../tool-calls/prepare-tool-calls';
import { decideProviderRetry, type RetryPolicy } from './provider-retry-policy';
import type { StepOutput } from './stream-step';
import { announcePhaseCounts, goesToToolJobs, resumeToolPhase, startToolPhase, type ToolPhaseDeps } from '../tool-calls/tool-phase';
import { announceStoredEnd, endTurn, type TurnEndingDeps } from './turn-ending';
import { TurnEvents } from '../event-log/turn-events';
import { DEFAULT_APPROVAL_TIMEOUT_MS, type ToolRegistry } from '../tools/tool';
import { GEN_AI, SWITCHYARD } from '../tracing/span-attributes';
import { traceparentOf } from '../tracing/trace-context';

export interface TurnRunnerDeps extends TurnEndingDeps, ToolPhaseDeps, Omit<RoutingDeps, 'metrics' | 'tracer'> {
  eventLog: TurnEndingDeps['eventLog'];
  conversations: ConversationsRepository;
  /** Long conversations' summaries, and the counts that correct the tokenizer's (docs/API.md, "Long conversations"). */
  compactions: Pick<CompactionsRepository, 'insert'>;
  providerCalls: Pick<ProviderCallsRepository, 'insert' | 'lastCounted'>;
  /** What a turn's `model` names: its targets in order. */
  models: Pick<ModelCatalogue, 'lookup'>;
  /** For in-flight step state (tool-call buffers, the output mark). */
  redis: RedisClient;
  redisPrefix: string;
  logger: Logger;
  metrics: Pick<
    Metrics,
    | 'turnsStarted'
    | 'turnsFinished'
    | 'turnDuration'
    | 'turnSteps'
    | 'timeToFirstToken'
    | 'streamedTokens'
    | 'modelTokens'
    | 'providerErrors'
    | 'providerRetries'
    | 'providerFirstToken'
    | 'modelRequests'
    | 'providerFallbacks'
  >;
  defaults: { model: string; maxSteps: number; maxHistoryMessages?: number };
  retryPolicy: RetryPolicy;
  limits: { maxToolCallsPerStep: number };
  tracer: Tracer;
  /** A budget reached by a step fails (`reject`) or parks (`pause`) its turn after it. */
  budgets: Pick<BudgetsRepository, 'standings' | 'noticeExceeded'>;
  now?: () => Date;
}

export interface TurnJob {
  turnId: string;
  /** On a turn's start: its conversation, whose row lock its admission holds until it commits. */
  conversationId?: string | undefined;
  /** The queue job's id: a turn running under another job is left to it. */
  jobId: string;
  /** The job is a step's continuation (its tool jobs have finished), not the turn's start. */
  isContinuation: boolean;
  /** The Redis key of the job's BullMQ lock: a step's calls run in this process are held by it. */
  lockKey?: string;
  /** The job's span: the steps' chat spans are its children. */
  span: Span;
}

/** What the queue layer must do with the job after a run. */
export type TurnRunOutcome =
  | { kind: 'done' }
  /** Wait out a provider failure: the job goes back to the queue, delayed. */
  | { kind: 'delay'; delayMs: number }
  /** The turn is not this job's to run now (finished, or not first in line). */
  | { kind: 'skipped'; reason: string }
  /**
   * The run stopped midway: its writes were refused (`fenced`: a later attempt owns the turn,
   * as when this worker lost its job while it was stopped, or the turn was ended from outside),
   * or the job's signal aborted it (cancel, shutdown, lost lock).
   */
  | { kind: 'stopped'; reason: 'fenced' | 'aborted' };

const FENCED: TurnRunOutcome = { kind: 'stopped', reason: 'fenced' };
const ABORTED: TurnRunOutcome = { kind: 'stopped', reason: 'aborted' };

/**
 * Runs a turn from where PostgreSQL says it is: finishes the tool phase of its last committed
 * step if there is one, then one completion per step, each committed before it is announced,
 * until the model stops, tools must run, or `maxSteps` is reached. Every write of this run is
 * fenced by its attempt: once another worker has begun a later attempt, this one stops.
 */
export async function runTurn(deps: TurnRunnerDeps, job: TurnJob, jobSignal: AbortSignal): Promise<TurnRunOutcome> {
  const withHistory = deps.defaults.maxHistoryMessages === undefined;
  let begun = await deps.turns.beginAttempt(job.turnId, job.jobId, withHistory);
  if (!begun && job.conversationId) {
    // A job can come before its turn is committed (an enqueue of a process of an older version,
    // which enqueued while the admission committed): it waits for that commit and looks again.
    await deps.conversations.awaitRowLock(job.conversationId);
    begun = await deps.turns.beginAttempt(job.turnId, job.jobId, withHistory);
  }
  if (!begun) {
    if (await announceStoredEnd(deps, job.turnId)) deps.logger.info({ turnId: job.turnId }, 'announced the end of a turn whose worker stopped before announcing it');
    return { kind: 'skipped', reason: 'the turn is finished, not first in its conversation, or run by another job' };
  }
  const { turn } = begun;
  // Every line of this run carries the ids as fields: one query finds a turn across processes.
  const log = deps.logger.child({ conversationId: turn.conversationId, turnId: turn.id, attempt: turn.attempt });
  if (begun.restarted) log.info({ jobId: job.jobId, step: turn.step + 1 }, 'turn started');
  else log.debug({ jobId: job.jobId, step: turn.step }, 'turn continues after its tool calls');
  const outcome = await runAttempt(deps, job, begun, log, jobSignal);
  if (outcome.kind === 'stopped') {
    log.info({ jobId: job.jobId, reason: outcome.reason === 'aborted' ? String(jobSignal.reason) : outcome.reason }, 'turn attempt stopped');
  }
  return outcome;
}

/** What the steps of one attempt share: its events and signals, and the turn's settings. */
interface AttemptRun {
  deps: TurnRunnerDeps;
  job: TurnJob;
  begun: BegunAttempt;
  turn: Turn;
  attempt: number;
  log: Logger;
  events: TurnEvents;
  inflight: InflightState;
  /** Aborted when this attempt's writes are refused (a later attempt owns the turn). */
  fenced: AbortSignal;
  /** The job's signal or the fence, whichever aborts first. */
  signal: AbortSignal;
  /** The attempt's opening events: they go out with the first event after them, in one append. */
  opening: EventPayload[];
  /** The turn's options with its agent's under them, and its conversation's settings likewise (agent-settings.ts). */
  settings: TurnSettings;
  model: string;
  /** The model's targets; a model the catalogue does not know (the models file changed) fails the turn at its step. */
  route: ModelLookup;
  maxSteps: number;
  /** The conversation's settings under the turn's, sent with every step. */
  modelSettings: ModelSettings | undefined;
  /** The turn's structured output, else the conversation's. */
  responseFormat: ResponseFormat | undefined;
  offered: Set<string>;
  /** Tools whose calls wait for a person's approval in this turn (declared so, or asked by the turn or its conversation). */
  approvalRequired: (toolName: string) => boolean;
  /** The registry's offered tools, then the caller's own functions (TurnOptions.functions). */
  toolDefinitions: ToolDefinition[];
  /** Names of the caller's functions: their calls are the caller's to run. */
  callerFunctions: ReadonlySet<string>;
  /** A call id of the provider's that an earlier step of the turn used is replaced. */
  takenToolCallIds: Set<string>;
  /** The turn's usage so far, this attempt's committed steps included. */
  usage: Usage;
  readHistory: () => Promise<StoredMessage[]>;
  /** The conversation's compaction policy at work, null without one. */
  compaction: CompactionState | null;
  now: () => Date;
}

/** A step's streamed completion, with what its commit needs: the request that answered, its row to record with the step. */
interface StreamedStep {
  startedAt: Date;
  chatSpan: Span;
  call: ProviderCall;
}

/** A step's end that is not the run's: the turn goes on with its next step. */
const NEXT_STEP = 'next-step';
type StepEnd = TurnRunOutcome | typeof NEXT_STEP;

/**
 * The run of a begun attempt; its caller logs how it ended.
 * 1. Open the attempt: its events, its fence and the turn's settings.
 * 2. Resume: finish the tool phase of the last committed step, if there is one.
 * 3. Each step: stream it; on a provider failure retry or fail the turn; else commit it, then end
 *    the turn or start its tools (and go on when they are done at once).
 * 4. End the turn once `maxSteps` steps are committed.
 */
async function runAttempt(deps: TurnRunnerDeps, job: TurnJob, begun: BegunAttempt, log: Logger, jobSignal: AbortSignal): Promise<TurnRunOutcome> {
  const run = await openAttempt(deps, job, begun, log, jobSignal);
  if (run.turn.options.compact) return compactNow(run);
  if (run.turn.step > 0) {
    const resumed = await resumeLastStep(run);
    if (resumed !== NEXT_STEP) return resumed;
  }
  for (let step = run.turn.step + 1; step <= run.maxSteps; step++) {
    // Before each step: the one before it (and the tools it called) may have reached a budget,
    // and a turn admitted under a `pause` budget already reached waits before its first.
    const overBudget = await budgetReachedBeforeStep(run);
    if (overBudget) return onBudgetReached(run, step, overBudget);
    let streamed = await streamOneStep(run, step);
    // Too long for the provider though it counted under the trigger: compacted once, sent again.
    if (streamed.kind === 'failed' && streamed.code === 'context_length_exceeded' && run.compaction && !run.compaction.compacted.has(step) && !run.signal.aborted) {
      if (streamed.outputSent) run.events.emit({ type: 'attempt-discarded', attempt: run.attempt, step });
      run.log.info({ step }, 'the provider found the request too long; compacting and sending it again');
      streamed = await streamOneStep(run, step, { force: true });
    }
    if (streamed.kind !== 'ok') return onProviderFailure(run, step, streamed);
    const checked = run.responseFormat ? await checkStructuredAnswer(run, run.responseFormat, step, streamed) : { kind: 'answer' as const, routed: streamed };
    if (checked.kind === 'provider') return onProviderFailure(run, step, checked.routed);
    if (checked.kind === 'invalid') return failTurn(run, step, false, checked.error);
    const { routed } = checked;
    const ended = await completeStep(run, step, routed.result.output, routed, checked.output);
    if (ended !== NEXT_STEP) return ended;
  }
  return finish(run, 'max_steps');
}

/** The attempt's events and fence, its opening events, and the settings its steps share. */
async function openAttempt(deps: TurnRunnerDeps, job: TurnJob, begun: BegunAttempt, log: Logger, jobSignal: AbortSignal): Promise<AttemptRun> {
  const { turn } = begun;
  const settings = turnSettings(turn.options, begun.conversation, begun.agent);
  const { options, conversation } = settings;
  const attempt = turn.attempt;
  job.span.setAttributes({ [SWITCHYARD.turnAttempt]: attempt, [GEN_AI.conversationId]: turn.conversationId });
  const fenced = new AbortController();
  const events = new TurnEvents(deps.eventLog, turn.conversationId, turn.id, { attempt, onFenced: () => fenced.abort() });
  const opening: EventPayload[] = [];
  if (begun.restarted) {
    deps.metrics.turnsStarted.inc();
    // Only an earlier attempt leaves a marker.
    const marker = attempt > 1 ? await InflightState.read(deps.redis, deps.redisPrefix, turn) : null;
    const lost = marker && marker.attempt < attempt ? lostCallLine(marker, turn, (deps.now ?? (() => new Date()))()) : null;
    if (lost) await deps.providerCalls.insert(lost);
    opening.push(...attemptOpeningEvents({ attempt, committedStep: turn.step, previousStatus: begun.previous.status, marker }));
  }
  const model = options.model ?? conversation.model ?? deps.defaults.model;
  const route = deps.models.lookup(model);
  // A compaction turn compacts under the conversation's policy, or the default one, with its own instructions.
  const policy = options.compact ? { ...conversation.compaction, ...options.compact } : conversation.compaction;
  const compaction = await loadCompactionState(deps, turn.conversationId, policy, route.ok ? route.route : null, begun.summary, (message) =>
    log.warn({ model, reason: message }, "the conversation's compaction policy does not apply to the turn's model; it runs without"),
  );
  const offered = new Set(
    offeredToolNames({
      turnTools: options.tools,
      conversationTools: conversation.tools,
      userAllowedTools: begun.userAllowedTools,
      available: deps.tools.list().map((tool) => tool.name),
    }),
  );
  return {
    deps,
    job,
    begun,
    turn,
    attempt,
    log,
    events,
    inflight: new InflightState(events),
    fenced: fenced.signal,
    signal: AbortSignal.any([jobSignal, fenced.signal]),
    opening,
    settings,
    model,
    route,
    maxSteps: options.maxSteps ?? deps.defaults.maxSteps,
    modelSettings: conversation.modelSettings || options.modelSettings ? { ...conversation.modelSettings, ...options.modelSettings } : undefined,
    responseFormat: options.responseFormat ?? conversation.responseFormat ?? undefined,
    offered,
    approvalRequired: approvalRequiredIn(deps.tools, options.requireApproval, conversation.requireApproval),
    toolDefinitions: [...inOfferOrder(deps.tools.list().filter((tool) => offered.has(tool.name))), ...(turn.options.functions ?? [])],
    callerFunctions: new Set((turn.options.functions ?? []).map((fn) => fn.name)),
    takenToolCallIds: new Set(begun.toolCallIds),
    usage: turn.usage,
    readHistory: historyReader(deps, begun, compaction),
    compaction,
    now: deps.now ?? (() => new Date()),
  };
}

/**
 * Reads each step's history: the conversation's, or its window; the first step's may have come
 * with the attempt. Under a compaction policy, the path from the latest summary on (the one the
 * attempt began with, or one a step of it made since): what the summary covers is never read.
 */
function historyReader(deps: TurnRunnerDeps, begun: BegunAttempt, compaction: CompactionState | null): () => Promise<StoredMessage[]> {
  const { turn } = begun;
  // A compaction policy replaces the window: the path, which the summary then stands in for.
  const maxHistory = compaction ? undefined : (turn.options.maxHistoryMessages ?? deps.defaults.maxHistoryMessages);
  // The attempt's history starts after the latest summary: a turn that does not compact (no
  // policy, or one its model cannot have) reads the path whole instead.
  let begunHistory = compaction || !begun.summary ? begun.history : undefined;
  return async () => {
    const given = begunHistory;
    begunHistory = undefined;
    if (given) return given;
    if (compaction?.summary) return deps.messages.list(turn.conversationId, { afterRowId: compaction.summary.upToRowId });
    if (maxHistory === undefined) return deps.messages.list(turn.conversationId);
    return startAtUserMessage(await deps.messages.listRecent(turn.conversationId, maxHistory, turn.id));
  };
}

/**
 * Past the first step: the tool phase of the last committed step, finished or taken over. The
 * turn goes on when its calls are all settled; it ends here when that step was its last.
 */
async function resumeLastStep(run: AttemptRun): Promise<StepEnd> {
  const { deps, job, turn, attempt, events } = run;
  events.emit(...run.opening.splice(0));
  const lastStep = turn.steps[turn.steps.length - 1];
  const phase = await resumeToolPhase(deps, {
    turnId: turn.id,
    attempt,
    step: turn.step,
    events,
    isContinuation: job.isContinuation,
    tookOverToolPhase: !job.isContinuation && run.begun.previous.status === 'waiting_tools',
    // The step's span is gone with the run that made it: tool jobs made again hang under this job's.
    trace: { turn: turn.traceparent, tools: traceparentOf(job.span) },
    stepState: run.begun.lastStep,
  });
  if (phase === 'fenced') return done(events, FENCED);
  if (phase === 'wait') return done(events);
  // The worker died after committing a final step but before ending the turn.
  if (phase === 'no_tools') return finish(run, lastStep?.finishReason ?? 'stop');
  // The step also called the caller's functions: the caller answers them in its next turn.
  if (lastStep?.callerToolCalls) return finish(run, 'tool_calls');
  if (turn.step >= run.maxSteps) return finish(run, 'max_steps');
  return NEXT_STEP;
}

/** What the structured-output check made of a step's answer. */
type StructuredCheck =
  /** Not a final answer (it calls tools), or one that validated (`output`, the parsed value). */
  | { kind: 'answer'; routed: Extract<RoutedStep, { kind: 'ok' }>; output?: { value: unknown } }
  /** A repair request no target completed. */
  | { kind: 'provider'; routed: Exclude<RoutedStep, { kind: 'ok' }> }
  /** No answer validated: the turn fails `invalid_output`. */
  | { kind: 'invalid'; error: { code: 'invalid_output'; message: string; details: { problems: string[] } } };

/**
 * A step's final answer against the turn's structured output (docs/API.md, "Structured output"):
 * an answer that ends with `stop` and does not parse or validate is withdrawn as a discarded
 * attempt is (`attempt-discarded`, its call recorded `discarded`, its text in no message) and
 * asked for again with what is wrong, in a `repair` call, up to `repairAttempts` times. The
 * count is this attempt's: a worker that dies between repairs leaves the step to the next
 * attempt, which starts its repairs again.
 */
async function checkStructuredAnswer(run: AttemptRun, format: ResponseFormat, step: number, first: Extract<RoutedStep, { kind: 'ok' }>): Promise<StructuredCheck> {
  const problems: string[] = [];
  let routed = first;
  for (;;) {
    const { output } = routed.result;
    if (output.toolCalls.length > 0 || output.finishReason !== 'stop') return { kind: 'answer', routed };
    const checked = checkOutput(format, output.text);
    if (checked.ok) return { kind: 'answer', routed, output: { value: checked.value } };
    problems.push(checked.problem);
    run.events.emit({ type: 'attempt-discarded', attempt: run.attempt, step });
    run.inflight.clear();
    await run.deps.providerCalls.insert({ ...routed.call, outcome: 'discarded' });
    run.usage = addUsage(run.usage, output.usage);
    run.log.info({ step, problem: checked.problem, repairsLeft: (format.repairAttempts ?? DEFAULT_REPAIR_ATTEMPTS) - problems.length + 1 }, 'structured answer rejected');
    if (problems.length > (format.repairAttempts ?? DEFAULT_REPAIR_ATTEMPTS)) {
      const message = problems.length === 1 ? problems[0]! : `no answer validated in ${problems.length} tries; the last: ${problems.at(-1)}`;
      return { kind: 'invalid', error: { code: 'invalid_output', message, details: { problems } } };
    }
    const repaired = await streamOneStep(run, step, { repair: repairMessages(output.text, problems) });
    if (repaired.kind !== 'ok') return { kind: 'provider', routed: repaired };
    routed = repaired;
  }
}

/**
 * One completion, routed to the model's targets and relayed as events; the in-flight marker
 * tracks its output. Under a compaction policy its request may compact first (`force`: whatever
 * it counts), announced before its `step-start`. `repair`: messages after the history that ask
 * again for a structured answer (a `repair` call).
 */
async function streamOneStep(run: AttemptRun, step: number, { force = false, repair }: { force?: boolean; repair?: ChatMessage[] } = {}): Promise<RoutedStep> {
  const { deps, turn, attempt, events, toolDefinitions } = run;
  const { options, conversation } = run.settings;
  const system = options.instructions ?? conversation.system;
  let messages: ChatMessage[];
  let counted: number | undefined;
  if (run.compaction && run.route.ok) {
    events.emit(...run.opening.splice(0));
    const request = await compactedRequest(deps, {
      turn,
      attempt,
      step,
      system,
      path: await run.readHistory(),
      tools: toolDefinitions,
      state: run.compaction,
      model: run.model,
      events,
      inflight: run.inflight,
      signal: run.signal,
      now: run.now,
      force,
    });
    events.emit({ type: 'step-start', step });
    if (request.kind === 'fenced' || request.kind === 'aborted') return { kind: 'aborted', outputSent: false };
    if (request.kind === 'failed') return { kind: 'failed', code: request.code, message: request.message, outputSent: false };
    if (request.kind === 'nothing-to-compact') {
      const message = `the request counts ${request.tokens} tokens and nothing before its last user message is left to compact`;
      return { kind: 'failed', code: 'context_length_exceeded', message, outputSent: false };
    }
    if (request.kind === 'provider-failed') {
      const error = new ProviderError(request.error.kind, `the compaction request failed: ${request.error.message}`, request.error.status, request.error.retryAfterMs);
      return error.retryable ? { kind: 'wait', error, waitMs: 0, outputSent: false } : { kind: 'failed', code: 'provider_error', message: error.message, outputSent: false };
    }
    ({ messages, counted } = request);
  } else {
    events.emit(...run.opening.splice(0), { type: 'step-start', step });
    if (!run.route.ok) return { kind: 'failed', code: 'provider_error', message: run.route.message, outputSent: false };
    messages = buildMessages(system, await run.readHistory());
  }
  const routed = await streamRoutedStep(deps, {
    turn,
    attempt,
    step,
    route: run.route.route,
    ...(counted !== undefined ? { countedPromptTokens: counted } : {}),
    request: {
      messages: [...messages, ...(repair ?? [])],
      ...(toolDefinitions.length > 0 ? { tools: toolDefinitions } : {}),
      ...(toolDefinitions.length > 0 && options.toolChoice ? { toolChoice: options.toolChoice } : {}),
      ...(run.modelSettings ? { settings: run.modelSettings } : {}),
      ...(run.responseFormat ? { responseFormat: providerResponseFormat(run.responseFormat) } : {}),
    },
    ...(repair ? { callKind: 'repair' as const } : {}),
    events,
    inflight: run.inflight,
    signal: run.signal,
    span: run.job.span,
    log: run.log,
    generateToolCallId: (index) => `call_${turn.id.slice(-8)}_${step}_${index}`,
    takenToolCallIds: run.takenToolCallIds,
    now: run.now,
  });
  // The next step's count is corrected by what the provider made of this one.
  if (routed.kind === 'ok' && run.compaction && counted !== undefined) run.compaction.correction = countCorrection({ reported: routed.result.output.usage.promptTokens, counted });
  return routed;
}

/**
 * A compaction turn (`POST /v1/conversations/:id/compact`): one compaction, forced, before the
 * step that would come next, and no step. It ends `compacted`, or `nothing_to_compact` when all
 * there is belongs to the kept tail; its failures are a step's.
 */
async function compactNow(run: AttemptRun): Promise<TurnRunOutcome> {
  const { deps, turn, attempt, events } = run;
  events.emit(...run.opening.splice(0));
  const state = run.compaction;
  if (!state || !run.route.ok)
    return failTurn(run, 1, false, { code: 'provider_error', message: run.route.ok ? 'the conversation cannot be compacted on its model' : run.route.message });
  const request = await compactedRequest(deps, {
    turn,
    attempt,
    step: turn.step + 1,
    system: run.settings.options.instructions ?? run.settings.conversation.system,
    path: await run.readHistory(),
    tools: [],
    state,
    model: run.model,
    events,
    inflight: run.inflight,
    signal: run.signal,
    now: run.now,
    force: true,
  });
  switch (request.kind) {
    case 'ok':
      return finish(run, 'compacted');
    case 'nothing-to-compact':
      return finish(run, 'nothing_to_compact');
    case 'failed':
      return failTurn(run, 1, false, { code: request.code, message: request.message });
    case 'provider-failed': {
      const error = new ProviderError(request.error.kind, `the compaction request failed: ${request.error.message}`, request.error.status, request.error.retryAfterMs);
      return onProviderFailure(
        run,
        1,
        error.retryable ? { kind: 'wait', error, waitMs: 0, outputSent: false } : { kind: 'failed', code: 'provider_error', message: error.message, outputSent: false },
      );
    }
    default:
      return done(events, request.kind === 'fenced' ? FENCED : ABORTED);
  }
}

/**
 * A step no target completed: the run stops if it was aborted; a refusal (or a request too long
 * for every target) fails the turn; when every target cools down the retry policy decides
 * whether the turn fails or waits for the soonest to come back (the job goes back to the queue,
 * delayed), counted as a provider retry.
 */
async function onProviderFailure(run: AttemptRun, step: number, routed: Exclude<RoutedStep, { kind: 'ok' }>): Promise<TurnRunOutcome> {
  const { deps, turn, attempt, events, log } = run;
  if (run.signal.aborted || routed.kind === 'aborted') return done(events, run.fenced.aborted ? FENCED : ABORTED);
  if (routed.kind === 'failed') return failTurn(run, step, routed.outputSent, { code: routed.code, message: routed.message });
  const decision = decideProviderRetry(routed.error, turn.providerRetries, deps.retryPolicy);
  if (decision.kind === 'abandon') return done(events, ABORTED);
  if (decision.kind === 'fail') return failTurn(run, step, routed.outputSent, { code: decision.code, message: decision.message });
  // The soonest target back, and no sooner than the backoff: a target that failed without a
  // cooldown (Redis unreadable) is not asked again at once.
  const delayMs = Math.max(decision.delayMs, routed.waitMs);
  deps.metrics.providerRetries.inc({ kind: routed.error.kind });
  log.warn({ step, providerError: routed.error.kind, reason: routed.error.message, retryInMs: delayMs }, 'provider failed; the turn retries');
  // Committed before it is announced: a client that reads the turn on `provider-retry` sees it queued.
  const error = { code: routed.error.kind, message: routed.error.message };
  if (!(await deps.turns.scheduleRetry(turn.id, attempt, error, delayMs))) return done(events, FENCED);
  if (routed.outputSent) events.emit({ type: 'attempt-discarded', attempt, step });
  // Cleared with the announcement: a worker dying before it leaves the marker to the next attempt.
  run.inflight.clear();
  events.emit({ type: 'provider-retry', attempt, retryInMs: delayMs, reason: routed.error.message });
  return done(events, { kind: 'delay', delayMs });
}

/** A budget of the turn's user (or key) reached, with its period. */
interface ReachedBudget {
  period: string;
  reached: BudgetExceeded;
}

/**
 * Before a step: whether a budget stops the turn here, its committed steps kept (docs/API.md,
 * "Usage and budgets"). The steps of the user's other turns running meanwhile finish theirs:
 * that is the bound by which a budget is overshot.
 *
 * The first step reads the budgets again although admission has just read them: admission's
 * answer does not carry over. Admission looks only at `reject` budgets (a `pause` one reached
 * admits the turn, which must then wait here), and a turn may wait in the queue (behind its
 * conversation's active turn, a full worker pool, a provider retry) across a period's reset, a
 * budget raised, lowered or put, and other turns' spending; its job also runs again after a
 * crash or a lost lock. One query per step is the price of an answer true when the step starts.
 */
async function budgetReachedBeforeStep(run: AttemptRun): Promise<ReachedBudget | null> {
  const now = run.now();
  const found = firstReached(await run.deps.budgets.standings(budgetSubjects(run.turn.userId, run.turn.keyId), periodStarts(now)), now);
  if (found) await run.deps.budgets.noticeExceeded(found.standing, found.startsAt, run.turn.userId, found.reached);
  return found ? { period: found.standing.scope === 'key' ? `key's ${found.standing.period}` : found.standing.period, reached: found.reached } : null;
}

/**
 * `reject` fails the turn; `pause` parks it `waiting_budget`: queued again, its job delayed
 * until the period resets (or the next re-check), holding no worker; a raised budget wakes it
 * sooner (usage/budget-wake-up.ts). It starts a new attempt from its last committed step.
 */
async function onBudgetReached(run: AttemptRun, step: number, { period, reached }: ReachedBudget): Promise<TurnRunOutcome> {
  const { deps, turn, attempt, events, log } = run;
  if (reached.onExceeded === 'reject') {
    const error = { code: 'budget_exceeded', message: `the ${period} budget is reached`, details: reached };
    return failTurn(run, step, false, error);
  }
  const wake = budgetWakeUp(reached.resetsAt ? new Date(reached.resetsAt) : null, run.now());
  if (!(await deps.turns.parkForBudget(turn.id, attempt, wake.wakeAt))) return done(events, FENCED);
  log.info({ step, limit: reached.limit, spent: reached.spent, wakeInMs: wake.delayMs }, 'turn waits for its budget');
  events.emit(...run.opening.splice(0));
  return done(events, { kind: 'delay', delayMs: wake.delayMs });
}

/** The turn fails at this step; what a client showed of the step is dropped first. */
async function failTurn(run: AttemptRun, step: number, outputSent: boolean, error: { code: string; message: string }): Promise<TurnRunOutcome> {
  if (outputSent) run.events.emit({ type: 'attempt-discarded', attempt: run.attempt, step });
  logTurnEnd(run.log, await endTurn(run.deps, run.turn, run.attempt, { status: 'failed', error }, run.events));
  return { kind: 'done' };
}

/**
 * A completed step: its tool calls are checked and announced, then the step is committed with
 * the turn's end when the model stopped calling tools (or `maxSteps` is reached), else before
 * its tool phase starts.
 */
async function completeStep(run: AttemptRun, step: number, output: StepOutput, streamed: StreamedStep, structured?: { value: unknown }): Promise<StepEnd> {
  const { deps, turn, events } = run;
  deps.metrics.modelTokens.inc({ kind: 'prompt' }, output.usage.promptTokens);
  deps.metrics.modelTokens.inc({ kind: 'completion' }, output.usage.completionTokens);
  // The caller's own functions are not run here: their calls end the turn, for the caller to answer.
  const callerCalls = output.toolCalls.filter((call) => run.callerFunctions.has(call.function.name));
  const calls = prepareToolCalls({
    calls: callerCalls.length === 0 ? output.toolCalls : output.toolCalls.filter((call) => !run.callerFunctions.has(call.function.name)),
    offered: run.offered,
    registry: deps.tools,
    maxCalls: deps.limits.maxToolCallsPerStep,
    turnId: turn.id,
    conversationId: turn.conversationId,
    step,
    approval: {
      required: run.approvalRequired,
      expiresAt: (toolName) => new Date(run.now().getTime() + (deps.tools.get(toolName)?.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS)).toISOString(),
      newId: () => `appr_${randomUUID()}`,
    },
  });
  for (const call of callerCalls) events.emit({ type: 'tool-call-end', toolCallId: call.id, args: parsedOrNull(call.function.arguments) });
  for (const call of calls) {
    events.emit(
      'error' in call
        ? { type: 'tool-call-end', toolCallId: call.toolCallId, args: null, error: call.error }
        : { type: 'tool-call-end', toolCallId: call.toolCallId, args: call.args },
    );
  }
  // PostgreSQL keeps the latest seq clients may have seen, so that a Redis that loses its data
  // mid-turn restarts the numbering above it.
  // The request's row goes in beside the flush: a row of a request whose step a crash then
  // loses is true all the same (the provider answered it), and costs the step no round trip.
  const [seenSeq] = await Promise.all([
    events.flush().catch((error: unknown) => {
      if (AttemptFencedError.isInstance(error)) return null;
      throw error;
    }),
    deps.providerCalls.insert(streamed.call),
  ]);
  if (seenSeq === null) return done(events, FENCED);
  const record: StepRecord = {
    step,
    finishReason: output.finishReason,
    ...(callerCalls.length > 0 ? { callerToolCalls: callerCalls.length } : {}),
    usage: output.usage,
    startedAt: streamed.startedAt.toISOString(),
    finishedAt: run.now().toISOString(),
  };
  const completed: CompletedStep = { record, output, calls, ...(structured ? { structured } : {}) };
  run.usage = addUsage(run.usage, output.usage);
  const finishReason = calls.length === 0 ? (callerCalls.length > 0 ? 'tool_calls' : output.finishReason) : step >= run.maxSteps ? 'max_steps' : null;
  if (finishReason !== null) return endTurnWithStep(run, completed, finishReason);
  return commitAndStartTools(run, completed, seenSeq, streamed.chatSpan);
}

/** A completed step and the tool calls it made, as they are committed. */
interface CompletedStep {
  record: StepRecord;
  output: StepOutput;
  calls: NewToolCall[];
  /** The validated structured answer, stored with the turn's end. */
  structured?: { value: unknown };
}

/** The turn's last step, committed with its end (and announced with it). */
async function endTurnWithStep(run: AttemptRun, completed: CompletedStep, finishReason: string): Promise<TurnRunOutcome> {
  const { deps, turn, attempt, events, log } = run;
  const { record, output, calls } = completed;
  const ended = await endTurn(deps, turn, attempt, { status: 'completed', finishReason, usage: run.usage }, events, {
    write: async (tx) => {
      if (!(await writeStep(deps, turn, attempt, completed, null, tx))) return false;
      if (completed.structured) await deps.turns.setOutput(turn.id, completed.structured.value, tx);
      return true;
    },
    finishEvent: stepFinishEvent(record),
    // The one-round-trip end writes no output: a structured answer ends in the transaction.
    ...(output.toolCalls.length === 0 && calls.length === 0 && !completed.structured
      ? {
          completeWithEnd: (endEvents: EventPayload[], seenSeq: number) =>
            deps.turns.completeWithFinalStep(turn.id, attempt, { record, content: output.text || null }, { finishReason, endEvents, seenSeq }),
        }
      : {}),
  });
  if (!ended) return done(events, FENCED);
  log.info(stepLine(completed), 'step finished');
  logTurnEnd(log, ended);
  return { kind: 'done' };
}

/**
 * A step that called tools: committed, announced, then its tool phase starts. Only a phase that
 * is over at once (no call goes to a tool job or waits for a client) lets the turn go on here.
 */
async function commitAndStartTools(run: AttemptRun, completed: CompletedStep, seenSeq: number, chatSpan: Span): Promise<StepEnd> {
  const { deps, turn, attempt, events } = run;
  const { step } = completed.record;
  if (!(await deps.db.transaction((tx) => writeStep(deps, turn, attempt, completed, { seenSeq }, tx)))) return done(events, FENCED);
  for (const call of completed.calls) run.takenToolCallIds.add(call.toolCallId);
  run.log.info(stepLine(completed), 'step finished');
  run.inflight.clear();
  events.emit(stepFinishEvent(completed.record));
  const trace = { turn: turn.traceparent, tools: traceparentOf(chatSpan) };
  const job = run.job.lockKey ? { signal: run.signal, lockKey: run.job.lockKey } : undefined;
  const phase = await startToolPhase(deps, { turnId: turn.id, attempt, step, events, trace, ...(job ? { job } : {}) }, completed.calls);
  if (phase === 'fenced') return done(events, FENCED);
  if (phase === 'wait') return done(events);
  if (phase === 'settled_here') {
    // The calls ran here: this attempt completes the phase itself unless another job took the
    // turn meanwhile (this one's lock lost), which then goes on with it.
    const resumed = await deps.turns.resumeAfterLocalTools(turn.id, attempt, run.job.jobId, step);
    if (!resumed) return done(events);
    // As a continuation job logs it ('turn continues after its tool calls'), for this path.
    run.log.debug({ jobId: run.job.jobId, step }, 'turn continues after its tool calls, run in local tool slots');
    announcePhaseCounts(events, resumed);
    if (completed.record.callerToolCalls) return finish(run, 'tool_calls');
    return NEXT_STEP;
  }
  const settled = await resumeToolPhase(deps, { turnId: turn.id, attempt, step, events, isContinuation: true });
  if (settled !== 'proceed') return done(events, settled === 'fenced' ? FENCED : { kind: 'done' });
  if (completed.record.callerToolCalls) return finish(run, 'tool_calls');
  return NEXT_STEP;
}

function stepFinishEvent(record: StepRecord) {
  return { type: 'step-finish', step: record.step, finishReason: record.finishReason, usage: record.usage } as const;
}

function stepLine({ record, calls }: CompletedStep) {
  return { step: record.step, finishReason: record.finishReason, toolCalls: calls.length, usage: record.usage };
}

/** Waits for this run's events to be logged; a stale worker's refused events end its run quietly. */
async function done(events: TurnEvents, outcome: TurnRunOutcome = { kind: 'done' }): Promise<TurnRunOutcome> {
  try {
    await events.flush();
  } catch (error) {
    if (AttemptFencedError.isInstance(error)) return FENCED;
    throw error;
  }
  return outcome;
}

/** Completes the turn with no step to write (its last one is committed). */
async function finish(run: AttemptRun, finishReason: string): Promise<TurnRunOutcome> {
  logTurnEnd(run.log, await endTurn(run.deps, run.turn, run.attempt, { status: 'completed', finishReason, usage: run.usage }, run.events));
  return { kind: 'done' };
}

/** The turn's one `turn ended` line, once its end is committed (null: another run ended it). */
export function logTurnEnd(log: Logger, ended: Turn | null): void {
  if (!ended) return;
  log.info({ status: ended.status, finishReason: ended.finishReason, error: ended.error?.code, steps: ended.step, usage: ended.usage }, 'turn ended');
}

/**
 * The step's assistant message, its tool calls and the turn's step record, in the caller's
 * transaction. `continues`: the turn goes on to its tool phase, so the seq floor is raised
 * here and the turn parked for its tool jobs; null when the turn's end writes the step (the
 * end raises the floor itself).
 */
async function writeStep(
  deps: TurnRunnerDeps,
  turn: Turn,
  attempt: number,
  { record, output, calls }: CompletedStep,
  continues: { seenSeq: number } | null,
  tx: Queryable,
): Promise<boolean> {
  if (!(await deps.turns.commitStep(turn.id, attempt, record, continues !== null && goesToToolJobs(calls), tx))) return false;
  await deps.messages.insertAssistantMessage(
    { conversationId: turn.conversationId, turnId: turn.id, step: record.step, content: output.text || null, toolCalls: output.toolCalls },
    tx,
  );
  await deps.toolCalls.insertMany(calls, tx);
  await deps.toolApprovals.insertMany(approvalsOf(turn, calls), tx);
  if (continues) await deps.conversations.raiseLastSeq(turn.conversationId, continues.seenSeq, tx);
  return true;
}

/** A caller function's arguments as the model sent them, parsed when they are JSON (the caller checks them). */
function parsedOrNull(argumentsText: string): unknown {
  try {
    return JSON.parse(argumentsText || '{}');
  } catch {
    return null;
  }
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

/** The approvals a step's gated calls ask for, stored with the step. */
function approvalsOf(turn: Turn, calls: NewToolCall[]): NewToolApproval[] {
  return calls.flatMap((call) =>
    call.status === 'awaiting_approval'
      ? [{ ...call.approval, turnId: turn.id, toolCallId: call.toolCallId, conversationId: turn.conversationId, userId: turn.userId, toolName: call.name, args: call.args }]
      : [],
  );
}

function approvalRequiredIn(tools: Pick<ToolRegistry, 'get'>, ...lists: (string[] | null | undefined)[]): (toolName: string) => boolean {
  const named = new Set(lists.flatMap((list) => list ?? []));
  return (toolName) => named.has(toolName) || tools.get(toolName)?.needsApproval === true;
}
