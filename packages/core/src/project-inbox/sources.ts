/**
 * The sources of a Project Inbox item (project-inbox.md "Source rules"): the page, floor, session
 * and event a create names, resolved and checked against the project, and the helpers that let a
 * create read them before taking the project's lock while answering their refusal in its place.
 */
import { InboxKitError } from '../errors.js';
import type { StoreTx } from '../ports/store.js';
import type { Session } from '../records.js';

const mismatch = (why: string) => new InboxKitError('project_inbox_source_scope_mismatch', `Source is not in this project: ${why}`);

/** The source columns of an item, as resolved. */
export interface ResolvedSources {
  source_event_id: string | null;
  source_session_id: string | null;
  source_floor_id: string | null;
  source_page_id: string | null;
}

/**
 * Resolves sources page → floor → session, all inside this project's workspace (a source of
 * another workspace is missing). Spec: project-inbox.md "Source rules".
 */
export async function resolveSources(
  tx: StoreTx, ws: string, project_id: string,
  body: { source_event_id: string | null; source_session_id: string | null; source_floor_id: string | null; source_page_id: string | null },
): Promise<ResolvedSources> {
  const project = { id: project_id };
  let floor_id: string | null = null;
  let session_id: string | null = null;
  if (body.source_page_id !== null) {
    const page = await tx.getPage(ws, body.source_page_id);
    if (!page) throw new InboxKitError('page_not_found', 'Source page not found');
    floor_id = page.floor_id;
    session_id = page.session_id;
  }
  if (body.source_floor_id !== null) {
    const floor = await tx.getFloor(ws, body.source_floor_id);
    if (!floor) throw new InboxKitError('floor_not_found', 'Source floor not found');
    if (floor_id !== null && floor_id !== floor.id) throw mismatch('the page belongs to another floor');
    floor_id = floor.id;
    session_id = floor.session_id;
  }
  let named: Session | undefined;
  if (body.source_session_id !== null) {
    named = await tx.getSession(ws, body.source_session_id);
    if (!named) throw new InboxKitError('session_not_found', 'Source session not found');
    if (session_id !== null && session_id !== named.id) throw mismatch('the floor or page belongs to another session');
    session_id = named.id;
  }
  if (session_id !== null) {
    // The session named in the body was just read (same transaction); otherwise read the page's or floor's.
    const session = named ?? (await tx.getSession(ws, session_id));
    if (!session || session.project_id !== project.id) throw mismatch('the session belongs to another project');
  }
  if (body.source_event_id !== null) {
    const event = await tx.getProjectEvent(project.id, body.source_event_id);
    if (!event) throw mismatch('the event is not an event of this project');
  }
  return {
    source_event_id: body.source_event_id,
    source_session_id: session_id,
    source_floor_id: floor_id,
    source_page_id: body.source_page_id,
  };
}

/**
 * `promise`'s outcome, waited for now: a domain refusal (`InboxKitError`) is kept for
 * {@link unsettle} to throw later, in its place in the order of checks; any other error (the
 * store's) is thrown at once.
 */
export async function settle<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: InboxKitError }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    if (error instanceof InboxKitError) return { ok: false, error };
    throw error;
  }
}

/** The value {@link settle} kept, or its refusal thrown. */
export function unsettle<T>(outcome: { ok: true; value: T } | { ok: false; error: InboxKitError }): T {
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}
