import type { RouteFamily } from '../../api/route-family';
import type { Db } from '../../store/db';
import type { TurnsRepository } from '../../store/turns-repository';
import { wakeBudgetWaiters, type BudgetWakeUpDeps } from '../budget-wake-up';
import { BudgetsRepository } from '../store/budgets-repository';
import { UsageLedgerRepository } from '../store/usage-ledger-repository';
import { budgetPaths } from './budgets-contract';
import { budgetsRouter } from './budgets-router';
import { adminUsagePaths, usagePaths } from './usage-contract';
import { adminUsageRouter, usageRouter } from './usage-router';

interface UsageRoutesNeeds extends Omit<BudgetWakeUpDeps, 'turns'> {
  db: Db;
  turns: TurnsRepository;
}

const TAG = { name: 'Usage', description: 'The usage ledger: one line per provider call, counted once (docs/API.md, "Usage and budgets").' };

/** `GET /v1/usage`: the user's own usage. */
export const usageRoutes: RouteFamily<UsageRoutesNeeds> = {
  stage: 'user',
  openApi: { tag: TAG, paths: usagePaths },
  mount: (app, needs) => {
    app.use('/v1/usage', usageRouter({ ledger: new UsageLedgerRepository(needs.db) }));
  },
};

/** `GET /v1/admin/usage`: every user's. */
export const adminUsageRoutes: RouteFamily<UsageRoutesNeeds> = {
  stage: 'admin',
  openApi: { tag: { name: 'Admin usage', description: 'Usage and budgets across users; answers 404 while ADMIN_TOKEN is unset.' }, paths: { ...adminUsagePaths, ...budgetPaths } },
  mount: (app, needs) => {
    app.use('/v1/admin/usage', adminUsageRouter({ ledger: new UsageLedgerRepository(needs.db) }));
    app.use('/v1/admin', budgetsRouter({ budgets: new BudgetsRepository(needs.db), wakeWaiters: (subject) => wakeBudgetWaiters(needs, subject) }));
  },
};
