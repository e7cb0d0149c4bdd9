/**
 * The `reportError` option of `inboxKitHono` / `serveInboxKit`, over real HTTP: an unexpected error
 * is answered 500 in the envelope without its message, and handed to `reportError` with the
 * request's id (by default it goes to `console.error`).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serveInboxKit } from '../src/index.js';

type Services = Parameters<typeof serveInboxKit>[0]['services'];
/** Services whose authentication fails with an error that is not an `InboxKitError`. */
const failing = (error: Error) => ({ platform: { authenticate: async () => { throw error; } }, projectInbox: {} }) as unknown as Services;

describe('reportError option', () => {
  afterEach(() => vi.restoreAllMocks());

  it('gets every unexpected error with its request id; the 500 shows neither the message nor a stack', async () => {
    const error = new Error('SELECT * FROM secrets: connection refused');
    const reported: Array<[unknown, string]> = [];
    const server = await serveInboxKit({ services: failing(error), reportError: (e, request_id) => reported.push([e, request_id]) });
    try {
      const response = await fetch(`${server.url}/me`, { headers: { authorization: 'Bearer ik_any' } });
      const text = await response.text();
      expect(response.status).toBe(500);
      expect(JSON.parse(text).error.type).toBe('api_error');
      expect(text).not.toContain('SELECT');
      expect(text).not.toContain('at ');
      expect(reported).toEqual([[error, response.headers.get('x-request-id')]]);
    } finally {
      await server.close();
    }
  });

  it('defaults to console.error', async () => {
    const error = new Error('boom');
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const server = await serveInboxKit({ services: failing(error) });
    try {
      const response = await fetch(`${server.url}/me`, { headers: { authorization: 'Bearer ik_any' } });
      expect(response.status).toBe(500);
      expect(logged).toHaveBeenCalledWith('inbox-kit: unexpected error', error);
    } finally {
      await server.close();
    }
  });
});
