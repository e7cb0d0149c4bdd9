#!/usr/bin/env node
// A throw-away PgBouncer in front of a PostgreSQL server, for tests and the bench:
// `startPgBouncer({ target, poolMode })` writes a config in a fresh temp directory, starts
// `/usr/sbin/pgbouncer` (Debian's package; override with INBOX_KIT_PGBOUNCER) on a free localhost
// port, and returns `{ url(database), stop(), version }`. Every database of the target server is
// reachable through it under its own name, with trust authentication for the target URL's user.
// Returns null when the binary is not installed (callers report the test as skipped, or fail in CI).
//
// Run directly (`node scripts/pgbouncer.mjs <target-url> [transaction|session|statement]`) it prints
// the pooler's URL for the target's database and keeps running until SIGINT or SIGTERM.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { reapOnDeath } from './reaper.mjs';

export const PGBOUNCER = process.env.INBOX_KIT_PGBOUNCER ?? '/usr/sbin/pgbouncer';
const RUN_AS = 'postgres';
const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** A TCP port on 127.0.0.1 that was free a moment ago. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Resolves once something accepts TCP connections on `port` (rejects after `ms`). */
async function listening(port, ms, exited) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (exited()) throw new Error('pgbouncer exited');
    const ok = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The installed PgBouncer's version line (`PgBouncer 1.18.0`), or null when it is not installed. */
export function pgBouncerVersion() {
  if (!existsSync(PGBOUNCER)) return null;
  const out = spawnSync(PGBOUNCER, ['--version'], { encoding: 'utf8' });
  return out.status === 0 ? (out.stdout.split('\n')[0] ?? '').trim() : null;
}

/**
 * Starts PgBouncer in front of `target` (a `postgres://user@host:port/db` URL of a trust-auth server).
 * @param {{ target: string, poolMode?: 'transaction' | 'session' | 'statement', poolSize?: number }} options
 * @returns {Promise<null | { url: (database?: string) => string, stop: () => Promise<void>, version: string, log: () => string }>}
 */
export async function startPgBouncer({ target, poolMode = 'transaction', poolSize = 10 }) {
  const version = pgBouncerVersion();
  if (version === null) return null;
  const t = new URL(target);
  const user = decodeURIComponent(t.username || 'postgres');
  const dir = mkdtempSync('/tmp/inbox-kit-pgbouncer-');
  chmodSync(dir, 0o755);
  const port = await freePort();
  const ini = join(dir, 'pgbouncer.ini');
  const logFile = join(dir, 'pgbouncer.log');
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(ini, [
    '[databases]',
    `* = host=${t.hostname} port=${t.port || 5432}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    `pool_mode = ${poolMode}`,
    `default_pool_size = ${poolSize}`,
    'max_client_conn = 500',
    'server_reset_query = DISCARD ALL',
    'ignore_startup_parameters = extra_float_digits,options',
    `logfile = ${logFile}`,
    '',
  ].join('\n'));
  if (isRoot()) {
    const uid = Number(spawnSync('id', ['-u', RUN_AS], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', RUN_AS], { encoding: 'utf8' }).stdout.trim());
    for (const f of ['', 'pgbouncer.ini', 'users.txt']) chownSync(join(dir, f), uid, gid);
  }
  // PgBouncer refuses to run as root: `-u` switches to the server user.
  const child = spawn(PGBOUNCER, [...(isRoot() ? ['-u', RUN_AS] : []), ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  let exited = false;
  const done = new Promise((resolve) => child.once('exit', () => { exited = true; resolve(); }));
  const log = () => `${output}${existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''}`;
  // The pooler outlives a process killed by a signal only where it left our process group; the watcher covers a SIGKILL too.
  const reaper = reapOnDeath([['kill', ['-9', String(child.pid)]]], [dir]);
  const stopSync = () => {
    reaper.cancel();
    if (!exited) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopSync);
  try {
    await listening(port, 10_000, () => exited);
  } catch (error) {
    stopSync();
    process.removeListener('exit', stopSync);
    throw new Error(`${error.message}\n${log()}`);
  }
  return {
    version,
    log,
    url: (database = t.pathname.slice(1)) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`,
    async stop() {
      reaper.cancel();
      process.removeListener('exit', stopSync);
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await done;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const [target, poolMode] = process.argv.slice(2);
  if (!target) {
    console.error('usage: node scripts/pgbouncer.mjs <postgres-url> [transaction|session|statement]');
    process.exit(2);
  }
  const bouncer = await startPgBouncer({ target, poolMode: poolMode ?? 'transaction' });
  if (!bouncer) {
    console.error(`pgbouncer.mjs: ${PGBOUNCER} is not installed`);
    process.exit(1);
  }
  console.log(bouncer.url());
  const shutdown = () => bouncer.stop().then(() => process.exit(0));
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  setInterval(() => {}, 1 << 30);
}
