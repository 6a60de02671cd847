import type { Writable } from 'node:stream';

/** A held stream flushes early once this much waits, so a long replay never sits in memory. */
const FLUSH_AT_BYTES = 64 * 1024;

/**
 * Returns `hold()`, to call before each write to `stream`: it corks the stream until the end of
 * the current tick, so that what one tick writes (the events of one pub/sub read, a page of a
 * replay) leaves in one system call rather than one each. A socket write costs tens of
 * microseconds of CPU on a loopback or a VM, whatever its size, and a turn's events come in
 * bursts. The writes still leave in their order, before any I/O callback of the next tick.
 */
export function writesPerTick(stream: Pick<Writable, 'cork' | 'uncork' | 'writableLength'>): () => void {
  let held = false;
  const release = () => {
    held = false;
    stream.uncork();
  };
  return () => {
    if (!held) {
      held = true;
      stream.cork();
      process.nextTick(release);
    } else if (stream.writableLength >= FLUSH_AT_BYTES) {
      stream.uncork();
      stream.cork();
    }
  };
}
