/**
 * The agents sub-port of the storage port (`../store.ts`): versioned agent definitions
 * (live-inbox.md "Managed Agents compatibility"). Conformance group `agents`.
 */
import type { Agent } from '../../records.js';
import type { TimeBounds } from './common.js';

/** Query of {@link AgentStore.pageAgents}. */
export interface AgentPageQuery {
  order: 'asc' | 'desc';
  /** Keyset: the last `(created_at, id)` of the previous page. */
  after?: { created_at: number; id: string };
  limit: number;
  /** False (default): archived agents are left out. */
  include_archived?: boolean;
  created_at?: TimeBounds;
}

/**
 * Agents created through `/v1/agents` (live-inbox.md "Agents"): versioned rows of one workspace.
 * Conformance group `agents`. Every method is OPTIONAL (added in a minor release; without them the
 * `/v1/agents` routes answer 400 `unsupported_capability` and only the deployment's configured
 * agents exist), but a store implements all of them or none.
 */
export interface AgentStore {
  /**
   * Inserts `agent` (its `version`, normally 1) as the agent's current version. A second insert of
   * the same id fails (the driver's unique violation).
   */
  insertAgent?(agent: Agent): Promise<void>;
  /**
   * The agent `agent_id` of `workspace_id` (scoping rule: another workspace's → `undefined`): its
   * `version` when given (`undefined` when it has none such), else its current (highest) version.
   * `archived_at` is the agent's, on every version.
   */
  getAgent?(workspace_id: string, agent_id: string, version?: number): Promise<Agent | undefined>;
  /**
   * One keyset page of the workspace's agents, each at its current version: ordered by
   * `(created_at, id)` (`desc` or `asc`, id in byte order), strictly after `after`, at most `limit`;
   * archived ones only with `include_archived`; `created_at` bounds in ms.
   */
  pageAgents?(workspace_id: string, query: AgentPageQuery): Promise<Agent[]>;
  /**
   * The versions of one agent of `workspace_id`, by `version` (`desc` newest first, or `asc`),
   * strictly after `after_version` in that order, at most `limit`.
   */
  listAgentVersions?(workspace_id: string, agent_id: string, query: { order: 'asc' | 'desc'; after_version?: number; limit: number }): Promise<Agent[]>;
  /**
   * Conditional update: stores `next` (whose `version` MUST be `expected_version + 1`) as the
   * agent's new current version only while its current version is `expected_version` and it is
   * not archived, and returns `next`; else `undefined` (another writer won, or it was archived).
   * MUST NOT be check-then-write: of N concurrent updates from one version, exactly one succeeds.
   * Older versions stay readable.
   */
  updateAgent?(workspace_id: string, agent_id: string, expected_version: number, next: Agent): Promise<Agent | undefined>;
  /**
   * Archives the agent (every version) once: sets `archived_at` where it is null. Returns the
   * current version as stored afterwards (archived earlier: unchanged), or `undefined` when the
   * workspace has no such agent.
   */
  archiveAgent?(workspace_id: string, agent_id: string, at: number): Promise<Agent | undefined>;
}
