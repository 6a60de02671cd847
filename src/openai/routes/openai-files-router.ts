import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import type { z } from 'zod';
import { AppError, notFound } from '../../errors/app-error';
import type { OpenAiFile, OpenAiFilesRepository } from '../store/openai-files-repository';
import { receiveMultipartFile } from '../../api/multipart-file';
import { userIdOf } from '../../api/require-user';
import { sendJson } from '../../api/send-json';
import { parseInput, parseRouteId } from '../../api/validate';
import { openAiFileDeletedSchema, openAiFileListSchema, openAiFileSchema, openAiListQuerySchema } from './openai-files-contract';
import { openAiPage, toUnixSeconds } from './openai-operation';

export interface OpenAiFilesRouterDeps {
  files: Pick<OpenAiFilesRepository, 'create' | 'get' | 'list' | 'delete' | 'content'>;
  /** OPENAI_MAX_FILE_BYTES. */
  maxFileBytes: number;
  /** Where an upload waits on disk while its body is read. */
  spoolDir: string;
}

/** Bytes per stored chunk: what reading or writing a file holds at a time. */
export const FILE_CHUNK_BYTES = 1024 * 1024;
/** Room for the multipart framing and the small fields around the file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

/** `/openai/v1/files` (docs/API.md, "OpenAI-compatible routes"): uploads with `purpose: "batch"`, the user's own. */
export function openAiFilesRouter(deps: OpenAiFilesRouterDeps): Router {
  const router = Router();

  router.post('/', async (req, res) => {
    // A declared length past the limit is refused before a byte is read.
    if (Number(req.headers['content-length'] ?? 0) > deps.maxFileBytes + MULTIPART_OVERHEAD_BYTES) {
      throw new AppError('payload_too_large', `a file is at most ${deps.maxFileBytes} bytes (OPENAI_MAX_FILE_BYTES)`);
    }
    const upload = await receiveMultipartFile(req, { fileField: 'file', maxFileBytes: deps.maxFileBytes, spoolDir: deps.spoolDir });
    try {
      const purpose = upload.fields.purpose;
      if (purpose !== 'batch') {
        const message = purpose === undefined ? 'is required' : `"${purpose}" is not supported; files here are for batches ("batch")`;
        throw new AppError('invalid_request', `invalid request: purpose: ${message}`, [{ field: 'purpose', message }]);
      }
      const file = await deps.files.create({ id: newFileId(), userId: userIdOf(res), purpose, filename: upload.filename || 'upload.jsonl' }, upload.chunks(FILE_CHUNK_BYTES));
      sendJson(res, openAiFileSchema, fileView(file));
    } finally {
      await upload.discard();
    }
  });

  router.get('/', async (req, res) => {
    const query = parseInput(openAiListQuerySchema, req.query);
    const page = await deps.files.list(userIdOf(res), { limit: query.limit, ...(query.after ? { after: query.after } : {}), ...(query.purpose ? { purpose: query.purpose } : {}) });
    const data = page.data.map(fileView);
    sendJson(res, openAiFileListSchema, openAiPage(data, page.hasMore));
  });

  router.get('/:id', async (req, res) => {
    sendJson(res, openAiFileSchema, fileView(await ownFile(deps, userIdOf(res), req.params.id)));
  });

  router.delete('/:id', async (req, res) => {
    const id = parseRouteId(req.params.id, 'file');
    if (!(await deps.files.delete(userIdOf(res), id))) throw notFound('file');
    sendJson(res, openAiFileDeletedSchema, { id, object: 'file', deleted: true });
  });

  router.get('/:id/content', async (req, res) => {
    const file = await ownFile(deps, userIdOf(res), req.params.id);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(file.bytes) });
    // Chunk by chunk from the database, waiting for the reader: a file of any size costs a few MiB.
    for await (const chunk of deps.files.content(file.id)) {
      if (res.destroyed) return;
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
    }
    res.end();
  });

  return router;
}

export function newFileId(): string {
  return `file-${randomUUID().replace(/-/g, '')}`;
}

async function ownFile(deps: Pick<OpenAiFilesRouterDeps, 'files'>, userId: string, id: string | undefined): Promise<OpenAiFile> {
  const file = await deps.files.get(userId, parseRouteId(id, 'file'));
  if (!file) throw notFound('file');
  return file;
}

export function fileView(file: OpenAiFile): z.output<typeof openAiFileSchema> {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: toUnixSeconds(file.createdAt),
    filename: file.filename,
    purpose: file.purpose === 'batch_output' ? 'batch_output' : 'batch',
    status: 'processed',
  };
}
