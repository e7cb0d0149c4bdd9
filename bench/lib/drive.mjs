/**
 * The load generator, run in its own process (forked by run.mjs): one autocannon run of a named
 * scenario against a server — a warm-up, then the measured run — and back to the parent:
 * requests/s of 2xx responses, non-2xx and error counts, and the latency of every 2xx response
 * per request kind, summarised at µs resolution (autocannon's own histogram keeps whole ms).
 *
 * Job: `{ scenario, url, connections, duration, warmup, params, serverPid?, perfDir? }` (durations in s).
 * With `serverPid`, also the server's CPU time (user + system) per 2xx response of the measured
 * run, in µs: what a request costs the server, whatever else the machine runs at the time; with
 * `perfDir` too, `perf record -g` of the server over the measured run, into
 * `<perfDir>/<scenario>-<pid>.data` (skipped, with a line on stderr, where `perf` cannot run).
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { childMain, cpuTimeUsOf, summarize } from './util.mjs';

const json = { 'content-type': 'application/json' };

/** A counter shared by every connection: `ids[i++ % n]`. */
function rotate(ids) {
  let i = 0;
  return () => ids[i++ % ids.length];
}

/** Scenario name → `{ kinds, requests }`: `kinds[i]` names request `i` of the per-connection cycle. */
const scenarios = {
  ceiling: () => ({ kinds: ['get'], requests: [{ method: 'GET', path: '/ping' }] }),

  create: ({ project, key }) => {
    let n = 0;
    return {
      kinds: ['create'],
      requests: [{
        method: 'POST', path: `/projects/${project}/inbox`, headers: { ...json, authorization: `Bearer ${key}` },
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({
            type: 'derived_output.review', title: `候选摘要待确认 #${n++}`,
            payload: { derived_output_id: `dout_${n}`, suggested_action: 'review' }, source_session_id: 'sess_001',
          }),
        }),
      }],
    };
  },

  list: ({ project, key, limit }) => ({
    kinds: ['list'],
    requests: [{ method: 'GET', path: `/projects/${project}/inbox?limit=${limit}`, headers: { authorization: `Bearer ${key}` } }],
  }),

  get: ({ project, key, ids }) => {
    const next = rotate(ids);
    return {
      kinds: ['get'],
      requests: [{
        method: 'GET', headers: { authorization: `Bearer ${key}` },
        setupRequest: (req) => ({ ...req, path: `/projects/${project}/inbox/${next()}` }),
      }],
    };
  },

  decide: ({ project, key, ids }) => {
    const next = rotate(ids);
    const body = JSON.stringify({ decision: 'accept', note: '已确认。' });
    return {
      kinds: ['decide'],
      requests: [{
        method: 'PATCH', headers: { ...json, authorization: `Bearer ${key}` }, body,
        setupRequest: (req) => ({ ...req, path: `/projects/${project}/inbox/${next()}` }),
      }],
    };
  },

  // The Live Inbox snapshot (GET): the queue as it is, read-only.
  'live-get': ({ session, key }) => ({
    kinds: ['get'],
    requests: [{ method: 'GET', path: `/v1/awaken/sessions/${session}/live-inbox`, headers: { authorization: `Bearer ${key}` } }],
  }),

  // Queue one message, then withdraw it, so the queue stays at its size (± one per connection).
  'live-queue': ({ session, key }) => {
    const base = `/v1/awaken/sessions/${session}/live-inbox`;
    const body = JSON.stringify({ content: [{ type: 'text', text: 'Also check the edge cases, please.' }] });
    return {
      kinds: ['queue', 'withdraw'],
      requests: [
        {
          method: 'POST', path: base, headers: { ...json, authorization: `Bearer ${key}` }, body,
          onResponse: (status, resBody, context) => {
            context.id = status === 200 ? JSON.parse(resBody).id : undefined;
          },
        },
        {
          method: 'DELETE', headers: { authorization: `Bearer ${key}` },
          setupRequest: (req, context) => (context.id === undefined ? null : { ...req, path: `${base}/${context.id}` }),
        },
      ],
    };
  },

  // One key's flood of big bodies (the fairness run's attacker): ~1 MB JSON creates, over the
  // inbox payload limit, so each is read and parsed before its 413 (or refused 429 past the
  // key's bodies in flight). Only the victim's latency is reported; these answers are non-2xx.
  'flood-bodies': ({ project, key }) => {
    const body = JSON.stringify({ type: 'flood', payload: { blob: 'x'.repeat(1_000_000) } });
    return {
      kinds: ['flood'],
      requests: [{ method: 'POST', path: `/projects/${project}/inbox`, headers: { ...json, authorization: `Bearer ${key}` }, body }],
    };
  },

  'live-replace': ({ session, key, ids }) => {
    const next = rotate(ids);
    const base = `/v1/awaken/sessions/${session}/live-inbox`;
    const body = JSON.stringify({ content: [{ type: 'text', text: 'Replaced: focus on the failing test first.' }] });
    return {
      kinds: ['replace'],
      requests: [{
        method: 'PUT', headers: { ...json, authorization: `Bearer ${key}` }, body,
        setupRequest: (req) => ({ ...req, path: `${base}/${next()}` }),
      }],
    };
  },

  // Every current id once, alternately reversed and in the original order.
  'live-reorder': ({ session, key, ids }) => {
    const bodies = [JSON.stringify({ order: [...ids].reverse() }), JSON.stringify({ order: ids })];
    const next = rotate(bodies);
    return {
      kinds: ['reorder'],
      requests: [{
        method: 'PUT', path: `/v1/awaken/sessions/${session}/live-inbox/order`, headers: { ...json, authorization: `Bearer ${key}` },
        setupRequest: (req) => ({ ...req, body: next() }),
      }],
    };
  },
};

/**
 * One autocannon run of a built scenario (the warm-up and the measured run share it, so
 * rotating ids go on where the warm-up stopped); collects per-kind latencies of 2xx responses.
 */
function fire({ kinds, requests }, { url, connections, duration }) {
  const latencies = kinds.map(() => []);
  const counts = kinds.map(() => 0);
  const statuses = {};
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const instance = autocannon({ url, connections, duration, requests, timeout: 30 }, (error, result) => {
      if (error) return reject(error);
      const elapsed = (performance.now() - started) / 1000;
      resolve({ result, elapsed, latencies, counts, statuses, kinds });
    });
    instance.on('response', (client, statusCode, _bytes, responseTime) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      if (statusCode < 200 || statusCode >= 300) return;
      const index = client.requestIterator.currentRequestIndex;
      latencies[index].push(responseTime);
      counts[index] += 1;
    });
  });
}

/** `perf record -g` (4,999 Hz) of process `pid` into `file` until `stop()`; never throws. */
function recordPerf(pid, file) {
  const perf = spawn('perf', ['record', '-F', '4999', '-g', '-p', String(pid), '-o', file], { stdio: 'ignore' });
  const exited = new Promise((resolve) => {
    perf.on('exit', resolve);
    perf.on('error', (error) => {
      console.error(`bench: perf record did not run (${error.message}); no ${file}`);
      resolve();
    });
  });
  return {
    async stop() {
      if (perf.exitCode === null && perf.pid !== undefined) perf.kill('SIGINT');
      await exited;
    },
  };
}

childMain(async (job) => {
  const scenario = scenarios[job.scenario](job.params);
  if (job.warmup > 0) await fire(scenario, { ...job, duration: job.warmup });
  const cpuBefore = job.serverPid ? cpuTimeUsOf(job.serverPid) : null;
  const recording = job.perfDir && job.serverPid ? recordPerf(job.serverPid, `${job.perfDir}/${job.scenario}-${job.serverPid}.data`) : undefined;
  const { result, elapsed, latencies, counts, statuses, kinds } = await fire(scenario, job);
  const cpuAfter = job.serverPid ? cpuTimeUsOf(job.serverPid) : null;
  await recording?.stop();
  const ok = counts.reduce((a, b) => a + b, 0);
  return {
    scenario: job.scenario,
    connections: job.connections,
    duration_s: Math.round(elapsed * 100) / 100,
    requests_per_s: Math.round(ok / elapsed),
    ok,
    server_cpu_us_per_request: cpuBefore !== null && cpuAfter !== null && ok > 0 ? Math.round((cpuAfter - cpuBefore) / ok) : null,
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    kinds: Object.fromEntries(kinds.map((kind, i) => [kind, { requests_per_s: Math.round(counts[i] / elapsed), latency_ms: summarize(latencies[i]) }])),
  };
});
