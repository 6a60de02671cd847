import { LockManager, Worker } from 'bullmq';

/**
 * A BullMQ worker that keeps renewing the lock of a job it runs again while it still unwinds the
 * run that lost the job.
 *
 * BullMQ renews the locks of the jobs a worker runs by job id, and a run that ends stops the
 * renewal of its id, whichever run of that id is then being renewed. After a Redis outage longer
 * than a lock, the stalled check hands a job back while the run that lost it is still stopping
 * (its stream aborted, its ledger line being written), and this same worker may take the job
 * again at once: the old run's end then stopped the new run's renewals, its lock lapsed, the job
 * stalled again, and so on, a new attempt each time (each a billed provider call, discarded),
 * until the turn failed `stalled`. Here a run's end stops the renewal only when no other run of
 * the job is inside the processor.
 */
export class LockKeepingWorker extends Worker {
  /** Runs of each job id inside the processor now (two at most: one stopping, one that took over). */
  private runsInside: Map<string, number> | undefined;

  protected override createLockManager(): void {
    super.createLockManager();
    const locks = this.lockManager;
    const untrack = LockManager.prototype.untrackJob.bind(locks);
    locks.untrackJob = (jobId: string) => {
      if ((this.runsInside?.get(jobId) ?? 0) > 0) return;
      untrack(jobId);
    };
  }

  /** Counts a run of `jobId` in until the returned function is called, once, as the run leaves the processor. */
  enterRun(jobId: string): () => void {
    // Not a field initialiser: BullMQ's constructor makes the lock manager before those run.
    const inside = (this.runsInside ??= new Map());
    inside.set(jobId, (inside.get(jobId) ?? 0) + 1);
    return () => {
      const left = (inside.get(jobId) ?? 1) - 1;
      if (left > 0) inside.set(jobId, left);
      else inside.delete(jobId);
    };
  }
}
