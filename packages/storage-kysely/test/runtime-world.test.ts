// `startKyselyRuntimeWorld` of `@inbox-kit/storage-kysely/testing` (the framework adapters' test
// world) on a SQLite file and, with INBOX_KIT_TEST_PG_URL, on a fresh PostgreSQL database: the
// world is seeded on that store, its Runtime commits there, a given `start` or `server` is called
// with the services, and `close()` closes the Runtime and the server (the adapters' own tests steer
// it over Fastify). The HTTP parts are stubs here: this package imports no HTTP adapter.
import type { HttpServices } from '@inbox-kit/core/http';
import { startKyselyRuntimeWorld, type KyselyRuntimeWorldOptions } from '../src/testing.js';
import { describe, expect, it } from 'vitest';
import { PG_URL, postgresUnavailable } from './helpers.js';

function stubServer() {
  const seen: { services?: HttpServices; closed: boolean } = { closed: false };
  const server: KyselyRuntimeWorldOptions['server'] = (services) => {
    seen.services = services;
    return { listen: async ({ host }) => `http://${host}:9`, close: async () => void (seen.closed = true) };
  };
  return { seen, server };
}

const STORES: Array<[string, string | undefined]> = [['sqlite', undefined], ...(PG_URL ? [['postgres', PG_URL] as [string, string]] : [])];

describe.each(STORES)('startKyselyRuntimeWorld on %s', (_name, databaseUrl) => {
  it('seeds the store, hands the services to the server and commits durable input there; close() closes the server', async () => {
    const { seen, server } = stubServer();
    const w = await startKyselyRuntimeWorld({ server, ...(databaseUrl ? { databaseUrl } : {}) });
    try {
      expect(w.url).toBe('http://127.0.0.1:9');
      expect(w.owner.principal).toMatchObject({ workspace_id: 'ws_a', account_id: 'acc_owner' });
      expect(seen.services?.runtime).toBe(w.runtime);
      await w.runtime.sendEvents(w.owner, w.session, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }] } as never);
      const page = await w.runtime.listEvents(w.owner, w.session);
      expect(page.data.map((e: { type: string }) => e.type)).toContain('user.message');
    } finally {
      await w.close();
    }
    expect(seen.closed).toBe(true);
  });
});

it('startKyselyRuntimeWorld without `server` or `start` rejects', async () => {
  await expect(startKyselyRuntimeWorld({})).rejects.toThrow(/give `server` or `start`/);
});

if (!PG_URL) postgresUnavailable('startKyselyRuntimeWorld on PostgreSQL');
