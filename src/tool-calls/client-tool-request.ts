import type { Queue } from 'bullmq';
import { scheduleCallTimeout } from '../queue/tool-queue';
import type { ToolCallRecord } from '../store/tool-calls-repository';
import type { ToolRegistry } from '../tools/tool';
import type { TurnEvents } from '../event-log/turn-events';

/** How long a client tool's call waits for an answer unless its tool says otherwise. */
const DEFAULT_CLIENT_TIMEOUT_MS = 300_000;

/**
 * Asks the subscribed clients to run a client tool's call (`tool-call-request`, sent with the
 * caller's next flush) and arms the timeout that settles it if none answers.
 */
export async function requestClientTool(
  deps: { toolQueue: Queue; tools: Pick<ToolRegistry, 'get'> },
  events: TurnEvents,
  call: Pick<ToolCallRecord, 'turnId' | 'toolCallId' | 'step' | 'position' | 'name' | 'args'>,
): Promise<void> {
  events.emit({ type: 'tool-call-request', toolCallId: call.toolCallId, toolName: call.name, args: call.args });
  await scheduleCallTimeout(deps.toolQueue, 'client-timeout', {
    turnId: call.turnId,
    step: call.step,
    position: call.position,
    toolCallId: call.toolCallId,
    delayMs: deps.tools.get(call.name)?.timeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS,
  });
}
