import { z } from 'zod';
import { documentPaths, jsonResponse } from '../../api/contract/operation';
import { idParams } from '../../api/contract/shared-schemas';

export const budgetSchema = z
  .strictObject({
    period: z.enum(['day', 'month', 'total']).meta({ description: 'UTC calendar days and months, or all time.' }),
    limitUsd: z.number().nonnegative().optional().meta({ description: 'Counts priced calls.' }),
    limitTokens: z.number().int().nonnegative().optional().meta({ description: 'totalTokens of every call.' }),
    onExceeded: z
      .enum(['reject', 'pause'])
      .meta({ description: '`reject` refuses new work and fails a turn after the step that reached it; `pause` parks both as `waiting_budget`.' }),
  })
  .refine((budget) => budget.limitUsd !== undefined || budget.limitTokens !== undefined, { message: 'needs limitUsd or limitTokens', path: ['limitUsd'] })
  .meta({ id: 'Budget' });

export const budgetAnswerSchema = z
  .object({
    period: z.enum(['day', 'month', 'total']),
    limitUsd: z.number().optional(),
    limitTokens: z.number().int().optional(),
    onExceeded: z.enum(['reject', 'pause']),
    spentUsd: z.number(),
    spentTokens: z.number().int(),
    periodStartsAt: z.string(),
    resetsAt: z.string().nullable().meta({ description: 'Null for a total budget.' }),
  })
  .meta({ id: 'BudgetStanding' });

export const budgetPaths = documentPaths('Admin usage', {
  '/v1/admin/users/{id}/budget': {
    put: {
      operationId: 'putUserBudget',
      summary: "Set a user's budget",
      access: 'admin',
      requestParams: { path: idParams('user') },
      jsonBody: budgetSchema,
      responses: { '200': jsonResponse('The budget with its spending.', budgetAnswerSchema) },
      errors: ['not_found'],
    },
    get: {
      operationId: 'getUserBudget',
      summary: "A user's budget and what its period has spent",
      access: 'admin',
      requestParams: { path: idParams('user') },
      responses: { '200': jsonResponse('The budget with its spending.', budgetAnswerSchema) },
      errors: ['not_found'],
    },
    delete: {
      operationId: 'deleteUserBudget',
      summary: "Remove a user's budget",
      access: 'admin',
      requestParams: { path: idParams('user') },
      responses: { '204': { description: 'Removed.' } },
      errors: ['not_found'],
    },
  },
});
