/**
 * `ProjectEventStore` on Kysely: the Project Event stream and the Operation Log. The gap-free
 * `sequence` is a counter on the project row (`projects.event_sequence`): `UPDATE … SET n = n + 1
 * RETURNING n` row-locks the project until commit, so writers of one project queue behind each
 * other and a rollback gives the number back.
 */
import { sql } from 'kysely';
import type { NewProjectEvent, ProjectEventStore } from '@inbox-kit/core';
import { $, insertRecord, type StoreContext } from './context.js';
import { EVENT, LOG, fromJson, limitOf, num, toJson } from './rows.js';

/**
 * The PostgreSQL statement that bumps the counter and inserts the event in one go, its values in
 * {@link EVENT} column order with the `sequence` column taken from the counter.
 */
const EVENT_WITH_COUNTER = () => {
  const values = EVENT.fields.map((f, i) => {
    if (f.name === 'sequence') return sql`counter.event_sequence`;
    if (f.kind === 'json') return sql`cast(${$(i)} as json)`;
    if (f.kind === 'number') return sql`cast(${$(i)} as bigint)`;
    return sql`${$(i)}`;
  });
  const projectId = EVENT.columns.indexOf('project_id');
  return sql<{ sequence: number }>`
    with counter as (
      update projects set event_sequence = event_sequence + 1 where id = ${$(projectId)} returning event_sequence
    )
    insert into project_events (${sql.raw(EVENT.columns.join(', '))})
    select ${sql.join(values)}
    from counter
    returning sequence`;
};

export function projectEventOps(ctx: StoreContext): ProjectEventStore {
  const { db, dialect, compiled } = ctx;
  return {
    async appendProjectEvent(e: NewProjectEvent) {
      // What a read will return (the payload as its JSON text parses), with the sequence to come.
      const event = EVENT.pick({ ...e, sequence: 0, payload: fromJson(toJson(e.payload)) });
      const missing = () => new Error(`@inbox-kit/storage-kysely: appendProjectEvent: project ${e.project_id} does not exist`);
      if (dialect.counterAndInsertInOneStatement) {
        // One statement: the project row stays locked (from the counter bump to the commit) one
        // round trip less, which is what bounds concurrent writers of one project.
        const row = (await compiled(db, 'appendProjectEvent', EVENT_WITH_COUNTER, EVENT.encode(event))).rows[0];
        if (!row) throw missing();
        event.sequence = num(row.sequence);
        return event;
      }
      return ctx.atomically(async (trx) => {
        const counter = (await compiled(trx, 'nextProjectEventSequence', () => trx.updateTable('projects')
          .set((eb) => ({ event_sequence: eb('event_sequence', '+', 1) }))
          .where('id', '=', $(0))
          .returning('event_sequence'), [e.project_id])).rows[0];
        if (!counter) throw missing();
        event.sequence = num(counter.event_sequence);
        await insertRecord(ctx, EVENT, event, trx);
        return event;
      });
    },
    async getProjectEvent(project_id, event_id) {
      const r = await db.selectFrom('project_events').select(EVENT.select(dialect))
        .where('id', '=', event_id).where('project_id', '=', project_id).executeTakeFirst();
      return r && EVENT.decode(r);
    },
    async listProjectEvents(q) {
      if (q.types !== undefined && q.types.length === 0) return [];
      let query = db.selectFrom('project_events').select(EVENT.select(dialect))
        .where('project_id', '=', q.project_id).where('sequence', '>', q.after);
      if (q.types !== undefined) query = query.where('type', 'in', q.types);
      if (q.session_id !== undefined) query = query.where('session_id', '=', q.session_id);
      const rows = await query.orderBy('sequence', 'asc').limit(limitOf(q.limit)).execute();
      return rows.map((r) => EVENT.decode(r));
    },
    async lastProjectEventSequence(project_id) {
      const r = await db.selectFrom('project_events').select((eb) => eb.fn.max('sequence').as('last'))
        .where('project_id', '=', project_id).executeTakeFirst();
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
  };
}
