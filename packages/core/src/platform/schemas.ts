/**
 * Zod schemas of the platform requests: projects, members, sessions, turns, event and log pages
 * (platform.md). Bodies are strict: unknown fields are rejected.
 */
import { z } from 'zod';
import { queryInt } from '../project-inbox/schemas.js';
import { idString, optionalText, queryText, text } from '../validation.js';
import { accessTokenQueryField } from '../sessions/managed-agents.js';
import { pageParams } from '../paging.js';

/**
 * `PlatformService.createProject` input. `id` is for trusted callers only (seeding, imports): ids
 * are unique across workspaces, so a caller-chosen id would tell one workspace which ids another
 * holds. Adapters validate requests with {@link createProjectRequest}, which has no `id`.
 */
export const createProjectBody = z.strictObject({
  id: idString.optional().describe('Trusted callers only; generated (proj_…) when absent'),
  name: text({ min: 1, max: 200 }),
});

/** `POST /projects` body: `{ name }`; the id is always generated (platform.md "Ids and time"). */
export const createProjectRequest = createProjectBody.omit({ id: true });

export const addMemberBody = z.strictObject({
  account_id: idString,
  role: z.enum(['deriver', 'observer']),
});

/** `PlatformService.createSession` input; `id` for trusted callers only (see {@link createProjectBody}). */
export const createSessionBody = z.strictObject({
  id: idString.optional().describe('Trusted callers only; generated (sess_…) when absent'),
  project_id: idString.nullable().optional(),
  title: optionalText(200),
});

/** `POST /sessions` body: `{ project_id?, title? }`; the id is always generated. */
export const createSessionRequest = createSessionBody.omit({ id: true });

/** `GET /sessions` query: `project_id` narrows to one project; keyset pages, newest first. */
export const listSessionsQuery = z.strictObject({
  project_id: idString.optional(),
  ...pageParams,
});

/** `GET /projects` query: keyset pages, newest first. */
export const listProjectsQuery = z.strictObject(pageParams);

/** `GET /projects/:id/members` query: keyset pages, oldest membership first. */
export const listMembersQuery = z.strictObject(pageParams);

/** `GET /sessions/:id/floors` query: keyset pages by `(number, branch, id)` ascending. */
export const listFloorsQuery = z.strictObject(pageParams);

/** `GET /sessions/:id/floors/:floor_id/pages` query: keyset pages by `version` ascending. */
export const listPagesQuery = z.strictObject(pageParams);

/** A committed turn written directly (the Runtime writes turns too). `content` is any JSON, ≤ 256 KiB. */
export const commitTurnBody = z.strictObject({
  content: z.unknown(),
  branch: z.string().min(1).max(64).regex(/^[A-Za-z0-9._-]+$/).optional(),
});

export const addPageBody = z.strictObject({
  content: z.unknown(),
});

export const listProjectEventsQuery = z.strictObject({
  after: queryInt(0, Number.MAX_SAFE_INTEGER).default(0),
  types: queryText({ max: 2048 }).optional().describe('Comma-separated event types'),
  session_id: idString.optional(),
  limit: queryInt(1, 500).default(100),
});

export const listOperationLogsQuery = z.strictObject(pageParams);

/** `GET /projects/:id/events/stream` query; `after` may also come as the `Last-Event-ID` header. */
export const streamProjectEventsQuery = z.strictObject({
  access_token: accessTokenQueryField,
  after: queryInt(0, Number.MAX_SAFE_INTEGER).optional(),
  types: queryText({ max: 2048 }).optional().describe('Comma-separated event types'),
  session_id: idString.optional(),
});
