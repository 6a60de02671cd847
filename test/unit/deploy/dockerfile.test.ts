import fs from 'node:fs';
import path from 'node:path';
import { Copy, type Instruction } from 'dockerfile-ast';
import { readDockerfileStages, readRepoFile, ROOT } from '../../support/deploy-files';

/**
 * The image cannot be built where the tests run (no Docker engine), so its shape is checked
 * here: what would make a container install at start, run as root, or run what the build does
 * not produce.
 */
describe('Dockerfile', () => {
  const stages = readDockerfileStages();
  const runtime = stages.at(-1)!;
  const build = stages.find((stage) => stage.name === 'build');
  const words = (instruction: Instruction) => instruction.getArguments().map((argument) => argument.getValue());
  const only = (instructions: Instruction[], keyword: string) => instructions.filter((instruction) => instruction.getKeyword() === keyword);
  const runs = (instructions: Instruction[]) => only(instructions, 'RUN').map((instruction) => instruction.getRawArgumentsContent() ?? '');
  /** The exec-form command of CMD or HEALTHCHECK CMD: `["node", "-e", "..."]` → its strings. */
  const execForm = (instruction: Instruction) => {
    const content = (instruction.getRawArgumentsContent() ?? '').replace(/\\\n/g, ' ');
    return JSON.parse(content.slice(content.indexOf('['))) as string[];
  };

  it('builds in a stage of its own, on the Node 20 slim image, and runs from a second one', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(build).toBeDefined();
    expect(build).not.toBe(runtime);
    for (const stage of stages) expect(stage.from).toBe('node:20-bookworm-slim');
  });

  it('installs from the lock file, compiles, and leaves development dependencies behind', () => {
    const commands = runs(build!.instructions);
    const install = commands.findIndex((command) => /^npm (ci|install)\b/.test(command));
    expect(install).toBeGreaterThanOrEqual(0);
    expect(only(build!.instructions, 'COPY').slice(0, 1).map(words)[0]).toEqual(expect.arrayContaining(['package-lock.json']));
    const compile = commands.indexOf('npm run build');
    const prune = commands.findIndex((command) => /^npm prune --omit=dev\b/.test(command));
    expect(install).toBeLessThan(compile);
    expect(compile).toBeLessThan(prune);
  });

  it("copies every workspace's manifest before the install, so that the lock, which names them all, installs as written", () => {
    const { workspaces } = JSON.parse(readRepoFile('package.json')) as { workspaces: string[] };
    const manifests = workspaces.flatMap((pattern) =>
      pattern.endsWith('/*') ? fs.readdirSync(path.join(ROOT, pattern.slice(0, -2))).map((name) => `${pattern.slice(0, -1)}${name}/package.json`) : [`${pattern}/package.json`],
    );
    const instructions = build!.instructions;
    const install = instructions.findIndex((instruction) => instruction.getKeyword() === 'RUN' && /^npm (ci|install)\b/.test(instruction.getRawArgumentsContent() ?? ''));
    const copiedBefore = only(instructions.slice(0, install), 'COPY').flatMap((copy) => words(copy).slice(0, -1));
    expect(copiedBefore).toEqual(expect.arrayContaining(manifests));
    // .dockerignore keeps test/ out of the context; the fixture's manifest comes back in by name.
    const ignored = readRepoFile('.dockerignore')
      .split('\n')
      .map((line) => line.trim());
    for (const manifest of manifests.filter((file) => file.startsWith('test/'))) expect(ignored).toContain(`!${manifest}`);
  });

  it('installs and builds nothing in the runtime stage: its dependencies come from the build stage', () => {
    for (const command of runs(runtime.instructions)) expect(command).not.toMatch(/\b(npm|npx|yarn|pnpm|tsc|tsx|apt-get)\b/);
    const copies = only(runtime.instructions, 'COPY') as Copy[];
    const fromBuild = copies.filter((copy) => copy.getFromFlag()?.getValue() === 'build').map((copy) => words(copy)[0]);
    expect(fromBuild).toEqual(expect.arrayContaining(['/app/node_modules', '/app/dist', '/app/package.json']));
    // A process finds migrations/ beside package.json.
    expect(copies.map((copy) => words(copy)[0])).toContain('migrations');
  });

  it('runs as an unprivileged user', () => {
    const users = only(runtime.instructions, 'USER').map((instruction) => words(instruction)[0]);
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
  });

  it('starts the compiled API with plain node, a file the build makes from workers/', () => {
    const cmd = only(runtime.instructions, 'CMD');
    expect(cmd).toHaveLength(1);
    const [program, entry, ...rest] = execForm(cmd[0]!);
    expect(program).toBe('node');
    expect(rest).toEqual([]);
    expect(entry).toBe('dist/workers/api.js');
    expect(fs.existsSync(path.join(ROOT, 'workers', 'api.ts'))).toBe(true);
    expect(only(runtime.instructions, 'ENTRYPOINT')).toEqual([]);
  });

  it('checks its health with node (the slim image has no curl) on /healthz or /readyz of PORT', () => {
    const healthchecks = only(runtime.instructions, 'HEALTHCHECK');
    expect(healthchecks).toHaveLength(1);
    const [program, flag, script] = execForm(healthchecks[0]!);
    expect([program, flag]).toEqual(['node', '-e']);
    expect(script).toMatch(/fetch\(.*process\.env\.PORT.*\/(healthz|readyz)/);
  });

  it('sends no copied path of the build to .dockerignore, and keeps the host node_modules and dist out', () => {
    const ignored = readRepoFile('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist']));
    const fromContext = stages
      .flatMap((stage) => only(stage.instructions, 'COPY') as Copy[])
      .filter((copy) => !copy.getFromFlag())
      .flatMap((copy) => words(copy).slice(0, -1));
    expect(fromContext.length).toBeGreaterThan(0);
    for (const source of fromContext) {
      expect(ignored).not.toContain(source);
      expect(fs.existsSync(path.join(ROOT, source))).toBe(true);
    }
  });
});
