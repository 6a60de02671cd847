import { UsageLedgerRepository } from '../../usage/store/usage-ledger-repository';
import type { Logger } from 'pino';
import { formatAgentReference } from '../../agents/agent-reference';
import type { AgentReferences } from '../../agents/agent-references';
import type { LiveSseOptions } from '../../api/live-sse';
import type { RouteFamily } from '../../api/route-family';
import type { ConversationEventSource } from '../../api/turn-event-stream';
import { usableToolsByName, usableToolsOf, type UserToolsNeeds } from '../../api/usable-tools';
import { userChecks, type UserCheckNeeds } from '../../api/user-checks';
import type { BatchRunner } from '../../batches/batch-runner';
import type { Config } from '../../config/config';
import type { EventLog } from '../../event-log/event-log';
import type { BatchesRepository } from '../../store/batches-repository';
import type { ConversationsRepository } from '../../store/conversations-repository';
import type { Db } from '../../store/db';
import type { MessagesRepository } from '../../store/messages-repository';
import type { TurnsRepository } from '../../store/turns-repository';
import type { TurnService } from '../../turns/turn-service';
import { OpenAiBatchesService } from '../openai-batches-service';
import { ResponsesService } from '../responses-service';
import { OpenAiBatchesRepository } from '../store/openai-batches-repository';
import { OpenAiFilesRepository } from '../store/openai-files-repository';
import { OpenAiResponsesRepository } from '../store/openai-responses-repository';
import { openAiBatchPaths } from './openai-batches-contract';
import { openAiErrorHandler, openAiNotFound } from './openai-error-handler';
import { openAiFilePaths } from './openai-files-contract';
import { openAiErrorSchema } from './openai-operation';
import { createResponseStreamer } from './openai-response-stream';
import { openAiResponsePaths } from './openai-responses-contract';
import { openAiRouter } from './openai-router';
import { ChatCompletionsService } from '../chat-completions-service';
import { chatCompletionStreams } from './openai-chat-completions-router';
import { openAiModelPaths, openAiModels } from './openai-models-router';
import { openAiChatCompletionPaths } from './openai-chat-completions-contract';
import type { ModelCatalogue } from '../../models/model-catalogue';
import type { SubmissionSlots } from '../../api/submission-slots';
import { OpenAiConversationsService } from '../openai-conversations-service';
import { openAiConversationPaths } from './openai-conversations-contract';

interface OpenAiRoutesNeeds extends UserCheckNeeds, UserToolsNeeds {
  config: Pick<Config, 'MAX_BODY_BYTES' | 'OPENAI_MAX_FILE_BYTES' | 'MAX_BATCH_BYTES' | 'MAX_BATCH_JSON_BYTES' | 'MAX_BATCH_ITEMS'>;
  /** The model a response or an output line names when its request named none (the catalogue's default). */
  models: Pick<ModelCatalogue, 'defaultModel' | 'models'>;
  logger: Logger;
  /** A Responses `prompt` and a batch's agent: the user's, not archived. */
  agentReferences: Pick<AgentReferences, 'resolve'>;
  /** Where the dialect's files, batches and responses are kept (openai/store/). */
  db: Db;
  conversations: Pick<ConversationsRepository, 'create' | 'get' | 'updateMetadata' | 'deleteIfIdle' | 'setCompaction'>;
  messages: Pick<MessagesRepository, 'listTurnAnswer' | 'list' | 'insertItems' | 'listLastStepOutline' | 'findTurnInput'>;
  turns: Pick<TurnsRepository, 'get' | 'hasLaterTurn'>;
  batches: BatchesRepository;
  turnService: Pick<TurnService, 'create' | 'cancel'>;
  batchRunner: Pick<BatchRunner, 'cancel'>;
  startBatch(batchId: string): void;
  eventLog: Pick<EventLog, 'latestSeq'>;
  eventSource: ConversationEventSource;
  sse: LiveSseOptions;
  /** Where uploads and the lines of a batch's file wait on disk. */
  spoolDir: string;
  /** MAX_TURN_BODY_BYTES_IN_FLIGHT, shared with `POST /api/chat`. */
  turnBodyBytes: SubmissionSlots;
}

/**
 * The OpenAI dialect under `/openai/v1` (docs/API.md, "OpenAI-compatible routes"): Files, Batches,
 * Responses and Conversations, on the dialect's own repositories and services. Before the API's body parsers,
 * as its uploads are multipart; OpenAI's SDKs answer to OpenAI's error shape, so these routes
 * have their own 404 and error handler, which also answer their refused credentials.
 */
export const openAiRoutes: RouteFamily<OpenAiRoutesNeeds> = {
  stage: 'own-body',
  openApi: {
    tag: {
      name: 'OpenAI-compatible',
      description: 'OpenAI\'s SDKs work against `/openai/v1` by changing `baseURL`; errors are OpenAI\'s `{"error": {message, type, param, code}}`.',
    },
    paths: { ...openAiConversationPaths, ...openAiChatCompletionPaths, ...openAiModelPaths, ...openAiFilePaths, ...openAiBatchPaths, ...openAiResponsePaths },
    schemas: { OpenAiError: openAiErrorSchema },
  },
  mount: (app, needs) => {
    const { config } = needs;
    const files = new OpenAiFilesRepository(needs.db);
    const usableTools = (userId: string) => usableToolsByName(usableToolsOf(needs), userId);
    const responses = new ResponsesService({
      ledger: new UsageLedgerRepository(needs.db),
      agentReferences: needs.agentReferences,
      conversations: needs.conversations,
      messages: needs.messages,
      turns: needs.turns,
      responses: new OpenAiResponsesRepository(needs.db),
      turnService: needs.turnService,
      usableTools,
      latestSeq: (conversationId) => needs.eventLog.latestSeq(conversationId),
      defaultModel: needs.models.defaultModel,
    });
    const streamer = createResponseStreamer(needs.eventSource, {
      ...needs.sse,
      defaultModel: needs.models.defaultModel,
      storedResponse: (record) => responses.object(record),
    });
    const ledger = new UsageLedgerRepository(needs.db);
    const chat = new ChatCompletionsService({
      conversations: needs.conversations,
      messages: needs.messages,
      turns: needs.turns,
      turnService: needs.turnService,
      usableTools,
      ledger,
    });
    const chatStreams = chatCompletionStreams(needs.sse);
    const batches = new OpenAiBatchesService({
      db: needs.db,
      files,
      openAiBatches: new OpenAiBatchesRepository(needs.db),
      batches: needs.batches,
      submission: {
        batches: needs.batches,
        usableTools,
        spoolDir: needs.spoolDir,
        // The file is stored already, within OPENAI_MAX_FILE_BYTES: its lines are read from there.
        maxBatchBytes: Math.max(config.MAX_BATCH_BYTES, config.OPENAI_MAX_FILE_BYTES),
        maxBatchJsonBytes: config.MAX_BATCH_JSON_BYTES,
        maxBatchItems: config.MAX_BATCH_ITEMS,
        // A JSONL file has no defaults: nothing names an agent there.
        resolveAgent: async (userId, reference) => formatAgentReference(await needs.agentReferences.resolve(userId, reference)),
      },
      runner: needs.batchRunner,
      startBatch: needs.startBatch,
      defaultModel: needs.models.defaultModel,
    });
    app.use(
      '/openai/v1',
      ...userChecks(needs),
      openAiRouter({
        files: { files, maxFileBytes: config.OPENAI_MAX_FILE_BYTES, spoolDir: needs.spoolDir },
        responses: { responses, streamer, events: needs.eventSource },
        batches,
        chat: { chat, events: needs.eventSource, streams: chatStreams },
        models: { models: openAiModels(needs.models, Math.floor(Date.now() / 1000)) },
        conversations: new OpenAiConversationsService({ db: needs.db, conversations: needs.conversations, messages: needs.messages }),
        maxBodyBytes: config.MAX_BODY_BYTES,
        turnBodyBytes: needs.turnBodyBytes,
      }),
      openAiNotFound,
      openAiErrorHandler(needs.logger),
    );
    return {
      endStreams: () => {
        streamer.endAll();
        chatStreams.endAll();
      },
    };
  },
};
