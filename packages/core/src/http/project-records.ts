/**
 * The project family's wire records (platform.md "Projects" → "Records"): what every project and
 * member answer carries besides the stored fields, so clients written for TavernHeadless
 * (`@tavern/sdk`: `projects.get`, `projects.list`, `listMembers`, `listSessions`,
 * `operationLogs.list`) read them unchanged — a project with the caller's `role` and its `kind`, a
 * member with its `id`, `workspace_id` and `status`, and the Operation Log as `{ data, meta }` at
 * `GET /operation-logs?project_id=`. Pure mappers and their schemas; the routes use them.
 */
import { z } from 'zod';
import type { Membership, OperationLog, Project } from '../records.js';
import type { ProjectRole } from '../project-inbox/permissions.js';
import { membershipSchema, operationLogSchema, projectRoleSchema, projectSchema } from '../schemas/records.js';
import { pageParams, type ListPage } from '../paging.js';
import { idString } from '../validation.js';

/** `kind` of every project record: `project` (the record's type, for clients that read several kinds). */
export const PROJECT_KIND = 'project';

/** A project as the routes answer it: the stored project, the caller's `role` in it, `kind: "project"`. */
export const projectRecordSchema = projectSchema
  .extend({
    role: projectRoleSchema.describe("The caller's role in the project: owner, deriver or observer"),
    kind: z.literal(PROJECT_KIND).describe('The record kind, always `project`'),
  })
  .describe("A project, with the caller's role");

export type ProjectRecord = z.infer<typeof projectRecordSchema>;

/** {@link projectRecordSchema} of `project` for a caller whose role is `role`. */
export function projectRecord(project: Project, role: Exclude<ProjectRole, null>): ProjectRecord {
  return { ...project, role, kind: PROJECT_KIND };
}

/** A member as the routes answer it: the membership, its `id`, the project's `workspace_id`, `status: "active"`. */
export const memberRecordSchema = membershipSchema
  .extend({
    id: z.string().describe('The membership id (`mbr_…`): one per project and account, the same on every read'),
    workspace_id: z.string(),
    status: z.literal('active').describe('`active`: a removed member is not listed'),
  })
  .describe('A member of a project');

export type MemberRecord = z.infer<typeof memberRecordSchema>;

function base64url(text: string): string {
  let binary = '';
  for (const b of new TextEncoder().encode(text)) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The stable id of the membership of `account_id` in `project_id`: `mbr_` + base64url of both. */
export function membershipId(project_id: string, account_id: string): string {
  return `mbr_${base64url(`${project_id}\n${account_id}`)}`;
}

/** {@link memberRecordSchema} of a membership of a project in `workspace_id`. */
export function memberRecord(membership: Membership, workspace_id: string): MemberRecord {
  return { ...membership, id: membershipId(membership.project_id, membership.account_id), workspace_id, status: 'active' };
}

/** `GET /operation-logs` query: `project_id` (required) and the page of every list (`limit` 1–200, `cursor`). */
export const listOperationLogsByProjectQuery = z.strictObject({
  project_id: idString.describe('The project whose Operation Log is read (owner only)'),
  ...pageParams,
});

/** `GET /operation-logs` body: `{ data, meta: { next_cursor, has_more, limit } }`. */
export const operationLogDataResponse = z
  .object({
    data: z.array(operationLogSchema).describe('Operation Log rows, newest first'),
    meta: z.object({
      next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
      has_more: z.boolean(),
      limit: z.number().int(),
    }),
  })
  .describe('A page of the Operation Log (the `{ data, meta }` shape)');

/** {@link operationLogDataResponse} of a page. */
export function operationLogData(page: ListPage<OperationLog>, limit: number): z.infer<typeof operationLogDataResponse> {
  return { data: page.items, meta: { next_cursor: page.next_cursor, has_more: page.next_cursor !== null, limit } };
}
