import { randomBytes } from 'node:crypto';
import { apiClient } from './http';
import { markedScripted, scripted } from './scripted';
import { startTestStack, type TestStack, type TestStackOptions } from './stack';
import { writeToolsDir } from './tool-servers';
import { TestWsClient } from './ws-client';

export { scripted };

/** One turn driven to its end over the API and a websocket client. */
export interface TurnRun {
  turnId: string;
  conversationId: string;
  /** The unique text in the turn's user message, to find its provider requests. */
  marker: string;
  /** The turn's events as the websocket client received them, in order. */
  events: any[];
  client: TestWsClient;
}

export interface ToolTurnHarness {
  stack: TestStack;
  api: ReturnType<typeof apiClient>;
  apiKey: string;
  newConversation(body?: Record<string, unknown>): Promise<string>;
  /** A websocket client of the harness's user, subscribed (and its `subscribed` frame received). */
  subscribe(conversationId: string, after?: number): Promise<TestWsClient>;
  /** Posts a turn (202 expected) whose user message carries a fresh marker and the scenario. */
  postTurn(conversationId: string, scenario: unknown, body?: Record<string, unknown>): Promise<{ turnId: string; marker: string }>;
  /**
   * Subscribes, posts a turn and waits for its last event: in a new conversation (made with
   * `conversation`) unless `conversationId` is given.
   */
  runTurn(scenario: unknown, options?: { conversationId?: string; body?: Record<string, unknown>; conversation?: Record<string, unknown> }): Promise<TurnRun>;
  /** The chat-completion requests the scripted model received for a turn (by its marker), oldest first. */
  providerRequests(marker: string): any[];
  close(): Promise<void>;
}

/**
 * A whole Switchyard with the given tool files (and mcp.json) in its TOOLS_DIR, a user, and
 * helpers that drive turns through the HTTP API and the websocket against the scripted model.
 */
export async function startToolTurnHarness(
  options: { toolFiles?: Record<string, unknown>; env?: Record<string, string> } & Omit<TestStackOptions, 'env'> = {},
): Promise<ToolTurnHarness> {
  const { toolFiles, env, ...stackOptions } = options;
  const toolsDir = await writeToolsDir(toolFiles ?? {});
  const stack = await startTestStack({ ...stackOptions, env: { TOOLS_DIR: toolsDir, ...env } });
  const { apiKey } = await stack.createUser('tool-user');
  const api = apiClient(stack.url, apiKey);
  const clients: TestWsClient[] = [];

  const harness: ToolTurnHarness = {
    stack,
    api,
    apiKey,
    async newConversation(body = {}) {
      const created = await api.post('/v1/conversations', body);
      if (created.status !== 201) throw new Error(`creating a conversation answered ${created.status}: ${JSON.stringify(created.body)}`);
      return created.body.id as string;
    },
    async subscribe(conversationId, after) {
      const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId, after);
      clients.push(client);
      return client;
    },
    async postTurn(conversationId, scenario, body = {}) {
      const marker = `run-${randomBytes(6).toString('hex')}`;
      const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(scenario, marker), ...body });
      if (posted.status !== 202) throw new Error(`posting a turn answered ${posted.status}: ${JSON.stringify(posted.body)}`);
      return { turnId: posted.body.turnId as string, marker };
    },
    async runTurn(scenario, runOptions = {}) {
      const conversationId = runOptions.conversationId ?? (await harness.newConversation(runOptions.conversation));
      const client = await harness.subscribe(conversationId, runOptions.conversationId ? await latestSeq(conversationId) : undefined);
      const { turnId, marker } = await harness.postTurn(conversationId, scenario, runOptions.body);
      const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
      return { turnId, conversationId, marker, events, client };
    },
    providerRequests(marker) {
      return stack.scripted.requests
        .map((request) => request.body as any)
        .filter((body) => body.messages.some((message: any) => message.role === 'user' && JSON.stringify(message.content).includes(marker)));
    },
    async close() {
      for (const client of clients) client.close();
      await stack.close();
    },
  };

  async function latestSeq(conversationId: string): Promise<number> {
    return (await api.get(`/v1/conversations/${conversationId}`)).body.lastSeq as number;
  }

  return harness;
}

/** The events of one type, in order. */
export const eventsOfType = (events: any[], type: string) => events.filter((event) => event.type === type);

/** The joined `argsTextDelta`s of each call, by tool call id. */
export function argumentTextsByCall(events: any[]): Map<string, string> {
  const texts = new Map<string, string>();
  for (const event of eventsOfType(events, 'tool-call-delta')) texts.set(event.toolCallId, (texts.get(event.toolCallId) ?? '') + event.argsTextDelta);
  return texts;
}
