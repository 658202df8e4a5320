# Build stage: compile TypeScript with the locked dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

# Runtime stage: compiled JavaScript, production dependencies, the Lua
# scripts of the Redis store and the descriptor set that reflection serves.
# The same image runs the example worker:
#   docker run ... --entrypoint node <image> dist/examples/ts-worker/worker.js
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/gen/descriptor-set.binpb ./gen/descriptor-set.binpb
COPY --from=build /app/src/store/redis/lua ./src/store/redis/lua
USER node
EXPOSE 9090
# Exec form: node is PID 1 and receives SIGTERM itself (no shell in between).
ENTRYPOINT ["node", "dist/src/main.js"]
