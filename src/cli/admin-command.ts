import type { AdminBackend } from './admin-backend';
import { synopsisOf, usageFor } from './cli-usage';

export interface AdminCommandIo {
  /** An answer, printed as JSON. */
  print(value: unknown): void;
  /** A refusal: one message, exit code 1. */
  fail(message: string): number;
  /** How the CLI was run (`npm run cli --`, `switchyard`), for usage lines. */
  program: string;
}

/** The commands {@link adminCommand} runs, and the arguments each needs after its two words. */
const ADMIN_COMMANDS: Record<string, number> = { 'users create': 1, 'users list': 0, 'users tools': 2, 'keys create': 1, 'keys list': 1, 'keys revoke': 1 };

/** Whether the words name one of the commands {@link adminCommand} runs (which need a backend). */
export const isAdminCommand = (group: string | undefined, command: string | undefined) => Object.hasOwn(ADMIN_COMMANDS, `${group} ${command}`);

/** The command's synopsis when arguments are missing: said before any database or service is looked for. */
export function adminUsageProblem(positionals: readonly string[], program: string): string | undefined {
  const name = positionals.slice(0, 2).join(' ');
  const needed = ADMIN_COMMANDS[name] ?? 0;
  return positionals.length - 2 < needed ? synopsisOf(name, program) : undefined;
}

/** `users create | list | tools`, `keys create | list | revoke`, on either backend; returns the exit code. */
export async function adminCommand(positionals: readonly string[], options: { name?: string }, admin: AdminBackend, io: AdminCommandIo): Promise<number> {
  const [group, command, argument, list] = positionals;
  switch (`${group} ${command}`) {
    case 'users create':
      if (!argument) return io.fail(synopsisOf('users create', io.program));
      io.print(await admin.createUser(argument));
      return 0;
    case 'users list':
      io.print(await admin.listUsers());
      return 0;
    case 'users tools': {
      if (!argument || list === undefined) return io.fail(synopsisOf('users tools', io.program));
      const tools =
        list === 'all'
          ? null
          : list
              .split(',')
              .map((name) => name.trim())
              .filter(Boolean);
      const outcome = await admin.setAllowedTools(argument, tools);
      if (outcome.kind === 'no_user') return io.fail(`no user ${argument}`);
      if (outcome.kind === 'unknown_tools') return io.fail(outcome.message);
      io.print({ id: argument, allowedTools: tools });
      return 0;
    }
    case 'keys create': {
      if (!argument) return io.fail(synopsisOf('keys create', io.program));
      const key = await admin.createKey(argument, options.name ?? null);
      if (!key) return io.fail(`no user ${argument}`);
      io.print(key);
      return 0;
    }
    case 'keys list': {
      if (!argument) return io.fail(synopsisOf('keys list', io.program));
      const keys = await admin.listKeys(argument);
      if (!keys) return io.fail(`no user ${argument}`);
      io.print(keys);
      return 0;
    }
    case 'keys revoke': {
      if (!argument) return io.fail(synopsisOf('keys revoke', io.program));
      const outcome = await admin.revokeKey(argument);
      if (outcome.kind === 'not_found') return io.fail(`no key ${argument} (keys list <userId> lists a user's keys)`);
      io.print({ revoked: argument, revokedAt: outcome.revokedAt, announced: outcome.announced });
      return 0;
    }
    default:
      return io.fail(usageFor(positionals, io.program));
  }
}
