import type { RunningWorker } from '../../src/runtime/start-worker';
import { spawnService, type ServiceProcess } from './processes';
import type { TestStack } from './stack';

/**
 * The API and worker processes a fault test starts on a stack, to be killed or signalled, and
 * stopped after each test whatever the test did to them (`stopAll`, from `afterEach`).
 */
export interface FaultProcesses {
  /** A real `npm run api` / `npm run worker` process on the stack (`env` on top of its own). */
  spawn(kind: 'api' | 'worker', env?: Record<string, string>): Promise<ServiceProcess>;
  /** A process started some other way (say, on a stack of the test's own), stopped with the rest. */
  track(child: ServiceProcess): ServiceProcess;
  /** A worker in this process: for the ones that stay, as only the ones that stop need to be real processes. */
  addWorker(): Promise<RunningWorker>;
  /** SIGKILL to every real process, then the workers in this process stop. */
  stopAll(): Promise<void>;
}

/** `stack` is read when a process starts: tests usually create theirs in `beforeAll`. */
export function faultProcesses(stack: () => TestStack): FaultProcesses {
  const children: ServiceProcess[] = [];
  const inProcess: RunningWorker[] = [];
  const track = (child: ServiceProcess) => {
    children.push(child);
    return child;
  };
  return {
    spawn: async (kind, env = {}) => track(await spawnService(kind, stack().childEnv(env))),
    track,
    async addWorker() {
      const worker = await stack().addWorker();
      inProcess.push(worker);
      return worker;
    },
    async stopAll() {
      await Promise.all(children.splice(0).map((child) => child.kill('SIGKILL')));
      for (const worker of inProcess.splice(0)) await stack().stopWorker(worker);
    },
  };
}
