/**
 * `createServer`'s `bodyTimeoutMs` option: its default and the values it refuses. The black-box
 * checks of slow and refused request bodies over raw sockets (408 `request_timeout`, early answers
 * closing the socket, keep-alive) moved to the HTTP conformance kit of `@inbox-kit/core/testing`
 * (`slowBodiesSuite`), which `conformance.test.ts` runs on every engine.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_BODY_TIMEOUT_MS as KIT_DEFAULT_BODY_TIMEOUT_MS } from '@inbox-kit/core/http';
import { DEFAULT_BODY_TIMEOUT_MS } from '../src/index.js';
import { createServer } from '../src/entry-server.js';

describe('bodyTimeoutMs option', () => {
  it('defaults to 30 s and refuses a value that is not an integer ≥ 0', async () => {
    expect(DEFAULT_BODY_TIMEOUT_MS).toBe(30_000);
    // The kit's default, not a copy: every adapter's deadline is the same.
    expect(DEFAULT_BODY_TIMEOUT_MS).toBe(KIT_DEFAULT_BODY_TIMEOUT_MS);
    const services = {} as Parameters<typeof createServer>[0]['services'];
    for (const bodyTimeoutMs of [-1, 1.5, Number.NaN]) {
      await expect(createServer({ services, bodyTimeoutMs })).rejects.toThrow(TypeError);
    }
  });
});
