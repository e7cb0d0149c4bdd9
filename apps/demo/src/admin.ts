#!/usr/bin/env node
/**
 * The demo's administration command line (apps/demo README "Administration"): accounts, API keys
 * and migrations of the database the server uses, without writing code and without the server
 * running. `npm run admin -- <command>` from the repository's root (scripts/admin.mjs), or
 * `node dist/admin.js <command>` here.
 *
 * It opens the same database as the server, from the same variables read the same way:
 * `DATABASE_URL` (PostgreSQL), else the SQLite file `<DATA_DIR>/inbox-kit.sqlite` with `DATA_DIR`
 * defaulting to `data` (data-dir.ts `dataDirOf`, the server's rule: apps/demo/data under `npm run
 * admin`). Only `migrate` creates a SQLite file that does not exist; every other command refuses,
 * saying where it looked and how to get a database there. Writes go through the core's
 * administration use cases (`AdminService`) as `system`, so each is one Operation Log row, as over `/admin`. Revocations reach running
 * servers within their principal cache's 1 s. Output is plain text, or JSON with `--json`.
 * Exit status: 0 done, 1 refused (the message says why), 2 usage.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  createIdGenerator, createLocalEventBus, isInboxKitError, PlatformService, systemAdminContext, systemClock, type ApiKeyKind, type ApiKeyView,
  type Workspace, type WorkspaceAccount,
} from '@inbox-kit/core';
import { isPostgresUrl, migrateToLatest, migrationStatus, openStore, type OpenedStore } from '@inbox-kit/storage-kysely';
import { nanoid } from 'nanoid';
import { dataDirOf, DEFAULT_DATA_DIR } from './data-dir.js';
import { bootstrapWorkspace } from './seed.js';

export const USAGE = `Usage: npm run admin -- <command> [options]     (from the repository root)

The database is the server's, read as the server reads it: DATABASE_URL=postgres://… (PostgreSQL), else
the SQLite file <DATA_DIR>/inbox-kit.sqlite, a relative DATA_DIR from apps/demo. DATA_DIR defaults to
data, as for the server: with neither variable set, the demo's own apps/demo/data/inbox-kit.sqlite.
Only migrate creates a database that does not exist yet.

Commands:
  migrate [--status]                         apply this release's pending migrations (--status: only list them)
  backup --to <file>                         SQLite: a consistent copy while the server runs (PostgreSQL: use pg_dump)
  workspaces list
  workspaces create --name <name>            a workspace with an Administrator account and its admin key
  accounts list
  accounts create --name <name>
  accounts disable <account id>              no member any more; its keys are revoked
  accounts enable <account id>               a member again (its revoked keys stay revoked: create a new one)
  keys list [--account <account id>] [--all] (--all: revoked keys too)
  keys create --account <account id> [--kind standard|service|admin]
  keys rotate <key id> [--grace-ms <ms>]     a new secret; the old one works <ms> more (default 0)
  keys revoke <key id>

Options:
  --workspace <id>   the workspace (default: the only one; required when there are several)
  --json             print JSON instead of text
  --help             this text
`;

/** A mistake in the command line (exit 2). */
class UsageError extends Error {}
/** A refusal (exit 1). */
class Refusal extends Error {}

interface Output {
  json: boolean;
  print(text: string, value: unknown): void;
}

/**
 * Where the database is, from the environment, as the server reads it: `DATABASE_URL`, else the
 * SQLite file under `DATA_DIR` (default `data`, from the working directory). `defaulted`: no
 * `DATA_DIR` was set. @throws UsageError for a `DATABASE_URL` that is not PostgreSQL's.
 */
export function databaseOf(env: NodeJS.ProcessEnv): { databaseUrl: string | undefined; sqliteFile: string | undefined; where: string; defaulted: boolean } {
  const url = env.DATABASE_URL?.trim() || undefined;
  if (url !== undefined) {
    if (!isPostgresUrl(url)) throw new UsageError('DATABASE_URL must be a postgres:// or postgresql:// URL (unset it and set DATA_DIR for the SQLite file)');
    const shown = new URL(url);
    if (shown.password) shown.password = '***';
    return { databaseUrl: url, sqliteFile: undefined, where: `PostgreSQL ${shown.toString()}`, defaulted: false };
  }
  const file = join(dataDirOf(env), 'inbox-kit.sqlite');
  return { databaseUrl: undefined, sqliteFile: file, where: `SQLite ${file}`, defaulted: !env.DATA_DIR };
}

/** The refusal of a command other than `migrate` when the SQLite file is not there. */
function noDatabaseAt(db: { sqliteFile: string | undefined; defaulted: boolean }): Refusal {
  return new Refusal(db.defaulted
    ? `no database at ${db.sqliteFile} (no DATA_DIR or DATABASE_URL set: the server's default, DATA_DIR=${DEFAULT_DATA_DIR}). `
      + 'Start the demo once to create and seed it (npm run demo), or set DATA_DIR (or DATABASE_URL) to the database your server uses; '
      + '`migrate` creates an empty one here'
    : `no database at ${db.sqliteFile}: check DATA_DIR (the server's), or create it with \`migrate\``);
}

const keyLine = (k: ApiKeyView, now: number) =>
  `${k.id}  ${k.kind.padEnd(8)}  ${k.account_id}  created ${new Date(k.created_at).toISOString()}  last used ${k.last_used_at === null ? 'never' : new Date(k.last_used_at).toISOString()}`
  + (k.revoked_at === null ? '' : k.revoked_at > now ? `  refused from ${new Date(k.revoked_at).toISOString()}` : `  revoked ${new Date(k.revoked_at).toISOString()}`);
const accountLine = (a: WorkspaceAccount) => `${a.id}  ${a.name}${a.disabled_at === null ? '' : `  (disabled ${new Date(a.disabled_at).toISOString()})`}`;

/** The workspace a command acts in: `--workspace`, else the only one. */
async function workspaceOf(platform: PlatformService, chosen: string | undefined): Promise<Workspace> {
  const all = await platform.listWorkspaces();
  if (chosen !== undefined) {
    const found = all.find((w) => w.id === chosen);
    if (!found) throw new Refusal(`no workspace ${chosen} in this database (there are: ${all.map((w) => w.id).join(', ') || 'none'})`);
    return found;
  }
  if (all.length === 1) return all[0]!;
  if (all.length === 0) throw new Refusal('this database has no workspace yet: start the server once, or run `workspaces create --name …`');
  throw new Refusal(`this database has ${all.length} workspaces; name one with --workspace (${all.map((w) => w.id).join(', ')})`);
}

/** The workspace holding key `key_id` (trusted code: the command line may reach every workspace). */
async function workspaceOfKey(opened: OpenedStore, platform: PlatformService, key_id: string, chosen: string | undefined): Promise<Workspace> {
  const all = await platform.listWorkspaces();
  for (const ws of all.filter((w) => chosen === undefined || w.id === chosen)) {
    if (await opened.store.getApiKey?.(ws.id, key_id)) return ws;
  }
  throw new Refusal(`no API key ${key_id}${chosen === undefined ? '' : ` in workspace ${chosen}`} (list them with \`keys list\`)`);
}

/**
 * Runs one command line (without `node` and the script). Returns the exit status; prints to
 * `out` / `err`.
 */
export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv = process.env, out: (line: string) => void = console.log, err: (line: string) => void = console.error): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, allowPositionals: true, strict: true,
      options: {
        workspace: { type: 'string' }, name: { type: 'string' }, to: { type: 'string' }, account: { type: 'string' }, kind: { type: 'string' },
        'grace-ms': { type: 'string' }, all: { type: 'boolean' }, status: { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    err(`inbox-kit admin: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) {
    (values.help ? out : err)(USAGE);
    return values.help ? 0 : 2;
  }
  const output: Output = {
    json: values.json === true,
    print: (text, value) => out(values.json ? JSON.stringify(value, null, 2) : text),
  };
  let opened: OpenedStore | undefined;
  try {
    const [group, action, target] = positionals;
    const command = action === undefined ? group! : `${group} ${action}`;
    const known = ['migrate', 'backup', 'workspaces list', 'workspaces create', 'accounts list', 'accounts create', 'accounts disable', 'accounts enable', 'keys list', 'keys create', 'keys rotate', 'keys revoke'];
    if (!known.includes(command)) throw new UsageError(`unknown command "${positionals.join(' ')}"`);
    const need = (value: string | undefined, flag: string): string => {
      if (value === undefined || value.trim() === '') throw new UsageError(`${command} needs ${flag}`);
      return value;
    };
    const db = databaseOf(env);
    if (db.sqliteFile !== undefined && command !== 'migrate' && !existsSync(db.sqliteFile)) {
      throw noDatabaseAt(db);
    }
    if (command === 'backup') {
      if (db.sqliteFile === undefined) {
        throw new Refusal('backup copies the SQLite file; on PostgreSQL use pg_dump: pg_dump --format=custom --file=inbox-kit.dump "$DATABASE_URL" (README "Backups")');
      }
      const to = resolve(need(values.to, '--to <file>'));
      const { backupSqlite } = await import('@inbox-kit/storage-kysely/sqlite');
      const { pages } = await backupSqlite(db.sqliteFile, to);
      output.print(`${db.where}: backed up to ${to} (${pages} pages)`, { backup: to, pages });
      return 0;
    }
    opened = await openStore({ databaseUrl: db.databaseUrl, sqliteFile: db.sqliteFile, migrate: false });

    if (command === 'migrate') {
      if (values.status) {
        const status = await migrationStatus(opened.db, opened.dialect);
        output.print([
          `${db.where}`, `applied: ${status.applied.join(', ') || 'none'}`, `pending: ${status.pending.join(', ') || 'none'}`,
          ...(status.unknown.length ? [`of a newer release: ${status.unknown.join(', ')}`] : []),
        ].join('\n'), status);
        return 0;
      }
      const applied = await migrateToLatest(opened.db, opened.dialect);
      const status = await migrationStatus(opened.db, opened.dialect);
      const text = applied.length > 0 ? `${db.where}: applied ${applied.join(', ')}`
        : status.unknown.length > 0 ? `${db.where}: migrated further by a newer release (${status.unknown.join(', ')}); nothing to apply`
          : `${db.where}: up to date (${status.applied.length} migrations)`;
      output.print(text, { newly_applied: applied, applied: status.applied, pending: status.pending, unknown: status.unknown });
      return 0;
    }
    if (opened.migrations.pending.length > 0) {
      throw new Refusal(`the database lacks migrations of this release (${opened.migrations.pending.join(', ')}): run \`npm run admin -- migrate\` first`);
    }

    const platform = new PlatformService({
      store: opened.store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator({ clock: systemClock, random: nanoid }),
    });
    const request_id = `cli_${nanoid(21)}`;
    const now = Date.now();

    switch (command) {
      case 'workspaces list': {
        const all = await platform.listWorkspaces();
        output.print(all.map((w) => `${w.id}  ${w.name}`).join('\n') || '(no workspace)', { items: all });
        return 0;
      }
      case 'workspaces create': {
        const made = await bootstrapWorkspace(platform, need(values.name, '--name <name>'), request_id);
        output.print([
          `Created workspace ${made.workspace.id} ("${made.workspace.name}") with the account ${made.account_id} (Administrator)`,
          `Admin key ${made.key_id}; its secret, shown once:`, made.secret,
        ].join('\n'), made);
        return 0;
      }
    }
    const needsKeyWorkspace = command === 'keys rotate' || command === 'keys revoke';
    const workspace = needsKeyWorkspace
      ? await workspaceOfKey(opened, platform, need(target, '<key id>'), values.workspace)
      : await workspaceOf(platform, values.workspace);
    const ctx = systemAdminContext(workspace.id, request_id);
    switch (command) {
      case 'accounts list': {
        const items = await everyPage((cursor) => platform.admin.listAccounts(ctx, { limit: 200, ...(cursor ? { cursor } : {}) }));
        output.print(items.map(accountLine).join('\n') || '(no account)', { items });
        return 0;
      }
      case 'accounts create': {
        const account = await platform.admin.createAccount(ctx, { name: need(values.name, '--name <name>') });
        output.print(`Created account ${account.id} ("${account.name}") in ${workspace.id}`, { account });
        return 0;
      }
      case 'accounts disable': {
        const account = await platform.admin.disableAccount(ctx, need(target, '<account id>'));
        output.print(`Disabled ${account.id} in ${workspace.id}; its keys there are revoked`, { account });
        return 0;
      }
      case 'accounts enable': {
        const account = await platform.admin.enableAccount(ctx, need(target, '<account id>'));
        output.print(`Enabled ${account.id} in ${workspace.id}; its keys revoked when it was disabled stay revoked (keys create --account ${account.id})`, { account });
        return 0;
      }
      case 'keys list': {
        const filters = { ...(values.account ? { account_id: values.account } : {}), include_revoked: values.all === true };
        const items = await everyPage((cursor) => platform.admin.listKeys(ctx, { ...filters, limit: 200, ...(cursor ? { cursor } : {}) }));
        output.print(items.map((k) => keyLine(k, now)).join('\n') || '(no key)', { items });
        return 0;
      }
      case 'keys create': {
        const kind = (values.kind ?? 'standard') as ApiKeyKind;
        if (!['standard', 'service', 'admin'].includes(kind)) throw new UsageError(`--kind must be standard, service or admin, got "${values.kind}"`);
        const issued = await platform.admin.createKey(ctx, need(values.account, '--account <account id>'), { kind });
        output.print([`Created ${issued.key.kind} key ${issued.key.id} for ${issued.key.account_id} in ${workspace.id}; its secret, shown once:`, issued.secret].join('\n'), issued);
        return 0;
      }
      case 'keys rotate': {
        const grace = values['grace-ms'];
        if (grace !== undefined && !/^\d{1,12}$/.test(grace)) throw new UsageError(`--grace-ms must be a whole number of ms, got "${grace}"`);
        const rotated = await platform.admin.rotateKey(ctx, target!, grace === undefined ? {} : { grace_ms: Number(grace) });
        output.print([
          `Rotated ${rotated.previous.id}: the new key is ${rotated.key.id}; the old secret is refused from ${new Date(rotated.previous.revoked_at!).toISOString()}`,
          'The new secret, shown once:', rotated.secret,
        ].join('\n'), rotated);
        return 0;
      }
      case 'keys revoke': {
        await platform.admin.revokeKey(ctx, target!);
        output.print(`Revoked ${target}: it is refused from now on (running servers: within 1 s)`, { revoked: target });
        return 0;
      }
    }
    throw new UsageError(`unknown command "${positionals.join(' ')}"`);
  } catch (error) {
    if (error instanceof UsageError) {
      err(`inbox-kit admin: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    const cause = isInboxKitError(error) && error.code === 'storage_unavailable' && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    if (error instanceof Refusal || isInboxKitError(error)) {
      err(`inbox-kit admin: ${(error as Error).message}${cause}`);
      return 1;
    }
    err(`inbox-kit admin: ${(error as Error)?.message ?? String(error)}`);
    return 1;
  } finally {
    await opened?.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await runAdmin(process.argv.slice(2));
}

/** Every item of a paged administration list (the command line prints whole lists). */
async function everyPage<T>(page: (cursor?: string) => Promise<{ items: T[]; next_cursor: string | null }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    items.push(...p.items);
    cursor = p.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return items;
}
