import fs from 'node:fs';
import path from 'node:path';

/**
 * Comments and docs name files, folders and README sections; when one moves, the names stay
 * behind (the Lua scripts were still said to be in the store's folder long after they went to
 * the event log's). These read every comment of the code and every Markdown file and check each
 * name against the tree.
 */
const ROOT = path.resolve(__dirname, '../../..');
/** What the build, a start or a run writes, and what npm installs: not the repository's. */
const NOT_OURS = new Set(['node_modules', '.git', 'dist', '.switchyard', 'coverage', 'test-output', 'bench/profiles']);
const TOP_FOLDERS = ['src', 'test', 'docs', 'bench', 'packages', 'workers', 'migrations', 'grafana', 'examples'];
const CODE = /\.(ts|tsx|js|cjs|mjs|lua|sql|ya?ml)$/;

function repositoryPaths(): string[] {
  const paths: string[] = [];
  const walk = (relative: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, relative), { withFileTypes: true })) {
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (NOT_OURS.has(child) || NOT_OURS.has(entry.name)) continue;
      paths.push(child);
      if (entry.isDirectory()) walk(child);
    }
  };
  walk('');
  return paths;
}

const paths = repositoryPaths();
const known = new Set(paths);
const basenames = new Set(paths.map((file) => path.posix.basename(file)));
const textFiles = paths.filter((file) => file.endsWith('.md') || CODE.test(file)).filter((file) => fs.statSync(path.join(ROOT, file)).isFile());

/** The comment part of a line of code (all of a Markdown line); a comment a string writes out is not one. */
function commentOf(file: string, line: string): string {
  if (file.endsWith('.md')) return line;
  const marker = /\.(lua|sql)$/.test(file) ? line.indexOf('--') : /\.ya?ml$/.test(file) ? line.indexOf('#') : line.search(/\/\/ |\/\*|^\s*\*/);
  if (marker < 0 || /['"`]$/.test(line.slice(0, marker))) return '';
  return line.slice(marker);
}

const WITH_EXTENSION = /(?<![\w@/.:$*-])((?:\.{1,2}\/)*[\w-][\w.-]*(?:\/[\w.-]+)*\.(?:ts|tsx|lua|sql|md|cjs|mjs|sh|ya?ml))(?![\w/])/g;
const UNDER_TOP_FOLDER = new RegExp(`(?<![\\w@/.:$-])((?:${TOP_FOLDERS.join('|')})(?:/[\\w.-]+)+/?)`, 'g');

/** Whether a name in `file` is a path of the tree: from the root, from src/, from the file's folder, or a file name found anywhere. */
function resolves(name: string, file: string): boolean {
  const bare = name.replace(/[.,;:]+$/, '').replace(/\/$/, '');
  if (bare.startsWith('bench/profiles')) return true;
  const candidates = [bare, path.posix.normalize(path.posix.join(path.posix.dirname(file), bare)), `src/${bare}`, `packages/client/src/${bare}`, `packages/client/${bare}`];
  if (candidates.some((candidate) => known.has(candidate))) return true;
  // migrations/0013 names the migration numbered so.
  if (/^migrations\/\d{4}$/.test(bare)) return paths.some((each) => each.startsWith(`${bare}_`));
  if (!bare.includes('/')) return basenames.has(bare);
  return paths.some((each) => each.endsWith(`/${bare}`));
}

describe('names in comments and docs', () => {
  it('name only files and folders that exist', () => {
    const missing: string[] = [];
    for (const file of textFiles) {
      const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
      lines.forEach((line, index) => {
        const comment = commentOf(file, line);
        const names = new Set([...comment.matchAll(WITH_EXTENSION), ...comment.matchAll(UNDER_TOP_FOLDER)].map((match) => match[1]!));
        for (const name of names) if (!resolves(name, file)) missing.push(`${file}:${index + 1} names ${name}`);
      });
    }
    expect(missing).toEqual([]);
  });

  it('name only README and docs/API.md sections that are there', () => {
    // README's sections moved into the pages under docs/ it links: a section named as README's is on one of them.
    const docsPages = fs.readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.md'));
    const readmeAndPages = ['README.md', ...docsPages.map((name) => path.join('docs', name))].map((file) => fs.readFileSync(path.join(ROOT, file), 'utf8')).join('\n');
    const docs: Record<string, string> = { README: readmeAndPages, 'docs/API.md': fs.readFileSync(path.join(ROOT, 'docs/API.md'), 'utf8') };
    const reference = /(README|docs\/API\.md)(?:\.md)?(?:'s)?[,:]?\s*"([^"]+)"/g;
    const missing: string[] = [];
    for (const file of textFiles) {
      const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
      lines.forEach((line, index) => {
        for (const [, doc, section] of commentOf(file, line).matchAll(reference)) {
          if (!docs[doc!]!.toLowerCase().includes(section!.toLowerCase())) missing.push(`${file}:${index + 1} names ${doc} "${section}"`);
        }
      });
    }
    expect(missing).toEqual([]);
  });
});
