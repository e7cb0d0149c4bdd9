/**
 * The thin wire suite of the HTTP kit (`runHttpWire` of `@inbox-kit/core/testing`) against the Hono
 * adapter over real sockets, on a SQLite file: what only the wire shows (raw malformed requests,
 * slow and refused bodies, connection caps, SSE over a socket, HEAD, CORS, 404/405 bytes) and a
 * few happy paths per area. The behaviour checks run in-process once per store
 * (`kit-behaviour.*.test.ts`).
 */
import { runHttpWire, type HttpAdapterSettings } from '@inbox-kit/core/testing';
import type { HttpServices } from '@inbox-kit/core/http';
import { serveInboxKit } from '../src/index.js';
import { kitAdapterOptions } from './kit-handler.js';
import { openSqliteKitStore } from './kit-stores.js';

const start = (services: HttpServices, settings: HttpAdapterSettings = {}) => serveInboxKit(kitAdapterOptions(services, settings));

runHttpWire('http-hono wire suite on sqlite', { start, openStore: openSqliteKitStore });
