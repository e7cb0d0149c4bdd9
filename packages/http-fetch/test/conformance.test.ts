/**
 * The thin wire suite of the HTTP kit (`runHttpWire` of `@inbox-kit/core/testing`) against the
 * fetch handler served by `@hono/node-server` (`serve.ts`), over real sockets on a SQLite file. The
 * kit's behaviour checks run in-process against this handler once per store
 * (`kit-behaviour.{memory,sqlite,postgres}.test.ts`).
 */
import type { HttpServices } from '@inbox-kit/core/http';
import { runHttpWire, type HttpAdapterSettings } from '@inbox-kit/core/testing';
import { openSqliteTestStore } from '@inbox-kit/storage-kysely/testing';
import { kitAdapterOptions } from './kit-handler.js';
import { serveFetchHandler } from './serve.js';

const start = (services: HttpServices, settings: HttpAdapterSettings = {}) =>
  serveFetchHandler({ ...kitAdapterOptions(services, settings), ...(settings.connections === undefined ? {} : { connections: settings.connections }) });

runHttpWire('http-fetch wire suite on sqlite', { start, openStore: openSqliteTestStore });
