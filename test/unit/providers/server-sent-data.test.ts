import { serverSentData } from '../../../src/providers/server-sent-data';

/** A body that arrives in these reads. */
async function* reads(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === 'string' ? new TextEncoder().encode(part) : part;
}

async function batches(body: AsyncIterable<Uint8Array>): Promise<string[][]> {
  const all: string[][] = [];
  for await (const batch of serverSentData(body)) all.push(batch);
  return all;
}

describe('serverSentData', () => {
  it('yields the data of the events each read completes, in order, one batch per read', async () => {
    expect(await batches(reads('data: {"a":1}\n\ndata: {"b":2}\n\ndata: {"c"', ':3}\n\n', 'data: [DONE]\n\n'))).toEqual([['{"a":1}', '{"b":2}'], ['{"c":3}'], ['[DONE]']]);
  });

  it('skips comments and events without data, joins multi-line data and reads CRLF lines', async () => {
    expect(await batches(reads(': keep-alive\n\nevent: ping\n\ndata: one\r\ndata: two\r\n\r\ndata:tight\n\n'))).toEqual([['one\ntwo', 'tight']]);
  });

  it('decodes a character split between two reads whole', async () => {
    const bytes = new TextEncoder().encode('data: "é€"\n\n');
    expect(await batches(reads(bytes.subarray(0, 8), bytes.subarray(8)))).toEqual([['"é€"']]);
  });

  it('drops an event the body ends in the middle of', async () => {
    expect(await batches(reads('data: {"a":1}\n\ndata: {"cut'))).toEqual([['{"a":1}']]);
  });
});
