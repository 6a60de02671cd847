import fs from 'node:fs';
import path from 'node:path';
import { DockerfileParser, From, type Instruction } from 'dockerfile-ast';
import { parse } from 'yaml';

/** The repository's root: where Dockerfile, docker-compose.yml and grafana/ live. */
export const ROOT = path.resolve(__dirname, '../..');

/** A file of the repository (a path from the root, or absolute). */
export const readRepoFile = (file: string) => fs.readFileSync(path.resolve(ROOT, file), 'utf8');

/** A YAML file (a path from the root, or absolute), with `<<:` merge keys resolved as Docker Compose resolves them. */
export function readYaml(file: string): any {
  return parse(readRepoFile(file), { merge: true });
}

export interface ComposeService {
  image?: string;
  build?: string | { context: string };
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  ports?: string[];
  volumes?: string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test: string[] | string };
  deploy?: { replicas?: number };
}

export function readCompose(): { services: Record<string, ComposeService> } {
  return readYaml('docker-compose.yml');
}

/** A short-syntax volume `./host:/container[:ro]`: the host path (from the root) and the container path. */
export function bindMount(volume: string): { host: string; container: string } | null {
  const [host, container] = volume.split(':');
  if (!host || !container || !/^\.{0,2}\//.test(host)) return null;
  return { host: path.resolve(ROOT, host), container };
}

/** The Dockerfile's stages, each with its base image, name and instructions in order. */
export function readDockerfileStages(): { from: string; name: string | null; instructions: Instruction[] }[] {
  const stages: { from: string; name: string | null; instructions: Instruction[] }[] = [];
  for (const instruction of DockerfileParser.parse(readRepoFile('Dockerfile')).getInstructions()) {
    if (instruction instanceof From) stages.push({ from: instruction.getImage() ?? '', name: instruction.getBuildStage(), instructions: [] });
    else stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}
