import { AppError } from '../errors/app-error';
import type { UsersRepository } from '../store/users-repository';
import type { ToolDescriptor, ToolRegistry } from '../tools/tool';

export interface UsableToolsDeps {
  tools: Pick<ToolRegistry, 'list'>;
  /** null: the user may use every tool; otherwise only these (set by an admin). */
  userAllowedTools(userId: string): Promise<string[] | null>;
}

/** What a route family reads to know a user's tools: the catalogue, and the users' limits. */
export interface UserToolsNeeds {
  tools: Pick<ToolRegistry, 'list'>;
  users: Pick<UsersRepository, 'allowedTools'>;
}

export function usableToolsOf(needs: UserToolsNeeds): UsableToolsDeps {
  return { tools: needs.tools, userAllowedTools: (userId) => needs.users.allowedTools(userId) };
}

/** The tools a user may see, invoke and have offered to the model. */
export async function usableTools(deps: UsableToolsDeps, userId: string): Promise<ToolDescriptor[]> {
  const allowed = await deps.userAllowedTools(userId);
  return deps.tools.list().filter((tool) => !allowed || allowed.includes(tool.name));
}

/** The same, by name. */
export async function usableToolsByName(deps: UsableToolsDeps, userId: string): Promise<Map<string, ToolDescriptor>> {
  return new Map((await usableTools(deps, userId)).map((tool) => [tool.name, tool]));
}

/**
 * A `tools` list on a conversation or a turn may name only tools the user may use: any other
 * name is a 400, the same whether the tool does not exist or is not this user's to use.
 */
export async function assertUsableToolNames(
  deps: UsableToolsDeps,
  userId: string,
  requested: string[] | undefined,
  /** The list's field, for the error's details (`requireApproval` is held to the same names). */
  field: 'tools' | 'requireApproval' = 'tools',
): Promise<void> {
  if (!requested || requested.length === 0) return;
  const usable = new Set((await usableTools(deps, userId)).map((tool) => tool.name));
  const unknown = requested.filter((name) => !usable.has(name));
  if (unknown.length > 0) {
    throw new AppError(
      'invalid_request',
      `unknown tools: ${unknown.join(', ')}`,
      unknown.map((name) => ({ field, message: `unknown tool "${name}"` })),
    );
  }
}
