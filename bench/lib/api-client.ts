import http from 'node:http';

export interface ApiResponse {
  status: number;
  body: any;
}

/**
 * A small JSON client for Switchyard's HTTP API on a keep-alive agent. Plain `node:http`
 * rather than `fetch`: undici adds a millisecond or so per request in this Node, which would
 * be charged to Switchyard in the latency figures.
 */
export class ApiClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private readonly base: URL;

  constructor(
    baseUrl: string,
    private readonly apiKey: string,
  ) {
    this.base = new URL(baseUrl);
  }

  request(method: string, path: string, body?: unknown): Promise<ApiResponse> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          host: this.base.hostname,
          port: this.base.port,
          path,
          method,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${this.apiKey}`,
            ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              // Not JSON: keep the text for the error message.
            }
            resolve({ status: response.statusCode ?? 0, body: parsed });
          });
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(payload);
    });
  }

  /** `fields`: more of the conversation's body (`compaction`, `system`, ...). */
  async createConversation(title = 'bench', fields: Record<string, unknown> = {}): Promise<string> {
    const response = await this.request('POST', '/v1/conversations', { ...fields, title });
    if (response.status !== 201) throw new Error(`POST /v1/conversations answered ${response.status}: ${JSON.stringify(response.body)}`);
    return response.body.id as string;
  }

  /** POST a turn; resolves with its id once the API answered 202. */
  /** `options`: more fields of the turn's body (`maxHistoryMessages`, `tools`, ...). */
  /** `content` undefined: a turn that has none (a regenerate, `options.regenerate`). */
  async postTurn(conversationId: string, content: string | undefined, options: Record<string, unknown> = {}): Promise<string> {
    const response = await this.request('POST', `/v1/conversations/${conversationId}/turns`, { ...options, ...(content === undefined ? {} : { content }) });
    if (response.status !== 202) throw new Error(`POST turn answered ${response.status}: ${JSON.stringify(response.body)}`);
    return response.body.turnId as string;
  }

  close(): void {
    this.agent.destroy();
  }
}
