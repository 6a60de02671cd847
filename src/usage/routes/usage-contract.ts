import { z } from 'zod';
import { documentPaths, jsonResponse } from '../../api/contract/operation';
import { USAGE_GROUPS } from '../store/usage-ledger-repository';

const figures = {
  promptTokens: z.number().int().meta({ description: 'Includes cachedPromptTokens.' }),
  cachedPromptTokens: z.number().int(),
  completionTokens: z.number().int().meta({ description: 'Includes reasoningTokens.' }),
  reasoningTokens: z.number().int(),
  totalTokens: z.number().int().meta({ description: 'promptTokens + completionTokens: what a token budget counts.' }),
  costUsd: z.number().meta({ description: 'Priced calls only: a model without a price costs 0.' }),
  calls: z.number().int().meta({ description: 'Provider calls, discarded attempts included.' }),
};

const time = z.iso.datetime({ offset: true }).transform((text) => new Date(text));

export const usageQuerySchema = z.strictObject({
  from: time.optional().meta({ description: 'ISO 8601; calls started at or after it.' }),
  to: time.optional().meta({ description: 'ISO 8601; calls started before it.' }),
  groupBy: z
    .enum(USAGE_GROUPS)
    .default('day')
    .meta({ description: 'UTC calendar days, `provider/model`, conversations, agents (null: a turn on no agent), or API keys (null: a turn made without one, as a batch item).' }),
});

export const adminUsageQuerySchema = usageQuerySchema.extend({
  userId: z.string().min(1).optional().meta({ description: "One user's; every user's when absent." }),
});

export const usageReportSchema = z
  .object({
    data: z.array(z.object({ group: z.string().nullable(), ...figures })),
    totals: z.object(figures),
  })
  .meta({ id: 'UsageReport', description: "Sums of the usage ledger's lines, one per provider call." });

export const usagePaths = documentPaths('Usage', {
  '/v1/usage': {
    get: {
      operationId: 'getUsage',
      summary: "The user's usage, summed by group",
      access: 'user',
      requestParams: { query: usageQuerySchema },
      responses: { '200': jsonResponse("The user's usage.", usageReportSchema) },
    },
  },
});

export const adminUsagePaths = documentPaths('Admin usage', {
  '/v1/admin/usage': {
    get: {
      operationId: 'getAdminUsage',
      summary: "Every user's usage (or one's), summed by group",
      access: 'admin',
      requestParams: { query: adminUsageQuerySchema },
      responses: { '200': jsonResponse('The usage.', usageReportSchema) },
    },
  },
});
