import childProcess from 'node:child_process';

/**
 * For the `integration` project (`npm run test:quick` runs it): its tests start no process. One
 * that tries is refused, and its file fails, naming what it started: it belongs in jest.config.js's
 * STARTS_PROCESSES, which `npm test` runs in the `processes` project.
 */
const FUNCTIONS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
const originals = Object.fromEntries(FUNCTIONS.map((name) => [name, childProcess[name]]));
const started: string[] = [];

for (const name of FUNCTIONS) {
  Object.assign(childProcess, {
    [name]: (command: string, args?: unknown) => {
      const line = [command, ...(Array.isArray(args) ? args : [])].join(' ');
      started.push(line);
      throw new Error(`this test starts a process (${line}): list its file in jest.config.js's STARTS_PROCESSES`);
    },
  });
}

afterAll(() => {
  // The module is the worker's own, which runs other projects' files next.
  Object.assign(childProcess, originals);
  if (started.length > 0)
    throw new Error(`this file started processes, which the integration project runs none of: list it in jest.config.js's STARTS_PROCESSES (${started.join('; ')})`);
});
