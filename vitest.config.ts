// One vitest run over every package: each package is a project. Workspace imports resolve to the
// packages' sources so tests never run against a stale build.
//
// How the run is organised (scripts/test.mjs runs it; README "Development"):
// - group 0: every project at once, on WORKERS workers (INBOX_KIT_TEST_WORKERS, default: the
//   machine's cores + 1; most tests wait on sockets, child processes and databases, so one worker
//   per core leaves the CPU idle);
// - group 1: `demo-serial`, the demo's heavy files (SERIAL_FILES: connection floods, many demo
//   processes, lock and crash timing), one file at a time after group 0, so they never starve
//   each other or anything else.
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

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

/** Workers of group 0 (every project of one group must have the same count). */
const WORKERS = Number(process.env.INBOX_KIT_TEST_WORKERS) || availableParallelism() + 1;

/** The demo's files that start many processes or floods, or time locks and crashes: group 1, one at a time. */
export const SERIAL_FILES = [
  'test/connection-flood.test.ts', 'test/run-budget-processes.test.ts', 'test/many-processes.test.ts',
  'test/sqlite-busy.test.ts', 'test/crash-safety.test.ts', 'test/stale-run-recovery.test.ts',
];

const project = (name: string, root: string, extra: Record<string, unknown> = {}) => ({
  resolve: { alias },
  test: {
    name, root, include: ['src/**/*.test.ts', 'test/**/*.test.ts'], setupFiles: [setup],
    maxWorkers: WORKERS, sequence: { groupOrder: 0 }, ...extra,
  },
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
      project('demo', './apps/demo', { testTimeout: 60_000, hookTimeout: 120_000, exclude: [...configDefaults.exclude, ...SERIAL_FILES] }),
      project('demo-serial', './apps/demo', {
        include: SERIAL_FILES, testTimeout: 60_000, hookTimeout: 120_000, maxWorkers: 1, sequence: { groupOrder: 1 },
      }),
      project('scripts', './scripts', { include: ['test/**/*.test.ts'] }),
    ],
  },
});
