// @ts-check
/**
 * Compiles the server (src/, workers/ and the workspace packages it imports by name) into
 * dist/ with esbuild, one output file per source file: the tree keeps its shape, so relative
 * imports and `__dirname` work as from the sources, and the Lua scripts are copied beside their
 * module. Plain JavaScript, so that it runs before anything is compiled: `npm start`, `npm run api`,
 * `worker`, `cli` and `scripted-model` run it first, `npm run build` and the test suite's global
 * set-up too, so every process runs one build, never tsx.
 *
 * Each file is written to a temporary name and renamed over the old one, and only when it
 * changed: a process started meanwhile (another start, another test run) reads either the old
 * file or the new one, never half of one.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const OUT_DIR = path.join(ROOT, 'dist');
const SOURCE_DIRS = ['src', 'workers', 'packages/protocol/src', 'packages/client/src'];
/**
 * The workspace packages the server imports by name, and their entry in dist/. In the sources
 * the names resolve to TypeScript (the packages' exports); compiled, each is written as the
 * relative path of its compiled entry, as tsc-alias does for tsc's output.
 */
const WORKSPACE_ENTRIES = {
  '@switchyard/protocol': 'packages/protocol/src/index.js',
  '@switchyard/client': 'packages/client/src/index.js',
};
/** Browser code, bundled on its own by src/playground/build.ts. */
const NOT_SERVER = [path.join('src', 'playground', 'app')];
/** Files read at run time from beside the module that reads them. */
const ASSET_DIRS = ['src/event-log/lua'];

/** @param {string} dir @returns {string[]} */
function typeScriptFiles(dir) {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return NOT_SERVER.includes(relative) ? [] : typeScriptFiles(relative);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [relative] : [];
  });
}

/** @param {string} file @param {Uint8Array} contents */
function writeIfChanged(file, contents) {
  try {
    if (Buffer.from(contents).equals(fs.readFileSync(file))) return;
  } catch {
    // Not there yet.
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, contents);
  fs.renameSync(temporary, file);
}

/** Compiles into dist/; resolves once every file is in place. */
async function compileServer() {
  const { build } = require('esbuild');
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: SOURCE_DIRS.flatMap(typeScriptFiles),
    outdir: OUT_DIR,
    outbase: ROOT,
    bundle: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: true,
    write: false,
    logLevel: 'warning',
  });
  for (const file of result.outputFiles) writeIfChanged(file.path, file.path.endsWith('.js') ? withWorkspacePaths(file.path, file.text) : file.contents);
  for (const dir of ASSET_DIRS) {
    for (const name of fs.readdirSync(path.join(ROOT, dir))) writeIfChanged(path.join(OUT_DIR, dir, name), fs.readFileSync(path.join(ROOT, dir, name)));
  }
}

/** `require("@switchyard/…")` in the compiled `file` → the relative path of that package's compiled entry. @param {string} file @param {string} text */
function withWorkspacePaths(file, text) {
  return text.replace(/require\("(@switchyard\/[a-z-]+)"\)/g, (whole, name) => {
    const entry = WORKSPACE_ENTRIES[/** @type {keyof typeof WORKSPACE_ENTRIES} */ (name)];
    if (!entry) return whole;
    const relative = path.relative(path.dirname(file), path.join(OUT_DIR, entry)).split(path.sep).join('/');
    return `require(${JSON.stringify(relative.startsWith('.') ? relative : `./${relative}`)})`;
  });
}

/** Where esbuild is not installed (a production install without dev dependencies), dist/ is used as it was built. */
function canCompile() {
  try {
    require.resolve('esbuild');
    return true;
  } catch {
    return false;
  }
}

module.exports = { compileServer };

if (require.main === module) {
  if (!canCompile()) {
    if (!fs.existsSync(path.join(OUT_DIR, 'workers'))) {
      process.stderr.write('switchyard: dist/ is not built and esbuild is not installed: run npm install (with dev dependencies), then npm run build\n');
      process.exit(1);
    }
  } else {
    compileServer().catch((error) => {
      process.stderr.write(`switchyard: compiling failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
  }
}
