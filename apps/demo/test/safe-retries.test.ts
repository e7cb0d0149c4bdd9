/**
 * Safe retries end to end: the SDK against the demo over real HTTP. A create whose response is
 * lost after the server committed it (the client sees a network error) is retried by the SDK with
 * the same `Idempotency-Key`, and the server answers with the item it already created — one item,
 * one Operation Log row, one Project Event. Without a key the SDK does not retry a create.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type FetchLike } from '@inbox-kit/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../src/index.js';
import { listen } from './listen.js';

let demo: Demo;
let dataDir: string;
let baseUrl: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-retries-'));
  demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }));
  baseUrl = await listen(demo);
});

afterAll(async () => {
  await demo?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A fetch that lets the first `lose` inbox creates reach the server, then loses their responses. */
function lossyFetch(lose: number): { fetch: FetchLike; sent: Array<string | null> } {
  const sent: Array<string | null> = [];
  const fetch: FetchLike = async (input, init) => {
    const res = await globalThis.fetch(input, init);
    if (init.method === 'POST' && input.endsWith('/inbox')) {
      sent.push(new Headers(init.headers).get('idempotency-key'));
      if (lose > 0) {
        lose -= 1;
        await res.arrayBuffer(); // the server answered (and committed); the client never sees it
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
      }
    }
    return res;
  };
  return { fetch, sent };
}

async function countsOfTitle(title: string) {
  const items = (await demo.store.listInboxItems({ project_id: 'proj_main', limit: 1000 })).filter((i) => i.title === title);
  const events = (await demo.store.listProjectEvents({ project_id: 'proj_main', after: 0, limit: 10_000 }))
    .filter((e) => e.type === 'project_inbox.item.created' && items.some((i) => i.id === e.payload.inbox_item_id));
  return { items: items.length, events: events.length };
}

describe('SDK retries of inbox.create with an Idempotency-Key', () => {
  it('a create whose response was lost is retried and answered with the item already created', async () => {
    const lossy = lossyFetch(2);
    const client = createClient({ baseUrl, apiKey: demo.credentials.acc_deriver!, fetch: lossy.fetch, retry: { retries: 3, baseDelayMs: 5 } });
    const item = await client.projects.inbox.create('proj_main', { type: 'summary', title: 'lost twice', payload: { n: 1 } }, { idempotencyKey: 'retry-1' });
    expect(lossy.sent).toEqual(['retry-1', 'retry-1', 'retry-1']);
    expect(item).toMatchObject({ title: 'lost twice', status: 'pending', senderAccountId: 'acc_deriver' });
    expect(await countsOfTitle('lost twice')).toEqual({ items: 1, events: 1 });
    const logs = await demo.store.listOperationLogs({ project_id: 'proj_main', limit: 1000 });
    expect(logs.filter((l) => l.target_id === item.id)).toHaveLength(1);
  });

  it('10 concurrent SDK creates with one key make one item', async () => {
    const client = createClient({ baseUrl, apiKey: demo.credentials.acc_deriver! });
    const items = await Promise.all(Array.from({ length: 10 }, () =>
      client.projects.inbox.create('proj_main', { type: 'summary', title: 'ten at once' }, { idempotencyKey: 'retry-concurrent' })));
    expect(new Set(items.map((i) => i.id)).size).toBe(1);
    expect(await countsOfTitle('ten at once')).toEqual({ items: 1, events: 1 });
  });

  it('without a key, a create whose response was lost is not retried (the error surfaces)', async () => {
    const lossy = lossyFetch(1);
    const client = createClient({ baseUrl, apiKey: demo.credentials.acc_deriver!, fetch: lossy.fetch, retry: { retries: 3, baseDelayMs: 5 } });
    await expect(client.projects.inbox.create('proj_main', { type: 'summary', title: 'no key' })).rejects.toThrow('fetch failed');
    expect(lossy.sent).toEqual([null]);
    expect(await countsOfTitle('no key')).toEqual({ items: 1, events: 1 });
  });
});
