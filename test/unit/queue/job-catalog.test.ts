import { JOB_CATALOG, jobOptions, queuePayloads, TOOL_QUEUE, type JobName } from '../../../src/queue/job-catalog';

const WEEK_S = 7 * 24 * 3600;
const SWITCHYARD_RETRIES = { attempts: 5, backoff: { type: 'exponential', delay: 1000 } };

/** A well-formed payload of every kind of job. */
const samples: { [Name in JobName]: unknown } = {
  'run-turn': { turnId: 't1', conversationId: 'c1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  'continue-turn': { turnId: 't1' },
  'run-tool': { kind: 'run-tool', turnId: 't1', toolCallId: 'call_1', approved: true },
  invoke: { kind: 'invoke', invocationId: 'inv_1' },
  'client-timeout': { kind: 'client-timeout', turnId: 't1', toolCallId: 'call_1' },
  'approval-timeout': { kind: 'approval-timeout', turnId: 't1', toolCallId: 'call_1' },
  deliver: { deliveryId: 'd1', redeliveredAt: null },
};
const names = Object.keys(JOB_CATALOG) as JobName[];

describe('the job catalog', () => {
  it.each([
    ['run-turn', { ...SWITCHYARD_RETRIES, removeOnComplete: true, removeOnFail: { age: WEEK_S } }],
    ['continue-turn', { ...SWITCHYARD_RETRIES, removeOnComplete: true, removeOnFail: { age: WEEK_S } }],
    ['run-tool', { ...SWITCHYARD_RETRIES, removeOnComplete: true, removeOnFail: { age: WEEK_S } }],
    ['invoke', { ...SWITCHYARD_RETRIES, removeOnComplete: { age: 3600 }, removeOnFail: { age: WEEK_S } }],
    ['client-timeout', { attempts: 1, removeOnComplete: true, removeOnFail: { age: 24 * 3600 } }],
    ['approval-timeout', { attempts: 1, removeOnComplete: true, removeOnFail: { age: 24 * 3600 } }],
    ['deliver', { ...SWITCHYARD_RETRIES, removeOnComplete: true, removeOnFail: true }],
  ] as const)('gives a %s job its attempts, backoff and retention', (name, policy) => {
    expect(jobOptions(name, { jobId: 'job-1' })).toEqual({ ...policy, jobId: 'job-1' });
  });

  it("adds a job's own id, delay and priority to its kind's options", () => {
    expect(jobOptions('run-turn', { jobId: 'turn-1', delay: 250, priority: 3 })).toMatchObject({ jobId: 'turn-1', delay: 250, priority: 3, attempts: 5 });
  });

  it('lists every kind of job, and each goes on at least one queue', () => {
    expect(names.sort()).toEqual(['approval-timeout', 'client-timeout', 'continue-turn', 'deliver', 'invoke', 'run-tool', 'run-turn']);
    for (const name of names) expect(JOB_CATALOG[name].queues.length).toBeGreaterThan(0);
  });

  it('parses every job with the payload of each queue it goes on, as the worker of that queue does', () => {
    for (const name of names) {
      expect(JOB_CATALOG[name].payload.safeParse(samples[name]).success).toBe(true);
      for (const queue of JOB_CATALOG[name].queues) expect(queuePayloads[queue].safeParse(samples[name])).toMatchObject({ success: true, data: samples[name] });
    }
  });

  it("tells the tool queue's jobs apart by their data: each one's kind is its job name", () => {
    const toolJobs = names.filter((name) => JOB_CATALOG[name].queues.some((queue) => queue === TOOL_QUEUE));
    expect(toolJobs.sort()).toEqual(['approval-timeout', 'client-timeout', 'invoke', 'run-tool']);
    for (const name of toolJobs) expect(queuePayloads[TOOL_QUEUE].parse(samples[name])).toMatchObject({ kind: name });
    expect(queuePayloads[TOOL_QUEUE].safeParse({ ...(samples.invoke as object), kind: 'run-turn' }).success).toBe(false);
  });

  it('refuses a payload without its ids, so that the worker fails the job as malformed', () => {
    expect(queuePayloads.turns.safeParse({ turnId: '' }).success).toBe(false);
    expect(queuePayloads.tools.safeParse({ kind: 'run-tool', turnId: 't1' }).success).toBe(false);
    expect(queuePayloads.webhooks.safeParse({ redeliveredAt: 5 }).success).toBe(false);
  });

  it('reads a delivery job added before runs were named as the event’s run', () => {
    expect(queuePayloads.webhooks.parse({ deliveryId: 'd1' })).toEqual({ deliveryId: 'd1', redeliveredAt: null });
  });

  it("times a tool job by its tool's executions, and no other job", () => {
    const tool = { timeoutMs: 1000, retries: 2 };
    expect(JOB_CATALOG['run-tool'].timeoutMs(tool)).toBe(3 * 1000 + 500 + 1000);
    expect(JOB_CATALOG.invoke.timeoutMs(tool)).toBe(3 * 1000 + 500 + 1000);
    for (const name of ['run-turn', 'continue-turn', 'client-timeout', 'approval-timeout', 'deliver'] as const) expect(JOB_CATALOG[name].timeoutMs).toBeNull();
  });
});
