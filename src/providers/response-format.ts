import type { ResponseFormat } from '@switchyard/protocol';
import type { ProviderResponseFormat } from './model-provider';

// The schema is the protocol's: the routes validate with it and the client posts its type.
export { responseFormatSchema, type ResponseFormat } from '@switchyard/protocol';

/** How many times an answer that does not validate is asked for again. */
export const DEFAULT_REPAIR_ATTEMPTS = 1;

/** The format as a chat-completion request's `response_format`. Pure. */
export function providerResponseFormat(format: ResponseFormat): ProviderResponseFormat {
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.description !== undefined ? { description: format.description } : {}),
      ...(format.strict !== undefined ? { strict: format.strict } : {}),
    },
  };
}
