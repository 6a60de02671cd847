import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { faultProcesses } from '../support/fault-processes';
import { openDescriptors } from '../support/open-descriptors';
import { poll } from '../support/poll';
import type { ServiceProcess } from '../support/processes';
import { rawRequest } from '../support/raw-http';
import { TEST_POSTGRES_URL, TEST_REDIS_URL } from '../support/services';
import { startTestStack, type TestStack } from '../support/stack';

const REQUEST_TIMEOUT_MS = 5000;
const BOUNDARY = 'cut-body-boundary';
/** Abandoned uploads at once: each one that leaked would leave a descriptor (and a file) of its own. */
const ABANDONED = 10;
/** The process's connections to these come and go with its pools: not what a request leaves behind. */
const BACKING_PORTS = new Set([Number(new URL(TEST_POSTGRES_URL).port || 5432), Number(new URL(TEST_REDIS_URL).port || 6379)]);

/**
 * Request bodies that end early or are abandoned mid-way (docs/RELIABILITY.md, case 43), sent to
 * a real API process over raw sockets: a form that ends inside its file part is a 400 and the
 * process lives on; an upload, a JSONL batch or a JSON body whose client leaves, or stops sending
 * until REQUEST_TIMEOUT_MS, leaves no spool file, no open descriptor, no submission slot and no
 * stored row behind.
 */
describe('request bodies cut short', () => {
  let stack: TestStack;
  let api: ServiceProcess;
  let apiKey: string;
  let spoolDir: string;
  /** What the process holds open at rest, besides its connections to PostgreSQL and Redis. */
  let atRest: string[] = [];
  const processes = faultProcesses(() => stack);

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0 });
    ({ apiKey } = await stack.createUser('cut-bodies'));
    // The process's temporary directory, where uploads and batches wait on disk, is the test's own.
    spoolDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-cut-bodies-'));
  });
  // A test that ended the process leaves the next ones a process of their own.
  beforeEach(async () => {
    if (
      await get('/healthz').then(
        () => true,
        () => false,
      )
    )
      return;
    await api.kill('SIGKILL');
    await startApiProcess();
  }, 60_000);
  afterEach(async () => {
    // Whatever a test sent, the process is still there and answers.
    expect([api.child.exitCode, api.child.signalCode]).toEqual([null, null]);
    expect((await get('/healthz')).status).toBe(200);
  });
  afterAll(async () => {
    await processes.stopAll();
    await stack.close();
    rmSync(spoolDir, { recursive: true, force: true });
  });

  /** Each group of tests has a process of its own: what one group left behind does not count against the next. */
  function ownApiProcess() {
    beforeAll(startApiProcess, 60_000);
    afterAll(() => api.kill('SIGKILL'));
  }

  async function startApiProcess() {
    // What a process that died left behind would be counted against the next one.
    for (const name of spoolFiles()) rmSync(path.join(spoolDir, name));
    api = await processes.spawn('api', {
      TMPDIR: spoolDir,
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      MAX_BATCH_SUBMISSIONS_IN_FLIGHT: '1',
      OPENAI_MAX_FILE_BYTES: String(8 * 1024 * 1024),
    });
    // Whatever the routes open once is open before the count is taken.
    expect((await upload(completeForm('{"warm":"up"}\n'))).status).toBe(200);
    expect((await submitJsonl(`${batchLine('warm up')}\n`)).status).toBe(202);
    await poll('the warm-up left spool files', async () => spoolFiles().length === 0);
    atRest = held();
  }

  /**
   * Requests of the test's own, each on a connection the server closes after its answer, so that
   * the process's descriptors count only what the requests under test left.
   */
  const get = (requestPath: string) =>
    rawRequest(api.url, { method: 'GET', path: requestPath, headers: { authorization: `Bearer ${apiKey}`, connection: 'close' } }).then((answer) => ({
      status: answer.status,
      body: JSON.parse(answer.body || 'null'),
    }));
  const submissionsInFlight = async () => {
    const line = (await rawRequest(api.url, { method: 'GET', path: '/metrics', headers: { connection: 'close' } })).body
      .split('\n')
      .find((each) => each.startsWith('switchyard_batch_submissions_in_flight '));
    return Number(line!.split(' ')[1]);
  };
  const storedBatches = async () => (await get('/v1/batches?limit=100')).body.data.length as number;
  const storedFiles = async () => (await get('/openai/v1/files?limit=100')).body.data.length as number;

  const spoolFiles = () => readdirSync(spoolDir).filter((name) => name.startsWith('switchyard-'));
  const held = () =>
    openDescriptors(api.child.pid!)
      .filter((descriptor) => !BACKING_PORTS.has(descriptor.remotePort ?? -1))
      .map((descriptor) => descriptor.target);
  const spoolDescriptors = (kind = '') => held().filter((target) => target.startsWith(path.join(spoolDir, `switchyard-${kind}`)));
  /** Waits until no spool file is left nor open, and the process holds no more than at rest. */
  const waitUntilReleased = () =>
    poll(
      () => `still held: files ${JSON.stringify(spoolFiles())}; open besides those at rest: ${JSON.stringify(held().filter((target) => !atRest.includes(target)))}`,
      async () => spoolFiles().length === 0 && held().length <= atRest.length,
      REQUEST_TIMEOUT_MS + 10_000,
    );
  /** Waits until `count` spool files of `kind` are open: the requests are under way. */
  const waitForOpenSpools = (kind: 'upload' | 'batch', count: number) =>
    poll(`not ${count} ${kind} spool files open`, async () => spoolDescriptors(`${kind}-`).length >= count, REQUEST_TIMEOUT_MS);

  /** Opens a request, sends its head and `start` of its body, and then nothing more. */
  const startBody = (requestPath: string, headers: Record<string, string>, start: string) => {
    const { port, hostname } = new URL(api.url);
    const socket = net.connect(Number(port), hostname);
    socket.on('error', () => undefined);
    const head = [`POST ${requestPath} HTTP/1.1`, `Host: ${hostname}:${port}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), '', ''].join('\r\n');
    socket.write(head + start);
    return socket;
  };

  const multipartHeaders = (length: number) => ({
    authorization: `Bearer ${apiKey}`,
    'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
    'content-length': String(length),
  });
  const filePart = (name: string, contents: string) =>
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="input.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n${contents}`;
  const purposePart = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`;
  const completeForm = (contents: string) => `${purposePart}${filePart('file', contents)}\r\n--${BOUNDARY}--\r\n`;
  /** A body sent whole, with its exact length: what is cut is the form inside it. */
  const upload = (body: string) =>
    rawRequest(api.url, { method: 'POST', path: '/openai/v1/files', headers: { ...multipartHeaders(Buffer.byteLength(body)), connection: 'close' }, body });

  const batchLine = (text: string) => JSON.stringify({ messages: [text] });
  const jsonlHeaders = (length: number) => ({ authorization: `Bearer ${apiKey}`, 'content-type': 'application/x-ndjson', 'content-length': String(length) });
  const submitJsonl = (body: string) =>
    rawRequest(api.url, { method: 'POST', path: '/v1/batches', headers: { ...jsonlHeaders(Buffer.byteLength(body)), connection: 'close' }, body });

  describe('a multipart upload (POST /openai/v1/files)', () => {
    ownApiProcess();

    it('answers a form that ends inside its file part, without its closing boundary, with 400 naming file, and lives on', async () => {
      const before = await storedFiles();
      for (const body of [
        // The 109 bytes of the report: Content-Length is right, the form stops inside the file.
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\n{"a":1}\n`,
        // The same in a file part under another name: the part that is read and dropped.
        `${purposePart}${filePart('attachment', '{"a":1}\n')}`,
        // A whole file, then the form stops inside the field after it.
        `${filePart('file', '{"a":1}\n')}\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbat`,
        // The form stops inside a part's headers.
        `${purposePart}--${BOUNDARY}\r\nContent-Disposition: form-data; na`,
      ]) {
        const answer = await upload(body);
        expect([answer.status, JSON.parse(answer.body).error]).toEqual([
          400,
          { message: expect.stringContaining('the upload could not be read'), type: 'invalid_request_error', param: 'file', code: 'invalid_request' },
        ]);
      }
      await waitUntilReleased();
      expect(await storedFiles()).toBe(before);
    });

    it('releases uploads whose clients leave mid-file: no spool file, no open descriptor, nothing stored', async () => {
      const before = await storedFiles();
      const sockets = Array.from({ length: ABANDONED }, () =>
        startBody('/openai/v1/files', multipartHeaders(4 * 1024 * 1024), `${purposePart}${filePart('file', 'x'.repeat(256 * 1024))}`),
      );
      await waitForOpenSpools('upload', ABANDONED);
      for (const socket of sockets) socket.destroy();
      await waitUntilReleased();
      expect(await storedFiles()).toBe(before);
    });

    it('ends an upload that stops arriving with 408 after REQUEST_TIMEOUT_MS, and releases what it opened', async () => {
      const answer = rawRequest(api.url, {
        method: 'POST',
        path: '/openai/v1/files',
        headers: multipartHeaders(4 * 1024 * 1024),
        body: `${purposePart}${filePart('file', 'x'.repeat(64 * 1024))}`,
      });
      await waitForOpenSpools('upload', 1);
      const timedOut = await answer;
      expect(timedOut.status).toBe(408);
      await timedOut.closed;
      await waitUntilReleased();
    });
  });

  describe('a JSONL batch (POST /v1/batches)', () => {
    ownApiProcess();

    it('stores nothing of a submission whose client leaves mid-body, and gives back its spool file, descriptors and slot', async () => {
      const before = await storedBatches();
      const lines = Array.from({ length: 200 }, (_, index) => `${batchLine(`line ${index}`)}\n`).join('');
      const socket = startBody('/v1/batches', jsonlHeaders(10 * 1024 * 1024), lines);
      await waitForOpenSpools('batch', 1);
      expect(await submissionsInFlight()).toBe(1);
      socket.destroy();
      await waitUntilReleased();
      await poll('the submission slot is still taken', async () => (await submissionsInFlight()) === 0);
      expect(await storedBatches()).toBe(before);
      // The one slot (MAX_BATCH_SUBMISSIONS_IN_FLIGHT=1) takes the next submission.
      expect((await submitJsonl(`${batchLine('after the cut')}\n`)).status).toBe(202);
    });

    it('ends a submission that stops arriving with 408 after REQUEST_TIMEOUT_MS, storing nothing and giving back what it held', async () => {
      const before = await storedBatches();
      const answer = rawRequest(api.url, { method: 'POST', path: '/v1/batches', headers: jsonlHeaders(10 * 1024 * 1024), body: `${batchLine('first')}\n${batchLine('sec')}` });
      await waitForOpenSpools('batch', 1);
      expect((await answer).status).toBe(408);
      await waitUntilReleased();
      await poll('the submission slot is still taken', async () => (await submissionsInFlight()) === 0);
      expect(await storedBatches()).toBe(before);
      expect((await submitJsonl(`${batchLine('after the timeout')}\n`)).status).toBe(202);
    });
  });

  describe('JSON bodies', () => {
    ownApiProcess();

    it('lets go of JSON bodies abandoned mid-way on every route that reads one, storing nothing', async () => {
      const before = await storedBatches();
      const routes = ['/v1/conversations', '/v1/batches', '/openai/v1/responses', '/openai/v1/batches', '/api/chat'];
      const sockets = routes.map((route) =>
        startBody(route, { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': String(512 * 1024) }, `{"title": "${'x'.repeat(64 * 1024)}`),
      );
      // The batch submission is being read once it holds its slot.
      await poll('the batch submission is not being read', async () => (await submissionsInFlight()) === 1);
      for (const socket of sockets) socket.destroy();
      await waitUntilReleased();
      await poll('the submission slot is still taken', async () => (await submissionsInFlight()) === 0);
      expect(await storedBatches()).toBe(before);
    });

    it('ends a JSON body that stops arriving with 408 after REQUEST_TIMEOUT_MS on every route that reads one', async () => {
      const answers = await Promise.all(
        ['/v1/conversations', '/v1/batches', '/openai/v1/responses', '/api/chat'].map((route) =>
          rawRequest(api.url, {
            method: 'POST',
            path: route,
            headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': '100000' },
            body: '{"title": "cut',
          }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual([408, 408, 408, 408]);
      await waitUntilReleased();
      expect(await submissionsInFlight()).toBe(0);
    });
  });
});
