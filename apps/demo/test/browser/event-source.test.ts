/**
 * The board's live updates in a real browser (headless Chromium's own `EventSource`, platform.md
 * "Browsers"): the page asks `POST /stream-tokens` for a stream token and opens the project's
 * event stream with `?access_token=` (an EventSource cannot send `Authorization`; the API key
 * never appears in a URL). Events arrive live; when the server restarts (same port, same SQLite
 * file), Chromium reconnects by itself with `Last-Event-ID` on the URL it kept (its `after` now
 * stale) and the board gets every event written meanwhile — no duplicate, no gap.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@inbox-kit/sdk';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, loadConfig, type Demo } from '../../src/index.js';
import { closeDemo } from '../listen.js';
import { ensureSdkBuilt, hasChromium, launchBrowser, openPage, requireBrowser, signIn } from './harness.js';

const PROJECT = 'proj_main';
const INBOX_TYPES = 'project_inbox.item.created,project_inbox.item.accepted,project_inbox.item.rejected,project_inbox.item.archived';

let browser: Browser | undefined;
let dataDir: string;
let demo: Demo | undefined;
let port = 0;

/** Starts the demo on `port` (0: any) over the data directory; returns its base URL. */
async function start(): Promise<string> {
  demo = await buildDemo(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }));
  await demo.app.listen({ port, host: '127.0.0.1' });
  const address = demo.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  await ensureSdkBuilt();
  dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-eventsource-'));
  if (hasChromium()) browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await closeDemo(demo);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('EventSource with a stream token', () => {
  it('live delivery, then reconnect after a server restart with Last-Event-ID: no duplicate, no gap; no API key in a URL', async (ctx) => {
    requireBrowser(ctx);
    const baseUrl = await start();
    const keys = demo!.credentials as Record<string, string>;
    const owner = () => createClient({ baseUrl, apiKey: keys.acc_owner!, retry: { retries: 0 } });
    const deriver = () => createClient({ baseUrl, apiKey: keys.acc_deriver!, retry: { retries: 0 } });
    const { context, page, errors } = await openPage(browser!, baseUrl);
    const urls: string[] = [];
    page.on('request', (request) => urls.push(request.url()));
    try {
      await signIn(page, 'acc_owner', '#board');
      await page.locator('#board-stream[data-state="on"]').waitFor();
      const received = () => page.evaluate(() => [...((window as unknown as { inboxKitBoardStream: { received: number[] } }).inboxKitBoardStream.received)]);
      const waitFor = async (sequences: number[]) => {
        await page.waitForFunction((want) => {
          const got = (window as unknown as { inboxKitBoardStream: { received: number[] } }).inboxKitBoardStream.received;
          return want.every((s) => got.includes(s));
        }, sequences, { timeout: 20_000 });
      };
      const inboxSequences = async () => (await owner().projects.events.list(PROJECT, { types: INBOX_TYPES.split(','), limit: 500 })).items.map((e) => e.sequence);
      const before = await inboxSequences();

      // Live: an item filed through the API shows up, its event received once.
      const first = await deriver().projects.inbox.create(PROJECT, { type: 'browser.live', title: 'Live one' });
      await page.locator('#items', { hasText: 'Live one' }).waitFor();
      const afterFirst = (await inboxSequences()).filter((s) => !before.includes(s));
      await waitFor(afterFirst);

      // Restart the server on the same port and file; write while the browser is still away.
      await closeDemo(demo);
      demo = undefined;
      await page.waitForFunction(() => (window as unknown as { inboxKitBoardStream: { readyState: number } }).inboxKitBoardStream.readyState !== 1, undefined, { timeout: 10_000 });
      await start();
      const filed = [];
      for (let i = 0; i < 3; i++) filed.push(await deriver().projects.inbox.create(PROJECT, { type: 'browser.restart', title: `While away ${i}` }));
      await owner().projects.inbox.accept(PROJECT, first.id);
      const all = (await inboxSequences()).filter((s) => !before.includes(s));
      expect(all.length).toBe(afterFirst.length + 4);
      await waitFor(all);
      // Exactly the events written since the page loaded, each once, in order.
      expect(await received()).toEqual(all);
      await page.locator('#items', { hasText: 'While away 2' }).waitFor();
      expect(filed).toHaveLength(3);

      // The stream was opened with a stream token, never with the API key in a URL.
      const streams = urls.filter((u) => u.includes('/events/stream'));
      expect(streams.length).toBeGreaterThanOrEqual(1);
      for (const u of streams) expect(new URL(u).searchParams.get('access_token')).toMatch(/^ikst_/);
      for (const key of Object.values(keys)) expect(urls.some((u) => u.includes(encodeURIComponent(key)) || u.includes(key))).toBe(false);
      // The restart cuts the open stream (and refuses the first reconnect): Chromium logs both; nothing else.
      expect(errors.filter((e) => !/net::ERR_CONNECTION_REFUSED|net::ERR_INCOMPLETE_CHUNKED_ENCODING/.test(e))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
