/**
 * The contract's own OpenAPI document (`openApiDocument` of `@inbox-kit/core/http`, what the Hono
 * adapter serves at `/openapi.json`) is a valid OpenAPI 3.1 document with every route of the table,
 * its operation id and success status. (Here because this package has the OpenAPI validator; the
 * demo's `openapi-adapters.test.ts` checks it agrees with this adapter's document.)
 */
import { compileErrors, validate } from '@readme/openapi-parser';
import { HTTP_ROUTES, openApiDocument } from '@inbox-kit/core/http';
import { describe, expect, it } from 'vitest';

type Json = Record<string, any>;

/** `/projects/:id/inbox/:item_id` → `/projects/{id}/inbox/{item_id}`. */
const toTemplate = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe("the contract's OpenAPI document", () => {
  it('is a valid OpenAPI 3.1 document of every route, with its operation id and success status', async () => {
    const contract = openApiDocument(HTTP_ROUTES, { info: { version: '1.2.3' } }) as Json;
    expect(contract.info).toMatchObject({ title: 'inbox-kit', version: '1.2.3' });
    const result = await validate(structuredClone(contract) as never);
    expect(result.valid ? '' : compileErrors(result)).toBe('');
    expect(result.warnings).toEqual([]);
    for (const route of HTTP_ROUTES) {
      const op = contract.paths[toTemplate(route.path)]?.[route.method.toLowerCase()];
      expect(op?.operationId, `${route.method} ${route.path}`).toBe(route.operationId);
      expect(Object.keys(op.responses)).toContain(String(route.status));
    }
    expect(contract.paths['/openapi.json'].get.security).toEqual([]);
  });
});
