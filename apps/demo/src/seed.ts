/**
 * What the demo writes on its first start, and what it reads back later (README "Demo
 * configuration", platform.md "Running the demo").
 *
 * First start — the database holds no workspace yet:
 * - `DEMO_SEED` on (the default): the demo data — workspace `ws_demo` with `acc_owner`,
 *   `acc_deriver`, `acc_observer`, `acc_outsider` and `acc_admin`; project `proj_main` owned by
 *   `acc_owner` with the deriver and observer as members; session `sess_001` in it; workspace
 *   `ws_other` with `acc_stranger`; a key per account, a `service` key of `acc_owner` and an
 *   `admin` key of `acc_admin`.
 * - `DEMO_SEED=false`: one workspace named `INBOX_KIT_WORKSPACE_NAME`, one account
 *   `Administrator` and its `admin` key — nothing else.
 * The keys are written to `<DATA_DIR>/credentials.json` (0600): account id → key, plus `service`
 * and `admin`, with the marker `<DATA_DIR>/credentials.unshown` beside it until a start has printed
 * them (`keysShown`): a first start that ends before it serves (a port that is taken) leaves the
 * marker, and the next start that serves prints the keys instead.
 *
 * Later starts never depend on that file: a replica, a restored database, a deleted file, keys of
 * another database, a revoked seeded key — all start. The file only tells the web page which
 * seeded accounts it may offer: the keys in it that still authenticate against this database.
 *
 * Two processes making the first start at once (replicas on one new PostgreSQL database): the
 * first workspace's id is fixed (`ws_demo`) or derived from its name, so the second process's
 * insert fails on the taken id and it starts as a later start, writing nothing.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { systemAdminContext, type PlatformService, type RequestContext, type Store, type Workspace } from '@inbox-kit/core';

/** `{ "<account id>": "<key>", …, "service": "<service key of ws_demo>", "admin": "<admin key>" }` */
export type Credentials = Record<string, string>;

export const DEMO_ACCOUNTS = ['acc_owner', 'acc_deriver', 'acc_observer', 'acc_outsider'] as const;

/** What {@link startUp} did. */
export interface StartUp {
  /** On a first start the keys it issued; later, the keys of `credentials.json` that authenticate against this database. */
  credentials: Credentials;
  /** True on the start that found an empty database and wrote the first data and keys. */
  created: boolean;
  /**
   * Later starts: the keys of `credentials.json` were created by a start that never printed them
   * (it ended before serving, e.g. on a port that is taken): this start prints them, once.
   */
  unshown?: boolean;
  /** `seeded` (the demo data), `bootstrapped` (`DEMO_SEED=false`: one workspace and its admin key) or `existing`. */
  kind: 'seeded' | 'bootstrapped' | 'existing';
  /** The workspace the admin key administers (first start), or undefined. */
  workspace?: Workspace;
  /** Later starts: how `credentials.json` compared with the database (for the start-up lines). */
  file: { path: string; present: boolean; keys: number; valid: number };
}

/** Options of {@link startUp}. */
export interface StartUpOptions {
  /** `DEMO_SEED` (default true): seed the demo data on an empty database. */
  demoSeed?: boolean;
  /** `INBOX_KIT_WORKSPACE_NAME`: the workspace's name when `demoSeed` is false (default `Workspace`). */
  workspaceName?: string;
}

/** True when the database holds no workspace at all. */
async function isEmpty(store: Store): Promise<boolean> {
  if (store.listWorkspaces) return (await store.listWorkspaces()).length === 0;
  return (await store.getWorkspace('ws_demo')) === undefined;
}

/**
 * A new workspace with one account, `Administrator`, and its `admin` key, written through the
 * administration (so its Operation Log shows them, actor `system`). Used by `DEMO_SEED=false` and
 * by `npm run admin -- workspaces create`.
 */
export async function bootstrapWorkspace(platform: PlatformService, name: string, request_id: string): Promise<{ workspace: Workspace; account_id: string; key_id: string; secret: string }> {
  const workspace = await platform.createWorkspace({ name });
  return { workspace, ...(await administratorOf(platform, workspace, request_id)) };
}

/** The `Administrator` account of `workspace` and its `admin` key, written through the administration. */
async function administratorOf(platform: PlatformService, workspace: Workspace, request_id: string): Promise<{ account_id: string; key_id: string; secret: string }> {
  const ctx = systemAdminContext(workspace.id, request_id);
  const account = await platform.admin.createAccount(ctx, { name: 'Administrator' });
  const { key, secret } = await platform.admin.createKey(ctx, account.id, { kind: 'admin' });
  return { account_id: account.id, key_id: key.id, secret };
}

/** The keys of `file` that authenticate against this database (a revoked or foreign key is left out). */
async function validKeys(platform: PlatformService, file: string): Promise<{ credentials: Credentials; keys: number }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return { credentials: {}, keys: 0 };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { credentials: {}, keys: 0 };
  const entries = Object.entries(parsed as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string');
  const credentials: Credentials = {};
  for (const [name, key] of entries) {
    const principal = await platform.authenticate(key).catch(() => undefined);
    if (principal !== undefined) credentials[name] = key;
  }
  return { credentials, keys: entries.length };
}

/** The marker beside `credentials.json` while no start has printed its keys. */
const unshownMarker = (dataDir: string) => join(dataDir, 'credentials.unshown');

/** Records that the keys of `dataDir`'s `credentials.json` have been printed (the marker goes). Never throws. */
export function keysShown(dataDir: string): void {
  try {
    rmSync(unshownMarker(dataDir), { force: true });
  } catch {
    // A DATA_DIR this process may no longer write to: the next start prints the keys once more.
  }
}

/** Writes the keys to `file` (0600), keeping a file of another database under a new name; marked unshown until {@link keysShown}. */
function writeCredentials(dataDir: string, file: string, credentials: Credentials): void {
  if (existsSync(file)) {
    // A fresh database next to another database's keys: keep them, never overwrite silently.
    const kept = join(dataDir, `credentials.${Date.now()}.json`);
    renameSync(file, kept);
    console.warn(`inbox-kit demo: a new database; the previous ${file} (keys of another database) was kept as ${kept}`);
  }
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(unshownMarker(dataDir), '', { mode: 0o600 });
  writeFileSync(file, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
}

/** The id of the first workspace of `DEMO_SEED=false`: `ws_` + 21 URL-safe characters of the SHA-256 of its name (the same on every replica). */
export function firstWorkspaceId(name: string): string {
  return `ws_${createHash('sha256').update(`inbox-kit first workspace\n${name}`, 'utf8').digest('base64url').slice(0, 21)}`;
}

/** First start: the demo data, or one workspace with its admin key; later starts: the keys of the file that still work. */
export async function startUp(store: Store, platform: PlatformService, dataDir: string, options: StartUpOptions = {}): Promise<StartUp> {
  const path = join(dataDir, 'credentials.json');
  const later = async (): Promise<StartUp> => {
    const present = existsSync(path);
    const { credentials, keys } = present ? await validKeys(platform, path) : { credentials: {}, keys: 0 };
    const unshown = present && existsSync(unshownMarker(dataDir));
    return { credentials, created: false, kind: 'existing', ...(unshown ? { unshown } : {}), file: { path, present, keys, valid: Object.keys(credentials).length } };
  };
  if (!(await isEmpty(store))) return later();
  const bootstrap = options.demoSeed === false;
  const name = options.workspaceName || 'Workspace';
  const id = bootstrap ? firstWorkspaceId(name) : 'ws_demo';
  let workspace: Workspace;
  try {
    workspace = await platform.createWorkspace({ id, name: bootstrap ? name : 'Demo workspace' });
  } catch (error) {
    // Another process made the first start at the same moment: its workspace holds the id.
    if (await store.getWorkspace(id).catch(() => undefined)) return later();
    throw error;
  }
  if (bootstrap) {
    const { secret } = await administratorOf(platform, workspace, 'req_bootstrap');
    const credentials: Credentials = { admin: secret };
    writeCredentials(dataDir, path, credentials);
    return { credentials, created: true, kind: 'bootstrapped', workspace, file: { path, present: true, keys: 1, valid: 1 } };
  }
  const credentials = await seedDemo(platform);
  writeCredentials(dataDir, path, credentials);
  const keys = Object.keys(credentials).length;
  return { credentials, created: true, kind: 'seeded', workspace, file: { path, present: true, keys, valid: keys } };
}

/** The demo data (see the module comment) once `ws_demo` exists. */
async function seedDemo(platform: PlatformService): Promise<Credentials> {
  await platform.createWorkspace({ id: 'ws_other', name: 'Another tenant' });
  const names: Record<string, string> = { acc_owner: 'Olivia Owner', acc_deriver: 'Derek Deriver (agent)', acc_observer: 'Omar Observer', acc_outsider: 'Uma Outsider' };
  const credentials: Credentials = {};
  for (const id of DEMO_ACCOUNTS) {
    await platform.createAccount({ id, name: names[id] ?? id, workspace_ids: ['ws_demo'] });
    credentials[id] = (await platform.issueApiKey({ workspace_id: 'ws_demo', account_id: id })).secret;
  }
  await platform.createAccount({ id: 'acc_stranger', name: 'Sam Stranger', workspace_ids: ['ws_other'] });
  credentials.acc_stranger = (await platform.issueApiKey({ workspace_id: 'ws_other', account_id: 'acc_stranger' })).secret;
  credentials.service = (await platform.issueApiKey({ workspace_id: 'ws_demo', account_id: 'acc_owner', kind: 'service' })).secret;
  await platform.createAccount({ id: 'acc_admin', name: 'Ada Admin', workspace_ids: ['ws_demo'] });
  credentials.admin = (await platform.issueApiKey({ workspace_id: 'ws_demo', account_id: 'acc_admin', kind: 'admin' })).secret;

  const owner = await platform.authenticate(credentials.acc_owner);
  const ctx: RequestContext = { principal: owner, request_id: 'req_seed', source: 'system' };
  await platform.createProject(ctx, { id: 'proj_main', name: 'Main project' });
  await platform.addMember(ctx, 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
  await platform.addMember(ctx, 'proj_main', { account_id: 'acc_observer', role: 'observer' });
  await platform.createSession(ctx, { id: 'sess_001', project_id: 'proj_main', title: 'First session' });
  return credentials;
}

