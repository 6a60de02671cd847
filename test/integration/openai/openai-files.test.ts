import OpenAI, { toFile } from 'openai';
import { openAiClient } from '../../support/openai-sdk';
import { startTestStack, type TestStack } from '../../support/stack';

/** `/openai/v1/files` through OpenAI's SDK (docs/API.md, "OpenAI-compatible routes"). */
describe('OpenAI-compatible files', () => {
  let stack: TestStack;
  let client: OpenAI;
  let apiKey: string;
  let other: OpenAI;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0, env: { OPENAI_MAX_FILE_BYTES: String(64 * 1024 * 1024) } });
    ({ apiKey } = await stack.createUser('files-owner'));
    client = openAiClient(stack.url, apiKey);
    other = openAiClient(stack.url, (await stack.createUser('files-stranger')).apiKey);
  });
  afterAll(() => stack.close());

  it('uploads a batch file, retrieves it, lists it, reads its bytes back and deletes it', async () => {
    const text = '{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[{"role":"user","content":"hé ☃"}]}}\n';
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' });
    expect(file).toMatchObject({ object: 'file', bytes: Buffer.byteLength(text), filename: 'input.jsonl', purpose: 'batch', status: 'processed' });
    expect(file.id).toMatch(/^file-/);
    expect(Math.abs(file.created_at - Date.now() / 1000)).toBeLessThan(60);

    expect(await client.files.retrieve(file.id)).toEqual(file);
    expect((await client.files.list()).data.map((each) => each.id)).toContain(file.id);
    expect(await (await client.files.content(file.id)).text()).toBe(text);

    expect(await client.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    await expect(client.files.retrieve(file.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("is the user's own: another user's key gets 404, as for a file that does not exist", async () => {
    const file = await client.files.create({ file: await toFile(Buffer.from('{}\n'), 'mine.jsonl'), purpose: 'batch' });
    for (const attempt of [() => other.files.retrieve(file.id), () => other.files.content(file.id), () => other.files.delete(file.id)]) {
      const error = await attempt().catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'invalid_request_error', code: 'not_found' });
    }
    expect((await other.files.list()).data).toEqual([]);
    expect((await client.files.retrieve(file.id)).id).toBe(file.id);
  });

  it('refuses another purpose with a 400 naming the param, and a body that is no upload with 415', async () => {
    const error = await client.files.create({ file: await toFile(Buffer.from('{}'), 'x.jsonl'), purpose: 'assistants' }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'purpose' });
    const notMultipart = await fetch(`${stack.url}/openai/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(notMultipart.status).toBe(415);
    expect(((await notMultipart.json()) as any).error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_media_type' });
  });

  it('refuses a filename the database cannot store (a NUL in an RFC 5987 filename*) with 400 naming filename, storing nothing', async () => {
    const boundary = 'nul-in-filename';
    const before = (await client.files.list()).data.length;
    for (const disposition of [`filename*=UTF-8''in%00put.jsonl`, `filename="input.jsonl"; filename*=ISO-8859-1''in%00put.jsonl`]) {
      const body = [
        `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch`,
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; ${disposition}\r\nContent-Type: application/octet-stream\r\n\r\n{}\n`,
        `--${boundary}--\r\n`,
      ].join('\r\n');
      const response = await fetch(`${stack.url}/openai/v1/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      expect([response.status, ((await response.json()) as any).error]).toEqual([
        400,
        { message: 'invalid request: filename: must not contain the NUL character (\\u0000)', type: 'invalid_request_error', param: 'filename', code: 'invalid_request' },
      ]);
    }
    expect((await client.files.list()).data).toHaveLength(before);
  });

  it('streams uploads and downloads: a file of many chunks comes back byte for byte', async () => {
    // What a large file costs the process in peak memory is `npm run bench -- memory-probes`.
    const line = `${JSON.stringify({ custom_id: 'x'.repeat(40), body: { messages: [{ role: 'user', content: 'y'.repeat(900) }] } })}\n`;
    const content = Buffer.from(line.repeat(Math.ceil((8 * 1024 * 1024) / line.length)));
    const file = await client.files.create({ file: await toFile(content, 'big.jsonl'), purpose: 'batch' });
    expect(file.bytes).toBe(content.length);
    const back = Buffer.from(await (await client.files.content(file.id)).arrayBuffer());
    expect(back.equals(content)).toBe(true);
  });

  it('refuses a file over OPENAI_MAX_FILE_BYTES with 413, storing nothing', async () => {
    const small = await startTestStack({ workers: 0, env: { OPENAI_MAX_FILE_BYTES: '1024' } });
    try {
      const sdk = openAiClient(small.url, (await small.createUser('small')).apiKey);
      const error = await sdk.files.create({ file: await toFile(Buffer.alloc(4096, 'a'), 'big.jsonl'), purpose: 'batch' }).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
      expect((await sdk.files.list()).data).toEqual([]);
    } finally {
      await small.close();
    }
  });
});
