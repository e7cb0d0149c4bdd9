/**
 * The identity sub-port of the storage port (`../store.ts`): workspaces, accounts and API keys —
 * who is calling (platform.md "Identity and credentials", "Administration"). Conformance group `identity`.
 */
import type { Account, ApiKey, Workspace, WorkspaceAccount } from '../../records.js';

/** Query of {@link IdentityStore.listApiKeys}. */
export interface ApiKeyQuery {
  /** Only the keys of this account (of the asked workspace). */
  account_id?: string;
  /**
   * Only the keys still accepted at this time (ms): `revoked_at` null or after it (a key in a
   * rotation's grace period is listed until its grace ends). Absent: revoked keys too.
   */
  active_at?: number;
}

/**
 * Workspaces, accounts and API keys: who is calling (platform.md "Identity and credentials", "Administration").
 * Conformance group `identity`. The methods marked OPTIONAL arrived with the administration
 * routes (storage README "How the port grows"): without them the `/admin` use cases that need
 * them answer 400 `unsupported_capability`, and everything else works.
 */
export interface IdentityStore {
  insertWorkspace(workspace: Workspace): Promise<void>;
  getWorkspace(id: string): Promise<Workspace | undefined>;
  /** OPTIONAL. Every workspace, oldest first (`created_at` ascending, then `id` in byte order). */
  listWorkspaces?(): Promise<Workspace[]>;
  insertAccount(account: Account, workspace_ids: string[]): Promise<void>;
  /**
   * The account, only if it is a member of `workspace_id` and not disabled there
   * ({@link disableWorkspaceAccount}): a disabled account is treated exactly as a non-member.
   */
  getWorkspaceAccount(workspace_id: string, account_id: string): Promise<Account | undefined>;
  /**
   * OPTIONAL. Every account of the workspace with its membership (`disabled_at` included),
   * newest first (`created_at` descending, then `id` descending in byte order).
   */
  listWorkspaceAccounts?(workspace_id: string): Promise<WorkspaceAccount[]>;
  /**
   * OPTIONAL. The account of the workspace, disabled or not (`undefined` when it is not a member),
   * holding its membership row against concurrent writers until the caller's transaction ends
   * (as {@link ProjectStore.lockProject}; outside a transaction a plain read). Issuing a key and
   * disabling the account both call it first in their transaction, so no key is issued to an
   * account after its disabling committed.
   */
  lockWorkspaceAccount?(workspace_id: string, account_id: string): Promise<WorkspaceAccount | undefined>;
  /**
   * OPTIONAL. Conditional and atomic: sets the membership's `disabled_at = at` only while it is
   * null, and in the same transaction revokes (as {@link revokeApiKey}, at `at`) every key of the
   * account in that workspace. Returns the updated account, or `undefined` when it is not a
   * member or was already disabled (then nothing is written). Keys of the account in other
   * workspaces are untouched.
   */
  disableWorkspaceAccount?(workspace_id: string, account_id: string, at: number): Promise<WorkspaceAccount | undefined>;
  /**
   * OPTIONAL. Conditional and atomic: clears the membership's `disabled_at` only while it is set
   * (the account is a member again). Its keys stay revoked: the account needs a new key. Returns
   * the updated account, or `undefined` when it is not a member or was not disabled (then nothing
   * is written).
   */
  enableWorkspaceAccount?(workspace_id: string, account_id: string): Promise<WorkspaceAccount | undefined>;
  insertApiKey(key: ApiKey): Promise<void>;
  /** The key with this hash, revoked or not (the caller checks `revoked_at`). */
  findApiKeyByHash(key_hash: string): Promise<ApiKey | undefined>;
  /** OPTIONAL. The key `key_id`, only if it belongs to `workspace_id` (scoping rule), revoked or not. */
  getApiKey?(workspace_id: string, key_id: string): Promise<ApiKey | undefined>;
  /**
   * OPTIONAL. The workspace's keys matching `query`, newest first (`created_at` descending, then
   * `id` descending in byte order). Never a key of another workspace.
   */
  listApiKeys?(workspace_id: string, query: ApiKeyQuery): Promise<ApiKey[]>;
  /**
   * Revokes the key from `at` on (ms; a future time schedules it: a rotation's grace period).
   * MUST keep the earliest revocation: sets `revoked_at = at` only while it is null or later than
   * `at`, so a revocation can be brought forward and never postponed.
   */
  revokeApiKey(id: string, at: number): Promise<void>;
  /**
   * OPTIONAL. Records that the key authenticated a request at `at` (ms): sets `last_used_at = at`
   * only while it is null or earlier than `at` (never backwards). The services call it at most
   * about once a minute per key, never awaiting it on a request's path.
   */
  recordApiKeyUse?(id: string, at: number): Promise<void>;
}
