import { parseArgs } from 'node:util';
import type { BenchOptions } from './run-context';

export interface BenchArgs {
  /** Benchmarks named on the command line (none: all of them). */
  names: string[];
  options: BenchOptions;
  /** Where to write the results; full runs default to bench/RESULTS.md. */
  out?: string;
  /** Service settings the named cases also run with, alternating with the default (an A/B in one run). */
  variants: BenchVariant[];
  help: boolean;
  list: boolean;
}

/** The soak: long enough that RSS is past its ramp-up (about 50 s at 70 turns/s) for the middle third. */
export const DEFAULT_SOAK_TURNS = 10_000;
export const DEFAULT_REPETITIONS = 5;
export const DEFAULT_TURN_SECONDS = 8;

export const USAGE = `usage: npm run bench -- [name ...] [options]
  (no name)              every benchmark, then bench/RESULTS.md and bench/charts/; about 20 minutes on 2 cores
  name ...               only these (a case brings its baselines); results are printed, written only with --out
options:
  --repeat N             repetitions of each benchmark (default ${DEFAULT_REPETITIONS}; the soak runs once)
  --profile              start the service processes with --cpu-prof; profiles go to bench/profiles/
  --soak-turns N         turns of the soak (default ${DEFAULT_SOAK_TURNS}, the issue's figure)
  --turn-seconds N       seconds of load per repetition of turn-throughput (default ${DEFAULT_TURN_SECONDS}; the issue says 30)
  --turn-concurrency N   turns in flight at once in turn-throughput (default 16)
  --variant NAME:K=V,... also run each named case with these service settings, in rounds that alternate
                         with the default (one repetition each, the order rotating), reported as "<case> [NAME]"
  --out FILE             write the markdown there (and the curves' charts in charts/ beside it)
  --list                 list the benchmarks`;

export function parseBenchArgs(argv: string[]): BenchArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      repeat: { type: 'string' },
      profile: { type: 'boolean', default: false },
      'soak-turns': { type: 'string' },
      'turn-seconds': { type: 'string' },
      'turn-concurrency': { type: 'string' },
      out: { type: 'string' },
      variant: { type: 'string', multiple: true },
      list: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const positive = (name: string, raw: string | undefined, fallback: number) => {
    if (raw === undefined) return fallback;
    const parsed = Number(raw);
    if (!Number.isInteger(parsed) || parsed <= 0) throw new Error(`--${name} must be a positive integer, got ${raw}`);
    return parsed;
  };
  return {
    names: positionals,
    options: {
      repetitions: positive('repeat', values.repeat, DEFAULT_REPETITIONS),
      profile: values.profile ?? false,
      soakTurns: positive('soak-turns', values['soak-turns'], DEFAULT_SOAK_TURNS),
      turnSeconds: positive('turn-seconds', values['turn-seconds'], DEFAULT_TURN_SECONDS),
      turnConcurrency: positive('turn-concurrency', values['turn-concurrency'], 16),
    },
    ...(values.out ? { out: values.out } : {}),
    variants: (values.variant ?? []).map(parseVariant),
    help: values.help ?? false,
    list: values.list ?? false,
  };
}

/** A build of the service told apart by its settings: `early:EARLY_FIRST_REQUEST=true`. */
export interface BenchVariant {
  name: string;
  env: Record<string, string>;
}

function parseVariant(raw: string): BenchVariant {
  const colon = raw.indexOf(':');
  if (colon <= 0) throw new Error(`--variant wants NAME:KEY=VALUE[,KEY=VALUE], got ${raw}`);
  const env: Record<string, string> = {};
  for (const pair of raw.slice(colon + 1).split(',')) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new Error(`--variant wants NAME:KEY=VALUE[,KEY=VALUE], got ${raw}`);
    env[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return { name: raw.slice(0, colon), env };
}
