/**
 * The `bodyTimeoutMs` option of `inboxKitHono` / `serveInboxKit`: its default and the values it
 * refuses. What the deadline does over raw sockets (408 `request_timeout`, early answers closing
 * the socket, keep-alive) is checked by the conformance kit's `slowBodiesSuite` (`conformance.test.ts`).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_BODY_TIMEOUT_MS as KIT_DEFAULT_BODY_TIMEOUT_MS } from '@inbox-kit/core/http';
import { DEFAULT_BODY_TIMEOUT_MS, inboxKitHono, serveInboxKit } from '../src/index.js';

describe('bodyTimeoutMs option', () => {
  it('defaults to 30 s, as the Fastify adapter, and refuses a value that is not an integer ≥ 0', async () => {
    expect(DEFAULT_BODY_TIMEOUT_MS).toBe(30_000);
    // The kit's default, not a copy: every adapter's deadline is the same.
    expect(DEFAULT_BODY_TIMEOUT_MS).toBe(KIT_DEFAULT_BODY_TIMEOUT_MS);
    const services = {} as Parameters<typeof inboxKitHono>[0]['services'];
    for (const bodyTimeoutMs of [-1, 1.5, Number.NaN]) {
      expect(() => inboxKitHono({ services, bodyTimeoutMs })).toThrow(TypeError);
      await expect(serveInboxKit({ services, bodyTimeoutMs })).rejects.toThrow(TypeError);
    }
  });
});
