# syntax=docker/dockerfile:1
# Build: compile TypeScript to dist/, then keep only production dependencies.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY config config
COPY src src
COPY adapters adapters
COPY interactions interactions
COPY console console
COPY cli cli
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Run: the built output on the official Node 24 image, as the unprivileged user.
FROM node:24-bookworm-slim
# MALLOC_ARENA_MAX: argon2id takes 19 MiB per password check on the libuv
# thread pool, and glibc keeps that memory in one arena per thread once freed;
# two arenas bound what login bursts leave behind (docs/operations.md).
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    PORT=8080 \
    DATA_DIR=/data \
    PORTCULLIS_PAT_FILE=/data/admin.pat
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
# The admin CLI (docs/cli.md) as `portcullis`, e.g. `docker exec <container> portcullis list-users`;
# it reads the first-start PAT from /data and calls the server on PORT.
RUN mkdir -p /data && chown node:node /data \
 && printf '#!/bin/sh\nexec node /app/dist/cli/portcullis.js "$@"\n' > /usr/local/bin/portcullis \
 && chmod 0755 /usr/local/bin/portcullis
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# A smaller young generation keeps the heap (and RSS) near its working set
# under load at no cost in throughput (bench/README.md); same as npm start.
CMD ["node", "--max-semi-space-size=8", "dist/src/main.js"]
