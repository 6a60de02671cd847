import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

/**
 * The V8 heap in use right after each major (mark-sweep-compact) collection: what survives
 * GC. Sampled at random moments the heap swings by a hundred MiB between collections under
 * load; after a major collection it moves only when something is retained, so a rise is a leak.
 * One observer for the process, whatever number of registries read it.
 */
let latest: number | undefined;
let observer: PerformanceObserver | undefined;
const listeners = new Set<(bytes: number) => void>();

function watch(): void {
  if (observer) return;
  observer = new PerformanceObserver((list) => {
    const major = list.getEntries().some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
    if (!major) return;
    // Entries are delivered after the collection, so this is the heap it left (plus what was allocated since, little).
    latest = getHeapStatistics().used_heap_size;
    for (const listener of listeners) listener(latest);
  });
  observer.observe({ entryTypes: ['gc'] });
}

/** The heap in use after the process's last major collection; before the first one, now. */
export function heapAfterLastMajorGc(): number {
  watch();
  return latest ?? getHeapStatistics().used_heap_size;
}

/** Calls `listener` after every major collection from now on; returns the unsubscribe. */
export function onMajorGc(listener: (bytes: number) => void): () => void {
  watch();
  listeners.add(listener);
  return () => listeners.delete(listener);
}
