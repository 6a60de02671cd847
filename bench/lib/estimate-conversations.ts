import type { ChatMessage, ToolDefinition } from '../../src/providers/model-provider';

/**
 * Conversations of several kinds for the token-estimate case: each as the requests its steps
 * would send (the messages up to each user message, or to the last result of a step's tool
 * calls), with the tools it offers. Deterministic: the same text every run.
 */
export interface EstimateConversation {
  name: string;
  tools: ToolDefinition[];
  steps: ChatMessage[][];
}

const PROSE =
  'The committee reviewed the quarterly figures and found that shipping costs had risen faster than expected, mostly because ' +
  'of fuel surcharges and a change of carrier in the northern region. Several members asked whether the new contract could be ' +
  'renegotiated before the summer, when volumes peak; the finance lead thought it unlikely but promised to ask. ';
const CODE = `export function mergeIntervals(intervals: [number, number][]): [number, number][] {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [start, end] of sorted) {
    const last = merged.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}
`;
const OTHER_SCRIPTS = [
  'Der Bericht beschreibt die Änderungen am Straßennetz, die Überführung über die Bahnlinie und die Kosten für 2027.',
  '会议讨论了下一季度的预算，以及新员工的培训计划。大家同意在五月之前完成初稿。',
  'Заседание перенесли на четверг: отчёт ещё не готов, а данные за март нужно проверить ещё раз.',
  'Les résultats sont encourageants 🎉 mais il reste à vérifier les chiffres de février 📊 avant la publication.',
];

const WEATHER_TOOL: ToolDefinition = {
  name: 'get_weather',
  description: 'The current weather and a three-day forecast for a city.',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string', description: 'The city name' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
  },
};
const SEARCH_TOOL: ToolDefinition = {
  name: 'search_orders',
  description: "Searches the customer's orders by status and date range; returns at most 50.",
  inputSchema: {
    type: 'object',
    properties: { status: { type: 'string', enum: ['open', 'shipped', 'returned'] }, from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } },
  },
};

const SYSTEM: ChatMessage = { role: 'system', content: 'You are a helpful assistant for an operations team. Be concise and precise.' };

function words(count: number, seed: number): string {
  const vocabulary = PROSE.split(' ');
  return Array.from({ length: count }, (_unused, index) => vocabulary[(index * 7 + seed) % vocabulary.length]).join(' ');
}

function orders(count: number, seed: number): string {
  return JSON.stringify(
    Array.from({ length: count }, (_unused, index) => ({
      id: `ORD-${(seed * 1000 + index * 37).toString().padStart(6, '0')}`,
      status: ['open', 'shipped', 'returned'][(index + seed) % 3],
      total: Math.round(((index * 13.37 + seed) % 500) * 100) / 100,
      placedAt: `2026-0${1 + (index % 9)}-${String(1 + (index % 28)).padStart(2, '0')}T10:${String(index % 60).padStart(2, '0')}:00Z`,
    })),
  );
}

/** Messages given as exchanges: each exchange's messages, the request sent after each exchange. */
function conversation(name: string, tools: ToolDefinition[], exchanges: ChatMessage[][]): EstimateConversation {
  const steps: ChatMessage[][] = [];
  const messages: ChatMessage[] = [SYSTEM];
  for (const exchange of exchanges) {
    messages.push(...exchange);
    steps.push([...messages]);
  }
  return { name, tools, steps };
}

const answer = (content: string): ChatMessage => ({ role: 'assistant', content });
const user = (content: string): ChatMessage => ({ role: 'user', content });

function toolExchange(step: number, tool: string, args: Record<string, unknown>, result: string): ChatMessage[] {
  const id = `call_${step}`;
  return [
    { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: tool, arguments: JSON.stringify(args) } }] },
    { role: 'tool', tool_call_id: id, content: result },
  ];
}

export function estimateConversations(): EstimateConversation[] {
  const short = ['hi', 'what can you do?', 'ok, list the open items', 'thanks', 'and the late ones?', 'who owns them?', 'remind me tomorrow', 'cancel that'];
  const chatty = conversation(
    'short messages',
    [],
    short.map((text, index) => (index === 0 ? [user(text)] : [answer(`Sure: item ${index} is done, ${index + 1} is next.`), user(text)])),
  );
  const prose = conversation(
    'long prose',
    [],
    Array.from({ length: 8 }, (_unused, index) => (index === 0 ? [user(PROSE.repeat(6))] : [answer(words(300 + index * 40, index)), user(PROSE.repeat(2 + (index % 4)))])),
  );
  const code = conversation(
    'code',
    [],
    Array.from({ length: 6 }, (_unused, index) =>
      index === 0
        ? [user(`Review this:\n\n\`\`\`ts\n${CODE}\`\`\``)]
        : [answer(`Here is a version with a guard:\n\n\`\`\`ts\n${CODE.repeat(1 + (index % 3))}\`\`\``), user('Now add tests for it.')],
    ),
  );
  const toolCalls = conversation(
    'tool calls and JSON results',
    [WEATHER_TOOL, SEARCH_TOOL],
    [
      [user('What is the weather in Oslo, and which of my orders shipped in March?')],
      toolExchange(1, 'get_weather', { city: 'Oslo', unit: 'celsius' }, JSON.stringify({ city: 'Oslo', now: { tempC: 3, wind: 'NW 5 m/s' }, forecast: [1, 4, 6] })),
      toolExchange(2, 'search_orders', { status: 'shipped', from: '2026-03-01', to: '2026-03-31' }, orders(12, 2)),
      [answer('Oslo is 3 °C with a north-west wind; 12 orders shipped in March.'), user('And the open ones this year?')],
      toolExchange(3, 'search_orders', { status: 'open', from: '2026-01-01', to: '2026-12-31' }, orders(50, 3)),
      [answer('There are 50 open orders; the largest totals are listed above.'), user('Which were returned?')],
      toolExchange(4, 'search_orders', { status: 'returned' }, orders(4, 4)),
    ],
  );
  const scripts = conversation(
    'other scripts and emoji',
    [],
    OTHER_SCRIPTS.flatMap((text, index) => (index === 0 ? [[user(text)]] : [[answer(OTHER_SCRIPTS[(index + 1) % OTHER_SCRIPTS.length]!), user(text)]])),
  );
  // Kinds in turn: the step's new content differs from what the previous request's ratio was measured on.
  const mixed = conversation(
    'kinds in turn',
    [SEARCH_TOOL],
    [
      [user('hi')],
      [answer('Hello.'), user(PROSE.repeat(4))],
      toolExchange(1, 'search_orders', { status: 'open' }, orders(40, 1)),
      [answer(`\`\`\`ts\n${CODE.repeat(3)}\`\`\``), user(OTHER_SCRIPTS[1]!.repeat(8))],
      [answer('ok'), user('short again')],
      toolExchange(2, 'search_orders', { status: 'shipped' }, orders(30, 2)),
    ],
  );
  return [chatty, prose, code, toolCalls, scripts, mixed];
}
