import { httpApi, type HttpOptions } from '@switchyard/client';

export interface WebhooksCommandOptions extends HttpOptions {
  stdout: NodeJS.WritableStream;
  /** `--events a,b` for `add` (default `*`). */
  events?: string;
  description?: string;
}

/** The webhooks commands and the arguments each takes after its name. */
export const WEBHOOK_COMMANDS = {
  add: ['url'],
  list: [],
  delete: ['webhookId'],
  rotate: ['webhookId'],
  enable: ['webhookId'],
  deliveries: ['webhookId'],
  redeliver: ['webhookId', 'deliveryId'],
} as const;
export type WebhookCommand = keyof typeof WEBHOOK_COMMANDS;

export const isWebhookCommand = (word: string | undefined): word is WebhookCommand => word !== undefined && Object.hasOwn(WEBHOOK_COMMANDS, word);

/**
 * `npm run cli -- webhooks …` over the API (`/v1/webhooks`): prints each answer as JSON. An error
 * answer throws (SwitchyardApiError), which the CLI prints as one line.
 */
export async function webhooksCommand(command: WebhookCommand, args: readonly string[], options: WebhooksCommandOptions): Promise<void> {
  const http = httpApi(options);
  const [first = '', second = ''] = args.map(encodeURIComponent);
  const answer = await (async () => {
    switch (command) {
      case 'add': {
        const events = (options.events ?? '*')
          .split(',')
          .map((each) => each.trim())
          .filter(Boolean);
        return http('POST', '/v1/webhooks', { url: args[0], events, ...(options.description ? { description: options.description } : {}) });
      }
      case 'list':
        return http('GET', '/v1/webhooks');
      case 'delete':
        return http('DELETE', `/v1/webhooks/${first}`);
      case 'rotate':
        return http('POST', `/v1/webhooks/${first}/rotate-secret`);
      case 'enable':
        return http('POST', `/v1/webhooks/${first}/enable`);
      case 'deliveries':
        return http('GET', `/v1/webhooks/${first}/deliveries?limit=100`);
      case 'redeliver':
        return http('POST', `/v1/webhooks/${first}/deliveries/${second}/redeliver`);
    }
  })();
  options.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
}
