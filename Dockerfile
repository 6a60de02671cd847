# Switchyard's image: one image for both roles. The API is the default command; a worker runs
# `node dist/workers/worker.js` (docker-compose.yml does both). Nothing is installed or built
# when a container starts: it runs the JavaScript compiled here with plain `node`.

# --- build: every dependency, the TypeScript compiled, the playground bundled -------------------
FROM node:20-bookworm-slim AS build
WORKDIR /app
# The lock file alone first, so that a change to the code reuses the installed layer.
COPY package.json package-lock.json ./
# The workspaces' manifests too: the lock names packages/protocol (@switchyard/protocol, the wire
# protocol) and packages/client (@switchyard/client, the client library).
COPY packages/protocol/package.json ./packages/protocol/
COPY packages/client/package.json ./packages/client/
# And the fixture that holds AI SDK 7 for the browser tests (test/fixtures/ai-sdk-7): its packages
# are development dependencies, which the prune below leaves behind.
COPY test/fixtures/ai-sdk-7/package.json ./test/fixtures/ai-sdk-7/
# `npm ci` installs exactly the lock, which names every platform's optional build (msgpackr-extract's
# included); where a registry lacks one of them and `npm ci` refuses, `npm install` with the same lock
# installs the same tree. `--ignore-scripts`: the tree works without its install scripts (esbuild's
# binary comes from its platform package, msgpackr-extract has a pure-JavaScript path), and this slim
# image has no compiler for the one that would build from source (jest's file watcher, a dev tool).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY workers ./workers
COPY packages ./packages
# scripts/compile-server.js into dist/ (workers/*.ts → dist/workers/*.js; the event model and
# frames the server shares with its clients → dist/packages/protocol/src, the client package the
# CLI uses → dist/packages/client/src, their names written as relative paths), the Lua scripts
# beside their module, and the playground bundle into dist/playground (PLAYGROUND_DIR's default,
# relative to /app): the build `npm run api` runs and the tests' processes run.
RUN npm run build
# Development dependencies (TypeScript, esbuild, React and the AI SDK of the playground, jest, …)
# stay behind in this stage.
RUN npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# --- runtime ----------------------------------------------------------------------------------
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
# package.json and migrations/ side by side: that is how a process finds its migrations.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
# Tool files (http/client JSON, mcp.json) are mounted here: TOOLS_DIR defaults to ./tools.
RUN mkdir -p /app/tools
# The image's own unprivileged user (uid 1000); the files above stay root's, read-only to it.
USER node
# 3000: the API and websocket gateway; 9100: a worker's /healthz, /readyz and /metrics (PORT=9100).
EXPOSE 3000 9100
# /healthz, not /readyz: Docker has one notion of health, and a container marked unhealthy while
# Redis is away gets restarted (Swarm) for an outage a restart cannot fix. A process answers
# /healthz only once it has connected to Redis and PostgreSQL and applied the migrations.
# Slim images have no curl: Node's fetch asks.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1: Switchyard handles SIGTERM itself (drains, then exits).
CMD ["node", "dist/workers/api.js"]
