/**
 * Steering a Run of the real adapter through the Live Inbox: the Session Runtime over a real
 * database (a SQLite file, and PostgreSQL when INBOX_KIT_TEST_PG_URL is set), the adapter on the
 * real SDK, and the local Messages API stub. Assertions read the request bodies the stub received
 * and the committed Session history.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LiveInboxHost, PlatformService, SessionRuntimeService, createIdGenerator, createLocalEventBus, systemClock,
  type ContentBlock, type RequestContext, type SessionEvent,
} from '@inbox-kit/core';
import { openStore, type OpenedStore } from '@inbox-kit/storage-kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicModel, type AnthropicModelOptions } from '../src/index.js';
import { startMessagesStub, type MessagesStub, type StubAnswer } from '../src/testing/index.js';

const PG_ADMIN_URL = process.env.INBOX_KIT_TEST_PG_URL || undefined;
type Engine = 'sqlite' | 'postgres';
const engines: Engine[] = PG_ADMIN_URL ? ['sqlite', 'postgres'] : ['sqlite'];

const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];
const userTurn = (...texts: string[]) => ({ role: 'user', content: texts.map((t) => ({ type: 'text', text: t })) });
const assistantTurn = (t: string) => ({ role: 'assistant', content: [{ type: 'text', text: t }] });

/** A gate a stub answer waits on: the step stays in flight until `open()`. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

interface World {
  stub: MessagesStub;
  runtime: SessionRuntimeService;
  owner: RequestContext;
  runErrors: unknown[];
  events(): Promise<SessionEvent[]>;
  close(): Promise<void>;
}

async function pgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `inbox_kit_model_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`).finally(() => admin.end());
  const url = new URL(PG_ADMIN_URL!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => c.end());
    },
  };
}

const worlds: World[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});

async function world(engine: Engine, answers: StubAnswer[], options: Partial<AnthropicModelOptions> = {}): Promise<World> {
  const stub = await startMessagesStub({ answers });
  const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-model-'));
  const database = engine === 'postgres' ? await pgDatabase() : undefined;
  const opened: OpenedStore = await openStore({ databaseUrl: database?.url, sqliteFile: join(dir, 'model.sqlite') });
  const deps = { store: opened.store, bus: createLocalEventBus(), clock: systemClock, ids: createIdGenerator() };
  const platform = new PlatformService(deps);
  await platform.createWorkspace({ id: 'ws_m', name: 'Model tests' });
  await platform.createAccount({ id: 'acc_owner', name: 'Owner', workspace_ids: ['ws_m'] });
  const { secret } = await platform.issueApiKey({ workspace_id: 'ws_m', account_id: 'acc_owner' });
  const owner: RequestContext = { principal: await platform.authenticate(secret), request_id: 'req_test' };
  await platform.createProject(owner, { id: 'proj_m', name: 'Model project' });
  await platform.createSession(owner, { id: 'sess_m', project_id: 'proj_m', title: 'Steered session' });
  const runErrors: unknown[] = [];
  const model = createAnthropicModel({ apiKey: 'sk-test', baseURL: stub.url, model: 'claude-test', retryDelayMs: 1, maxRetryDelayMs: 5, ...options });
  const runtime = new SessionRuntimeService({ ...deps, host: new LiveInboxHost(), model, onRunError: (e) => runErrors.push(e) });
  const w: World = {
    stub, runtime, owner, runErrors,
    events: async () => (await runtime.listEvents(owner, 'sess_m', { limit: 1000 })).data,
    close: async () => {
      await runtime.close();
      await stub.close();
      await opened.close();
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  worlds.push(w);
  return w;
}

const start = (w: World, t: string) => w.runtime.sendEvents(w.owner, 'sess_m', { events: [{ type: 'user.message', content: text(t) }] });
/** `type` and, for Run-scoped messages, the message id with the Run's id shortened to `run`. */
const brief = (events: SessionEvent[]) =>
  events.map((e) => `${e.type}${e.message_id && e.run_id && e.message_id.startsWith(`${e.run_id}-`) ? ` run${e.message_id.slice(e.run_id.length)}` : ''}`);

describe.each(engines)('steering the Messages API model through the Live Inbox (%s)', (engine) => {
  it('queued messages reach the next model call in order, a withdrawn one never does; end_turn with an empty inbox ends the Run', async () => {
    const g = gate();
    const w = await world(engine, [{ text: ['Looking at ', 'the inbox.'], gate: g.promise }, { text: 'Done, focusing on billing.' }]);
    await start(w, 'Triage the inbox.');
    await w.stub.request(1);
    const a = await w.runtime.liveInboxQueue(w.owner, 'sess_m', { content: text('Focus on billing.') });
    const b = await w.runtime.liveInboxQueue(w.owner, 'sess_m', { content: text('Ignore this one.') });
    const c = await w.runtime.liveInboxQueue(w.owner, 'sess_m', { content: text('Skip refunds.') });
    await w.runtime.liveInboxWithdraw(w.owner, 'sess_m', b.id);
    await w.runtime.liveInboxReorder(w.owner, 'sess_m', { order: [c.id, a.id] });
    g.open();
    await w.runtime.whenIdle('sess_m');

    expect(w.stub.requests).toHaveLength(2);
    expect(w.stub.requests[0]!.body.messages).toEqual([userTurn('Triage the inbox.')]);
    // The first step ended its turn (end_turn) with input queued: a boundary — the input is committed and the model called again.
    expect(w.stub.requests[1]!.body.messages).toEqual([
      userTurn('Triage the inbox.'),
      assistantTurn('Looking at the inbox.'),
      userTurn('Skip refunds.', 'Focus on billing.'),
    ]);
    expect(JSON.stringify(w.stub.requests.map((r) => r.body))).not.toContain('Ignore this one.');
    const events = await w.events();
    expect(brief(events)).toEqual([
      'user.message', 'session.status_running', 'agent.message run-step-0', 'user.message run-inbox-0', 'user.message run-inbox-1',
      'agent.message run-step-1', 'session.status_idle',
    ]);
    expect(events.at(-1)!.content).toEqual({ outcome: 'completed' });
    expect(events.filter((e) => e.message_id?.includes('-inbox-')).map((e) => e.content)).toEqual([text('Skip refunds.'), text('Focus on billing.')]);
    expect(events[5]!.content).toEqual(text('Done, focusing on billing.'));
  });

  it('an interrupt mid-stream aborts the request in flight and ends the Run cancelled; what was queued is committed ahead of it and reaches the next Run in order', async () => {
    const w = await world(engine, [{ hang: true }, { text: 'Starting over with the new brief.' }]);
    await start(w, 'Write the report.');
    await w.stub.request(1);
    await w.runtime.liveInboxQueue(w.owner, 'sess_m', { content: text('Use the new template.') });
    await w.runtime.interrupt(w.owner, 'sess_m');
    expect((await w.stub.aborted(1)).aborted).toBe(true);
    await w.runtime.whenIdle('sess_m');
    let events = await w.events();
    expect(brief(events)).toEqual(['user.message', 'session.status_running', 'user.message', 'user.interrupt', 'session.status_idle']);
    expect(events[2]!.content).toEqual(text('Use the new template.'));
    expect(events.at(-1)!.content).toEqual({ outcome: 'cancelled' });
    expect(w.runErrors).toEqual([]);

    // The next Run starts from durable input; the steering queued before the interrupt comes first.
    await start(w, 'Now write it again.');
    await w.runtime.whenIdle('sess_m');
    expect(w.stub.requests[1]!.body.messages).toEqual([userTurn('Write the report.', 'Use the new template.', 'Now write it again.')]);
    events = await w.events();
    expect(events.at(-1)!.content).toEqual({ outcome: 'completed' });
    expect(w.stub.requests).toHaveLength(2);
  });

  it('provider errors are retried (429 with retry-after, 529 overloaded, a cut stream) and the Run completes', async () => {
    const w = await world(engine, [
      { status: 429, error: { type: 'rate_limit_error', message: 'rate limited' }, headers: { 'retry-after-ms': '5' } },
      { status: 529, error: { type: 'overloaded_error', message: 'Overloaded' } },
      { cut: ['partial ans'] },
      { text: 'Complete answer.' },
    ], { maxRetries: 3 });
    await start(w, 'Go.');
    await w.runtime.whenIdle('sess_m');
    expect(w.stub.requests).toHaveLength(4);
    const events = await w.events();
    expect(events.filter((e) => e.type === 'agent.message').map((e) => e.content)).toEqual([text('Complete answer.')]);
    expect(events.at(-1)!.content).toEqual({ outcome: 'completed' });
  });

  it('a provider that stays overloaded ends the Run failed with the error recorded, and the Session takes new input', async () => {
    const overloaded: StubAnswer = { status: 529, error: { type: 'overloaded_error', message: 'Overloaded' } };
    const w = await world(engine, [overloaded, overloaded, overloaded, { text: 'Back.' }], { maxRetries: 2 });
    await start(w, 'Go.');
    await w.runtime.whenIdle('sess_m');
    expect(w.stub.requests).toHaveLength(3);
    let events = await w.events();
    expect(brief(events)).toEqual(['user.message', 'session.status_running', 'session.status_idle']);
    expect(events.at(-1)!.content).toEqual({
      outcome: 'failed',
      error: { type: 'overloaded_error', message: 'The model provider answered with HTTP 529: overloaded_error (Overloaded). Gave up after 3 attempts.' },
    });
    expect(w.runErrors).toHaveLength(1);
    expect(w.runtime.isRunning('sess_m')).toBe(false);

    await start(w, 'Try again.');
    await w.runtime.whenIdle('sess_m');
    events = await w.events();
    expect(events.at(-1)!.content).toEqual({ outcome: 'completed' });
  });

  it('an error the provider will not take (400) ends the Run failed at once, without retrying', async () => {
    const w = await world(engine, [{ status: 400, error: { type: 'invalid_request_error', message: 'max_tokens: too large for this model' } }]);
    await start(w, 'Go.');
    await w.runtime.whenIdle('sess_m');
    expect(w.stub.requests).toHaveLength(1);
    expect((await w.events()).at(-1)!.content).toEqual({
      outcome: 'failed',
      error: { type: 'invalid_request_error', message: 'The model provider answered with HTTP 400: invalid_request_error (max_tokens: too large for this model).' },
    });
  });
});

describe('test engines', () => {
  it('runs on SQLite, and on PostgreSQL when INBOX_KIT_TEST_PG_URL is set (required in CI)', () => {
    if (!PG_ADMIN_URL) {
      if (process.env.CI) expect.fail('INBOX_KIT_TEST_PG_URL is not set: the PostgreSQL steering suite did not run (CI requires it)');
      console.warn('model-anthropic: INBOX_KIT_TEST_PG_URL is not set; the steering suite ran on SQLite only');
    }
    expect(engines).toEqual(PG_ADMIN_URL ? ['sqlite', 'postgres'] : ['sqlite']);
  });
});
