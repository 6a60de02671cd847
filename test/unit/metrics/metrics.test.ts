import { createMetrics } from '../../../src/metrics/metrics';

describe('createMetrics', () => {
  it('creates the label sets it knows at 0, so that panels show 0 before the first event', async () => {
    const metrics = createMetrics();
    const page = await metrics.registry.metrics();
    expect(page).toContain('switchyard_provider_requests_total{status="5xx"} 0');
    expect(page).toContain('switchyard_provider_retries_total{kind="rate_limited"} 0');
    expect(page).toContain('switchyard_slow_consumer_disconnects_total{transport="sse"} 0');
    expect(page).toContain('switchyard_batch_items_ended_total{status="failed"} 0');
    expect(page).toContain('switchyard_streamed_tokens_total{kind="text"} 0');
  });

  it('labels tools by the names registered, and every other name as other', async () => {
    const metrics = createMetrics();
    metrics.registerTools(['calculator', 'get_weather']);
    expect(metrics.toolLabel('calculator')).toBe('calculator');
    expect(metrics.toolLabel('call_8f2a_anything_a_model_made_up')).toBe('other');
    const page = await metrics.registry.metrics();
    expect(page).toContain('switchyard_tool_calls_total{tool="get_weather",status="failed"} 0');
    expect(page).toContain('switchyard_tool_duration_seconds_count{tool="other"} 0');
    expect(page).toContain('switchyard_tool_attempts_total{tool="calculator"} 0');
  });

  it('reads queue counts from Redis at most once a second, however often it is scraped', async () => {
    let clock = 1_000_000;
    const metrics = createMetrics({ now: () => clock });
    let reads = 0;
    metrics.watchQueues([{ name: 'turns', getJobCounts: async () => ({ waiting: ++reads }) }]);
    await metrics.registry.metrics();
    clock += 999;
    const cached = await metrics.registry.metrics();
    expect(reads).toBe(1);
    expect(cached).toContain('switchyard_queue_jobs{queue="turns",state="waiting"} 1');
    clock += 1;
    expect(await metrics.registry.metrics()).toContain('switchyard_queue_jobs{queue="turns",state="waiting"} 2');
  });

  it('still serves its page while Redis does not answer, without the queue figures', async () => {
    let clock = 1_000_000;
    const metrics = createMetrics({ now: () => clock });
    let up = true;
    metrics.watchQueues([{ name: 'turns', getJobCounts: async () => (up ? { waiting: 3 } : Promise.reject(new Error('down'))) }]);
    expect(await metrics.registry.metrics()).toContain('switchyard_queue_jobs{queue="turns",state="waiting"} 3');
    up = false;
    clock += 1000;
    const page = await metrics.registry.metrics();
    expect(page).not.toContain('switchyard_queue_jobs{');
    expect(page).toContain('switchyard_turns_started_total 0');
  });
});
