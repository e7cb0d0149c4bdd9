/**
 * The demo's composition root: storage (SQLite file under DATA_DIR, or PostgreSQL from
 * DATABASE_URL), the event bus, the services, the Fastify server, and first-start seed data.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  PlatformService, ProjectInboxService, createIdGenerator, createLocalEventBus, systemClock, type Clock, type EventBus,
  type ServiceDeps, type Store,
} from '@inbox-kit/core';
import { createServer } from '@inbox-kit/http-fastify';
import { openStore } from '@inbox-kit/storage-kysely';
import type { FastifyInstance } from 'fastify';
import { nanoid } from 'nanoid';
import type { DemoConfig } from './config.js';
import { seed, type Credentials } from './seed.js';

export interface Demo {
  app: FastifyInstance;
  store: Store;
  bus: EventBus;
  credentials: Credentials;
  /** True when this start seeded a fresh database. */
  seeded: boolean;
  dialect: 'sqlite' | 'postgres';
  close(): Promise<void>;
}

/** Builds the demo server (not listening yet). */
export async function buildDemo(config: DemoConfig, overrides: { clock?: Clock } = {}): Promise<Demo> {
  mkdirSync(config.dataDir, { recursive: true });
  const opened = await openStore({ databaseUrl: config.databaseUrl, sqliteFile: join(config.dataDir, 'inbox-kit.sqlite') });
  const bus = createLocalEventBus();
  let app: FastifyInstance | undefined;
  const deps: ServiceDeps = {
    store: opened.store,
    bus,
    clock: overrides.clock ?? systemClock,
    ids: createIdGenerator(() => nanoid(21)),
    onPublishError: (error) => app?.log.error({ err: error }, 'event publish failed after commit'),
  };
  const platform = new PlatformService(deps);
  const projectInbox = new ProjectInboxService(deps);
  try {
    const { credentials, created } = await seed(opened.store, platform, config.dataDir);
    app = await createServer({
      services: { platform, projectInbox },
      bodyLimit: config.bodyLimit,
      logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
    });
    const server = app;
    return {
      app: server, store: opened.store, bus, credentials, seeded: created, dialect: opened.dialect,
      close: async () => {
        await server.close();
        await opened.close();
      },
    };
  } catch (error) {
    await opened.close();
    throw error;
  }
}
