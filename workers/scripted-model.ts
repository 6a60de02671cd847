import { z } from 'zod';
import { runMain, StartupError } from '../src/runtime/run-main';
import { startScriptedModel } from '../src/scripted-model/scripted-model-server';
import { describeZodIssues } from '../src/errors/zod-issues';
import { describeListenFailure } from '../src/errors/listen-failure';

// Only these two: the scripted model needs none of Switchyard's configuration.
const envSchema = z.object({
  PORT: z.preprocess((value) => (value === '' ? undefined : value), z.coerce.number().int().min(0).max(65535).default(4010)),
  HOST: z.string().min(1).default('127.0.0.1'),
});

/** `npm run scripted-model`: the scripted model alone, to try a client or run a benchmark against. */
runMain(async () => {
  const env = envSchema.safeParse({ PORT: process.env.PORT, HOST: process.env.HOST });
  if (!env.success) {
    throw new StartupError(`invalid environment: ${describeZodIssues(env.error.issues)}`);
  }
  const model = await startScriptedModel({ port: env.data.PORT, host: env.data.HOST }).catch((error: unknown) => {
    throw describeListenFailure(error, env.data.PORT, env.data.HOST);
  });
  const body = JSON.stringify({ model: 'scripted', stream: true, messages: [{ role: 'user', content: 'Hello there' }] });
  process.stdout.write(`scripted model listening on ${model.url}\n`);
  process.stdout.write(`try: curl -sN ${model.url}/chat/completions -H 'Content-Type: application/json' -d '${body}'\n`);
  return model;
});
