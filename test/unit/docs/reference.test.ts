import fs from 'node:fs';
import path from 'node:path';
import { REGENERATE_COMMAND, referencePages } from '../../../scripts/docs-reference';

/** The reference pages are rendered from the code: a committed page that differs has drifted from it. */
const ROOT = path.resolve(__dirname, '../../..');

describe('generated reference pages', () => {
  it.each(referencePages().map((page) => [page.file, page.text] as const))('%s is what the code renders', (file, text) => {
    const committed = fs.existsSync(path.join(ROOT, file)) ? fs.readFileSync(path.join(ROOT, file), 'utf8') : '(missing)';
    if (committed !== text) throw new Error(`${file} is out of date with the code it is generated from: run \`${REGENERATE_COMMAND}\` and commit it`);
  });
});
