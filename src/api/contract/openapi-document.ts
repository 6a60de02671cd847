import { z } from 'zod';
import { createDocument, type CreateDocumentOptions, type oas31 } from 'zod-openapi';
import { eventSchema } from '../../events/event';
import { clientFrameSchemas, serverFrameSchema } from '../../events/ws-frames';
import type { RouteFamilyDocument } from '../route-family';
import { errorResponseSchema } from './error-contract';

const clientFrameSchema = z.union([
  clientFrameSchemas.subscribe,
  clientFrameSchemas.unsubscribe,
  clientFrameSchemas['tool-result'],
  clientFrameSchemas['tool-approval'],
  clientFrameSchemas.ping,
]);

/**
 * The contract as data (docs/API.md): every HTTP route with its request and response schemas and
 * the errors it can answer, built from the zod schemas the routes validate and type their answers
 * with; the events and websocket frames as JSON Schema in `components.schemas`. `families`: each
 * route family's part, in the order the document lists them (a section shared by two families
 * is listed once, where the first one is).
 */
export function buildOpenApiDocument(version: string, families: readonly RouteFamilyDocument[]): oas31.OpenAPIObject {
  const tags = new Map<string, oas31.TagObject>();
  for (const { tag } of families) if (!tags.has(tag.name)) tags.set(tag.name, tag);
  return createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'Switchyard',
        version,
        description: 'A durable service for LLM conversations with tool calling. Errors are `{"error": {"code", "message", "details"?}}`.',
      },
      tags: [...tags.values()],
      paths: Object.assign({}, ...families.map((family) => family.paths)),
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: "A user's API key (`sy_…`)." },
          sessionToken: { type: 'http', scheme: 'bearer', description: 'A session token (`POST /v1/session-tokens`), on the routes its scope allows.' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN.' },
        },
        schemas: {
          // The instances themselves (no .meta() copies): the event inside a ServerFrame is then a $ref to Event.
          Event: eventSchema,
          ServerFrame: serverFrameSchema,
          ClientFrame: clientFrameSchema,
          ErrorResponse: errorResponseSchema,
          ...Object.assign({}, ...families.map((family) => family.schemas ?? {})),
        },
      },
    },
    { override: keepAnswersOpen },
  );
}

/**
 * zod writes the answers of a plain (stripping) object as closed (`additionalProperties: false`);
 * the document leaves them open, as a request of the same object is, so that a field added
 * later is no breaking change for a client that checks answers against this document. Objects
 * declared strict (requests that refuse unknown fields) stay closed.
 */
const keepAnswersOpen: NonNullable<CreateDocumentOptions['override']> = ({ jsonSchema, zodSchema, io }) => {
  const def = zodSchema._zod.def;
  if (io === 'output' && def.type === 'object' && (def as { catchall?: unknown }).catchall === undefined) delete jsonSchema.additionalProperties;
};
