// One vitest run over every package: each package is a project. Workspace imports resolve to the
// packages' sources so tests never run against a stale build.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const alias = {
  '@inbox-kit/core/http': src('./packages/core/src/http/index.ts'),
  '@inbox-kit/core/memory': src('./packages/core/src/memory.ts'),
  '@inbox-kit/core/testing': src('./packages/core/src/testing/index.ts'),
  '@inbox-kit/core': src('./packages/core/src/index.ts'),
  '@inbox-kit/storage-kysely/sqlite': src('./packages/storage-kysely/src/entry-sqlite.ts'),
  '@inbox-kit/storage-kysely/postgres': src('./packages/storage-kysely/src/entry-postgres.ts'),
  '@inbox-kit/storage-kysely/testing': src('./packages/storage-kysely/src/testing.ts'),
  '@inbox-kit/storage-kysely': src('./packages/storage-kysely/src/index.ts'),
  '@inbox-kit/http-fastify/server': src('./packages/http-fastify/src/entry-server.ts'),
  '@inbox-kit/http-fastify': src('./packages/http-fastify/src/index.ts'),
  '@inbox-kit/http-hono': src('./packages/http-hono/src/index.ts'),
  '@inbox-kit/http-fetch': src('./packages/http-fetch/src/index.ts'),
  '@inbox-kit/sdk': src('./packages/sdk/src/index.ts'),
  '@inbox-kit/model-anthropic/testing': src('./packages/model-anthropic/src/testing/index.ts'),
  '@inbox-kit/model-anthropic': src('./packages/model-anthropic/src/index.ts'),
  '@inbox-kit/ai-sdk': src('./packages/ai-sdk/src/index.ts'),
  '@inbox-kit/langgraph': src('./packages/langgraph/src/index.ts'),
  '@inbox-kit/openai-agents': src('./packages/openai-agents/src/index.ts'),
};

const setup = src('./vitest.setup.ts');

const project = (name: string, root: string, extra: Record<string, unknown> = {}) => ({
  resolve: { alias },
  test: { name, root, include: ['src/**/*.test.ts', 'test/**/*.test.ts'], setupFiles: [setup], ...extra },
});

export default defineConfig({
  test: {
    projects: [
      project('core', './packages/core', { testTimeout: 30_000 }),
      project('storage-kysely', './packages/storage-kysely', { testTimeout: 30_000, hookTimeout: 60_000 }),
      project('http-fastify', './packages/http-fastify', { testTimeout: 30_000 }),
      project('http-hono', './packages/http-hono', { testTimeout: 30_000 }),
      project('http-fetch', './packages/http-fetch', { testTimeout: 30_000 }),
      project('sdk', './packages/sdk', { testTimeout: 30_000 }),
      project('model-anthropic', './packages/model-anthropic', { testTimeout: 30_000, hookTimeout: 60_000 }),
      project('ai-sdk', './packages/ai-sdk', { testTimeout: 30_000 }),
      project('langgraph', './packages/langgraph', { testTimeout: 30_000 }),
      project('openai-agents', './packages/openai-agents', { testTimeout: 30_000 }),
      project('demo', './apps/demo', { testTimeout: 60_000, hookTimeout: 120_000 }),
      project('scripts', './scripts', { include: ['test/**/*.test.ts'] }),
    ],
  },
});
