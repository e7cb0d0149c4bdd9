/**
 * What the platform services share for their writes: a caller-chosen id taken is 409 `conflict`,
 * an audited write (Operation Log row + Project Event in the same transaction), publishing after commit.
 */
import { appendAudited } from '../audit.js';
import type { RequestContext, ServiceDeps } from '../context.js';
import { InboxKitError } from '../errors.js';
import type { StoreTx } from '../ports/store.js';
import { visibilityOfEventType } from '../project-inbox/permissions.js';
import type { OperationLog, Project, ProjectEvent } from '../records.js';

/**
 * True for a store's unique-key violation: PostgreSQL SQLSTATE 23505, SQLite's
 * `SQLITE_CONSTRAINT_PRIMARYKEY` / `SQLITE_CONSTRAINT_UNIQUE`, the in-memory store's `duplicate …`.
 * Ids are unique across workspaces, so a caller-chosen id taken in another workspace passes the
 * workspace-scoped existence check and only the insert finds it.
 */
function isDuplicateKey(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE'
    || (code === undefined && typeof message === 'string' && message.startsWith('duplicate '));
}

/** Runs a create with a caller-chosen id: a duplicate key on insert is 409 `conflict`, not a 500. */
export async function idTakenIsConflict<T>(id: string | undefined, what: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (id !== undefined && isDuplicateKey(error)) throw new InboxKitError('conflict', `A ${what} with this id already exists`);
    throw error;
  }
}
export const forbidden = (msg: string) => new InboxKitError('permission_denied', msg);

/** Appends one Operation Log row and its Project Event (`appendAudited`) for a write of `ctx` in `project`: returns the event to publish after commit. */
export async function recordProjectWrite(
  deps: ServiceDeps, tx: StoreTx, ctx: RequestContext, project: Project, action: string, target_type: string, target_id: string,
  metadata: OperationLog['metadata'], type: string, payload: ProjectEvent['payload'], refs: { session_id?: string } = {},
): Promise<ProjectEvent> {
  const now = deps.clock.now();
  const logId = deps.ids.next('oplog');
  return appendAudited(tx, {
    id: logId, workspace_id: project.workspace_id, project_id: project.id, actor_account_id: ctx.principal.account_id,
    action, target_type, target_id, request_id: ctx.request_id, metadata, created_at: now,
  }, {
    id: deps.ids.next('evt'), workspace_id: project.workspace_id, project_id: project.id, type,
    actor_account_id: ctx.principal.account_id, session_id: refs.session_id ?? null, floor_id: null, page_id: null,
    operation_log_id: logId, correlation_id: ctx.request_id, causation_event_id: null, payload,
    visibility: visibilityOfEventType(type), source: ctx.source ?? 'api', created_at: now,
  });
}

/** Publishes committed Project Events on the bus; a bus failure goes to `deps.onPublishError`, never to the caller. */
export function publishProjectEvents(deps: ServiceDeps, events: ProjectEvent[]): void {
  for (const event of events) {
    try {
      deps.bus.publish({ kind: 'project_event', event });
    } catch (error) {
      deps.onPublishError?.(error);
    }
  }
}
