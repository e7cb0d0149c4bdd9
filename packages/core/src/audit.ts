/**
 * The audit of a write (platform.md "Project Events": every write is recorded in the Operation
 * Log and announced as a Project Event in the same transaction).
 */
import type { NewProjectEvent, StoreTx } from './ports/store.js';
import type { OperationLog, ProjectEvent } from './records.js';

/**
 * Appends the Operation Log row `entry` and the Project Event `event` on `tx`: in one call when the
 * store has `appendAudited` (one round trip on PostgreSQL), else `appendOperationLog` then
 * `appendProjectEvent`. Returns the stored event (with its `sequence`).
 * @throws whatever the store throws (the caller's transaction then rolls back both).
 */
export async function appendAudited(tx: StoreTx, entry: OperationLog, event: NewProjectEvent): Promise<ProjectEvent> {
  if (tx.appendAudited) return tx.appendAudited(entry, event);
  await tx.appendOperationLog(entry);
  return tx.appendProjectEvent(event);
}
