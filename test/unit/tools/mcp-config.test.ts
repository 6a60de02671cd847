import { parseMcpConfig } from '../../../src/tools/mcp/mcp-config';
import { stdioServerEnvironment } from '../../../src/tools/mcp/stdio-server-environment';

const parse = (content: unknown, env: Record<string, string | undefined> = {}) => parseMcpConfig('tools/mcp.json', JSON.stringify(content), env);
const loadError = (content: unknown, env: Record<string, string | undefined> = {}) => {
  expect(() => parse(content, env)).toThrow();
  try {
    parse(content, env);
  } catch (error) {
    return (error as Error).message;
  }
  return '';
};

describe('parseMcpConfig', () => {
  it('reads stdio and streamable HTTP servers, resolving ${VAR} in env and headers', () => {
    const servers = parse(
      {
        mcpServers: {
          github: { command: 'npx', args: ['-y', 'server-github'], env: { GITHUB_TOKEN: '${GH}' }, alwaysAllow: ['x'] },
          remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${REMOTE_KEY}' }, timeoutMs: 5000, retries: 0 },
          off: { command: 'nothing', disabled: true },
        },
      },
      { GH: 'gh-token', REMOTE_KEY: 'remote-key' },
    );
    expect(servers).toEqual([
      { name: 'github', transport: { type: 'stdio', command: 'npx', args: ['-y', 'server-github'], env: { GITHUB_TOKEN: 'gh-token' } } },
      { name: 'remote', transport: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer remote-key' } }, timeoutMs: 5000, retries: 0 },
    ]);
  });

  it('names the server and the field of every problem', () => {
    expect(loadError({ servers: {} })).toBe('tools/mcp.json: "mcpServers" is required');
    expect(loadError({ mcpServers: { a: { command: 'x', env: { TOKEN: '${NOPE}' } } } })).toBe('tools/mcp.json: "mcpServers.a.env.TOKEN": environment variable "NOPE" is not set');
    expect(loadError({ mcpServers: { a: {} } })).toBe('tools/mcp.json: "mcpServers.a": give either "command" (a stdio server) or "url" (a streamable HTTP server)');
    expect(loadError({ mcpServers: { a: { command: 'x', args: 'y' } } })).toMatch(/^tools\/mcp\.json: "mcpServers\.a\.args": /);
    expect(loadError({ mcpServers: { 'a.b': { command: 'x' } } })).toMatch(/^tools\/mcp\.json: "mcpServers\.a\.b": a server name must be/);
    expect(loadError({ mcpServers: { a: { type: 'sse', url: 'http://x/sse' } } })).toMatch(/SSE transport is not supported/);
  });
});

describe('stdioServerEnvironment', () => {
  it('refuses a server url that carries credentials, naming the server and the field but not the password', () => {
    const message = loadError({ mcpServers: { remote: { url: 'https://svc:hunter2@mcp.example.com/mcp' } } });
    expect(message).toMatch(/tools\/mcp\.json: .*remote.*url.*credentials/);
    expect(message).not.toContain('hunter2');
  });

  it('gives the entry env and PATH, never the service environment, and masks the SDK defaults', () => {
    const service = { PATH: '/usr/bin', HOME: '/root', USER: 'root', LLM_API_KEY: 'sk-secret', DATABASE_URL: 'postgres://x' };
    const environment = stdioServerEnvironment({ TOKEN: 't' }, service);
    const passed = Object.fromEntries(Object.entries(environment).filter(([, value]) => value !== undefined));
    expect(passed).toEqual({ PATH: '/usr/bin', TOKEN: 't' });
    expect(Object.keys(environment)).toEqual(expect.arrayContaining(['HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM']));
  });

  it('lets the entry set HOME or its own PATH', () => {
    expect(stdioServerEnvironment({ HOME: '/srv', PATH: '/opt/bin' }, { PATH: '/usr/bin' })).toMatchObject({ HOME: '/srv', PATH: '/opt/bin' });
  });
});
