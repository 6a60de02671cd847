import { httpApi, type HttpOptions } from '@switchyard/client';

export interface AgentsCommandOptions extends HttpOptions {
  stdout: NodeJS.WritableStream;
  /** `--version N` for `show`: that version, not the latest. */
  version?: string;
}

/** The agents commands and the arguments each takes after its name. */
export const AGENT_COMMANDS = {
  list: [],
  show: ['agentId'],
} as const;
export type AgentCommand = keyof typeof AGENT_COMMANDS;

export const isAgentCommand = (word: string | undefined): word is AgentCommand => word !== undefined && Object.hasOwn(AGENT_COMMANDS, word);

/**
 * `npm run cli -- agents list | show <id>` over the API (`/v1/agents`): prints each answer as
 * JSON. An error answer throws (SwitchyardApiError), which the CLI prints as one line.
 */
export async function agentsCommand(command: AgentCommand, args: readonly string[], options: AgentsCommandOptions): Promise<void> {
  const http = httpApi(options);
  const answer =
    command === 'list'
      ? await http('GET', '/v1/agents?limit=100')
      : await http('GET', `/v1/agents/${encodeURIComponent(args[0] ?? '')}${options.version ? `?version=${encodeURIComponent(options.version)}` : ''}`);
  options.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
}
