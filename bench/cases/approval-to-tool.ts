import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Benchmark } from '../lib/benchmark';
import { now, withTimeout } from '../lib/clock';
import { scriptedContent } from '../lib/scenario';
import { withSingleLane } from '../lib/single-lane';
import { latencySummary } from '../lib/stats';
import type { ReceivedEvent } from '../lib/timed-ws-client';
import { WORKLOADS } from '../lib/workloads';

const { turnsPerRepetition, turnsPerConversation, warmup } = WORKLOADS.approvalToTool;
const TOOL = 'gated_echo';

/** A tool server in this process: when each call (by its `tag`) arrived, on the suite's clock. */
async function startToolServer(): Promise<{ url: string; arrival(tag: string): Promise<number>; close(): Promise<void> }> {
  const arrivals = new Map<string, number>();
  const waiters = new Map<string, (at: number) => void>();
  const server = http.createServer((request, response) => {
    const arrivedAt = now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const tag = String((JSON.parse(Buffer.concat(chunks).toString() || '{}') as { tag?: unknown }).tag);
      arrivals.set(tag, arrivedAt);
      waiters.get(tag)?.(arrivedAt);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrival: (tag) => {
      const seen = arrivals.get(tag);
      return seen !== undefined ? Promise.resolve(seen) : new Promise((resolve) => waiters.set(tag, resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A call of a tool with `needsApproval`, decided while its turn is parked (no worker holds it):
 * the time from the decision's POST to the tool server receiving the call. The decision resumes
 * the turn through the queue, which runs the call as a tool job.
 */
export const approvalToTool: Benchmark = {
  name: 'approval-to-tool',
  title: 'Tool approval: decision → the tool receives the call',
  kind: 'case',
  timeoutMs: 120_000,
  async run(context, report) {
    report.define('approval.tool.p50', {
      label: 'POST /v1/turns/:id/approvals (approved) → the http tool server receives the call, p50',
      unit: 'ms',
      target: { goal: 'approvals', on: 'value', op: '<=', value: 50 },
    });
    report.define('approval.tool.p99', { label: 'POST /v1/turns/:id/approvals (approved) → the http tool server receives the call, p99', unit: 'ms' });
    report.define('approval.answer.p50', { label: 'POST /v1/turns/:id/approvals → its 200 answer, p50', unit: 'ms' });
    report.note(
      `all-in-one, default settings; ${turnsPerRepetition} sequential turns per repetition, a new conversation every ${turnsPerConversation}, each a step ` +
        `with one call of an http tool declared \`needsApproval\` (a server in the bench process), approved once \`turn-waiting\` says the turn is parked.`,
    );
    const tools = await startToolServer();
    const toolsDir = path.join(context.tempDir, 'approval-tools');
    fs.mkdirSync(toolsDir, { recursive: true });
    const tool = {
      name: TOOL,
      description: 'Echoes; every call waits for approval',
      url: `${tools.url}/echo`,
      needsApproval: true,
      retries: 0,
      fields: [{ name: 'tag', required: true }],
    };
    fs.writeFileSync(path.join(toolsDir, 'gated.json'), JSON.stringify(tool));
    try {
      await withSingleLane(
        context,
        { name: 'approval-to-tool', topology: 'all-in-one', turnsPerConversation, env: { TOOLS_DIR: toolsDir } },
        async ({ api, client, tracker, lane }) => {
          // The tracker times turns; this listener also catches each turn's park.
          const parkWaiters = new Map<string, (request: ReceivedEvent) => void>();
          const requests = new Map<string, ReceivedEvent>();
          // A turn may park before its POST is answered.
          const parked = new Map<string, ReceivedEvent>();
          const tracked = client.onEvent;
          client.onEvent = (event, receivedAt) => {
            tracked?.(event, receivedAt);
            if (event.type === 'tool-approval-request') requests.set(event.turnId, event);
            if (event.type !== 'turn-waiting') return;
            parked.set(event.turnId, requests.get(event.turnId)!);
            parkWaiters.get(event.turnId)?.(requests.get(event.turnId)!);
          };
          const parkOf = (turnId: string) => {
            const seen = parked.get(turnId);
            const park = seen ? Promise.resolve(seen) : new Promise<ReceivedEvent>((resolve) => parkWaiters.set(turnId, resolve));
            return withTimeout(park, 30_000, `turn ${turnId} parking on its approval`).finally(() => {
              parkWaiters.delete(turnId);
              parked.delete(turnId);
              requests.delete(turnId);
            });
          };
          let turnCount = 0;
          const oneTurn = async () => {
            const tag = `call-${turnCount++}`;
            const conversationId = await lane.next();
            const ended = tracker.begin(conversationId);
            const content = scriptedContent({ steps: [{ toolCalls: [{ name: TOOL, arguments: { tag } }] }, { text: 'ok' }] });
            const turnId = await api.postTurn(conversationId, content);
            const request = await parkOf(turnId);
            const decidedAt = now();
            const arrived = tools.arrival(tag);
            const decision = await api.request('POST', `/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
            const answeredAt = now();
            if (decision.status !== 200) throw new Error(`the decision answered ${decision.status}: ${JSON.stringify(decision.body)}`);
            const toolAt = await withTimeout(arrived, 30_000, `the tool call of turn ${turnId}`);
            const timing = await ended;
            if (timing.endType !== 'turn-finish') throw new Error(`a turn ended with ${timing.endType}`);
            return { toTool: toolAt - decidedAt, answer: answeredAt - decidedAt };
          };
          for (let index = 0; index < warmup; index++) await oneTurn();
          for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
            const toTool: number[] = [];
            const answers: number[] = [];
            for (let index = 0; index < turnsPerRepetition; index++) {
              const sample = await oneTurn();
              toTool.push(sample.toTool);
              answers.push(sample.answer);
            }
            const summary = latencySummary(toTool);
            report.sample('approval.tool.p50', summary.p50);
            report.sample('approval.tool.p99', summary.p99);
            report.sample('approval.answer.p50', latencySummary(answers).p50);
          }
        },
      );
    } finally {
      await tools.close();
    }
  },
};
