/** `SessionStore` on Kysely, the turns of a Session: Floors and their Pages. */
import type { SessionStore } from '@inbox-kit/core';
import { $, insertRecord, type StoreContext } from './context.js';
import { FLOOR, PAGE, limitOf, num } from './rows.js';

/** The Floor and Page methods of `SessionStore`. */
export type TurnStore = Pick<SessionStore, 'insertFloor' | 'getFloor' | 'listFloors' | 'pageFloors' | 'lastFloorNumber' | 'insertPage' | 'getPage' | 'listPages' | 'pagePages'>;

export function turnOps(ctx: StoreContext): TurnStore {
  const { db, dialect } = ctx;
  return {
    async insertFloor(f) {
      await insertRecord(ctx, FLOOR, f);
    },
    async getFloor(workspace_id, floor_id) {
      const r = await db.selectFrom('floors').select(FLOOR.select(dialect))
        .where('id', '=', floor_id).where('workspace_id', '=', workspace_id).executeTakeFirst();
      return r && FLOOR.decode(r);
    },
    async listFloors(session_id) {
      const rows = await db.selectFrom('floors').select(FLOOR.select(dialect)).where('session_id', '=', session_id)
        .orderBy('number', 'asc').orderBy('branch', 'asc').orderBy('id', 'asc').execute();
      return rows.map((r) => FLOOR.decode(r));
    },
    async pageFloors(session_id, query) {
      let q = db.selectFrom('floors').select(FLOOR.select(dialect)).where('session_id', '=', session_id);
      const after = query.after;
      if (after !== undefined) {
        q = q.where((eb) => eb.or([
          eb('number', '>', after.number),
          eb.and([eb('number', '=', after.number), eb('branch', '>', after.branch)]),
          eb.and([eb('number', '=', after.number), eb('branch', '=', after.branch), eb('id', '>', after.id)]),
        ]));
      }
      const rows = await q.orderBy('number', 'asc').orderBy('branch', 'asc').orderBy('id', 'asc').limit(limitOf(query.limit)).execute();
      return rows.map((r) => FLOOR.decode(r));
    },
    async lastFloorNumber(session_id, branch) {
      // Every committed message reads it (compiled once: the build costs more than the read).
      const r = await ctx.first<{ last: unknown }>('lastFloorNumber', () => db.selectFrom('floors')
        .select((eb) => eb.fn.max('number').as('last'))
        .where('session_id', '=', $(0)).where('branch', '=', $(1)), session_id, branch);
      return r?.last === null || r?.last === undefined ? 0 : num(r.last);
    },
    async insertPage(p) {
      await insertRecord(ctx, PAGE, p);
    },
    async getPage(workspace_id, page_id) {
      const r = await db.selectFrom('pages').select(PAGE.select(dialect))
        .where('id', '=', page_id).where('workspace_id', '=', workspace_id).executeTakeFirst();
      return r && PAGE.decode(r);
    },
    async listPages(floor_id) {
      const rows = await db.selectFrom('pages').select(PAGE.select(dialect)).where('floor_id', '=', floor_id)
        .orderBy('version', 'asc').orderBy('id', 'asc').execute();
      return rows.map((r) => PAGE.decode(r));
    },
    async pagePages(floor_id, query) {
      let q = db.selectFrom('pages').select(PAGE.select(dialect)).where('floor_id', '=', floor_id);
      if (query.after_version !== undefined) q = q.where('version', '>', query.after_version);
      const rows = await q.orderBy('version', 'asc').orderBy('id', 'asc').limit(limitOf(query.limit)).execute();
      return rows.map((r) => PAGE.decode(r));
    },
  };
}
