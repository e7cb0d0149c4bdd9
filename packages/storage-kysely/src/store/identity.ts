/** `IdentityStore` on Kysely: workspaces, accounts (and their workspaces) and API keys. */
import type { IdentityStore } from '@inbox-kit/core';
import { $, insertRecord, type StoreContext } from './context.js';
import { ACCOUNT, API_KEY, WORKSPACE, qualified } from './rows.js';

export function identityOps(ctx: StoreContext): IdentityStore {
  const { db, dialect, first } = ctx;
  return {
    async insertWorkspace(w) {
      await insertRecord(ctx, WORKSPACE, w);
    },
    async getWorkspace(id) {
      const r = await db.selectFrom('workspaces').select(WORKSPACE.select(dialect)).where('id', '=', id).executeTakeFirst();
      return r && WORKSPACE.decode(r);
    },
    async insertAccount(a, workspace_ids) {
      await ctx.atomically(async (trx) => {
        await insertRecord(ctx, ACCOUNT, a, trx);
        const ids = [...new Set(workspace_ids)];
        if (ids.length > 0) {
          await trx.insertInto('workspace_members').values(ids.map((workspace_id) => ({ workspace_id, account_id: a.id }))).execute();
        }
      });
    },
    async getWorkspaceAccount(workspace_id, account_id) {
      const r = await db.selectFrom('accounts')
        .innerJoin('workspace_members', 'workspace_members.account_id', 'accounts.id')
        .select(qualified(ACCOUNT))
        .where('workspace_members.workspace_id', '=', workspace_id)
        .where('accounts.id', '=', account_id)
        .executeTakeFirst();
      return r && ACCOUNT.decode(r);
    },
    async insertApiKey(k) {
      await insertRecord(ctx, API_KEY, k);
    },
    async findApiKeyByHash(key_hash) {
      const r = await first<Record<string, unknown>>('findApiKeyByHash', () => db.selectFrom('api_keys').select(API_KEY.select(dialect)).where('key_hash', '=', $(0)), key_hash);
      return r && API_KEY.decode(r);
    },
    async revokeApiKey(id, at) {
      await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    },
  };
}
