import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const GroupAwareSequencer = require('../../support/test-sequencer.cjs');

describe('the suite order on a fresh clone', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sequencer-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  function file(name: string, bytes: number): string {
    const file = path.join(dir, name);
    fs.writeFileSync(file, 'x'.repeat(bytes));
    return file;
  }

  it('runs a group, weighed as its members, before a single file larger than the group file itself', () => {
    const members = [file('a.test.ts', 6000), file('b.test.ts', 6000)];
    const group = file('group-01.test.ts', 100);
    const single = file('single.test.ts', 9000);
    const small = file('small.test.ts', 500);
    const context = {
      config: { cacheDirectory: path.join(dir, 'cache'), id: 'sequencer-test', globals: { switchyardTestGroups: { 'group-01.test.ts': members } } },
      hasteFS: { getSize: (p: string) => fs.statSync(p).size },
    };
    const tests = [small, single, group].map((p) => ({ path: p, context }));
    const order = new GroupAwareSequencer({ contexts: [context] }).sort(tests).map((test: { path: string }) => path.basename(test.path));
    expect(order).toEqual(['group-01.test.ts', 'single.test.ts', 'small.test.ts']);
  });
});
