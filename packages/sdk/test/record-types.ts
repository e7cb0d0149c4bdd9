/**
 * Type-level contract of the SDK's record types: every record and page the SDK returns is exactly
 * the output type of the core schema the server serialises it through (`@inbox-kit/core` record
 * schemas and the route table's response schemas of `@inbox-kit/core/http`). Checked by `tsc`: keys equal, each side assignable to the other
 * (the package's typecheck, and `record-types.test.ts` in `npm test`); the SDK itself still imports
 * nothing at run time.
 */
import type {
  accountSchema, apiKeyKindSchema, apiKeyViewSchema, workspaceAccountSchema, floorSchema, membershipSchema, managedSessionEventSchema, operationLogSchema, pageSchema, projectEventSchema,
  projectInboxItemSchema, projectRoleSchema, projectSchema, sessionSchema, contentBlockSchema,
} from '@inbox-kit/core';
import type {
  adminOperationLogPageResponse, issuedApiKeyResponse, rotatedApiKeyResponse,
  inboxItemPageResponse, liveInboxSnapshotResponse, meResponse, operationLogPageResponse, projectEventPageResponse, projectWithRoleResponse,
  sessionEventPageResponse, ResyncSignal, memberRecordSchema, projectRecordSchema,
} from '@inbox-kit/core/http';
import type * as Sdk from '../src/index.js';

/** What a zod schema outputs (the wire shape the server serialises). */
export type Out<S extends { _zod: { output: unknown } }> = S['_zod']['output'];
/** `source_session_id` → `sourceSessionId`, as the SDK's `camelKey`. */
export type CamelKey<K extends string> = K extends `${infer Head}_${infer C}${infer Rest}` ? `${Head}${Uppercase<C>}${CamelKey<Rest>}` : K;
/** A record as the SDK returns it: top-level keys camelCased, nested values untouched (the SDK's `camelCase`). */
export type Camel<T> = { [K in keyof T as K extends string ? CamelKey<K> : K]: T[K] };
/** The same keys, each side assignable to the other (JSON values are two declarations of one recursive type, so not `toEqualTypeOf`). */
export type Same<A, B> = [keyof A] extends [keyof B] ? [keyof B] extends [keyof A] ? [A] extends [B] ? [B] extends [A] ? true : false : false : false : false;
/** Compiles only when `Same<Sdk, Contract>` holds: `sdkMatches<Same<…>>()`. */
export const sdkMatches = <T extends true>(): T | undefined => undefined;
/** A page as the SDK returns it: its own keys camelCased, and each item of `list` camelCased. */
export type CamelPage<P, List extends keyof P> = Camel<Omit<P, List>> & { [K in List]: P[K] extends readonly (infer I)[] ? Camel<I>[] : never };

// Records.
sdkMatches<Same<Sdk.Account, Camel<Out<typeof accountSchema>>>>();
sdkMatches<Same<Sdk.ApiKeyKind, Out<typeof apiKeyKindSchema>>>();
sdkMatches<Same<Sdk.ApiKey, Camel<Out<typeof apiKeyViewSchema>>>>();
sdkMatches<Same<Sdk.WorkspaceAccount, Camel<Out<typeof workspaceAccountSchema>>>>();
sdkMatches<Same<Sdk.Me, Camel<Omit<Out<typeof meResponse>, 'account'>> & { account: Sdk.Account }>>();
sdkMatches<Same<Sdk.Project, Camel<Out<typeof projectRecordSchema>>>>();
sdkMatches<Same<Sdk.ProjectRole, Out<typeof projectRoleSchema>>>();
sdkMatches<Same<Sdk.Member, Camel<Out<typeof memberRecordSchema>>>>();
sdkMatches<Same<Sdk.Session, Camel<Out<typeof sessionSchema>>>>();
sdkMatches<Same<Sdk.Floor, Camel<Out<typeof floorSchema>>>>();
sdkMatches<Same<Sdk.Page, Camel<Out<typeof pageSchema>>>>();
sdkMatches<Same<Sdk.ProjectEvent, Camel<Out<typeof projectEventSchema>>>>();
sdkMatches<Same<Sdk.OperationLog, Camel<Out<typeof operationLogSchema>>>>();
sdkMatches<Same<Sdk.ProjectInboxItem, Camel<Out<typeof projectInboxItemSchema>>>>();
sdkMatches<Same<Sdk.ContentBlock, Out<typeof contentBlockSchema>>>();
/** A committed Session event as the contract serialises it, camelCased (used by the negative control of `record-types.test.ts`). */
export type ContractSessionEvent = Camel<Out<typeof managedSessionEventSchema>>;
sdkMatches<Same<Sdk.SessionEvent, ContractSessionEvent>>();
sdkMatches<Same<Sdk.LiveInboxSnapshot, Out<typeof liveInboxSnapshotResponse>>>();
sdkMatches<Same<Sdk.StreamResync, Camel<ResyncSignal>>>();

// Pages and wrapped answers.
sdkMatches<Same<Sdk.ProjectEventPage, CamelPage<Out<typeof projectEventPageResponse>, 'items'>>>();
sdkMatches<Same<Sdk.CursorPage<Sdk.ProjectInboxItem>, CamelPage<Out<typeof inboxItemPageResponse>, 'items'>>>();
sdkMatches<Same<Sdk.CursorPage<Sdk.OperationLog>, CamelPage<Out<typeof operationLogPageResponse>, 'items'>>>();
sdkMatches<Same<Sdk.CursorPage<Sdk.OperationLog>, CamelPage<Out<typeof adminOperationLogPageResponse>, 'items'>>>();
sdkMatches<Same<Sdk.IssuedApiKey, { key: Camel<Out<typeof issuedApiKeyResponse>['key']>; secret: Out<typeof issuedApiKeyResponse>['secret'] }>>();
sdkMatches<Same<Sdk.RotatedApiKey, { key: Camel<Out<typeof rotatedApiKeyResponse>['key']>; secret: string; previous: Camel<Out<typeof rotatedApiKeyResponse>['previous']> }>>();
sdkMatches<Same<Sdk.SessionEventPage, CamelPage<Out<typeof sessionEventPageResponse>, 'data'>>>();
sdkMatches<Same<{ project: Sdk.Project; role: Sdk.ProjectRole }, { project: Camel<Out<typeof projectWithRoleResponse>['project']>; role: Out<typeof projectWithRoleResponse>['role'] }>>();
