import { z } from 'zod';
import { jsonResponse } from '../../api/contract/operation';
import { documentOpenAiPaths, openAiListOf, unixSeconds } from './openai-operation';

export const openAiFileSchema = z
  .object({
    id: z.string().meta({ description: '`file-…`' }),
    object: z.literal('file'),
    bytes: z.number().int(),
    created_at: unixSeconds,
    filename: z.string(),
    purpose: z.enum(['batch', 'batch_output']),
    status: z.literal('processed'),
  })
  .meta({ id: 'OpenAiFile' });

export const openAiFileListSchema = openAiListOf(openAiFileSchema).meta({ id: 'OpenAiFileList' });

export const openAiFileDeletedSchema = z.object({ id: z.string(), object: z.literal('file'), deleted: z.literal(true) }).meta({ id: 'OpenAiFileDeleted' });

export const openAiListQuerySchema = z.object({
  after: z.string().max(200).optional().meta({ description: 'The id after which the page starts.' }),
  limit: z.coerce.number().int().min(1).max(10_000).default(20),
  purpose: z.string().max(100).optional(),
  order: z.enum(['asc', 'desc']).optional().meta({ description: 'Accepted; lists are newest first.' }),
});

const fileId = z.object({ id: z.string().meta({ description: "The file's id." }) });

export const openAiFilePaths = documentOpenAiPaths({
  '/openai/v1/files': {
    post: {
      operationId: 'openAiUploadFile',
      summary: 'Upload a file (OpenAI\'s Files API; `purpose: "batch"`)',
      description: 'Multipart: `file` and `purpose`. Streamed to storage, never held whole in memory; at most OPENAI_MAX_FILE_BYTES (default 200 MiB).',
      requestBody: {
        required: true,
        content: { 'multipart/form-data': { schema: z.object({ file: z.string().meta({ format: 'binary' }), purpose: z.literal('batch') }) } },
      },
      responses: { '200': jsonResponse('The file.', openAiFileSchema) },
    },
    get: {
      operationId: 'openAiListFiles',
      summary: "The user's files, newest first",
      requestParams: { query: openAiListQuerySchema },
      responses: { '200': jsonResponse('A page of files.', openAiFileListSchema) },
    },
  },
  '/openai/v1/files/{id}': {
    get: { operationId: 'openAiGetFile', summary: 'One file', requestParams: { path: fileId }, responses: { '200': jsonResponse('The file.', openAiFileSchema) }, errors: [404] },
    delete: {
      operationId: 'openAiDeleteFile',
      summary: 'Delete a file',
      requestParams: { path: fileId },
      responses: { '200': jsonResponse('Deleted.', openAiFileDeletedSchema) },
      errors: [404],
    },
  },
  '/openai/v1/files/{id}/content': {
    get: {
      operationId: 'openAiFileContent',
      summary: "A file's bytes",
      requestParams: { path: fileId },
      responses: {
        '200': {
          description: "The file as uploaded (or written: a batch's output and error files are JSONL).",
          content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
        },
      },
      errors: [404],
    },
  },
});
