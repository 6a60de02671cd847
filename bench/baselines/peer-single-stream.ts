import type { Benchmark } from '../lib/benchmark';
import { startAiSdkPeer } from '../lib/ai-sdk-peer-process';
import { CpuMeter } from '../lib/cpu-meter';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { UiChatClient } from '../lib/ui-chat-client';
import { WORKLOADS } from '../lib/workloads';

const { tokens, warmup } = WORKLOADS.singleStream;

/** The peer of (2): one long answer through the AI SDK + resumable-stream chat route, read as its client reads it. */
export const peerSingleStream: Benchmark = {
  name: 'peer-single-stream',
  title: `Peer (AI SDK streamText + resumable-stream): one ${tokens}-token stream`,
  kind: 'baseline',
  baselines: ['sdk-single-stream'],
  timeoutMs: 60_000,
  async run(context, report) {
    report.define('peer.single.tokensPerSecond', {
      label: 'tokens/s (scenario tokens ÷ POST → last text-delta chunk)',
      unit: 'tokens/s',
      baselineKey: 'sdk.single.tokensPerSecond',
    });
    report.define('peer.single.charsPerSecond', { label: 'characters/s (POST → last text-delta chunk)', unit: 'chars/s', baselineKey: 'sdk.single.charsPerSecond' });
    report.define('peer.single.firstTokenMs', { label: 'POST → first text-delta chunk', unit: 'ms', baselineKey: 'sdk.single.firstTokenMs' });
    report.define('peer.single.totalMs', { label: 'POST → end of the response', unit: 'ms', baselineKey: 'sdk.single.totalMs' });
    report.define('peer.single.textChunks', { label: 'text-delta chunks received', unit: 'chunks' });
    report.define('peer.single.textChars', { label: 'characters of text received', unit: 'chars', baselineKey: 'sdk.single.textChars' });
    report.note(`the peer of "Peer: time to first token"; one turn of ${tokens} filler tokens with no pause per repetition, a new chat each time.`);
    const peer = await startAiSdkPeer(context, 'peer-single');
    const client = new UiChatClient(peer.url);
    try {
      const content = scriptedContent(fillerTokens(tokens));
      let chat = 0;
      const oneTurn = () => client.post(`chat-${chat++}`, content);
      for (let index = 0; index < warmup; index++) await oneTurn();
      const meter = await CpuMeter.start([
        { name: 'peer', pid: peer.pid },
        { name: 'scripted model', pid: context.scriptedModelPid },
      ]);
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const timing = await oneTurn();
        const seconds = (timing.lastTextAt! - timing.startedAt) / 1000;
        report.sample('peer.single.tokensPerSecond', tokens / seconds);
        report.sample('peer.single.charsPerSecond', timing.textChars / seconds);
        report.sample('peer.single.firstTokenMs', timing.firstTextAt! - timing.startedAt);
        report.sample('peer.single.totalMs', timing.endedAt - timing.startedAt);
        report.sample('peer.single.textChunks', timing.textChunks);
        report.sample('peer.single.textChars', timing.textChars);
      }
      report.note(await meter.stop('CPU while measuring', { count: (context.options.repetitions * tokens) / 1000, unit: '1,000 tokens' }));
    } finally {
      client.close();
      await peer.stop();
    }
  },
};
