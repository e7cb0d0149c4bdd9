/**
 * The Project Events fan-out benchmark, run in its own process (forked by run.mjs):
 *
 * 1. reads the server's RSS (`/proc/<pid>/status`), opens `subscribers` SSE streams on
 *    `/projects/<project>/events/stream?after=<current sequence>` (raw `http`, one socket each),
 *    waits until each has its `retry:` hint, lets the server settle and reads the RSS again:
 *    (after − before) ÷ subscribers = memory per idle stream;
 * 2. files `events` items one after another (POST …/inbox; 5 unmeasured ones first) and, for
 *    each, times from sending the create to the moment the last subscriber has parsed its `id:`
 *    line (an upper bound on commit → last delivery: it also contains the create's own work
 *    before commit), plus the first and median subscriber. A create the server sheds (503
 *    `overloaded`: its event loop was late by over a second) is sent again after 1 s, timed from
 *    the attempt that was answered; the refusals are counted (`shed`). The server's CPU time
 *    (`/proc/<pid>/stat`) over the measured events ÷ their number is `server_cpu_ms_per_event`: what
 *    one create and its fan-out cost the server, which moves far less than latency on a shared machine.
 *
 * Job: `{ url, project, key, after, subscribers, events, serverPid }`.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { childMain, cpuTimeUsOf, request, rssOf, sleep, summarize } from './util.mjs';

const WARMUP_EVENTS = 5;

function openStream(base, path, key, onId) {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(path, base), { agent: false, headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`stream: HTTP ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      let rest = '';
      let ready = false;
      res.on('data', (chunk) => {
        const now = performance.now();
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          if (!ready && line.startsWith('retry:')) {
            ready = true;
            resolve(req);
          } else if (line.startsWith('id:')) {
            onId(Number(line.slice(3).trim()), now);
          }
        }
      });
      res.on('error', () => {});
    });
    req.on('error', reject);
  });
}

childMain(async ({ url, project, key, after, subscribers, events, serverPid }) => {
  // Per sequence: how many subscribers got it, and when the first / each one did.
  const arrivals = new Map();
  const onId = (id, now) => {
    let a = arrivals.get(id);
    if (!a) arrivals.set(id, (a = { times: [] }));
    a.times.push(now);
    if (a.times.length === subscribers) a.done?.();
  };

  await sleep(1000);
  const rssBefore = rssOf(serverPid);
  const requests = [];
  const openStarted = performance.now();
  for (let i = 0; i < subscribers; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(subscribers, i + 100); j++) batch.push(openStream(url, `/projects/${project}/events/stream?after=${after}`, key, onId));
    requests.push(...(await Promise.all(batch)));
  }
  const openMs = performance.now() - openStarted;
  await sleep(2000);
  const rssAfter = rssOf(serverPid);

  const last = [];
  const first = [];
  const median = [];
  const createMs = [];
  let sequence = after;
  let shed = 0;
  let cpuStart = null;
  // The first creates on a fresh server run cold code: WARMUP_EVENTS go out unmeasured.
  for (let i = -WARMUP_EVENTS; i < events; i++) {
    if (i === 0) cpuStart = cpuTimeUsOf(serverPid);
    sequence += 1;
    const entry = arrivals.get(sequence) ?? { times: [] };
    arrivals.set(sequence, entry);
    const all = new Promise((resolve) => {
      entry.done = resolve;
      if (entry.times.length === subscribers) resolve();
    });
    let t0 = performance.now();
    const create = async () => {
      for (;;) {
        t0 = performance.now();
        const answer = await request(url, 'POST', `/projects/${project}/inbox`, {
          key, body: { type: 'derived_output.review', title: `fan-out ${i}`, payload: { n: i } },
        });
        if (answer.status === 201) break;
        if (answer.status !== 503) throw new Error(`fan-out create: HTTP ${answer.status} ${answer.text.slice(0, 300)}`);
        shed += 1;
        await sleep(1000);
      }
      if (i >= 0) createMs.push(performance.now() - t0);
    };
    const created = create();
    const timeout = sleep(30_000).then(() => { throw new Error(`event ${sequence}: ${entry.times.length} of ${subscribers} subscribers after 30 s`); });
    await Promise.race([Promise.all([all, created]), timeout]);
    const times = [...entry.times].sort((a, b) => a - b);
    if (i >= 0) {
      first.push(times[0] - t0);
      median.push(times[Math.floor(times.length / 2)] - t0);
      last.push(times[times.length - 1] - t0);
    }
    arrivals.delete(sequence);
    await sleep(50);
  }
  const cpuEnd = cpuTimeUsOf(serverPid);
  const rssEnd = rssOf(serverPid);
  for (const req of requests) req.destroy();
  await sleep(500);

  return {
    subscribers,
    events,
    open_ms: Math.round(openMs),
    rss_before_bytes: rssBefore,
    rss_streams_open_bytes: rssAfter,
    rss_after_events_bytes: rssEnd,
    bytes_per_stream: rssBefore && rssAfter ? Math.round((rssAfter - rssBefore) / subscribers) : null,
    create_ms: summarize(createMs),
    shed,
    // Includes the 50 ms pauses between events (an idle server costs ~nothing) and the creates themselves.
    server_cpu_ms_per_event: cpuStart !== null && cpuEnd !== null && events > 0 ? Math.round((cpuEnd - cpuStart) / events / 100) / 10 : null,
    fanout_first_ms: summarize(first),
    fanout_median_ms: summarize(median),
    fanout_last_ms: summarize(last),
  };
});
