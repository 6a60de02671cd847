import { poll } from '../support/poll';
import fs from 'node:fs';
import path from 'node:path';
import { dashboardTargets, type DashboardTarget } from '../support/dashboard-targets';
import { apiClient } from '../support/http';
import { spawnService, type ServiceProcess } from '../support/processes';
import { configForTargets, prometheusMissing, startPrometheus, type PrometheusSample, type PrometheusServer } from '../support/prometheus';
import { describeNeeding } from '../support/required-programs';
import { startTestStack, type TestStack } from '../support/stack';
import { startToolHttpServer, writeToolsDir, type ToolHttpServer } from '../support/tool-servers';
import { scripted } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';
import { WebhookReceiver } from '../support/webhook-receiver';

const GRAFANA = path.resolve(__dirname, '../../grafana');
/** How long Prometheus may take to show what the load did (it scrapes every second). */
const SETTLE_MS = 60_000;

/**
 * The Grafana dashboard against a real Prometheus: separate API and worker processes scraped
 * with the deployment's own scrape configuration (only its targets replaced), a short load with
 * parallel tool calls and failures, then every query of every panel must return data.
 */
describeNeeding(prometheusMissing(), 'the dashboard on a real Prometheus', () => {
  let tools: ToolHttpServer;
  let stack: TestStack;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let prometheus: PrometheusServer;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    tools = await startToolHttpServer();
    tools.route('/broken', { status: 500, body: 'always broken' });
    const toolsDir = await writeToolsDir({
      'tools.json': {
        tools: [
          {
            name: 'broken',
            description: 'a tool whose server always fails',
            url: `${tools.url}/broken`,
            inputSchema: { type: 'object', properties: {} },
            timeoutMs: 2000,
            retries: 1,
          },
        ],
      },
    });
    stack = await startTestStack({ workers: 0, env: { TOOLS_DIR: toolsDir } });
    const env = stack.childEnv({ TOOLS_DIR: toolsDir, PROVIDER_RETRY_BASE_MS: '50', PROVIDER_RETRY_MAX_MS: '200', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    [api, worker] = await Promise.all([spawnService('api', env), spawnService('worker', env)]);
    const config = configForTargets(fs.readFileSync(path.join(GRAFANA, 'prometheus.yml'), 'utf8'), {
      'switchyard-api': [`127.0.0.1:${api.port}`],
      'switchyard-worker': [`127.0.0.1:${worker.port}`],
    });
    prometheus = await startPrometheus(config);
  }, 90_000);

  afterAll(async () => {
    await prometheus?.close();
    await Promise.all([api?.kill(), worker?.kill()]);
    await stack?.close();
    await tools?.close();
    await receiver?.close();
  });

  it('answers every query of every panel with data after a short load', async () => {
    const targets = dashboardTargets(path.join(GRAFANA, 'dashboards'));
    expect(targets.length).toBeGreaterThan(20);
    const unresolved = targets.filter((target) => target.expr.includes('$') || target.expr.includes('[['));
    expect(unresolved.map(describeTarget)).toEqual([]);
    // Job and instance names are the deployment's scrape configuration's (a Kubernetes job, one job
    // for every process): a panel that picks one by name shows nothing under other names.
    const pickingJobs = targets.filter((target) => /\b(job|instance)\s*(=~|!~|!=|=)/.test(target.expr));
    expect(pickingJobs.map(describeTarget)).toEqual([]);

    await eventually('every scrape target is up', async () => {
      const active = await prometheus.activeTargets();
      const jobs = new Set(active.filter((target) => target.health === 'up').map((target) => target.job));
      return jobs.has('switchyard-api') && jobs.has('switchyard-worker') && active.every((target) => target.health === 'up') ? null : JSON.stringify(active);
    });

    await driveLoad();

    // What the load did, in the figures themselves: they must move with the work, not just exist.
    await eventually('the load shows in the figures', async () => {
      const checks: [string, (value: number) => boolean][] = [
        ['sum(switchyard_tool_attempts_total{tool="broken"})', (value) => value === 2],
        ['sum(switchyard_tool_calls_total{tool="calculator", status="succeeded"})', (value) => value === 3],
        ['sum(switchyard_tool_approval_decision_seconds_count{outcome="approved"})', (value) => value === 1],
        ['sum(switchyard_tool_calls_total{tool="broken", status="failed"})', (value) => value === 1],
        ['sum(switchyard_provider_requests_total{status="5xx"})', (value) => value === 1],
        ['sum(switchyard_provider_requests_total{status="4xx"})', (value) => value === 2],
        // The 503's turn, and those running beside it, which wait out the provider's cooldown too.
        ['sum(switchyard_provider_retries_total{kind="server"})', (value) => value >= 1],
        // The 503 and the two 400s (the LLM_* provider is `default`).
        ['sum(switchyard_model_requests_total{provider="default", outcome="failed"})', (value) => value === 3],
        ['sum(switchyard_turns_finished_total{status="failed"})', (value) => value === 2],
        ['sum(switchyard_streamed_tokens_total{kind="reasoning"})', (value) => value > 0],
        ['sum(switchyard_batch_items_started_total)', (value) => value === 2],
        ['sum(switchyard_batch_items_ended_total{status="succeeded"})', (value) => value === 1],
        ['sum(switchyard_batch_items_ended_total{status="failed"})', (value) => value === 1],
        ['sum(switchyard_http_requests_total{status="404"})', (value) => value >= 1],
        ['sum(switchyard_event_relay_lag_seconds_count)', (value) => value > 0],
        ['sum(switchyard_websocket_subscriptions{kind="conversation"})', (value) => value === 4],
        ['sum(switchyard_db_query_duration_seconds_count{job="switchyard-worker"})', (value) => value > 0],
        // The refused turn and the batch's failing item.
        ['sum(switchyard_webhook_deliveries_total{event="turn.failed", outcome="delivered"})', (value) => value === 2],
        ['sum(switchyard_webhook_attempts_total{outcome="success"})', (value) => value === 2],
      ];
      const wrong: string[] = [];
      for (const [expr, expected] of checks) {
        const value = Number((await prometheus.query(expr))[0]?.value[1] ?? NaN);
        if (!expected(value)) wrong.push(`${expr} = ${value}`);
      }
      return wrong.length === 0 ? null : wrong.join('\n');
    });

    // Figures only an API process has are exported only by it: a worker's zeros of them would sit
    // beside the API's figure in every panel (and once made the approvals panel pick a job by name).
    const apiOwned = ['switchyard_tool_approvals_pending', 'switchyard_websocket_clients', 'switchyard_websocket_subscriptions', 'switchyard_batch_submissions_in_flight'];
    for (const metric of apiOwned) {
      const exporters = (await prometheus.query(`count by (job) (${metric})`)).map((sample) => sample.metric.job);
      expect({ metric, exporters }).toEqual({ metric, exporters: ['switchyard-api'] });
    }
    expect(Number((await prometheus.query('max(switchyard_tool_approvals_pending)'))[0]?.value[1])).toBe(0);

    await eventually('every panel query returns data', async () => {
      const empty: string[] = [];
      for (const target of targets) {
        let samples: PrometheusSample[];
        try {
          samples = await prometheus.query(target.expr);
        } catch (error) {
          empty.push(`${describeTarget(target)}: refused: ${(error as Error).message}`);
          continue;
        }
        // A series of NaN (a quantile of nothing) shows nothing on a panel either.
        if (!samples.some((sample) => Number.isFinite(Number(sample.value[1])))) {
          empty.push(`${describeTarget(target)}: ${samples.length === 0 ? 'no series' : 'only NaN'}`);
        }
      }
      return empty.length === 0 ? null : empty.join('\n');
    });
  }, 180_000);

  /** Parallel tool calls (one tool failing after its retry), a provider 503 then success, a provider 400, a 404, a batch. */
  async function driveLoad(): Promise<void> {
    const { apiKey } = await stack.createUser('dashboard');
    const http = apiClient(api.url, apiKey);
    const ws = await TestWsClient.connect(api.url, { apiKey });
    expect((await http.post('/v1/webhooks', { url: receiver.url(), events: ['turn.failed'] })).status).toBe(201);
    const runTurn = async (scenario: unknown) => {
      const conversationId = (await http.post('/v1/conversations', {})).body.id as string;
      ws.send({ type: 'subscribe', conversationId });
      await ws.waitFor((frame) => frame.type === 'subscribed' && frame.conversationId === conversationId);
      const posted = await http.post(`/v1/conversations/${conversationId}/turns`, { content: scripted(scenario) });
      expect(posted.status).toBe(202);
      const turnId = posted.body.turnId as string;
      return (await ws.waitForTurnEnd(turnId, 30_000)).filter((event) => event.turnId === turnId);
    };

    const [toolTurn, retriedTurn, rejectedTurn] = await Promise.all([
      runTurn({
        steps: [
          {
            toolCalls: [
              { name: 'calculator', arguments: { expression: '2+3' } },
              { name: 'calculator', arguments: { expression: '6*7' } },
              { name: 'broken', arguments: {} },
            ],
            interleave: true,
          },
          { text: 'two answers and one failure' },
        ],
      }),
      runTurn({ attempts: [{ error: { status: 503 } }, { reasoning: 'thinking it over', text: 'answered after a retry' }] }),
      runTurn({ error: { status: 400, message: 'this request is refused' } }),
    ]);
    expect(toolTurn.at(-1).type).toBe('turn-finish');
    expect(
      toolTurn
        .filter((event) => event.type === 'tool-result')
        .map((event) => event.error?.code ?? 'ok')
        .sort(),
    ).toEqual(['http_error', 'ok', 'ok'].sort());
    expect(retriedTurn.at(-1).type).toBe('turn-finish');
    expect(rejectedTurn.at(-1).type).toBe('turn-error');
    await receiver.waitFor(1);

    expect((await http.get('/v1/conversations/conv_that_does_not_exist')).status).toBe(404);

    // A call that waits for approval, decided: the pending gauge and the time to decision.
    const gated = (await http.post('/v1/conversations', { requireApproval: ['calculator'] })).body.id as string;
    ws.send({ type: 'subscribe', conversationId: gated });
    await ws.waitFor((frame) => frame.type === 'subscribed' && frame.conversationId === gated);
    const gatedTurn = (
      await http.post(`/v1/conversations/${gated}/turns`, {
        content: scripted({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }, { text: 'two' }] }),
      })
    ).body.turnId as string;
    const approval = await ws.waitFor((frame) => frame.type === 'event' && frame.event.turnId === gatedTurn && frame.event.type === 'tool-approval-request');
    expect((await http.post(`/v1/turns/${gatedTurn}/approvals`, { toolCallId: approval.event.toolCallId, approved: true })).status).toBe(200);
    expect((await ws.waitForTurnEnd(gatedTurn, 30_000)).at(-1).type).toBe('turn-finish');

    const batch = await http.post('/v1/batches', {
      items: [{ messages: ['hello from a batch'] }, { messages: [scripted({ error: { status: 400 } })] }],
    });
    expect(batch.status).toBe(202);
    ws.send({ type: 'subscribe', batchId: batch.body.id });
    expect(await ws.waitFor((frame) => frame.type === 'batch-finish' && frame.batchId === batch.body.id, 30_000)).toMatchObject({
      counts: { succeeded: 1, failed: 1 },
    });
    // The client stays connected with its three subscriptions until the test ends (the gauge shows them).
  }
});

function describeTarget(target: DashboardTarget): string {
  return `${target.dashboard} panel "${target.panel}" ${target.refId}: ${target.rawExpr}`;
}

/** Polls `check` (null: satisfied; else why not) until it is satisfied, failing with its last answer after SETTLE_MS. */
async function eventually(what: string, check: () => Promise<string | null>): Promise<void> {
  let problem: string | null = null;
  await poll(
    () => `${what}: not within ${SETTLE_MS / 1000} s:\n${problem}`,
    async () => (problem = await check()) === null,
    SETTLE_MS,
    250,
  );
}
