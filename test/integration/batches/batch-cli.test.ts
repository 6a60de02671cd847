import { watch } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { followBatchEvents } from '../../support/batch-events';
import { apiClient, openUpload, waitForMetric } from '../../support/http';
import { runToExit, spawnEntry } from '../../support/processes';
import { startTestStack, type TestStack } from '../../support/stack';
import { scripted } from '../../support/tool-turns';

/** `npm run cli -- batch run`: submit, follow, write results; killed, it resumes without duplicates. */
describe('the batch CLI', () => {
  let stack: TestStack;
  let apiKey: string;
  let dir: string;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1 });
    ({ apiKey } = await stack.createUser('cli-user'));
    dir = await mkdtemp(path.join(os.tmpdir(), 'batch-cli-'));
  });
  afterAll(() => stack.close());

  const lineCount = async (file: string) => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
  /** Resolves when `file` has at least `count` lines (woken by the directory's change events). */
  const whenLines = (file: string, count: number) =>
    new Promise<void>((resolve) => {
      const watcher = watch(path.dirname(file), () => void check());
      const check = async () => {
        if ((await lineCount(file)) < count) return;
        watcher.close();
        resolve();
      };
      void check();
    });

  it('writes every result once, and a run killed half-way resumes the same batch writing only what is missing', async () => {
    const items = path.join(dir, 'items.jsonl');
    const out = path.join(dir, 'results.jsonl');
    const total = 40;
    await writeFile(
      items,
      Array.from({ length: total }, (_, i) => JSON.stringify({ customId: `t${i}`, messages: [scripted({ text: `label ${i}`, tokenDelayMs: 30 })] })).join('\n'),
    );
    const args = ['batch', 'run', items, '--out', out, '--concurrency', '4', '--url', stack.url, '--key', apiKey];

    const first = spawnEntry('workers/cli.ts', {}, args);
    await whenLines(out, 6);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const partial = await lineCount(out);
    expect(partial).toBeGreaterThanOrEqual(6);
    expect(partial).toBeLessThan(total);

    const second = await runToExit('workers/cli.ts', {}, args);
    expect(second.stderr).toMatch(/resuming batch batch_/);
    expect(second.stderr).toMatch(/completed: 40 succeeded, 0 failed, 0 cancelled of 40; 40 results in/);
    expect(second.code).toBe(0);
    const lines = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.index).sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i));
    for (const line of lines) expect(line).toMatchObject({ customId: `t${line.index}`, status: 'succeeded', text: `label ${line.index}` });
    const batches = (await (await fetch(`${stack.url}/v1/batches`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { data: unknown[] };
    expect(batches.data).toHaveLength(1);

    // Status and results by id.
    const id = /batch (batch_\S+)/.exec(second.stderr)![1]!;
    // The key from the environment instead of --key.
    const status = await runToExit('workers/cli.ts', { SWITCHYARD_API_KEY: apiKey }, ['batch', 'status', id, '--url', stack.url]);
    expect(JSON.parse(status.stdout)).toMatchObject({ id, status: 'completed' });
    const results = await runToExit('workers/cli.ts', {}, ['batch', 'results', id, '--url', stack.url, '--key', apiKey]);
    expect(results.stdout.trim().split('\n')).toHaveLength(total);
  }, 90_000);

  it('reports a bad line by its number and stores nothing', async () => {
    const items = path.join(dir, 'bad.jsonl');
    await writeFile(items, [JSON.stringify({ messages: ['fine'] }), '{oops', JSON.stringify({ messages: [] })].join('\n'));
    const run = await runToExit('workers/cli.ts', {}, ['batch', 'run', items, '--out', path.join(dir, 'bad-out.jsonl'), '--url', stack.url, '--key', apiKey]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('line 2: not valid JSON');
    expect(run.stderr).toContain('line 3 messages:');
    const keyless = await runToExit('workers/cli.ts', { DATA_DIR: dir, SWITCHYARD_API_KEY: '' }, [
      'batch',
      'run',
      items,
      '--out',
      path.join(dir, 'bad-out.jsonl'),
      '--url',
      stack.url,
    ]);
    expect([keyless.code, keyless.stderr.trim()]).toEqual([1, expect.stringMatching(/^no API key: pass --key/)]);
  });

  it('reports every problem of a line, and with --skip-invalid runs the valid lines and lists the others', async () => {
    const items = path.join(dir, 'partly-bad.jsonl');
    const out = path.join(dir, 'partly-bad-out.jsonl');
    const twoProblems = JSON.stringify({ messages: ['hi'], maxSteps: 0, colour: 'blue' });
    await writeFile(items, [JSON.stringify({ customId: 'ok', messages: [scripted({ text: 'fine' })] }), '{oops', twoProblems].join('\n'));
    const args = ['batch', 'run', items, '--out', out, '--url', stack.url, '--key', apiKey];

    const refused = await runToExit('workers/cli.ts', {}, args);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('line 2: not valid JSON');
    expect(refused.stderr).toMatch(/line 3 maxSteps: /);
    expect(refused.stderr).toContain('line 3 colour: is not a known field');
    expect(refused.stderr).toContain('batch run --skip-invalid runs the valid lines');

    const skipping = await runToExit('workers/cli.ts', {}, [...args, '--skip-invalid']);
    expect(skipping.stderr).toContain('skipped 2 invalid lines:');
    expect(skipping.stderr).toMatch(/line 3: maxSteps: .*; colour: is not a known field/);
    expect(skipping.stderr).toMatch(/completed: 1 succeeded, 0 failed, 0 cancelled of 1; 1 results in/);
    expect(skipping.code).toBe(0);
    expect(JSON.parse(await readFile(out, 'utf8'))).toMatchObject({ customId: 'ok', status: 'succeeded', text: 'fine' });
  }, 60_000);

  it('runs the example data set of examples/batch-from-jsonl as its README says, with the key `npm start` keeps in DATA_DIR', async () => {
    const out = path.join(dir, 'tickets-results.jsonl');
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'batch-cli-data-'));
    await writeFile(path.join(dataDir, 'dev-api-key'), `${apiKey}\n`);
    const run = await runToExit('workers/cli.ts', { DATA_DIR: dataDir }, ['batch', 'run', 'examples/batch-from-jsonl/tickets.jsonl', '--out', out, '--url', stack.url]);
    expect(run.code).toBe(0);
    const lines = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(8);
    const refund = lines.find((line) => line.customId === 'T-1001');
    expect(refund).toMatchObject({
      status: 'succeeded',
      text: expect.stringContaining('25.00'),
      toolCalls: [expect.objectContaining({ toolName: 'calculator', result: expect.objectContaining({ result: 25 }) })],
    });
  }, 60_000);

  it('stops following on Ctrl-C (exit 130, the batch goes on) with plain progress lines off a terminal, and the same command resumes', async () => {
    const items = path.join(dir, 'interrupted.jsonl');
    const out = path.join(dir, 'interrupted-results.jsonl');
    const total = 30;
    await writeFile(items, Array.from({ length: total }, (_, i) => JSON.stringify({ customId: `s${i}`, messages: [scripted({ tokens: 20, tokenDelayMs: 30 })] })).join('\n'));
    const args = ['batch', 'run', items, '--out', out, '--concurrency', '3', '--url', stack.url, '--key', apiKey];

    const first = spawnEntry('workers/cli.ts', {}, args);
    let stderr = '';
    first.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    await whenLines(out, 3);
    const exited = new Promise<number | null>((resolve) => first.once('exit', resolve));
    first.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toMatch(/stopped following; the batch goes on\. Run the same command again to resume: \d+ results in /);
    // stderr is a pipe here: no bar, no cursor moves, only whole lines.
    expect(stderr).not.toMatch(/[\r\u001b]/);
    const progress = stderr
      .trim()
      .split('\n')
      .filter((line) => !/^(submitted|resuming) batch|^stopped following/.test(line));
    expect(progress.length).toBeGreaterThan(0);
    for (const line of progress) expect(line).toMatch(new RegExp(`^\\d+/${total} done, \\d+ failed, \\d+ tokens, [\\d.]+ items/s(, ETA \\d+ s)?$`));

    const second = await runToExit('workers/cli.ts', {}, args);
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/resuming batch batch_/);
    expect(second.stderr).toContain(`${total}/${total} done, 0 failed`);
    const lines = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.index).sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i));
  }, 90_000);

  it("after `batch retry`, the same `batch run` puts the retried items' new lines in place of the failed ones", async () => {
    const items = path.join(dir, 'retried.jsonl');
    const out = path.join(dir, 'retried-results.jsonl');
    // Its own words: the scripted model counts the arrivals of each conversation's messages.
    const failsOnce = `run then retry ${scripted({ attempts: [{ error: { status: 400, message: 'refused' } }, { text: 'fine on retry' }] })}`;
    await writeFile(
      items,
      [JSON.stringify({ customId: 'flaky', messages: [failsOnce] }), JSON.stringify({ customId: 'steady', messages: [scripted({ text: 'fine' })] })].join('\n'),
    );
    const args = ['batch', 'run', items, '--out', out, '--url', stack.url, '--key', apiKey];
    const first = await runToExit('workers/cli.ts', {}, args);
    expect(first.code).toBe(2);
    const id = /batch (batch_\S+)/.exec(first.stderr)![1]!;
    const before = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(before.map((line) => [line.customId, line.status]).sort()).toEqual([
      ['flaky', 'failed'],
      ['steady', 'succeeded'],
    ]);

    expect((await runToExit('workers/cli.ts', {}, ['batch', 'retry', id, '--url', stack.url, '--key', apiKey])).code).toBe(0);
    const second = await runToExit('workers/cli.ts', {}, args);
    expect([second.code, second.stderr]).toEqual([0, expect.stringContaining(`resuming batch ${id}`)]);
    const after = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(after.map((line) => [line.customId, line.status, line.text]).sort()).toEqual([
      ['flaky', 'succeeded', 'fine on retry'],
      ['steady', 'succeeded', 'fine'],
    ]);
    expect(after.find((line) => line.customId === 'steady')).toEqual(before.find((line) => line.customId === 'steady'));
  }, 60_000);

  it('cancels and retries a batch by id', async () => {
    const api = apiClient(stack.url, apiKey);
    const cli = async (command: string, id: string) => {
      const run = await runToExit('workers/cli.ts', {}, ['batch', command, id, '--url', stack.url, '--key', apiKey]);
      expect(run.code).toBe(0);
      return JSON.parse(run.stdout);
    };
    const failsOnce = scripted({ attempts: [{ error: { status: 400, message: 'refused' } }, { text: 'fine on retry' }] });
    const flaky = (await api.post('/v1/batches', { items: [{ messages: [failsOnce] }, { messages: [scripted({ text: 'fine' })] }] })).body;
    const firstEnd = await followBatchEvents(stack.url, apiKey, flaky.id);
    expect((await firstEnd.finished().finally(() => firstEnd.close())).counts).toMatchObject({ succeeded: 1, failed: 1 });
    expect(await cli('retry', flaky.id)).toMatchObject({ requeued: 1, status: 'running' });
    const secondEnd = await followBatchEvents(stack.url, apiKey, flaky.id);
    expect((await secondEnd.finished().finally(() => secondEnd.close())).counts).toMatchObject({ succeeded: 2, failed: 0 });

    const slow = (await api.post('/v1/batches', { items: Array.from({ length: 20 }, () => ({ messages: [scripted({ tokens: 100, tokenDelayMs: 10 })] })), concurrency: 2 })).body;
    const following = await followBatchEvents(stack.url, apiKey, slow.id);
    await following.waitFor((frame) => frame.type === 'batch-progress' && frame.counts.succeeded >= 1 && frame.counts.running > 0);
    // While it runs, its ETA is a number of seconds.
    expect((await api.get(`/v1/batches/${slow.id}`)).body).toMatchObject({ status: 'running', etaSeconds: expect.any(Number) });
    expect(['cancelling', 'cancelled']).toContain((await cli('cancel', slow.id)).status);
    const end = await following.finished().finally(() => following.close());
    expect(end.status).toBe('cancelled');
    expect(end.counts.succeeded + end.counts.cancelled).toBe(20);
    expect(end.counts.cancelled).toBeGreaterThanOrEqual(10);
    expect((await api.get(`/v1/batches/${slow.id}`)).body.etaSeconds).toBeNull();
  }, 90_000);
  it('waits out a busy service (503 with Retry-After) and submits when a slot is free, the same batch once', async () => {
    // Every submission slot of the API process held by an upload that has not ended.
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/x-ndjson' };
    const held = Array.from({ length: 4 }, () => openUpload(stack.url, '/v1/batches', headers));
    held.forEach((upload) => upload.write(`${JSON.stringify({ messages: [scripted({ text: 'held' })] })}\n`));
    await waitForMetric(stack.url, 'switchyard_batch_submissions_in_flight', 4);

    const items = path.join(dir, 'busy.jsonl');
    await writeFile(items, JSON.stringify({ customId: 'patient', messages: [scripted({ text: 'served' })] }));
    const cli = spawnEntry('workers/cli.ts', {}, ['batch', 'run', items, '--out', path.join(dir, 'busy-out.jsonl'), '--url', stack.url, '--key', apiKey]);
    let stderr = '';
    await new Promise<void>((resolve) =>
      cli.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('the service is busy')) resolve();
      }),
    );
    expect(stderr).toMatch(/the service is busy \(503: .*MAX_BATCH_SUBMISSIONS_IN_FLIGHT.*\); trying again in \d+ s/);
    held.forEach((upload) => upload.end());
    await Promise.all(held.map((upload) => upload.response));

    const code = await new Promise<number | null>((resolve) => cli.once('exit', resolve));
    expect(stderr).toMatch(/completed: 1 succeeded, 0 failed, 0 cancelled of 1; 1 results in/);
    expect(code).toBe(0);
    const results = (await readFile(path.join(dir, 'busy-out.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(results).toEqual([expect.objectContaining({ customId: 'patient', status: 'succeeded', text: 'served' })]);
  }, 60_000);
});
