import { countTokens as countO200k } from 'gpt-tokenizer';
import { countTokens as countCl100k } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import type OpenAI from 'openai';
import type { ChatMessage, ToolDefinition } from '../../src/providers/model-provider';
import { countCorrection } from '../../src/turns/compaction-plan';
import { estimatePromptTokens } from '../../src/usage/usage-estimate';
import type { Benchmark } from '../lib/benchmark';
import { createDirectClient } from '../lib/direct-stream';
import { estimateConversations } from '../lib/estimate-conversations';
import { median } from '../lib/stats';

/** A prompt counted another way than the estimate: what the estimate is measured against. */
interface Reference {
  key: string;
  label: string;
  count: (messages: ChatMessage[], tools: ToolDefinition[]) => Promise<number> | number;
}

/**
 * How far the compaction trigger's count (docs/guides/long-conversations.md) is from what a
 * provider counts: the o200k estimate of each step's request, alone and corrected by the ratio
 * of the provider's count to the estimate on the step before (as a turn corrects it, bounded to
 * 0.25–4), against three counts of the same request. Every conversation is sent step by step,
 * each prefix ending where a model would answer.
 */
export const tokenEstimate: Benchmark = {
  name: 'token-estimate',
  title: "The compaction trigger's token estimate against providers' counts",
  kind: 'case',
  timeoutMs: () => 120_000,
  async run(context, report) {
    const client = createDirectClient(context.scriptedModelUrl);
    const references: Reference[] = [
      {
        key: 'scripted',
        label: "the scripted model's reported prompt_tokens (words and symbols, 3 a message)",
        count: async (messages, tools) => {
          const answer = await client.chat.completions.create({
            model: 'scripted',
            messages: messages as OpenAI.ChatCompletionMessageParam[],
            ...(tools.length > 0
              ? { tools: tools.map((tool) => ({ type: 'function' as const, function: { name: tool.name, description: tool.description, parameters: tool.inputSchema } })) }
              : {}),
          });
          return answer.usage!.prompt_tokens;
        },
      },
      { key: 'o200k', label: "o200k in OpenAI's chat framing (gpt-4o's vocabulary)", count: (messages, tools) => framedCount(messages, tools, countO200k) },
      { key: 'cl100k', label: "cl100k in OpenAI's chat framing (gpt-4's vocabulary)", count: (messages, tools) => framedCount(messages, tools, countCl100k) },
    ];
    const conversations = estimateConversations();
    const requests = conversations.reduce((total, conversation) => total + conversation.steps.length, 0);
    report.note(
      `${conversations.length} conversations (${conversations.map((conversation) => conversation.name).join('; ')}), ${requests} requests: each step's request is ` +
        "the conversation's messages up to a user or tool message, with the conversation's tools. Error = (estimate − reference) ÷ reference, per request; " +
        '"corrected": the estimate times the reference over the estimate of the same conversation\'s previous request, bounded to 0.25–4, ' +
        "as a turn corrects its count (a conversation's first request has nothing to correct it: it is only in the uncorrected figures). " +
        'Percentiles of |error|; bias = median signed error; undercount: the request counted that much more than estimated (what passes a trigger unseen).',
    );
    report.note(
      "OpenAI's chat framing: 3 tokens a message, its role and text, each tool call's name and arguments, 3 to prime the answer, the tools' JSON; " +
        'the documented recipe for chat models, not the provider itself (its tools are counted in a format of its own).',
    );
    for (const reference of references) {
      for (const corrected of [false, true]) {
        const which = corrected ? 'corrected' : 'raw';
        const what = corrected
          ? `corrected estimate (each request after a conversation's first) against ${reference.label}`
          : `uncorrected estimate (every request) against ${reference.label}`;
        report.define(`estimate.${reference.key}.${which}.p50`, { label: `${what}: |error| p50`, unit: '%' });
        report.define(`estimate.${reference.key}.${which}.p95`, { label: `${what}: |error| p95`, unit: '%' });
        report.define(`estimate.${reference.key}.${which}.bias`, { label: `${what}: bias (median signed error)`, unit: '%' });
        report.define(`estimate.${reference.key}.${which}.under`, { label: `${what}: largest undercount`, unit: '%' });
        report.define(`estimate.${reference.key}.${which}.over`, { label: `${what}: largest overcount`, unit: '%' });
      }
    }
    // The counts do not vary between repetitions: one pass.
    for (const reference of references) {
      const raw: number[] = [];
      const corrected: { error: number; at: string }[] = [];
      for (const conversation of conversations) {
        let previous: { reported: number; counted: number } | null = null;
        for (const [index, step] of conversation.steps.entries()) {
          const estimate = estimatePromptTokens({ messages: step, tools: conversation.tools });
          const counted = await reference.count(step, conversation.tools);
          const error = (value: number) => (100 * (value - counted)) / counted;
          raw.push(error(estimate));
          // A conversation's first request has nothing to be corrected by: it is the raw figure.
          if (previous) corrected.push({ error: error(Math.ceil(estimate * countCorrection(previous))), at: `${conversation.name}, request ${index + 1}` });
          previous = { reported: counted, counted: estimate };
        }
      }
      for (const [which, errors] of [
        ['raw', raw],
        ['corrected', corrected.map((each) => each.error)],
      ] as const) {
        const absolute = errors.map(Math.abs).sort((a, b) => a - b);
        report.sample(`estimate.${reference.key}.${which}.p50`, percentile(absolute, 0.5));
        report.sample(`estimate.${reference.key}.${which}.p95`, percentile(absolute, 0.95));
        report.sample(`estimate.${reference.key}.${which}.bias`, median(errors));
        report.sample(`estimate.${reference.key}.${which}.under`, Math.max(0, -Math.min(...errors)));
        report.sample(`estimate.${reference.key}.${which}.over`, Math.max(0, Math.max(...errors)));
      }
      const far = [...corrected].sort((a, b) => Math.abs(b.error) - Math.abs(a.error)).slice(0, 3);
      report.note(`against ${reference.label}, the corrected estimate's largest errors: ${far.map((each) => `${each.error.toFixed(1)}% (${each.at})`).join('; ')}`);
    }
  },
};

/** OpenAI's documented count of a chat request (openai-cookbook, "How to count tokens"), with `count`'s vocabulary. */
function framedCount(messages: ChatMessage[], tools: ToolDefinition[], count: (text: string) => number): number {
  let tokens = 3;
  for (const message of messages) {
    tokens += 3 + count(message.role) + count(textOf(message.content));
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) tokens += 3 + count(call.function.name) + count(call.function.arguments);
  }
  if (tools.length > 0) tokens += count(JSON.stringify(tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.inputSchema }))));
  return tokens;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: { type: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : '')).join('\n');
  return '';
}

/** The nearest-rank percentile of sorted values. */
function percentile(sorted: number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))]!;
}
