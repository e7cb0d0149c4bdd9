/**
 * The settings one handler runs with, resolved once from its options (`createHttpHandler`): the
 * routes and their matcher, the budgets, the body reader, the CORS policy, the load shedder, the
 * OpenAPI documents by mount, the open streams. Everything per request lives in `handler.ts`.
 */
import type { Principal } from '../../context.js';
import { corsPolicy, type CorsPolicy } from '../cors.js';
import { createEdgeBudgets, type EdgeBudgets } from '../budgets.js';
import { createLoadShedder, type LoadShedder } from '../load.js';
import { methodIndex, type MethodIndex } from '../methods.js';
import { openApiDocument, OPENAPI_DOCUMENT_PATH, openApiOptionsFor } from '../openapi.js';
import { httpRoutesFor, type HttpRoute } from '../routes.js';
import { createStreamSlots, type StreamSlots } from '../sse.js';
import { createBodyReader, type BodyReader } from './body.js';
import { defaultResponseValidation } from './response.js';
import { createRouter, type Router } from './router.js';
import type { HttpHandlerOptions, PipelineStream } from './types.js';

/** Default request body limit: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1_048_576;

/** A handler's resolved settings and shared state. */
export interface PipelineContext<H> {
  options: HttpHandlerOptions<H>;
  routes: HttpRoute[];
  router: Router<HttpRoute>;
  methods: MethodIndex;
  bodyLimit: number;
  bodyTimeoutMs: number;
  body: BodyReader;
  budgets: EdgeBudgets;
  cors: CorsPolicy | undefined;
  shedder: LoadShedder | undefined;
  validateResponses: boolean;
  secret: string | undefined;
  reportError: (error: unknown, request_id: string) => void;
  /** The document's path (`/openapi.json`), or undefined when none is served. */
  documentPath: string | undefined;
  /** The OpenAPI document's text under a mount (built on first request per mount). */
  documentText(mount: string): string;
  slots: StreamSlots;
  /** The open event streams (`end()` each on `closeStreams()`). */
  streams: Set<PipelineStream>;
  /** Open streams' credential re-checks in flight, by credential (joined by the streams of the same one). */
  reauthentications: Map<string, Promise<Principal>>;
}

/** The default of `reportError`: the error on stderr. */
const reportToConsole = (error: unknown): void => console.error('inbox-kit: unexpected error', error);

/** `document` with its paths under `mount` (`/inbox` + `/me`; a `:name` segment as `{name}`). */
function underMount(document: Record<string, unknown>, mount: string): Record<string, unknown> {
  const prefix = mount.replace(/\/+$/, '').replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  const paths = Object.entries(document['paths'] as Record<string, unknown>).map(([path, item]) => [`${prefix}${path}`, item]);
  return { ...document, paths: Object.fromEntries(paths) };
}

/**
 * Resolves `options`.
 * @throws TypeError when `forwarding.secret` is empty, `bodyTimeoutMs` / `bodyLimit` is not an
 *   integer ≥ 0, a CORS origin is not exact, or a budget is not a valid number.
 */
export function pipelineContext<H>(options: HttpHandlerOptions<H>): PipelineContext<H> {
  const name = options.adapterName ?? 'createHttpHandler';
  const { services } = options;
  const secret = options.forwarding?.secret;
  if (secret === '') throw new TypeError(`${name}: forwarding.secret must not be empty`);
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
  if (!Number.isInteger(bodyTimeoutMs) || bodyTimeoutMs < 0) throw new TypeError(`${name}: bodyTimeoutMs must be an integer ≥ 0, got ${bodyTimeoutMs}`);
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const reportError = options.reportError ?? reportToConsole;
  const cors = options.cors === undefined ? undefined : corsPolicy(options.cors);
  const budgets = createEdgeBudgets({
    ...(options.credentialThrottle !== undefined ? { credentialThrottle: options.credentialThrottle } : {}),
    ...(options.maxBodiesPerKey !== undefined ? { maxBodiesPerKey: options.maxBodiesPerKey } : {}),
    ...(options.maxBodyBytesPerKey !== undefined ? { maxBodyBytesPerKey: options.maxBodyBytesPerKey } : {}),
    ...(options.bodyBytesPerSecondPerKey !== undefined ? { bodyBytesPerSecondPerKey: options.bodyBytesPerSecondPerKey } : {}),
  });
  const routes = httpRoutesFor(services);
  const documentPath = options.openapi === false ? undefined : options.openapi?.documentPath ?? OPENAPI_DOCUMENT_PATH;
  const methods = methodIndex([...routes, ...(documentPath !== undefined ? [{ method: 'GET', path: documentPath }] : [])], { options: cors !== undefined });
  const documents = new Map<string, string>();
  let document: Record<string, unknown> | undefined;
  const documentText = (mount: string): string => {
    let text = documents.get(mount);
    if (text !== undefined) return text;
    if (document === undefined) {
      const { info, servers, agents } = { ...openApiOptionsFor(services), ...(options.openapi || {}) };
      document = openApiDocument(routes, {
        info: { ...info, version: info?.version ?? options.packageVersion ?? '0.0.0' },
        ...(servers ? { servers } : {}), ...(agents ? { agents } : {}),
      }) as Record<string, unknown>;
    }
    text = JSON.stringify(mount === '' ? document : underMount(document, mount));
    documents.set(mount, text);
    return text;
  };
  const body = createBodyReader(bodyLimit, bodyTimeoutMs);
  const shedder = options.loadShedding === false ? undefined
    : createLoadShedder(options.loadShedding ?? {}, (error) => reportError(error, 'load-shedding'));
  return {
    options, routes, router: createRouter(routes), methods, bodyLimit, bodyTimeoutMs, body, budgets, cors, shedder,
    validateResponses: options.responseValidation ?? defaultResponseValidation(), secret, reportError,
    documentPath, documentText, slots: createStreamSlots(), streams: new Set(), reauthentications: new Map(),
  };
}
