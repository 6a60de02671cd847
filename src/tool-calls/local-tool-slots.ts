import { setTimeout as sleep } from 'node:timers/promises';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { ToolCallRecord } from '../store/tool-calls-repository';
import { failSpan } from '../tracing/fail-span';
import { GEN_AI, spanNames, SWITCHYARD } from '../tracing/span-attributes';
import { contextFrom } from '../tracing/trace-context';
import type { ToolExecutionKind } from './tool-execution-kind';
import { runExecution, type ToolJobDeps } from './tool-job-runner';
import { runningTool, turnCallExecution } from './turn-call-execution';
import { TurnEvents } from '../event-log/turn-events';
import { toolJobId } from '../queue/tool-queue';
import { toolResultEvent } from './tool-messages';

export interface LocalToolSlotsDeps extends ToolJobDeps {
  tracer: Tracer;
  logger: Logger;
}

export interface LocalToolSlotsSettings {
  /** Calls this process runs at once outside its tool worker (its tool worker's concurrency). */
  slots: number;
}

const keyOf = (turnId: string, toolCallId: string) => `${turnId}\n${toolCallId}`;
/**
 * How long a finished local run is remembered for its queued job, which BullMQ may hand this
 * process only after the run is over; a job taken later (or elsewhere) reads the call instead.
 */
const REMEMBERED_MS = 30_000;

/**
 * The process that committed a step runs the step's server calls at once, in slots of its own,
 * instead of fanning them out as jobs for its tool worker to take one by one. The turn job that
 * runs the step holds them durably: a call is claimed in PostgreSQL (counted as an attempt and
 * held by that job's BullMQ lock, which is renewed in Redis while the process lives), and the
 * job stays active until the phase is over. A process that dies stops renewing: the lock
 * expires, BullMQ hands the turn job to another worker, whose take finds the step's calls
 * unsettled and fans them out (tool-phase.ts, resumeToolPhase); their jobs take the held calls
 * over, the attempt counted, exactly as when a tool worker dies mid-call. A run that hands its
 * calls back alive (cancel, shutdown, a lost lock) leaves the fan-out to its caller. A call's job
 * taken in this process while its local run lives (a fan-out after a hand-back, or a flow made
 * again) waits for that run and is done with it.
 */
export class LocalToolSlots {
  /** Each call run here: resolves true once its outcome is stored and announced here. */
  private readonly runs = new Map<string, Promise<boolean>>();
  private free: number;

  constructor(
    private readonly deps: LocalToolSlotsDeps,
    settings: LocalToolSlotsSettings,
  ) {
    this.free = settings.slots;
  }

  /**
   * The local run of the call, under way here or just over; true when it stored and announced
   * the outcome. Told once: the call's one queued job asks.
   */
  runOf(turnId: string, toolCallId: string): Promise<boolean> | undefined {
    const key = keyOf(turnId, toolCallId);
    const run = this.runs.get(key);
    this.runs.delete(key);
    return run;
  }

  /**
   * Runs a step's calls here, all at once or (too few free slots) not at all: claims them in one
   * statement, then runs each with the tool job's lifecycle (timeouts, retries with their
   * delays, outcome stored before it is announced). True when every call's outcome was stored
   * and announced here; false leaves what is left to the calls' jobs, which the caller adds.
   */
  async runStep(input: { turnId: string; toolCallIds: string[]; holder: string; signal: AbortSignal; traceparent?: string }): Promise<boolean> {
    const { turnId, toolCallIds, holder } = input;
    if (toolCallIds.length === 0 || toolCallIds.length > this.free) return false;
    this.free -= toolCallIds.length;
    const finished = new Map<string, (settledHere: boolean) => void>();
    // Registered before the claim is sent: a queued job taken here meanwhile waits for this run.
    for (const id of toolCallIds) this.runs.set(keyOf(turnId, id), new Promise<boolean>((resolve) => finished.set(id, resolve)));
    const outcomes = new Map<string, boolean>();
    try {
      let claimed: ToolCallRecord[] = [];
      try {
        claimed = await this.deps.toolCalls.claimForSlots(turnId, toolCallIds, holder);
      } catch (error) {
        // Nothing claimed: the queued jobs run the calls.
        this.deps.logger.warn({ err: error, turnId }, 'could not claim tool calls for local slots');
      }
      // One appender for the step's results: those stored by one statement go in one append.
      const results = claimed[0] ? new TurnEvents(this.deps.eventLog, claimed[0].conversationId, turnId) : null;
      // runCall never throws: a run that fails hands its call back to the queued job.
      await Promise.all(
        claimed.map(async (call) => {
          const settledHere = await this.runCall(call, input, results!);
          outcomes.set(call.toolCallId, settledHere);
          finished.get(call.toolCallId)!(settledHere);
        }),
      );
      return claimed.length === toolCallIds.length && [...outcomes.values()].every(Boolean);
    } finally {
      for (const id of toolCallIds) finished.get(id)!(outcomes.get(id) ?? false);
      const forget = setTimeout(() => {
        for (const id of toolCallIds) this.runs.delete(keyOf(turnId, id));
      }, REMEMBERED_MS);
      forget.unref();
      this.free += toolCallIds.length;
    }
  }

  /** One claimed call, attempt after attempt as the tool's retries allow; true when its outcome was stored and announced here. */
  private async runCall(claimed: ToolCallRecord, input: { holder: string; signal: AbortSignal; traceparent?: string }, results: TurnEvents): Promise<boolean> {
    const { deps } = this;
    const { holder } = input;
    const ids = { turnId: claimed.turnId, toolCallId: claimed.toolCallId };
    const logger = deps.logger.child(ids);
    let next: ToolCallRecord | null = claimed;
    for (;;) {
      let announced = false;
      const base = turnCallExecution(deps, ids);
      const kind: ToolExecutionKind<ToolCallRecord> = {
        ...base,
        markRunning: async () => {
          const call = next ?? (await deps.toolCalls.restartHeld(ids.turnId, ids.toolCallId, holder));
          next = null;
          return call ? runningTool(call) : null;
        },
        // Not this run's: whoever holds the call now announces it.
        announceAgain: async () => undefined,
        // As the queued job announces it (turn-call-execution.ts), through the step's appender.
        announce: async (settled) => {
          deps.metrics.toolCalls.inc({ tool: deps.metrics.toolLabel(settled.name), status: settled.status });
          results.emit(toolResultEvent(settled));
          await results.flush();
          announced = true;
        },
      };
      const span = deps.tracer.startSpan(
        spanNames.executeTool(),
        { attributes: { [GEN_AI.operationName]: 'execute_tool', [SWITCHYARD.jobName]: 'run-tool', [SWITCHYARD.turnId]: ids.turnId } },
        contextFrom(input.traceparent),
      );
      let outcome;
      try {
        outcome = await runExecution(deps, kind, {
          signal: input.signal,
          // The line the call's queued job would log: the job is this run's stand-in.
          onWait: (error) => logger.warn({ jobId: toolJobId(claimed.turnId, claimed.step, claimed.position), err: error }, 'tool job waiting for PostgreSQL or Redis'),
          logger,
          span,
        });
      } catch (error) {
        // Aborted (cancel, shutdown, a lost lock) or a store away too long: the queued job has it now.
        failSpan(span, 'internal');
        await deps.toolCalls.releaseHolds(ids.turnId, [ids.toolCallId], holder).catch(() => undefined);
        logger.debug({ err: error }, 'local tool run handed back to its job');
        return false;
      } finally {
        span.end();
      }
      if (outcome.kind === 'done') return announced;
      // The tool retry policy's delay, then another attempt, still held here.
      try {
        await sleep(outcome.delayMs, undefined, { signal: input.signal });
      } catch {
        await deps.toolCalls.releaseHolds(ids.turnId, [ids.toolCallId], holder).catch(() => undefined);
        return false;
      }
    }
  }
}
