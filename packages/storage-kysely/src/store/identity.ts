/**
 * `IdentityStore` on Kysely: workspaces, accounts (their workspace memberships, disabled or not)
 * and API keys. `disableWorkspaceAccount` is two conditional updates in one unit of work
 * (`enableWorkspaceAccount` one);
 * `lockWorkspaceAccount` holds the membership (and account) row as `lockProject` holds a project.
 */
import type { IdentityStore, WorkspaceAccount } from '@inbox-kit/core';
import { $, insertRecord, type StoreContext } from './context.js';
import { ACCOUNT, API_KEY, WORKSPACE, num, qualified } from './rows.js';

export function identityOps(ctx: StoreContext): IdentityStore {
  const { db, dialect, first } = ctx;
  /** The account of the workspace with its membership (disabled or not), as a select on `executor`. */
  const workspaceAccounts = (executor = db) => executor.selectFrom('accounts')
    .innerJoin('workspace_members', 'workspace_members.account_id', 'accounts.id')
    .select(qualified(ACCOUNT))
    .select(['workspace_members.workspace_id as workspace_id', 'workspace_members.disabled_at as disabled_at']);
  const decodeMember = (r: Record<string, unknown>): WorkspaceAccount => ({
    ...ACCOUNT.decode(r), workspace_id: r['workspace_id'] as string, disabled_at: r['disabled_at'] == null ? null : num(r['disabled_at']),
  });
  return {
    async insertWorkspace(w) {
      await insertRecord(ctx, WORKSPACE, w);
    },
    async getWorkspace(id) {
      const r = await db.selectFrom('workspaces').select(WORKSPACE.select(dialect)).where('id', '=', id).executeTakeFirst();
      return r && WORKSPACE.decode(r);
    },
    async listWorkspaces() {
      const rows = await db.selectFrom('workspaces').select(WORKSPACE.select(dialect)).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
      return rows.map((r) => WORKSPACE.decode(r));
    },
    async insertAccount(a, workspace_ids) {
      await ctx.atomically(async (trx) => {
        await insertRecord(ctx, ACCOUNT, a, trx);
        const ids = [...new Set(workspace_ids)];
        if (ids.length > 0) {
          await trx.insertInto('workspace_members').values(ids.map((workspace_id) => ({ workspace_id, account_id: a.id, disabled_at: null }))).execute();
        }
      });
    },
    async getWorkspaceAccount(workspace_id, account_id) {
      const r = await db.selectFrom('accounts')
        .innerJoin('workspace_members', 'workspace_members.account_id', 'accounts.id')
        .select(qualified(ACCOUNT))
        .where('workspace_members.workspace_id', '=', workspace_id)
        .where('accounts.id', '=', account_id)
        .where('workspace_members.disabled_at', 'is', null)
        .executeTakeFirst();
      return r && ACCOUNT.decode(r);
    },
    async listWorkspaceAccounts(workspace_id) {
      const rows = await workspaceAccounts().where('workspace_members.workspace_id', '=', workspace_id)
        .orderBy('accounts.created_at', 'desc').orderBy('accounts.id', 'desc').execute();
      return rows.map((r) => decodeMember(r as Record<string, unknown>));
    },
    async lockWorkspaceAccount(workspace_id, account_id) {
      const r = await dialect.holdRows(workspaceAccounts().where('workspace_members.workspace_id', '=', workspace_id).where('accounts.id', '=', account_id))
        .executeTakeFirst();
      return r && decodeMember(r as Record<string, unknown>);
    },
    async disableWorkspaceAccount(workspace_id, account_id, at) {
      return ctx.atomically(async (trx) => {
        const updated = await trx.updateTable('workspace_members').set({ disabled_at: at })
          .where('workspace_id', '=', workspace_id).where('account_id', '=', account_id).where('disabled_at', 'is', null)
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) === 0) return undefined;
        await trx.updateTable('api_keys').set({ revoked_at: at })
          .where('workspace_id', '=', workspace_id).where('account_id', '=', account_id)
          .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', at)]))
          .execute();
        const r = await workspaceAccounts(trx).where('workspace_members.workspace_id', '=', workspace_id).where('accounts.id', '=', account_id).executeTakeFirst();
        return r && decodeMember(r as Record<string, unknown>);
      });
    },
    async enableWorkspaceAccount(workspace_id, account_id) {
      return ctx.atomically(async (trx) => {
        const updated = await trx.updateTable('workspace_members').set({ disabled_at: null })
          .where('workspace_id', '=', workspace_id).where('account_id', '=', account_id).where('disabled_at', 'is not', null)
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) === 0) return undefined;
        const r = await workspaceAccounts(trx).where('workspace_members.workspace_id', '=', workspace_id).where('accounts.id', '=', account_id).executeTakeFirst();
        return r && decodeMember(r as Record<string, unknown>);
      });
    },
    async insertApiKey(k) {
      await insertRecord(ctx, API_KEY, k);
    },
    async findApiKeyByHash(key_hash) {
      const r = await first<Record<string, unknown>>('findApiKeyByHash', () => db.selectFrom('api_keys').select(API_KEY.select(dialect)).where('key_hash', '=', $(0)), key_hash);
      return r && API_KEY.decode(r);
    },
    async getApiKey(workspace_id, key_id) {
      const r = await db.selectFrom('api_keys').select(API_KEY.select(dialect)).where('id', '=', key_id).where('workspace_id', '=', workspace_id).executeTakeFirst();
      return r && API_KEY.decode(r);
    },
    async listApiKeys(workspace_id, q) {
      let query = db.selectFrom('api_keys').select(API_KEY.select(dialect)).where('workspace_id', '=', workspace_id);
      if (q.account_id !== undefined) query = query.where('account_id', '=', q.account_id);
      const active_at = q.active_at;
      if (active_at !== undefined) query = query.where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', active_at)]));
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
      return rows.map((r) => API_KEY.decode(r));
    },
    async revokeApiKey(id, at) {
      // The earliest revocation is kept: a scheduled one (a rotation's grace) can only come forward.
      await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id)
        .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', at)])).execute();
    },
    async recordApiKeyUse(id, at) {
      await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)])).execute();
    },
  };
}
