import path from 'node:path';

/**
 * Runs one group of the integration or unit project's files in this jest file (jest.config.js
 * makes the groups under `npm test`, `npm run test:quick` and the two projects' scripts). Each
 * member is required inside a describe block named after its path, so its hooks stay its own as
 * they were in a file of its own; what the group shares is the module registry: the server's
 * modules (bullmq, zod, openai, undici…) are loaded and compiled once per group instead of once
 * per file, the larger part of an integration file's CPU time and most of a unit file's. Every
 * stack still has its own Redis prefix and database.
 */
export function runTestGroup(groupFile: string): void {
  const groups = (globalThis as { switchyardTestGroups?: Record<string, string[]> }).switchyardTestGroups;
  const name = path.basename(groupFile);
  const members = groups?.[name];
  if (!members) throw new Error(`${name} is a test group, run by jest.config.js's groups (npm test, npm run test:quick); this run made none for it`);
  const rootDir = path.resolve(__dirname, '../..');
  for (const member of members) {
    describe(path.relative(rootDir, member), () => {
      // A dynamic require, so that the file loads inside its describe block and its hooks with it.
      require(member);
    });
  }
}
