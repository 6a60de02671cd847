import { spawn } from 'node:child_process';
import { once } from 'node:events';
import pino from 'pino';
import { z } from 'zod';
import { builtinToExecutable, defineBuiltinTool } from '../../src/tools/builtin/builtin-tool';
import { createToolRegistry } from '../../src/tools/tool-registry';
import type { Benchmark } from '../lib/benchmark';
import { now, sleep } from '../lib/clock';
import { startSwitchyard } from '../lib/switchyard-stack';
import { median } from '../lib/stats';

/** A tool's timeout, as the tests' stuck tools have it. */
const TOOL_TIMEOUT_MS = 50;
const TOOL_CALLS = 40;
/** The worker's SHUTDOWN_GRACE_MS, as in test/faults/graceful-shutdown.test.ts. */
const GRACE_MS = 1_000;

/**
 * How soon after a deadline Switchyard acts, which the tests only check happens: (a) a tool that
 * ignores its signal is answered `timeout` this long after its timeoutMs, against a bare
 * setTimeout of the same length in this process (the timer's own lateness); (b) an idle worker
 * given SIGTERM exits this long after SIGTERM, against a bare Node process that exits on SIGTERM.
 */
export const deadlines: Benchmark = {
  name: 'deadlines',
  title: 'Deadlines: a stuck tool answered timeout, an idle worker exiting on SIGTERM',
  kind: 'case',
  timeoutMs: 300_000,
  async run(context, report) {
    report.note(
      `(a) ${TOOL_CALLS} calls one after another of a builtin tool that never settles, timeoutMs ${TOOL_TIMEOUT_MS}, through the tool registry in the bench process; ` +
        `the figure is the median time past ${TOOL_TIMEOUT_MS} ms to the timeout result, the baseline the median lateness of a setTimeout(${TOOL_TIMEOUT_MS}). ` +
        `(b) a worker process (SHUTDOWN_GRACE_MS=${GRACE_MS}, no turns) sent SIGTERM: time to its exit, against a bare \`node -e\` process that exits on SIGTERM.`,
    );
    report.define('deadlines.timer.lateMs', { label: `setTimeout(${TOOL_TIMEOUT_MS}) in the bench process: time past its delay, median`, unit: 'ms' });
    report.define('deadlines.tool.lateMs', {
      label: `a stuck tool with timeoutMs ${TOOL_TIMEOUT_MS}: call → timeout result, time past ${TOOL_TIMEOUT_MS} ms, median`,
      unit: 'ms',
      baselineKey: 'deadlines.timer.lateMs',
    });
    report.define('deadlines.bareExit.ms', { label: 'a bare Node process: SIGTERM → exit', unit: 'ms' });
    report.define('deadlines.workerExit.ms', { label: `an idle worker (SHUTDOWN_GRACE_MS=${GRACE_MS}): SIGTERM → exit`, unit: 'ms', baselineKey: 'deadlines.bareExit.ms' });

    const stuck = defineBuiltinTool({
      name: 'stuck',
      description: 'never settles',
      input: z.strictObject({}),
      timeoutMs: TOOL_TIMEOUT_MS,
      run: () => new Promise(() => undefined),
    });
    const registry = createToolRegistry([builtinToExecutable(stuck)], { logger: pino({ level: 'silent' }), close: async () => undefined });
    const timerLate: number[] = [];
    const toolLate: number[] = [];
    for (let call = 0; call < TOOL_CALLS; call++) {
      const timerStart = now();
      await sleep(TOOL_TIMEOUT_MS);
      timerLate.push(now() - timerStart - TOOL_TIMEOUT_MS);
      const started = now();
      const result = await registry.execute('stuck', {}, { turnId: 'turn_bench', toolCallId: `call_${call}`, attempt: 1, signal: new AbortController().signal });
      if (result.ok || result.error.code !== 'timeout') throw new Error(`the stuck tool answered ${JSON.stringify(result)}`);
      toolLate.push(now() - started - TOOL_TIMEOUT_MS);
    }
    report.sample('deadlines.timer.lateMs', median(timerLate));
    report.sample('deadlines.tool.lateMs', median(toolLate));

    report.sample('deadlines.bareExit.ms', await bareNodeExit());

    const stack = await startSwitchyard(context, { name: 'deadlines', topology: 'api-and-workers', workers: 1, env: { SHUTDOWN_GRACE_MS: String(GRACE_MS) } });
    try {
      const worker = stack.services.find((service) => service.role === 'worker')!.process;
      report.sample('deadlines.workerExit.ms', await timeToExit(worker.pid, worker.exited));
    } finally {
      await stack.stop();
    }
  },
};

async function timeToExit(pid: number, exited: Promise<unknown>): Promise<number> {
  const started = now();
  process.kill(pid, 'SIGTERM');
  await exited;
  return now() - started;
}

/** SIGTERM → exit of a Node process that does nothing but exit on SIGTERM. */
async function bareNodeExit(): Promise<number> {
  const child = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => process.exit(0)); console.log('ready'); setInterval(() => undefined, 1000);"], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await once(child.stdout, 'data');
  const exited = once(child, 'exit');
  return timeToExit(child.pid!, exited);
}
