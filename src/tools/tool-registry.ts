import pino, { type Logger } from 'pino';
import { builtinToExecutable, type BuiltinTool } from './builtin/builtin-tool';
import { defaultBuiltinTools } from './builtin/default-builtins';
import type { ExecutableTool } from './executable-tool';
import type { HttpToolOptions } from './http/http-tool';
import { loadToolFiles } from './http/load-tool-files';
import { loadMcpTools } from './mcp/load-mcp-tools';
import type { ToolCallContext, ToolError, ToolOutcome, ToolRegistry } from './tool';
import { errorMessage } from '../errors/switchyard-error';
import { ToolLoadError } from './tool-errors';

export interface LoadToolRegistryOptions {
  /** Folder of http/client tool files (`*.json`) and `mcp.json`; a missing folder holds no tools. */
  toolsDir: string;
  /** For `${VAR}` in http tool headers and MCP env/headers, and PATH for stdio MCP servers. Passed in; this module never reads process.env. */
  env: Record<string, string | undefined>;
  /** Default: a silent logger. */
  logger?: Logger;
  /** Default: the shipped ones (`calculator`, `current_time`, `random_number`). */
  builtins?: BuiltinTool[];
  /** Per attempt of an MCP tool call, and the limit for starting an MCP server. Default 30000. */
  mcpTimeoutMs?: number;
  /** For tests: the http tools' fetch and response cap. */
  http?: HttpToolOptions;
  /**
   * `start` (default): start the MCP servers of `mcp.json` (where tools run). Or, where none
   * runs (an API process): the MCP tools as published by the workers, read again every `refreshMs`.
   */
  mcp?: 'start' | { published(): Promise<ExecutableTool[]>; refreshMs: number };
  /** Tools whose calls wait for a person's approval whatever they declare (the builtins' only way). Default none. */
  approvalRequired?: readonly string[];
}

const DEFAULT_MCP_TIMEOUT_MS = 30_000;

/**
 * Loads every kind into one registry: builtins, the tool files, then the MCP servers (last, so
 * that a bad file fails before any server is spawned). Throws `ToolLoadError` with one message
 * naming the file or server at fault; the service refuses to start rather than run without tools.
 */
export async function loadToolRegistry(options: LoadToolRegistryOptions): Promise<ToolRegistry> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const builtins = (options.builtins ?? defaultBuiltinTools()).map((tool) => {
    try {
      return builtinToExecutable(tool);
    } catch (error) {
      throw new ToolLoadError(`builtin tool "${tool.name}": its schema is not valid JSON Schema: ${errorMessage(error)}`);
    }
  });
  const fileTools = await loadToolFiles({ toolsDir: options.toolsDir, env: options.env, http: options.http });
  const approvalRequired = new Set(options.approvalRequired ?? []);
  if (options.mcp && options.mcp !== 'start') return describedRegistry([...builtins, ...fileTools], options.mcp, { logger, approvalRequired });
  const mcp = await loadMcpTools({ toolsDir: options.toolsDir, env: options.env, logger, timeoutMs: options.mcpTimeoutMs ?? DEFAULT_MCP_TIMEOUT_MS });
  try {
    return createToolRegistry([...builtins, ...fileTools, ...mcp.tools], { logger, close: mcp.close, approvalRequired });
  } catch (error) {
    await mcp.close();
    throw error;
  }
}

/**
 * The registry over loaded tools. Adds what every kind shares: unique names, argument checks,
 * one deadline per attempt (AbortSignal.timeout, joined to the caller's with AbortSignal.any),
 * and an outcome for every attempt, whatever the tool did.
 */
export function createToolRegistry(tools: ExecutableTool[], options: { logger: Logger; close(): Promise<void>; approvalRequired?: ReadonlySet<string> }): ToolRegistry {
  const byName = new Map<string, ExecutableTool>();
  for (const declared of tools) {
    const tool = options.approvalRequired?.has(declared.descriptor.name) ? { ...declared, descriptor: { ...declared.descriptor, needsApproval: true } } : declared;
    const existing = byName.get(tool.descriptor.name);
    if (existing) throw new ToolLoadError(`tool "${tool.descriptor.name}" is declared twice: by ${existing.source} and by ${tool.source}`);
    byName.set(tool.descriptor.name, tool);
  }
  const descriptors = [...byName.values()].map((tool) => tool.descriptor).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let closed = false;

  return {
    list: () => descriptors.map((descriptor) => ({ ...descriptor })),
    get: (name) => {
      const descriptor = byName.get(name)?.descriptor;
      return descriptor && { ...descriptor };
    },
    checkArguments(name, argumentsText) {
      const tool = byName.get(name);
      if (!tool) return { ok: false, error: { code: 'invalid_arguments', message: `unknown tool "${name}"` } };
      return tool.checker.checkText(argumentsText);
    },
    async execute(name, args, ctx) {
      const tool = byName.get(name);
      if (!tool) return failure({ code: 'unknown_tool', message: `unknown tool "${name}"`, retryable: false });
      if (tool.descriptor.kind === 'client') {
        return failure({ code: 'client_tool', message: `"${name}" is a client tool: a subscribed client runs it`, retryable: false });
      }
      if (closed) return failure({ code: 'unavailable', message: 'the tool registry is shut down', retryable: true });
      // Checked again: stored arguments may predate a change of the tool's schema.
      const checked = tool.checker.check(args);
      if (!checked.ok) return failure({ ...checked.error, retryable: false });
      return runAttempt(tool, checked.args, ctx, options.logger);
    },
    async close() {
      closed = true;
      await options.close();
    },
  };
}

/**
 * Local tools plus the published MCP ones, rebuilt as the workers publish (one that started
 * after this process shows up at the next refresh). Nothing is started or held.
 */
async function describedRegistry(
  local: ExecutableTool[],
  source: { published(): Promise<ExecutableTool[]>; refreshMs: number },
  settings: { logger: Logger; approvalRequired: ReadonlySet<string> },
): Promise<ToolRegistry> {
  const { logger } = settings;
  let published = await source.published();
  let current = createToolRegistry([...local, ...published], { ...settings, close: async () => undefined });
  const timer = setInterval(() => {
    source
      .published()
      .then((latest) => {
        if (latest === published) return;
        // Built first: a list that clashes with a local tool's name keeps the last good registry.
        current = createToolRegistry([...local, ...latest], { ...settings, close: async () => undefined });
        published = latest;
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'could not take the published MCP tools; keeping the last ones'));
  }, source.refreshMs);
  timer.unref();
  return {
    list: () => current.list(),
    get: (name) => current.get(name),
    checkArguments: (name, text) => current.checkArguments(name, text),
    execute: (name, args, ctx) => current.execute(name, args, ctx),
    close: async () => clearInterval(timer),
  };
}

/** One attempt under its deadline. A tool that ignores its signal still gets its answer on time. */
async function runAttempt(tool: ExecutableTool, args: unknown, ctx: ToolCallContext, logger: Logger): Promise<ToolOutcome> {
  const { timeoutMs } = tool.descriptor;
  const timedOut = failure({ code: 'timeout', message: `no result within ${timeoutMs} ms`, retryable: true });
  const cancelled = failure({ code: 'cancelled', message: 'the call was cancelled', retryable: false });
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  // Why it fired: the timeout (retryable) or the caller (not), whatever the tool made of it.
  const expiry = () => (timeout.aborted ? timedOut : cancelled);
  let onAbort!: () => void;
  const expired = new Promise<ToolOutcome>((resolve) => {
    onAbort = () => resolve(expiry());
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    // Started inside a promise chain, so that a tool that throws synchronously is caught too.
    const attempt = Promise.resolve()
      .then(() => tool.execute(args, { ...ctx, signal }))
      .catch((error: unknown): ToolOutcome => {
        logger.warn({ tool: tool.descriptor.name, err: error }, 'tool threw');
        return failure({ code: 'internal', message: errorMessage(error), retryable: true });
      });
    const outcome = await Promise.race([attempt, expired]);
    return outcome.ok || !signal.aborted ? outcome : expiry();
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function failure(error: ToolError): ToolOutcome {
  return { ok: false, error };
}
