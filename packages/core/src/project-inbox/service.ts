/**
 * Project Inbox use cases: create, list, get, decide (project-inbox.md). Each write is one unit of
 * work: item + Operation Log row + Project Event (next sequence) commit together, and the event is
 * published to the bus only after commit.
 */
import { appendAudited } from '../audit.js';
import { InboxKitError } from '../errors.js';
import { DEFAULT_IDEMPOTENCY_TTL_MS, type RequestContext, type ServiceDeps } from '../context.js';
import { idempotencyRequestHash, parseIdempotencyKey } from '../idempotency.js';
import type { IdempotencyRecord, InboxDecisionPatch, NewProjectEvent, StoreTx } from '../ports/store.js';
import type { InboxDecision, JsonValue, OperationLog, Project, ProjectEvent, ProjectInboxItem } from '../records.js';
import { MAX_PAYLOAD_BYTES, measurePayload, parseOrThrow } from '../validation.js';
import { accessOf, loadProjectAccess, type ProjectAccess } from './access.js';
import { listInboxPage, listInboxPageJson, type InboxItemPage } from './list.js';
import { inboxPermissions, roleOf, visibilityOfEventType } from './permissions.js';
import { gateInboxItemWrite, gateProjectWrite, projectState } from '../policy/write-gate.js';
import { decideWrite } from '../policy/write-policy.js';
import { createInboxItemBody, decideInboxItemBody, listInboxItemsQuery } from './schemas.js';
import type { CreateInboxItemInput, DecideInboxItemInput, ListInboxItemsInput } from './schemas.js';
import { decisionEventType, transition } from './transition.js';
import { resolveSources, settle, unsettle, type ResolvedSources } from './sources.js';

export type { InboxItemPage } from './list.js';

/** Options of {@link ProjectInboxService.create}. */
export interface CreateInboxItemOptions {
  /**
   * The caller's `Idempotency-Key` (1–255 printable ASCII): a repeat with the same key and body
   * returns the first item instead of creating another. Scoped to the workspace and acting account.
   */
  idempotency_key?: string;
}

/** What {@link ProjectInboxService.createWithOutcome} returns. */
export interface CreateInboxItemOutcome {
  item: ProjectInboxItem;
  /** True when the item was created by an earlier request with the same `Idempotency-Key`. */
  replayed: boolean;
}

/** `resource_type` of the idempotency records of inbox item creates. */
const INBOX_ITEM_RESOURCE = 'project_inbox_item';

const itemNotFound = () => new InboxKitError('project_inbox_item_not_found', 'Project inbox item not found');


export class ProjectInboxService {
  readonly #idempotencyTtlMs: number;

  constructor(private readonly deps: ServiceDeps) {
    const ttl = deps.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
    if (!Number.isInteger(ttl) || ttl < 1) throw new TypeError(`idempotencyTtlMs must be an integer ≥ 1, got ${ttl}`);
    this.#idempotencyTtlMs = ttl;
  }

  /**
   * Retention (platform.md "Retention"): deletes the idempotency records older than the
   * retention window (`idempotencyTtlMs`, default 24 h), in batches of `batch` (default 1,000),
   * until none is left or `maxBatches` (default 100) ran. Call it periodically (the demo does,
   * every 10 minutes). Does nothing (returns 0) on a store without `sweepIdempotencyRecords`.
   * @returns how many records it deleted.
   * @throws the store's error (records already deleted stay deleted).
   */
  async sweepExpiredIdempotencyKeys(options: { batch?: number; maxBatches?: number } = {}): Promise<number> {
    const { store } = this.deps;
    if (!store.sweepIdempotencyRecords) return 0;
    const batch = options.batch ?? 1_000;
    const created_before = this.deps.clock.now() - this.#idempotencyTtlMs;
    let deleted = 0;
    for (let i = 0; i < (options.maxBatches ?? 100); i++) {
      const n = await store.sweepIdempotencyRecords({ created_before, limit: batch });
      deleted += n;
      if (n < batch) break;
    }
    return deleted;
  }

  /**
   * Files an item (owner or deriver). Check order: project visible (404) → may create (403) →
   * project active (409) → payload (400/413) → sources (404/409) → write.
   *
   * With `options.idempotency_key` (the `Idempotency-Key` header) the create is safe to repeat:
   * see {@link createWithOutcome}.
   * @throws InboxKitError validation_error, project_not_found, project_inbox_write_denied,
   *   project_archived, project_inbox_payload_invalid, project_inbox_payload_too_large,
   *   session_not_found, floor_not_found, page_not_found, project_inbox_source_scope_mismatch,
   *   idempotency_key_reused.
   */
  async create(ctx: RequestContext, project_id: string, input: CreateInboxItemInput, options: CreateInboxItemOptions = {}): Promise<ProjectInboxItem> {
    return (await this.createWithOutcome(ctx, project_id, input, options)).item;
  }

  /**
   * {@link create}, also telling whether the answer is a replay. With `options.idempotency_key`,
   * inside the create's one transaction, after the checks of a fresh request (project visible 404 →
   * may create 403 → project active 409 → payload 413), the key's record of `(workspace, acting
   * account, key)` is read —
   * - recorded with the same request hash (same project and same normalised body): the item it
   *   created is returned as the caller may read it now (as `get` answers), with `replayed: true`,
   *   and nothing is written or published;
   * - recorded with another request hash: 409 `idempotency_key_reused`;
   * - not recorded: the usual checks run, then the key is claimed (conditional insert) before the
   *   item, Operation Log row and Project Event are written, all in the same transaction. A
   *   concurrent request with the same key waits for that claim; the loser re-reads the winner's
   *   record and answers as above, so N concurrent requests make exactly one item.
   * A request that fails (any error) records nothing: the key stays free for a corrected retry.
   * @throws InboxKitError as {@link create}; validation_error when the key is not 1–255 printable ASCII.
   */
  async createWithOutcome(
    ctx: RequestContext, project_id: string, input: CreateInboxItemInput, options: CreateInboxItemOptions = {},
  ): Promise<CreateInboxItemOutcome> {
    const body = parseOrThrow(createInboxItemBody, input, 'inbox item');
    const key = options.idempotency_key === undefined ? undefined : parseIdempotencyKey(options.idempotency_key);
    const { value: payload, bytes } = measurePayload(body.payload === undefined || body.payload === null ? {} : body.payload, MAX_PAYLOAD_BYTES);
    const idempotency = key === undefined ? undefined : {
      scope: { workspace_id: ctx.principal.workspace_id, account_id: ctx.principal.account_id, key },
      request_hash: await idempotencyRequestHash('POST', `/projects/${project_id}/inbox`, { ...body, payload }),
    };
    if (idempotency === undefined) {
      const made = await this.createInOneStatement(ctx, project_id, body, payload, bytes);
      if (made !== undefined) { this.publish([made.event]); return { item: made.item, replayed: false }; }
    }
    const { events, item, replayed } = await this.deps.store.transaction(async (tx) => {
      // The sources are read first, before the project's lock (they are not locked either way), so
      // the lock is held for fewer statements — on PostgreSQL every create of the project waits
      // for it; their verdict (404/409) is given after the checks that come first (issue 33).
      const sourcesRead = await settle(resolveSources(tx, ctx.principal.workspace_id, project_id, body));
      // A replay answers only what the caller may see now: the checks of a fresh request run first.
      // Locked: the project's status and the caller's membership stay as read until commit.
      // The write gate (who may create, project active), the project locked until commit.
      const access = await gateProjectWrite(tx, ctx.principal, project_id, 'project_inbox.create');
      if (bytes > MAX_PAYLOAD_BYTES) {
        throw new InboxKitError('project_inbox_payload_too_large', `payload is ${bytes} bytes; the limit is ${MAX_PAYLOAD_BYTES}`);
      }
      if (idempotency) {
        let seen = await tx.findIdempotencyRecord(idempotency.scope);
        const expiredBefore = this.deps.clock.now() - this.#idempotencyTtlMs;
        if (seen && seen.created_at < expiredBefore && tx.sweepIdempotencyRecords) {
          // Past its retention the key is free: its record goes now (not only at the next sweep).
          await tx.sweepIdempotencyRecords({ created_before: expiredBefore, scope: idempotency.scope, limit: 1 });
          seen = undefined;
        }
        if (seen) return { item: await replayItem(tx, seen, idempotency.request_hash, access, ctx.principal.account_id), events: [] as ProjectEvent[], replayed: true };
      }
      const sources = unsettle(sourcesRead);
      const now = this.deps.clock.now();
      const id = this.deps.ids.next('pinbox');
      if (idempotency) {
        // Claim the key before writing: a concurrent request with the key waits here for our outcome.
        const claimed = await tx.insertIdempotencyRecord({
          ...idempotency.scope, request_hash: idempotency.request_hash, resource_type: INBOX_ITEM_RESOURCE, resource_id: id, created_at: now,
        });
        if (!claimed) {
          const winner = await tx.findIdempotencyRecord(idempotency.scope);
          if (!winner) throw new InboxKitError('conflict', 'The Idempotency-Key is in use by a concurrent request; try again');
          return { item: await replayItem(tx, winner, idempotency.request_hash, access, ctx.principal.account_id), events: [] as ProjectEvent[], replayed: true };
        }
      }
      const [item, entry, created] = this.creationRows(ctx, access.project, id, body, payload, bytes, sources, now);
      let event: ProjectEvent;
      if (tx.insertInboxItemAudited) {
        // The item, its Operation Log row and its event in one call (one statement on PostgreSQL).
        event = await tx.insertInboxItemAudited(item, entry, created);
      } else {
        await tx.insertInboxItem(item);
        event = await appendAudited(tx, entry, created);
      }
      return { item, events: [event], replayed: false };
    });
    this.publish(events);
    return { item, replayed };
  }

  /** The new item, its Operation Log row and its Project Event. */
  private creationRows(
    ctx: RequestContext, project: Project, id: string, body: { type: string; title: string | null }, payload: JsonValue, bytes: number,
    sources: ResolvedSources, now: number,
  ): [ProjectInboxItem, OperationLog, NewProjectEvent] {
    const item: ProjectInboxItem = {
      id,
      workspace_id: project.workspace_id,
      project_id: project.id,
      account_id: project.account_id,
      sender_account_id: ctx.principal.account_id,
      type: body.type,
      title: body.title,
      payload,
      ...sources,
      status: 'pending',
      decided_by_account_id: null,
      decided_at: null,
      created_at: now,
      updated_at: now,
    };
    const [entry, created] = this.auditRows(ctx, item, 'project_inbox_item.create', { payload_byte_count: bytes }, 'project_inbox.item.created', {
      inbox_item_id: item.id,
      type: item.type,
      title: item.title,
      status: item.status,
      sender_account_id: item.sender_account_id,
      ...sources,
    }, now);
    return [item, entry, created];
  }

  /**
   * The create without a transaction, where the store creates it in one statement
   * (`insertInboxItemIfUnchanged` with `getProjectWithAccess`, e.g. PostgreSQL): the project and the
   * caller's membership read once, the gate, the payload's size and the sources checked on them,
   * then the item, its Operation Log row and its event written only if the project and the
   * membership are still as read (held for that statement as the lock would hold them).
   * `undefined` — nothing written — whenever the answer is not a plain win (a refusal, a source that
   * does not resolve, a lost race): {@link createWithOutcome} then creates under the lock and
   * answers exactly as before. Not used with an `Idempotency-Key`. Spec: project-inbox.md "Create".
   */
  private async createInOneStatement(
    ctx: RequestContext, project_id: string, body: Parameters<typeof resolveSources>[3] & { type: string; title: string | null }, payload: JsonValue, bytes: number,
  ): Promise<{ item: ProjectInboxItem; event: ProjectEvent } | undefined> {
    const { store } = this.deps;
    if (!store.insertInboxItemIfUnchanged || !store.getProjectWithAccess || bytes > MAX_PAYLOAD_BYTES) return undefined;
    const { account_id, workspace_id } = ctx.principal;
    const read = await store.getProjectWithAccess(workspace_id, project_id, account_id);
    if (read === undefined) return undefined;
    const membership = read.membership?.project_id === read.project.id ? read.membership : undefined;
    const role = roleOf(read.project, account_id, membership?.role);
    if (role === null || decideWrite('project_inbox.create', role, projectState(read.project)) !== null) return undefined;
    const sources = await settle(resolveSources(store, workspace_id, read.project.id, body));
    if (!sources.ok) return undefined;
    const now = this.deps.clock.now();
    const [item, entry, created] = this.creationRows(ctx, read.project, this.deps.ids.next('pinbox'), body, payload, bytes, sources.value, now);
    const seen = { workspace_id: read.project.workspace_id, project_id: read.project.id, owner_account_id: read.project.account_id, project_status: read.project.status };
    const member = role === 'owner' || membership === undefined ? undefined : { account_id, role: membership.role };
    const event = await store.insertInboxItemIfUnchanged(seen, member, item, entry, created);
    return event === undefined ? undefined : { item, event };
  }

  /**
   * One page of the inbox (owner: all; deriver: only its own — another `sender_account_id` gives
   * an empty page), newest first (`list.ts`).
   * @throws InboxKitError validation_error, invalid_cursor, project_not_found, project_inbox_read_denied.
   */
  async list(ctx: RequestContext, project_id: string, input: ListInboxItemsInput = {}): Promise<InboxItemPage> {
    return listInboxPage(this.deps.store, ctx.principal, project_id, parseOrThrow(listInboxItemsQuery, input, 'query'));
  }

  /** {@link list}'s page as its JSON text, what `GET /projects/:id/inbox` answers (`listInboxPageJson`). @throws as {@link list}. */
  async listJson(ctx: RequestContext, project_id: string, input: ListInboxItemsInput = {}): Promise<string> {
    return listInboxPageJson(this.deps.store, ctx.principal, project_id, parseOrThrow(listInboxItemsQuery, input, 'query'));
  }

  /**
   * One item. A deriver reading an item it did not send gets the same 404 as for a missing item.
   * @throws InboxKitError project_not_found, project_inbox_read_denied, project_inbox_item_not_found.
   */
  async get(ctx: RequestContext, project_id: string, item_id: string): Promise<ProjectInboxItem> {
    const { store } = this.deps;
    let access: ProjectAccess;
    let item: ProjectInboxItem | undefined;
    if (store.getInboxItemWithAccess) {
      // One read for access and item (one round trip on PostgreSQL); the checks below keep their order.
      const read = await store.getInboxItemWithAccess(ctx.principal.workspace_id, project_id, ctx.principal.account_id, item_id);
      access = accessOf(read?.project, ctx.principal, read?.membership);
      item = read?.item;
    } else {
      access = await loadProjectAccess(store, ctx.principal, project_id);
    }
    const read = inboxPermissions(access.role).read;
    if (read === 'none') throw new InboxKitError('project_inbox_read_denied', 'This role may not read the inbox');
    if (!store.getInboxItemWithAccess) item = await store.getInboxItem(access.project.id, item_id);
    if (!item || (read === 'own' && item.sender_account_id !== ctx.principal.account_id)) throw itemNotFound();
    return item;
  }

  /**
   * Records the owner's decision. Check order: project visible (404) → may decide (403) → project
   * active (409) → item (404) → transition (409). Archiving an archived item returns it unchanged
   * and writes nothing. The update is conditional on the status that was read; the loser of a
   * race re-reads and answers from the new state.
   * @throws InboxKitError validation_error, project_not_found, project_inbox_decide_denied,
   *   project_archived, project_inbox_item_not_found, project_inbox_invalid_transition.
   */
  async decide(ctx: RequestContext, project_id: string, item_id: string, input: DecideInboxItemInput): Promise<ProjectInboxItem> {
    const body = parseOrThrow(decideInboxItemBody, input, 'decision');
    const unlocked = await this.decideInOneStatement(ctx, project_id, item_id, body);
    if (unlocked !== undefined) {
      this.publish([unlocked.event]);
      return unlocked.item;
    }
    const { item, events } = await this.deps.store.transaction(async (tx) => {
      // The project's lock, the caller's access and the item: one statement where the store has it.
      const gated = await gateInboxItemWrite(tx, ctx.principal, project_id, item_id, 'project_inbox.decide');
      const { access } = gated;
      // Statuses only move forward (pending → decided → archived), so a correct store needs at most
      // three rounds; more means the store's conditional update is broken.
      for (let round = 0; round < 4; round++) {
        const current = round === 0 ? gated.item : await tx.getInboxItem(access.project.id, item_id);
        if (!current) throw itemNotFound();
        const step = transition(current.status, body.decision);
        if (step.kind === 'invalid') {
          throw new InboxKitError('project_inbox_invalid_transition', `Cannot ${body.decision} an item that is ${current.status}`);
        }
        if (step.kind === 'noop') return { item: current, events: [] as ProjectEvent[] };
        const [patch, entry, announced] = this.decisionRows(ctx, current, step.to, body);
        if (tx.decideInboxItemAudited) {
          // The conditional update and, only when it won, the audit: one statement on PostgreSQL.
          const written = await tx.decideInboxItemAudited(access.project.id, item_id, current.status, patch, entry, announced);
          if (!written) continue; // lost a race: re-read and answer from the new state
          return { item: written.item, events: [written.event] };
        }
        const updated = await tx.decideInboxItem(access.project.id, item_id, current.status, patch);
        if (!updated) continue; // lost a race: re-read and answer from the new state
        return { item: updated, events: [await appendAudited(tx, entry, announced)] };
      }
      throw new InboxKitError('conflict', 'The item kept changing; try again');
    });
    this.publish(events);
    return item;
  }

  /**
   * The decision without a transaction, where the store decides it in one statement
   * (`decideInboxItemIfUnchanged`, e.g. PostgreSQL): the project, the caller's access and the item
   * read once, the gate and the transition checked on them, then the write made only if the
   * project and the item are still as read (the project row held for that statement, as its lock
   * would hold it). `undefined` — nothing written — whenever the answer is not a plain win (a
   * refusal, a no-op, a missing item, a lost race): {@link decide} then decides under the lock and
   * answers exactly as before. Spec: project-inbox.md "Decide".
   */
  private async decideInOneStatement(
    ctx: RequestContext, project_id: string, item_id: string, body: { decision: string; note: string | null },
  ): Promise<{ item: ProjectInboxItem; event: ProjectEvent } | undefined> {
    const { store } = this.deps;
    if (!store.decideInboxItemIfUnchanged || !store.getInboxItemWithAccess) return undefined;
    const read = await store.getInboxItemWithAccess(ctx.principal.workspace_id, project_id, ctx.principal.account_id, item_id);
    const current = read?.item;
    if (read === undefined || current === undefined) return undefined;
    const role = roleOf(read.project, ctx.principal.account_id, read.membership?.role);
    if (role === null || decideWrite('project_inbox.decide', role, projectState(read.project)) !== null) return undefined;
    const step = transition(current.status, body.decision as InboxDecision);
    if (step.kind !== 'change') return undefined;
    const [patch, entry, announced] = this.decisionRows(ctx, current, step.to, body);
    const seen = { workspace_id: read.project.workspace_id, project_id: read.project.id, owner_account_id: read.project.account_id, project_status: read.project.status };
    return store.decideInboxItemIfUnchanged(seen, item_id, current.status, patch, entry, announced);
  }

  /**
   * The patch of a decision moving `current` to `to`, and its audit (Operation Log row, Project
   * Event) from the item as the conditional update leaves it (only the patched columns change; the
   * write is void, and so is its audit, if the item changed first).
   */
  private decisionRows(
    ctx: RequestContext, current: ProjectInboxItem, to: ProjectInboxItem['status'], body: { decision: string; note: string | null },
  ): [InboxDecisionPatch, OperationLog, NewProjectEvent] {
    const now = this.deps.clock.now();
    const patch: InboxDecisionPatch = { status: to, decided_by_account_id: ctx.principal.account_id, decided_at: now, updated_at: now };
    const decided = { ...current, ...patch };
    const [entry, announced] = this.auditRows(ctx, decided, 'project_inbox_item.decide', { decision: body.decision, note: body.note },
      decisionEventType(body.decision as InboxDecision), {
        inbox_item_id: decided.id,
        type: decided.type,
        status: decided.status,
        decision: body.decision,
        sender_account_id: decided.sender_account_id,
        decided_by_account_id: ctx.principal.account_id,
        source_event_id: decided.source_event_id,
        source_session_id: decided.source_session_id,
        source_floor_id: decided.source_floor_id,
        source_page_id: decided.source_page_id,
      }, now);
    return [patch, entry, announced];
  }

  /** Accept shorthand for {@link decide}. */
  accept(ctx: RequestContext, project_id: string, item_id: string, note?: string | null) {
    return this.decide(ctx, project_id, item_id, { decision: 'accept', note });
  }

  /** Reject shorthand for {@link decide}. */
  reject(ctx: RequestContext, project_id: string, item_id: string, note?: string | null) {
    return this.decide(ctx, project_id, item_id, { decision: 'reject', note });
  }

  /** Archive shorthand for {@link decide}. */
  archive(ctx: RequestContext, project_id: string, item_id: string, note?: string | null) {
    return this.decide(ctx, project_id, item_id, { decision: 'archive', note });
  }

  /** The Operation Log row and the Project Event (sequence to come) of a write to `item`. */
  private auditRows(
    ctx: RequestContext, item: ProjectInboxItem, action: string, metadata: ProjectEvent['payload'],
    eventType: string, eventPayload: ProjectEvent['payload'], now: number,
  ): [OperationLog, NewProjectEvent] {
    const logId = this.deps.ids.next('oplog');
    return [{
      id: logId,
      workspace_id: item.workspace_id,
      project_id: item.project_id,
      actor_account_id: ctx.principal.account_id,
      action,
      target_type: 'project_inbox_item',
      target_id: item.id,
      request_id: ctx.request_id,
      metadata,
      created_at: now,
    }, {
      id: this.deps.ids.next('evt'),
      workspace_id: item.workspace_id,
      project_id: item.project_id,
      type: eventType,
      actor_account_id: ctx.principal.account_id,
      session_id: item.source_session_id,
      floor_id: item.source_floor_id,
      page_id: item.source_page_id,
      operation_log_id: logId,
      correlation_id: ctx.request_id,
      causation_event_id: item.source_event_id,
      payload: eventPayload,
      visibility: visibilityOfEventType(eventType),
      source: ctx.source ?? 'api',
      created_at: now,
    }];
  }

  private publish(events: ProjectEvent[]): void {
    for (const event of events) {
      try {
        this.deps.bus.publish({ kind: 'project_event', event });
      } catch (error) {
        this.deps.onPublishError?.(error);
      }
    }
  }
}

/**
 * The answer to a request whose key is already recorded, after the checks of a fresh request
 * passed for `access`: the recorded item as the caller may read it now (as `get` would answer),
 * when the request is the same, else 409 `idempotency_key_reused`.
 * @throws InboxKitError idempotency_key_reused; project_inbox_item_not_found when the caller may
 *   no longer read the item.
 */
async function replayItem(tx: StoreTx, record: IdempotencyRecord, request_hash: string, access: ProjectAccess, account_id: string): Promise<ProjectInboxItem> {
  if (record.request_hash !== request_hash || record.resource_type !== INBOX_ITEM_RESOURCE) {
    throw new InboxKitError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request');
  }
  const read = inboxPermissions(access.role).read;
  const item = await tx.getInboxItem(access.project.id, record.resource_id);
  if (!item || read === 'none' || (read === 'own' && item.sender_account_id !== account_id)) throw itemNotFound();
  return item;
}
