import { spawnSync } from 'node:child_process';
import { apiClient } from '../../support/http';
import { spawnService, type ServiceProcess } from '../../support/processes';
import { scriptedMcpServerEntry } from '../../support/tool-servers';
import { startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';

/**
 * MCP servers run where tools run (the workers). An API process alone starts none: it lists and
 * checks MCP tools from what the workers published, and its invocations run on the workers.
 */
describe('MCP servers only where tools run', () => {
  let harness: ToolTurnHarness;
  let api: ServiceProcess;

  beforeAll(async () => {
    // The harness's own process runs a worker, which starts the server and publishes its tools.
    harness = await startToolTurnHarness({ toolFiles: { 'mcp.json': { mcpServers: { scripted: scriptedMcpServerEntry() } } } });
    api = await spawnService('api', harness.stack.childEnv());
  }, 30_000);
  afterAll(async () => {
    await api.kill('SIGTERM');
    await harness.close();
  });

  it('an API process starts no MCP server, yet lists, checks and invokes MCP tools', async () => {
    // An MCP server would be a child of it.
    const children = spawnSync('pgrep', ['-a', '-P', String(api.child.pid)])
      .stdout.toString()
      .trim()
      .split('\n')
      .filter(Boolean);
    expect(children).toEqual([]);

    const client = apiClient(api.url, harness.apiKey);
    const names = ((await client.get('/v1/tools')).body.tools as { name: string; kind: string }[]).filter((tool) => tool.kind === 'mcp').map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['scripted__echo', 'scripted__env']));
    const wrong = await client.post('/v1/tools/scripted__echo/invoke', { params: {} });
    expect(wrong).toMatchObject({ status: 400, body: { error: { message: '"text" is required' } } });

    // Run by the worker's server: its pid is not the API's, nor a child of it.
    const echoed = await client.post('/v1/tools/scripted__echo/invoke', { params: { text: 'hi' } });
    expect(echoed.status).toBe(200);
    const { text, pid } = JSON.parse(echoed.body.result.content[0].text) as { text: string; pid: number };
    expect(text).toBe('hi');
    expect(
      spawnSync('pgrep', ['-P', String(process.pid)])
        .stdout.toString()
        .split('\n'),
    ).toContain(String(pid));
  });
});
