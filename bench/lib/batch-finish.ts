/** The batch's SSE progress (`GET /v1/batches/:id/events`) until its batch-finish, which it returns. */
export async function waitForFinish(url: string, apiKey: string, batchId: string): Promise<{ counts: { succeeded: number } }> {
  const response = await fetch(`${url}/v1/batches/${batchId}/events`, { headers: { authorization: `Bearer ${apiKey}` } });
  const decoder = new TextDecoder();
  const marker = 'event: batch-finish\ndata: ';
  let text = '';
  for await (const chunk of response.body!) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    const at = text.indexOf(marker);
    if (at >= 0) {
      const end = text.indexOf('\n', at + marker.length);
      if (end >= 0) {
        await response.body!.cancel().catch(() => undefined);
        return JSON.parse(text.slice(at + marker.length, end));
      }
    }
  }
  throw new Error('the batch events ended without batch-finish');
}
