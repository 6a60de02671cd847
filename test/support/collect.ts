/**
 * Every item of an async iterable (an SDK's stream), in order; `onEach` runs after each one is
 * taken, before the next is read (Array.fromAsync is not in Node 20).
 */
export async function collect<T>(items: AsyncIterable<T>, onEach?: (item: T) => Promise<void>): Promise<T[]> {
  const taken: T[] = [];
  for await (const item of items) {
    taken.push(item);
    await onEach?.(item);
  }
  return taken;
}
