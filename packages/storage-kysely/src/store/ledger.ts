/**
 * `SessionStore` on Kysely, the Session ledger: the gap-free `seq` is a counter on the Session row
 * (`sessions.event_seq`), bumped by a block per Session inside the unit of work.
 */
import { sql } from 'kysely';
import type { NewSessionEvent, SessionEvent, SessionStore } from '@inbox-kit/core';
import { $, type StoreContext } from './context.js';
import { SESSION_EVENT, fromJson, limitOf, num, toJson } from './rows.js';

/** Inserts of up to this many Session events are compiled once per row count (a Run's commits append a few). */
const COMPILED_INSERT_ROWS = 8;

/** The ledger methods of `SessionStore`. */
export type LedgerStore = Pick<SessionStore, 'appendSessionEvents' | 'listSessionEvents' | 'lastSessionEventSeq'>;

export function ledgerOps(ctx: StoreContext): LedgerStore {
  const { db, dialect } = ctx;
  return {
    async appendSessionEvents(events: NewSessionEvent[]) {
      if (events.length === 0) return [];
      return ctx.atomically(async (trx) => {
        // Reserve a block of `seq` values per session. Sessions are locked in id order, so two calls
        // touching the same sessions cannot deadlock.
        const counts = new Map<string, number>();
        for (const e of events) counts.set(e.session_id, (counts.get(e.session_id) ?? 0) + 1);
        const next = new Map<string, number>();
        for (const session_id of [...counts.keys()].sort()) {
          const n = counts.get(session_id) ?? 0;
          const [counter] = (await ctx.compiled(trx, 'bumpSessionEventSeq', () => trx.updateTable('sessions')
            .set((eb) => ({ event_seq: eb('event_seq', '+', $(0)) }))
            .where('id', '=', $(1))
            .returning('event_seq'), [n, session_id])).rows;
          if (!counter) throw new Error(`@inbox-kit/storage-kysely: appendSessionEvents: session ${session_id} does not exist`);
          next.set(session_id, num(counter.event_seq) - n + 1);
        }
        const stored: SessionEvent[] = events.map((e) => {
          const seq = next.get(e.session_id) ?? 0;
          next.set(e.session_id, seq + 1);
          return SESSION_EVENT.pick({ ...e, seq, content: fromJson(toJson(e.content)) });
        });
        if (stored.length <= COMPILED_INSERT_ROWS) {
          // A Run's commit appends a few events: the insert of that many rows is compiled once.
          const columns = SESSION_EVENT.columns;
          await ctx.compiled(trx, `insertSessionEvents:${stored.length}`, () => trx.insertInto('session_events')
            .values(stored.map((_, r) => Object.fromEntries(columns.map((column, i) => [column, $(r * columns.length + i)]))) as never),
          stored.flatMap((s) => SESSION_EVENT.encode(s)));
        } else {
          await trx.insertInto('session_events').values(stored.map((s) => SESSION_EVENT.row(s)) as never).execute();
        }
        return stored;
      });
    },
    async listSessionEvents(q) {
      let query = db.selectFrom('session_events').select(SESSION_EVENT.select(dialect))
        .where('session_id', '=', q.session_id).where('seq', '>', q.after);
      if (q.before !== undefined) query = query.where('seq', '<', q.before);
      if (q.types !== undefined) query = q.types.length === 0 ? query.where(sql<boolean>`1 = 0`) : query.where('type', 'in', q.types);
      const b = q.processed_at;
      if (b?.gt !== undefined) query = query.where('processed_at', '>', b.gt);
      if (b?.gte !== undefined) query = query.where('processed_at', '>=', b.gte);
      if (b?.lt !== undefined) query = query.where('processed_at', '<', b.lt);
      if (b?.lte !== undefined) query = query.where('processed_at', '<=', b.lte);
      const rows = await query.orderBy('seq', q.order === 'desc' ? 'desc' : 'asc').limit(limitOf(q.limit)).execute();
      return rows.map((r) => SESSION_EVENT.decode(r));
    },
    async lastSessionEventSeq(session_id) {
      const r = await db.selectFrom('session_events').select((eb) => eb.fn.max('seq').as('last'))
        .where('session_id', '=', session_id).executeTakeFirst();
      return r?.last == null ? 0 : num(r.last);
    },
  };
}
