/**
 * Asks `check` again every `intervalMs` (default 50) until it holds; throws `failure` past
 * `timeoutMs` (default 10000). Polling a server's state is the one wait with no event to wait for.
 */
export async function poll(failure: string | (() => string), check: () => Promise<boolean> | boolean, timeoutMs = 10_000, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(typeof failure === 'string' ? failure : failure());
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
