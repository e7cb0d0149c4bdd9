/**
 * Browser-test harness: the demo started in-process on a loopback port with a throw-away data
 * directory, the SDK's ESM bundle built when missing or stale (the page imports it from
 * `/assets/sdk.js`), headless Chromium from Debian's package (`/usr/bin/chromium`) driven by
 * playwright-core, and screenshots under `test-results/screenshots/` at the repository root.
 *
 * No browser download: when `/usr/bin/chromium` is missing, {@link requireBrowser} fails the test
 * under CI (`process.env.CI`) and otherwise skips it (vitest counts it as skipped, with the reason).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { TestContext } from 'vitest';
import type { Model } from '@inbox-kit/core';
import { buildDemo, loadConfig, type Demo, type DemoConfig } from '../../src/index.js';
import { createScriptedModel } from '../../src/model.js';
import { resolveSdkFile } from '../../src/web.js';
import { listen } from '../listen.js';

/** Debian's Chromium; `INBOX_KIT_CHROMIUM` names another binary (or a missing one, to see the tests skip). */
export const CHROMIUM = process.env.INBOX_KIT_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
export const SCREENSHOT_DIR = join(repoRoot, 'test-results', 'screenshots');

/** True when Debian's Chromium is installed. */
export function hasChromium(): boolean {
  return existsSync(CHROMIUM);
}

/**
 * Returns when the browser test can run. Without `/usr/bin/chromium` it throws under CI (the test
 * fails) and otherwise skips the test through its context (reported as skipped, never as passed).
 */
export function requireBrowser(ctx: TestContext): void {
  if (hasChromium()) return;
  const message = `${CHROMIUM} is missing: browser test "${ctx.task.name}" did not drive a browser (install it with apt-get install chromium)`;
  if (process.env.CI) throw new Error(message);
  ctx.skip(message);
}

/** Launches headless Chromium with a fresh (temporary, deleted on close) profile. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 });
}

function sdkIsFresh(file: string): boolean {
  const srcDir = join(dirname(file), '..', 'src');
  const newestSource = existsSync(srcDir)
    ? Math.max(0, ...readdirSync(srcDir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).map((f) => statSync(join(srcDir, f)).mtimeMs))
    : 0;
  return existsSync(file) && statSync(file).mtimeMs >= newestSource;
}

/**
 * Builds `@inbox-kit/sdk` when its `dist/index.js` is missing or older than a source file. Test
 * files run in parallel workers, so the build is serialised by a lock directory (a second worker
 * waits, then finds the bundle fresh).
 */
export async function ensureSdkBuilt(): Promise<void> {
  const file = resolveSdkFile();
  if (file === undefined) throw new Error('@inbox-kit/sdk cannot be resolved from apps/demo');
  if (sdkIsFresh(file)) return;
  const lock = join(tmpdir(), 'inbox-kit-sdk-build.lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true }); // left by a killed run
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    if (sdkIsFresh(file)) return;
    const args = ['--filter', '@inbox-kit/sdk', 'build'];
    const options = { cwd: repoRoot, encoding: 'utf8' as const, env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' } };
    let result = spawnSync('pnpm', args, options);
    if (result.error) result = spawnSync('npx', ['--yes', 'pnpm@12.4.2', ...args], options); // no global pnpm (as scripts/test.mjs does)
    if (result.status !== 0 || !existsSync(file)) throw new Error(`building the SDK failed:\n${result.stdout}\n${result.stderr}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export interface RunningDemo {
  demo: Demo;
  /** Present when started with `{ gate: true }`. */
  gate: ModelGate | undefined;
  baseUrl: string;
  /** `acc_owner` etc. → API key (plus `service`). */
  keys: Record<string, string>;
  close(): Promise<void>;
}

/**
 * A gate in front of the demo's scripted model, so a browser test decides when the agent's next
 * step may run (no timing race between the page's edits and the Runtime's boundary drain). While
 * closed, every model step waits (an abort still rejects at once); `open()` lets steps through.
 */
export interface ModelGate {
  model: Model;
  open(): void;
  close(): void;
  /** Model steps currently waiting at the closed gate. */
  readonly waiting: number;
}

/** Wraps the demo's scripted model (its own output, timing and step count) in a {@link ModelGate}. */
export function gatedScriptedModel(config: DemoConfig): ModelGate {
  const inner = createScriptedModel({ stepMs: config.modelStepMs, steps: config.modelSteps });
  let isOpen = false;
  let waiting = 0;
  let release: () => void = () => {};
  let barrier = new Promise<void>((r) => (release = r));
  return {
    model: {
      async step(transcript, signal) {
        if (!isOpen) {
          waiting++;
          try {
            await new Promise<void>((resolve, reject) => {
              if (signal.aborted) return reject(signal.reason);
              signal.addEventListener('abort', () => reject(signal.reason), { once: true });
              void barrier.then(resolve);
            });
          } finally {
            waiting--;
          }
        }
        return inner.step(transcript, signal);
      },
    },
    open() {
      isOpen = true;
      release();
    },
    close() {
      if (!isOpen) return;
      isOpen = false;
      barrier = new Promise<void>((r) => (release = r));
    },
    get waiting() {
      return waiting;
    },
  };
}

/** Starts the demo in-process on 127.0.0.1 (random port) with a fresh data directory. */
export async function startDemo(env: Record<string, string> = {}, options: { gate?: boolean } = {}): Promise<RunningDemo> {
  const dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-web-'));
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', DEMO_MODEL_STEP_MS: '400', DEMO_MODEL_STEPS: '3', ...env });
  const gate = options.gate ? gatedScriptedModel(config) : undefined;
  const demo = await buildDemo(config, gate ? { model: gate.model } : {});
  const baseUrl = await listen(demo);
  return {
    demo,
    gate,
    baseUrl,
    keys: demo.credentials,
    close: async () => {
      await demo.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A new browser context (own cookies and sessionStorage) and page at the given width. */
export async function openPage(browser: Browser, baseUrl: string, options: { width?: number; height?: number } = {}): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
    reducedMotion: 'reduce',
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of (403|404|409|410)/.test(message.text())) errors.push(`console: ${message.text()}`);
  });
  return { context, page, errors };
}

/**
 * Opens the page at `hash` signed in as `accountId` (chosen in the account picker, as a visitor
 * would) and waits until the view has loaded.
 */
export async function signIn(page: Page, accountId: string, hash = '#board'): Promise<void> {
  await page.goto(`/${hash}`);
  await page.locator('body[data-ready="true"]').waitFor();
  const select = page.getByLabel('Signed in as');
  const value = await select.locator(`option`, { hasText: `(${accountId})` }).getAttribute('value');
  if (value === null) throw new Error(`no account option for ${accountId}`);
  if ((await select.inputValue()) !== value) await select.selectOption(value);
  await page.locator('#whoami', { hasText: `(${accountId})` }).waitFor();
  const view = hash.startsWith('#steer') ? '#steer-view' : '#board-view';
  await page.locator(`${view}[data-loaded="true"]`).waitFor();
}

/** Saves a screenshot (full page unless `fullPage: false`) as `test-results/screenshots/<name>.png`. */
export async function screenshot(page: Page, name: string, { fullPage = true }: { fullPage?: boolean } = {}): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage, animations: 'disabled' });
  return path;
}

/**
 * Fails when the page is wider than its viewport (content that does not wrap at 360 px) or a
 * form control has no label.
 */
export async function checkLayoutAndLabels(page: Page): Promise<{ overflow: number; unlabelled: string[] }> {
  return page.evaluate(() => {
    const overflow = document.documentElement.scrollWidth - document.documentElement.clientWidth;
    const unlabelled: string[] = [];
    for (const control of Array.from(document.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea'))) {
      if (control.type === 'hidden' || control.closest('[hidden]')) continue;
      const named = (control.labels?.length ?? 0) > 0 || control.getAttribute('aria-label') || control.getAttribute('aria-labelledby');
      if (!named) unlabelled.push(control.id || control.outerHTML.slice(0, 60));
    }
    for (const button of Array.from(document.querySelectorAll('button'))) {
      if (button.closest('[hidden]')) continue;
      if (!(button.textContent ?? '').trim() && !button.getAttribute('aria-label')) unlabelled.push(button.outerHTML.slice(0, 60));
    }
    return { overflow, unlabelled };
  });
}
