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

  async function logOf(env: Record<string, string>): Promise<string[]> {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-log-'));
    dirs.push(dir);
    const p = await startDemoProcess({ DATA_DIR: dir, LOG_LEVEL: 'info', ...env });
    processes.push(p);
    expect((await fetch(`${p.url}/health`)).status).toBe(200);
    await waitUntil(() => p.output().includes('request completed'), 'the request to be logged');
    return p.output().split('\n').filter((line) => /incoming request|request completed/.test(line));
  }

  it('is one JSON object per line when stdout is not a terminal', async () => {
    const lines = await logOf({});
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ level: 30 });
  });

  it('is human-readable with LOG_FORMAT=pretty (the default on a terminal)', async () => {
    const lines = await logOf({ LOG_FORMAT: 'pretty' });
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) {
      expect(line).toMatch(/^\[?\d\d:\d\d:\d\d\.\d{3}\]? INFO.*: (incoming request|request completed)/);
      expect(line.trimStart().startsWith('{')).toBe(false);
    }
  });
});
