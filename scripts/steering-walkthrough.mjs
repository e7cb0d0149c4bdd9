#!/usr/bin/env node
// The README's Live Inbox walkthrough, driven by itself against a running demo (`npm run demo`):
// starts a Run with durable input, then — while the scripted model works — reads the window,
// queues two messages, reorders them, replaces one and withdraws the other, waits for the Run to
// end and prints the committed history's drained messages (Run-scoped ids `{run_id}-inbox-{n}`).
// Every request is printed as the curl command of the README and its answer, so the output reads
// as the walkthrough done by hand.
//
// Usage (from the repository's root, with the demo running):
//   node scripts/steering-walkthrough.mjs
// Environment: INBOX_KIT_URL (default http://127.0.0.1:3000), DATA_DIR (the demo's, default
// apps/demo/data: the owner's key is read from its credentials.json), SESSION (default sess_001).
// Exits 0 when every step answered as the walkthrough says, 1 otherwise (e.g. 410 when the Run had
// already ended: start the demo with a slower model, DEMO_MODEL_STEP_MS=5000).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const base = (process.env.INBOX_KIT_URL || 'http://127.0.0.1:3000').replace(/\/+$/, '');
const dataDir = resolve(process.env.DATA_DIR || join('apps', 'demo', 'data'));
const session = process.env.SESSION || 'sess_001';
const owner = ownerKey();

/** acc_owner's key from the demo's credentials.json, or the walkthrough ends saying where it looked. */
function ownerKey() {
  const file = join(dataDir, 'credentials.json');
  try {
    return JSON.parse(readFileSync(file, 'utf8')).acc_owner;
  } catch (error) {
    console.error(`steering walkthrough: cannot read the demo's keys from ${file} (${error.code ?? error.message}): start the demo once (npm run demo), or set DATA_DIR to its data folder`);
    process.exit(1);
  }
}
const live = `/v1/awaken/sessions/${session}/live-inbox`;

/** Sends one request, prints it as a curl command and prints the answer; returns status and JSON body. */
async function call(method, path, body) {
  const curl = [`curl${method === 'GET' ? '' : ` -X ${method}`} $BASE${path}`, '-H "$AUTH"'];
  if (body !== undefined) curl.push(`-H "$JSON" -d '${JSON.stringify(body)}'`);
  console.log(`\n$ ${curl.join(' ')}`);
  const response = await reach(base + path, {
    signal: AbortSignal.timeout(30_000),
    method,
    headers: { authorization: `Bearer ${owner}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  console.log(`${response.status} ${text}`);
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Fails the walkthrough with `message` unless `ok`. */
function expectThat(ok, message) {
  if (ok) return;
  console.error(`\nsteering walkthrough: ${message}`);
  process.exit(1);
}

/** `fetch`, ending the walkthrough with one line (not a stack trace) when nothing answers at `base`. */
async function reach(url, init) {
  try {
    return await fetch(url, init);
  } catch (error) {
    const refused = error?.cause?.code === 'ECONNREFUSED';
    console.error(`\nsteering walkthrough: ${refused
      ? `no demo answers at ${base}: start it first (npm run demo), or point INBOX_KIT_URL at it (INBOX_KIT_URL=http://127.0.0.1:<PORT>)`
      : `${base} did not answer: ${error?.cause?.message ?? error?.message ?? error}`}`);
    process.exit(1);
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

console.log(`BASE=${base}; AUTH="Authorization: Bearer <acc_owner's key>"; JSON='Content-Type: application/json'`);
console.log('# durable input starts a Run');
const started = await call('POST', `/v1/sessions/${session}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Summarise the thread' }] }] });
expectThat(started.status === 200, 'the durable message was not accepted');

console.log('\n# while it runs: read the window, queue, queue, reorder (every current id, once), replace, withdraw');
let window = await call('GET', live);
for (let i = 0; i < 50 && !window.body?.active; i++) {
  await sleep(100);
  window = await call('GET', live);
}
expectThat(window.body?.active === true, 'no Run became active');
const first = await call('POST', live, { content: [{ type: 'text', text: 'Keep it short' }] });
const second = await call('POST', live, { content: [{ type: 'text', text: 'Use bullet points' }] });
const gone = 'answered 410: the Run ended before the walkthrough got here; start the demo with a slower model (DEMO_MODEL_STEP_MS=5000 npm run demo)';
expectThat(first.status !== 410 && second.status !== 410, gone);
expectThat(first.status === 200 && second.status === 200, 'queueing failed');
const a = first.body.id;
const b = second.body.id;
const reordered = await call('PUT', `${live}/order`, { order: [b, a] });
const replaced = await call('PUT', `${live}/${a}`, { content: [{ type: 'text', text: 'Keep it very short' }] });
const withdrawn = await call('DELETE', `${live}/${b}`);
expectThat(![reordered, replaced, withdrawn].some((r) => r.status === 410), gone);
expectThat([reordered, replaced, withdrawn].every((r) => r.status < 300), 'a change to the queue was refused');

console.log('\n# wait for the Run to end (the model drains the queue at its next step boundary)');
for (let i = 0; i < 600 && window.body?.active; i++) {
  await sleep(250);
  const r = await reach(base + live, { headers: { authorization: `Bearer ${owner}` } });
  window = { status: r.status, body: await r.json() };
}
expectThat(!window.body?.active, 'the Run did not end');
await call('GET', live);

console.log('\n# committed history: drained messages carry Run-scoped ids ({run_id}-inbox-{n})');
// The page after the durable message this walkthrough sent (its sequence is not in its answer, so
// page from the start; the demo's history is small).
let drained = [];
let after = 0;
for (;;) {
  const r = await reach(`${base}/v1/sessions/${session}/events?after=${after}&limit=1000`, { headers: { authorization: `Bearer ${owner}` } });
  const page = await r.json();
  const events = page.data ?? [];
  drained = drained.concat(events.filter((e) => /-inbox-\d+$/.test(e.message_id ?? '')));
  if (!page.has_more || events.length === 0) break;
  after = events.at(-1).seq;
}
console.log(`\n$ curl "$BASE/v1/sessions/${session}/events" -H "$AUTH"   (drained messages, the last ones are this Run's)`);
for (const e of drained.slice(-4)) console.log(`  ${e.message_id}: ${(e.content ?? []).map((c) => c.text).join(' ')}`);
expectThat(drained.some((e) => (e.content ?? []).some((c) => c.text === 'Keep it very short')), 'the replaced message is not in the committed history');
expectThat(drained.length > 0, 'no drained message in the committed history');
console.log('\nsteering walkthrough: done');
