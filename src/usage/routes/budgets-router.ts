import { Router, type Request } from 'express';
import { notFound } from '../../errors/app-error';
import { sendJson } from '../../api/send-json';
import { parseInput, parseRouteId } from '../../api/validate';
import type { BudgetSubject } from '../../store/turns-repository';
import { periodAt } from '../budget-period';
import { budgetReached, periodStarts } from '../budget-decision';
import type { BudgetScope, BudgetsRepository } from '../store/budgets-repository';
import { budgetAnswerSchema, budgetSchema } from './budgets-contract';

export interface BudgetsRouterDeps {
  budgets: Pick<BudgetsRepository, 'put' | 'delete' | 'standingOf' | 'subjectExists'>;
  /** The subject's turns parked for a budget go on (usage/budget-wake-up.ts). */
  wakeWaiters: (subject: BudgetSubject) => Promise<unknown>;
}

const PATHS: Record<BudgetScope, { path: string; what: string }> = {
  user: { path: '/users/:id/budget', what: 'user' },
  key: { path: '/keys/:id/budget', what: 'key' },
};

/** The `:id` of a path built from PATHS (express types a string path's parameters only). */
const idOf = (req: Request): string | undefined => (typeof req.params.id === 'string' ? req.params.id : undefined);

/** `/v1/admin/users/:id/budget` and `/v1/admin/keys/:id/budget`: a budget, with what its period has spent. */
export function budgetsRouter(deps: BudgetsRouterDeps): Router {
  const router = Router();
  const standing = async (subject: BudgetSubject) => {
    const now = new Date();
    const found = await deps.budgets.standingOf(subject, periodStarts(now));
    if (!found) throw notFound('budget');
    const period = periodAt(found.period, now);
    return { ...found, periodStartsAt: period.startsAt.toISOString(), resetsAt: period.resetsAt?.toISOString() ?? null };
  };
  for (const scope of ['user', 'key'] as const) {
    const { path, what } = PATHS[scope];
    router.put(path, async (req, res) => {
      const subject = { scope, id: parseRouteId(idOf(req), what) };
      const budget = parseInput(budgetSchema, req.body);
      if (!(await deps.budgets.subjectExists(subject))) throw notFound(what);
      await deps.budgets.put(scope, subject.id, budget);
      const now = await standing(subject);
      // Woken only when they may go on: a `pause` budget still reached would park them again.
      if (budget.onExceeded === 'reject' || !budgetReached(now, now, null)) await deps.wakeWaiters(subject);
      const { scope: _scope, subjectId: _subjectId, ...answer } = now;
      sendJson(res, budgetAnswerSchema, answer);
    });
    router.get(path, async (req, res) => {
      const { scope: _scope, subjectId: _subjectId, ...answer } = await standing({ scope, id: parseRouteId(idOf(req), 'budget') });
      sendJson(res, budgetAnswerSchema, answer);
    });
    router.delete(path, async (req, res) => {
      const subject = { scope, id: parseRouteId(idOf(req), 'budget') };
      if (!(await deps.budgets.delete(scope, subject.id))) throw notFound('budget');
      await deps.wakeWaiters(subject);
      res.status(204).end();
    });
  }
  return router;
}
