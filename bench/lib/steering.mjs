/**
 * Steering latency: the time from a `POST …/live-inbox` answering 200 to that message being in the
 * Session ledger, committed at the Run's next boundary — what a steering user waits for. Forked by
 * run.mjs against a demo server whose scripted model takes 10 ms steps (enough of them to outlast
 * the measurement), with a Run already active on `session`.
 *
 * One subscriber reads `/v1/sessions/<session>/events/stream` (SSE); the client queues one message
 * at a time, each with a text of its own, and waits for the `user.message` frame carrying that
 * text, then pauses a random 0–10 ms so messages arrive at every phase of a step. The time is
 * taken when the frame reaches this process, so it also counts the stream's delivery: an upper
 * bound of the commit time.
 *
 * The figure is split in its parts, so a miss says where the time went: 200 → the commit's
 * `processed_at` (the wait for the Run's next boundary: at most one model step, or the commit in
 * flight when it was queued; `processed_at` is the server's clock, whole ms, read as the commit's
 * transaction starts), `processed_at` → the frame here (the commit itself — on SQLite its disk
 * sync — then the publish and the stream's delivery), and the time between two steps' frames (one
 * model step and its commit).
 *
 * Job: `{ url, session, key, duration (s), warmup (s) }` →
 * `{ messages, latency_ms: { count, mean, p50, p90, p99, max }, steps_seen, parts_ms: { to_boundary, to_frame, step_cycle } }`.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { childMain, request, sleep, summarize } from './util.mjs';

/** Opens the Session event stream; `onFrame(event, at)` gets every `data:` frame (parsed) with its arrival time. */
function openLedgerStream(base, session, key, onFrame) {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(`/v1/sessions/${session}/events/stream`, base), {
      agent: false, headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`session stream: HTTP ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      let rest = '';
      res.on('data', (chunk) => {
        const at = performance.now();
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          if (line.startsWith('retry:')) resolve(req);
          else if (line.startsWith('data:')) onFrame(JSON.parse(line.slice(5)), at);
        }
      });
      res.on('error', () => {});
    });
    req.on('error', reject);
  });
}

/** The wall clock in ms with sub-ms resolution (comparable with the server's `Date.now()`). */
const wallOf = (t) => performance.timeOrigin + t;
const wallNow = () => wallOf(performance.now());

childMain(async ({ url, session, key, duration, warmup }) => {
  const waiting = new Map(); // text → resolve({ at, processed })
  let steps = 0;
  let lastStepAt;
  const cycles = [];
  const stream = await openLedgerStream(url, session, key, (event, at) => {
    if (event.type === 'agent.message') {
      steps += 1;
      if (lastStepAt !== undefined) cycles.push(at - lastStepAt);
      lastStepAt = at;
    }
    if (event.type !== 'user.message' || !Array.isArray(event.content)) return;
    const text = event.content.map((b) => b.text ?? '').join('');
    waiting.get(text)?.({ at, processed: Date.parse(event.processed_at) });
  });
  const latencies = [];
  const toBoundary = [];
  const toFrame = [];
  const path = `/v1/awaken/sessions/${session}/live-inbox`;
  const started = performance.now();
  const stepsAtStart = steps;
  let n = 0;
  try {
    while (performance.now() - started < (warmup + duration) * 1000) {
      const text = `Steering note ${n++}: prefer the smaller change.`;
      const seen = new Promise((resolve) => waiting.set(text, resolve));
      const res = await request(url, 'POST', path, { key, body: { content: [{ type: 'text', text }] } });
      const answered = performance.now();
      const answeredWall = wallNow();
      if (res.status !== 200) throw new Error(`queue: HTTP ${res.status} ${JSON.stringify(res.body)} (has the Run ended? it needs more steps)`);
      const { at, processed } = await Promise.race([seen, sleep(10_000).then(() => { throw new Error(`message ${n - 1} not in the ledger after 10 s`); })]);
      waiting.delete(text);
      if (answered - started >= warmup * 1000) {
        latencies.push(Math.max(0, at - answered));
        // processed_at is the commit's clock reading (whole ms, taken as its transaction starts).
        toBoundary.push(Math.max(0, processed - answeredWall));
        toFrame.push(Math.max(0, wallOf(at) - processed));
      }
      await sleep(Math.random() * 10);
    }
  } finally {
    stream.destroy();
  }
  return {
    messages: latencies.length, latency_ms: summarize(latencies), steps_seen: steps - stepsAtStart,
    // The parts (ms): 200 → the commit's processed_at (waiting for the boundary), processed_at → the
    // frame here (commit + publish + stream delivery), and the time between two steps' frames (one
    // model step + its commit).
    parts_ms: { to_boundary: summarize(toBoundary), to_frame: summarize(toFrame), step_cycle: summarize(cycles) },
  };
});
