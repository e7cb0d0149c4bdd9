/**
 * `ProjectEventStore` on Kysely: the Project Event stream and the Operation Log. The gap-free
 * `sequence` is a counter on the project row (`projects.event_sequence`): `UPDATE … SET n = n + 1
 * RETURNING n` row-locks the project until commit, so writers of one project queue behind each
 * other and a rollback gives the number back.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { NewProjectEvent, OperationLog, ProjectEvent, ProjectEventStore } from '@inbox-kit/core';
import type { Database } from '../schema.js';
import { $, insertRecord, type StoreContext } from './context.js';
import { EVENT, LOG, fromJson, limitOf, num, toJson, type Codec } from './rows.js';

/**
 * `codec`'s values as a `select` list of the slots from `offset` on (a bare parameter there has no
 * type: JSON and numbers are cast), with `replace` for computed columns.
 */
export function selectedValues(codec: Codec<unknown>, offset: number, replace: Record<string, RawBuilder<unknown>> = {}): RawBuilder<unknown>[] {
  return codec.fields.map((f, i) => {
    const computed = replace[f.name];
    if (computed !== undefined) return computed;
    if (f.kind === 'json') return sql`cast(${$(offset + i)} as json)`;
    if (f.kind === 'number') return sql`cast(${$(offset + i)} as bigint)`;
    return sql`${$(offset + i)}`;
  });
}

/** The counter bump of the project in slot `slot` (the `counter` of the statements below). */
export const COUNTER = (slot: number) => sql`counter as (
  update projects set event_sequence = event_sequence + 1 where id = ${$(slot)} returning event_sequence
)`;

/**
 * The PostgreSQL statement that bumps the counter and inserts the event in one go, its values in
 * {@link EVENT} column order with the `sequence` column taken from the counter.
 */
const EVENT_WITH_COUNTER = () => sql<{ sequence: number }>`
  with ${COUNTER(EVENT.columns.indexOf('project_id'))}
  insert into project_events (${sql.raw(EVENT.columns.join(', '))})
  select ${sql.join(selectedValues(EVENT, 0, { sequence: sql`counter.event_sequence` }))}
  from counter
  returning sequence`;

/**
 * `appendAudited` on PostgreSQL: the counter bump, the Operation Log row and the event in one
 * statement (values: the {@link LOG} columns, then the {@link EVENT} columns). Both inserts select
 * from the counter, so a missing project writes neither.
 */
const AUDITED_WITH_COUNTER = () => {
  const logs = LOG.fields.length;
  return sql<{ sequence: number }>`
    with ${COUNTER(logs + EVENT.columns.indexOf('project_id'))},
    log as (
      insert into operation_logs (${sql.raw(LOG.columns.join(', '))})
      select ${sql.join(selectedValues(LOG, 0))} from counter
    )
    insert into project_events (${sql.raw(EVENT.columns.join(', '))})
    select ${sql.join(selectedValues(EVENT, logs, { sequence: sql`counter.event_sequence` }))}
    from counter
    returning sequence`;
};

/** What a read will return (the payload as its JSON text parses), with the sequence to come. */
export const storedEvent = (e: NewProjectEvent): ProjectEvent => EVENT.pick({ ...e, sequence: 0, payload: fromJson(toJson(e.payload)) });
const missing = (e: ProjectEvent) => new Error(`@inbox-kit/storage-kysely: appendProjectEvent: project ${e.project_id} does not exist`);

/** `event` with the sequence the statement returned. @throws when it returned no row (no such project). */
export const withSequence = (event: ProjectEvent, row: { sequence: unknown } | undefined): ProjectEvent => {
  if (!row) throw missing(event);
  event.sequence = num(row.sequence);
  return event;
};

/** The counter bump then the insert, on `trx` (engines without a data-modifying `WITH`). */
export async function appendEventOn(ctx: StoreContext, trx: Kysely<Database>, event: ProjectEvent): Promise<ProjectEvent> {
  const counter = (await ctx.compiled(trx, 'nextProjectEventSequence', () => trx.updateTable('projects')
    .set((eb) => ({ event_sequence: eb('event_sequence', '+', 1) }))
    .where('id', '=', $(0))
    .returning('event_sequence'), [event.project_id])).rows[0];
  if (!counter) throw missing(event);
  event.sequence = num(counter.event_sequence);
  await insertRecord(ctx, EVENT, event, trx);
  return event;
}

export function projectEventOps(ctx: StoreContext): ProjectEventStore {
  const { db, dialect, compiled, first, all } = ctx;
  const stored = storedEvent;
  const appendOn = (trx: Kysely<Database>, event: ProjectEvent) => appendEventOn(ctx, trx, event);
  return {
    async appendProjectEvent(e: NewProjectEvent) {
      const event = stored(e);
      if (dialect.counterAndInsertInOneStatement) {
        // One statement: the project row stays locked (from the counter bump to the commit) one
        // round trip less, which is what bounds concurrent writers of one project.
        return withSequence(event, (await compiled(db, 'appendProjectEvent', EVENT_WITH_COUNTER, EVENT.encode(event))).rows[0]);
      }
      return ctx.atomically((trx) => appendOn(trx, event));
    },
    async appendAudited(entry: OperationLog, e: NewProjectEvent) {
      const event = stored(e);
      if (dialect.counterAndInsertInOneStatement) {
        // One round trip for the whole audit of a write (issue 18).
        return withSequence(event, (await compiled(db, 'appendAudited', AUDITED_WITH_COUNTER, [...LOG.encode(entry), ...EVENT.encode(event)])).rows[0]);
      }
      return ctx.atomically(async (trx) => {
        await insertRecord(ctx, LOG, entry, trx);
        return appendOn(trx, event);
      });
    },
    async getProjectEvent(project_id, event_id) {
      const r = await db.selectFrom('project_events').select(EVENT.select(dialect))
        .where('id', '=', event_id).where('project_id', '=', project_id).executeTakeFirst();
      return r && EVENT.decode(r);
    },
    async listProjectEvents(q) {
      if (q.types !== undefined && q.types.length === 0) return [];
      if (q.types === undefined) {
        // Every stream's replay and catch-up, and every unfiltered events page: compiled once per
        // shape (with or without the session filter), like the other per-request reads.
        const session = q.session_id !== undefined;
        const args: unknown[] = [q.project_id, q.after, ...(session ? [q.session_id] : []), limitOf(q.limit)];
        const rows = await all<Record<string, unknown>>(`listProjectEvents(${session ? 'session' : ''})`, () => {
          let query = db.selectFrom('project_events').select(EVENT.select(dialect)).where('project_id', '=', $(0)).where('sequence', '>', $(1));
          if (session) query = query.where('session_id', '=', $(2));
          return query.orderBy('sequence', 'asc').limit($(session ? 3 : 2));
        }, ...args);
        return rows.map((r) => EVENT.decode(r));
      }
      let query = db.selectFrom('project_events').select(EVENT.select(dialect))
        .where('project_id', '=', q.project_id).where('sequence', '>', q.after);
      query = query.where('type', 'in', q.types);
      if (q.session_id !== undefined) query = query.where('session_id', '=', q.session_id);
      const rows = await query.orderBy('sequence', 'asc').limit(limitOf(q.limit)).execute();
      return rows.map((r) => EVENT.decode(r));
    },
    async lastProjectEventSequence(project_id) {
      const r = await first<{ last: unknown }>('lastProjectEventSequence', () => db.selectFrom('project_events')
        .select((eb) => eb.fn.max('sequence').as('last')).where('project_id', '=', $(0)), project_id);
      return r?.last == null ? 0 : num(r.last);
    },
    async appendOperationLog(l) {
      await insertRecord(ctx, LOG, l);
    },
    async listOperationLogs(q) {
      let query = db.selectFrom('operation_logs').select(LOG.select(dialect)).where('project_id', '=', q.project_id);
      const after = q.after;
      if (after) {
        query = query.where(({ eb, refTuple, tuple }) => eb(refTuple('created_at', 'id'), '<', tuple(after.created_at, after.id)));
      }
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limitOf(q.limit)).execute();
      return rows.map((r) => LOG.decode(r));
    },
    async listWorkspaceOperationLogs(q) {
      let query = db.selectFrom('operation_logs').select(LOG.select(dialect)).where('workspace_id', '=', q.workspace_id).where('project_id', 'is', null);
      const after = q.after;
      if (after) {
        query = query.where(({ eb, refTuple, tuple }) => eb(refTuple('created_at', 'id'), '<', tuple(after.created_at, after.id)));
      }
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limitOf(q.limit)).execute();
      return rows.map((r) => LOG.decode(r));
    },
  };
}
