/**
 * The request log of `createServer`: one small line per answered request (not Fastify's
 * "incoming request" / "request completed" pair), whose `reqId` is the response's `x-request-id`.
 * Real HTTP, real database.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { engines, startHarness, type Harness } from './harness.js';

/** A pino destination keeping every line. */
function lines() {
  const kept: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      kept.push(...String(chunk).split('\n').filter((l) => l !== ''));
      done();
    },
  });
  return { kept, stream };
}

describe.each(engines)('request log (%s)', (engine) => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('writes one line per request with reqId = x-request-id, method, url, status and ms, and nothing twice', async () => {
    const log = lines();
    h = await startHarness(engine, { logger: { level: 'info', stream: log.stream } });
    const before = log.kept.length;
    const answers = [
      await h.request('GET', '/projects/proj_main/inbox?limit=2', { as: 'acc_owner' }),
      await h.request('GET', '/projects/proj_main/inbox/pinbox_missing', { as: 'acc_owner', headers: { 'x-request-id': 'trace-42' } }),
      await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: { type: 'note', payload: { secret: 'body stays out' } } }),
      await h.request('GET', '/no/such/route'),
    ];
    const requestLines = log.kept.slice(before).filter((l) => JSON.parse(l).msg === 'request');
    expect(log.kept.slice(before).map((l) => JSON.parse(l).msg)).not.toContain('incoming request');
    expect(requestLines).toHaveLength(answers.length);
    const expected = [
      ['GET', '/projects/proj_main/inbox?limit=2', 200],
      ['GET', '/projects/proj_main/inbox/pinbox_missing', 404],
      ['POST', '/projects/proj_main/inbox', 201],
      ['GET', '/no/such/route', 404],
    ];
    requestLines.forEach((line, i) => {
      const entry = JSON.parse(line);
      expect(entry).toMatchObject({ level: 30, msg: 'request', method: expected[i]![0], url: expected[i]![1], status: expected[i]![2] });
      expect(entry.reqId).toBe(answers[i]!.headers.get('x-request-id'));
      expect(typeof entry.ms).toBe('number');
      expect(entry.ms).toBeGreaterThanOrEqual(0);
      expect(Object.keys(entry).sort()).toEqual(['hostname', 'level', 'method', 'ms', 'msg', 'pid', 'reqId', 'status', 'time', 'url']);
      // Each key once in the raw line (pino would write a repeated binding twice).
      for (const key of Object.keys(entry)) expect(line.split(`"${key}":`).length - 1, key).toBe(1);
      expect(line).not.toContain('body stays out');
      expect(line).not.toContain('authorization');
    });
    expect(JSON.parse(requestLines[1]!).reqId).toBe('trace-42');
  });

  it('logs nothing per request below info', async () => {
    const log = lines();
    h = await startHarness(engine, { logger: { level: 'warn', stream: log.stream } });
    await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner' });
    expect(log.kept.filter((l) => JSON.parse(l).msg === 'request')).toEqual([]);
  });
});
