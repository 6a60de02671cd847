import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { apiClient } from '../support/http';
import { spawnAllInOne, spawnService, type AllInOneProcess, type ServiceProcess } from '../support/processes';
import { startTestStack, type TestStack } from '../support/stack';

const isJsonLine = (line: string) => {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
};

/** `npm start` writes for a person at a terminal; `npm run api` / `worker` for a log collector. */
describe('log format per entry point', () => {
  let stack: TestStack;
  let dataDir: string;
  let allInOne: AllInOneProcess;
  let api: ServiceProcess;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0 });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-logs-'));
    [allInOne, api] = await Promise.all([
      spawnAllInOne(stack.childEnv({ DATA_DIR: dataDir, PLAYGROUND_DIR: path.join(dataDir, 'playground'), LOG_LEVEL: 'info' })),
      spawnService('api', stack.childEnv()),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([allInOne?.kill(), api?.kill()]);
    await stack.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('npm start logs readable lines at info, one an entry, not JSON', async () => {
    const conversationId = (await apiClient(allInOne.url, allInOne.apiKey).post('/v1/conversations', {})).body.id as string;
    const posted = await apiClient(allInOne.url, allInOne.apiKey).post(`/v1/conversations/${conversationId}/turns`, { content: 'Hello there' });
    expect(posted.status).toBe(202);
    await allInOne.waitForOutput('turn ended');

    // Without colours, should the environment force them.
    const lines = allInOne
      .stdout()
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split('\n')
      .filter(Boolean);
    expect(lines.filter(isJsonLine)).toEqual([]);
    expect(lines.find((line) => line.includes('turn ended'))).toMatch(new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\] INFO.*: turn ended .*"turnId":"${posted.body.turnId}"`));
  }, 60_000);

  it('npm run api logs JSON lines', async () => {
    const lines = api.stdout().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => !isJsonLine(line))).toEqual([]);
    expect(lines.map((line) => JSON.parse(line).msg)).toContain('api started');
  });
});
