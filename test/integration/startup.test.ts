import { runToExit } from '../support/processes';

describe('start-up', () => {
  it('stops on a bad environment value with one line naming it', async () => {
    const result = await runToExit('workers/api.ts', { PORT: 'eighty', DATABASE_URL: 'postgresql://postgres@127.0.0.1/postgres' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^switchyard: invalid configuration: "PORT": /)]);
  });

  it('tells the operator that separate processes need DATABASE_URL', async () => {
    const result = await runToExit('workers/worker.ts', {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('set DATABASE_URL');
  });
});
