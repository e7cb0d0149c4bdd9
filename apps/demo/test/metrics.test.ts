/**
 * Metrics (platform.md "Observing", apps/demo README "Metrics and tracing") over real HTTP on the
 * built demo: with METRICS_PORT the demo serves `GET /metrics` on that port (bound like HOST) in
 * the Prometheus text format, read here by a strict parser of the format (every line, labels,
 * histogram buckets) and cross-checked with `parse-prometheus-text-format` (which skips what it
 * cannot read, and misreads prom-client's histograms); the counters move
 * with requests: requests by method, route template (never the raw path) and status, their
 * latency histogram, open event streams, Live Inbox queue depth, Runs by state and ended,
 * event-bus lag, and the process metrics. On SQLite (Fastify) and PostgreSQL (Hono); without
 * METRICS_PORT nothing listens. Each case has its own process and database: they run concurrently.
 * Needs the build; the PostgreSQL case needs INBOX_KIT_TEST_PG_URL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheus from 'parse-prometheus-text-format';
import { afterAll, describe, expect, it } from 'vitest';
import {
  credentialsOf, freshPostgresDatabase, openEventStream, PG_ADMIN_URL, startDemoProcess, stopDemoProcess, waitUntil, type DemoProcess,
} from './demo-process.js';

/** One sample: its name (a histogram's `_bucket`, `_sum`, `_count` included), labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
/** One metric family: its `# TYPE` and samples. */
interface Family {
  type: string;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (-?[0-9.]+(?:e[+-]?\\d+)?|NaN|\\+Inf|-Inf)(?: -?\\d+)?$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;

/**
 * A strict reader of the Prometheus text format (0.0.4): every line is empty, a `# HELP`, a `# TYPE`
 * or a sample of a family declared by a `# TYPE` before it (a histogram's `_bucket` with `le`,
 * `_sum`, `_count`); labels are fully consumed; a histogram's buckets are cumulative and its
 * `+Inf` bucket equals its count. Anything else fails the test.
 */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  expect(text.endsWith('\n'), 'the exposition ends with a newline').toBe(true);
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue; // empty lines are ignored (the format says so)
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment) {
      if (comment[1] === 'TYPE') {
        expect(['counter', 'gauge', 'histogram', 'summary', 'untyped'], line).toContain(comment[3]);
        expect(families.has(comment[2]!), `a second TYPE for ${comment[2]}`).toBe(false);
        families.set(comment[2]!, { type: comment[3]!, samples: [] });
      }
      continue;
    }
    const match = SAMPLE.exec(line);
    expect(match, `not an exposition line: ${JSON.stringify(line)}`).not.toBeNull();
    const [, name, labelText = '', raw] = match!;
    const labels: Record<string, string> = {};
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < labelText.length) {
      const at = LABEL.lastIndex;
      const label = LABEL.exec(labelText);
      expect(label, `bad labels at ${at} in ${JSON.stringify(line)}`).not.toBeNull();
      labels[label![1]!] = label![2]!.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
    }
    const family = families.get(name!) ?? families.get(name!.replace(/_(bucket|sum|count)$/, ''));
    expect(family, `a sample of no declared family: ${line}`).toBeDefined();
    if (family!.type === 'histogram' && name!.endsWith('_bucket')) expect(labels['le'], line).toBeDefined();
    family!.samples.push({ name: name!, labels, value: raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw) });
  }
  for (const [name, family] of families) {
    if (family.type !== 'histogram') continue;
    const series = new Map<string, Sample[]>();
    for (const s of family.samples.filter((x) => x.name === `${name}_bucket`)) {
      const { le: _le, ...rest } = s.labels;
      const key = JSON.stringify(rest);
      series.set(key, [...(series.get(key) ?? []), s]);
    }
    for (const [key, buckets] of series) {
      const counts = buckets.map((b) => b.value);
      expect(counts, `${name} ${key}: cumulative buckets`).toEqual([...counts].sort((a, b) => a - b));
      expect(buckets.at(-1)!.labels['le'], `${name} ${key}: the last bucket`).toBe('+Inf');
      const total = family.samples.find((s) => s.name === `${name}_count` && JSON.stringify(s.labels) === key);
      expect(total?.value, `${name} ${key}: +Inf bucket = count`).toBe(buckets.at(-1)!.value);
    }
  }
  return families;
}

/**
 * Scrapes `url`: the families of {@link parseExposition}, cross-checked with the
 * `parse-prometheus-text-format` library on every counter and gauge (the library misreads
 * histograms whose `le` is not the last label, as prom-client writes them, so those are checked
 * by the strict reader only).
 */
async function scrape(url: string): Promise<Map<string, Family>> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const families = parseExposition(text);
  for (const family of parsePrometheus(text) as Array<{ name: string; type: string; metrics: Array<{ value: string; labels?: Record<string, string> }> }>) {
    if (family.type !== 'COUNTER' && family.type !== 'GAUGE') continue;
    const mine = families.get(family.name)!.samples.map((s) => [s.labels, s.value]);
    expect(family.metrics.map((m) => [m.labels ?? {}, Number(m.value)]), family.name).toEqual(mine);
  }
  return families;
}

const matches = (labels: Record<string, string>, want: Record<string, string>) => Object.entries(want).every(([k, v]) => labels[k] === v);
/** The sum of a counter's or gauge's samples matching `labels` (0 when there is none yet). */
function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  return (families.get(name)?.samples ?? []).filter((s) => s.name === name && matches(s.labels, labels)).reduce((n, s) => n + s.value, 0);
}
/** A histogram's count (summed over the series matching `labels`). */
function count(families: Map<string, Family>, name: string, labels: Record<string, string>): number {
  return (families.get(name)?.samples ?? []).filter((s) => s.name === `${name}_count` && matches(s.labels, labels)).reduce((n, s) => n + s.value, 0);
}

const cases: Array<{ engine: 'sqlite' | 'postgres'; adapter: 'fastify' | 'hono' }> = [
  { engine: 'sqlite', adapter: 'fastify' },
  { engine: 'postgres', adapter: 'hono' },
];

describe.concurrent.each(cases)('/metrics on $engine ($adapter)', ({ engine, adapter }) => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it('is Prometheus text and its counters move with requests', { timeout: 90_000 }, async (ctx) => {
    if (engine === 'postgres' && !PG_ADMIN_URL) return ctx.skip('INBOX_KIT_TEST_PG_URL is not set');
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-metrics-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = engine === 'postgres' ? await freshPostgresDatabase('metrics') : undefined;
    if (db) cleanup.push(() => db.drop());
    const demo: DemoProcess = await startDemoProcess({
      DATA_DIR: dir, METRICS_PORT: '0', HTTP_ADAPTER: adapter, DEMO_MODEL_STEP_MS: '1500', DEMO_MODEL_STEPS: '2',
      ...(db ? { DATABASE_URL: db.url } : {}),
    });
    cleanup.push(() => stopDemoProcess(demo));
    const metricsUrl = /Metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(demo.output())?.[1];
    expect(metricsUrl, demo.output()).toBeDefined();
    expect(new URL(metricsUrl!).port).not.toBe(new URL(demo.url).port);
    const key = credentialsOf(dir).acc_owner!;
    const call = (method: string, path: string, body?: unknown, auth = true) => fetch(demo.url + path, {
      method, headers: { ...(auth ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const REQUESTS = 'inbox_kit_http_requests_total';
    const DURATION = 'inbox_kit_http_request_duration_seconds';

    // Back-to-back scrapes (the event-loop monitor has no sample between them: its mean is NaN)
    // are valid exposition text too.
    await Promise.all([0, 1, 2, 3].map(() => scrape(metricsUrl!)));
    const before = await scrape(metricsUrl!);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(before.has(name), name).toBe(true);
    }
    for (const name of ['inbox_kit_storage_errors_total', 'inbox_kit_event_bus_lag_seconds', 'inbox_kit_runs_ended_total', 'inbox_kit_http_open_streams']) {
      expect(before.has(name), name).toBe(true);
    }
    const me = { method: 'GET', route: '/me', status: '200' };
    for (let i = 0; i < 3; i++) expect((await call('GET', '/me')).status).toBe(200);
    expect((await call('GET', '/me', undefined, false)).status).toBe(401);
    expect((await call('GET', '/projects/proj_main')).status).toBe(200);
    expect((await call('GET', '/no/such/path/proj_main')).status).toBe(404);
    const after = await scrape(metricsUrl!);
    expect(value(after, REQUESTS, me) - value(before, REQUESTS, me)).toBe(3);
    expect(count(after, DURATION, me) - count(before, DURATION, me)).toBe(3);
    expect(value(after, REQUESTS, { route: '/me', status: '401' }) - value(before, REQUESTS, { route: '/me', status: '401' })).toBe(1);
    expect(value(after, REQUESTS, { route: '/projects/:id', status: '200' })).toBe(1);
    expect(value(after, REQUESTS, { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    // Route templates only: no raw path (an id, an unknown path) is ever a label.
    const routes = after.get(REQUESTS)!.samples.map((m) => m.labels['route']!);
    expect(routes.filter((r) => r.includes('proj_main') || r.includes('/no/such'))).toEqual([]);

    // An open event stream, and an event delivered through the bus to it (the lag histogram).
    const STREAM_ROUTE = '/projects/:id/events/stream';
    const stream = await openEventStream(`${demo.url}/projects/proj_main/events/stream`, key);
    await waitUntil(async () => value(await scrape(metricsUrl!), 'inbox_kit_http_open_streams', { route: STREAM_ROUTE }) === 1, 'one open stream');
    const lagBefore = count(await scrape(metricsUrl!), 'inbox_kit_event_bus_lag_seconds', { kind: 'project_event' });
    expect((await call('POST', '/projects/proj_main/inbox', { type: 'metrics.check', title: 'counted' })).status).toBe(201);
    await waitUntil(() => stream.events.some((e) => e.type === 'project_inbox.item.created'), 'the event on the stream');
    expect(count(await scrape(metricsUrl!), 'inbox_kit_event_bus_lag_seconds', { kind: 'project_event' })).toBeGreaterThan(lagBefore);
    stream.close();
    await waitUntil(async () => value(await scrape(metricsUrl!), 'inbox_kit_http_open_streams', { route: STREAM_ROUTE }) === 0, 'the stream closed');
    expect(value(await scrape(metricsUrl!), REQUESTS, { route: STREAM_ROUTE, status: '200' })).toBe(1);

    // A Run: running while it executes, a queued Live Inbox message counted until its boundary, then ended `completed`.
    const ended = value(await scrape(metricsUrl!), 'inbox_kit_runs_ended_total', { outcome: 'completed' });
    expect((await call('POST', '/v1/sessions/sess_001/events', { events: [{ type: 'user.message', content: [{ type: 'text', text: 'count me' }] }] })).status).toBe(200);
    await waitUntil(async () => (await (await call('GET', '/v1/awaken/sessions/sess_001/live-inbox')).json() as { active: boolean }).active, 'the attempt');
    expect((await call('POST', '/v1/awaken/sessions/sess_001/live-inbox', { content: [{ type: 'text', text: 'and this' }] })).status).toBe(200);
    const running = await scrape(metricsUrl!);
    expect(value(running, 'inbox_kit_runs', { state: 'running' })).toBe(1);
    expect(value(running, 'inbox_kit_live_inbox_attempts')).toBe(1);
    expect(value(running, 'inbox_kit_live_inbox_queued_messages')).toBe(1);
    expect(value(running, 'inbox_kit_live_inbox_max_queue_depth')).toBe(1);
    expect(value(running, 'inbox_kit_live_inbox_queued_bytes')).toBeGreaterThan(0);
    await waitUntil(async () => value(await scrape(metricsUrl!), 'inbox_kit_runs_ended_total', { outcome: 'completed' }) >= ended + 1, 'the Run ended', 30_000);
    const idle = await scrape(metricsUrl!);
    expect(value(idle, 'inbox_kit_runs', { state: 'running' })).toBe(0);
    expect(value(idle, 'inbox_kit_live_inbox_queued_messages')).toBe(0);

    // Only GET /metrics on the metrics port.
    expect((await fetch(metricsUrl!.replace('/metrics', '/other'))).status).toBe(404);
  });
});

describe.concurrent('without METRICS_PORT', () => {
  it('serves no metrics: the API port has no /metrics, and no line names one', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-metrics-off-'));
    const demo = await startDemoProcess({ DATA_DIR: dir });
    try {
      expect(demo.output()).not.toContain('Metrics:');
      expect((await fetch(`${demo.url}/metrics`)).status).toBe(404);
    } finally {
      await stopDemoProcess(demo);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
