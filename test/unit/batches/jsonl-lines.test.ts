import { readJsonlLines, type JsonlLine } from '../../../src/batches/jsonl-lines';

async function* chunks(...pieces: (string | Buffer)[]): AsyncGenerator<Buffer> {
  for (const piece of pieces) yield typeof piece === 'string' ? Buffer.from(piece) : piece;
}

async function lines(body: AsyncIterable<Buffer>, limits = { maxBytes: 1000, maxLineBytes: 100 }): Promise<JsonlLine[]> {
  const read: JsonlLine[] = [];
  for await (const line of readJsonlLines(body, limits)) read.push(line);
  return read;
}

describe('readJsonlLines', () => {
  it('cuts lines wherever the chunks end, a character split between two chunks included', async () => {
    const cafe = Buffer.from('"café"\n');
    const splitInE = cafe.indexOf(0xc3) + 1;
    expect(await lines(chunks('{"a":', '1}\n\n', cafe.subarray(0, splitInE), cafe.subarray(splitInE), 'last'))).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, text: '' },
      { line: 3, text: '"café"' },
      { line: 4, text: 'last' },
    ]);
  });

  it('reports a line past maxLineBytes without keeping it, and goes on', async () => {
    expect(await lines(chunks('x'.repeat(60), 'y'.repeat(60), '\nshort\n'))).toEqual([
      { line: 1, tooLong: true },
      { line: 2, text: 'short' },
    ]);
  });

  it('refuses a body past maxBytes, and a line that is not UTF-8, naming it', async () => {
    await expect(lines(chunks('a\n'.repeat(400), 'b\n'.repeat(200)))).rejects.toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('MAX_BATCH_BYTES') });
    await expect(lines(chunks('ok\n', Buffer.from([0x22, 0xe9, 0x22, 0x0a])))).rejects.toMatchObject({
      code: 'invalid_request',
      details: [{ line: 2, message: 'not valid UTF-8' }],
    });
  });
});
