/**
 * The demo's Fastify server entry: the composed demo (`compose.ts`: storage, bus, services,
 * runtime, seed — no adapter) served by `@inbox-kit/http-fastify`'s `createServer` preset, with the
 * web page and `/docs`. `main.ts` serves the same composition on Hono instead with HTTP_ADAPTER=hono.
 */
import type { Clock, EventBus, Model, RunOptions, SessionRuntimeService, Store, Tool } from '@inbox-kit/core';
import { createServer } from '@inbox-kit/http-fastify/server';
import type { OpenedStore } from '@inbox-kit/storage-kysely';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import pretty from 'pino-pretty';
import { composeDemo, type DemoHttp } from './compose.js';
import type { DemoConfig } from './config.js';
import type { Credentials, StartUp } from './seed.js';
import { demoWeb } from './web.js';
import type { Observability } from './observability.js';

export { composeDemo, DEMO_AGENT, demoAgent, StartUpError, type ComposedDemo, type DemoHttp, type DemoLog } from './compose.js';

export interface Demo {
  app: FastifyInstance;
  /** What any HTTP adapter needs to serve the same API (HTTP_ADAPTER=hono serves it with these). */
  http: DemoHttp;
  /** Metrics (METRICS_PORT) and tracing (an OTLP endpoint), or undefined with neither; `observability.listen` serves `/metrics`. */
  observability: Observability | undefined;
  store: Store;
  bus: EventBus;
  /** The Session Runtime (durable Session events, Runs, Live Inbox). */
  runtime: SessionRuntimeService;
  /** The keys the web page may offer: those issued now (first start), else those of `credentials.json` that authenticate. */
  credentials: Credentials;
  /** True when this start found an empty database and wrote its first data (the demo seed, or with `DEMO_SEED=false` one workspace and its admin key). */
  seeded: boolean;
  /** What the start found and did about data and keys (for the start-up lines). */
  startUp: StartUp;
  /** The migrations: applied by this start, still pending (none unless `DATABASE_MIGRATE=false`), or of a newer release (served as they are). */
  migrations: OpenedStore['migrations'];
  /**
   * How many Runs left `running` by a dead process this start ended (`failed`, with
   * `session.status_idle`), before listening; 0 when config `recoverStaleRuns` is off.
   */
  recovered: number;
  dialect: 'sqlite' | 'postgres';
  close(): Promise<void>;
}

/**
 * Builds the demo's Fastify server (not listening yet) on {@link composeDemo}`(config, overrides)`
 * (`overrides`: the model, more tools and Run options of the `assistant` agent, a clock).
 */
export async function buildDemo(config: DemoConfig, overrides: { clock?: Clock; model?: Model; tools?: readonly Tool[]; run?: RunOptions } = {}): Promise<Demo> {
  const demo = await composeDemo(config, overrides);
  let app: FastifyInstance;
  try {
    const { http } = demo;
    app = await createServer({
      ...http, logger: loggerOf(config), rateLimit: config.rateLimit ?? false,
    });
    demo.setLog(app.log);
    // The web page: review board + steering panel (public static files, /assets/sdk.js, /demo/accounts).
    await app.register(demoWeb, { credentials: demo.credentials, store: demo.rawStore });
  } catch (error) {
    await demo.close();
    throw error;
  }
  const { http, observability, store, bus, runtime, credentials, seeded, startUp, migrations, recovered, dialect } = demo;
  return {
    app, http, observability, store, bus, runtime, credentials, seeded, startUp, migrations, recovered, dialect,
    close: () => demo.close(app),
  };
}


/**
 * The Fastify logger option: off for `silent`; one JSON object per line (`json`); or, for `pretty`,
 * one human-readable line per entry (pino-pretty's `singleLine`), e.g.
 * `[12:03:04.567] INFO: request {"reqId":"req_…","method":"GET","url":"/health","status":200,"ms":0.4}`,
 * written by pino-pretty in this thread, so nothing is lost when the process exits.
 */
function loggerOf(config: DemoConfig): FastifyServerOptions['logger'] {
  if (config.logLevel === 'silent') return false;
  if (config.logFormat === 'json') return { level: config.logLevel };
  return { level: config.logLevel, stream: pretty({ translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true, sync: true }) };
}
