import { httpApi, type HttpOptions } from '@switchyard/client';

export interface SchedulesCommandOptions extends HttpOptions {
  stdout: NodeJS.WritableStream;
  /** For `create`: the turn's content and its plan (one of cron, every, at). */
  content?: string;
  cron?: string;
  every?: string;
  at?: string;
  timezone?: string;
  agent?: string;
  conversation?: string;
}

/** The schedules commands and the arguments each takes after its name. */
export const SCHEDULE_COMMANDS = {
  list: [],
  create: [],
  pause: ['scheduleId'],
  resume: ['scheduleId'],
  delete: ['scheduleId'],
  runs: ['scheduleId'],
} as const;
export type ScheduleCommand = keyof typeof SCHEDULE_COMMANDS;

export const isScheduleCommand = (word: string | undefined): word is ScheduleCommand => word !== undefined && Object.hasOwn(SCHEDULE_COMMANDS, word);

/**
 * `npm run cli -- schedules …` over the API (`/v1/schedules`): prints each answer as JSON. An
 * error answer throws (SwitchyardApiError), which the CLI prints as one line.
 */
export async function schedulesCommand(command: ScheduleCommand, args: readonly string[], options: SchedulesCommandOptions): Promise<void> {
  const http = httpApi(options);
  const id = encodeURIComponent(args[0] ?? '');
  const answer = await (async () => {
    switch (command) {
      case 'list':
        return http('GET', '/v1/schedules?limit=100');
      case 'create': {
        const { content, cron, every, at, timezone, agent, conversation } = options;
        return http('POST', '/v1/schedules', {
          content,
          ...(cron ? { cron } : {}),
          ...(every ? { every } : {}),
          ...(at ? { at } : {}),
          ...(timezone ? { timezone } : {}),
          ...(agent ? { agent } : {}),
          ...(conversation ? { conversationId: conversation } : {}),
        });
      }
      case 'pause':
        return http('PATCH', `/v1/schedules/${id}`, { enabled: false });
      case 'resume':
        return http('PATCH', `/v1/schedules/${id}`, { enabled: true });
      case 'delete':
        await http('DELETE', `/v1/schedules/${id}`);
        return { id: args[0], deleted: true };
      case 'runs':
        return http('GET', `/v1/schedules/${id}/runs?limit=100`);
    }
  })();
  options.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
}
