/**
 * OpenTelemetry spans (platform.md "Observing", apps/demo README "Metrics and tracing"): with an
 * OTLP endpoint configured, the demo opens spans through `@opentelemetry/api` around every request
 * (`GET /projects/:id`: the route template, its status) and every storage call, the storage calls
 * of a route's service call as children of its request span. Here an SDK (`@opentelemetry/sdk-trace-node`)
 * with an in-memory exporter stands in for the one an operator registers; without the endpoint
 * the demo opens no span. Real HTTP and a real SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, type Demo } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const dirs: string[] = [];
const demos: Demo[] = [];

async function start(env: Record<string, string>): Promise<{ demo: Demo; url: string; key: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-tracing-'));
  dirs.push(dir);
  const demo = await buildDemo(loadConfig({ DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', ...env }));
  demos.push(demo);
  await demo.app.listen({ host: '127.0.0.1', port: 0 });
  return { demo, url: `http://127.0.0.1:${(demo.app.server.address() as AddressInfo).port}`, key: demo.credentials['acc_owner']! };
}

beforeAll(() => {
  provider.register();
});
afterAll(async () => {
  for (const demo of demos) await demo.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await provider.shutdown();
  trace.disable();
});

describe('tracing spans', () => {
  it('a span per request (route template, status) with its storage calls as children', { timeout: 30_000 }, async () => {
    const { url, key } = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
    exporter.reset();
    expect((await fetch(`${url}/projects/proj_main`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await fetch(`${url}/projects/proj_main`)).status).toBe(401);
    const spans = exporter.getFinishedSpans();
    const requests = spans.filter((s) => s.name === 'GET /projects/:id');
    expect(requests.map((s) => s.attributes['http.response.status_code']).sort()).toEqual([200, 401]);
    expect(requests.every((s) => s.attributes['http.route'] === '/projects/:id')).toBe(true);
    const served = requests.find((s) => s.attributes['http.response.status_code'] === 200)!;
    const children = spans.filter((s) => s.name.startsWith('storage ') && s.parentSpanContext?.spanId === served.spanContext().spanId);
    expect(children.length).toBeGreaterThan(0);
    expect(children.every((s) => s.spanContext().traceId === served.spanContext().traceId)).toBe(true);
    expect(children[0]!.attributes['db.operation.name']).toBe(children[0]!.name.slice('storage '.length));
    // No raw path in a span name.
    expect(spans.filter((s) => s.name.includes('proj_main'))).toEqual([]);
  });

  it('no span without an OTLP endpoint', { timeout: 30_000 }, async () => {
    const { url, key } = await start({});
    exporter.reset();
    expect((await fetch(`${url}/projects/proj_main`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
