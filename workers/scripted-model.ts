import { z } from 'zod';
import { runMain, StartupError } from '../src/runtime/run-main';
import { startScriptedModel } from '../src/scripted-model/scripted-model-server';
import { describeZodIssues } from '../src/errors/zod-issues';
import { describeListenFailure } from '../src/errors/listen-failure';
import { parseFault } from '../src/scripted-model/fault-control';

// Only these: the scripted model needs none of Switchyard's configuration.
const envSchema = z.object({
  PORT: z.preprocess((value) => (value === '' ? undefined : value), z.coerce.number().int().min(0).max(65535).default(4010)),
  HOST: z.string().min(1).default('127.0.0.1'),
  /** A fault from the start, as JSON (src/scripted-model/fault-control.ts): `{"refuse": {"status": 503}}`. */
  SCRIPTED_FAULT: z.preprocess((value) => (value === '' ? undefined : value), z.string().optional()),
});

/** `npm run scripted-model`: the scripted model alone, to try a client or run a benchmark against. */
runMain(async () => {
  const env = envSchema.safeParse({ PORT: process.env.PORT, HOST: process.env.HOST, SCRIPTED_FAULT: process.env.SCRIPTED_FAULT });
  if (!env.success) {
    throw new StartupError(`invalid environment: ${describeZodIssues(env.error.issues)}`);
  }
  const fault = env.data.SCRIPTED_FAULT === undefined ? undefined : faultFromEnvironment(env.data.SCRIPTED_FAULT);
  const model = await startScriptedModel({ port: env.data.PORT, host: env.data.HOST, ...(fault ? { fault } : {}) }).catch((error: unknown) => {
    throw describeListenFailure(error, env.data.PORT, env.data.HOST);
  });
  const body = JSON.stringify({ model: 'scripted', stream: true, messages: [{ role: 'user', content: 'Hello there' }] });
  process.stdout.write(`scripted model listening on ${model.url}\n`);
  process.stdout.write(`try: curl -sN ${model.url}/chat/completions -H 'Content-Type: application/json' -d '${body}'\n`);
  process.stdout.write(`fail on demand: curl -X PUT ${model.url}/scripted/fault -d '{"refuse": {"status": 503}}'   (clear it: curl -X DELETE ${model.url}/scripted/fault)\n`);
  return model;
});

function faultFromEnvironment(text: string) {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new StartupError('invalid environment: "SCRIPTED_FAULT": not valid JSON');
  }
  const parsed = parseFault(json);
  if (!parsed.ok) throw new StartupError(`invalid environment: "SCRIPTED_FAULT": ${parsed.message}`);
  return parsed.fault;
}
