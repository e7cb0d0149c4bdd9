import { describe, expect, it } from 'vitest';
import { createHttpAttemptForwarder } from './forwarder.js';
import type { AttemptForwardRequest } from '../../sessions/routing.js';

const request: AttemptForwardRequest = {
  owner: { session_id: 'sess_1', run_id: 'run_1', host_id: 'host_a', host_url: 'http://owner.test/', expires_at: 0 },
  session_id: 'sess_1',
  operation: { type: 'queue', body: { content: [{ type: 'text', text: 'hi' }] } },
  principal: { workspace_id: 'ws_1', account_id: 'acc_1', key_id: 'key_1', key_kind: 'standard' },
  request_id: 'req_1',
} as unknown as AttemptForwardRequest;

describe('createHttpAttemptForwarder', () => {
  it('relays the owner\'s status, type, body and its retry-after / x-should-retry / allow headers, nothing else', async () => {
    const seen: Array<{ url: string; init: RequestInit }> = [];
    const forwarder = createHttpAttemptForwarder({
      secret: 's3cret',
      fetch: (async (url: string, init: RequestInit) => {
        seen.push({ url, init });
        return new Response('{"type":"error"}', {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': '5', 'x-should-retry': 'true', 'set-cookie': 'x=1', 'x-internal': 'no' },
        });
      }) as unknown as typeof fetch,
    });
    const reply = await forwarder.forward(request);
    expect(reply).toEqual({ status: 503, content_type: 'application/json', body: '{"type":"error"}', headers: { 'retry-after': '5', 'x-should-retry': 'true' } });
    expect(seen[0]!.url).toBe('http://owner.test/v1/awaken/sessions/sess_1/live-inbox');
    expect((seen[0]!.init.headers as Record<string, string>)['x-request-id']).toBe('req_1');
  });

  it('an answer without those headers relays none', async () => {
    const forwarder = createHttpAttemptForwarder({ secret: 's', fetch: (async () => new Response(null, { status: 204 })) as unknown as typeof fetch });
    expect(await forwarder.forward(request)).toEqual({ status: 204, content_type: null, body: '', headers: {} });
  });
});
