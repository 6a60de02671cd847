/** A pass started by `startPeriodicPass`: `stop()` ends the repeats and resolves when the pass under way has finished. */
export interface PeriodicPass {
  stop(): Promise<void>;
}

/**
 * Runs `pass` every `intervalMs` (and once at once with `atStart`), never two at once: the next
 * pass is timed from the end of the one before, so a pass slower than its interval delays the
 * next instead of queueing passes behind it. A pass that answers `true` has more to do: the next
 * starts at once. One that answers a number of milliseconds knows when it next has work: the next
 * starts then, or after `intervalMs` if that comes first. A pass that throws goes to `onError`
 * and the next pass runs as planned. The timer does not keep the process alive.
 */
export function startPeriodicPass(
  pass: () => Promise<boolean | number | void>,
  options: { intervalMs: number; atStart?: boolean; onError: (error: unknown) => void },
): PeriodicPass {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    if (stopped) return;
    running = pass().then(
      (more) => {
        if (!stopped) schedule(more === true ? 0 : typeof more === 'number' ? Math.min(Math.max(0, more), options.intervalMs) : options.intervalMs);
      },
      (error: unknown) => {
        options.onError(error);
        if (!stopped) schedule(options.intervalMs);
      },
    );
  };
  const schedule = (delayMs: number) => {
    timer = setTimeout(run, delayMs);
    timer.unref();
  };
  if (options.atStart) run();
  else schedule(options.intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
