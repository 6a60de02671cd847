import { createHash } from 'node:crypto';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import { failSpan } from '../tracing/fail-span';
import { GEN_AI, spanNames, SWITCHYARD } from '../tracing/span-attributes';
import { traceparentOf } from '../tracing/trace-context';
import type { ResponseFormat } from '../providers/response-format';
import { formatProblem } from './structured-output';
import { AppError, notFound } from '../errors/app-error';
import type { Queryable } from '../store/db';
import type { NewTurn, ScheduleRunRecord, Turn, TurnOptions } from '../store/turns-repository';
import { isTerminal } from '../store/turns-repository';
import { admitTurn, type Admission, type OnBusy } from './turn-admission';
import { noBranchPoint, unacceptableBranch, type BranchRequest } from './branch-request';
import { unansweredCallsRefusal } from './unanswered-calls';
import { announceTurnEnd, endTurn, recordTurnEnd, type TurnEndingDeps, type TurnOutcome } from './turn-ending';
import type { ModelCatalogue } from '../models/model-catalogue';
import { budgetSubjects, firstReached, periodStarts } from '../usage/budget-decision';
import type { BudgetsRepository } from '../usage/store/budgets-repository';
import type { ResolvedAgentReference } from '../agents/agent-references';
import type { StartTurnHere } from './turn-hand-off';

export interface TurnServiceDeps extends TurnEndingDeps {
  conversations: TurnEndingDeps['conversations'];
  /** Unfinished turns one user may have; more are refused with 429. */
  maxActiveTurnsPerUser: number;
  /** The admission span starts the turn's trace; its context is stored with the turn. */
  tracer: Tracer;
  /** A turn's `model` is one of these (or a direct call a provider allows). */
  models: Pick<ModelCatalogue, 'lookup'>;
  /** A user (or key) at or past a `reject` budget gets no new turn. */
  budgets: Pick<BudgetsRepository, 'standings' | 'noticeExceeded'>;
  /**
   * Offers a turn just admitted to this process's own turn slots (a process with both roles,
   * turn-hand-off.ts): true when one took it, its job added as the run's lease; absent or false,
   * the turn is enqueued.
   */
  startHere?: StartTurnHere;
}

const INTERRUPTED: TurnOutcome = { status: 'cancelled', finishReason: 'interrupted' };

export interface TurnRequest {
  /** The user message; null for a regenerate (it answers a stored one again). */
  content: unknown;
  idempotencyKey?: string;
  onBusy: OnBusy;
  options: TurnOptions;
  /** A batch item's turn: queued behind interactive turns, by this batch priority. */
  batchPriority?: number;
  /** A regenerate or an edit: admitted with what it replaces marked, in one transaction. */
  branch?: BranchRequest;
  /** The AI SDK's id of the user message (`/api/chat`). */
  uiMessageId?: string;
  /** The API key it comes with: its budget counts too. */
  keyId?: string;
  /** The turn's own agent, checked by the caller (agents/agent-references.ts); absent: its conversation's. */
  agent?: ResolvedAgentReference;
  /** Written in the transaction that records a new turn (an OpenAI response's record): both or neither. */
  alongside?: (tx: Queryable, turn: Turn) => Promise<void>;
  /**
   * What `alongside` writes, when it is a record the one-statement admission can carry (a
   * schedule's run): then a turn nothing stands in the way of is admitted, and this recorded, in
   * one round trip, and `alongside` writes the same on the transaction's path. Both or neither
   * on either path.
   */
  alongsideIfClear?: ScheduleRunRecord;
}

/** The API's side of turns: admission and cancellation. Workers run them (turn-runner.ts). */
export class TurnService {
  constructor(private readonly deps: TurnServiceDeps) {}

  /**
   * `created` is false when an idempotency key replayed an earlier turn. Every way a turn is
   * made (the turns route, `/api/chat`, batch items) comes through here, so the span that starts
   * a turn's trace is made here, and its context is stored with the turn for all its jobs.
   */
  async create(userId: string, conversationId: string, request: TurnRequest): Promise<{ turn: Turn; created: boolean }> {
    const span = this.deps.tracer.startSpan(spanNames.admitTurn, { kind: SpanKind.PRODUCER, attributes: { [GEN_AI.conversationId]: conversationId } });
    try {
      const admitted = await this.admit(userId, conversationId, request, traceparentOf(span));
      span.setAttributes({ [SWITCHYARD.turnId]: admitted.turn.id, [SWITCHYARD.admission]: admitted.created ? 'created' : 'replayed' });
      return admitted;
    } catch (error) {
      failSpan(span, AppError.isInstance(error) ? error.code : 'internal');
      throw error;
    } finally {
      span.end();
    }
  }

  private async admit(userId: string, conversationId: string, request: TurnRequest, traceparent: string | undefined): Promise<{ turn: Turn; created: boolean }> {
    if (request.options.model !== undefined) this.assertModel(request.options.model);
    if (request.options.responseFormat !== undefined) this.assertResponseFormat(request.options.responseFormat);
    await this.assertWithinBudget(userId, request.keyId);
    const requestHash = hashRequest(request);
    const newTurn: NewTurn = {
      conversationId,
      userId,
      input: request.content,
      options: request.options,
      ...(request.idempotencyKey ? { idempotencyKey: request.idempotencyKey } : {}),
      ...(request.batchPriority !== undefined ? { batchPriority: request.batchPriority } : {}),
      ...(traceparent ? { traceparent } : {}),
      ...(request.uiMessageId ? { uiMessageId: request.uiMessageId } : {}),
      ...(request.keyId ? { keyId: request.keyId } : {}),
      ...(request.agent ? { agent: request.agent } : {}),
      requestHash,
    };
    const { branch, alongside, alongsideIfClear } = request;
    // The common case (nothing ahead, key unused, under the limit) in one round trip; the rest,
    // every branch turn and every turn with a record alongside that statement cannot carry,
    // reads the facts under the conversation's lock and decides.
    if (!branch && (!alongside || alongsideIfClear)) {
      const clear = await this.deps.turns.admitIfClear(newTurn, this.deps.maxActiveTurnsPerUser, alongsideIfClear);
      if (clear.outcome === 'missing') throw notFound('conversation');
      if (clear.outcome === 'admitted') {
        await this.enqueue({ ...clear.turn, activeTurnsOfUser: clear.activeOfUser + 1 });
        return { turn: clear.turn, created: true };
      }
    }
    const admission = await this.deps.db.transaction(async (tx) => {
      const conversation = await this.deps.conversations.get(userId, conversationId, tx, true);
      if (!conversation) throw notFound('conversation');
      const existingForKey = request.idempotencyKey ? await this.deps.turns.findByIdempotencyKey(conversationId, request.idempotencyKey, tx) : null;
      const activeTurns = await this.deps.turns.activeTurns(conversationId, tx);
      const decision = admitTurn({ existingForKey, requestHash, activeTurns, onBusy: request.onBusy });
      if (decision.kind !== 'create') return { decision, turn: null, interrupted: [] as Turn[], activeOfUser: 0 };
      // Counted across the user's conversations without a lock: concurrent posts may pass the
      // limit by a few, which is fine for a limit that protects capacity, not correctness.
      const activeOfUser = await this.deps.turns.countActiveForUser(userId, tx);
      if (activeOfUser >= this.deps.maxActiveTurnsPerUser) {
        throw new AppError('rate_limited', `at most ${this.deps.maxActiveTurnsPerUser} unfinished turns per user; wait for some to finish`, undefined, 5);
      }
      // Ended in the transaction that records the new turn: the conversation never has both
      // active, and a crash cannot leave the new turn recorded with the old one still running.
      // A branch's message is checked under the conversation's lock: nothing can replace it
      // before the branch is recorded. A refusal rolls everything back, interrupts included.
      const point = branch ? await this.deps.messages.findBranchPoint(conversationId, branch.from, tx) : null;
      if (branch && !point) throw noBranchPoint(branch);
      if (branch && point) {
        const before = await this.deps.messages.listOutline(conversationId, { rowId: point.messageId, inclusive: branch.kind === 'regenerate' }, tx);
        const refusal = unacceptableBranch(branch, before, point.messageId);
        if (refusal) throw refusal;
      }
      const interrupted: Turn[] = [];
      for (const active of decision.interrupt) {
        const ended = await recordTurnEnd(this.deps, active.id, null, INTERRUPTED, tx);
        if (ended) interrupted.push(ended);
      }
      // With no turn left ahead of it, the path as it stands is what this turn follows (one
      // ahead settles its own calls first): calls without results there are refused here.
      if (!branch && decision.interrupt.length === activeTurns.length) {
        const refusal = unansweredCallsRefusal(await this.deps.messages.listLastStepOutline(conversationId, tx), request.content);
        if (refusal) throw refusal;
      }
      const turn = await this.deps.turns.insert(point && branch ? { ...newTurn, branch: { kind: branch.kind, fromMessageId: point.messageId } } : newTurn, tx);
      // In the transaction that admits the branch turn: a crash leaves both or neither.
      if (point && branch) await this.deps.turns.supersede(conversationId, point, branch.kind, turn.id, tx);
      await alongside?.(tx, turn);
      return { decision, turn, interrupted, activeOfUser: activeOfUser + 1 - interrupted.length };
    });

    const { decision } = admission;
    switch (decision.kind) {
      case 'replay':
        return { turn: decision.turn, created: false };
      case 'idempotency_conflict':
        throw new AppError('idempotency_conflict', 'this idempotencyKey was used with a different request');
      case 'busy':
        throw new AppError('conversation_busy', 'a turn is already active on this conversation', { activeTurnId: decision.activeTurnId });
      case 'create':
        for (const ended of admission.interrupted) await announceTurnEnd(this.deps, ended, null);
        if (decision.enqueueNow) await this.enqueue({ ...admission.turn!, activeTurnsOfUser: admission.activeOfUser });
        return { turn: admission.turn!, created: true };
    }
  }

  /** A 400 naming the models there are, for a `model` that is none of them (a conversation's too). */
  assertModel(model: string): void {
    const lookup = this.deps.models.lookup(model);
    if (!lookup.ok) throw new AppError('invalid_request', lookup.message, [{ field: 'model', message: lookup.message }]);
  }

  /** A 400 for a format whose schema could check no answer, before a turn runs into it (a conversation's too). */
  assertResponseFormat(format: ResponseFormat): void {
    const problem = formatProblem(format);
    if (problem) throw new AppError('invalid_request', `invalid request: responseFormat.schema: ${problem}`, [{ field: 'responseFormat.schema', message: problem }]);
  }

  /**
   * Refuses new work past a `reject` budget: 429 `budget_exceeded`, nothing made. Read without a
   * lock: turns admitted at once, and the steps already running, may overshoot it by what they
   * spend (docs/guides/usage-and-budgets.md gives the bound).
   */
  private async assertWithinBudget(userId: string, keyId: string | undefined): Promise<void> {
    const now = new Date();
    const standings = await this.deps.budgets.standings(budgetSubjects(userId, keyId), periodStarts(now));
    const found = firstReached(
      standings.filter((standing) => standing.onExceeded === 'reject'),
      now,
    );
    if (!found) return;
    const { standing, reached, resetsAt } = found;
    await this.deps.budgets.noticeExceeded(standing, found.startsAt, userId, reached);
    const what = 'usd' in reached.limit ? `USD ${reached.limit.usd}` : `${reached.limit.tokens} tokens`;
    const retryAfter = resetsAt ? Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000)) : undefined;
    const whose = standing.scope === 'key' ? "this key's" : 'the';
    throw new AppError('budget_exceeded', `${whose} ${standing.period} budget of ${what} is reached`, reached, retryAfter);
  }

  async cancel(userId: string, turnId: string): Promise<Turn> {
    const turn = await this.deps.turns.getForUser(userId, turnId);
    if (!turn) throw notFound('turn');
    if (isTerminal(turn.status)) return turn;
    // Committed first, then signalled (endTurn): a job that starts after the signal finds the
    // turn ended; one that started before is aborted by it.
    const ended = await endTurn(this.deps, turn, null, { status: 'cancelled', finishReason: 'cancelled' });
    return ended ?? (await this.deps.turns.get(turnId)) ?? turn;
  }

  private async enqueue(turn: Turn & { activeTurnsOfUser: number }): Promise<void> {
    try {
      if (await this.deps.startHere?.(turn)) return;
      await this.deps.enqueueTurn(turn);
    } catch {
      // The turn is recorded; the reconciler enqueues it once Redis answers again.
      throw new AppError(
        'unavailable',
        'the queue is unavailable; the turn is recorded and runs when it is back (repeat the request with the same idempotencyKey to follow it)',
        { turnId: turn.id },
        5,
      );
    }
  }
}

function hashRequest(request: TurnRequest): string {
  const { content, options, branch, agent } = request;
  return createHash('sha256')
    .update(JSON.stringify({ content, options, ...(branch ? { branch: { kind: branch.kind, from: branch.from } } : {}), ...(agent ? { agent } : {}) }))
    .digest('hex');
}
