import { randomUUID } from 'node:crypto';
import type { Span, Tracer } from '@opentelemetry/api';
import type { RedisClient } from '../redis/redis-connection';
import type { Logger } from 'pino';
import type { EventPayload, Usage } from '../events/event';
import type { Metrics } from '../metrics/metrics';
import type { ToolDefinition } from '../providers/model-provider';
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
import { providerResponseFormat } from '../providers/response-format';
import { turnSettings, type TurnSettings } from './agent-settings';
import { buildMessages } from './build-messages';
import { startAtUserMessage } from './history-window';
import { InflightState } from '../event-log/inflight-state';
import { lostCallLine } from '../usage/lost-call';
import { budgetReached, periodStarts } from '../usage/budget-decision';
import { periodAt } from '../usage/budget-period';
import type { BudgetsRepository } from '../usage/store/budgets-repository';
import { inOfferOrder, offeredToolNames } from '../tool-calls/offered-tools';
import { prepareToolCalls } from '../tool-calls/prepare-tool-calls';
import { decideProviderRetry, type RetryPolicy } from './provider-retry-policy';
import type { StepOutput } from './stream-step';
import { goesToToolJobs, resumeToolPhase, startToolPhase, type ToolPhaseDeps } from '../tool-calls/tool-phase';
import { announceStoredEnd, endTurn, type TurnEndingDeps } from './turn-ending';
import { TurnEvents } from '../event-log/turn-events';
import { DEFAULT_APPROVAL_TIMEOUT_MS, type ToolRegistry } from '../tools/tool';
import { GEN_AI, SWITCHYARD } from '../tracing/span-attributes';
import { traceparentOf } from '../tracing/trace-context';

export interface TurnRunnerDeps extends TurnEndingDeps, ToolPhaseDeps, Omit<RoutingDeps, 'metrics' | 'tracer'> {
  eventLog: TurnEndingDeps['eventLog'];
  conversations: ConversationsRepository;
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
  /** A `reject` budget reached by a step fails its turn after it. */
  budgets: Pick<BudgetsRepository, 'standingOfUser'>;
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
  if (run.turn.step > 0) {
    const resumed = await resumeLastStep(run);
    if (resumed !== NEXT_STEP) return resumed;
    // The step before the tools it called may have reached a budget: it acts once they are done.
    const overBudget = await budgetReachedAfterStep(run);
    if (overBudget) return failTurn(run, run.turn.step, false, overBudget);
  }
  for (let step = run.turn.step + 1; step <= run.maxSteps; step++) {
    const routed = await streamOneStep(run, step);
    if (routed.kind !== 'ok') return onProviderFailure(run, step, routed);
    const ended = await completeStep(run, step, routed.result.output, routed);
    if (ended !== NEXT_STEP) return ended;
    const overBudget = await budgetReachedAfterStep(run);
    if (overBudget) return failTurn(run, step, false, overBudget);
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
    route: deps.models.lookup(model),
    maxSteps: options.maxSteps ?? deps.defaults.maxSteps,
    offered,
    approvalRequired: approvalRequiredIn(deps.tools, options.requireApproval, conversation.requireApproval),
    toolDefinitions: [...inOfferOrder(deps.tools.list().filter((tool) => offered.has(tool.name))), ...(turn.options.functions ?? [])],
    callerFunctions: new Set((turn.options.functions ?? []).map((fn) => fn.name)),
    takenToolCallIds: new Set(begun.toolCallIds),
    usage: turn.usage,
    readHistory: historyReader(deps, begun),
    now: deps.now ?? (() => new Date()),
  };
}

/** Reads each step's history: the conversation's, or its window; the first step's may have come with the attempt. */
function historyReader(deps: TurnRunnerDeps, begun: BegunAttempt): () => Promise<StoredMessage[]> {
  const { turn } = begun;
  const maxHistory = turn.options.maxHistoryMessages ?? deps.defaults.maxHistoryMessages;
  let begunHistory = begun.history;
  return async () => {
    const given = begunHistory;
    begunHistory = undefined;
    if (given) return given;
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

/** One completion, routed to the model's targets and relayed as events; the in-flight marker tracks its output. */
async function streamOneStep(run: AttemptRun, step: number): Promise<RoutedStep> {
  const { deps, turn, attempt, events, toolDefinitions } = run;
  const { options, conversation } = run.settings;
  events.emit(...run.opening.splice(0), { type: 'step-start', step });
  if (!run.route.ok) return { kind: 'failed', code: 'provider_error', message: run.route.message, outputSent: false };
  const history = await run.readHistory();
  return streamRoutedStep(deps, {
    turn,
    attempt,
    step,
    route: run.route.route,
    request: {
      messages: buildMessages(options.instructions ?? conversation.system, history),
      ...(toolDefinitions.length > 0 ? { tools: toolDefinitions } : {}),
      ...(toolDefinitions.length > 0 && options.toolChoice ? { toolChoice: options.toolChoice } : {}),
      ...(options.modelSettings ? { settings: options.modelSettings } : {}),
      ...(options.responseFormat ? { responseFormat: providerResponseFormat(options.responseFormat) } : {}),
    },
    events,
    inflight: run.inflight,
    signal: run.signal,
    span: run.job.span,
    log: run.log,
    generateToolCallId: (index) => `call_${turn.id.slice(-8)}_${step}_${index}`,
    takenToolCallIds: run.takenToolCallIds,
    now: run.now,
  });
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

/**
 * After a committed step that goes on: a `reject` budget the step crossed fails the turn here,
 * its steps kept (docs/API.md, "Usage and budgets"). The steps of the user's other turns running
 * meanwhile finish theirs: that is the bound by which a budget is overshot.
 */
async function budgetReachedAfterStep(run: AttemptRun): Promise<{ code: string; message: string; details: unknown } | null> {
  const now = run.now();
  const standing = await run.deps.budgets.standingOfUser(run.turn.userId, periodStarts(now));
  if (!standing || standing.onExceeded !== 'reject') return null;
  const reached = budgetReached(standing, standing, periodAt(standing.period, now).resetsAt);
  return reached ? { code: 'budget_exceeded', message: `the ${standing.period} budget is reached`, details: reached } : null;
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
async function completeStep(run: AttemptRun, step: number, output: StepOutput, streamed: StreamedStep): Promise<StepEnd> {
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
  const completed: CompletedStep = { record, output, calls };
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
}

/** The turn's last step, committed with its end (and announced with it). */
async function endTurnWithStep(run: AttemptRun, completed: CompletedStep, finishReason: string): Promise<TurnRunOutcome> {
  const { deps, turn, attempt, events, log } = run;
  const { record, output, calls } = completed;
  const ended = await endTurn(deps, turn, attempt, { status: 'completed', finishReason, usage: run.usage }, events, {
    write: (tx) => writeStep(deps, turn, attempt, completed, null, tx),
    finishEvent: stepFinishEvent(record),
    ...(output.toolCalls.length === 0 && calls.length === 0
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
  const phase = await startToolPhase(deps, { turnId: turn.id, attempt, step, events, trace }, completed.calls);
  if (phase === 'fenced') return done(events, FENCED);
  if (phase === 'wait') return done(events);
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
