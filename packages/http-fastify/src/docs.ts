/**
 * The interactive API reference (Swagger UI, `@fastify/swagger-ui`, served from the package's own
 * files: no CDN, works offline) of the pipeline's OpenAPI document, at `docsPrefix` (default
 * `/docs`; its `/json` is the document). `@fastify/swagger-ui` is an optional peer: without it the
 * default serves no reference and logs a warning; an explicit `docsPrefix` fails the registration.
 */
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

/** Where the API reference is served (default `/docs` when `@fastify/swagger-ui` is installed); `false`: none. */
export interface DocsOptions {
  docsPrefix?: string | false;
}

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

/** Serves the reference of `document` (the document's text) at `docsPrefix` in a child scope of `app`. */
export async function registerDocs(app: FastifyInstance, options: { docsPrefix: string | undefined; document: string }): Promise<void> {
  const swaggerUi = await loadSwaggerUi(options.docsPrefix !== undefined);
  if (swaggerUi === undefined) {
    app.log.warn('inbox-kit: /docs is not served: install @fastify/swagger-ui (an optional peer) for the API reference');
    return;
  }
  await app.register(async (scope) => {
    await scope.register(fastifySwagger, { mode: 'static', specification: { document: JSON.parse(options.document) } });
    // The online validator badge stays off (its default here), so the page needs no network beyond this server.
    await scope.register(swaggerUi, { routePrefix: options.docsPrefix ?? '/docs', uiConfig: { deepLinking: true, tryItOutEnabled: false, persistAuthorization: false } });
  });
}
