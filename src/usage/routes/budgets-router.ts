import { Router } from 'express';
import { notFound } from '../../errors/app-error';
import { sendJson } from '../../api/send-json';
import { parseInput, parseRouteId } from '../../api/validate';
import { periodAt } from '../budget-period';
import { budgetReached, periodStarts } from '../budget-decision';
import type { BudgetsRepository } from '../store/budgets-repository';
import { budgetAnswerSchema, budgetSchema } from './budgets-contract';

export interface BudgetsRouterDeps {
  budgets: Pick<BudgetsRepository, 'put' | 'delete' | 'standingOfUser' | 'userExists'>;
  /** The user's turns parked for a budget go on (usage/budget-wake-up.ts). */
  wakeWaiters: (userId: string) => Promise<unknown>;
}

/** `/v1/admin/users/:id/budget`: a user's budget, with what its period has spent. */
export function budgetsRouter(deps: BudgetsRouterDeps): Router {
  const router = Router();
  const standing = async (userId: string) => {
    const now = new Date();
    const found = await deps.budgets.standingOfUser(userId, periodStarts(now));
    if (!found) throw notFound('budget');
    const period = periodAt(found.period, now);
    return { ...found, periodStartsAt: period.startsAt.toISOString(), resetsAt: period.resetsAt?.toISOString() ?? null };
  };
  router.put('/users/:id/budget', async (req, res) => {
    const userId = parseRouteId(req.params.id, 'user');
    const budget = parseInput(budgetSchema, req.body);
    if (!(await deps.budgets.userExists(userId))) throw notFound('user');
    await deps.budgets.put('user', userId, budget);
    const now = await standing(userId);
    // Woken only when they may go on: a `pause` budget still reached would park them again.
    if (budget.onExceeded === 'reject' || !budgetReached(now, now, null)) await deps.wakeWaiters(userId);
    sendJson(res, budgetAnswerSchema, now);
  });
  router.get('/users/:id/budget', async (req, res) => {
    sendJson(res, budgetAnswerSchema, await standing(parseRouteId(req.params.id, 'budget')));
  });
  router.delete('/users/:id/budget', async (req, res) => {
    const userId = parseRouteId(req.params.id, 'budget');
    if (!(await deps.budgets.delete('user', userId))) throw notFound('budget');
    await deps.wakeWaiters(userId);
    res.status(204).end();
  });
  return router;
}
