import { z } from 'zod';
import { createDocument, type CreateDocumentOptions, type oas31 } from 'zod-openapi';
import { eventSchema } from '../../events/event';
import { clientFrameSchemas, serverFrameSchema } from '../../events/ws-frames';
import { adminPaths } from './admin-contract';
import { approvalPaths } from './approvals-contract';
import { batchPaths } from './batches-contract';
import { browserPaths } from './browser-contract';
import { conversationPaths } from './conversations-contract';
import { errorResponseSchema } from './error-contract';
import { healthPaths } from './health-contract';
import { toolPaths } from './tools-contract';
import { modelPaths } from './models-contract';
import { turnPaths } from './turns-contract';
import { webhookPaths } from './webhooks-contract';
import { openAiFilePaths } from './openai-files-contract';
import { openAiResponsePaths } from './openai-responses-contract';
import { openAiBatchPaths } from './openai-batches-contract';
import { openAiErrorSchema } from './openai-operation';

const clientFrameSchema = z.union([clientFrameSchemas.subscribe, clientFrameSchemas.unsubscribe, clientFrameSchemas['tool-result'], clientFrameSchemas['tool-approval'], clientFrameSchemas.ping]);

/**
 * The contract as data (docs/API.md): every HTTP route with its request and response schemas and
 * the errors it can answer, built from the zod schemas the routes validate and type their answers
 * with; the events and websocket frames as JSON Schema in `components.schemas`.
 */
export function buildOpenApiDocument(version: string): oas31.OpenAPIObject {
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Switchyard',
      version,
      description: 'A durable service for LLM conversations with tool calling. Errors are `{"error": {"code", "message", "details"?}}`.',
    },
    tags: [
      { name: 'Conversations' },
      { name: 'Turns' },
      { name: 'Tools' },
      { name: 'Models', description: 'Providers, models and their fallbacks (MODELS_FILE).' },
      { name: 'Approvals', description: 'A person approves a tool call before it runs.' },
      { name: 'Batches' },
      { name: 'Webhooks', description: 'Signed the Standard Webhooks way; delivered at least once.' },
      { name: 'Browsers', description: 'Session tokens, websocket tickets, the websocket, and the AI SDK chat transport.' },
      { name: 'OpenAI-compatible', description: 'OpenAI\'s SDKs work against `/openai/v1` by changing `baseURL`; errors are OpenAI\'s `{"error": {message, type, param, code}}`.' },
      { name: 'Admin', description: 'Answers 404 while ADMIN_TOKEN is unset.' },
      { name: 'Operations' },
    ],
    paths: { ...conversationPaths, ...turnPaths, ...toolPaths, ...modelPaths, ...approvalPaths, ...batchPaths, ...webhookPaths, ...browserPaths, ...openAiFilePaths, ...openAiBatchPaths, ...openAiResponsePaths, ...adminPaths, ...healthPaths },
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'A user\'s API key (`sy_…`).' },
        sessionToken: { type: 'http', scheme: 'bearer', description: 'A session token (`POST /v1/session-tokens`), on the routes its scope allows.' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN.' },
      },
      schemas: {
        // The instances themselves (no .meta() copies): the event inside a ServerFrame is then a $ref to Event.
        Event: eventSchema,
        ServerFrame: serverFrameSchema,
        ClientFrame: clientFrameSchema,
        ErrorResponse: errorResponseSchema,
        OpenAiError: openAiErrorSchema,
      },
    },
  }, { override: keepAnswersOpen });
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
