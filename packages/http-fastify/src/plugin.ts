/**
 * The root plugin: request ids, authentication, the error envelope, the zod validator, and every
 * route plugin. Register it once on a Fastify instance (or use `createServer`).
 */
import { InboxKitError, findInexactJsonNumber, type ManagedSessionsService, type PlatformService, type ProjectInboxService, type SessionRuntimeService } from '@inbox-kit/core';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requestIdOf, setRequestIdHeaders } from './context.js';
import { defaultResponseValidation, stringifySerializerCompiler, validatingSerializerCompiler } from './serializer.js';
import { envelope, errorHandler } from './errors.js';
import { forwardedPrincipal } from './forwarding.js';
import { registerStreamShutdown, type StreamTiming } from './sse.js';
import { inboxKitOpenApi, type InboxKitOpenApiOptions } from './openapi.js';
import { platformRoutes } from './routes/platform.js';
import { projectInboxRoutes } from './routes/project-inbox.js';
import { liveInboxRoutes } from './routes/live-inbox.js';
import { sessionEventRoutes } from './routes/session-events.js';
import { managedSessionRoutes } from './routes/sessions.js';

/** The services the routes call. */
export interface InboxKitServices {
  platform: PlatformService;
  projectInbox: ProjectInboxService;
  /**
   * The Session Runtime. When present, the durable Session event routes (`/v1/sessions/:id/events`)
   * and the Live Inbox routes (`/v1/awaken/sessions/:id/live-inbox`) are registered.
   */
  runtime?: SessionRuntimeService;
  /**
   * The Session resource of the Managed Agents surface (`POST/GET /v1/sessions`, `GET/POST/DELETE
   * /v1/sessions/:id`, `POST /v1/sessions/:id/archive`). Registered when present (with `runtime`).
   */
  managedSessions?: ManagedSessionsService;
}

export interface InboxKitPluginOptions {
  services: InboxKitServices;
  /** SSE heartbeat and retry hint (defaults: 15,000 ms and 2,000 ms). */
  streamTiming?: StreamTiming;
  /** The OpenAPI document (`/openapi.json`) and API reference (`/docs`); `false` serves neither. */
  openapi?: InboxKitOpenApiOptions | false;
  /**
   * Attempt routing (live-inbox.md "Scale"): accept requests other processes forward to this one
   * (header `x-inbox-kit-forward: <secret>` plus the original principal, see `forwarding.ts`) on
   * the Live Inbox and Session event routes. Without it (default), forward headers are ignored.
   * The Runtime's `routing` option decides what this process forwards.
   */
  forwarding?: { secret: string };
  /**
   * Check every response against its route's zod schema (see `serializer.ts`): a response the
   * schema would reject or change becomes a 500. Default: on unless `NODE_ENV` is `production`.
   * Off, responses are `JSON.stringify` of what the services return, with no per-response cost.
   */
  responseValidation?: boolean;
}

/** 404 `not_found` for a route that does not exist. */
async function notFound(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await reply.code(404).send(envelope(404, 'not_found', `Route ${request.method} ${request.url.split('?')[0]} not found`, [], request.requestId));
}

const inboxKitPlugin: FastifyPluginAsync<InboxKitPluginOptions> = async (app, opts) => {
  const { services } = opts;
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(opts.responseValidation ?? defaultResponseValidation() ? validatingSerializerCompiler : stringifySerializerCompiler);
  // Before every route: @fastify/swagger documents only the routes added after it.
  if (opts.openapi !== false) await app.register(inboxKitOpenApi, opts.openapi ?? {});
  // JSON bodies must be valid UTF-8: invalid bytes get 400 instead of being stored as U+FFFD.
  // Parsing itself stays Fastify's (prototype-poisoning checks included).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  // Only `application/json` (with or without parameters such as `charset`) is parsed: Fastify's
  // own `text/plain` parser goes too, so any other content type is 415 `unsupported_media_type`.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(new InboxKitError('unsupported_media_type', 'Unsupported Content-Type charset; send application/json in UTF-8'), undefined);
      return;
    }
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(new InboxKitError('validation_error', 'Request body is not valid UTF-8'), undefined);
      return;
    }
    parseJson(request, text, (error, parsed) => {
      if (error) return done(error, undefined);
      // Numbers must read back as sent (platform.md "JSON numbers"): refuse what a double cannot hold.
      const inexact = findInexactJsonNumber(text);
      if (inexact !== undefined) {
        done(new InboxKitError('validation_error', 'A number cannot be stored exactly', [{
          path: ['body', ...inexact.path].join('.'),
          message: `${inexact.literal.length > 40 ? `${inexact.literal.slice(0, 40)}…` : inexact.literal} cannot be stored exactly (JSON numbers are IEEE-754 doubles: integers up to ±9007199254740991, about 15–17 significant digits); send it as a string`,
          code: 'inexact_number',
        }]), undefined);
        return;
      }
      done(null, parsed);
    });
  });
  app.decorateRequest('requestId', '');
  app.decorateRequest('principal', null);
  app.decorateRequest('forwarded', false);
  const forwardSecret = opts.forwarding?.secret;
  if (forwardSecret === '') throw new TypeError('inboxKit: forwarding.secret must not be empty');

  app.addHook('onRequest', async (request, reply) => {
    request.requestId = requestIdOf(request.headers['x-request-id'], request.id);
    setRequestIdHeaders(reply, request.requestId);
    if (request.routeOptions.config?.public) return;
    if (request.is404) {
      // Answered before the body is read when it has not all arrived (the socket then closes).
      if (!request.raw.complete) return notFound(request, reply);
      return;
    }
    if (forwardSecret !== undefined && request.routeOptions.config?.forwardable) {
      const principal = forwardedPrincipal(request, forwardSecret);
      if (principal !== undefined) {
        request.principal = principal;
        request.forwarded = true;
        return;
      }
    }
    request.principal = await services.platform.authenticate(...credentialOf(request));
  });

  // Answers made before the hook above ran (the rate limiter's 429) still get both headers.
  app.addHook('onSend', (_request, reply, payload, done) => {
    const id = reply.getHeader('x-request-id');
    if (typeof id === 'string' && reply.getHeader('request-id') === undefined) setRequestIdHeaders(reply, id);
    done(null, payload);
  });

  // Long-lived streams re-authenticate their request's credential before every delivery, exactly
  // as the hook above would for a fresh request (platform.md "Project Events": authorised as of now).
  const reauthenticate = async (request: FastifyRequest): Promise<void> => {
    if (request.forwarded) return;
    const principal = await services.platform.authenticate(...credentialOf(request));
    if (principal.account_id !== request.principal?.account_id || principal.workspace_id !== request.principal.workspace_id) {
      throw new InboxKitError('invalid_credentials', 'The API key is unknown or revoked');
    }
  };

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFound);

  app.withTypeProvider<ZodTypeProvider>().get('/health', {
    config: { public: true },
    schema: { tags: ['meta'], summary: 'Liveness: 200 once the server serves', response: { 200: z.object({ status: z.literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }));
  registerStreamShutdown(app);
  await app.register(platformRoutes, { services, streamTiming: opts.streamTiming, reauthenticate });
  await app.register(projectInboxRoutes, { services });
  if (services.runtime !== undefined) {
    const runtimeServices = { runtime: services.runtime };
    if (services.managedSessions !== undefined) await app.register(managedSessionRoutes, { services: { managedSessions: services.managedSessions } });
    await app.register(sessionEventRoutes, { services: runtimeServices, streamTiming: opts.streamTiming, reauthenticate });
    await app.register(liveInboxRoutes, { services: runtimeServices });
  }
};

/**
 * What a request authenticates with: the secret (`Authorization: Bearer` or `x-api-key`), the
 * `x-account-id`, and `anthropic-workspace-id` (sent by `@anthropic-ai/sdk` when given a
 * `workspace_id`), which must name the key's workspace.
 */
function credentialOf(request: FastifyRequest): [secret: string | undefined, as_account_id: string | undefined, options: { workspace_id?: string }] {
  const auth = request.headers.authorization;
  const bearer = typeof auth === 'string' ? /^Bearer\s+(.*)$/is.exec(auth)?.[1]?.trim() : undefined;
  const apiKey = typeof request.headers['x-api-key'] === 'string' ? request.headers['x-api-key'] : undefined;
  const asAccount = request.headers['x-account-id'];
  const workspace = request.headers['anthropic-workspace-id'];
  return [
    bearer || apiKey || undefined,
    typeof asAccount === 'string' && asAccount !== '' ? asAccount : undefined,
    typeof workspace === 'string' && workspace !== '' ? { workspace_id: workspace } : {},
  ];
}

/** The lower-cased `charset` parameter of a Content-Type value, or `undefined` when it has none. */
function charsetOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  for (const parameter of contentType.split(';').slice(1)) {
    const eq = parameter.indexOf('=');
    if (eq < 0 || parameter.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    return parameter.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return undefined;
}

/**
 * The inbox-kit plugin (decorators, hooks, error handler and routes on the root scope).
 * Options: `{ services }`.
 */
export const inboxKit = fp(inboxKitPlugin, { name: '@inbox-kit/http-fastify', fastify: '5.x' });

export type { FastifyInstance };
