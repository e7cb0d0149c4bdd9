/**
 * The demo's Fastify server entry: the composed demo (`compose.ts`: storage, bus, services,
 * runtime, seed — no adapter) served by `@inbox-kit/http-fastify`'s `createServer` preset, with the
 * web page and `/docs`. `main.ts` serves the same composition on Hono instead with HTTP_ADAPTER=hono.
 */
import type { Clock, Model, RunOptions, Tool } from '@inbox-kit/core';
import { createServer } from '@inbox-kit/http-fastify/server';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { destination } from 'pino';
import pretty from 'pino-pretty';
import { composeDemo, type ComposedDemo } from './compose.js';
import type { DemoConfig } from './config.js';
import { demoWeb } from './web.js';

export { composeDemo, DEMO_AGENT, demoAgent, StartUpError, type ComposedDemo, type DemoHttp, type DemoLog } from './compose.js';

/** The composed demo (`compose.ts`, its fields documented there) served by the Fastify preset. */
export interface Demo extends Omit<ComposedDemo, 'rawStore' | 'setLog' | 'close'> {
  app: FastifyInstance;
  /** Ends the Runs, then the server, observability, the event bus and storage. */
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
    const { logger, json } = loggerOf(config);
    app = await createServer({
      ...http, logger, rateLimit: config.rateLimit ?? false,
    });
    if (json !== undefined) jsonDestinations.set(app, json);
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


/** Each server's JSON log destination (stdout, written asynchronously), for {@link logWritten}. */
const jsonDestinations = new WeakMap<FastifyInstance, ReturnType<typeof destination>>();

/**
 * Resolves once everything `app` has logged so far is written out (at most `timeoutMs`, 1,000 by
 * default; never rejects): the JSON log writes stdout asynchronously, so a line logged just before
 * (Fastify's "Server listening", a request's line at shutdown) is out before what the caller prints
 * next with `console.log`. The pretty log writes synchronously: nothing to wait for.
 */
export function logWritten(app: FastifyInstance, timeoutMs = 1000): Promise<void> {
  const stream = jsonDestinations.get(app);
  if (stream === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stream.off('drain', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    // `drain` follows the write in flight and everything queued behind it; an empty write makes one when idle.
    stream.once('drain', done);
    try {
      stream.write('');
    } catch {
      done();
    }
  });
}

/**
 * The Fastify logger option: off for `silent`; one JSON object per line (`json`) to stdout, through
 * a destination kept for {@link logWritten}; or, for `pretty`, one human-readable line per entry
 * (pino-pretty's `singleLine`), e.g.
 * `[12:03:04.567] INFO: request {"reqId":"req_…","method":"GET","url":"/health","status":200,"ms":0.4}`,
 * written by pino-pretty in this thread, so nothing is lost when the process exits.
 */
function loggerOf(config: DemoConfig): { logger: FastifyServerOptions['logger']; json?: ReturnType<typeof destination> } {
  if (config.logLevel === 'silent') return { logger: false };
  if (config.logFormat === 'json') {
    const json = destination({ dest: 1, sync: false });
    return { logger: { level: config.logLevel, stream: json }, json };
  }
  return { logger: { level: config.logLevel, stream: pretty({ translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true, sync: true }) } };
}
