import fs from 'node:fs';
import path from 'node:path';

/**
 * `npx tsx bench/summarize-profile.ts bench/profiles/<process>/ [top]`: where a service
 * process spent its CPU (from `npm run bench -- <name> --profile`), as self time per function
 * and per package or source file, so a profile can be read without DevTools.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

/**
 * Who calls `functionName`: for each of its samples, the nearest caller outside Node's internals
 * (the library or source line that made the call), by share of that function's time.
 */
function callers(file: string, functionName: string, top: number): string {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const parent = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const byCaller = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    if (node.callFrame.functionName !== functionName || !node.hitCount) continue;
    total += node.hitCount;
    let caller = parent.get(node.id);
    while (caller && (!caller.callFrame.url || caller.callFrame.url.startsWith('node:'))) caller = parent.get(caller.id);
    const frame = caller?.callFrame;
    const name = frame ? `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '(root)';
    byCaller.set(name, (byCaller.get(name) ?? 0) + node.hitCount);
  }
  const lines = [...byCaller]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, hits]) => `${((hits / Math.max(1, total)) * 100).toFixed(1).padStart(5)}%  ${name}`);
  return [`${functionName}: ${total} samples; nearest callers outside node's internals:`, ...lines].join('\n');
}

function summarize(file: string, top: number): string {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const totalHits = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const msPerHit = (profile.endTime - profile.startTime) / 1000 / Math.max(1, totalHits);
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    const frame = node.callFrame;
    const where = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
    const name = `${frame.functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + hits);
    const owner = ownerOf(frame);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + hits);
  }
  const table = (entries: Map<string, number>) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, hits]) => `${((hits / totalHits) * 100).toFixed(1).padStart(5)}%  ${(hits * msPerHit).toFixed(0).padStart(6)} ms  ${name}`)
      .join('\n');
  return [
    `${path.basename(file)}: ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s profiled, ${totalHits} samples`,
    '',
    'self time by package / source file:',
    table(byOwner),
    '',
    'self time by function:',
    table(byFunction),
  ].join('\n');
}

function shortUrl(url: string): string {
  const clean = url.replace(/^file:\/\//, '');
  const modules = clean.lastIndexOf('node_modules/');
  if (modules >= 0) return clean.slice(modules + 'node_modules/'.length);
  const root = path.resolve(__dirname, '..');
  return clean.startsWith(root) ? path.relative(root, clean) : clean;
}

/** The package (node_modules), the source file (ours), node's internals, or V8's pseudo-frames (GC, idle, program). */
function ownerOf(frame: ProfileNode['callFrame']): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (frame.url.startsWith('node:')) return `node:${frame.url.slice(5).split('/')[0]}`;
  const short = shortUrl(frame.url);
  if (frame.url.includes('node_modules/')) {
    const parts = short.split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  return short;
}

/** A folder (one per process, as --profile writes them) means its main thread's profile: the biggest file. */
function mainThreadProfile(target: string): string {
  if (!fs.statSync(target).isDirectory()) return target;
  const files = fs
    .readdirSync(target)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => path.join(target, name))
    .sort((a, b) => fs.statSync(b).size - fs.statSync(a).size);
  if (!files[0]) throw new Error(`no .cpuprofile in ${target}`);
  return files[0];
}

const [target, ...rest] = process.argv.slice(2);
if (!target) {
  process.stderr.write('usage: npx tsx bench/summarize-profile.ts <file.cpuprofile | bench/profiles/<process>/> [top=25] [--callers <function>]\n');
  process.exit(1);
}
const callersIndex = rest.indexOf('--callers');
const functionName = callersIndex >= 0 ? rest[callersIndex + 1] : undefined;
const top = Number(rest.find((argument, index) => (callersIndex < 0 || index !== callersIndex + 1) && /^\d+$/.test(argument)) ?? 25);
const file = mainThreadProfile(target);
process.stdout.write(`${functionName ? callers(file, functionName, top) : summarize(file, top)}\n`);
