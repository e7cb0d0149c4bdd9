/**
 * @inbox-kit/http-fastify/docs — `swaggerUi`, the interactive API reference (Swagger UI,
 * `@fastify/swagger-ui`, served from the package's own files: no CDN, works offline) of the
 * pipeline's OpenAPI document, for the `inboxKit` plugin's `openapi.docs` option; `createServer`
 * always passes it. At `docsPrefix` (default `/docs`; its `/json` is the document).
 * `@fastify/swagger-ui` is an optional peer: without it the default `docsPrefix` serves no reference
 * and logs a warning; an explicit `docsPrefix` fails the registration.
 *
 * ```ts
 * await app.register(inboxKit, { prefix: '/inbox', services, openapi: { docs: swaggerUi, docsPrefix: '/api-docs' } });
 * ```
 */
import fastifySwagger from '@fastify/swagger';
import type { InboxKitDocs } from './plugin.js';

/**
 * `@fastify/swagger-ui`, imported on demand; `undefined` when it is not installed and not `required`.
 * @throws Error naming the package when it is `required` and not installed.
 */
async function loadSwaggerUi(required: boolean): Promise<typeof import('@fastify/swagger-ui').default | undefined> {
  try {
    return (await import('@fastify/swagger-ui')).default;
  } catch (error) {
    const e = error as { code?: string; message?: string };
    const missing = (e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND') && (e.message ?? '').includes('@fastify/swagger-ui');
    if (!missing) throw error;
    if (!required) return undefined;
    throw new Error('inboxKit: docsPrefix needs @fastify/swagger-ui (an optional peer dependency): npm install @fastify/swagger-ui', { cause: error });
  }
}

/** Serves the reference of `document` (the document's text) at `docsPrefix` (undefined: `/docs`) in a child scope of `app`. */
export const swaggerUi: InboxKitDocs = async (app, { docsPrefix, document }) => {
  const swaggerUiPlugin = await loadSwaggerUi(docsPrefix !== undefined);
  if (swaggerUiPlugin === undefined) {
    app.log.warn('inbox-kit: /docs is not served: install @fastify/swagger-ui (an optional peer) for the API reference');
    return;
  }
  await app.register(async (scope) => {
    await scope.register(fastifySwagger, { mode: 'static', specification: { document: JSON.parse(document) } });
    // The online validator badge stays off (its default here), so the page needs no network beyond this server.
    await scope.register(swaggerUiPlugin, { routePrefix: docsPrefix ?? '/docs', uiConfig: { deepLinking: true, tryItOutEnabled: false, persistAuthorization: false } });
  });
};
