import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { ToolOutcome } from '../tool';
import { errorMessage } from '../../errors/switchyard-error';
import { withoutUrlCredentials } from '../url-credentials';
import type { McpServerConfig } from './mcp-config';
import { stdioServerEnvironment } from './stdio-server-environment';

export interface McpConnectionOptions {
  /** The service's environment, for PATH only (see stdio-server-environment.ts). */
  serviceEnv: Record<string, string | undefined>;
  /** Bounds starting the server (spawn and `initialize`) and listing its tools. */
  connectTimeoutMs: number;
  logger: Logger;
}

/** Kept from a server's stderr to explain a failed start. */
const STDERR_TAIL_CHARS = 1_000;
const CLIENT_INFO = { name: 'switchyard', version: '0.1.0' };

/**
 * One MCP server: started at load, called per tool attempt, restarted lazily. When the server
 * dies, calls in flight fail as retryable `mcp_unavailable`; the next call starts it again, once
 * (concurrent calls share that restart); if that fails the call is `mcp_unavailable` too and the
 * call after tries again. No background reconnect loop: a server nobody calls costs nothing.
 */
export class McpConnection {
  private client: Client | undefined;
  private starting: Promise<Client> | undefined;
  private closed = false;
  private stderrTail = '';

  constructor(
    readonly config: McpServerConfig,
    private readonly options: McpConnectionOptions,
  ) {}

  /** Starts the server; throws with the reason (and the end of its stderr) if it does not come up. */
  async connect(): Promise<void> {
    await this.start();
  }

  /** Every tool of the server, following pagination. */
  async listTools(): Promise<Tool[]> {
    const client = this.client ?? (await this.start());
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.options.connectTimeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /** One attempt. `signal` carries the deadline; the registry reports timeouts and cancellations. */
  async callTool(name: string, args: unknown, signal: AbortSignal, timeoutMs: number): Promise<ToolOutcome> {
    let client = this.client;
    if (!client) {
      if (this.closed) return unavailable(`MCP server "${this.config.name}" is shut down`);
      try {
        client = await this.start();
      } catch (error) {
        return unavailable(`MCP server "${this.config.name}" is not running and did not restart: ${errorMessage(error)}`);
      }
    }
    try {
      // The SDK's own timeout (60 s by default) must not fire before ours.
      const result = (await client.callTool({ name, arguments: args as Record<string, unknown> }, undefined, {
        signal,
        timeout: timeoutMs + 1_000,
      })) as CallToolResult;
      if (result.isError) {
        return { ok: false, error: { code: 'tool_error', message: textOf(result) || 'the MCP tool reported an error', retryable: false, result } };
      }
      return { ok: true, result };
    } catch (error) {
      return this.classify(error, client, signal);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.starting?.catch(() => undefined));
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  private classify(error: unknown, client: Client, signal: AbortSignal): ToolOutcome {
    // Our deadline or the caller stopped the call (the SDK has told the server so): the
    // connection is fine, and the registry reports the timeout or cancellation itself.
    if (signal.aborted) return { ok: false, error: { code: 'aborted', message: errorMessage(error), retryable: true } };
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout) return { ok: false, error: { code: 'timeout', message: error.message, retryable: true } };
      if (error.code === ErrorCode.ConnectionClosed) return unavailable(`MCP server "${this.config.name}" went away: ${error.message}`);
      // The server answered with a protocol error (unknown tool, invalid params): asking again will not help.
      return { ok: false, error: { code: 'mcp_error', message: error.message, mcpCode: error.code, retryable: false } };
    }
    // Anything else is the transport failing (a broken pipe, an HTTP server gone): start afresh next time.
    if (this.client === client) {
      this.client = undefined;
      void client.close().catch(() => undefined);
    }
    return unavailable(`MCP server "${this.config.name}" is unreachable: ${errorMessage(error)}`);
  }

  private start(): Promise<Client> {
    this.starting ??= this.open().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async open(): Promise<Client> {
    const transport = this.createTransport();
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    client.onerror = (error) => this.options.logger.debug({ server: this.config.name, err: error }, 'MCP transport error');
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = undefined;
      if (!this.closed) this.options.logger.warn({ server: this.config.name }, 'MCP server connection closed; it restarts on the next call');
    };
    try {
      await client.connect(transport, { timeout: this.options.connectTimeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      const tail = this.stderrTail.trim();
      throw new Error(`${errorMessage(error)}${tail ? `; its stderr ended with: ${tail}` : ''}`);
    }
    if (this.closed) {
      // close() ran while we were starting: do not leave a process behind.
      await client.close().catch(() => undefined);
      throw new Error('shut down while starting');
    }
    this.client = client;
    return client;
  }

  private createTransport(): Transport {
    const transport = this.config.transport;
    if (transport.type === 'http') {
      return new StreamableHTTPClientTransport(new URL(transport.url), { requestInit: { headers: transport.headers } });
    }
    this.stderrTail = '';
    const stdio = new StdioClientTransport({
      command: transport.command,
      args: transport.args,
      // Values may be undefined to mask the SDK's defaults; Node's spawn leaves those out.
      env: stdioServerEnvironment(transport.env, this.options.serviceEnv) as Record<string, string>,
      ...(transport.cwd ? { cwd: transport.cwd } : {}),
      // Piped rather than inherited: the service's logs stay JSON, and a failed start can say why.
      // It must be read, or a chatty server blocks once the pipe buffer is full.
      stderr: 'pipe',
    });
    stdio.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
      this.options.logger.debug({ server: this.config.name, stderr: text.trimEnd() }, 'MCP server stderr');
    });
    return stdio;
  }
}

/** The transport's errors may quote the server's URL: never with its credentials. */
function unavailable(message: string): ToolOutcome {
  return { ok: false, error: { code: 'mcp_unavailable', message: withoutUrlCredentials(message), retryable: true } };
}

/** The text parts of a result, which is what an error result explains itself with. */
function textOf(result: CallToolResult): string {
  return result.content
    .filter((part): part is Extract<CallToolResult['content'][number], { type: 'text' }> => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}
