/**
 * Live Inbox steering (live-inbox.md "HTTP"): reading and editing the editable window of the
 * Session's active native attempt on this process. Check order: Session visibility (404
 * `session_not_found`; a failing ownership read → 500 `session_ownership_unavailable`, no queue
 * touched) → the write gate for mutations (403 `permission_denied`; 409 `project_archived`,
 * `session_archived`) → active native attempt
 * (410 `live_inbox_inactive`) → the edit (404 `live_inbox_message_not_found`, 409
 * `live_inbox_order_conflict`).
 */
import type { z } from 'zod';
import type { Principal, RequestContext } from '../context.js';
import { InboxKitError, isInboxKitError } from '../errors.js';
import type { LiveInboxMessage, LiveInboxQueue } from '../live-inbox/queue.js';
import type { LiveInboxHost } from '../live-inbox/registry.js';
import type { Clock } from '../ports/clock.js';
import type { Store } from '../ports/store.js';
import { sessionGateCache, type SessionGateCache } from './gate-cache.js';
import { contentSchema } from '../live-inbox/content.js';
import { markParsed, parseOrThrow } from '../validation.js';
import { loadSessionGate, sessionWriteDenied, type SessionGateAccess } from './access.js';
import { gateSessionWriteUnlocked } from '../policy/write-gate.js';
import type { WriteAction } from '../policy/write-policy.js';
import { liveInboxContentBody, liveInboxOrderBody, type LiveInboxContentInput, type LiveInboxOrderInput } from './schemas.js';

/**
 * The editable window as `GET …/live-inbox` answers it. With no active native attempt:
 * `{ active: false, version: 0, messages: [] }`. Spec: live-inbox.md "HTTP".
 */
export interface LiveInboxView {
  active: boolean;
  version: number;
  messages: LiveInboxMessage[];
}

/**
 * The `{ content }` body, parsed once (`parseOrThrow` takes the HTTP pipeline's own output of this
 * schema as it is); its content, `contentSchema`'s output either way, is marked as parsed for the queue.
 */
function contentBody(input: LiveInboxContentInput): z.output<typeof liveInboxContentBody> {
  const body = parseOrThrow(liveInboxContentBody, input, 'live inbox message');
  markParsed(contentSchema, body.content);
  return body;
}

/** The snapshot's text with no active native attempt. */
const INACTIVE_JSON = JSON.stringify({ active: false, version: 0, messages: [] });

const liveInboxInactive = () =>
  new InboxKitError('live_inbox_inactive', 'No native attempt accepts live input for this session; send the content as a durable Session event.');

/**
 * Session visibility for the Live Inbox: 404 `session_not_found` as usual, but a failing read is
 * 500 `session_ownership_unavailable`; with `mutation` (`true`: the permission only, as a routing
 * pre-check; an action: the whole write gate), a caller who may not write is 403 and an archived
 * project or Session 409. Reads only what the gate needs (`loadSessionGate`; from `gates`, the
 * store's {@link SessionGateCache}, while its entry lives); returns the Session's id.
 */
export async function liveInboxAccess(
  store: Store, principal: Principal, session_id: string, mutation: boolean | WriteAction, gates?: SessionGateCache,
): Promise<string> {
  let access: SessionGateAccess;
  try {
    // A mutation passes the write gate (403, then 409 for an archived project or Session) on a
    // plain read of what the gate needs: the queue is process memory, and what it holds is committed
    // only through the gate again (`run.commit`, under the Session's lock), so nothing queued after an archive commits.
    access = typeof mutation === 'string'
      ? await gateSessionWriteUnlocked(store, principal, session_id, mutation, gates)
      : await loadSessionGate(store, principal, session_id, gates);
  } catch (error) {
    if (isInboxKitError(error)) throw error;
    throw new InboxKitError('session_ownership_unavailable', 'Session ownership could not be read; no queue mutation was attempted.', [], { cause: error });
  }
  if (mutation === true && !access.canWrite) throw sessionWriteDenied();
  return access.session_id;
}

/** The five Live Inbox operations over this process's attempt registry (see `SessionRuntimeService`). */
export class LiveInboxSteering {
  readonly #deps: { store: Store; host: LiveInboxHost };
  /** The store's Session gates (`gate-cache.ts`), shared with the services that drop them. */
  readonly #gates: SessionGateCache;

  constructor(deps: { store: Store; host: LiveInboxHost; clock: Clock; sessionGateCacheTtlMs?: number }) {
    this.#deps = deps;
    this.#gates = sessionGateCache(deps);
  }

  /** @throws InboxKitError `session_not_found` (404), `session_ownership_unavailable` (500). */
  async snapshot(ctx: RequestContext, session_id: string): Promise<LiveInboxView> {
    const inbox = this.#deps.host.liveInbox(await liveInboxAccess(this.#deps.store, ctx.principal, session_id, false, this.#gates));
    if (inbox === undefined) return { active: false, version: 0, messages: [] };
    return { active: true, ...inbox.snapshot() };
  }

  /**
   * {@link snapshot} as its JSON text (`{"active":…,"version":…,"messages":[…]}`), made once per
   * state of the queue (`LiveInboxQueue.snapshotJson`). @throws InboxKitError as {@link snapshot}.
   */
  async snapshotJson(ctx: RequestContext, session_id: string): Promise<string> {
    const inbox = this.#deps.host.liveInbox(await liveInboxAccess(this.#deps.store, ctx.principal, session_id, false, this.#gates));
    if (inbox === undefined) return INACTIVE_JSON;
    return `{"active":true,${inbox.snapshotJson().slice(1)}`;
  }

  /** @returns `{ id }`. @throws InboxKitError as `SessionRuntimeService.liveInboxQueue`. */
  async queue(ctx: RequestContext, session_id: string, input: LiveInboxContentInput): Promise<{ id: number }> {
    const body = contentBody(input);
    const inbox = await this.#mutableInbox(ctx, session_id, 'live_inbox.queue');
    return { id: inbox.queue(body.content) };
  }

  /** @throws InboxKitError as `SessionRuntimeService.liveInboxReplace`. */
  async replace(ctx: RequestContext, session_id: string, message_id: number, input: LiveInboxContentInput): Promise<void> {
    const body = contentBody(input);
    const inbox = await this.#mutableInbox(ctx, session_id, 'live_inbox.replace');
    inbox.replace(message_id, body.content);
  }

  /** @throws InboxKitError as `SessionRuntimeService.liveInboxWithdraw`. */
  async withdraw(ctx: RequestContext, session_id: string, message_id: number): Promise<void> {
    const inbox = await this.#mutableInbox(ctx, session_id, 'live_inbox.withdraw');
    inbox.withdraw(message_id);
  }

  /** @throws InboxKitError as `SessionRuntimeService.liveInboxReorder`. */
  async reorder(ctx: RequestContext, session_id: string, input: LiveInboxOrderInput): Promise<void> {
    const body = parseOrThrow(liveInboxOrderBody, input, 'order');
    const inbox = await this.#mutableInbox(ctx, session_id, 'live_inbox.reorder');
    inbox.reorder(body.order);
  }

  /**
   * Visibility (404/500) → the write gate (403; 409 for an archived project or Session) → active
   * native attempt (410; when the Session's Run awaits tool results or confirmations, the message says so).
   */
  async #mutableInbox(ctx: RequestContext, session_id: string, action: WriteAction): Promise<LiveInboxQueue> {
    const sid = await liveInboxAccess(this.#deps.store, ctx.principal, session_id, action, this.#gates);
    const inbox = this.#deps.host.liveInbox(sid);
    if (inbox === undefined) {
      const awaiting = await this.#deps.store.getAwaitingRun?.(sid).catch(() => undefined);
      if (awaiting !== undefined) {
        throw new InboxKitError('live_inbox_inactive', 'The Session\'s Run awaits tool results or confirmations (requires_action): answer them, or send a user.interrupt, then steer the Run or send durable input.');
      }
      throw liveInboxInactive();
    }
    return inbox;
  }
}
