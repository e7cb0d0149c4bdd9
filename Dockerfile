# The demo server as a container image (README "Deployment"):
#   docker build -t inbox-kit-demo .
#   docker run -p 3000:3000 -v inbox-kit-data:/data inbox-kit-demo     # SQLite in the /data volume
#   docker compose up                                                  # on PostgreSQL (compose.yaml)
# The start command and environment below are the ones the README documents; a test
# (apps/demo/test/container.test.ts) checks that and runs the same command without Docker.
FROM node:20-bookworm-slim
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary can be downloaded.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/* && npm install -g pnpm@12.4.2
COPY . .
RUN pnpm install --frozen-lockfile && pnpm exec turbo run build --filter=@inbox-kit/demo... \
  && mkdir -p /data && chown node:node /data
WORKDIR /app/apps/demo
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data LOG_FORMAT=json
VOLUME /data
EXPOSE 3000
USER node
# Liveness (README "Deployment"): /health answers while the process serves, whatever the database
# does; readiness is /ready (compose.yaml's health check). The image has no curl: Node's fetch.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--max-semi-space-size=4", "dist/main.js"]
