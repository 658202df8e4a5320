# Node 22 LTS (Node 20 is past its end of life), Debian bookworm slim.
ARG NODE_IMAGE=node:22-bookworm-slim

# Build stage: compile TypeScript with the locked dev dependencies.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The SDK package is a workspace: npm ci needs its manifest to link it.
COPY packages/sdk/package.json ./packages/sdk/
RUN npm ci
COPY . .
# The ojs command (dist/cli/main.js) is made executable here: the runtime stage cannot write to /app.
RUN npm run build && chmod +x dist/cli/main.js && npm prune --omit=dev

# Runtime stage: compiled JavaScript, production dependencies, the Lua
# scripts of the Redis store and the descriptor set that reflection serves;
# no compiler, no tests, no npm cache. It runs as the unprivileged node user
# (uid 1000) and needs no writable file system.
# The same image runs the example worker:
#   docker run ... --entrypoint node <image> dist/examples/ts-worker/worker.js
FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/gen/descriptor-set.binpb ./gen/descriptor-set.binpb
COPY --from=build /app/src/store/redis/lua ./src/store/redis/lua
# The operator CLI on the PATH: docker exec <container> ojs queues list (README.md, "Command line").
RUN ln -s /app/dist/cli/main.js /usr/local/bin/ojs
# Numeric, so that Kubernetes runAsNonRoot can verify it: the node user of the official images.
USER 1000:1000
EXPOSE 9090
# Exec form: node is PID 1 and receives SIGTERM itself (no shell in between). A larger young
# generation than Node's default (README.md, "Memory and the collector").
ENTRYPOINT ["node", "--max-semi-space-size=32", "dist/src/main.js"]
