import { loadToolRegistry } from '../../../src/tools/tool-registry';
import type { ToolRegistry } from '../../../src/tools/tool';
import { ToolLoadError } from '../../../src/tools/tool-errors';
import { everythingServerEntry, scriptedMcpServerEntry, startMcpHttpServer, writeToolsDir } from '../../support/tool-servers';

const context = (toolCallId = 'call_1') => ({ turnId: 'turn_1', toolCallId, attempt: 1, signal: new AbortController().signal });
const textOf = (result: unknown) => (result as { content: { type: string; text: string }[] }).content.map((part) => part.text).join('');

describe('mcp tools', () => {
  let registry: ToolRegistry | undefined;
  afterEach(async () => {
    await registry?.close();
    registry = undefined;
  });

  describe('server-everything over stdio', () => {
    const secret = 'SECRET_FOR_TEST';
    beforeAll(() => {
      process.env[secret] = 'do-not-leak';
    });
    afterAll(() => {
      delete process.env[secret];
    });

    it('lists its tools as everything__<tool> and calls echo', async () => {
      const toolsDir = await writeToolsDir({ 'mcp.json': { mcpServers: { everything: everythingServerEntry() } } });
      registry = await loadToolRegistry({ toolsDir, env: { ...process.env }, builtins: [] });
      const names = registry.list().map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-env', 'everything__get-sum']));
      expect(names.every((name) => name.startsWith('everything__'))).toBe(true);
      expect(registry.get('everything__echo')).toMatchObject({
        kind: 'mcp',
        description: 'Echoes back the input string',
        inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
        retries: 1,
      });
      expect(registry.get('everything__echo')!.inputSchema).not.toHaveProperty('$schema');

      expect(registry.checkArguments('everything__echo', '{}')).toEqual({ ok: false, error: { code: 'invalid_arguments', message: '"message" is required' } });
      const outcome = await registry.execute('everything__echo', { message: 'hello over stdio' }, context());
      expect(outcome).toEqual({ ok: true, result: { content: [{ type: 'text', text: 'Echo: hello over stdio' }] } });
      expect(await registry.execute('everything__get-sum', { a: 2, b: 40 }, context())).toMatchObject({ ok: true, result: { content: [{ text: expect.stringContaining('42') }] } });
    });

    it('gives the server only its configured env and PATH, never the service environment', async () => {
      const toolsDir = await writeToolsDir({ 'mcp.json': { mcpServers: { everything: everythingServerEntry({ GREETING: 'hi', FROM_ENV: '${MCP_TEST_VALUE}' }) } } });
      registry = await loadToolRegistry({ toolsDir, env: { ...process.env, MCP_TEST_VALUE: 'resolved' }, builtins: [] });
      const outcome = await registry.execute('everything__get-env', {}, context());
      expect(outcome.ok).toBe(true);
      const environment = JSON.parse(textOf((outcome as { result: unknown }).result)) as Record<string, string>;
      expect(environment).toEqual({ PATH: process.env.PATH, GREETING: 'hi', FROM_ENV: 'resolved' });
      expect(JSON.stringify(environment)).not.toContain('do-not-leak');
      expect(environment).not.toHaveProperty('HOME');
    });
  });

  describe('a scripted stdio server', () => {
    const load = async (entry = scriptedMcpServerEntry(), extra: Record<string, unknown> = {}) => {
      const toolsDir = await writeToolsDir({ 'mcp.json': { mcpServers: { scripted: { ...entry, ...extra } } } });
      registry = await loadToolRegistry({ toolsDir, env: { PATH: process.env.PATH }, builtins: [] });
      return registry;
    };

    it('skips tool names that do not fit the pattern and checks draft-07 schemas', async () => {
      const tools = await load();
      expect(tools.list().map((tool) => tool.name)).toEqual(['scripted__crash', 'scripted__echo', 'scripted__env', 'scripted__fail', 'scripted__sleep']);
      expect(tools.checkArguments('scripted__echo', '{"text":"a","colour":"red"}')).toEqual({
        ok: false,
        error: { code: 'invalid_arguments', message: 'unexpected property "colour"' },
      });
    });

    it('turns isError into a non-retryable tool_error that keeps the result', async () => {
      const tools = await load();
      expect(await tools.execute('scripted__fail', {}, context())).toEqual({
        ok: false,
        error: {
          code: 'tool_error',
          message: 'the scripted tool failed',
          retryable: false,
          result: { content: [{ type: 'text', text: 'the scripted tool failed' }], isError: true },
        },
      });
    });

    it('times a hung call out at the server timeoutMs', async () => {
      const tools = await load(scriptedMcpServerEntry(), { timeoutMs: 200 });
      expect(tools.get('scripted__sleep')!.timeoutMs).toBe(200);
      const before = await tools.execute('scripted__echo', { text: 'before' }, context());
      expect(await tools.execute('scripted__sleep', {}, context())).toEqual({ ok: false, error: { code: 'timeout', message: 'no result within 200 ms', retryable: true } });
      // A timeout is not a dead server: the same process answers the next call.
      const after = await tools.execute('scripted__echo', { text: 'still here' }, context());
      expect(JSON.parse(textOf((after as { result: unknown }).result)).pid).toBe(JSON.parse(textOf((before as { result: unknown }).result)).pid);
    });

    it('fails calls of a server that died as retryable mcp_unavailable, then restarts it on the next call', async () => {
      const tools = await load();
      const before = await tools.execute('scripted__echo', { text: 'one' }, context());
      const firstPid = JSON.parse(textOf((before as { result: unknown }).result)).pid as number;

      expect(await tools.execute('scripted__crash', {}, context())).toMatchObject({ ok: false, error: { code: 'mcp_unavailable', retryable: true } });

      const after = await tools.execute('scripted__echo', { text: 'two' }, context());
      expect(after.ok).toBe(true);
      const restarted = JSON.parse(textOf((after as { result: unknown }).result)) as { text: string; pid: number };
      expect(restarted.text).toBe('two');
      expect(restarted.pid).not.toBe(firstPid);
    });

    it('refuses to load when a server does not start, naming it', async () => {
      const missing = load({ command: '/nonexistent/mcp-server', args: [], env: {} });
      await expect(missing).rejects.toThrow(ToolLoadError);
      await expect(missing).rejects.toThrow(/mcp\.json: MCP server "scripted" failed to start: .*ENOENT/);

      const exits = load({ command: process.execPath, args: ['-e', 'console.error("cannot open config"); process.exit(2)'], env: {} });
      await expect(exits).rejects.toThrow(/MCP server "scripted" failed to start: .*its stderr ended with: cannot open config/);
    });
  });

  describe('a streamable HTTP server', () => {
    it('lists and calls its tools, sending the configured headers', async () => {
      const server = await startMcpHttpServer();
      try {
        const toolsDir = await writeToolsDir({ 'mcp.json': { mcpServers: { remote: { url: server.url, headers: { Authorization: 'Bearer ${REMOTE_KEY}' } } } } });
        registry = await loadToolRegistry({ toolsDir, env: { REMOTE_KEY: 'remote-key' }, builtins: [] });
        expect(registry.list().map((tool) => tool.name)).toEqual(['remote__add']);
        expect(await registry.execute('remote__add', { a: 2, b: 3 }, context())).toEqual({ ok: true, result: { content: [{ type: 'text', text: '5' }] } });
        expect(server.headers.length).toBeGreaterThan(0);
        expect(server.headers.every((headers) => headers.authorization === 'Bearer remote-key')).toBe(true);
      } finally {
        await registry?.close();
        registry = undefined;
        await server.close();
      }
    });
  });
});
