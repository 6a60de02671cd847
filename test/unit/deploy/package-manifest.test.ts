import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { readRepoFile, ROOT } from '../../support/deploy-files';

/**
 * What a production install needs, read from package.json and the server's imports: the start
 * scripts run the compiled server with plain node (built first by their pre-hook), and the
 * runtime dependencies are what the server imports, none of what only the build, the playground
 * or the tests need.
 */
const manifest = JSON.parse(readRepoFile('package.json')) as { scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string> };
const BUILD_AND_PLAYGROUND = ['@ai-sdk/react', 'ai', 'esbuild', 'react', 'react-dom', 'tsx', 'use-stick-to-bottom'];

/** The server's TypeScript files: src/ but the playground's browser code, workers/, and the client package's sources it imports. */
function serverFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return relative === path.join('src', 'playground', 'app') ? [] : serverFiles(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/** The workspace's own packages, compiled into dist/ with the server (scripts/compile-server.js). */
const WORKSPACE_PACKAGES = ['@switchyard/protocol', '@switchyard/client'];

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`), or undefined for relative, built-in and workspace ones. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0]!)) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return WORKSPACE_PACKAGES.includes(name!) ? undefined : name;
}

/** Packages a file loads when it runs: static imports and re-exports, not `import type`; dynamic `import()` apart. */
function runtimeImports(source: string): { static: string[]; dynamic: string[] } {
  const statics = [...source.matchAll(/^(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)].map((match) => match[1]!);
  const dynamics = [...source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((match) => match[1]!);
  return { static: statics, dynamic: dynamics };
}

describe('package.json', () => {
  it.each(['start', 'api', 'worker', 'cli', 'scripted-model'])('`npm run %s` compiles first, then runs dist/ with plain node', (script) => {
    expect(manifest.scripts[`pre${script}`]).toBe('node scripts/compile-server.js');
    expect(manifest.scripts[script]).toMatch(/^node dist\/workers\/[a-z-]+\.js$/);
    expect(fs.existsSync(path.join(ROOT, manifest.scripts[script]!.replace(/^node dist\//, '').replace(/\.js$/, '.ts')))).toBe(true);
  });

  it('keeps the build, playground and test packages out of the runtime dependencies', () => {
    for (const name of BUILD_AND_PLAYGROUND) {
      expect([name, manifest.dependencies[name]]).toEqual([name, undefined]);
      expect(manifest.devDependencies[name]).toBeDefined();
    }
  });

  it('has every package the server loads at run time in its runtime dependencies; a development one only through import()', () => {
    const files = ['src', 'workers', 'packages/protocol/src', 'packages/client/src'].flatMap(serverFiles);
    expect(files.length).toBeGreaterThan(100);
    const missing: string[] = [];
    const lazy: string[] = [];
    for (const file of files) {
      const imports = runtimeImports(fs.readFileSync(path.join(ROOT, file), 'utf8'));
      for (const name of imports.static.map(packageOf)) if (name && !manifest.dependencies[name]) missing.push(`${file}: ${name}`);
      for (const name of imports.dynamic.map(packageOf)) if (name && !manifest.dependencies[name]) lazy.push(`${file}: ${name}`);
    }
    expect(missing).toEqual([]);
    // The one development package the server may load: esbuild, when `npm start` bundles the playground.
    expect(lazy).toEqual(['src/playground/build.ts: esbuild']);
  });
});
