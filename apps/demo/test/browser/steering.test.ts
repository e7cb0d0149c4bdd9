/**
 * The steering panel in a real browser (headless Chromium): start a run with a durable message,
 * steer the running agent through the Live Inbox (queue, reorder by button, keyboard and drag,
 * edit in place, withdraw), see the steered text committed to the transcript, the 410 "run ended"
 * offer to send durably, and a stale reorder (409) shown as "the queue changed, reloaded".
 *
 * The demo runs its scripted model (400 ms per step, 3 steps) behind a gate the test opens, so the
 * page's edits never race the Runtime's boundary drain.
 */
import { createClient, type InboxKitClient } from '@inbox-kit/sdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkLayoutAndLabels, ensureSdkBuilt, hasChromium, launchBrowser, openPage, requireBrowser, screenshot, signIn, startDemo,
  type RunningDemo,
} from './harness.js';

let server: RunningDemo;
let browser: Browser | undefined;
let owner: InboxKitClient;

beforeAll(async () => {
  await ensureSdkBuilt();
  server = await startDemo({}, { gate: true });
  owner = createClient({ baseUrl: server.baseUrl, apiKey: server.keys.acc_owner! });
  if (hasChromium()) browser = await launchBrowser();
});

afterAll(async () => {
  server?.gate?.open();
  await browser?.close();
  await server?.close();
});

/** A fresh session in proj_main, so each test starts from an empty transcript. */
async function freshSession(title: string): Promise<string> {
  return (await owner.sessions.create({ projectId: 'proj_main', title })).id;
}

/** The queued messages' texts, in the page's order. */
function queueTexts(page: Page): Promise<string[]> {
  return page.locator('#queue > li').evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.text ?? ''));
}

async function waitForQueue(page: Page, expected: string[]): Promise<void> {
  await expect.poll(() => queueTexts(page), { timeout: 10_000 }).toEqual(expected);
}

function queued(page: Page, text: string) {
  return page.locator('#queue > li').filter({ has: page.locator('.qtext', { hasText: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) });
}

describe('steering panel in Chromium', () => {
  it('steers a running agent (queue, reorder, edit, withdraw) and shows the steered text in the transcript', async (ctx) => {
    requireBrowser(ctx);
    const gate = server.gate!;
    gate.close();
    const sessionId = await freshSession('Release notes');
    const { context, page, errors } = await openPage(browser!, server.baseUrl);
    try {
      await signIn(page, 'acc_owner', `#steer?session=${sessionId}`);
      await page.locator('#live-version[data-state="closed"]').waitFor();
      expect(await page.locator('#steer-rules').textContent()).toMatch(/you may start runs and steer them/);

      // Start a run with a message (durable input).
      await page.getByLabel('Message', { exact: true }).fill('Draft the release notes');
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.locator('#transcript li[data-kind="user"]', { hasText: 'Draft the release notes' }).waitFor();
      await page.locator('#run-state[data-state="running"]').waitFor();
      await page.locator('#live-version[data-state="open"]').waitFor();

      // Queue three messages while the agent works on its first step (held at the gate).
      const box = page.getByLabel('Steer the running agent');
      for (const text of ['Mention the API change', 'Keep it short', 'Add a migration section']) {
        await box.fill(text);
        await page.getByRole('button', { name: 'Queue', exact: true }).click();
        await queued(page, text).waitFor();
      }
      await waitForQueue(page, ['Mention the API change', 'Keep it short', 'Add a migration section']);

      // Reorder with the Down button …
      await queued(page, 'Mention the API change').getByRole('button', { name: /^↓ Down/ }).click();
      await waitForQueue(page, ['Keep it short', 'Mention the API change', 'Add a migration section']);
      // … from the keyboard (focus stays on the moved message's button) …
      await queued(page, 'Add a migration section').getByRole('button', { name: /^↑ Up/ }).focus();
      await page.keyboard.press('Enter');
      await waitForQueue(page, ['Keep it short', 'Add a migration section', 'Mention the API change']);
      expect(await page.evaluate(() => document.activeElement?.closest('li')?.dataset.text)).toBe('Add a migration section');
      // … and by dragging the last message onto the top of the first.
      await queued(page, 'Mention the API change').dragTo(queued(page, 'Keep it short'), { targetPosition: { x: 40, y: 4 } });
      await waitForQueue(page, ['Mention the API change', 'Keep it short', 'Add a migration section']);

      // Edit in place.
      await queued(page, 'Keep it short').getByRole('button', { name: /^Edit/ }).click();
      const editor = page.getByLabel(/^Edit message #\d+$/);
      await editor.fill('Keep it short: two paragraphs at most');
      await page.getByRole('button', { name: /^Save/ }).click();
      await waitForQueue(page, ['Mention the API change', 'Keep it short: two paragraphs at most', 'Add a migration section']);

      // Withdraw.
      await queued(page, 'Add a migration section').getByRole('button', { name: /^Withdraw/ }).click();
      await waitForQueue(page, ['Mention the API change', 'Keep it short: two paragraphs at most']);

      // The page shows what the server holds.
      const snapshot = await owner.sessions.liveInbox.get(sessionId);
      expect(snapshot.active).toBe(true);
      expect(snapshot.messages.map((m) => (m.content[0] as { text: string }).text)).toEqual(['Mention the API change', 'Keep it short: two paragraphs at most']);
      expect(await page.locator('#live-version').textContent()).toBe(`open · version ${snapshot.version}`);
      await screenshot(page, 'steer-queue-desktop');

      // Let the agent go on: at its next boundary it takes the queue; the steered text is committed.
      gate.open();
      const steered = page.locator('#transcript li[data-kind="steered"]');
      await steered.nth(1).waitFor();
      expect(await steered.locator('.text').allTextContents()).toEqual(['Mention the API change', 'Keep it short: two paragraphs at most']);
      await page.locator('#transcript li[data-kind="agent"]', { hasText: 'Steering received: "Keep it short: two paragraphs at most"' }).waitFor();
      await waitForQueue(page, []);
      await page.locator('#transcript li', { hasText: /^Run ended/ }).waitFor();
      await page.locator('#run-state[data-state="idle"]').waitFor();
      await page.locator('#live-version[data-state="closed"]').waitFor();
      expect(await page.locator('#transcript').textContent()).not.toContain('Add a migration section');
      const history = await owner.sessions.events.list(sessionId);
      expect(history.data.filter((e) => e.messageId?.includes('-inbox-')).map((e) => (e.content as Array<{ text: string }>)[0]!.text))
        .toEqual(['Mention the API change', 'Keep it short: two paragraphs at most']);
      await screenshot(page, 'steer-transcript-desktop');

      // The run has ended: queueing is refused (410) and the page offers a durable send instead.
      await box.fill('Also thank the contributors');
      await page.getByRole('button', { name: 'Queue', exact: true }).click();
      const offer = page.locator('#ended-offer');
      await offer.waitFor();
      expect(await page.locator('#offer-text').textContent()).toBe('Also thank the contributors');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('offer-send');
      expect(await page.locator('#steer-error').isHidden()).toBe(true);
      await screenshot(page, 'steer-run-ended-offer');
      await page.getByRole('button', { name: 'Send as durable message' }).click();
      await offer.waitFor({ state: 'hidden' });
      await page.locator('#transcript li[data-kind="user"]', { hasText: 'Also thank the contributors' }).waitFor();
      await expect.poll(() => page.locator('#transcript li', { hasText: /^Run ended/ }).count(), { timeout: 15_000 }).toBe(2);
      expect(errors).toEqual([]);
    } finally {
      gate.open();
      await context.close();
    }
  });

  it('a stale reorder says "the queue changed, reloaded" instead of showing an error', async (ctx) => {
    requireBrowser(ctx);
    const gate = server.gate!;
    gate.close();
    const sessionId = await freshSession('Stale reorder');
    const { context, page, errors } = await openPage(browser!, server.baseUrl);
    try {
      await signIn(page, 'acc_owner', `#steer?session=${sessionId}`);
      await owner.sessions.events.send(sessionId, [{ type: 'user.message', content: [{ type: 'text', text: 'Work on the changelog' }] }]);
      await page.locator('#live-version[data-state="open"]').waitFor();
      await owner.sessions.liveInbox.queue(sessionId, [{ type: 'text', text: 'First' }]);
      await owner.sessions.liveInbox.queue(sessionId, [{ type: 'text', text: 'Second' }]);
      await waitForQueue(page, ['First', 'Second']);

      // Freeze the page's view of the queue, then change the queue behind its back.
      const frozen = await owner.sessions.liveInbox.get(sessionId);
      let sawFrozenRead!: () => void;
      const frozenRead = new Promise<void>((resolve) => (sawFrozenRead = resolve));
      await page.route('**/live-inbox', (route) => {
        if (route.request().method() !== 'GET') return route.continue();
        sawFrozenRead();
        return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(frozen) });
      });
      await frozenRead; // the page's polls are sequential: any read that began before the freeze has finished
      await owner.sessions.liveInbox.queue(sessionId, [{ type: 'text', text: 'Third (queued elsewhere)' }]);

      await queued(page, 'First').getByRole('button', { name: /^↓ Down/ }).click();
      await page.locator('#queue-note', { hasText: 'The queue changed, reloaded.' }).waitFor();
      expect(await page.locator('#steer-error').isHidden()).toBe(true);
      await page.unroute('**/live-inbox');
      await waitForQueue(page, ['First', 'Second', 'Third (queued elsewhere)']);
      await screenshot(page, 'steer-stale-reorder');

      // Nothing changed on the server: the 409 left the queue exactly as it was.
      const now = await owner.sessions.liveInbox.get(sessionId);
      expect(now.messages.map((m) => (m.content[0] as { text: string }).text)).toEqual(['First', 'Second', 'Third (queued elsewhere)']);
      expect(errors).toEqual([]);
    } finally {
      gate.open();
      await context.close();
    }
  });

  it('a deriver can watch a session but the server refuses its steering; the panel works at 360 px', async (ctx) => {
    requireBrowser(ctx);
    const gate = server.gate!;
    gate.close();
    const sessionId = await freshSession('Narrow screen');
    const { context, page, errors } = await openPage(browser!, server.baseUrl, { width: 360, height: 780 });
    try {
      await signIn(page, 'acc_owner', `#steer?session=${sessionId}`);
      await page.getByLabel('Message', { exact: true }).fill('Summarise the incident report for the status page');
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.locator('#live-version[data-state="open"]').waitFor();
      await page.getByLabel('Steer the running agent').fill('Leave out internal host names');
      await page.getByRole('button', { name: 'Queue', exact: true }).click();
      await waitForQueue(page, ['Leave out internal host names']);
      const layout = await checkLayoutAndLabels(page);
      expect(layout.unlabelled).toEqual([]);
      expect(layout.overflow).toBeLessThanOrEqual(0);
      await page.locator('.live-panel').scrollIntoViewIfNeeded();
      await screenshot(page, 'steer-owner-360', { fullPage: false });

      // The deriver sees the same session and queue, but its steering is refused by the server.
      await signIn(page, 'acc_deriver', `#steer?session=${sessionId}`);
      await page.locator('#role-badge', { hasText: 'role: deriver' }).waitFor();
      await waitForQueue(page, ['Leave out internal host names']);
      expect(await page.locator('#steer-rules').textContent()).toMatch(/only the project owner may start runs or steer/);
      await page.getByLabel('Steer the running agent').fill('Deriver tries to steer');
      await page.getByRole('button', { name: 'Queue', exact: true }).click();
      await page.locator('#live-error', { hasText: '403 permission_denied' }).waitFor();
      await page.evaluate(() => document.getElementById('live-error')!.setAttribute('hidden', ''));
      await queued(page, 'Leave out internal host names').getByRole('button', { name: /^Withdraw/ }).click();
      await page.locator('#live-error', { hasText: '403 permission_denied' }).waitFor();
      await page.getByLabel('Message', { exact: true }).fill('Deriver tries to start a run');
      await page.getByRole('button', { name: /^(Start run|Send durable message)$/ }).click();
      await page.locator('#run-error', { hasText: '403 permission_denied' }).waitFor();
      const after = await owner.sessions.liveInbox.get(sessionId);
      expect(after.messages.map((m) => (m.content[0] as { text: string }).text)).toEqual(['Leave out internal host names']);
      expect(await page.locator('#transcript').textContent()).not.toContain('Deriver tries');
      await page.locator('.live-panel').scrollIntoViewIfNeeded();
      await screenshot(page, 'steer-deriver-360', { fullPage: false });
      expect(errors).toEqual([]);
    } finally {
      gate.open();
      await context.close();
    }
  });
});
