/**
 * Attempt leases (live-inbox.md "Scale", platform.md "Many processes"): with `routing`, the process
 * running a Run holds a lease on its Session in storage — claimed in the transaction that starts
 * the Run, renewed every third of the lease while its attempt runs, released after the Run's end
 * is committed — and a Live Inbox request (or an interrupt) that reaches another process is
 * forwarded to the lease holder. A running Run that no live lease names is a leftover of a dead
 * process, which any process may end ({@link AttemptLeases.leased}). Every lease time is read from
 * the store's clock (`Store.now`, the database's), never from a process's own `Clock`, so processes
 * with skewed clocks agree on which leases are live. Off (everything local, nothing stored) when
 * `routing` is absent. The types of the decision and the forwarding port are in `routing.ts`.
 */
import type { RequestContext } from '../context.js';
import type { LiveInboxHost } from '../live-inbox/registry.js';
import type { Clock } from '../ports/clock.js';
import type { AttemptOwnership, Store, StoreTx } from '../ports/store.js';
import type { Run } from '../records.js';
import { loadSessionGate, sessionWriteDenied } from './access.js';
import { sessionGateCache, type SessionGateCache } from './gate-cache.js';
import { DEFAULT_ATTEMPT_LEASE_MS, type AttemptRoute, type AttemptRoutingErrorInfo, type AttemptRoutingOptions, type LiveInboxOperation } from './routing.js';
import { parseSendSessionEvents } from './schemas.js';
import { liveInboxAccess } from './steering.js';

/** What {@link AttemptLeases} needs. */
export interface AttemptLeasesDeps {
  store: Store;
  clock: Clock;
  /** The process's attempt registry: whether it hosts a Session's active attempt. */
  host: LiveInboxHost;
  /** Off when absent. */
  routing?: AttemptRoutingOptions;
  /** Whether this process executes a Run of the Session right now (the Run supervisor's answer). */
  isExecuting: (session_id: string) => boolean;
  /** As the services' option (`gate-cache.ts`). */
  sessionGateCacheTtlMs?: number;
}

const LOCAL: AttemptRoute = Object.freeze({ route: 'local' });

/** Attempt ownership leases and request routing between processes sharing one database. */
export class AttemptLeases {
  readonly #deps: AttemptLeasesDeps;
  /** The store's Session gates (`gate-cache.ts`): the routing reads' access. */
  readonly #gates: SessionGateCache;

  constructor(deps: AttemptLeasesDeps) {
    this.#deps = deps;
    this.#gates = sessionGateCache(deps);
  }

  /** Whether leases are kept (routing is on). */
  get enabled(): boolean {
    return this.#deps.routing !== undefined;
  }

  /** Lease length in ms. */
  get leaseMs(): number {
    return this.#deps.routing?.lease_ms ?? DEFAULT_ATTEMPT_LEASE_MS;
  }

  /**
   * The time leases are written and judged with: the store's clock (`now()` of `on`, the database's)
   * when it has one, else this process's `Clock` (right only when every process reads one clock).
   */
  now(on: Pick<StoreTx, 'now'> = this.#deps.store): Promise<number> {
    return on.now !== undefined ? on.now() : Promise.resolve(this.#deps.clock.now());
  }

  /**
   * Where a Live Inbox request (or durable input with a `user.interrupt`) is answered; see
   * `SessionRuntimeService.routeLiveInbox` for the rules.
   * @throws InboxKitError `validation_error` (400, `send_events`), `session_not_found` (404),
   *   `session_ownership_unavailable` (500), `permission_denied` (403).
   */
  async route(ctx: RequestContext, session_id: string, operation: LiveInboxOperation, options: { forwarded?: boolean } = {}): Promise<AttemptRoute> {
    const routing = this.#deps.routing;
    if (routing === undefined || options.forwarded === true) return LOCAL;
    let sid: string;
    if (operation.type === 'send_events') {
      const body = parseSendSessionEvents(operation.body);
      if (!body.events.some((e) => e.type === 'user.interrupt') || this.#deps.isExecuting(session_id)) return LOCAL;
      const access = await loadSessionGate(this.#deps.store, ctx.principal, session_id, this.#gates);
      if (!access.canWrite) throw sessionWriteDenied();
      sid = access.session_id;
    } else {
      if (this.#deps.host.liveInbox(session_id) !== undefined) return LOCAL;
      sid = await liveInboxAccess(this.#deps.store, ctx.principal, session_id, operation.type !== 'snapshot', this.#gates);
    }
    let owner: AttemptOwnership | undefined;
    try {
      owner = await this.#deps.store.findAttemptOwner(sid, await this.now());
    } catch (error) {
      this.#report(error, { session_id: sid, action: 'lookup' });
      return LOCAL;
    }
    if (owner === undefined || owner.host_id === routing.host_id) return LOCAL;
    try {
      const reply = await routing.forwarder.forward({ owner, session_id: sid, operation, principal: ctx.principal, request_id: ctx.request_id });
      return { route: 'forwarded', reply };
    } catch (error) {
      this.#report(error, { session_id: sid, action: 'forward', owner });
      return LOCAL;
    }
  }

  /**
   * Inside `tx` (which holds the Session's lock), with routing: whether a live lease names `run`
   * (held by any host, this one included), judged by the store's clock. A running Run that no live
   * lease names is a leftover: its process died (or lost the database) for longer than a lease.
   * Without routing: false.
   */
  async leased(tx: StoreTx, run: Run): Promise<boolean> {
    if (this.#deps.routing === undefined) return false;
    const owner = await tx.findAttemptOwner(run.session_id, await this.now(tx));
    return owner !== undefined && owner.run_id === run.id;
  }

  /**
   * Inside the transaction that inserts `run` (holding its Session's lock), with routing: records
   * this host as the owner of the Run's Session, so the Run is leased from the moment it exists
   * (no other process can take it for a leftover before its attempt starts). A live lease another
   * host still holds for an earlier Run of the Session (its end is committed; its release may be
   * late or lost) is released first: the Session has no other running Run, or this one would not
   * start. Returns whether the lease was written (always true without routing).
   */
  async claimForRun(tx: StoreTx, run: Run): Promise<boolean> {
    const routing = this.#deps.routing;
    if (routing === undefined) return true;
    const now = await this.now(tx);
    const claim = { session_id: run.session_id, run_id: run.id, host_id: routing.host_id, host_url: routing.host_url, lease_expires_at: now + this.leaseMs };
    if (await tx.claimAttemptOwnership(claim, now)) return true;
    const held = await tx.findAttemptOwner(run.session_id, now);
    if (held !== undefined && held.run_id !== run.id) await tx.releaseAttemptOwnership(held);
    return tx.claimAttemptOwnership(claim, now);
  }

  /**
   * Inside `tx` (holding the Session's lock), with routing: removes this host's lease on `run_id`'s
   * Session — a Run that parks on tool results (`awaiting`) is executed by nobody, and the process
   * that resumes it claims it anew. Without routing: a no-op.
   */
  async releaseForRun(tx: StoreTx, session_id: string, run_id: string): Promise<void> {
    const routing = this.#deps.routing;
    if (routing === undefined) return;
    await tx.releaseAttemptOwnership({ session_id, run_id, host_id: routing.host_id });
  }

  /**
   * With routing: claims the Session for `run_id` on this host and renews the lease every third of
   * it until the returned release is called (which stops renewing and releases; with `keep`, it
   * only stops renewing: the Run's next attempt on this host holds the same lease). Never throws:
   * failures go to `onRoutingError` and the attempt runs process-local. Without routing: a no-op.
   */
  async hold(session_id: string, run_id: string): Promise<(options?: { keep?: boolean }) => Promise<void>> {
    const routing = this.#deps.routing;
    if (routing === undefined) return async () => {};
    const { store } = this.#deps;
    const leaseMs = this.leaseMs;
    const key = { session_id, run_id, host_id: routing.host_id };
    try {
      const now = await this.now();
      if (!(await store.claimAttemptOwnership({ ...key, host_url: routing.host_url, lease_expires_at: now + leaseMs }, now))) {
        this.#report(new Error('Another host holds a live lease on this Session; the attempt is not routable'), { session_id, run_id, action: 'claim' });
        return async () => {};
      }
    } catch (error) {
      this.#report(error, { session_id, run_id, action: 'claim' });
      return async () => {};
    }
    let renewing: Promise<void> = Promise.resolve();
    let stopped = false;
    const timer = setInterval(() => {
      renewing = renewing.then(async () => {
        if (stopped) return;
        try {
          if (!(await store.renewAttemptOwnership(key, (await this.now()) + leaseMs))) {
            stopped = true;
            clearInterval(timer);
            this.#report(new Error('The attempt lost its ownership lease'), { session_id, run_id, action: 'renew' });
          }
        } catch (error) {
          this.#report(error, { session_id, run_id, action: 'renew' });
        }
      });
    }, Math.max(1, Math.floor(leaseMs / 3)));
    (timer as { unref?: () => void }).unref?.();
    return async (options = {}) => {
      stopped = true;
      clearInterval(timer);
      await renewing;
      if (options.keep === true) return;
      try {
        await store.releaseAttemptOwnership(key);
      } catch (error) {
        // The lease expires on its own.
        this.#report(error, { session_id, run_id, action: 'release' });
      }
    };
  }

  #report(error: unknown, info: AttemptRoutingErrorInfo): void {
    try {
      this.#deps.routing?.onRoutingError?.(error, info);
    } catch {
      // A failing reporter must not break routing.
    }
  }
}
