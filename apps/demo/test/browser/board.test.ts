/**
 * The review board in a real browser (headless Chromium): the page is served by the demo itself,
 * talks to it through the SDK, updates live from the project's event stream, and the server — not
 * the page — enforces what a deriver or observer may see and do.
 */
import { request } from 'node:http';
import { createClient, type InboxKitClient } from '@inbox-kit/sdk';
import Fastify from 'fastify';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoWeb, isLoopbackAddress, isLoopbackHost } from '../../src/web.js';
import {
  checkLayoutAndLabels, ensureSdkBuilt, hasChromium, launchBrowser, openPage, requireBrowser, screenshot, signIn, startDemo,
  type RunningDemo,
} from './harness.js';

const PROJECT = 'proj_main';

let server: RunningDemo;
let browser: Browser | undefined;
let owner: InboxKitClient;
let deriver: InboxKitClient;

beforeAll(async () => {
  await ensureSdkBuilt();
  server = await startDemo();
  owner = createClient({ baseUrl: server.baseUrl, apiKey: server.keys.acc_owner! });
  deriver = createClient({ baseUrl: server.baseUrl, apiKey: server.keys.acc_deriver! });
  if (hasChromium()) browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('serving the page', () => {
  it('serves the page, its modules and the SDK bundle without a key, while the API still needs one', async () => {
    const page = await fetch(`${server.baseUrl}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="/app.js"></script>');

    for (const file of ['/app.js', '/board.js', '/steer.js', '/ui.js']) {
      const res = await fetch(`${server.baseUrl}${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type'), file).toMatch(/javascript/);
    }
    expect((await fetch(`${server.baseUrl}/styles.css`)).headers.get('content-type')).toMatch(/^text\/css/);

    const sdk = await fetch(`${server.baseUrl}/assets/sdk.js`);
    expect(sdk.status).toBe(200);
    expect(sdk.headers.get('content-type')).toMatch(/^text\/javascript/);
    const source = await sdk.text();
    expect(source).toContain('createClient');
    expect(source).not.toMatch(/^import .* from ["'](?!\.)/m); // self-contained: nothing for the browser to resolve

    const api = await fetch(`${server.baseUrl}/projects`);
    expect(api.status).toBe(401);
    const missing = await fetch(`${server.baseUrl}/no-such-file.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { type: string }).type).toBe('error');
  });

  it('hands out the seeded accounts only while bound to a loopback address (demo only)', async () => {
    const res = await fetch(`${server.baseUrl}/demo/accounts`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as { notice: string; project_id: string; accounts: Array<{ account_id: string; role_hint: string; api_key: string; name: string }> };
    expect(body.notice).toMatch(/demo only/i);
    expect(body.project_id).toBe(PROJECT);
    expect(body.accounts.map((a) => a.account_id)).toEqual(['acc_owner', 'acc_deriver', 'acc_observer', 'acc_outsider', 'acc_stranger']);
    expect(body.accounts[0]).toMatchObject({ role_hint: 'owner', name: 'Olivia Owner', api_key: server.keys.acc_owner });
    expect(JSON.stringify(body)).not.toContain(server.keys.service!); // the all-powerful service key is never handed out

    expect(isLoopbackAddress('127.0.0.1')).toBe(true);
    expect(isLoopbackAddress('127.10.0.3')).toBe(true);
    expect(isLoopbackAddress('::1')).toBe(true);
    expect(isLoopbackAddress('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopbackAddress('0.0.0.0')).toBe(false);
    expect(isLoopbackAddress('::')).toBe(false);
    expect(isLoopbackAddress('192.168.1.20')).toBe(false);
    expect(isLoopbackHost('127.0.0.1:3000')).toBe(true);
    expect(isLoopbackHost('localhost:3000')).toBe(true);
    expect(isLoopbackHost('[::1]:3000')).toBe(true);
    expect(isLoopbackHost('attacker.example:3000')).toBe(false);
    expect(isLoopbackHost(undefined)).toBe(false);

    // A page elsewhere that rebinds its own name to 127.0.0.1 sends its own Host: refused.
    const rebound = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${server.baseUrl}/demo/accounts`);
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host: `attacker.example:${url.port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(rebound).toBe(404);

    // The same plugin on a server bound to every interface: the route answers as if it did not exist.
    const open = Fastify();
    await open.register(demoWeb, { credentials: { acc_owner: 'k_secret' } });
    await open.listen({ port: 0, host: '0.0.0.0' });
    try {
      const address = open.server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const refused = await fetch(`http://127.0.0.1:${port}/demo/accounts`);
      expect(refused.status).toBe(404);
      expect(await refused.text()).not.toContain('k_secret');
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200); // the page itself still loads
    } finally {
      await open.close();
    }
  });
});

describe('review board in Chromium', () => {
  it('owner accepts an item and a second browser context sees it move live', async (ctx) => {
    requireBrowser(ctx);
    const a = await openPage(browser!, server.baseUrl);
    const b = await openPage(browser!, server.baseUrl);
    try {
      await signIn(a.page, 'acc_owner');
      await signIn(b.page, 'acc_deriver');
      await a.page.locator('#role-badge', { hasText: 'role: owner' }).waitFor();
      await b.page.locator('#role-badge', { hasText: 'role: deriver' }).waitFor();
      await a.page.locator('#board-stream[data-state="on"]').waitFor();
      await b.page.locator('#board-stream[data-state="on"]').waitFor();

      // A deriver files an item (through the API, as an agent would): it appears in both pages live.
      const item = await deriver.projects.inbox.create(PROJECT, {
        type: 'derived_output.review', title: 'Summary of turn 3 needs review',
        payload: { derived_output_id: 'dout_001', suggested_action: 'review', facts: ['a', 'b'] }, sourceSessionId: 'sess_001',
      });
      const inA = a.page.locator(`li[data-item-id="${item.id}"]`);
      const inB = b.page.locator(`li[data-item-id="${item.id}"]`);
      await inA.waitFor();
      await inB.waitFor();
      expect(await inA.getAttribute('data-status')).toBe('pending');
      expect(await inA.locator('h3').textContent()).toBe('Summary of turn 3 needs review');
      expect(await inA.locator('pre').textContent()).toContain('"suggested_action": "review"'); // pretty-printed payload
      expect(await inA.getByRole('link', { name: 'session sess_001' }).getAttribute('href')).toBe('#steer?session=sess_001');
      await a.page.locator('#announcer', { hasText: 'New item' }).waitFor();

      // Owner-only controls: the owner has them, the deriver's page shows none.
      expect(await inA.getByRole('button', { name: /^Accept/ }).count()).toBe(1);
      expect(await b.page.getByRole('button', { name: /^(Accept|Reject|Archive)/ }).count()).toBe(0);

      await screenshot(a.page, 'board-owner-desktop');

      // The owner accepts with a note; the deriver's page (another context) sees the item move.
      await inA.getByLabel('Note (optional)').fill('Recorded; the app decides later whether to merge it.');
      await inA.getByRole('button', { name: /^Accept/ }).click();
      await a.page.locator(`li[data-item-id="${item.id}"][data-status="accepted"]`).waitFor();
      await b.page.locator(`li[data-item-id="${item.id}"][data-status="accepted"]`).waitFor();
      await b.page.locator('#announcer', { hasText: 'is now accepted' }).waitFor();
      expect(await b.page.locator(`li[data-item-id="${item.id}"] .status`).textContent()).toContain('accepted');
      // Accepted: only Archive is left for the owner.
      const after = a.page.locator(`li[data-item-id="${item.id}"]`);
      expect(await after.getByRole('button', { name: /^(Accept|Reject)/ }).count()).toBe(0);
      expect(await after.getByRole('button', { name: /^Archive/ }).count()).toBe(1);

      const stored = await owner.projects.inbox.get(PROJECT, item.id);
      expect(stored).toMatchObject({ status: 'accepted', decidedByAccountId: 'acc_owner' });
      const logs = await owner.projects.operationLogs.list(PROJECT, { limit: 5 });
      expect(logs.items.find((l) => l.targetId === item.id && l.action === 'project_inbox_item.decide')?.metadata).toMatchObject({
        decision: 'accept', note: 'Recorded; the app decides later whether to merge it.',
      });

      // A pending-only view on the owner's side: the next decision moves the item out of it live.
      const second = await deriver.projects.inbox.create(PROJECT, { type: 'derived_output.review', title: 'Second suggestion' });
      await b.page.getByLabel('Status').selectOption('pending');
      await b.page.getByRole('button', { name: 'Apply filters' }).click();
      await b.page.locator(`li[data-item-id="${second.id}"]`).waitFor();
      expect(await b.page.locator(`li[data-item-id="${item.id}"]`).count()).toBe(0);
      await owner.projects.inbox.reject(PROJECT, second.id);
      await b.page.locator(`li[data-item-id="${second.id}"]`).waitFor({ state: 'detached' });
      await screenshot(b.page, 'board-deriver-after-live-update');

      expect(a.errors).toEqual([]);
      expect(b.errors).toEqual([]);
    } finally {
      await a.context.close();
      await b.context.close();
    }
  });

  it('a deriver sees only its own items and no decision buttons; the server refuses the rest; an observer is refused reads', async (ctx) => {
    requireBrowser(ctx);
    const ownersItem = await owner.projects.inbox.create(PROJECT, { type: 'owner.note', title: 'Owner-only note', payload: { secret: true } });
    const derivers = await deriver.projects.inbox.create(PROJECT, { type: 'derived_output.review', title: 'Deriver suggestion', payload: { n: 1 } });
    const { context, page, errors } = await openPage(browser!, server.baseUrl);
    try {
      await signIn(page, 'acc_deriver');
      await page.locator(`li[data-item-id="${derivers.id}"]`).waitFor();
      expect(await page.locator(`li[data-item-id="${ownersItem.id}"]`).count()).toBe(0);
      const senders = await page.locator('#items li .meta dd:nth-of-type(2)').allTextContents();
      expect(senders.length).toBeGreaterThan(0);
      expect(new Set(senders)).toEqual(new Set(['acc_deriver']));
      expect(await page.getByRole('button', { name: /^(Accept|Reject|Archive)/ }).count()).toBe(0);
      expect(await page.locator('#board-rules').textContent()).toMatch(/only the items you filed/);
      await screenshot(page, 'board-deriver-desktop');

      // Not only hidden: with this page's own key, the server refuses the owner's item and decisions.
      // (A string expression, so the test runner's transform leaves the browser's import() alone.)
      const probe = `(async ({ project, ownerItemId, ownItemId }) => {
        const { createClient } = await import('/assets/sdk.js');
        const client = createClient({ baseUrl: location.origin, apiKey: sessionStorage.getItem('inbox-kit-demo.api-key') });
        const outcome = async (call) => {
          try { await call(); return 'allowed'; } catch (e) { return e.status + ' ' + e.code; }
        };
        return {
          getOthers: await outcome(() => client.projects.inbox.get(project, ownerItemId)),
          acceptOthers: await outcome(() => client.projects.inbox.accept(project, ownerItemId)),
          acceptOwn: await outcome(() => client.projects.inbox.accept(project, ownItemId)),
          listOthers: (await client.projects.inbox.list(project, { senderAccountId: 'acc_owner' })).items.length,
        };
      })(${JSON.stringify({ project: PROJECT, ownerItemId: ownersItem.id, ownItemId: derivers.id })})`;
      const refused = await page.evaluate(probe);
      expect(refused).toEqual({
        getOthers: '404 project_inbox_item_not_found',
        acceptOthers: '403 project_inbox_decide_denied',
        acceptOwn: '403 project_inbox_decide_denied',
        listOthers: 0,
      });

      // The sender filter cannot reveal the owner's items either.
      await page.getByLabel('Sender').selectOption('acc_owner');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.locator('#items-summary', { hasText: 'No items matching sender acc_owner' }).waitFor();
      expect(await page.locator('#items li').count()).toBe(0);

      // Switch the key to the observer in the same tab: the server refuses to list the inbox.
      await signIn(page, 'acc_observer');
      await page.locator('#role-badge', { hasText: 'role: observer' }).waitFor();
      await page.locator('#board-error', { hasText: '403 project_inbox_read_denied' }).waitFor();
      expect(await page.locator('#items li').count()).toBe(0);
      expect(await page.locator('#file-item').isHidden()).toBe(true);
      await screenshot(page, 'board-observer-desktop');

      // And the outsider (workspace member, no role): 404, like a project that does not exist.
      await signIn(page, 'acc_outsider');
      await page.locator('#board-error', { hasText: '404 project_not_found' }).waitFor();
      expect(await page.locator('#role-badge').textContent()).toBe('no role in this project');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('filters by status, type and sender and pages with the cursor', async (ctx) => {
    requireBrowser(ctx);
    const type = `paging.check.${Date.now()}`;
    const created = [];
    for (let i = 1; i <= 7; i++) created.push(await deriver.projects.inbox.create(PROJECT, { type, title: `Paged item ${i}`, payload: { i } }));
    await owner.projects.inbox.archive(PROJECT, created[0]!.id);
    const { context, page, errors } = await openPage(browser!, server.baseUrl);
    try {
      await signIn(page, 'acc_owner');
      await page.getByLabel('Type (exact)').fill(type);
      await page.getByLabel('Per page').selectOption('5');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      // Poll: the unfiltered first page (which also shows item 7) may still be on screen.
      await expect.poll(() => page.locator('#items li h3').allTextContents(), { timeout: 15_000 }).toEqual(['Paged item 7', 'Paged item 6', 'Paged item 5', 'Paged item 4', 'Paged item 3']);
      expect(await page.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.locator('#page-label', { hasText: 'Page 2' }).waitFor();
      await expect.poll(() => page.locator('#items li h3').allTextContents(), { timeout: 15_000 }).toEqual(['Paged item 2', 'Paged item 1']);
      expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'Previous page' }).click();
      await page.locator('#items li h3', { hasText: 'Paged item 7' }).waitFor();

      await page.getByLabel('Status').selectOption('archived');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.locator('#items-summary', { hasText: 'Showing 1 item matching status archived' }).waitFor();
      await expect.poll(() => page.locator('#items li h3').allTextContents(), { timeout: 15_000 }).toEqual(['Paged item 1']);
      expect(await page.locator('#items li').getByRole('button', { name: /^Archive/ }).count()).toBe(0);

      await page.getByRole('button', { name: 'Clear' }).click();
      await page.locator('#items-summary', { hasText: /^Showing \d+ items, newest first/ }).waitFor();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('works by keyboard and at 360 px: every control labelled, nothing wider than the screen', async (ctx) => {
    requireBrowser(ctx);
    const item = await deriver.projects.inbox.create(PROJECT, {
      type: 'derived_output.review', title: 'A rather long title that has to wrap on a narrow phone screen without overflowing',
      payload: { derived_output_id: 'dout_0000000000000000000000000000000000000001', suggested_action: 'review', nested: { list: [1, 2, 3] } },
      sourceSessionId: 'sess_001',
    });
    const { context, page, errors } = await openPage(browser!, server.baseUrl, { width: 360, height: 780 });
    try {
      await signIn(page, 'acc_owner');
      const row = page.locator(`li[data-item-id="${item.id}"]`);
      await row.waitFor();
      const layout = await checkLayoutAndLabels(page);
      expect(layout.unlabelled).toEqual([]);
      expect(layout.overflow).toBeLessThanOrEqual(0);
      await screenshot(page, 'board-owner-360', { fullPage: false });
      await row.scrollIntoViewIfNeeded();
      await screenshot(page, 'board-owner-360-item', { fullPage: false });

      // Keyboard only: type a note, Tab to the first decision button, press Enter.
      await row.getByLabel('Note (optional)').focus();
      await page.keyboard.type('Decided from the keyboard');
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => document.activeElement?.textContent ?? '');
      expect(focused).toMatch(/^Accept/);
      await page.keyboard.press('Enter');
      await page.locator(`li[data-item-id="${item.id}"][data-status="accepted"]`).waitFor();
      // Focus stays with the item: on its next control (the note field, then Archive).
      await expect.poll(() => page.evaluate(() => document.activeElement?.closest('li')?.dataset.itemId)).toBe(item.id);

      // After a reload, the skip link is the first stop and leads to the content.
      await page.reload();
      await page.locator('#board-view[data-loaded="true"]').waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
