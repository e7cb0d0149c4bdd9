/**
 * The demo's observability (apps/demo README "Metrics and tracing"; platform.md "Observing"):
 * Prometheus metrics with `prom-client` on their own port (METRICS_PORT, bound like HOST:
 * `GET /metrics`), and OpenTelemetry spans through `@opentelemetry/api` around requests and
 * storage calls when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; the spans go wherever the SDK registered in the process
 * sends them, and nowhere without one). Both are fed by the core's hooks: the HTTP adapters'
 * `observer`, `observeStore`, `observeEventBus`, the Runtime's `onRunEnded` and `stats()`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isInboxKitError, type EventBusObserver, type SessionRuntimeService, type StoreObserver } from '@inbox-kit/core';
import type { HttpObserver, RequestObservation } from '@inbox-kit/core/http';
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * prom-client's text with a not-a-number sample spelled `NaN`, as the exposition format has it:
 * prom-client 15 writes `Nan`, which strict parsers refuse (e.g. `nodejs_eventloop_lag_mean_seconds`
 * when a scrape follows the previous one before the event-loop monitor took a sample).
 */
export const exposition = (text: string): string => text.replace(/ Nan$/gm, ' NaN');

/** The label of a request no route matched (never the raw path: one series, not one per URL). */
export const UNMATCHED_ROUTE = 'unmatched';

/** What the composition root wires: the hooks, plus the metrics endpoint. */
export interface Observability {
  http: HttpObserver;
  store: StoreObserver;
  bus: EventBusObserver;
  onRunEnded(info: { outcome: string }): void;
  /** Where the Runtime's gauges are read from at each scrape (set once the Runtime exists). */
  attachRuntime(runtime: SessionRuntimeService): void;
  /** The Prometheus registry (undefined without metrics). */
  registry: Registry | undefined;
  /** Serves `GET /metrics` on `host:port` (port 0: any free one); resolves with its URL. Without metrics: undefined. */
  listen(host: string, port: number): Promise<string | undefined>;
  close(): Promise<void>;
}

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LAG_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The metrics: one registry per demo, with the process's default metrics. */
function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  let runtime: SessionRuntimeService | undefined;
  const requests = new Counter({ name: 'inbox_kit_http_requests_total', help: 'HTTP requests answered, by method, route template and status', labelNames: ['method', 'route', 'status'], registers: [registry] });
  const duration = new Histogram({
    name: 'inbox_kit_http_request_duration_seconds', help: 'Time to answer an HTTP request (event streams excluded), by method, route template and status',
    labelNames: ['method', 'route', 'status'], buckets: HTTP_BUCKETS, registers: [registry],
  });
  const streams = new Gauge({ name: 'inbox_kit_http_open_streams', help: 'Event streams open now, by route template', labelNames: ['route'], registers: [registry] });
  const storageErrors = new Counter({ name: 'inbox_kit_storage_errors_total', help: 'Storage calls that failed, by port method and error code (`error` for an error without one)', labelNames: ['operation', 'code'], registers: [registry] });
  const busLag = new Histogram({ name: 'inbox_kit_event_bus_lag_seconds', help: 'From an event\'s commit to its delivery by this process\'s event bus, by kind', labelNames: ['kind'], buckets: LAG_BUCKETS, registers: [registry] });
  const runsEnded = new Counter({ name: 'inbox_kit_runs_ended_total', help: 'Runs this process stopped executing, by outcome (completed, cancelled, failed; awaiting: parked for client input)', labelNames: ['outcome'], registers: [registry] });
  const stats = () => runtime?.stats();
  new Gauge({
    name: 'inbox_kit_runs', help: 'Runs by state: running = executed by this process now', labelNames: ['state'], registers: [registry],
    collect() {
      this.set({ state: 'running' }, stats()?.runs.running ?? 0);
    },
  });
  const liveInbox = (name: string, help: string, read: (s: NonNullable<ReturnType<typeof stats>>['live_inbox']) => number) => new Gauge({
    name, help, registers: [registry],
    collect() {
      const s = stats();
      this.set(s === undefined ? 0 : read(s.live_inbox));
    },
  });
  liveInbox('inbox_kit_live_inbox_attempts', 'Active attempts on this process', (s) => s.attempts);
  liveInbox('inbox_kit_live_inbox_queued_messages', 'Messages queued in the Live Inboxes of this process, all together', (s) => s.messages);
  liveInbox('inbox_kit_live_inbox_queued_bytes', 'Content bytes queued in the Live Inboxes of this process', (s) => s.bytes);
  liveInbox('inbox_kit_live_inbox_max_queue_depth', 'Messages queued in the deepest Live Inbox of this process', (s) => s.deepest);
  liveInbox('inbox_kit_live_inbox_carry_over_messages', 'Messages carried over, waiting for their Session\'s next attempt', (s) => s.carry_over_messages);
  liveInbox('inbox_kit_live_inbox_carry_over_bytes', 'Content bytes of the carry-over', (s) => s.carry_over_bytes);

  const http: HttpObserver = {
    request({ method, route }) {
      const label = route ?? UNMATCHED_ROUTE;
      let open = false;
      return {
        streamOpened() {
          open = true;
          streams.inc({ route: label });
        },
        end({ status, duration_ms, stream }) {
          const labels = { method, route: label, status: String(status) };
          requests.inc(labels);
          if (!stream) duration.observe(labels, duration_ms / 1000);
          if (open) streams.dec({ route: label });
        },
      };
    },
  };
  const store: StoreObserver = {
    call: (operation, run) => run().catch((error: unknown) => {
      storageErrors.inc({ operation, code: isInboxKitError(error) ? error.code : 'error' });
      throw error;
    }),
  };
  return {
    registry, http, store,
    bus: { delivered: ({ kind, lag_ms }) => busLag.observe({ kind }, lag_ms / 1000) } satisfies EventBusObserver,
    onRunEnded: ({ outcome }: { outcome: string }) => runsEnded.inc({ outcome }),
    attachRuntime: (r: SessionRuntimeService) => {
      runtime = r;
    },
  };
}

/** OpenTelemetry spans through the API only: a no-op until an SDK is registered in the process. */
function createTracing(): { http: HttpObserver; store: StoreObserver } {
  const tracer = trace.getTracer('@inbox-kit/demo');
  return {
    http: {
      request({ method, route }) {
        const span = tracer.startSpan(`${method} ${route ?? UNMATCHED_ROUTE}`, {
          kind: SpanKind.SERVER, attributes: { 'http.request.method': method, ...(route !== null ? { 'http.route': route } : {}) },
        });
        return {
          within: (run) => context.with(trace.setSpan(context.active(), span), run),
          end({ status, aborted }) {
            span.setAttribute('http.response.status_code', status);
            if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
            if (aborted) span.setAttribute('inbox_kit.aborted', true);
            span.end();
          },
        };
      },
    },
    store: {
      call: (operation, run) => tracer.startActiveSpan(`storage ${operation}`, { kind: SpanKind.CLIENT, attributes: { 'db.operation.name': operation } }, (span: Span) =>
        run().then((value) => {
          span.end();
          return value;
        }, (error: unknown) => {
          span.setStatus({ code: SpanStatusCode.ERROR, message: isInboxKitError(error) ? error.code : 'error' });
          span.end();
          throw error;
        })),
    },
  };
}

/** Both HTTP observers in one: `outer` around `inner`. */
function bothHttp(outer: HttpObserver, inner: HttpObserver): HttpObserver {
  return {
    request(start) {
      const a = (outer.request(start) ?? {}) as RequestObservation;
      const b = (inner.request(start) ?? {}) as RequestObservation;
      return {
        streamOpened: () => {
          a.streamOpened?.();
          b.streamOpened?.();
        },
        within: (run) => (a.within ?? ((r) => r()))(() => (b.within ?? ((r) => r()))(run)),
        end: (outcome) => {
          b.end?.(outcome);
          a.end?.(outcome);
        },
      };
    },
  };
}

/**
 * The observability the configuration asks for: metrics with `metrics`, spans with `tracing`;
 * undefined with neither (nothing is wrapped then).
 */
export function createObservability(options: { metrics: boolean; tracing: boolean }): Observability | undefined {
  if (!options.metrics && !options.tracing) return undefined;
  const metrics = options.metrics ? createMetrics() : undefined;
  const tracing = options.tracing ? createTracing() : undefined;
  const none: HttpObserver = { request: () => undefined };
  const http = metrics && tracing ? bothHttp(metrics.http, tracing.http) : (metrics?.http ?? tracing?.http ?? none);
  const store: StoreObserver = {
    call: (operation, run) => {
      const traced = tracing ? () => tracing.store.call(operation, run) : run;
      return metrics ? metrics.store.call(operation, traced) : traced();
    },
  };
  let server: Server | undefined;
  return {
    http, store,
    bus: metrics?.bus ?? { delivered: () => {} },
    onRunEnded: (info) => metrics?.onRunEnded(info),
    attachRuntime: (runtime) => metrics?.attachRuntime(runtime),
    registry: metrics?.registry,
    async listen(host, port) {
      const registry = metrics?.registry;
      if (registry === undefined) return undefined;
      server = createServer((request, response) => {
        const path = (request.url ?? '/').split('?')[0];
        if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
          response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: the metrics are at GET /metrics\n');
          return;
        }
        registry.metrics().then((text) => {
          response.writeHead(200, { 'content-type': registry.contentType });
          response.end(request.method === 'HEAD' ? undefined : exposition(text));
        }, () => {
          response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('collecting the metrics failed\n');
        });
      });
      const listening = server;
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(port, host, () => {
          listening.off('error', reject);
          resolve();
        });
      });
      const { port: bound } = listening.address() as AddressInfo;
      return `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`;
    },
    close: () => new Promise<void>((resolve) => {
      if (server === undefined) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
