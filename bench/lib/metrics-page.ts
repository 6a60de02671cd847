import http from 'node:http';

/** `switchyard_process_nodejs_heap_size_used_bytes` from a /metrics page, or NaN. */
export function heapUsedBytes(url: string): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get(url, { timeout: 2000 }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve(Number(/^\w*nodejs_heap_size_used_bytes\s+(\S+)/m.exec(body)?.[1] ?? Number.NaN)));
    });
    request.on('error', () => resolve(Number.NaN));
    request.on('timeout', () => request.destroy());
  });
}
