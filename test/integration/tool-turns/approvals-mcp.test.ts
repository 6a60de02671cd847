import { startMcpHttpServer, type McpHttpServer } from '../../support/tool-servers';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';
import { isEvent } from '../../support/ws-client';

/** Tool approvals on an MCP tool (`needsApproval` per tool in mcp.json), in real turns against a real MCP server. */
describe('an MCP tool that needs approval', () => {
  let mcp: McpHttpServer;
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    mcp = await startMcpHttpServer();
    harness = await startToolTurnHarness({ toolFiles: { 'mcp.json': { mcpServers: { remote: { url: mcp.url, needsApproval: ['add'] } } } } });
  });
  afterAll(async () => {
    await harness.close();
    await mcp.close();
  });

  /** A turn that calls remote__add with `args`, up to its approval request. */
  async function gatedAdd(args: { a: number; b: number }) {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId, marker } = await harness.postTurn(conversationId, { steps: [{ toolCalls: [{ name: 'remote__add', arguments: args }] }, { text: 'done' }] });
    const request = (await client.waitFor(isEvent('tool-approval-request', turnId))).event;
    expect(request).toMatchObject({ toolName: 'remote__add', args });
    await client.waitFor(isEvent('turn-waiting', turnId));
    return { client, turnId, marker, request };
  }
  const callsWith = (a: number) => mcp.calls.filter((call) => (call.arguments as { a: number }).a === a);

  it('is listed as needing approval', async () => {
    const tools = (await harness.api.get('/v1/tools')).body.tools;
    expect(tools.find((tool: any) => tool.name === 'remote__add')).toMatchObject({ kind: 'mcp', needsApproval: true });
  });

  it('runs on the MCP server once, only after it is approved', async () => {
    const { client, turnId, request } = await gatedAdd({ a: 2, b: 3 });
    expect(callsWith(2)).toEqual([]);
    const decided = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    expect(decided.status).toBe(200);
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: request.toolCallId, result: { content: [{ type: 'text', text: '5' }] } })]);
    expect(callsWith(2)).toEqual([{ name: 'add', arguments: { a: 2, b: 3 } }]);
  });

  it('never reaches the MCP server when denied: the model gets the denial', async () => {
    const { client, turnId, marker, request } = await gatedAdd({ a: 40, b: 2 });
    const denied = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: false, reason: 'no sums today' });
    expect(denied.status).toBe(200);
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(harness.providerRequests(marker)[1].messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: request.toolCallId,
      content: JSON.stringify({ error: { code: 'denied', message: 'no sums today' } }),
    });
    expect(callsWith(40)).toEqual([]);
  });
});
