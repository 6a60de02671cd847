import type { ArgumentChecker } from './argument-checker';
import type { ToolCallContext, ToolDescriptor, ToolOutcome } from './tool';

/**
 * One loaded tool as the registry holds it. Each kind's loader builds these; the registry adds
 * what all kinds share (argument checks, the deadline, never throwing).
 */
export interface ExecutableTool {
  descriptor: ToolDescriptor;
  /** The schema compiled once, by the loader, which decides what an invalid schema means for its kind. */
  checker: ArgumentChecker;
  /** Where it was declared (`tools/weather.json`, `mcp server "github"`, `builtin`), for load errors. */
  source: string;
  /**
   * One attempt. `ctx.signal` already combines the tool's timeout with the caller's signal.
   * May throw: the registry turns a throw into a retryable failure.
   */
  execute(args: unknown, ctx: ToolCallContext): Promise<ToolOutcome>;
}

/** What a loader gives back: its tools, and how to release what they hold (MCP servers). */
export interface ToolSource {
  tools: ExecutableTool[];
  close(): Promise<void>;
}
