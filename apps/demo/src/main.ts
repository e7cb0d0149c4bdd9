#!/usr/bin/env node
/**
 * Starts the demo server (`npm run demo` from the repository's root, through scripts/demo.mjs; or
 * `pnpm --filter @inbox-kit/demo start`). Prints the API keys on the start that creates them
 * (never the service key; see startup-output.ts) and shuts down gracefully on SIGINT (Ctrl-C) or
 * SIGTERM, ending with the line `inbox-kit demo stopped` and exit status 0. A port already in use
 * is one line naming `PORT`, exit status 1.
 */
import type { InboxKitHonoServer } from '@inbox-kit/http-hono';
import type { FastifyInstance } from 'fastify';
import { composeDemo, StartUpError, type ComposedDemo, type DemoLog } from './compose.js';
import { loadConfig, type DemoConfig } from './config.js';
import { describeModel } from './model.js';
import { keysShown } from './seed.js';
import { keyLines } from './startup-output.js';

/** Prints a start-up failure as one line (no stack for mistakes a user can fix) and exits 1. */
function fail(error: unknown): never {
  let e = error as { name?: string; code?: string; message?: string; cause?: unknown };
  // An unreachable PostgreSQL (`storage_unavailable`): the driver's own words say where and why.
  if (e?.name === 'InboxKitError' && e.code === 'storage_unavailable' && e.cause instanceof Error) e = e.cause as typeof e;
  const expected = e?.name === 'ConfigError' || e?.name === 'StartUpError' || e?.name === 'EventBusListenError' ||
    ['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL', 'ENOTFOUND', 'ENOTDIR', 'ENOENT', 'EROFS', 'ECONNREFUSED'].includes(e?.code ?? '');
  console.error(`inbox-kit demo: could not start: ${e?.message ?? String(error)}`);
  if (e?.code === 'EADDRINUSE') {
    const port = config?.port ?? 3000;
    console.error(`inbox-kit demo: port ${port} is taken (another demo running?): stop that process, or pick another port with PORT, e.g. PORT=${port + 1} npm run demo`);
  }
  if (!expected) console.error(error);
  process.exit(1);
}

/** The log of the Hono server entry: one line per entry on stderr (warnings and errors) or stdout, unless LOG_LEVEL=silent. */
function consoleLog(config: DemoConfig): DemoLog {
  const line = (level: string, object: object, message: string) => {
    if (config.logLevel === 'silent') return;
    const { err, ...rest } = object as { err?: unknown };
    const fields = { level, msg: message, ...rest, ...(err !== undefined ? { err: err instanceof Error ? { type: err.name, message: err.message, stack: err.stack } : err } : {}) };
    (level === 'info' ? console.log : console.error)(JSON.stringify(fields));
  };
  return { info: (o, m) => line('info', o, m), warn: (o, m) => line('warn', o, m), error: (o, m) => line('error', o, m) };
}

let config: DemoConfig;
let demo: ComposedDemo & { close(): Promise<void> };
// HTTP_ADAPTER picks the adapter (the composition names none): Fastify (default: the API, the web
// page and /docs, through app.ts) or Hono (`@inbox-kit/http-hono`: the API only; Fastify is never built).
let app: FastifyInstance | undefined;
let hono: InboxKitHonoServer | undefined;
/** Waits (at most 1 s) until the request log has written what it holds (the JSON log writes asynchronously; app.ts `logWritten`). */
let flushLog = (): Promise<void> => Promise.resolve();
try {
  config = loadConfig();
  if (config.httpAdapter === 'hono') {
    const composed = await composeDemo(config);
    composed.setLog(consoleLog(config));
    demo = { ...composed, close: () => composed.close(hono) };
  } else {
    // Loaded only with HTTP_ADAPTER=fastify: the Hono demo does not carry Fastify.
    const { buildDemo, logWritten } = await import('./app.js');
    const built = await buildDemo(config);
    flushLog = () => logWritten(built.app);
    app = built.app;
    demo = { ...built, rawStore: built.store, setLog: () => {} };
  }
} catch (error) {
  fail(error);
}
let metricsUrl: string | undefined;
// Installed before listening: a signal that arrives while the start-up lines are being printed
// shuts down gracefully too (without a handler, Node would die of it at once).
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    demo.close().then(() => flushLog()).then(() => {
      // Last: the JSON log writes asynchronously, so it is flushed first (else a log line could follow this one).
      console.log('inbox-kit demo stopped');
      process.exit(0);
    }, (error: unknown) => {
      console.error(error);
      process.exit(1);
    });
  });
}
try {
  if (config.httpAdapter === 'hono') {
    // Loaded only with HTTP_ADAPTER=hono: the Fastify demo does not carry Hono.
    const { serveInboxKit } = await import('@inbox-kit/http-hono');
    hono = await serveInboxKit({ ...demo.http, hostname: config.host, port: config.port });
  } else {
    await app!.listen({ port: config.port, host: config.host });
    // Fastify logs its own "Server listening" line asynchronously: written out before the lines below, never among the keys.
    await flushLog();
  }
  // METRICS_PORT: the Prometheus metrics on their own port, bound like HOST.
  metricsUrl = config.metricsPort === undefined ? undefined : await demo.observability?.listen(config.host, config.metricsPort).catch((error: NodeJS.ErrnoException) => {
    if (error?.code !== 'EADDRINUSE') throw error;
    throw new StartUpError(`METRICS_PORT ${config.metricsPort} is taken: pick another port for the metrics (or unset METRICS_PORT)`);
  });
} catch (error) {
  await demo.close().catch(() => {});
  fail(error);
}
const address = app?.server.address();
const port = hono ? hono.port : typeof address === 'object' && address ? address.port : config.port;
const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
// Printed before the listening line, so whoever waits for that line has read it already.
if (demo.migrations.applied.length > 0) console.log(`Database: applied the migrations ${demo.migrations.applied.join(', ')}`);
if (demo.migrations.unknown.length > 0) {
  console.log(`Database: migrated further by a newer release (${demo.migrations.unknown.join(', ')}); this release serves on it as it is`);
}
if (demo.recovered > 0) {
  console.log(`Ended ${demo.recovered} Run${demo.recovered === 1 ? '' : 's'} left running by a previous process (outcome failed)`);
}
if (hono) console.log('HTTP adapter: hono (the API only; the web page and /docs need HTTP_ADAPTER=fastify)');
console.log(`Model: ${describeModel(config)}`);
if (metricsUrl !== undefined) console.log(`Metrics: ${metricsUrl}`);
const fresh = demo.startUp.kind === 'seeded' ? ', freshly seeded' : demo.startUp.kind === 'bootstrapped' ? ', first start without demo data' : '';
console.log(`inbox-kit demo listening on ${base} (${demo.dialect}${fresh})`);
if (!hono) console.log(`Web page: ${base}/  ·  API reference: ${base}/docs`);
for (const line of keyLines(demo.startUp, config.logLevel)) console.log(line);
// Serving: the keys this start created, or that one before it left unshown, were printed (at its LOG_LEVEL) and are not again.
if (demo.startUp.created || demo.startUp.unshown === true) keysShown(config.dataDir);
