/**
 * The audit sub-port of the storage port (`../store.ts`): Project Events (sequenced per project)
 * and the Operation Log, appended in the transaction of the write they record (platform.md
 * "Project Events", "Operation Log"). Conformance group `events`.
 */
import type { OperationLog, ProjectEvent } from '../../records.js';

/** A Project Event before the store allocates its sequence. */
export type NewProjectEvent = Omit<ProjectEvent, 'sequence'>;

/** Filters of one page of Project Events, ascending by sequence. */
export interface ProjectEventQuery {
  project_id: string;
  /** Return events with `sequence > after` (0 = from the start). */
  after: number;
  types?: string[];
  session_id?: string;
  limit: number;
}

/**
 * The Project Event stream (gap-free `sequence` per project) and the Operation Log
 * (platform.md "Project Events"). Conformance group `events`.
 */
export interface ProjectEventStore {
  /**
   * Appends an event with the project's next `sequence` (1, 2, 3 … with no gap and no duplicate,
   * also under concurrent writers), allocated inside the caller's transaction so a rollback
   * releases it. Returns the stored event.
   */
  appendProjectEvent(event: NewProjectEvent): Promise<ProjectEvent>;
  getProjectEvent(project_id: string, event_id: string): Promise<ProjectEvent | undefined>;
  /** Events with `sequence > after`, ascending, at most `limit`. */
  listProjectEvents(query: ProjectEventQuery): Promise<ProjectEvent[]>;
  /**
   * The highest committed `sequence` of the project's events (0 when it has none, or the project
   * does not exist). Stream resume uses it to tell a position beyond the latest event.
   */
  lastProjectEventSequence(project_id: string): Promise<number>;
  appendOperationLog(entry: OperationLog): Promise<void>;
  /**
   * Optional (the services call {@link appendOperationLog} then {@link appendProjectEvent} without
   * it): appends `entry` to the Operation Log and `event` with the project's next `sequence`, as
   * those two calls would, in one round trip where the engine can (a data-modifying `WITH` on
   * PostgreSQL). MUST write both or neither (inside the caller's transaction, or atomically on its
   * own), with the same guarantees as `appendProjectEvent` (gap-free, no duplicate, released by a
   * rollback); returns the stored event.
   */
  appendAudited?(entry: OperationLog, event: NewProjectEvent): Promise<ProjectEvent>;
  /** Operation Log rows of a project, newest first, keyset after `(created_at, id)`. */
  listOperationLogs(query: { project_id: string; after?: { created_at: number; id: string }; limit: number }): Promise<OperationLog[]>;
  /**
   * OPTIONAL. The workspace's Operation Log rows that belong to no project (`project_id` null: the
   * administration writes), newest first, keyset strictly after `(created_at, id)`, at most
   * `limit`. Never a row of another workspace or of a project.
   */
  listWorkspaceOperationLogs?(query: { workspace_id: string; after?: { created_at: number; id: string }; limit: number }): Promise<OperationLog[]>;
}
