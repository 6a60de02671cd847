import path from 'node:path';
import { allInOneConfig, dataDirRedisPrefix } from '../../../src/runtime/all-in-one-config';

describe("npm start's configuration", () => {
  it('on the embedded database, takes a REDIS_PREFIX of its DATA_DIR: the same for one folder, another for another', () => {
    const first = allInOneConfig({ DATA_DIR: '/srv/one/.switchyard' });
    expect(first.REDIS_PREFIX).toBe(dataDirRedisPrefix('/srv/one/.switchyard'));
    expect(first.REDIS_PREFIX).toMatch(/^switchyard-[0-9a-f]{12}$/);
    expect(allInOneConfig({ DATA_DIR: '/srv/one/.switchyard' }).REDIS_PREFIX).toBe(first.REDIS_PREFIX);
    expect(allInOneConfig({ DATA_DIR: '/srv/two/.switchyard' }).REDIS_PREFIX).not.toBe(first.REDIS_PREFIX);
    // A relative DATA_DIR is taken from where it is started.
    expect(allInOneConfig({}).REDIS_PREFIX).toBe(dataDirRedisPrefix(path.resolve('.switchyard')));
  });

  it('keeps a REDIS_PREFIX that is set, and the shared one on a PostgreSQL server that api and worker processes may share', () => {
    expect(allInOneConfig({ DATA_DIR: '/srv/one', REDIS_PREFIX: 'mine' }).REDIS_PREFIX).toBe('mine');
    expect(allInOneConfig({ DATA_DIR: '/srv/one', DATABASE_URL: 'postgresql://db/app' }).REDIS_PREFIX).toBe('switchyard');
  });

  it('takes its own defaults under the environment', () => {
    expect(allInOneConfig({}, { LOG_FORMAT: 'pretty' }).LOG_FORMAT).toBe('pretty');
    expect(allInOneConfig({ LOG_FORMAT: 'json' }, { LOG_FORMAT: 'pretty' }).LOG_FORMAT).toBe('json');
  });
});
