/**
 * This package's test world: the Session Runtime world of @inbox-kit/core/testing
 * (`startRuntimeWorld`: seed, steering over HTTP, `steerTwoMessages`) on a real SQLite file, served
 * over real HTTP by the Fastify preset, its committed history read with the official Anthropic SDK.
 * (The same few lines in each framework adapter's tests: what they inject, not a copy of the world.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { RunExecutor } from '@inbox-kit/core';
import { startRuntimeWorld, type RuntimeWorld } from '@inbox-kit/core/testing';
import { createServer } from '@inbox-kit/http-fastify/server';
import { openStore } from '@inbox-kit/storage-kysely';

export { gate, steerTwoMessages, textContent as text, type RuntimeWorld as World } from '@inbox-kit/core/testing';

/** A new world; `executor` is the Runtime's executor of Runs durable input starts (default none). */
export function world(options: { executor?: RunExecutor } = {}): Promise<RuntimeWorld> {
  return startRuntimeWorld({
    ...options,
    openStore: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-adapter-'));
      const opened = await openStore({ sqliteFile: join(dir, 'adapter.sqlite') });
      return { store: opened.store, close: async () => { await opened.close(); rmSync(dir, { recursive: true, force: true }); } };
    },
    start: async (services) => {
      const app = await createServer({ services, logger: false });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const address = app.server.address();
      return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, close: () => app.close() };
    },
    readHistory: async ({ url, key, session }) => {
      const out: Array<Record<string, any>> = [];
      for await (const e of new Anthropic({ baseURL: url, apiKey: key }).beta.sessions.events.list(session, { limit: 100 })) out.push(e as unknown as Record<string, any>);
      return out;
    },
  });
}
