/**
 * The edge rules of `@inbox-kit/core/http`, as units: the connection policy's numbers and its
 * socket accounting (on a fake server), the bad-credential throttle and caller slots, and the
 * load shedder, whose sampler survives a metric that throws (`EMFILE` from `process.memoryUsage`).
 * The same rules over real sockets: the kit's connections and budgets suites.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { isInboxKitError } from '../errors.js';
import { createCallerSlots, createCredentialThrottle, createEdgeBudgets } from './budgets.js';
import { CONNECTION_DEFAULTS, connectionPolicy, fdLimitFromProcLimits, guardConnections, type HttpServerLike, type SocketLike } from './connections.js';
import { envelopeOf } from './errors.js';
import { createLoadShedder } from './load.js';

const principal = (key_id: string, account_id = 'acc_1') => ({ workspace_id: 'ws', account_id, key_id, key_kind: 'standard' as const });

describe('connection policy', () => {
  it('defaults: 70% of the fd limit (≤ 10,000), a quarter per address, keep-alive 72 s ≥ 65 s, headers above it, a 10 s first-request window', () => {
    expect(connectionPolicy({}, 2048)).toEqual({ maxConnections: 1433, maxConnectionsPerAddress: 358, firstRequestTimeoutMs: 10_000, keepAliveTimeoutMs: 72_000, headersTimeoutMs: 73_000 });
    expect(connectionPolicy({}, 1_048_576).maxConnections).toBe(10_000);
    expect(connectionPolicy({}).maxConnections).toBe(CONNECTION_DEFAULTS.maxConnections);
    expect(connectionPolicy({}, 100)).toMatchObject({ maxConnections: 70, maxConnectionsPerAddress: 64 });
    expect(connectionPolicy({}).keepAliveTimeoutMs).toBeGreaterThanOrEqual(65_000);
    expect(connectionPolicy({ keepAliveTimeoutMs: 90_000 }).headersTimeoutMs).toBe(91_000);
    expect(() => connectionPolicy({ keepAliveTimeoutMs: 70_000, headersTimeoutMs: 70_000 })).toThrow(/above keepAliveTimeoutMs/);
    expect(() => connectionPolicy({ maxConnections: 0 })).toThrow(TypeError);
  });

  it('reads the soft limit from /proc/self/limits text', () => {
    const text = 'Limit                     Soft Limit           Hard Limit           Units\nMax open files            20000                20000                files\n';
    expect(fdLimitFromProcLimits(text)).toBe(20_000);
    expect(fdLimitFromProcLimits('Max open files            unlimited            unlimited            files')).toBeUndefined();
    expect(fdLimitFromProcLimits('nothing here')).toBeUndefined();
  });

  /** A server and sockets shaped like Node's, driven by hand. */
  function fakeServer(): HttpServerLike & EventEmitter & { listening: boolean } {
    return Object.assign(new EventEmitter(), { listening: true, maxConnections: undefined as number | undefined, keepAliveTimeout: 5_000, headersTimeout: 60_000, requestTimeout: 300_000 });
  }
  function fakeSocket(remoteAddress: string): SocketLike & EventEmitter {
    const s = Object.assign(new EventEmitter(), { remoteAddress, destroyed: false, destroy() {
      if (s.destroyed) return;
      s.destroyed = true;
      s.emit('close');
    } });
    return s;
  }

  it('sets the server\'s timeouts and cap, refuses sockets past the per-address cap, closes sockets that never send a request, and reports accept errors', async () => {
    const server = fakeServer();
    const errors: unknown[] = [];
    const guard = guardConnections(server, connectionPolicy({ maxConnections: 100, maxConnectionsPerAddress: 2, firstRequestTimeoutMs: 40 }), { onError: (e) => errors.push(e) });
    expect({ max: server.maxConnections, keepAlive: server.keepAliveTimeout, headers: server.headersTimeout, request: server.requestTimeout }).toEqual({ max: 100, keepAlive: 72_000, headers: 73_000, request: 300_000 });
    const a = [fakeSocket('10.0.0.1'), fakeSocket('10.0.0.1'), fakeSocket('10.0.0.1')];
    const b = fakeSocket('10.0.0.2');
    for (const s of [...a, b]) server.emit('connection', s);
    expect(a.map((s) => s.destroyed)).toEqual([false, false, true]);
    expect(guard.stats()).toMatchObject({ open: 3, refusedPerAddress: 1, pendingFirstRequest: 3 });
    server.emit('request', { socket: a[0] }); // served: left to keep-alive
    await vi.waitFor(() => expect(a[1]!.destroyed && b.destroyed).toBe(true), { timeout: 5_000, interval: 10 });
    expect(a[0]!.destroyed).toBe(false);
    expect(guard.stats()).toMatchObject({ open: 1, closedIdle: 2, pendingFirstRequest: 0 });
    const emfile = Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' });
    expect(() => server.emit('error', emfile)).not.toThrow();
    expect(errors).toEqual([emfile]);
    // Before it listens, the listen call owns its errors (a port in use fails the start).
    server.listening = false;
    server.emit('error', new Error('listen EADDRINUSE'));
    expect(errors).toHaveLength(1);
    guard.close();
  });
});

describe('per-caller budgets at the edge', () => {
  it('the throttle counts bad-credential failures per address in a window, then refuses with Retry-After until the window ends', () => {
    const t = createCredentialThrottle({ maxFailures: 3, windowMs: 10_000 });
    for (let i = 0; i < 3; i++) {
      t.check('1.1.1.1', 1_000 + i);
      t.fail('1.1.1.1', 1_000 + i);
    }
    let refused: unknown;
    try {
      t.check('1.1.1.1', 4_000);
    } catch (error) {
      refused = error;
    }
    expect(isInboxKitError(refused) && refused.code).toBe('authentication_throttled');
    expect(envelopeOf(refused, 'req_1')).toMatchObject({ status: 429, headers: { 'retry-after': '7' } });
    expect(() => t.check('2.2.2.2', 4_000)).not.toThrow();
    expect(() => t.check('1.1.1.1', 11_000)).not.toThrow(); // a new window
  });

  it('the throttle forgets the least recently failing address past maxAddresses', () => {
    const t = createCredentialThrottle({ maxFailures: 1, windowMs: 60_000, maxAddresses: 2 });
    t.fail('a', 1);
    t.fail('b', 2);
    t.fail('c', 3);
    expect(t.size()).toBe(2);
    expect(() => t.check('a', 4)).not.toThrow();
    expect(() => t.check('c', 4)).toThrow();
  });

  it('edge budgets: only invalid_credentials counts; bodies in flight per key come back once released', async () => {
    const budgets = createEdgeBudgets({ credentialThrottle: { maxFailures: 1 }, maxBodiesPerKey: 2 });
    const { InboxKitError } = await import('../errors.js');
    await expect(budgets.authenticate('x', async () => { throw new InboxKitError('authentication_required', 'none'); })).rejects.toMatchObject({ code: 'authentication_required' });
    await expect(budgets.authenticate('x', async () => principal('k'))).resolves.toMatchObject({ key_id: 'k' });
    await expect(budgets.authenticate('x', async () => { throw new InboxKitError('invalid_credentials', 'bad'); })).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(budgets.authenticate('x', async () => principal('k'))).rejects.toMatchObject({ code: 'authentication_throttled' });
    const r1 = budgets.claimBody(principal('k'));
    budgets.claimBody(principal('k'));
    expect(() => budgets.claimBody(principal('k'))).toThrow(expect.objectContaining({ code: 'too_many_bodies' }));
    expect(() => budgets.claimBody(principal('other'))).not.toThrow();
    r1();
    r1(); // idempotent
    expect(() => budgets.claimBody(principal('k'))).not.toThrow();
    expect(budgets.claimBody(null)).toBeTypeOf('function');
    // Bytes in flight: one body always passes; with bytes held, past the budget is refused.
    const byBytes = createEdgeBudgets({ maxBodyBytesPerKey: 1_000, bodyBytesPerSecondPerKey: 0 });
    const big = byBytes.claimBody(principal('b'), 5_000);
    expect(() => byBytes.claimBody(principal('b'), 10)).toThrow(expect.objectContaining({ code: 'too_many_bodies' }));
    big();
    expect(() => byBytes.claimBody(principal('b'), 900)()).not.toThrow();
    // Bytes per second: announced bodies are charged when they start, chunked ones once read (into debt).
    // The clock stands still (a loaded machine's pause would refill the bucket between the claims).
    vi.useFakeTimers({ toFake: ['Date'] });
    const perSecond = createEdgeBudgets({ bodyBytesPerSecondPerKey: 1_000, maxBodyBytesPerKey: 10_000 });
    perSecond.claimBody(principal('r'), 600)();
    perSecond.claimBody(principal('r'), 300)();
    expect(() => perSecond.claimBody(principal('r'), 300)).toThrow(expect.objectContaining({ code: 'too_many_bodies' }));
    expect(() => perSecond.claimBody(principal('s'), 300)).not.toThrow();
    const chunked = perSecond.claimBody(principal('t'), undefined);
    perSecond.chargeBody(principal('t'), 5_000);
    chunked();
    expect(() => perSecond.claimBody(principal('t'), 1)).toThrow(expect.objectContaining({ code: 'too_many_bodies' }));
    vi.setSystemTime(Date.now() + 1_000);
    expect(() => perSecond.claimBody(principal('r'), 300)()).not.toThrow(); // a second later, refilled
    vi.useRealTimers();
    const slots = createCallerSlots('too_many_bodies', (max) => `max ${max}`);
    slots.claim('z', 1);
    expect(slots.held('z')).toBe(1);
  });
});

describe('load shedder', () => {
  it('a metric that throws (EMFILE from process.memoryUsage) is reported, keeps its last value, and the sampler goes on', async () => {
    const real = process.memoryUsage;
    const reports: [unknown, string][] = [];
    let failing = true;
    const emfile = Object.assign(new Error('EMFILE: too many open files, uv_resident_set_memory'), { code: 'EMFILE' });
    process.memoryUsage = Object.assign(() => {
      if (failing) throw emfile;
      return { ...real(), rss: 10 ** 12 };
    }, { rss: real.rss }) as typeof process.memoryUsage;
    try {
      const shedder = createLoadShedder({ maxRssBytes: 10 ** 11, sampleInterval: 10 }, (error, context) => reports.push([error, context]));
      await vi.waitFor(() => expect(reports).toHaveLength(1), { timeout: 5_000, interval: 10 });
      expect(reports[0]).toEqual([emfile, 'memory sample']);
      expect(shedder.refusal()).toBeUndefined(); // the last value (none yet) stays
      failing = false;
      await vi.waitFor(() => expect(shedder.refusal()?.code).toBe('overloaded'), { timeout: 5_000, interval: 10 });
      expect(envelopeOf(shedder.refusal(), 'req_1')).toMatchObject({ status: 503, headers: { 'retry-after': '10' } });
      shedder.close();
    } finally {
      process.memoryUsage = real;
    }
  });

  const block = (ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until) { /* block the loop */ }
  };
  const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

  it('a failing health check sheds; a loop blocked in two of three samples sheds until three calm samples in a row', async () => {
    let healthy = false;
    const shedder = createLoadShedder({ healthCheck: async () => healthy, healthCheckInterval: 10, maxEventLoopDelay: 50, sampleInterval: 10 });
    expect(shedder.refusal()?.code).toBe('overloaded');
    healthy = true;
    await vi.waitFor(() => expect(shedder.refusal()).toBeUndefined(), { timeout: 5_000, interval: 10 });
    let shed = false;
    for (let i = 0; i < 20 && !shed; i++) {
      block(80);
      await turn();
      shed = shedder.refusal()?.code === 'overloaded';
    }
    expect(shed).toBe(true);
    await vi.waitFor(() => expect(shedder.refusal()).toBeUndefined(), { timeout: 5_000, interval: 10 });
    shedder.close();
  });

  it('one long block (a server starting, a GC pause) does not shed: the loop answers right after it', async () => {
    const shedder = createLoadShedder({ maxEventLoopDelay: 50, sampleInterval: 10 });
    block(300);
    for (let i = 0; i < 10; i++) {
      await turn();
      expect(shedder.refusal()).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    shedder.close();
  });
});
