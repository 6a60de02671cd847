// @ts-check
/**
 * Preloaded (`NODE_OPTIONS=--require …`) into a process a test starts: at its exit, writes the
 * names of the packages it loaded from node_modules (`express`, `@opentelemetry/api`), sorted,
 * as a JSON array to the file SWITCHYARD_LOADED_PACKAGES_FILE names. For tests of what a start
 * loads only when first needed.
 */
const fs = require('node:fs');
const path = require('node:path');

const FILE = process.env.SWITCHYARD_LOADED_PACKAGES_FILE;

if (FILE) {
  process.on('exit', () => {
    const names = new Set();
    for (const file of Object.keys(require.cache)) {
      // The innermost node_modules names the package the file is of.
      const inside = file.split(`${path.sep}node_modules${path.sep}`).slice(1).pop();
      if (!inside) continue;
      const parts = inside.split(path.sep);
      names.add(parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]);
    }
    fs.writeFileSync(FILE, JSON.stringify([...names].sort()));
  });
}
