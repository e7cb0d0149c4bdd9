/**
 * Several demo processes on one PostgreSQL, at the demo's default settings (platform.md "Many
 * processes"): how long a dead listener goes unnoticed, and how long a dead owner's Run blocks its
 * Session. These are durations of the failure handling itself, so they are measured here and
 * never asserted in tests.
 *
 * - listener time-to-detect: a demo process's LISTEN backend is frozen (SIGSTOP, as a half-open
 *   TCP connection looks to the client); the figure is the time until the process has a new
 *   listener connected (a new backend with the bus's `application_name`). Default settings: a
 *   health check every 5 s with a 3 s deadline, so at most 8 s (target ≤ 10 s).
 * - takeover time: two routed processes; A runs a Run (long model steps), B holds durable input
 *   for it; A is killed with SIGKILL; the figure is the time until B has ended the Run (`failed`)
 *   and, separately, until B has started the follow-up Run for the waiting input (the Session is
 *   usable). Default lease 15 s, check every 5 s: at most 20 s.
 */
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { closeRequests, request, sleep, stopChild, summarize } from './util.mjs';

/** A TCP port on 127.0.0.1 that was free a moment ago. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A fresh database on the server of `adminUrl`, and how to drop it. */
async function freshDatabase(adminUrl, prefix) {
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** Polls `probe` every `everyMs` until it returns a truthy value; throws after `timeoutMs`. */
async function until(probe, what, timeoutMs, everyMs = 20) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`bench many-processes: timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

const listenerRows = async (client) => (await client.query(
  "select pid, application_name from pg_stat_activity where application_name like 'inbox-kit-bus %' and datname = current_database()")).rows;

/**
 * Listener time-to-detect, `reps` times on one demo process (default settings).
 * @param {{ adminUrl: string, startDemo: Function, reps: number, log: Function }} options
 */
export async function listenerTimeToDetect({ adminUrl, startDemo, reps, log }) {
  const database = await freshDatabase(adminUrl, 'bench_listener');
  const dataDir = mkdtempSync(join(os.tmpdir(), 'inbox-kit-bench-listener-'));
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  let server;
  const stopped = [];
  try {
    server = await startDemo({ dataDir, databaseUrl: database.url, label: 'listener' });
    const times = [];
    for (let i = 0; i < reps; i++) {
      const [listener] = await until(async () => {
        const rows = await listenerRows(admin);
        return rows.length === 1 ? rows : undefined;
      }, 'one listener', 30_000);
      const started = Date.now();
      process.kill(listener.pid, 'SIGSTOP');
      stopped.push(listener.pid);
      await until(async () => (await listenerRows(admin)).some((r) => r.application_name === listener.application_name && r.pid !== listener.pid), 'the new listener', 60_000, 10);
      times.push(Date.now() - started);
      log(`many-processes: listener ${i + 1}/${reps} replaced after ${times.at(-1)} ms`);
      process.kill(listener.pid, 'SIGCONT');
      stopped.pop();
      // The frozen backend finds its socket closed and exits; wait for it so the next round sees one listener.
      await until(async () => (await listenerRows(admin)).length === 1, 'the old listener gone', 30_000);
    }
    return { detect_ms: summarize(times), samples_ms: times, reps, settings: { check_interval_ms: 5000, check_timeout_ms: 3000 } };
  } finally {
    for (const pid of stopped) {
      try { process.kill(pid, 'SIGCONT'); } catch { /* gone */ }
    }
    closeRequests();
    if (server) await stopChild(server.child);
    await admin.end();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Takeover time after kill -9 of a Run's owner, `reps` times (two fresh processes each time; default lease and check).
 * @param {{ adminUrl: string, startDemo: Function, reps: number, log: Function }} options
 */
export async function takeoverTime({ adminUrl, startDemo, reps, log }) {
  const ended = [];
  const usable = [];
  for (let i = 0; i < reps; i++) {
    const database = await freshDatabase(adminUrl, 'bench_takeover');
    const dirs = [mkdtempSync(join(os.tmpdir(), 'inbox-kit-bench-takeover-a-')), mkdtempSync(join(os.tmpdir(), 'inbox-kit-bench-takeover-b-'))];
    const servers = [];
    try {
      const secret = `bench-${Math.random().toString(36).slice(2)}`;
      const routed = async (dir, label, steps) => {
        const port = await freePort();
        const server = await startDemo({
          dataDir: dir, databaseUrl: database.url, label,
          env: { PORT: String(port), INBOX_KIT_ADVERTISE_URL: `http://127.0.0.1:${port}`, INBOX_KIT_FORWARD_SECRET: secret, DEMO_MODEL_STEP_MS: steps, DEMO_MODEL_STEPS: '1' },
        });
        servers.push(server);
        return server;
      };
      const a = await routed(dirs[0], 'takeover-a', '3600000');
      const { copyFileSync } = await import('node:fs');
      copyFileSync(join(dirs[0], 'credentials.json'), join(dirs[1], 'credentials.json'));
      const b = await routed(dirs[1], 'takeover-b', '20');
      const owner = JSON.parse(readFileSync(join(dirs[0], 'credentials.json'), 'utf8')).acc_owner;
      const { body: session } = await request(a.url, 'POST', '/v1/sessions', { key: owner, expect: 200, body: { agent: 'assistant', environment_id: 'bench' } });
      const events = `/v1/sessions/${session.id}/events`;
      const say = (p, t) => request(p.url, 'POST', events, { key: owner, expect: 200, body: { events: [{ type: 'user.message', content: [{ type: 'text', text: t }] }] } });
      await say(a, 'A long task.');
      await until(async () => (await request(a.url, 'GET', `/v1/awaken/sessions/${session.id}/live-inbox`, { key: owner })).body?.active, 'the attempt on A', 30_000);
      const history = async () => (await request(b.url, 'GET', `${events}?limit=1000`, { key: owner, expect: 200 })).body.data;
      const deadRun = (await history()).find((e) => e.type === 'session.status_running').run_id;
      await say(b, 'Are you there?'); // committed, waiting for the Run to end
      const killed = Date.now();
      a.child.kill('SIGKILL');
      await until(async () => (await history()).some((e) => e.type === 'session.status_idle' && e.run_id === deadRun), 'the takeover', 60_000, 50);
      ended.push(Date.now() - killed);
      await until(async () => (await history()).some((e) => e.type === 'session.status_running' && e.run_id !== deadRun), 'the follow-up Run', 60_000, 50);
      usable.push(Date.now() - killed);
      log(`many-processes: takeover ${i + 1}/${reps}: Run ended after ${ended.at(-1)} ms, follow-up started after ${usable.at(-1)} ms`);
    } finally {
      closeRequests();
      for (const s of servers) await stopChild(s.child);
      await database.drop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  }
  return { ended_ms: summarize(ended), usable_ms: summarize(usable), samples_ended_ms: ended, samples_usable_ms: usable, reps, settings: { lease_ms: 15000, takeover_check_ms: 5000 } };
}
