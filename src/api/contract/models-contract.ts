import { z } from 'zod';
import { documentPaths, jsonResponse } from './operation';

const priceSchema = z.object({ input: z.number(), cachedInput: z.number(), output: z.number() }).meta({ id: 'Price', description: 'USD per million tokens.' });

export const modelSchema = z
  .object({
    name: z.string(),
    contextWindow: z.number().int().nullable().meta({ description: "The smallest of its targets' windows, in tokens; null when one is unknown." }),
    price: priceSchema.nullable().meta({ description: 'Null: unpriced (its calls cost 0).' }),
    targets: z.array(
      z.object({
        provider: z.string(),
        model: z.string().meta({ description: "The model's name at the provider." }),
        state: z.enum(['ok', 'cooling_down']),
        until: z.string().optional().meta({ description: 'When its cooldown ends (ISO 8601); then one request probes it.' }),
      }),
    ),
  })
  .meta({ id: 'Model' });

export const modelListSchema = z
  .object({
    data: z.array(modelSchema),
    defaultModel: z.string().meta({ description: 'The model of a turn that names none.' }),
  })
  .meta({ id: 'ModelList' });

export const modelPaths = documentPaths('Models', {
  '/v1/models': {
    get: {
      operationId: 'listModels',
      summary: 'The models, their targets in order, and which targets cool down',
      access: 'user',
      responses: { '200': jsonResponse('The models.', modelListSchema) },
    },
  },
});
