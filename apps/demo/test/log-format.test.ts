/**
 * The demo's request log: human-readable lines when stdout is a terminal (LOG_FORMAT=pretty, the
 * default there), one JSON object per line otherwise (the default when piped, e.g. under a process
 * manager or in a container). Runs the built demo as a process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/index.js';
import { startDemoProcess, stopDemoProcess, waitUntil, type DemoProcess } from './demo-process.js';

describe('LOG_FORMAT', () => {
  it('defaults to pretty on a terminal and json otherwise; either can be chosen; anything else is refused', () => {
    expect(loadConfig({}, true).logFormat).toBe('pretty');
    expect(loadConfig({}, false).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'json' }, true).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }, false).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'yaml' }, true)).toThrow('LOG_FORMAT must be pretty or json, got "yaml"');
  });
});

describe('the request log of the demo process', () => {
  const dirs: string[] = [];
  const processes: DemoProcess[] = [];
  afterAll(async () => {
    for (const p of processes) await stopDemoProcess(p);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function logOf(env: Record<string, string>): Promise<{ lines: string[]; output: string }> {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-log-'));
    dirs.push(dir);
    const p = await startDemoProcess({ DATA_DIR: dir, LOG_LEVEL: 'info', ...env });
    processes.push(p);
    expect((await fetch(`${p.url}/health`)).status).toBe(200);
    // One line per answered request, message `request` (createServer's request log, not Fastify's
    // "incoming request" / "request completed" pair).
    const logged = (): string[] => p.output().split('\n').filter((line) => /"msg":"request"|INFO.*: request\b/.test(line));
    await waitUntil(() => logged().length > 0, 'the request to be logged');
    return { lines: logged(), output: p.output() };
  }

  it('is one JSON object per line when stdout is not a terminal', async () => {
    const { lines, output } = await logOf({});
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, msg: 'request', method: 'GET', url: '/health', status: 200, reqId: expect.any(String), ms: expect.any(Number) });
    expect(output).not.toMatch(/incoming request|request completed/);
  });

  it('is one human-readable line per request with LOG_FORMAT=pretty (the default on a terminal)', async () => {
    const { lines, output } = await logOf({ LOG_FORMAT: 'pretty' });
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    // `[12:03:04.567] INFO: request {"reqId":…,"method":"GET","url":"/health","status":200,"ms":…}`:
    // the fields on the same line, not one line each below it.
    const m = /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request (\{.*\})$/.exec(line);
    expect(m, line).not.toBeNull();
    expect(JSON.parse(m![1]!)).toEqual({ reqId: expect.stringMatching(/^req_/), method: 'GET', url: '/health', status: 200, ms: expect.any(Number) });
    expect(output).not.toMatch(/^\s+(reqId|method|url|status|ms):/m);
    expect(output).not.toMatch(/incoming request|request completed/);
  });
});
