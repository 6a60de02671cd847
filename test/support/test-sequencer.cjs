// @ts-check
const fs = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * Jest's order, with a test group weighed as the files it runs. Jest runs the files whose last
 * duration it knows longest first, and files it has no duration for (every file of a fresh clone,
 * as in CI) largest first; a group file (test/support/test-group.ts) is a few lines that run a
 * dozen files, so by its own size the groups, the longest jobs of the run, went last and a fresh
 * clone's run ended on one or two workers running the last groups while the others were idle.
 */
class GroupAwareSequencer extends Sequencer {
  /** @param {import('@jest/test-result').Test[]} tests */
  sort(tests) {
    const unsized = tests.filter((test) => this.time(test) === undefined);
    /** @type {Map<string, number>} */
    const weights = new Map(unsized.map((test) => [test.path, weightOf(test)]));
    const sorted = super.sort(tests);
    // Jest's sort puts the files it has no duration for last, among themselves by size: the same
    // place, by weight instead.
    const firstUnsized = sorted.findIndex((test) => weights.has(test.path));
    if (firstUnsized === -1) return sorted;
    const byWeight = sorted.slice(firstUnsized).sort((a, b) => (weights.get(b.path) ?? 0) - (weights.get(a.path) ?? 0));
    return [...sorted.slice(0, firstUnsized), ...byWeight];
  }
}

/** A file's size, a group's the sum of its members' (the globals jest.config.js gives its project). @param {import('@jest/test-result').Test} test */
function weightOf(test) {
  const groups = /** @type {Record<string, string[]> | undefined} */ (test.context.config.globals.switchyardTestGroups);
  const members = groups?.[path.basename(test.path)];
  return (members ?? [test.path]).reduce((sum, file) => sum + sizeOf(file), 0);
}

/** @param {string} file */
function sizeOf(file) {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

module.exports = GroupAwareSequencer;
