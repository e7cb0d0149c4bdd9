/**
 * The route table of inbox-kit's HTTP API (platform.md, project-inbox.md "Endpoints",
 * live-inbox.md "HTTP"): every route's declaration (`./declarations/`: method, path, request and
 * response schemas, success status, summary and tags, flags, links, the error codes it can
 * answer) joined with its binding to the services (`./route-bindings.ts`).
 *
 * An adapter iterates {@link HTTP_ROUTES}: it registers each route, validates the request parts
 * with the schemas (400 `validation_error` on failure), authenticates non-public routes
 * ({@link readCredentials} → `PlatformService.authenticate`), calls {@link HttpRoute.handle}
 * and sends the {@link HttpOutcome}: JSON serialised through `response`, no body for 204, the
 * owner's answer relayed unchanged for `forwarded`, or an SSE stream for `stream`. Errors it
 * catches go through {@link envelopeOf}.
 */
import { InboxKitError, isInboxKitError, type ErrorCode } from '../errors.js';
import { ADMIN_ROUTES } from './declarations/admin.js';
import { PLATFORM_ROUTES } from './declarations/platform.js';
import { PROJECT_INBOX_ROUTES } from './declarations/project-inbox.js';
import { V1_ROUTES } from './declarations/v1.js';
import { ROUTE_BINDINGS } from './route-bindings.js';
import { declaredErrorCodes, type HttpRoute, type HttpServices, type RouteDeclaration, type RouteHandler } from './route-types.js';

export {
  adminAccountResponse, adminOperationLogPageResponse, deletedSessionResponse, healthResponse, inboxItemPageResponse, issuedApiKeyResponse,
  liveInboxSnapshotResponse, managedAgentPageResponse, managedSessionPageResponse, meResponse, operationLogPageResponse, projectEventPageResponse,
  projectWithRoleResponse, readyResponse, rotatedApiKeyResponse, sessionEventPageResponse, sessionEventsSentResponse, streamTokenResponse,
} from './declarations/schemas.js';
export { wireSessionFeed } from './route-bindings.js';
export type { HttpCall, HttpOutcome, HttpRoute, HttpServices, RouteDeclaration, RouteHandler } from './route-types.js';

/** Every route's declaration, in registration order (data only: no service call). */
export const ROUTE_DECLARATIONS: readonly RouteDeclaration[] = [...PLATFORM_ROUTES, ...PROJECT_INBOX_ROUTES, ...ADMIN_ROUTES, ...V1_ROUTES];

/**
 * Whether a route's `handle` refuses to answer a code it does not declare (turning it into a 500
 * `internal_error` that names the route and the code). On under vitest (`process.env.VITEST`),
 * so every test that drives a route checks its declaration; off otherwise (production answers the
 * code as it is). `INBOX_KIT_DECLARED_ERRORS=off` turns it off, `=enforce` on.
 */
function enforceDeclaredErrors(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const setting = env?.['INBOX_KIT_DECLARED_ERRORS'];
  if (setting === 'off') return false;
  return setting === 'enforce' || env?.['VITEST'] !== undefined;
}

/**
 * A declaration joined with its binding. When {@link enforceDeclaredErrors} holds, an
 * `InboxKitError` whose code the route does not declare ({@link declaredErrorCodes}) becomes an
 * `internal_error` (`details[0]`: `{ path: operationId, code }`), so a test that reaches it fails.
 */
export function bindRoute(declaration: RouteDeclaration, handler: RouteHandler, enforce = enforceDeclaredErrors()): HttpRoute {
  if (!enforce) return { ...declaration, handle: handler };
  const declared = new Set<ErrorCode>(declaredErrorCodes(declaration));
  return {
    ...declaration,
    handle: async (services, call) => {
      try {
        return await handler(services, call);
      } catch (error) {
        if (isInboxKitError(error) && !declared.has(error.code)) {
          throw new InboxKitError('internal_error', `Route ${declaration.operationId} answered the undeclared error code ${error.code}`, [
            { path: declaration.operationId, message: `undeclared error code ${error.code}: ${error.message}`, code: error.code },
          ], { cause: error });
        }
        throw error;
      }
    },
  };
}

function bindAll(declarations: readonly RouteDeclaration[], bindings: Readonly<Record<string, RouteHandler>>): HttpRoute[] {
  const unbound = declarations.filter((d) => bindings[d.operationId] === undefined).map((d) => d.operationId);
  const known = new Set(declarations.map((d) => d.operationId));
  const undeclared = Object.keys(bindings).filter((id) => !known.has(id));
  if (unbound.length > 0 || undeclared.length > 0) {
    throw new Error(`route table: unbound ${unbound.join(', ') || '-'}; bound but not declared ${undeclared.join(', ') || '-'}`);
  }
  return declarations.map((d) => bindRoute(d, bindings[d.operationId] as RouteHandler));
}

/** Every route, in registration order: {@link ROUTE_DECLARATIONS} joined with their service calls. */
export const HTTP_ROUTES: readonly HttpRoute[] = bindAll(ROUTE_DECLARATIONS, ROUTE_BINDINGS);

/**
 * The routes served for `services`: all of them, minus the runtime routes when `services.runtime`
 * is absent and the Session resource when `services.managedSessions` (or `runtime`) is.
 */
export function httpRoutesFor(services: HttpServices): HttpRoute[] {
  const runtime = services.runtime !== undefined;
  const managed = runtime && services.managedSessions !== undefined;
  return HTTP_ROUTES.filter((r) => (!r.requiresRuntime || runtime) && (!r.requiresManagedSessions || managed));
}
