import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../config/config';
import { projectRoot } from '../config/project-root';
import { errorMessage } from '../errors/switchyard-error';

/** The playground's sources, which the compiled server (dist/src/playground) does not carry. */
const APP_DIR = path.join(projectRoot(__dirname), 'src', 'playground', 'app');

/**
 * Bundles the playground (React + the AI SDK's `useChat`) into `outDir`, which the API serves
 * at `/`. Run by `npm start` and `npm run build`; the bundle is never committed.
 */
export async function buildPlayground(outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  await bundleReactPage(path.join(APP_DIR, 'main.tsx'), path.join(outDir, 'app.js'));
  await Promise.all(['index.html', 'app.css'].map((file) => copyFile(path.join(APP_DIR, file), path.join(outDir, file))));
}

/**
 * Bundles a React page (its TSX entry and everything it imports) into one minified ES module.
 * `nodePaths`: where packages are looked up besides the `node_modules` above the entry.
 */
export async function bundleReactPage(entry: string, outfile: string, nodePaths: string[] = []): Promise<void> {
  // esbuild is a development dependency: loaded here, so that a production install without it
  // still starts (npm start then serves / saying the playground is not built).
  const { build } = await import('esbuild');
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
    nodePaths,
  });
}

if (require.main === module) {
  buildPlayground(loadConfig().PLAYGROUND_DIR).catch((error: unknown) => {
    process.stderr.write(`switchyard: building the playground failed: ${errorMessage(error)}\n`);
    process.exit(1);
  });
}
