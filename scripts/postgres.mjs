#!/usr/bin/env node
// A throw-away PostgreSQL 15 server for tests: `startPostgres()` initialises a cluster in a fresh
// temp directory, starts it on a free localhost port with durability switched off (fsync=off),
// creates the database `inbox_kit_test` and returns its URL plus `stop()`. Returns null when the
// PostgreSQL binaries are not installed, so callers can fall back (or fail loudly in CI).
//
// Run directly (`node scripts/postgres.mjs`) it prints the URL on stdout and keeps the server up
// until SIGINT or SIGTERM, e.g. `node scripts/postgres.mjs > /tmp/pg.url &`.
//
// `halt()` and `resume()` stop the server (`pg_ctl stop -m fast`: connections are terminated) and
// start it again on the same port and data, for tests of an unreachable database.
//
// When we run as root the cluster is owned by, and the server runs as, the `postgres` user
// (PostgreSQL refuses to run as root); the temp directory is created with mode 0755 under /tmp so
// that user can traverse it.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { reapOnDeath } from './reaper.mjs';

/** Directory of the PostgreSQL server binaries (Debian layout); override with INBOX_KIT_PG_BIN. */
export const BIN = process.env.INBOX_KIT_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const DATABASE = 'inbox_kit_test';
const SERVER_USER = 'postgres';

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Quotes one argument for `sh -c`. */
const shellQuote = (s) => `'${String(s).replaceAll("'", `'\\''`)}'`;

/** Numeric uid/gid of the server user, read with `id` (no /etc/passwd parsing of our own). */
function serverUserIds() {
  const uid = spawnSync('id', ['-u', SERVER_USER], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', SERVER_USER], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error(`startPostgres: running as root but there is no '${SERVER_USER}' user to run the server as`);
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** The command line that runs `file args…` as the server user when we are root, directly otherwise. */
function asServerUser(file, args) {
  if (!isRoot()) return [file, args];
  if (existsSync('/usr/sbin/runuser') || existsSync('/sbin/runuser') || existsSync('/usr/bin/runuser')) {
    return ['runuser', ['-u', SERVER_USER, '--', file, ...args]];
  }
  return ['su', [SERVER_USER, '-s', '/bin/sh', '-c', [file, ...args].map(shellQuote).join(' ')]];
}

/** Runs a command to completion; rejects with its output when it exits non-zero. */
function run(file, args, { asServer = false } = {}) {
  const [cmd, argv] = asServer ? asServerUser(file, args) : [file, args];
  return new Promise((resolve, reject) => {
    // stdin is closed; stdout/stderr are collected so a failure explains itself.
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${file} ${args.join(' ')} exited with ${code}:\n${output}`));
    });
  });
}

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

/**
 * Starts a disposable PostgreSQL server.
 *
 * @returns `{ url, stop }` where `url` is `postgres://postgres@127.0.0.1:<port>/inbox_kit_test`
 *   (trust authentication, no password) and `stop()` shuts the server down (`pg_ctl stop -m fast`)
 *   and deletes its directory; or `null` when `initdb` is not installed.
 * @throws when the binaries exist but the cluster cannot be initialised or started (the error
 *   carries the tool's output and the server log).
 */
export async function startPostgres() {
  const initdb = join(BIN, 'initdb');
  if (!existsSync(initdb)) return null;
  const pgCtl = join(BIN, 'pg_ctl');
  const createdb = join(BIN, 'createdb');

  const dir = mkdtempSync('/tmp/inbox-kit-pg-');
  chmodSync(dir, 0o755);
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  if (isRoot()) {
    const { uid, gid } = serverUserIds();
    chownSync(dir, uid, gid);
  }

  let stopped = false;
  let halted = false;
  const immediateStop = asServerUser(pgCtl, ['stop', '-D', dataDir, '-m', 'immediate', '-w']);
  // The server outlives a process killed by a signal (Ctrl-C during `npm test`): a watcher stops it then.
  const reaper = reapOnDeath([immediateStop], [dir]);
  const stopSync = () => {
    // Last-resort cleanup when the process exits without calling stop().
    if (stopped) return;
    stopped = true;
    reaper.cancel();
    spawnSync(immediateStop[0], immediateStop[1], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await run(initdb, ['-D', dataDir, '-A', 'trust', '-U', SERVER_USER, '-E', 'UTF8', '--locale=C', '--no-sync'], { asServer: true });

    let port = 0;
    let options = '';
    let lastError;
    // The port is free when we probe it; another process may take it before the server binds, so
    // try a few ports.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      port = await freePort();
      options = [
        `-p ${port}`, `-k ${dir}`, '-c listen_addresses=127.0.0.1', '-c fsync=off',
        '-c synchronous_commit=off', '-c full_page_writes=off', '-c max_connections=200',
      ].join(' ');
      try {
        await run(pgCtl, ['start', '-D', dataDir, '-w', '-t', '60', '-l', logFile, '-o', options], { asServer: true });
        lastError = undefined;
        break;
      } catch (error) {
        lastError = error;
      }
    }
    if (lastError) {
      const log = spawnSync('cat', [logFile], { encoding: 'utf8' }).stdout ?? '';
      throw new Error(`${lastError.message}\nserver log:\n${log}`);
    }
    process.once('exit', stopSync);

    await run(createdb, ['-h', '127.0.0.1', '-p', String(port), '-U', SERVER_USER, DATABASE]);

    return {
      url: `postgres://${SERVER_USER}@127.0.0.1:${port}/${DATABASE}`,
      /** Stops the server, keeping its data (every connection is terminated; new ones are refused). */
      async halt() {
        await run(pgCtl, ['stop', '-D', dataDir, '-m', 'fast', '-w'], { asServer: true });
        halted = true;
      },
      /** Starts the halted server again, on the same port and data. */
      async resume() {
        await run(pgCtl, ['start', '-D', dataDir, '-w', '-t', '60', '-l', logFile, '-o', options], { asServer: true });
        halted = false;
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        reaper.cancel();
        process.removeListener('exit', stopSync);
        try {
          // A halted server has nothing to stop (its directory still goes).
          if (!halted) await run(pgCtl, ['stop', '-D', dataDir, '-m', 'fast', '-w'], { asServer: true });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    stopSync();
    process.removeListener('exit', stopSync);
    throw error;
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const server = await startPostgres();
  if (!server) {
    console.error(`postgres.mjs: no PostgreSQL binaries in ${BIN} (set INBOX_KIT_PG_BIN)`);
    process.exit(1);
  }
  console.log(server.url);
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    server.stop().then(() => process.exit(0), (error) => { console.error(error); process.exit(1); });
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  // Keep the event loop alive until a signal arrives.
  setInterval(() => {}, 1 << 30);
}
