/** `AgentStore` on Kysely: versioned agents (one row per version, the current one flagged `latest`), conditional update, archive once, keyset pages. */
import type { AgentStore } from '@inbox-kit/core';
import { $, insertRecord, type StoreContext } from './context.js';
import { AGENT, limitOf } from './rows.js';

export function agentOps(ctx: StoreContext): Required<AgentStore> {
  const { db, dialect, first } = ctx;
  const versions = (workspace_id: unknown, agent_id: unknown) => db.selectFrom('agents').select(AGENT.select(dialect))
    .where('workspace_id', '=', workspace_id as string).where('id', '=', agent_id as string);
  return {
    async insertAgent(agent) {
      await insertRecord(ctx, AGENT, agent);
    },
    async getAgent(workspace_id, agent_id, version) {
      const r = version === undefined
        ? await first<Record<string, unknown>>('getAgent:latest', () => versions($(0), $(1)).where('latest', '=', 1), workspace_id, agent_id)
        : await first<Record<string, unknown>>('getAgent:version', () => versions($(0), $(1)).where('version', '=', $(2)), workspace_id, agent_id, version);
      return r && AGENT.decode(r);
    },
    async pageAgents(workspace_id, query) {
      // Served by `agents_page_idx (workspace_id, latest, created_at, id)` (migration 0008).
      const dir = query.order === 'asc' ? 'asc' : 'desc';
      const cmp = dir === 'asc' ? '>' : '<';
      let q = db.selectFrom('agents').select(AGENT.select(dialect)).where('workspace_id', '=', workspace_id).where('latest', '=', 1);
      if (query.include_archived !== true) q = q.where('archived_at', 'is', null);
      const b = query.created_at;
      if (b?.gt !== undefined) q = q.where('created_at', '>', b.gt);
      if (b?.gte !== undefined) q = q.where('created_at', '>=', b.gte);
      if (b?.lt !== undefined) q = q.where('created_at', '<', b.lt);
      if (b?.lte !== undefined) q = q.where('created_at', '<=', b.lte);
      const after = query.after;
      if (after !== undefined) {
        q = q.where((eb) => eb.or([eb('created_at', cmp, after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', cmp, after.id)])]));
      }
      const rows = await q.orderBy('created_at', dir).orderBy('id', dir).limit(limitOf(query.limit)).execute();
      return rows.map((r) => AGENT.decode(r));
    },
    async listAgentVersions(workspace_id, agent_id, query) {
      const dir = query.order === 'asc' ? 'asc' : 'desc';
      let q = versions(workspace_id, agent_id);
      if (query.after_version !== undefined) q = q.where('version', dir === 'asc' ? '>' : '<', query.after_version);
      const rows = await q.orderBy('version', dir).limit(limitOf(query.limit)).execute();
      return rows.map((r) => AGENT.decode(r));
    },
    async updateAgent(workspace_id, agent_id, expected_version, next) {
      if (next.version !== expected_version + 1) throw new TypeError(`updateAgent: next.version must be ${expected_version + 1}`);
      return ctx.atomically(async (trx) => {
        // Conditional: the current version loses its flag only while it is `expected_version` and
        // not archived (the row stays locked until commit, so a concurrent update finds it gone).
        const r = await trx.updateTable('agents').set({ latest: 0 })
          .where('workspace_id', '=', workspace_id).where('id', '=', agent_id).where('version', '=', expected_version)
          .where('latest', '=', 1).where('archived_at', 'is', null).executeTakeFirst();
        if (Number(r.numUpdatedRows) === 0) return undefined;
        await insertRecord(ctx, AGENT, next, trx);
        return next;
      });
    },
    async archiveAgent(workspace_id, agent_id, at) {
      return ctx.atomically(async (trx) => {
        await trx.updateTable('agents').set({ archived_at: at })
          .where('workspace_id', '=', workspace_id).where('id', '=', agent_id).where('archived_at', 'is', null).execute();
        const r = await trx.selectFrom('agents').select(AGENT.select(dialect))
          .where('workspace_id', '=', workspace_id).where('id', '=', agent_id).where('latest', '=', 1).executeTakeFirst();
        return r && AGENT.decode(r as Record<string, unknown>);
      });
    },
  };
}
