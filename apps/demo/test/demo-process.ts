/**
 * Helpers of the tests that run the built demo as a real process (`node apps/demo/dist/main.js`):
 * start it and read its URL, stop or kill it, call its API with a key, a free port, make and drop a
 * fresh PostgreSQL database, raw HTTP/1.1 connections, SSE streams read with `fetch`, and deadline waits. Needs the build (`pnpm exec turbo run build`).
 *
 * Every demo process started here (and every child a test registers with {@link stopWhenFileEnds})
 * is stopped when its test file ends — SIGTERM, then SIGKILL after 10 s — even when a test or hook
 * failed or timed out before stopping it, and killed at the latest when the test worker exits, so
 * a failed run leaves no demo server behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createParser } from 'eventsource-parser';
import pg from 'pg';
import { afterAll } from 'vitest';

export const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
/** The built administration command line (`npm run admin` runs it in apps/demo). */
export const ADMIN = fileURLToPath(new URL('../dist/admin.js', import.meta.url));
export const PG_ADMIN_URL = process.env.INBOX_KIT_TEST_PG_URL || undefined;

/** A demo process, its base URL and everything it printed. */
export interface DemoProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code and signal once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The children of this test file still running (each file has its own module instance), and whether each leads its own process group. */
const running = new Map<ChildProcess, { group: boolean }>();
/** Set once the file's last hook has stopped them: no demo process starts after it. */
let fileEnded = false;

/**
 * Stops `child` when the test file ends if it is still running then (and kills it when the worker
 * exits first), whatever failed or timed out. `group`: it was spawned `detached` and leads its own
 * process group (`npm run demo`), which is signalled as a whole.
 */
export function stopWhenFileEnds(child: ChildProcess, options: { group?: boolean } = {}): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  running.set(child, { group: options.group === true });
  child.once('exit', () => running.delete(child));
}

function signalChild(child: ChildProcess, group: boolean, signal: NodeJS.Signals): void {
  try {
    if (group && child.pid !== undefined) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    // already gone
  }
}

/** SIGTERM to every child still running, SIGKILL to any left after 10 s; resolves once each has exited. */
async function stopEveryChild(): Promise<void> {
  fileEnded = true;
  await Promise.all([...running].map(async ([child, { group }]) => {
    const gone = new Promise<void>((done) => (child.exitCode !== null || child.signalCode !== null ? done() : child.once('exit', () => done())));
    signalChild(child, group, 'SIGTERM');
    const timer = setTimeout(() => signalChild(child, group, 'SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
  }));
}
// Registered on the root suite of the importing test file: runs after all its own hooks.
afterAll(stopEveryChild, 30_000);
process.once('exit', () => {
  for (const [child, { group }] of running) signalChild(child, group, 'SIGKILL');
});

/** What a process printed, or that it printed nothing. */
const printed = (out: string) => (out.trim() === '' ? 'it printed nothing on stdout or stderr' : `its output:\n${out}`);
/** How a process ended: its exit code or the signal that ended it. */
const endedWith = (code: number | null, signal: NodeJS.Signals | null) => (signal !== null ? `ended by ${signal}` : `exit code ${code}`);

/** Demo processes of one test file that may be starting at once (each file has its own module instance). */
const STARTS_AT_ONCE = 2;
let starting = 0;
const waitingToStart: Array<() => void> = [];

/** Runs `start` once fewer than {@link STARTS_AT_ONCE} others are running; a finished start hands its slot on. */
async function inTurn<T>(start: () => Promise<T>): Promise<T> {
  if (starting < STARTS_AT_ONCE) starting++;
  else await new Promise<void>((resolve) => waitingToStart.push(resolve));
  try {
    return await start();
  } finally {
    const next = waitingToStart.shift();
    if (next) next();
    else starting--;
  }
}

/**
 * Starts `node dist/main.js` with `env` and resolves once it prints its URL (30 s deadline, from
 * its turn). With `options.fdLimit`, the process runs under that file-descriptor limit (`ulimit -n`,
 * soft and hard); with `options.cwd`, in that working directory (where a relative or the default
 * DATA_DIR lies; else the test's). At most two starts of one test file run at once (a start-up is
 * CPU work: a file whose cases run concurrently overlaps their waits, and only two of their
 * start-ups). Stopped when the file ends, at the latest ({@link stopWhenFileEnds}).
 */
export function startDemoProcess(env: Record<string, string>, options: { fdLimit?: number; cwd?: string } = {}): Promise<DemoProcess> {
  return inTurn(() => spawnDemoProcess(env, options));
}

function spawnDemoProcess(env: Record<string, string>, options: { fdLimit?: number; cwd?: string }): Promise<DemoProcess> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build the demo first (pnpm exec turbo run build; pnpm test does it)`);
  if (fileEnded) return Promise.reject(new Error('the test file has ended (its demo processes are stopped): no demo process is started after it'));
  const [command, args] = options.fdLimit === undefined
    ? [process.execPath, [MAIN]]
    : ['/bin/sh', ['-c', `ulimit -n ${options.fdLimit} && exec "$0" "$1"`, process.execPath, MAIN]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    stopWhenFileEnds(child);
    let out = '';
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
      child.on('exit', (code, signal) => done({ code, signal }));
    });
    const timer = setTimeout(() => {
      const state = child.exitCode !== null || child.signalCode !== null
        ? `it had ended (${endedWith(child.exitCode, child.signalCode)})`
        : `pid ${child.pid} was still running and is killed (SIGKILL)`;
      child.kill('SIGKILL');
      reject(new Error(`demo process did not start within 30 s (no "listening on" line; ${state}); ${printed(out)}`));
    }, 30_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`demo process could not be started: ${error.message}`));
    });
    let started = false;
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (match && !started) {
        started = true;
        clearTimeout(timer);
        resolve({ child, url: match[1]!, output: () => out, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      if (!started) reject(new Error(`demo process ${signal !== null ? `ended by ${signal}` : `exited with ${code}`} before listening; ${printed(out)}`));
    });
  });
}

/** SIGTERM, then SIGKILL after 10 s; resolves once it has exited. */
export async function stopDemoProcess(p: DemoProcess | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
  p.child.kill('SIGTERM');
  await p.exited;
  clearTimeout(timer);
}

/** An answer of {@link callDemo}: the status, the parsed JSON body (absent when empty) and the headers. */
export interface DemoReply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Headers;
}

/** `method path` on the demo process with `key` as the bearer, `body` sent as JSON when given. */
export async function callDemo(p: DemoProcess, key: string, method: string, path: string, body?: unknown): Promise<DemoReply> {
  const res = await fetch(p.url + path, {
    method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const raw = await res.text();
  return { status: res.status, body: raw === '' ? undefined : JSON.parse(raw), headers: res.headers };
}

/** A TCP port free on 127.0.0.1 a moment ago (for a process that must know its own port before it starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The demo's API keys, from `credentials.json` in its DATA_DIR. */
export function credentialsOf(dataDir: string): Record<string, string> {
  return JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Record<string, string>;
}

/** Polls `check` until it holds; throws `timed out: <label>` after `timeoutMs` (a deadline, not a measurement). */
export async function waitUntil(check: () => boolean | Promise<boolean>, label: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${label}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** True when a new TCP connection to `url` is refused. */
export function connectionRefused(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = http.get(`${url}/health`, { agent: false }, (res) => {
      res.resume();
      resolve(false);
    });
    probe.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** A raw HTTP/1.1 connection: write bytes, read everything the server sends. */
export async function rawConnection(url: string): Promise<{ socket: net.Socket; received(): string; ended: Promise<void> }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  const ended = new Promise<void>((resolve) => {
    socket.on('close', () => resolve());
    socket.on('error', () => resolve());
  });
  return { socket, received: () => text, ended };
}

/** A fresh database on the server of `PG_ADMIN_URL`, and how to drop it. */
export async function freshPostgresDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (!PG_ADMIN_URL) throw new Error('INBOX_KIT_TEST_PG_URL is not set');
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A live SSE stream read with `fetch`: its raw text, its frames (parsed by eventsource-parser), whether it ended. */
export interface EventStream {
  events: Array<{ id: number; type: string; data: any }>;
  ids(): number[];
  /** Resolves once an event with an id ≥ `id` has arrived (5 s deadline by default). */
  waitForId(id: number, timeoutMs?: number): Promise<void>;
  text(): string;
  /** True once the server ended the stream (or the read failed). */
  ended(): boolean;
  close(): void;
}

/** Opens `url` as an SSE stream with `key` (and extra `headers`, e.g. `last-event-id`); throws unless the answer is 200 with a body. */
export async function openEventStream(url: string, key: string, headers: Record<string, string> = {}): Promise<EventStream> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers }, signal: controller.signal });
  if (res.status !== 200 || !res.body) throw new Error(`stream: ${res.status} ${await res.text()}`);
  const events: EventStream['events'] = [];
  const parser = createParser({ onEvent: (e) => events.push({ id: Number(e.id), type: e.event ?? 'message', data: JSON.parse(e.data) }) });
  let text = '';
  let ended = false;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const chunk = decoder.decode(value, { stream: true });
        text += chunk;
        parser.feed(chunk);
      }
    } catch {
      // aborted or reset
    }
    ended = true;
  })();
  return {
    events,
    ids: () => events.map((e) => e.id),
    async waitForId(id, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (!events.some((e) => e.id >= id)) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for event ${id}; have ${JSON.stringify(events.map((e) => e.id))}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    text: () => text,
    ended: () => ended,
    close: () => controller.abort(),
  };
}

/** The repository's root. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Runs `npm run admin -- <args>` from the repository's root as an operator does (the set-up step
 * skipped: the suite has built already), with `env` added to the test's environment minus the
 * database variables (so only `env` chooses the database). With `options.cwd`, runs the built
 * command line itself (`node apps/demo/dist/admin.js <args>`) in that directory instead, as
 * `npm run admin` runs it in apps/demo: where the default DATA_DIR (`data`) lies. Resolves once it
 * has exited.
 */
export function runAdminCommand(args: string[], env: Record<string, string>, options: { cwd?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base: NodeJS.ProcessEnv = { ...process.env, INBOX_KIT_SKIP_SETUP: '1', npm_config_update_notifier: 'false' };
  delete base.DATABASE_URL;
  delete base.DATA_DIR;
  return new Promise((resolve, reject) => {
    const [command, argv, cwd] = options.cwd === undefined
      ? ['npm', ['run', '--silent', 'admin', '--', ...args], REPO_ROOT]
      : [process.execPath, [ADMIN, ...args], options.cwd];
    const child = spawn(command, argv, { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** {@link runAdminCommand} with `--json`; throws with its output unless it exits 0; resolves with the parsed JSON. */
export async function adminJson<T = any>(args: string[], env: Record<string, string>, options: { cwd?: string } = {}): Promise<T> {
  const run = await runAdminCommand([...args, '--json'], env, options);
  if (run.code !== 0) throw new Error(`npm run admin -- ${args.join(' ')} exited ${run.code}:\n${run.stdout}${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}
