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

/** PUT, GET and DELETE of one budget path (a user's, a key's). */
function budgetOperations(scope: 'user' | 'key', name: 'User' | 'Key') {
  const whose = scope === 'user' ? "a user's" : "an API key's";
  return {
    put: {
      operationId: `put${name}Budget`,
      summary: `Set ${whose} budget`,
      access: 'admin' as const,
      requestParams: { path: idParams(scope) },
      jsonBody: budgetSchema,
      responses: { '200': jsonResponse('The budget with its spending.', budgetAnswerSchema) },
      errors: ['not_found' as const],
    },
    get: {
      operationId: `get${name}Budget`,
      summary: `${whose[0]!.toUpperCase()}${whose.slice(1)} budget and what its period has spent`,
      access: 'admin' as const,
      requestParams: { path: idParams(scope) },
      responses: { '200': jsonResponse('The budget with its spending.', budgetAnswerSchema) },
      errors: ['not_found' as const],
    },
    delete: {
      operationId: `delete${name}Budget`,
      summary: `Remove ${whose} budget`,
      access: 'admin' as const,
      requestParams: { path: idParams(scope) },
      responses: { '204': { description: 'Removed.' } },
      errors: ['not_found' as const],
    },
  };
}

export const budgetPaths = documentPaths('Admin usage', {
  '/v1/admin/users/{id}/budget': budgetOperations('user', 'User'),
  // A key's turns count against its budget and its user's: either reached stops them.
  '/v1/admin/keys/{id}/budget': budgetOperations('key', 'Key'),
});
