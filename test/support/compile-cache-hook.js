// @ts-check
/**
 * Preloaded (`node --require`) into the processes the test suite starts, on a Node without
 * `module.enableCompileCache` (Node 20): a V8 code cache for CommonJS modules in the directory
 * SWITCHYARD_COMPILE_CACHE_DIR, so that the hundreds of API, worker and CLI starts of a run
 * compile each module once instead of every time (about a third of a start's CPU).
 *
 * Safe to share between processes running at once and between builds:
 * - an entry's name is the hash of the module's path and its source, so a file that
 *   compile-server rewrote is a miss, never stale code (and V8 rejects data of another version);
 * - an entry is written to a temporary name and renamed over, so a reader sees all of one or none;
 * - the data is made at exit, after the module ran, so it holds the functions a start compiled.
 *
 * Not the `v8-compile-cache` package: it compiles every module without a dynamic import callback,
 * so an `import()` in a CommonJS module (the playground's build, PGlite's start) throws there, and
 * it rewrites one shared blob and its index in two writes, which a concurrent reader can see half of.
 */
const Module = require('node:module');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

const DIR = process.env.SWITCHYARD_COMPILE_CACHE_DIR;

/** The scripts compiled without usable data, to be cached at exit: entry path → script. */
const misses = new Map();

/** @param {string} file */
function readEntry(file) {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

function writeMisses() {
  for (const [file, script] of misses) {
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(temporary, script.createCachedData());
      fs.renameSync(temporary, file);
    } catch {
      // A cache that cannot be written costs the next start its compile, nothing more.
    }
  }
}

if (DIR && typeof Module.prototype._compile === 'function') {
  fs.mkdirSync(DIR, { recursive: true });
  const compile = Module.prototype._compile;
  /** @this {any} @param {string} content @param {string} filename @param {unknown} [format] */
  Module.prototype._compile = function (content, filename, format) {
    // A script from vm has no loader for `import()` (and on Node 20 one given it is lost when the
    // code comes from the cache): a module that may import() compiles Node's own way.
    if ((format !== undefined && format !== 'commonjs') || /\bimport\s*\(/.test(content)) return compile.call(this, content, filename, format);
    // A shebang is only valid at the very start; keep its line so that line numbers stay.
    const source = content.startsWith('#!') ? content.replace(/^#![^\r\n]*/, '') : content;
    const entry = path.join(DIR, crypto.createHash('sha256').update(filename).update('\0').update(content).digest('hex'));
    const cachedData = readEntry(entry);
    let script;
    try {
      script = new vm.Script(Module.wrap(source), { filename, cachedData });
    } catch {
      // Not CommonJS after all (say, ES module syntax that Node would detect): Node's own way.
      return compile.call(this, content, filename, format);
    }
    if (!cachedData || script.cachedDataRejected) misses.set(entry, script);
    const wrapper = script.runInThisContext({ displayErrors: true });
    const module = this;
    /** @param {string} id */
    const require = (id) => module.require(id);
    /** @param {string} request @param {{ paths?: string[] }} [options] */
    const resolve = (request, options) => /** @type {any} */ (Module)._resolveFilename(request, module, false, options);
    /** @param {string} request */
    resolve.paths = (request) => /** @type {any} */ (Module)._resolveLookupPaths(request, module);
    require.resolve = resolve;
    require.main = process.mainModule;
    require.extensions = /** @type {any} */ (Module)._extensions;
    require.cache = /** @type {any} */ (Module)._cache;
    return wrapper.call(module.exports, module.exports, require, module, filename, path.dirname(filename));
  };
  process.once('exit', writeMisses);
}
