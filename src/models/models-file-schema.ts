import { z } from 'zod';

/**
 * A models file (MODELS_FILE, docs/API.md "Models and providers"): named providers and named
 * models, each model a list of targets tried in order. Strict: a misspelt field is an error
 * naming it, not a setting silently ignored.
 */

const positiveInt = z.number().int().positive();

/** USD per million tokens. */
export const priceSchema = z.strictObject({
  input: z.number().nonnegative(),
  cachedInput: z.number().nonnegative(),
  output: z.number().nonnegative(),
});
export type Price = z.infer<typeof priceSchema>;

/** `<provider>/<upstream model>` splits at the first `/`: a provider's name has none. */
export const PROVIDER_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

const providerSchema = z.strictObject({
  baseURL: z.string().regex(/^https?:\/\/[^\s]+$/i, 'an http:// or https:// URL'),
  /** May hold `${ENV_VAR}` references; never printed. */
  apiKey: z.string().optional(),
  /** Sent with every request; values may hold `${ENV_VAR}` references. */
  headers: z.record(z.string(), z.string()).optional(),
  /** No data from the provider for this long (before its answer begins, or between chunks) fails the request. Default PROVIDER_IDLE_TIMEOUT_MS. */
  timeoutMs: positiveInt.optional(),
  /** Requests in flight to this provider per worker process; a step past it waits for a slot. Default: no bound. */
  maxConcurrency: positiveInt.optional(),
  /** `<provider>/<upstream model>` calls this provider directly, with no fallback. Default false. */
  allowDirect: z.boolean().optional(),
  /** The price of its direct calls; without one they are unpriced. */
  price: priceSchema.optional(),
});

const targetSchema = z.strictObject({
  provider: z.string().min(1),
  /** The model's name at the provider. */
  model: z.string().min(1),
  /** Default: the model's. */
  contextWindow: positiveInt.optional(),
  /** Default: the model's. */
  price: priceSchema.optional(),
});

const modelSchema = z.strictObject({
  targets: z.array(targetSchema).min(1, 'needs at least one target'),
  contextWindow: positiveInt.optional(),
  price: priceSchema.optional(),
});

export const modelsFileSchema = z
  .strictObject({
    providers: z.record(z.string(), providerSchema),
    models: z.record(z.string().min(1), modelSchema),
    /** Default: the first model of the file. */
    defaultModel: z.string().min(1).optional(),
  })
  .superRefine((file, ctx) => {
    const providers = Object.keys(file.providers);
    for (const name of providers) {
      if (!PROVIDER_NAME_PATTERN.test(name)) ctx.addIssue({ code: 'custom', path: ['providers', name], message: 'a provider name is letters, digits, _, . and - (no /)' });
    }
    if (providers.length === 0) ctx.addIssue({ code: 'custom', path: ['providers'], message: 'names no provider' });
    if (Object.keys(file.models).length === 0) ctx.addIssue({ code: 'custom', path: ['models'], message: 'names no model' });
    for (const [name, model] of Object.entries(file.models)) {
      model.targets.forEach((target, index) => {
        if (!Object.hasOwn(file.providers, target.provider)) {
          ctx.addIssue({
            code: 'custom',
            path: ['models', name, 'targets', index, 'provider'],
            message: `no provider "${target.provider}" (the providers are ${providers.join(', ')})`,
          });
        }
      });
    }
    if (file.defaultModel !== undefined && !Object.hasOwn(file.models, file.defaultModel)) {
      ctx.addIssue({ code: 'custom', path: ['defaultModel'], message: `no model "${file.defaultModel}" (the models are ${Object.keys(file.models).join(', ')})` });
    }
  });
export type ModelsFile = z.infer<typeof modelsFileSchema>;
