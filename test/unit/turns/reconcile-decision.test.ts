import type { ObservedJob } from '../../../src/queue/job-states';
import { decideReconcile } from '../../../src/turns/reconcile-decision';

const job = (state: ObservedJob['state'], failedReason?: string): ObservedJob => ({ id: 'j', state, ...(failedReason ? { failedReason } : {}) });
const running = { status: 'running', awaiting: null } as const;

describe('decideReconcile', () => {
  it('leaves a turn alone while any of its jobs is alive', () => {
    expect(decideReconcile(running, { turnJobs: [job('unknown'), job('live')], clientTimeouts: [] })).toEqual({ kind: 'none' });
  });

  it('enqueues a turn that no job will move on (Redis lost it, or it was never enqueued)', () => {
    expect(decideReconcile(running, { turnJobs: [job('unknown'), job('unknown')], clientTimeouts: [] })).toEqual({ kind: 'enqueue' });
    expect(decideReconcile({ status: 'queued', awaiting: null }, { turnJobs: [job('completed')], clientTimeouts: [] })).toEqual({ kind: 'enqueue' });
    expect(decideReconcile({ status: 'waiting_tools', awaiting: 'tools' }, { turnJobs: [job('unknown')], clientTimeouts: [] })).toEqual({ kind: 'enqueue' });
  });

  it('ends a turn whose job failed for good, as stalled when the workers kept dying', () => {
    expect(decideReconcile(running, { turnJobs: [job('failed', 'job stalled more than allowable limit')], clientTimeouts: [] })).toMatchObject({
      kind: 'fail',
      error: { code: 'stalled' },
    });
    expect(decideReconcile(running, { turnJobs: [job('failed', 'internal: boom')], clientTimeouts: [] })).toMatchObject({ kind: 'fail', error: { code: 'internal' } });
  });

  it('runs a job again that used up its attempts while PostgreSQL or Redis was away', () => {
    for (const reason of ['backend_unavailable: postgres is unavailable: Connection terminated unexpectedly', 'backend_unavailable: connect ECONNREFUSED 127.0.0.1:6379']) {
      expect(decideReconcile(running, { turnJobs: [job('unknown'), { id: 'turn-x-s1', state: 'failed', failedReason: reason }], clientTimeouts: [] })).toEqual({
        kind: 'retry',
        jobId: 'turn-x-s1',
      });
    }
  });

  it('leaves a turn waiting for client answers alone while their timeouts are armed, and re-arms lost ones', () => {
    const waiting = { status: 'waiting_tools', awaiting: 'clients' } as const;
    expect(decideReconcile(waiting, { turnJobs: [job('unknown')], clientTimeouts: [job('live'), job('live')] })).toEqual({ kind: 'none' });
    expect(decideReconcile(waiting, { turnJobs: [job('unknown')], clientTimeouts: [job('live'), job('unknown')] })).toEqual({ kind: 'enqueue' });
  });

  it('enqueues a turn waiting for client answers that has them all (the process that stored the last one died before resuming it)', () => {
    const waiting = { status: 'waiting_tools', awaiting: 'clients' } as const;
    expect(decideReconcile(waiting, { turnJobs: [job('unknown'), job('unknown'), job('unknown')], clientTimeouts: [] })).toEqual({ kind: 'enqueue' });
    // Its resume is on its way: left to it.
    expect(decideReconcile(waiting, { turnJobs: [job('unknown'), job('unknown'), job('live')], clientTimeouts: [] })).toEqual({ kind: 'none' });
  });

  it("treats a turn waiting for approvals as one waiting for answers: left alone while expiries and approved calls' jobs are live", () => {
    const waiting = { status: 'waiting_tools', awaiting: 'approvals' } as const;
    expect(decideReconcile(waiting, { turnJobs: [job('unknown')], clientTimeouts: [job('live')] })).toEqual({ kind: 'none' });
    // An approved call whose job never went out (its deciding process died): a run sends it.
    expect(decideReconcile(waiting, { turnJobs: [job('unknown')], clientTimeouts: [job('unknown')] })).toEqual({ kind: 'enqueue' });
  });
});
