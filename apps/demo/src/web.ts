/**
 * The demo's web page (issue "The demo's web page"): a review board for a Project Inbox and a
 * steering panel for a Session's Live Inbox, as plain HTML + CSS + ES modules served from the demo
 * server itself (same origin, no bundler, no separate dev server).
 *
 * Routes, all public (no API key; see `config.public` in http-fastify's plugin):
 * - `GET /`, `/index.html`, `/app.js`, … — the files of `apps/demo/public`, via `@fastify/static`;
 * - `GET /assets/sdk.js` — the SDK's built ESM file (`packages/sdk/dist/index.js`), which the page
 *   imports; everything the page does goes through it against this origin, so the server enforces
 *   every role's rules (the page hiding a button is only cosmetic);
 * - `GET /demo/accounts` — DEMO ONLY: the seeded accounts with their API keys, answered only while
 *   the server is bound to a loopback address (127.0.0.0/8, ::1) and the request's `Host` names
 *   one (or `localhost`, against DNS rebinding); otherwise it is a plain 404, as if the route did
 *   not exist. Never copy this into a real deployment: it hands out keys.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { Store } from '@inbox-kit/core';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifySchema } from 'fastify';
import type { Credentials } from './seed.js';

export interface DemoWebOptions {
  /** The seeded credentials (`demo.credentials`): account id → key, plus `service`. */
  credentials: Credentials;
  /** Used to show the seeded accounts' names; ids are shown when absent. */
  store?: Store;
  /** Directory of the page (default `apps/demo/public`). */
  publicDir?: string;
  /** The SDK's built ESM file (default: resolved from `@inbox-kit/sdk`). */
  sdkFile?: string;
}

/** Seeded accounts the page offers, with the workspace they live in and the role the seed gave them. */
const SEEDED: ReadonlyArray<{ account_id: string; workspace_id: string; role_hint: string }> = [
  { account_id: 'acc_owner', workspace_id: 'ws_demo', role_hint: 'owner' },
  { account_id: 'acc_deriver', workspace_id: 'ws_demo', role_hint: 'deriver' },
  { account_id: 'acc_observer', workspace_id: 'ws_demo', role_hint: 'observer' },
  { account_id: 'acc_outsider', workspace_id: 'ws_demo', role_hint: 'no role (workspace member only)' },
  { account_id: 'acc_stranger', workspace_id: 'ws_other', role_hint: 'another workspace' },
];

const here = dirname(fileURLToPath(import.meta.url));

/** `apps/demo/public`, from `src/web.ts` (tests) or the bundled `dist/main.js` alike. */
export const DEFAULT_PUBLIC_DIR = resolve(here, '..', 'public');

/**
 * The SDK's built ESM entry (`packages/sdk/dist/index.js`), found by Node's resolver from this
 * package (`import.meta.resolve`), else by walking up to `node_modules/@inbox-kit/sdk` and reading
 * its `exports` (under vitest the specifier is aliased to the TypeScript source, which a browser
 * cannot load). `undefined` when the SDK package cannot be found.
 */
export function resolveSdkFile(): string | undefined {
  try {
    const url = import.meta.resolve('@inbox-kit/sdk');
    if (url.startsWith('file:') && url.endsWith('.js')) return fileURLToPath(url);
  } catch {
    // fall through to the manual lookup
  }
  for (let dir = here; ; dir = dirname(dir)) {
    const manifest = join(dir, 'node_modules', '@inbox-kit', 'sdk', 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { main?: string; exports?: { '.'?: { import?: string } } };
      return join(dirname(manifest), pkg.exports?.['.']?.import ?? pkg.main ?? 'dist/index.js');
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase();
  return a === '::1' || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** True for a `Host` header naming a loopback address or `localhost` (any port). */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.toLowerCase().replace(/:\d+$/, '');
  return name === 'localhost' || name === '[::1]' || isLoopbackAddress(name);
}

/** True when the server listens on a loopback address only (not `0.0.0.0`, `::` or a LAN address). */
function boundToLoopback(app: FastifyInstance): boolean {
  const address = app.server.address() as AddressInfo | string | null;
  return address !== null && typeof address === 'object' && isLoopbackAddress(address.address);
}

/** Not part of the API: kept out of the OpenAPI document (`@fastify/swagger` reads `schema.hide`). */
const HIDDEN = { hide: true } as FastifySchema;

const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The web page plugin. Register it on the demo's server after the inbox-kit plugin:
 * `await app.register(demoWeb, { credentials, store })`. Not wrapped in `fastify-plugin`, so its
 * `onRoute` hook (which marks its routes public) stays inside its own scope.
 */
export const demoWeb: FastifyPluginAsync<DemoWebOptions> = async (app, opts) => {
  const publicDir = opts.publicDir ?? DEFAULT_PUBLIC_DIR;
  const sdkFile = opts.sdkFile ?? resolveSdkFile();

  // Every route of this scope (ours and @fastify/static's) is public: the page holds no secret.
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config ?? {}), public: true } as typeof route.config;
  });

  await app.register(fastifyStatic, {
    root: publicDir,
    prefix: '/',
    wildcard: false,
    index: ['index.html'],
    decorateReply: false,
    schemaHide: true,
    dotfiles: 'ignore',
    cacheControl: false,
    // @fastify/static ≥ 10 passes the Fastify reply here.
    setHeaders: (reply: FastifyReply) => {
      void reply.headers({ ...PAGE_HEADERS, 'cache-control': 'no-cache' });
    },
  });

  /** Reads a built file per request (a rebuild is served without a restart). */
  const readBuilt = async (file: string | undefined): Promise<Buffer | undefined> =>
    file === undefined ? undefined : readFile(file).catch(() => undefined);
  const builtHeaders = { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };

  app.get('/assets/sdk.js', { schema: HIDDEN }, async (_request, reply) => {
    const body = await readBuilt(sdkFile);
    if (body === undefined) {
      // Plain JS, so the page's import fails with a readable message in the browser console.
      return reply.code(503).type('text/javascript; charset=utf-8').headers(builtHeaders)
        .send(`throw new Error(${JSON.stringify('The SDK is not built: run `pnpm build` (or `pnpm --filter @inbox-kit/sdk build`) and reload.')});\n`);
    }
    return reply.type('text/javascript; charset=utf-8').headers(builtHeaders).send(body);
  });
  // The bundle's `//# sourceMappingURL=index.js.map`, resolved against /assets/sdk.js.
  app.get('/assets/index.js.map', { schema: HIDDEN }, async (_request, reply) => {
    const body = await readBuilt(sdkFile === undefined ? undefined : `${sdkFile}.map`);
    if (body === undefined) return reply.callNotFound();
    return reply.type('application/json; charset=utf-8').headers(builtHeaders).send(body);
  });

  // DEMO ONLY: hands out the seeded API keys so a visitor can switch roles. Answered only while
  // the server is bound to a loopback address; elsewhere it is the ordinary 404 of a missing route.
  app.get('/demo/accounts', { schema: HIDDEN }, async (request, reply) => {
    // Also checks the Host header, so a page on another site cannot read it through DNS rebinding.
    if (!boundToLoopback(request.server) || !isLoopbackHost(request.headers.host)) return reply.callNotFound();
    const accounts = [];
    for (const seeded of SEEDED) {
      const api_key = opts.credentials[seeded.account_id];
      if (api_key === undefined) continue;
      const account = await opts.store?.getWorkspaceAccount(seeded.workspace_id, seeded.account_id).catch(() => undefined);
      accounts.push({ ...seeded, name: account?.name ?? seeded.account_id, api_key });
    }
    return reply.header('cache-control', 'no-store').send({
      notice: 'Demo only: this server hands out the seeded API keys because it is bound to a loopback address. Never expose this route.',
      project_id: 'proj_main',
      session_id: 'sess_001',
      accounts,
    });
  });
};
