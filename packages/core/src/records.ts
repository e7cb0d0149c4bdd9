/**
 * The records inbox-kit stores, shaped as they travel on the wire (snake_case, times in integer
 * ms since the epoch). Each type is `z.infer` of its schema in `schemas/records.ts`, where the
 * fields and their documentation are written once. Spec: platform.md, project-inbox.md
 * "Resource: ProjectInboxItem".
 */
import type { z } from 'zod';
import type {
  accountSchema, agentSchema, apiKeyKindSchema, apiKeySchema, floorSchema, inboxItemStatusSchema, memberRoleSchema, membershipSchema,
  operationLogSchema, pageSchema, projectEventSchema, projectEventSourceSchema, projectEventVisibilitySchema,
  projectInboxItemSchema, projectSchema, projectStatusSchema, runSchema, runStatusSchema, sessionEventSchema, sessionSchema,
  workspaceSchema,
} from './schemas/records.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type Workspace = z.infer<typeof workspaceSchema>;

export type Account = z.infer<typeof accountSchema>;

/** `standard` authenticates its own account; `service` may act as any account of its workspace. */
export type ApiKeyKind = z.infer<typeof apiKeyKindSchema>;

export type ApiKey = z.infer<typeof apiKeySchema>;

export type ProjectStatus = z.infer<typeof projectStatusSchema>;

export type Project = z.infer<typeof projectSchema>;

export type MemberRole = z.infer<typeof memberRoleSchema>;

export type Membership = z.infer<typeof membershipSchema>;

export type Session = z.infer<typeof sessionSchema>;

/** One committed turn of a Session. */
export type Floor = z.infer<typeof floorSchema>;

/** One version of a Floor's content. */
export type Page = z.infer<typeof pageSchema>;

export type InboxItemStatus = z.infer<typeof inboxItemStatusSchema>;
export type InboxDecision = 'accept' | 'reject' | 'archive';

export type ProjectInboxItem = z.infer<typeof projectInboxItemSchema>;

/**
 * Who may read a Project Event (platform.md "Project Events"): `project` — every member of the
 * project; `owner` — the project owner (and, for a Project Inbox event, the item's sender while it
 * is a deriver: project-inbox.md "Project Events and Operation Log").
 */
export type ProjectEventVisibility = z.infer<typeof projectEventVisibilitySchema>;

/**
 * What wrote a Project Event (platform.md "Project Events"): `api` — a request through the API;
 * `runtime_job` — the agent runtime acting on its own; `system` — start-up recovery and seeding.
 */
export type ProjectEventSource = z.infer<typeof projectEventSourceSchema>;

export type ProjectEvent = z.infer<typeof projectEventSchema>;

export type OperationLog = z.infer<typeof operationLogSchema>;

export type RunStatus = z.infer<typeof runStatusSchema>;

export type Run = z.infer<typeof runSchema>;

/** One version of an agent created through `POST /v1/agents` (live-inbox.md "Agents"). */
export type Agent = z.infer<typeof agentSchema>;

/** One committed entry of the Session ledger (`GET /v1/sessions/{id}/events`). */
export type SessionEvent = z.infer<typeof sessionEventSchema>;
