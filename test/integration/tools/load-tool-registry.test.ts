import path from 'node:path';
import { z } from 'zod';
import { defineBuiltinTool } from '../../../src/tools/builtin/builtin-tool';
import { loadToolRegistry } from '../../../src/tools/tool-registry';
import { ToolLoadError } from '../../../src/tools/tool-errors';
import { scriptedMcpServerEntry, writeToolsDir } from '../../support/tool-servers';

const httpTool = (name: string) => ({ name, description: `${name} tool`, url: 'http://127.0.0.1:9/x' });

describe('loadToolRegistry', () => {
  it('loads the shipped builtins when the tools directory does not exist', async () => {
    const registry = await loadToolRegistry({ toolsDir: path.join(__dirname, 'no-such-dir'), env: {} });
    expect(registry.list().map((tool) => tool.name)).toEqual(['calculator', 'current_time', 'random_number']);
    await registry.close();
  });

  it('merges builtins, every *.json tool file and mcp.json, sorted by name', async () => {
    const toolsDir = await writeToolsDir({
      'a.json': httpTool('zulu'),
      'b.json': [httpTool('alpha'), { kind: 'client', name: 'confirm', description: 'Ask the user' }],
      'notes.txt': 'not a tool file',
      'mcp.json': { mcpServers: { scripted: scriptedMcpServerEntry() } },
    });
    const echo = defineBuiltinTool({ name: 'echo', description: 'Echo', input: z.strictObject({}), run: async () => 'echo' });
    const registry = await loadToolRegistry({ toolsDir, env: { PATH: process.env.PATH }, builtins: [echo] });
    try {
      expect(registry.list().map((tool) => `${tool.kind}:${tool.name}`)).toEqual([
        'http:alpha',
        'client:confirm',
        'builtin:echo',
        'mcp:scripted__crash',
        'mcp:scripted__echo',
        'mcp:scripted__env',
        'mcp:scripted__fail',
        'mcp:scripted__sleep',
        'http:zulu',
      ]);
      for (const tool of registry.list()) expect(Object.keys(tool).sort()).toEqual(['description', 'inputSchema', 'kind', 'name', 'retries', 'timeoutMs']);
    } finally {
      await registry.close();
    }
  });

  it("marks what needs approval: a tool file's needsApproval, mcp.json per server (all, or a list of its tools), and approvalRequired", async () => {
    const toolsDir = await writeToolsDir({
      'a.json': [{ ...httpTool('gated'), needsApproval: true, approvalTimeoutMs: 60_000 }, httpTool('open')],
      'mcp.json': { mcpServers: { scripted: { ...scriptedMcpServerEntry(), needsApproval: ['echo', 'sleep'], approvalTimeoutMs: 5_000 } } },
    });
    const registry = await loadToolRegistry({ toolsDir, env: { PATH: process.env.PATH }, approvalRequired: ['calculator', 'open'] });
    try {
      const gated = Object.fromEntries(registry.list().map((tool) => [tool.name, [tool.needsApproval ?? false, tool.approvalTimeoutMs]]));
      expect(gated).toMatchObject({
        gated: [true, 60_000],
        open: [true, undefined],
        calculator: [true, undefined],
        current_time: [false, undefined],
        scripted__echo: [true, 5_000],
        scripted__sleep: [true, 5_000],
        scripted__fail: [false, 5_000],
      });
    } finally {
      await registry.close();
    }
  });

  it('refuses a name declared twice across kinds, naming both places', async () => {
    const toolsDir = await writeToolsDir({ 'math.json': httpTool('calculator') });
    await expect(loadToolRegistry({ toolsDir, env: {} })).rejects.toThrow(
      new ToolLoadError(`tool "calculator" is declared twice: by builtin and by ${path.join(toolsDir, 'math.json')}`),
    );
  });

  it('refuses to start on a bad file, naming the file and the field, before any MCP server is spawned', async () => {
    const toolsDir = await writeToolsDir({
      'good.json': httpTool('good'),
      'bad.json': { tools: [httpTool('fine'), { ...httpTool('broken'), retries: -1 }] },
      // Would fail with a different message if it were started.
      'mcp.json': { mcpServers: { never: { command: '/nonexistent/server' } } },
    });
    await expect(loadToolRegistry({ toolsDir, env: {} })).rejects.toThrow(/^.*bad\.json: "tools\[1\]\.retries": /);
  });

  it('refuses a URL that carries credentials, naming the file and the field but not the password', async () => {
    const toolsDir = await writeToolsDir({ 'secret.json': { ...httpTool('secret'), url: 'http://svc:hunter2@127.0.0.1:9/x' } });
    const error = await loadToolRegistry({ toolsDir, env: {} }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ToolLoadError);
    expect((error as Error).message).toMatch(/secret\.json: "url": .*credentials/);
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('refuses an input schema that is not JSON Schema, naming the file and the tool', async () => {
    const toolsDir = await writeToolsDir({ 'odd.json': { ...httpTool('odd'), inputSchema: { type: 'object', properties: { a: { type: 'strng' } } } } });
    await expect(loadToolRegistry({ toolsDir, env: {} })).rejects.toThrow(/odd\.json: tool "odd": the input schema is not valid JSON Schema: /);
  });

  it('refuses an MCP tool whose name collides with an http tool', async () => {
    const toolsDir = await writeToolsDir({ 'clash.json': httpTool('scripted__echo'), 'mcp.json': { mcpServers: { scripted: scriptedMcpServerEntry() } } });
    await expect(loadToolRegistry({ toolsDir, env: { PATH: process.env.PATH } })).rejects.toThrow(
      /tool "scripted__echo" is declared twice: by .*clash\.json and by MCP server "scripted"/,
    );
  });
});
