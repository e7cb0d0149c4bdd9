/**
 * A server over the in-memory store with every route plugin registered (the Session Runtime
 * included), for the OpenAPI tests: they read its document and drive its routes.
 */
import {
  LiveInboxHost, PlatformService, ProjectInboxService, SessionRuntimeService, createIdGenerator, createLocalEventBus, systemClock,
  type ServiceDeps,
} from '@inbox-kit/core';
import { createMemoryStore, fakeModel } from '@inbox-kit/core/testing';
import type { FastifyInstance } from 'fastify';
import { createServer } from '../src/entry-server.js';

/** A model that answers every step at once and ends the Run. */
const quietModel = fakeModel({ then: { content: [{ type: 'text', text: 'ok' }], continue: false } });

export interface OpenApiServer {
  app: FastifyInstance;
  /** A standard key of `acc_owner` (workspace `ws_test`), who owns `proj_test`. */
  ownerKey: string;
  close(): Promise<void>;
}

/** Builds the server (not listening) with a workspace, an owner and their key. */
export async function openApiServer(): Promise<OpenApiServer> {
  const store = createMemoryStore();
  const deps: ServiceDeps = { store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  const projectInbox = new ProjectInboxService(deps);
  const runtime = new SessionRuntimeService({ ...deps, host: new LiveInboxHost(), model: quietModel });
  await platform.createWorkspace({ id: 'ws_test', name: 'Test' });
  await platform.createAccount({ id: 'acc_owner', name: 'Owner', workspace_ids: ['ws_test'] });
  await platform.createAccount({ id: 'acc_deriver', name: 'Deriver', workspace_ids: ['ws_test'] });
  const { secret } = await platform.issueApiKey({ workspace_id: 'ws_test', account_id: 'acc_owner' });
  // Load shedding stays registered (the document is createServer's), with a threshold no busy test
  // machine reaches: the document checks block the event loop on purpose.
  const app = await createServer({ services: { platform, projectInbox, runtime }, underPressure: { maxEventLoopDelay: 60_000 } });
  await app.ready();
  return {
    app,
    ownerKey: secret,
    close: async () => {
      await app.close();
      await runtime.close();
    },
  };
}
