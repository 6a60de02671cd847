import type { Benchmark } from '../lib/benchmark';
import { CpuMeter } from '../lib/cpu-meter';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { startSwitchyard } from '../lib/switchyard-stack';
import { UiChatClient, useChatBody } from '../lib/ui-chat-client';
import { WORKLOADS } from '../lib/workloads';

const { tokens, turnsPerRepetition, turnsPerConversation, warmup } = WORKLOADS.ttft;

/**
 * POST /api/chat (what `useChat` sends) → the first `text-delta` chunk of its UI message
 * stream, one turn at a time, against the direct SDK's time to first token for the same answer.
 */
export const chatTimeToFirstToken: Benchmark = {
  name: 'chat-ttft',
  title: 'Time to first text chunk through /api/chat (useChat)',
  kind: 'case',
  baselines: ['sdk-ttft'],
  timeoutMs: 180_000,
  async run(context, report) {
    report.define('chat.ttft.p50', { label: 'POST /api/chat → first text-delta chunk, p50', unit: 'ms', baselineKey: 'sdk.ttft.p50' });
    report.define('chat.ttft.p99', { label: 'POST /api/chat → first text-delta chunk, p99', unit: 'ms', baselineKey: 'sdk.ttft.p99' });
    report.note(
      `all-in-one, default settings; ${turnsPerRepetition} sequential chat messages of ${tokens} tokens per repetition, each stream read to ` +
        `its end; a new chat every ${turnsPerConversation} messages (its first message makes the conversation, as in a real app).`,
    );
    const stack = await startSwitchyard(context, { name: 'chat-ttft', topology: 'all-in-one' });
    const chat = new UiChatClient(stack.url, { apiKey: stack.apiKey, body: useChatBody });
    const content = scriptedContent(fillerTokens(tokens));
    let sent = 0;
    const oneMessage = async (): Promise<number> => {
      // A new chat every few messages: its first message makes the conversation.
      const timing = await chat.post(`bench-chat-${Math.floor(sent++ / turnsPerConversation)}`, content);
      return timing.firstTextAt! - timing.startedAt;
    };
    try {
      for (let index = 0; index < warmup; index++) await oneMessage();
      const meter = await CpuMeter.start(stack.meteredProcesses());
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const latencies: number[] = [];
        for (let index = 0; index < turnsPerRepetition; index++) latencies.push(await oneMessage());
        const summary = latencySummary(latencies);
        report.sample('chat.ttft.p50', summary.p50);
        report.sample('chat.ttft.p99', summary.p99);
      }
      report.note(await meter.stop('CPU while measuring', { count: sent - warmup, unit: 'message' }));
    } finally {
      chat.close();
      await stack.stop();
    }
  },
};
