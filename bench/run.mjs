#!/usr/bin/env node
/**
 * `pnpm bench` / `npm run bench`: how fast inbox-kit is, against the ceiling, in one run.
 *
 * Every figure is also a ratio to references measured in the same run, because absolute numbers
 * drift between machines and runs:
 * - HTTP ceiling: a bare Fastify route returning a small JSON (logging off, same Node), measured
 *   at the start and at the end of the run (the mean is the reference);
 * - storage limit: a raw better-sqlite3 loop committing the four statements of a create, at the
 *   synchronous level the server's SQLite adapter sets (and, on PostgreSQL, the same on a pool of
 *   the server's size).
 *
 * Then, per engine (SQLite; PostgreSQL when its binaries exist and BENCH_PG is not 0), the demo
 * server (`apps/demo/dist/main.js`) runs in a child process on a fresh database, seeded in bulk
 * with raw SQL, and autocannon drives it from another child process: Project Inbox list (limit
 * 50 over 10,000 items), get, decide, create; list again at 1,000,000 items (100,000 with
 * --quick); Live Inbox GET / queue / replace / reorder on queues of 10 and 1,000 messages;
 * 1,000 SSE subscribers on one project (fan-out latency, and memory per stream measured first,
 * on the fresh server); server RSS at the end; 10,000 SSE subscribers on a fresh server of their
 * own, then on the stream floor (bare node:http holding as many streams; lib/stream-floor.mjs); then create and get again on a server logging as deployed (`LOG_LEVEL=info`, stdout to a
 * file). After each list run the page floor (the same page read by the store's SQL with the raw
 * driver + `JSON.stringify` of the exact body, one process; lib/page-floor.mjs) and the list's
 * route floor over HTTP; right after get, create, decide, Live Inbox GET and queue, the same
 * scenario on the route's floor: bare Fastify on the same database doing only the key check and
 * the route's one prepared read or write transaction with the raw driver (lib/route-floor.mjs).
 * On SQLite also, on a server of its own whose scripted model takes 10 ms steps, the steering
 * latency (a `POST …/live-inbox` 200 → that message in the Session ledger; lib/steering.mjs).
 * On PostgreSQL also, at the demo's default settings, how long
 * a frozen listener goes unnoticed (listener time-to-detect) and how long a killed owner's Run
 * blocks its Session (takeover time; lib/many-processes.mjs). Then the SQLite suite again on the demo with HTTP_ADAPTER=hono (no page
 * floor, scale or logged runs). Prints one table, the two adapters side by side, and writes
 * bench-results/bench.json (`sqlite_hono` holds the Hono suite).
 * `node bench/serializers.mjs` prints the pipeline's response policy: per route, the zod check against
 * `JSON.stringify` and a compiled serialiser; per adapter, that production does not re-validate.
 *
 * Options: --quick (short runs, 100k rows: a smoke run of ~1.5 minutes); --only a,b (only these
 * scenarios, see SCENARIOS); --no-hono (= BENCH_HONO=0: no Hono suite); --cpu-prof (profile the
 * demo server and each route floor; .cpuprofile files in bench-results/profiles); --perf (`perf record -g` of the server over
 * each measured run, CPU time only, JIT frames named through --perf-basic-prof: bench-results/perf/<scenario>-<pid>.data, read
 * with `perf report -i <file>`); --no-pg (= BENCH_PG=0); --demo <dir> (measure
 * the built demo of another checkout, e.g. /work/main, for a before/after).
 * Needs the built demo: `pnpm bench` runs scripts/setup.mjs (install + build) first.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPostgres } from '../scripts/postgres.mjs';
import { listenerTimeToDetect, takeoverTime } from './lib/many-processes.mjs';
import {
  countPostgresItems, countSqliteItems, postgresEventSequence, seedPostgresItems, seedSqliteItems, seededId, sqliteEventSequence,
} from './lib/seed.mjs';
import { closeRequests, cpuTimeUsOf, fdLimits, request, rssOf, rssPartsOf, runChild, sleep, startNode, stopChild } from './lib/util.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
/**
 * `--demo <dir>`: measure the demo of another checkout (e.g. `/work/main`, its own build and
 * packages) with this bench — a before/after of two builds in one way of measuring.
 */
const demoArg = process.argv.indexOf('--demo');
const demoRoot = demoArg > 0 ? resolve(process.argv[demoArg + 1] ?? '') : root;
const DEMO_MAIN = join(demoRoot, 'apps/demo/dist/main.js');
const OUT_DIR = join(root, 'bench-results');
const PROFILE_DIR = join(OUT_DIR, 'profiles');
const PERF_DIR = join(OUT_DIR, 'perf');
const lib = (name) => join(here, 'lib', name);

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const cpuProf = argv.includes('--cpu-prof');
/** `--perf`: each measured run's server under `perf record` (its CPU only: a V8 profile also counts the time the process waits preempted, e.g. in `writev`). */
const perfRecord = argv.includes('--perf');
/** Node flags of every server the bench starts with --perf: JIT frames named in perf's output. */
const PERF_FLAGS = perfRecord ? ['--perf-basic-prof'] : [];
const withPg = !argv.includes('--no-pg') && process.env.BENCH_PG !== '0';
/** The SQLite suite again on the demo with HTTP_ADAPTER=hono (issue 14 item 4), unless --no-hono / BENCH_HONO=0. */
const withHono = !argv.includes('--no-hono') && process.env.BENCH_HONO !== '0';
/**
 * `--only get,live-queue`: run only these scenarios (the references are still measured, once).
 * Names: fanout, fanout-10k, list, get, decide, create, live-get, live-queue, live-replace, live-reorder, scale,
 * logged, steering, fairness, listener, takeover (the last two on PostgreSQL); `--only` with an unknown name is refused.
 */
const SCENARIOS = ['fanout', 'fanout-10k', 'list', 'get', 'decide', 'create', 'live-get', 'live-queue', 'live-replace', 'live-reorder', 'scale', 'logged', 'steering', 'fairness', 'listener', 'takeover'];
const onlyArg = argv.find((a) => a.startsWith('--only'));
const only = onlyArg === undefined ? undefined
  : new Set((onlyArg.includes('=') ? onlyArg.slice(onlyArg.indexOf('=') + 1) : argv[argv.indexOf(onlyArg) + 1] ?? '').split(',').map((n) => n.trim()).filter(Boolean));
if (only) {
  const unknown = [...only].filter((n) => !SCENARIOS.includes(n));
  if (unknown.length || only.size === 0) {
    console.error(`bench: --only takes a comma-separated list of ${SCENARIOS.join(', ')}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}`);
    process.exit(2);
  }
}
/** Whether scenario `name` runs in this invocation. */
const wants = (name) => !only || only.has(name);

const config = quick
  ? { duration: 2, warmup: 1, limitSeconds: 2, listRows: 10_000, scaleRows: 100_000, decideRows: 60_000, subscribers: 1000, manySubscribers: 10_000, events: 20, manyEvents: 10, steeringSeconds: 4, listenerReps: 2, takeoverReps: 1 }
  : { duration: 5, warmup: 2, limitSeconds: 5, listRows: 10_000, scaleRows: 1_000_000, decideRows: 120_000, subscribers: 1000, manySubscribers: 10_000, events: 50, manyEvents: 20, steeringSeconds: 10, listenerReps: 5, takeoverReps: 2 };
const CONNECTIONS = 10;
const LIVE_SIZES = [10, 1000];
const LIST_LIMIT = 50;
/** The scripted model of the steering run: 10 ms steps, enough of them to outlast it. */
const STEERING_STEP_MS = 10;

const t0 = Date.now();
const log = (message) => console.log(`[bench ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)}s] ${message}`);

// — children —

/**
 * The Node flags of the demo's `start` script (`node <flags> dist/main.js`, e.g. the young
 * generation's size), so the server runs here as `pnpm start` runs it.
 */
function readDemoNodeFlags() {
  const start = JSON.parse(readFileSync(join(demoRoot, 'apps/demo/package.json'), 'utf8')).scripts?.start ?? '';
  const words = start.trim().split(/\s+/);
  const main = words.indexOf('dist/main.js');
  if (words[0] !== 'node' || main < 1) throw new Error(`bench: apps/demo's start script is not "node [flags] dist/main.js": ${start}`);
  return words.slice(1, main);
}
const DEMO_NODE_FLAGS = readDemoNodeFlags();

async function startDemo({ dataDir, databaseUrl, label, env = {}, logFile, fdLimit }) {
  const execArgv = [
    ...DEMO_NODE_FLAGS, ...PERF_FLAGS,
    ...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${label}-${Date.now()}.cpuprofile`] : []),
  ];
  const { child, match } = await startNode([DEMO_MAIN], {
    execArgv,
    env: {
      DATA_DIR: dataDir, DATABASE_URL: databaseUrl ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent',
      // The demo's defaults, whatever the caller's shell sets: these change what a request does.
      BODY_LIMIT: '', RATE_LIMIT_MAX: '', RATE_LIMIT_WINDOW_MS: '', DATABASE_PREPARED_STATEMENTS: '',
      INBOX_KIT_ADVERTISE_URL: '', INBOX_KIT_FORWARD_SECRET: '', INBOX_KIT_RECOVER_STALE_RUNS: '',
      DATABASE_LISTEN_URL: '', DATABASE_LISTEN_CHECK_MS: '', DATABASE_LISTEN_CHECK_TIMEOUT_MS: '', SQLITE_BUSY_TIMEOUT_MS: '',
      INBOX_KIT_LEASE_MS: '', INBOX_KIT_TAKEOVER_CHECK_MS: '', INBOX_KIT_TEST_CLOCK_OFFSET_MS: '',
      BODY_TIMEOUT_MS: '', LIVE_INBOX_MAX_BYTES: '', HTTP_ADAPTER: 'fastify',
      // Past the demo's default bounds on purpose: the Live Inbox runs measure a queue of 1,000
      // (default limit 100 messages) and the fan-out run opens 1,000 streams with one key (default 16).
      LIVE_INBOX_MAX_MESSAGES: '100000', MAX_STREAMS_PER_CALLER: '100000',
      // A Run's model step takes an hour: Runs stay active (and their queues undrained) for the Live Inbox runs.
      DEMO_MODEL_STEP_MS: '3600000', DEMO_MODEL_STEPS: '3', NODE_ENV: 'production',
      ...env,
    },
    ready: /listening on (http:\/\/\S+)/,
    fdLimit,
    ...(logFile ? { stdoutFile: logFile } : {}),
  });
  serverPids.set(match[1], child.pid);
  return { child, url: match[1], pid: child.pid };
}

/** The pid of the server listening at each URL, for the driver's server-CPU-per-request figure. */
const serverPids = new Map();

/** One autocannon scenario from the driver process. */
function drive(scenario, url, params = {}, overrides = {}) {
  return runChild(lib('drive.mjs'), {
    scenario, url, connections: CONNECTIONS, duration: config.duration, warmup: config.warmup, params, serverPid: serverPids.get(url),
    ...(perfRecord ? { perfDir: PERF_DIR } : {}), ...overrides,
  });
}

/** `scenario` driven against a server of its own (`node <args>`, ready when it prints its URL), stopped after. */
async function driveOwnServer(args, scenario, params, { profileLabel } = {}) {
  const execArgv = [...PERF_FLAGS, ...(cpuProf && profileLabel ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${profileLabel}-${Date.now()}.cpuprofile`] : [])];
  const { child, match } = await startNode(args, { ready: /listening on (http:\/\/\S+)/, execArgv });
  serverPids.set(match[1], child.pid);
  try {
    return await drive(scenario, match[1], params);
  } finally {
    await stopChild(child);
  }
}

const measureCeiling = () => driveOwnServer([lib('ceiling.mjs')], 'ceiling');

/**
 * `scenario` driven against the route floor (lib/route-floor.mjs: bare Fastify, the key's hash, one
 * primary-key read with the raw driver) on the engine's database `db`, started for this run only.
 */
const routeFloor = (scenario, db, params) => driveOwnServer([lib('route-floor.mjs'), JSON.stringify(db)], scenario, params, { profileLabel: `floor-${db.engine}-${scenario}` });

// — Live Inbox —

async function liveInbox(url, owner, floorDb, dataDir) {
  const results = {};
  for (const size of LIVE_SIZES) {
    const { body: { session } } = await request(url, 'POST', '/sessions', {
      key: owner, expect: 201, body: { project_id: 'proj_main', title: `Live Inbox bench, queue of ${size}` },
    });
    const base = `/v1/awaken/sessions/${session.id}/live-inbox`;
    const started = await request(url, 'POST', `/v1/sessions/${session.id}/events`, {
      key: owner, body: { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Summarise the repository.' }] }] },
    });
    if (started.status >= 300) throw new Error(`starting a Run: HTTP ${started.status} ${JSON.stringify(started.body)}`);
    for (let i = 0; ; i++) {
      const { body } = await request(url, 'GET', base, { key: owner, expect: 200 });
      if (body.active) break;
      if (i > 100) throw new Error('the Run never became active');
      await sleep(50);
    }
    for (let i = 0; i < size; i++) {
      await request(url, 'POST', base, { key: owner, expect: 200, body: { content: [{ type: 'text', text: `Queued note ${i}: mind the edge cases.` }] } });
    }
    const ids = async () => (await request(url, 'GET', base, { key: owner, expect: 200 })).body.messages.map((m) => m.id);
    const params = { session: session.id, key: owner };
    const entry = {};
    if (wants('live-replace')) {
      log(`live inbox, queue of ${size}: replace`);
      entry.replace = await drive('live-replace', url, { ...params, ids: await ids() });
    }
    if (wants('live-reorder')) {
      log(`live inbox, queue of ${size}: reorder`);
      entry.reorder = await drive('live-reorder', url, { ...params, ids: await ids() });
    }
    if (wants('live-get')) {
      log(`live inbox, queue of ${size}: GET`);
      entry.get = await drive('live-get', url, params);
      if (floorDb) {
        // The floor answers the snapshot the route answers now (the queue is what the runs above left).
        const snapshots = join(dataDir, `live-snapshot-${size}.json`);
        writeFileSync(snapshots, JSON.stringify({ [session.id]: (await request(url, 'GET', base, { key: owner, expect: 200 })).text }));
        log(`live inbox, queue of ${size}: GET on the route floor`);
        entry.get_floor = await routeFloor('live-get', { ...floorDb, snapshots }, params);
      }
    }
    if (wants('live-queue')) {
      log(`live inbox, queue of ${size}: queue (+ withdraw)`);
      entry.queue = await drive('live-queue', url, params);
      if (floorDb) {
        log(`live inbox, queue of ${size}: queue (+ withdraw) on the route floor`);
        entry.queue_floor = await routeFloor('live-queue', floorDb, params);
      }
    }
    entry.size_after = (await ids()).length;
    results[size] = entry;
  }
  return results;
}

// — fairness —

/** Connections of the victim (another key's gets) and of the attacker (one key's big bodies) in the fairness run. */
const FAIRNESS = { victim: 4, attacker: 32 };

/**
 * One caller at its budget never slows another's (issue 26): the owner's gets (4 connections)
 * alone, then again while the deriver's key floods the server with ~1 MB bodies from another
 * process (32 connections: each body read and parsed, then refused 413, or 429 past the key's
 * bodies in flight). The figure is the victim's p99 under the flood over its quiet p99 (target ≤ 3).
 */
async function fairness(url, { owner, deriver, getIds }) {
  const victim = { project: 'proj_main', key: owner, ids: getIds };
  const quiet = await drive('get', url, victim, { connections: FAIRNESS.victim });
  // The attacker runs a little longer than the victim's warm-up + run, so the whole measurement is under flood.
  const attack = drive('flood-bodies', url, { project: 'proj_main', key: deriver }, { connections: FAIRNESS.attacker, warmup: 1, duration: config.warmup + config.duration + 1 });
  await sleep(1000);
  const flooded = await drive('get', url, victim, { connections: FAIRNESS.victim });
  const attacker = await attack;
  const p99 = (r) => r.kinds.get.latency_ms.p99;
  return {
    quiet, flooded, attacker: { requests_per_s: attacker.requests_per_s, non_2xx: attacker.non_2xx, statuses: attacker.statuses, errors: attacker.errors },
    p99_ratio: p99(flooded) / p99(quiet), connections: FAIRNESS,
  };
}

// — 10,000 streams —

/**
 * The fan-out run at `config.manySubscribers` streams (issue 33 item 4) on a fresh server of its
 * own on the engine's database (so its RSS delta is the streams'), with the socket caps raised past
 * the streams (the demo caps open sockets at 10,000 and a quarter of that per address by default;
 * every stream here comes from 127.0.0.1). Server and driver each need a file descriptor per
 * stream: both start with `ulimit -n` raised to the hard limit when the soft one is too low; a hard
 * limit below the need skips the run with the reason in `skipped`.
 */
async function manyStreams(engine, { dataDir, databaseUrl, file, decideProject, owner }) {
  const subscribers = config.manySubscribers;
  const need = subscribers + 1024;
  const limits = fdLimits();
  if (limits && limits.hard < need) return { subscribers, skipped: `the file-descriptor hard limit (${limits.hard}) is below ${need}` };
  const fdLimit = limits && limits.soft < need ? need : undefined;
  const sockets = String(subscribers + 100);
  const server = await startDemo({
    dataDir, databaseUrl, label: `${engine}-streams`, fdLimit, env: { MAX_CONNECTIONS: sockets, MAX_CONNECTIONS_PER_ADDRESS: sockets },
  });
  let result;
  try {
    const after = engine === 'postgres' ? await postgresEventSequence(databaseUrl, decideProject) : sqliteEventSequence(file, decideProject);
    result = await runChild(lib('streams.mjs'), {
      url: server.url, project: decideProject, key: owner, after, subscribers, events: config.manyEvents, serverPid: server.pid,
    }, { fdLimit });
  } finally {
    closeRequests();
    await stopChild(server.child);
  }
  // Right after, the same driver on the stream floor (lib/stream-floor.mjs): what Node's HTTP server
  // and the kernel cost a stream and an event whatever serves them.
  log(`${engine}: events stream, ${subscribers.toLocaleString('en')} subscribers on the stream floor`);
  const floor = await startNode([lib('stream-floor.mjs'), JSON.stringify({ keys: { acc_owner: owner } })], {
    execArgv: [...DEMO_NODE_FLAGS, ...PERF_FLAGS, ...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=floor-${engine}-streams-${Date.now()}.cpuprofile`] : [])],
    ready: /stream floor listening on (http:\/\/\S+)/, fdLimit,
  });
  try {
    result.floor = await runChild(lib('streams.mjs'), {
      url: floor.match[1], project: decideProject, key: owner, after: 0, subscribers, events: config.manyEvents, serverPid: floor.child.pid,
    }, { fdLimit });
  } finally {
    closeRequests();
    await stopChild(floor.child);
  }
  return result;
}

// — page floor, steering, logging —

/**
 * The page floor of the list run just made: the same page read by the store's own SQL in raw
 * better-sqlite3 plus `JSON.stringify` of the exact body the server answered (lib/page-floor.mjs).
 */
async function pageFloor(url, floorDb, owner) {
  const { text } = await request(url, 'GET', `/projects/proj_main/inbox?limit=${LIST_LIMIT}`, { key: owner, expect: 200 });
  const floor = await runChild(lib('page-floor.mjs'), {
    engine: floorDb.engine, file: floorDb.file, url: floorDb.url, project: 'proj_main', limit: LIST_LIMIT, body: text, duration: config.duration, warmup: config.warmup,
  });
  // The floor's body: the route's answer as JSON.stringify writes it (the same value).
  return { ...floor, body: floor.body ?? text };
}

/**
 * The list's route floor (lib/route-floor.mjs over HTTP: the page floor's statement read raw and
 * the same body stringified, behind bare Fastify), right after its page floor: says how much of
 * the page floor any HTTP answer of the page keeps.
 */
async function listRouteFloor(floorDb, pageFloorResult, dataDir, owner) {
  const body = join(dataDir, 'list-body.json');
  writeFileSync(body, pageFloorResult.body);
  return routeFloor('list', { ...floorDb, list: { sql: pageFloorResult.sql, parameters: pageFloorResult.parameters, body } },
    { project: 'proj_main', key: owner, limit: LIST_LIMIT });
}

/**
 * Steering latency (lib/steering.mjs) on its own demo server (SQLite, fresh data directory) whose
 * scripted model takes 10 ms steps, enough of them to outlast the run.
 */
async function steeringLatency() {
  const dataDir = mkdtempSync(join(os.tmpdir(), 'inbox-kit-bench-steering-'));
  const total = config.warmup + config.steeringSeconds;
  const steps = Math.ceil(((total + 60) * 1000) / STEERING_STEP_MS);
  let server;
  try {
    server = await startDemo({ dataDir, label: 'steering', env: { DEMO_MODEL_STEP_MS: String(STEERING_STEP_MS), DEMO_MODEL_STEPS: String(steps) } });
    const owner = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')).acc_owner;
    const { url } = server;
    const { body: { session } } = await request(url, 'POST', '/sessions', { key: owner, expect: 201, body: { project_id: 'proj_main', title: 'Steering latency' } });
    await request(url, 'POST', `/v1/sessions/${session.id}/events`, {
      key: owner, expect: 200, body: { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Work through the backlog.' }] }] },
    });
    for (let i = 0; ; i++) {
      if ((await request(url, 'GET', `/v1/awaken/sessions/${session.id}/live-inbox`, { key: owner, expect: 200 })).body.active) break;
      if (i > 100) throw new Error('steering: the Run never became active');
      await sleep(20);
    }
    const cpuBefore = cpuTimeUsOf(server.pid);
    const result = await runChild(lib('steering.mjs'), { url, session: session.id, key: owner, duration: config.steeringSeconds, warmup: config.warmup });
    // The server's CPU per model step of the run (its commit with the drained input, the stream's
    // deliveries, the client's POSTs): what the steering loop costs, whatever else the machine runs.
    const cpuUs = cpuTimeUsOf(server.pid) - cpuBefore;
    return { ...result, step_ms: STEERING_STEP_MS, model_steps: steps, srv_us_per_step: result.steps_seen > 0 ? Math.round(cpuUs / result.steps_seen) : null };
  } finally {
    closeRequests();
    if (server) await stopChild(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Create and get again on a server logging as deployed: `LOG_LEVEL=info`, stdout straight to a
 * file. Also the bytes logged per request.
 */
async function loggedRuns(engine, { dataDir, databaseUrl, owner, deriver, getIds }) {
  const logFile = join(dataDir, 'server.log');
  const server = await startDemo({ dataDir, databaseUrl, label: `${engine}-logged`, env: { LOG_LEVEL: 'info' }, logFile });
  try {
    const before = statSync(logFile).size;
    log(`${engine}: get, LOG_LEVEL=info to a file`);
    const get = await drive('get', server.url, { project: 'proj_main', key: owner, ids: getIds });
    log(`${engine}: create, LOG_LEVEL=info to a file`);
    const create = await drive('create', server.url, { project: 'proj_main', key: deriver });
    await sleep(500);
    const bytes = statSync(logFile).size - before;
    const lines = readFileSync(logFile, 'utf8').split('\n').filter((l) => l.includes('"msg":"request"'));
    const requests = lines.length;
    return { get, create, log_bytes: bytes, log_request_lines: requests, bytes_per_request: requests ? Math.round(bytes / requests) : null, sample_line: lines[0] ?? null };
  } finally {
    closeRequests();
    await stopChild(server.child);
  }
}

// — one engine —

/**
 * One engine's suite. `adapter` is the demo's HTTP_ADAPTER of the measured server (the seeding
 * start is always the default one); on `hono`, the runs that measure storage rather than HTTP
 * (the page floor, the scale run, the logged runs) are left to the Fastify suite.
 */
async function engineSuite(engine, pgServer, adapter = 'fastify') {
  const name = adapter === 'fastify' ? engine : `${engine}/${adapter}`;
  const main = adapter === 'fastify';
  const dataDir = mkdtempSync(join(os.tmpdir(), `inbox-kit-bench-${engine}-`));
  const databaseUrl = engine === 'postgres' ? pgServer.url : undefined;
  const file = join(dataDir, 'inbox-kit.sqlite');
  const label = main ? engine : `${engine}-${adapter}`;
  const out = { engine, adapter };
  let server;
  try {
    log(`${name}: first start (migrate + seed)`);
    server = await startDemo({ dataDir, databaseUrl, label: `${label}-seed` });
    const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8'));
    // The server chooses project ids: the decide targets' project is whatever id it gave.
    const decideProject = (await request(server.url, 'POST', '/projects', { key: credentials.acc_owner, expect: 201, body: { name: 'Decide targets' } })).body.project.id;
    closeRequests();
    await stopChild(server.child);
    server = undefined;

    // Rows older than anything the server writes: created 10 ms apart, ending a day ago.
    const end = Date.now() - 86_400_000;
    const listBase = end - config.listRows * 10;
    log(`${name}: bulk insert ${config.listRows.toLocaleString('en')} items (proj_main) + ${config.decideRows.toLocaleString('en')} decide targets`);
    const seed = engine === 'postgres' ? (opts) => seedPostgresItems(databaseUrl, opts) : async (opts) => seedSqliteItems(file, opts);
    await seed({ project: 'proj_main', tag: 'm', to: config.listRows, base: listBase, session: 'sess_001' });
    await seed({ project: decideProject, tag: 'd', to: config.decideRows, base: listBase, pendingOnly: true });

    if (engine === 'postgres') {
      log('postgres: storage limit (raw pg, 10 clients)');
      out.storage_limit = await runChild(lib('storage-limit.mjs'), { engine, url: databaseUrl, duration: config.limitSeconds, warmup: 1, connections: 10 });
    }

    server = await startDemo({ dataDir, databaseUrl, label, env: { HTTP_ADAPTER: adapter } });
    const { url } = server;
    const owner = credentials.acc_owner;
    const deriver = credentials.acc_deriver;
    /** The route floor's database: the server's own (lib/route-floor.mjs). */
    const keys = { acc_owner: owner, acc_deriver: deriver };
    const floorDb = engine === 'postgres'
      ? { engine, url: databaseUrl, keys }
      : { engine, file, keys, journal_mode: limitStart.journal_mode, synchronous: limitStart.synchronous };
    out.rss_start_bytes = rssOf(server.pid);

    // First, on the fresh server (so the RSS delta is the streams', not the heap growth of earlier
    // load): streams on the decide targets' project, whose new items stay out of the list and decide runs.
    if (wants('fanout')) {
      log(`${name}: events stream, ${config.subscribers} subscribers`);
      const after = engine === 'postgres' ? await postgresEventSequence(databaseUrl, decideProject) : sqliteEventSequence(file, decideProject);
      out.events = await runChild(lib('streams.mjs'), {
        url, project: decideProject, key: owner, after, subscribers: config.subscribers, events: config.events, serverPid: server.pid,
      });
    }

    if (wants('list')) {
      log(`${name}: list (limit 50, ${config.listRows.toLocaleString('en')} items)`);
      out.list = await drive('list', url, { project: 'proj_main', key: owner, limit: LIST_LIMIT });
      if (main) {
        log(`${name}: page floor (${config.listRows.toLocaleString('en')} items)`);
        out.page_floor = await pageFloor(url, floorDb, owner);
        log(`${name}: list on the route floor (${config.listRows.toLocaleString('en')} items)`);
        out.list_floor = await listRouteFloor(floorDb, out.page_floor, dataDir, owner);
        delete out.page_floor.body;
      }
    }
    const getIds = Array.from({ length: 2000 }, (_, i) => seededId('m', Math.floor((i * config.listRows) / 2000)));
    if (wants('get')) {
      log(`${name}: get`);
      out.get = await drive('get', url, { project: 'proj_main', key: owner, ids: getIds });
      if (main) {
        log(`${name}: get on the route floor`);
        out.get_floor = await routeFloor('get', floorDb, { project: 'proj_main', key: owner, ids: getIds });
      }
    }
    if (wants('decide')) {
      // The route decides the first half of the pending targets, its floor the second half.
      const half = Math.floor(config.decideRows / 2);
      log(`${name}: decide`);
      out.decide = await drive('decide', url, { project: decideProject, key: owner, ids: Array.from({ length: half }, (_, i) => seededId('d', i)) });
      if (main) {
        log(`${name}: decide on the route floor`);
        out.decide_floor = await routeFloor('decide', floorDb, { project: decideProject, key: owner, ids: Array.from({ length: half }, (_, i) => seededId('d', half + i)) });
      }
    }
    if (wants('create')) {
      log(`${name}: create`);
      out.create = await drive('create', url, { project: 'proj_main', key: deriver });
      if (main) {
        log(`${name}: create on the route floor`);
        out.create_floor = await routeFloor('create', floorDb, { project: 'proj_main', key: deriver });
      }
    }

    if (wants('live-get') || wants('live-queue') || wants('live-replace') || wants('live-reorder')) out.live_inbox = await liveInbox(url, owner, main ? floorDb : undefined, dataDir);

    if (wants('fairness')) {
      log(`${name}: fairness: another key's get, quiet, then during a one-key flood of 1 MB bodies`);
      out.fairness = await fairness(url, { owner, deriver, getIds });
    }

    // Scale: fill proj_main up to scaleRows with older items, the server idle but running.
    if (wants('scale') && main) {
    const count = engine === 'postgres' ? await countPostgresItems(databaseUrl, 'proj_main') : countSqliteItems(file, 'proj_main');
    const extra = Math.max(0, config.scaleRows - count);
    log(`${name}: bulk insert ${extra.toLocaleString('en')} more items (proj_main → ${config.scaleRows.toLocaleString('en')})`);
    const seedStarted = Date.now();
    await seed({ project: 'proj_main', tag: 'n', to: extra, base: listBase - extra * 10, session: 'sess_001' });
    out.scale_seed_s = Math.round((Date.now() - seedStarted) / 100) / 10;
    out.scale_rows = count + extra;
    log(`${name}: list (limit 50, ${out.scale_rows.toLocaleString('en')} items)`);
    out.list_scale = await drive('list', url, { project: 'proj_main', key: owner, limit: LIST_LIMIT });
    log(`${name}: page floor (${out.scale_rows.toLocaleString('en')} items)`);
    out.page_floor_scale = await pageFloor(url, floorDb, owner);
    log(`${name}: list on the route floor (${out.scale_rows.toLocaleString('en')} items)`);
    out.list_floor_scale = await listRouteFloor(floorDb, out.page_floor_scale, dataDir, owner);
    delete out.page_floor_scale.body;
    }

    await sleep(2000);
    out.rss_end_bytes = rssOf(server.pid);
    out.rss_end_parts = rssPartsOf(server.pid);
    closeRequests();
    await stopChild(server.child);
    server = undefined;
    if (wants('fanout-10k') && main) {
      log(`${name}: events stream, ${config.manySubscribers.toLocaleString('en')} subscribers (a fresh server)`);
      out.events_many = await manyStreams(engine, { dataDir, databaseUrl, file, decideProject, owner });
    }
    if (wants('logged') && main) out.logged = await loggedRuns(engine, { dataDir, databaseUrl, owner, deriver, getIds });
    return out;
  } finally {
    closeRequests();
    if (server) await stopChild(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// — report —

const int = (n) => (n === null || n === undefined || Number.isNaN(n) ? '–' : Math.round(n).toLocaleString('en'));
const ms = (n) => (n === null || n === undefined ? '–' : n.toFixed(3));
const ratio = (n) => (n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(2));
const mib = (bytes) => (bytes === null || bytes === undefined ? '–' : `${(bytes / 1_048_576).toFixed(1)} MiB`);
const kib = (bytes) => (bytes === null || bytes === undefined ? '–' : `${(bytes / 1024).toFixed(1)} KiB`);

function table(rows, headers) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function report(results) {
  const ceiling = results.references.ceiling.requests_per_s;
  const sqliteLimit = results.references.storage_limit.sqlite.transactions_per_s;
  const rows = [];
  /** A table row; `cpu`: the server's CPU µs per request of the run (driver's figure), after p99. */
  const push = (cells, cpu = '') => rows.push([...cells.slice(0, 5), cpu, ...cells.slice(5)]);
  const cpuOf = (r) => (r?.server_cpu_us_per_request == null ? '–' : int(r.server_cpu_us_per_request));
  const targets = [];
  /**
   * Registers a target (every target of the issue, whether or not this run measured it) and returns
   * its table cell. `floor`: the route floor's own figure against the same reference; when the floor
   * itself misses the limit, the target is impossible on this machine and is reported as
   * `floor-bound` with the floor's figure (the route's figure is kept beside it).
   */
  const target = (name, value, limit, op = '>=', floor) => {
    const measured = value !== null && value !== undefined && Number.isFinite(value);
    const meets = (v) => (op === '>=' ? v >= limit : v <= limit);
    const bound = measured && !meets(value) && floor !== undefined && Number.isFinite(floor) && !meets(floor);
    const met = !measured ? null : meets(value);
    const round = (v) => (Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null);
    targets.push({ target: name, value: measured ? round(value) : null, limit, op, met, ...(floor !== undefined ? { floor: round(floor), floor_bound: bound } : {}) });
    if (!measured) return '–';
    if (bound) return `floor-bound (floor ${ratio(floor)})`;
    return met ? 'met' : 'MISSED';
  };
  const mark = target;

  for (const engine of ['sqlite', 'postgres']) {
    const e = results[engine] ?? {};
    const limit = engine === 'sqlite' ? sqliteLimit : e.storage_limit?.transactions_per_s;
    const tag = engine === 'sqlite' ? '' : ' (pg)';
    const errorsOf = (r) => r.non_2xx + r.errors + (r.timeouts ?? 0);
    const row = (name, r, storage, t, note = '') => {
      if (!r) return;
      const k = Object.values(r.kinds)[0];
      const errors = errorsOf(r);
      push([`${name}`, engine, int(r.requests_per_s), ms(k.latency_ms.p50), ms(k.latency_ms.p99), ratio(r.requests_per_s / ceiling),
        storage ? ratio(r.requests_per_s / limit) : '', t ?? '', [note, errors ? `${errors} non-2xx/err` : ''].filter(Boolean).join('; ')], cpuOf(r));
    };
    /** The route floor's run of a route (lib/route-floor.mjs), and the route as a share of it. */
    const floorRow = (name, f, route, kind, storage = false) => {
      if (!f || !route) return;
      const k = f.kinds[kind ?? Object.keys(f.kinds)[0]];
      push([name, engine, int(f.requests_per_s), ms(k.latency_ms.p50), ms(k.latency_ms.p99), ratio(f.requests_per_s / ceiling), storage ? ratio(f.requests_per_s / limit) : '', '',
        `route = ${ratio(route.requests_per_s / f.requests_per_s)} × floor${errorsOf(f) ? `; ${errorsOf(f)} non-2xx/err` : ''}`], cpuOf(f));
    };
    const share = (route, floor) => (route && floor ? route.requests_per_s / floor.requests_per_s : undefined);
    const writeTarget = engine === 'sqlite' ? 0.8 : 0.7;
    const limitName = engine === 'sqlite' ? `SQLite storage limit (synchronous=${results.references.storage_limit.sqlite.synchronous ?? '?'}, group commit)` : 'PostgreSQL storage limit';
    for (const op of ['create', 'decide']) {
      const cell = mark(`${op} ≥ ${writeTarget} × ${limitName}${tag}`, e[op] && limit ? e[op].requests_per_s / limit : undefined, writeTarget, '>=',
        e[`${op}_floor`] && limit ? e[`${op}_floor`].requests_per_s / limit : undefined);
      row(op, e[op], true, cell);
      floorRow(`${op}: route floor`, e[`${op}_floor`], e[op], undefined, true);
    }

    const pageFloorRow = (rowsCount, route, f) => {
      if (!f) return;
      push([`list (50 of ${int(rowsCount)}): page floor`, engine, int(f.pages_per_s), '', '', ratio(f.pages_per_s / ceiling), '', '',
        `route = ${route ? ratio(route.requests_per_s / f.pages_per_s) : '–'} × floor; pages/s${f.read_us != null ? `, read ${f.read_us} µs + stringify ${f.stringify_us} µs` : `, ${f.connections} clients`}`]);
    };
    const listShare = (route, f) => (route && f ? route.requests_per_s / f.pages_per_s : undefined);
    row(`list (50 of ${int(config.listRows)})`, e.list, false, mark(`list ≥ 0.6 × page floor (${int(config.listRows)} items)${tag}`, listShare(e.list, e.page_floor), 0.6, '>=',
      listShare(e.list_floor, e.page_floor)));
    pageFloorRow(config.listRows, e.list, e.page_floor);
    floorRow(`list (50 of ${int(config.listRows)}): route floor (HTTP)`, e.list_floor, e.list);
    const scaleRows = e.scale_rows ?? config.scaleRows;
    const p99 = (r) => r.kinds.list.latency_ms.p99;
    row(`list (50 of ${int(scaleRows)})`, e.list_scale, false,
      mark(`list ≥ 0.6 × page floor (${int(scaleRows)} items)${tag}`, listShare(e.list_scale, e.page_floor_scale), 0.6, '>=', listShare(e.list_floor_scale, e.page_floor_scale)),
      e.list_scale && e.list ? `p99 ${ratio(p99(e.list_scale) / p99(e.list))} × at ${int(config.listRows)}` : '');
    pageFloorRow(scaleRows, e.list_scale, e.page_floor_scale);
    floorRow(`list (50 of ${int(scaleRows)}): route floor (HTTP)`, e.list_floor_scale, e.list_scale);
    const scaleP99 = mark(`list p99 at ${int(scaleRows)} ≤ 1.5 × at ${int(config.listRows)}${tag}`, e.list_scale && e.list ? p99(e.list_scale) / p99(e.list) : undefined, 1.5, '<=');
    if (e.list_scale) push([`list p99, ${int(scaleRows)} ÷ ${int(config.listRows)} items`, engine, '', '', '', '', '', scaleP99, '']);

    row('get', e.get, false, mark(`get ≥ 0.7 × route floor${tag}`, share(e.get, e.get_floor), 0.7));
    floorRow('get: route floor', e.get_floor, e.get);

    for (const size of LIVE_SIZES) {
      const entry = e.live_inbox?.[size] ?? {};
      const liveRow = (name, r, kind, t) => {
        if (!r) return;
        const k = r.kinds[kind];
        push([name, engine, int(r.requests_per_s), ms(k.latency_ms.p50), ms(k.latency_ms.p99), ratio(r.requests_per_s / ceiling), '', t ?? '',
          errorsOf(r) ? `${errorsOf(r)} non-2xx/err` : ''], cpuOf(r));
      };
      liveRow(`live GET, ${size} msgs`, entry.get, 'get', mark(`Live Inbox GET ≥ 0.7 × route floor (queue of ${size})${tag}`, share(entry.get, entry.get_floor), 0.7));
      floorRow(`live GET, ${size} msgs: route floor`, entry.get_floor, entry.get);
      liveRow(`live queue (+withdraw), ${size} msgs`, entry.queue, 'queue', mark(`Live Inbox queue ≥ 0.6 × route floor (queue of ${size})${tag}`, share(entry.queue, entry.queue_floor), 0.6));
      floorRow(`live queue, ${size} msgs: route floor`, entry.queue_floor, entry.queue, 'queue');
      for (const op of ['replace', 'reorder']) liveRow(`live ${op}, ${size} msgs`, entry[op], op);
    }

    if (e.logged) {
      for (const op of ['create', 'get']) {
        const r = e.logged[op];
        row(`${op}, LOG_LEVEL=info to a file`, r, op === 'create', '', `${e[op] ? `${ratio(r.requests_per_s / e[op].requests_per_s)} × silent` : 'silent not run'}; ${int(e.logged.bytes_per_request)} B/request logged`);
      }
    }
    if (e.fairness) {
      const f = e.fairness;
      const k = (r) => r.kinds.get;
      push([`get, another key, quiet (${f.connections.victim} conns)`, engine, int(f.quiet.requests_per_s), ms(k(f.quiet).latency_ms.p50), ms(k(f.quiet).latency_ms.p99), '', '', '', ''], cpuOf(f.quiet));
    }
    const fairnessCell = mark(`another key's p99 during a one-key flood ≤ 3 × quiet${tag}`, e.fairness?.p99_ratio, 3, '<=');
    if (e.fairness) {
      const f = e.fairness;
      const k = (r) => r.kinds.get;
      push([`get, another key, one-key flood`, engine, int(f.flooded.requests_per_s), ms(k(f.flooded).latency_ms.p50), ms(k(f.flooded).latency_ms.p99), '', '',
        fairnessCell,
        `${ratio(f.p99_ratio)} × quiet p99; flood: ${f.connections.attacker} conns of 1 MB bodies, ${Object.entries(f.attacker.statuses).map(([c, n]) => `${int(n)} × ${c}`).join(', ')}${f.flooded.non_2xx + f.flooded.errors ? `; victim ${f.flooded.non_2xx + f.flooded.errors} non-2xx/err` : ''}`]);
    }
    if (engine === 'sqlite') {
      const st = e.steering;
      const cell = mark('steering latency p99 ≤ 15 ms (10 ms model steps)', st?.latency_ms.p99, 15, '<=');
      if (st) push(['steering: 200 → in the ledger', engine, '', ms(st.latency_ms.p50), ms(st.latency_ms.p99), '', '', cell, `${st.messages} messages, ${st.step_ms} ms steps${st.srv_us_per_step ? `, srv ${int(st.srv_us_per_step)} µs/step` : ''}${st.parts_ms ? `; p50/p99 to the boundary ${ms(st.parts_ms.to_boundary.p50)}/${ms(st.parts_ms.to_boundary.p99)}, commit → frame ${ms(st.parts_ms.to_frame.p50)}/${ms(st.parts_ms.to_frame.p99)}, step cycle ${ms(st.parts_ms.step_cycle.p50)}/${ms(st.parts_ms.step_cycle.p99)}` : ''}`]);
    } else {
      const d = e.listener?.detect_ms;
      const cell = mark('listener time-to-detect ≤ 10 s (default checks: 5 s + 3 s)', d ? d.max / 1000 : undefined, 10, '<=');
      if (d) push(['listener time-to-detect (SIGSTOP)', engine, '', ms(d.p50), ms(d.max), '', '', cell, `${e.listener.reps} freezes; p99 column = max`]);
      const t = e.takeover;
      const takeCell = mark('takeover ≤ lease + check (20 s, defaults)', t ? t.ended_ms.max / 1000 : undefined, 20, '<=');
      if (t) {
        push(['takeover: kill -9 → Run ended', engine, '', ms(t.ended_ms.p50), ms(t.ended_ms.max), '', '', takeCell, `${t.reps} kills; p99 column = max`]);
        push(['takeover: kill -9 → input runs again', engine, '', ms(t.usable_ms.p50), ms(t.usable_ms.max), '', '', '', 'the follow-up Run of the waiting input']);
      }
    }
    const ev = e.events;
    /** The server's CPU time per create and its fan-out (streams.mjs), for A/B runs on a shared machine. */
    const cpuPerEvent = (r) => (r.server_cpu_ms_per_event == null ? '' : `; server CPU ${r.server_cpu_ms_per_event} ms an event`);
    const fanCell = mark(`fan-out p99 ≤ 100 ms (${int(config.subscribers)} streams)${tag}`, ev?.fanout_last_ms.p99, 100, '<=');
    if (ev) {
      push([`fan-out to ${int(ev.subscribers)} streams (last)`, engine, '', ms(ev.fanout_last_ms.p50), ms(ev.fanout_last_ms.p99), '', '', fanCell, `${ev.events} events${cpuPerEvent(ev)}${ev.shed ? `; ${ev.shed} creates shed (503), sent again` : ''}`]);
      push([`memory per idle stream (${int(ev.subscribers)} streams)`, engine, '', '', '', '', '', '', kib(ev.bytes_per_stream)]);
    }
    const many = e.events_many;
    const measuredMany = many && !many.skipped ? many : undefined;
    const streamFloor = measuredMany?.floor;
    const manyFan = mark(`fan-out p99 ≤ 250 ms (${int(config.manySubscribers)} streams)${tag}`, measuredMany?.fanout_last_ms.p99, 250, '<=', streamFloor?.fanout_last_ms.p99);
    const manyMem = mark(`≤ 10 KiB per stream (${int(config.manySubscribers)} streams)${tag}`, measuredMany ? measuredMany.bytes_per_stream / 1024 : undefined, 10, '<=',
      streamFloor?.bytes_per_stream == null ? undefined : streamFloor.bytes_per_stream / 1024);
    if (measuredMany) {
      push([`fan-out to ${int(many.subscribers)} streams (last)`, engine, '', ms(many.fanout_last_ms.p50), ms(many.fanout_last_ms.p99), '', '', manyFan,
        `${many.events} events${cpuPerEvent(many)}; a fresh server; ${int(many.open_ms)} ms to open them${many.shed ? `; ${many.shed} creates shed (503), sent again` : ''}`]);
      if (streamFloor) {
        push([`fan-out to ${int(many.subscribers)} streams: stream floor`, engine, '', ms(streamFloor.fanout_last_ms.p50), ms(streamFloor.fanout_last_ms.p99), '', '', '',
          `p99 route = ${ratio(many.fanout_last_ms.p99 / streamFloor.fanout_last_ms.p99)} × floor${cpuPerEvent(streamFloor)}; bare node:http`]);
      }
      push([`memory per idle stream (${int(many.subscribers)} streams)`, engine, '', '', '', '', '', manyMem, kib(many.bytes_per_stream)]);
      if (streamFloor) {
        push([`memory per idle stream (${int(many.subscribers)} streams): stream floor`, engine, '', '', '', '', '', '',
          `${kib(streamFloor.bytes_per_stream)}; route = ${ratio(many.bytes_per_stream / streamFloor.bytes_per_stream)} × floor`]);
      }
    } else if (many?.skipped) {
      push([`fan-out to ${int(many.subscribers)} streams`, engine, '', '', '', '', '', '–', `not run: ${many.skipped}`]);
    }
    const rssLimit = engine === 'sqlite' ? 128 : 144;
    const rssCell = mark(`RSS ≤ ${rssLimit} MiB after the runs${tag}`, e.rss_end_bytes == null ? undefined : e.rss_end_bytes / 1_048_576, rssLimit, '<=');
    const parts = e.rss_end_parts;
    const partsNote = parts ? `; anonymous ${mib(parts.anon)}, file-backed ${mib(parts.file)}, shared ${mib(parts.shmem)}` : '';
    if (e.rss_end_bytes != null) push(['server RSS after the runs', engine, '', '', '', '', '', rssCell, `${mib(e.rss_end_bytes)}${partsNote}`]);
  }
  const refs = results.references;
  const header = [
    `inbox-kit bench${quick ? ' --quick' : ''} · ${results.meta.date} · node ${process.version} · ${os.cpus().length} CPUs · ${results.meta.commit} · demo: ${results.meta.demo} · load average ${results.meta.load_average.join(' / ')} at the start, ${results.meta.load_average_end.join(' / ')} at the end (1 / 5 / 15 min)`,
    `references: HTTP ceiling ${int(ceiling)} req/s (start ${int(refs.ceiling.start.requests_per_s)}, end ${int(refs.ceiling.end.requests_per_s)}; p50 ${ms(refs.ceiling.start.kinds.get.latency_ms.p50)} ms)`,
    `            SQLite storage limit ${int(sqliteLimit)} tx/s (start ${int(refs.storage_limit.sqlite.start.transactions_per_s)}, end ${int(refs.storage_limit.sqlite.end.transactions_per_s)}; 4 statements, journal_mode=${refs.storage_limit.sqlite.journal_mode}, synchronous=${refs.storage_limit.sqlite.synchronous}; p50 ${ms(refs.storage_limit.sqlite.start.latency_ms.p50)} ms)`,
    ...(results.sqlite?.page_floor ? [`            page floor ${int(results.sqlite.page_floor.pages_per_s)} pages/s at ${int(config.listRows)} items, ${int(results.sqlite.page_floor_scale?.pages_per_s)} at ${int(results.sqlite.scale_rows)} (read ${results.sqlite.page_floor.read_us} µs + JSON.stringify ${results.sqlite.page_floor.stringify_us} µs of ${int(results.sqlite.page_floor.body_bytes)} B; plan: ${results.sqlite.page_floor.plan})`] : []),
    ...(results.postgres?.page_floor ? [`            PostgreSQL page floor ${int(results.postgres.page_floor.pages_per_s)} pages/s at ${int(config.listRows)} items, ${int(results.postgres.page_floor_scale?.pages_per_s)} at ${int(results.postgres.scale_rows)} (${results.postgres.page_floor.connections} raw pg clients; plan: ${results.postgres.page_floor.plan})`] : []),
    results.postgres?.storage_limit
      ? `            PostgreSQL storage limit ${int(results.postgres.storage_limit.transactions_per_s)} tx/s (10 clients, fsync=${results.postgres.storage_limit.fsync}, synchronous_commit=${results.postgres.storage_limit.synchronous_commit}: the throw-away test server is not durable)`
      : `            PostgreSQL: ${results.meta.postgres}`,
    `each run: autocannon, ${CONNECTIONS} connections, ${config.warmup} s warm-up + ${config.duration} s; latency in ms; srv µs/req = server CPU time per 2xx answer; ×ceiling / ×storage = req/s ÷ reference`,
  ].join('\n');
  const text = [
    `${header}\n\n${table(rows, ['benchmark', 'engine', 'req/s', 'p50', 'p99', 'srv µs/req', '×ceiling', '×storage', 'target', 'note'])}`,
    ...(results.sqlite_hono ? [adapterTable(results.sqlite, results.sqlite_hono, ceiling)] : []),
  ].join('\n\n');
  return { text, targets };
}

/**
 * The HTTP adapters side by side on SQLite: the same runs against the demo on Fastify (the main
 * table) and on Hono (HTTP_ADAPTER=hono), same references.
 */
function adapterTable(fastify, hono, ceiling) {
  const rows = [];
  const pair = (name, a, b, kind) => {
    if (!a || !b) return;
    const stat = (r) => {
      const k = r.kinds[kind ?? Object.keys(r.kinds)[0]];
      return [int(r.requests_per_s), ms(k.latency_ms.p99), r.server_cpu_us_per_request == null ? '–' : int(r.server_cpu_us_per_request), ratio(r.requests_per_s / ceiling)];
    };
    rows.push([name, ...stat(a), ...stat(b), ratio(b.requests_per_s / a.requests_per_s)]);
  };
  pair('create', fastify.create, hono.create);
  pair(`list (50 of ${int(config.listRows)})`, fastify.list, hono.list);
  pair('get', fastify.get, hono.get);
  pair('decide', fastify.decide, hono.decide);
  for (const size of Object.keys(hono.live_inbox ?? {})) {
    for (const op of ['queue', 'replace', 'reorder']) pair(`live ${op}, ${size} msgs`, fastify.live_inbox?.[size]?.[op], hono.live_inbox[size][op], op);
  }
  if (fastify.events && hono.events) {
    rows.push([`fan-out to ${hono.events.subscribers} streams, p99 ms`, '', ms(fastify.events.fanout_last_ms.p99), '', '', '', ms(hono.events.fanout_last_ms.p99), '', '', '']);
    rows.push(['memory per idle stream', '', kib(fastify.events.bytes_per_stream), '', '', '', kib(hono.events.bytes_per_stream), '', '', '']);
  }
  rows.push(['server RSS after the runs', '', mib(fastify.rss_end_bytes), '', '', '', mib(hono.rss_end_bytes), '', '', '']);
  return `HTTP adapters, SQLite (the same runs; hono = the demo with HTTP_ADAPTER=hono, its own server and database):\n${table(rows,
    ['benchmark', 'fastify req/s', 'p99', 'srv µs/req', '×ceiling', 'hono req/s', 'p99', 'srv µs/req', '×ceiling', 'hono ÷ fastify'])}`;
}

// — main —

if (!existsSync(DEMO_MAIN)) {
  console.error(`bench: ${DEMO_MAIN} is missing; build first (pnpm bench runs install + build)`);
  process.exit(1);
}
mkdirSync(OUT_DIR, { recursive: true });
if (cpuProf) mkdirSync(PROFILE_DIR, { recursive: true });
if (perfRecord) mkdirSync(PERF_DIR, { recursive: true });

const git = (args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' }).stdout?.trim() ?? '';
const results = {
  meta: {
    date: new Date().toISOString(), mode: quick ? 'quick' : 'default', node: process.version, cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model, total_memory_bytes: os.totalmem(), load_average: os.loadavg().map((l) => Math.round(l * 100) / 100),
    commit: `${git(['rev-parse', '--short', 'HEAD'])}${git(['status', '--porcelain']) ? '+dirty' : ''}`,
    demo: demoRoot === root ? 'this checkout' : `${demoRoot} at ${spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: demoRoot, encoding: 'utf8' }).stdout?.trim()}`,
    config: { ...config, connections: CONNECTIONS, live_sizes: LIVE_SIZES }, demo_node_flags: DEMO_NODE_FLAGS, postgres: 'skipped (BENCH_PG=0)',
  },
  references: { ceiling: {}, storage_limit: {} },
};

log('HTTP ceiling (bare Fastify)');
results.references.ceiling.start = await measureCeiling();
const measureSqliteLimit = () => runChild(lib('storage-limit.mjs'), { engine: 'sqlite', duration: config.limitSeconds, warmup: 1 });
log('SQLite storage limit (raw better-sqlite3)');
const limitStart = await measureSqliteLimit();

results.sqlite = await engineSuite('sqlite');
if (wants('steering')) {
  log('sqlite: steering latency (scripted model, 10 ms steps)');
  results.sqlite.steering = await steeringLatency();
}
if (withHono) results.sqlite_hono = await engineSuite('sqlite', undefined, 'hono');

if (withPg) {
  const pgServer = await startPostgres().catch((error) => {
    results.meta.postgres = `skipped: the PostgreSQL server did not start (${String(error.message).split('\n')[0]})`;
    log(results.meta.postgres);
    return undefined;
  });
  if (pgServer === undefined) {
    // reported above
  } else if (!pgServer) {
    results.meta.postgres = 'skipped (no PostgreSQL binaries; set INBOX_KIT_PG_BIN)';
    log(results.meta.postgres);
  } else {
    try {
      results.meta.postgres = 'throw-away server from scripts/postgres.mjs (fsync=off, synchronous_commit=off, full_page_writes=off)';
      results.postgres = await engineSuite('postgres', pgServer);
      if (wants('listener')) {
        log('postgres: listener time-to-detect (SIGSTOP of its backend; default checks)');
        results.postgres.listener = await listenerTimeToDetect({ adminUrl: pgServer.url, startDemo, reps: config.listenerReps, log });
      }
      if (wants('takeover')) {
        log('postgres: takeover time (kill -9 of a Run\'s owner; default lease and check)');
        results.postgres.takeover = await takeoverTime({ adminUrl: pgServer.url, startDemo, reps: config.takeoverReps, log });
      }
    } finally {
      await pgServer.stop();
    }
  }
}

// With --only, the references are measured once (start = end): a quick A/B is what --only is for.
if (!only) log('SQLite storage limit again');
const limitEnd = only ? limitStart : await measureSqliteLimit();
results.references.storage_limit.sqlite = {
  ...limitStart,
  transactions_per_s: Math.round((limitStart.transactions_per_s + limitEnd.transactions_per_s) / 2),
  start: limitStart,
  end: limitEnd,
};

if (!only) log('HTTP ceiling again');
results.references.ceiling.end = only ? results.references.ceiling.start : await measureCeiling();
results.references.ceiling.requests_per_s = Math.round(
  (results.references.ceiling.start.requests_per_s + results.references.ceiling.end.requests_per_s) / 2,
);

results.meta.load_average_end = os.loadavg().map((l) => Math.round(l * 100) / 100);
const { text, targets } = report(results);
results.targets = targets;
results.total_s = Math.round((Date.now() - t0) / 1000);
const file = join(OUT_DIR, 'bench.json');
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\n${text}\n`);
console.log(`results: ${file} (${results.total_s} s)`);
if (cpuProf) console.log(`profiles: ${PROFILE_DIR}`);
if (perfRecord) console.log(`perf records: ${PERF_DIR} (perf report -i <file> --no-children --sort dso,sym)`);
const bound = targets.filter((t) => t.floor_bound);
const missed = targets.filter((t) => t.met === false && !t.floor_bound);
const notRun = targets.filter((t) => t.met === null);
const value = (t) => `${t.value}${t.op === '>=' ? ' < ' : ' > '}${t.limit}`;
console.log(`targets (${targets.length}): ${targets.filter((t) => t.met).length} met, ${missed.length} missed${missed.length ? ` (${missed.map((t) => `${t.target}: ${value(t)}`).join('; ')})` : ''}, `
  + `${bound.length} floor-bound${bound.length ? ` (${bound.map((t) => `${t.target}: the floor itself ${t.floor}, the route ${t.value}`).join('; ')})` : ''}, `
  + `${notRun.length} not run${notRun.length ? ` (${notRun.map((t) => t.target).join('; ')})` : ''}`);

