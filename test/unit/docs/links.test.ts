import fs from 'node:fs';
import path from 'node:path';

/**
 * README.md and docs/**\/*.md are read on GitHub: a relative link to a file that moved, or an
 * anchor to a heading that was renamed, is a dead end for a reader. Every one must resolve.
 */
const ROOT = path.resolve(__dirname, '../../..');

function markdownFiles(): string[] {
  const found = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const relative = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.md')) found.push(relative);
    }
  };
  walk('docs');
  return found;
}

/** The text outside fenced code blocks, where links and headings are markdown. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** The anchors GitHub makes for a page's headings (duplicates numbered as GitHub numbers them). */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  // GitHub's rule: lower case, punctuation dropped (not `-` or `_`), spaces to `-`, repeats numbered.
  const slugger = {
    slug(text: string): string {
      const base = text
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
        .replace(/ /g, '-');
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      return count === 0 ? base : `${base}-${count}`;
    },
  };
  for (const [, heading] of prose(fs.readFileSync(path.join(ROOT, file), 'utf8')).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    anchors.add(slugger.slug(text));
  }
  return anchors;
}

describe('documentation links', () => {
  it('every relative link and anchor in README.md and docs/**/*.md resolves', () => {
    const anchors = new Map<string, Set<string>>();
    const anchorsFor = (file: string) => anchors.get(file) ?? anchors.set(file, anchorsOf(file)).get(file)!;
    const broken: string[] = [];
    for (const file of markdownFiles()) {
      const text = prose(fs.readFileSync(path.join(ROOT, file), 'utf8')).replace(/`[^`\n]*`/g, '');
      for (const [, target] of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target!) || target!.startsWith('/')) continue; // https:, mailto:, a path on the service
        const [pathPart, anchor] = target!.split('#') as [string, string | undefined];
        const linked = pathPart === '' ? file : path.normalize(path.join(path.dirname(file), decodeURIComponent(pathPart)));
        if (!fs.existsSync(path.join(ROOT, linked))) {
          broken.push(`${file}: ${target} (no file ${linked})`);
          continue;
        }
        if (anchor && linked.endsWith('.md') && !anchorsFor(linked).has(decodeURIComponent(anchor))) broken.push(`${file}: ${target} (no heading #${anchor} in ${linked})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
