import http from 'node:http';

/** The process's V8 heap figures from its /metrics page (NaN for one the page lacks or a page that did not come). */
export interface HeapFigures {
  /** `switchyard_process_nodejs_heap_size_used_bytes`: in use now. */
  used: number;
  /** `switchyard_heap_after_major_gc_bytes`: in use right after the last major collection. */
  afterMajorGc: number;
}

export async function heapFigures(url: string): Promise<HeapFigures> {
  const page = await metricsPage(url);
  const read = (name: string) => Number(new RegExp(`^${name}\\s+(\\S+)`, 'm').exec(page)?.[1] ?? Number.NaN);
  return { used: read('\\w*nodejs_heap_size_used_bytes'), afterMajorGc: read('switchyard_heap_after_major_gc_bytes') };
}

/** `switchyard_process_nodejs_heap_size_used_bytes` from a /metrics page, or NaN. */
export async function heapUsedBytes(url: string): Promise<number> {
  return (await heapFigures(url)).used;
}

function metricsPage(url: string): Promise<string> {
  return new Promise((resolve) => {
    const request = http.get(url, { timeout: 2000 }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve(body));
    });
    request.on('error', () => resolve(''));
    request.on('timeout', () => request.destroy());
  });
}
