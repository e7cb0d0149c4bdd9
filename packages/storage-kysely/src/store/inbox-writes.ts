/**
 * The Project Inbox's audited writes on Kysely (`InboxStore.insertInboxItemAudited`,
 * `decideInboxItemAudited`, and on PostgreSQL `decideInboxItemIfUnchanged` and
 * `insertInboxItemIfUnchanged`): the item's write, its
 * Operation Log row and its Project Event (the project's counter bumped) together. On PostgreSQL
 * each is one statement (data-modifying `WITH`s: one round trip instead of two or three, issue 33);
 * elsewhere the statements run one after another in one unit of work. Each writes everything or
 * nothing.
 */
import { sql } from 'kysely';
import type { InboxDecisionPatch, InboxItemStatus, InboxStore, NewProjectEvent, OperationLog, ProjectEvent, ProjectInboxItem, UnchangedMembership, UnchangedProject } from '@inbox-kit/core';
import { $, insertRecord, type StoreContext } from './context.js';
import { COUNTER, appendEventOn, selectedValues, storedEvent, withSequence } from './events.js';
import { EVENT, ITEM, LOG } from './rows.js';
import type { SqlDialect } from './dialect.js';

/**
 * The item, its log row and its event in one statement (PostgreSQL); values: the {@link ITEM}
 * columns, the {@link LOG} columns, the {@link EVENT} columns. Every insert selects from the counter
 * bump, so a missing project writes nothing (and returns no row).
 *
 * `guard` (`insertInboxItemIfUnchanged`): made only while the project and the caller's membership
 * are as read. The guard's slots follow the event's columns: project id, workspace, owner, status
 * and, with `'member'`, the member's account and role. The project row is held first (`FOR NO KEY
 * UPDATE`, as `lockProject` holds it: the `project` CTE is what every later part reads from, so it
 * is locked before anything else), then the membership row (`FOR SHARE OF m`, against its removal
 * or change: the order a membership write takes the two, so they never deadlock). READ COMMITTED
 * re-checks a locked row that a transaction it waited for changed, and skips one it deleted, so a
 * member removed or demoted, an archive or a change of owner committed first leaves `member`
 * empty: no counter bump, no insert, no row returned.
 */
const CREATE_AUDITED = (guard?: 'owner' | 'member') => {
  const items = ITEM.fields.length;
  const logs = LOG.fields.length;
  const at = items + logs + EVENT.fields.length;
  const counter = guard === undefined
    ? COUNTER(items + logs + EVENT.columns.indexOf('project_id'))
    : sql`project as (
      select id from projects where id = ${$(at)} and workspace_id = ${$(at + 1)} and account_id = ${$(at + 2)} and status = ${$(at + 3)}
      for no key update
    ),
    ${guard === 'member'
      ? sql`member as (
      select m.project_id from project_members m join project on m.project_id = project.id
      where m.account_id = ${$(at + 4)} and m.role = ${$(at + 5)}
      for share of m
    )`
      : sql`member as (select id as project_id from project)`},
    counter as (
      update projects set event_sequence = event_sequence + 1 where id = ${$(at)} and exists (select 1 from member) returning event_sequence
    )`;
  return sql<{ sequence: number }>`
    with ${counter},
    item as (
      insert into project_inbox_items (${sql.raw(ITEM.columns.join(', '))})
      select ${sql.join(selectedValues(ITEM, 0))} from counter
    ),
    log as (
      insert into operation_logs (${sql.raw(LOG.columns.join(', '))})
      select ${sql.join(selectedValues(LOG, items))} from counter
    )
    insert into project_events (${sql.raw(EVENT.columns.join(', '))})
    select ${sql.join(selectedValues(EVENT, items + logs, { sequence: sql`counter.event_sequence` }))}
    from counter
    returning sequence`;
};

/** Slots of the decision's conditional update (then the {@link LOG} and {@link EVENT} columns). */
const DECIDE_SLOTS = 7;

/**
 * The conditional decision and, only when it updated the row, the counter bump, the log row and
 * the event, in one statement (PostgreSQL). Answers the updated item (`i_` columns) with the
 * event's sequence, or no row when the item was not in the seen status.
 *
 * `guarded` (`decideInboxItemIfUnchanged`): made only if the project is still as it was read
 * (slots 7–9: workspace, owner, status), its row held as `lockProject` holds it (`FOR NO KEY
 * UPDATE`) before the item is updated: a concurrent archive or change of owner either committed
 * before (the lock's re-check of the newest row fails: no row, nothing written) or waits for this
 * statement. The log and event columns follow the guard's slots.
 */
const DECIDE_AUDITED = (dialect: SqlDialect, guarded: boolean) => {
  const logs = LOG.fields.length;
  const at = DECIDE_SLOTS + (guarded ? 3 : 0);
  const project = guarded
    ? sql`project as (
      select id from projects where id = ${$(4)} and workspace_id = ${$(7)} and account_id = ${$(8)} and status = ${$(9)}
      for no key update
    ),`
    : sql``;
  return sql<Record<string, unknown>>`
    with ${project} item as (
      update project_inbox_items set status = ${$(0)}, decided_by_account_id = ${$(1)}, decided_at = ${$(2)}, updated_at = ${$(3)}
      where project_id = ${$(4)} and id = ${$(5)} and status = ${$(6)}${guarded ? sql` and exists (select 1 from project)` : sql``}
      returning ${sql.raw(ITEM.selectRaw(dialect, 'project_inbox_items', 'i'))}
    ),
    counter as (
      update projects set event_sequence = event_sequence + 1 where id = ${$(4)} and exists (select 1 from item) returning event_sequence
    ),
    log as (
      insert into operation_logs (${sql.raw(LOG.columns.join(', '))})
      select ${sql.join(selectedValues(LOG, at))} from counter
    ),
    event as (
      insert into project_events (${sql.raw(EVENT.columns.join(', '))})
      select ${sql.join(selectedValues(EVENT, at + logs, { sequence: sql`counter.event_sequence` }))}
      from counter
      returning sequence
    )
    select item.*, event.sequence as inbox_kit_event_sequence from item left join event on true`;
};

export function inboxWriteOps(ctx: StoreContext): Pick<InboxStore, 'insertInboxItemAudited' | 'decideInboxItemAudited' | 'decideInboxItemIfUnchanged' | 'insertInboxItemIfUnchanged'> {
  const { db, dialect, compiled } = ctx;
  /** The item and event of a {@link DECIDE_AUDITED}-shaped answer, or undefined (no row: nothing written). */
  const decided = (r: Record<string, unknown> | undefined, event: ProjectEvent) => {
    if (!r) return undefined;
    // An updated item without its event means the project row is gone: throw (nothing commits).
    withSequence(event, r.inbox_kit_event_sequence == null ? undefined : { sequence: r.inbox_kit_event_sequence });
    return { item: ITEM.decode(r, 'i'), event };
  };
  const oneStatement: Pick<InboxStore, 'decideInboxItemIfUnchanged' | 'insertInboxItemIfUnchanged'> = !dialect.counterAndInsertInOneStatement ? {} : {
    async insertInboxItemIfUnchanged(seen: UnchangedProject, member: UnchangedMembership | undefined, item: ProjectInboxItem, entry: OperationLog, e: NewProjectEvent) {
      const event = storedEvent(e);
      const values = [...ITEM.encode(item), ...LOG.encode(entry), ...EVENT.encode(event), seen.project_id, seen.workspace_id, seen.owner_account_id, seen.project_status,
        ...(member ? [member.account_id, member.role] : [])];
      const name = member ? 'insertInboxItemIfUnchanged(member)' : 'insertInboxItemIfUnchanged(owner)';
      const r = (await compiled(db, name, () => CREATE_AUDITED(member ? 'member' : 'owner'), values)).rows[0];
      return r === undefined ? undefined : withSequence(event, r);
    },
    async decideInboxItemIfUnchanged(seen: UnchangedProject, item_id: string, seen_status: InboxItemStatus, patch: InboxDecisionPatch, entry: OperationLog, e: NewProjectEvent) {
      const event = storedEvent(e);
      const values = [patch.status, patch.decided_by_account_id, patch.decided_at, patch.updated_at, seen.project_id, item_id, seen_status,
        seen.workspace_id, seen.owner_account_id, seen.project_status, ...LOG.encode(entry), ...EVENT.encode(event)];
      return decided((await compiled(db, 'decideInboxItemIfUnchanged', () => DECIDE_AUDITED(dialect, true), values)).rows[0], event);
    },
  };
  return {
    ...oneStatement,
    async insertInboxItemAudited(item: ProjectInboxItem, entry: OperationLog, e: NewProjectEvent) {
      const event = storedEvent(e);
      if (dialect.counterAndInsertInOneStatement) {
        return withSequence(event, (await compiled(db, 'insertInboxItemAudited', () => CREATE_AUDITED(), [...ITEM.encode(item), ...LOG.encode(entry), ...EVENT.encode(event)])).rows[0]);
      }
      return ctx.atomically(async (trx) => {
        await insertRecord(ctx, ITEM, item, trx);
        await insertRecord(ctx, LOG, entry, trx);
        return appendEventOn(ctx, trx, event);
      });
    },
    async decideInboxItemAudited(project_id: string, item_id: string, seen_status: InboxItemStatus, patch: InboxDecisionPatch, entry: OperationLog, e: NewProjectEvent) {
      const event = storedEvent(e);
      const decision = [patch.status, patch.decided_by_account_id, patch.decided_at, patch.updated_at, project_id, item_id, seen_status];
      if (dialect.counterAndInsertInOneStatement) {
        return decided((await compiled(db, 'decideInboxItemAudited', () => DECIDE_AUDITED(dialect, false), [...decision, ...LOG.encode(entry), ...EVENT.encode(event)])).rows[0], event);
      }
      return ctx.atomically(async (trx) => {
        const r = (await compiled(trx, 'decideInboxItem', () => trx.updateTable('project_inbox_items')
          .set({ status: $(0), decided_by_account_id: $(1), decided_at: $(2), updated_at: $(3) })
          .where('project_id', '=', $(4)).where('id', '=', $(5)).where('status', '=', $(6))
          .returning(ITEM.select(dialect)), decision)).rows[0] as Record<string, unknown> | undefined;
        if (!r) return undefined;
        await insertRecord(ctx, LOG, entry, trx);
        return { item: ITEM.decode(r), event: await appendEventOn(ctx, trx, event) };
      });
    },
  };
}
