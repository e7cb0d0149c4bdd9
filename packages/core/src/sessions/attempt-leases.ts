/**
 * Attempt leases (live-inbox.md "Scale"): with `routing`, the process running a native attempt
 * holds a lease on its Session in storage, and a Live Inbox request (or an interrupt) that reaches
 * another process is forwarded to the lease holder. Off (everything local, nothing stored) when
 * `routing` is absent. The types of the decision and the forwarding port are in `routing.ts`.
 */
import type { RequestContext } from '../context.js';
import type { LiveInboxHost } from '../live-inbox/registry.js';
import type { Clock } from '../ports/clock.js';
import type { AttemptOwnership, Store, StoreTx } from '../ports/store.js';
import type { Run } from '../records.js';
import { loadSessionAccess, sessionWriteDenied } from './access.js';
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
}

const LOCAL: AttemptRoute = Object.freeze({ route: 'local' });

/** Attempt ownership leases and request routing between processes sharing one database. */
export class AttemptLeases {
  readonly #deps: AttemptLeasesDeps;

  constructor(deps: AttemptLeasesDeps) {
    this.#deps = deps;
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
      const access = await loadSessionAccess(this.#deps.store, ctx.principal, session_id);
      if (!access.canWrite) throw sessionWriteDenied();
      sid = access.session.id;
    } else {
      if (this.#deps.host.liveInbox(session_id) !== undefined) return LOCAL;
      sid = (await liveInboxAccess(this.#deps.store, ctx.principal, session_id, operation.type !== 'snapshot')).id;
    }
    let owner: AttemptOwnership | undefined;
    try {
      owner = await this.#deps.store.findAttemptOwner(sid, this.#deps.clock.now());
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

  /** Inside `tx`, with routing: whether another host holds a live lease on `run`'s attempt. Without routing: false. */
  async heldElsewhere(tx: StoreTx, run: Run, now: number): Promise<boolean> {
    const routing = this.#deps.routing;
    if (routing === undefined) return false;
    const owner = await tx.findAttemptOwner(run.session_id, now);
    return owner !== undefined && owner.run_id === run.id && owner.host_id !== routing.host_id;
  }

  /**
   * With routing: claims the Session for `run_id` on this host and renews the lease every third of
   * it until the returned release is called (which stops renewing and releases). Never throws:
   * failures go to `onRoutingError` and the attempt runs process-local. Without routing: a no-op.
   */
  async hold(session_id: string, run_id: string): Promise<() => Promise<void>> {
    const routing = this.#deps.routing;
    if (routing === undefined) return async () => {};
    const { store, clock } = this.#deps;
    const leaseMs = routing.lease_ms ?? DEFAULT_ATTEMPT_LEASE_MS;
    const key = { session_id, run_id, host_id: routing.host_id };
    try {
      const now = clock.now();
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
          if (!(await store.renewAttemptOwnership(key, clock.now() + leaseMs))) {
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
    return async () => {
      stopped = true;
      clearInterval(timer);
      await renewing;
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
