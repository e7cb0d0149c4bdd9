/** Tests of the error envelope parsing, the non-JSON fallback and the 410 LiveInboxInactiveError. */
import { describe, expect, it } from 'vitest';
import { errorFromResponse, InboxKitApiError, LiveInboxInactiveError } from './errors.js';
import { createClient } from './index.js';
import { apiError, fakeFetch, json } from '../test/fake-fetch.js';

describe('errorFromResponse', () => {
  it('reads the envelope', async () => {
    const details = [{ path: 'limit', message: 'too big' }];
    const err = await errorFromResponse(
      json({ type: 'error', error: { type: 'invalid_request_error', code: 'validation_error', message: 'Bad limit', details, request_id: 'req_1' } }, 400),
    );
    expect(err).toBeInstanceOf(InboxKitApiError);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(LiveInboxInactiveError);
    expect(err.name).toBe('InboxKitApiError');
    expect(err).toMatchObject({ status: 400, code: 'validation_error', type: 'invalid_request_error', message: 'Bad limit', requestId: 'req_1', details });
  });

  it('falls back gracefully for a non-JSON body', async () => {
    const err = await errorFromResponse(new Response('<html>Bad Gateway</html>', { status: 502, statusText: 'Bad Gateway', headers: { 'x-request-id': 'req_proxy' } }));
    expect(err).toMatchObject({ status: 502, code: 'http_502', type: 'api_error', requestId: 'req_proxy', details: [], body: '<html>Bad Gateway</html>' });
    expect(err.message).toContain('HTTP 502 Bad Gateway');
    expect(err.message).toContain('<html>Bad Gateway</html>');
  });

  it('falls back for an empty body and for JSON without the envelope', async () => {
    const empty = await errorFromResponse(new Response(null, { status: 503 }));
    expect(empty).toMatchObject({ status: 503, code: 'http_503', type: 'overloaded_error', requestId: null, message: 'HTTP 503' });
    const other = await errorFromResponse(json({ message: 'nope' }, 404));
    expect(other).toMatchObject({ status: 404, code: 'http_404', type: 'not_found_error', body: { message: 'nope' } });
  });

  it('reads 415 unsupported_media_type, and names its kind when the body does not', async () => {
    const err = await errorFromResponse(apiError(415, 'unsupported_media_type', 'invalid_request_error', 'Unsupported Content-Type; send application/json'));
    expect(err).toMatchObject({ status: 415, code: 'unsupported_media_type', type: 'invalid_request_error' });
    const bare = await errorFromResponse(new Response(null, { status: 415 }));
    expect(bare).toMatchObject({ status: 415, code: 'http_415', type: 'invalid_request_error' });
  });

  it('accepts the Live Inbox envelope (type and message, no code)', async () => {
    const err = await errorFromResponse(json({ type: 'error', error: { type: 'not_found_error', message: 'Session not found' } }, 404, { 'x-request-id': 'req_h' }));
    expect(err).toMatchObject({ status: 404, code: 'http_404', type: 'not_found_error', message: 'Session not found', requestId: 'req_h' });
  });

  it('turns 410 into LiveInboxInactiveError that points at the durable path', async () => {
    const err = await errorFromResponse(apiError(410, 'live_inbox_inactive', 'invalid_request_error', 'No active native attempt'));
    expect(err).toBeInstanceOf(LiveInboxInactiveError);
    expect(err).toBeInstanceOf(InboxKitApiError);
    expect(err.name).toBe('LiveInboxInactiveError');
    expect(err).toMatchObject({ status: 410, code: 'live_inbox_inactive', requestId: 'req_test' });
    expect(err.message).toContain('No active native attempt');
    expect(err.message).toContain('client.sessions.events.send');
  });
});

describe('errors through the client', () => {
  it('a 404 from a route rejects with the parsed error', async () => {
    const { fetch } = fakeFetch(apiError(404, 'project_not_found', 'not_found_error', 'Project not found'));
    const client = createClient({ baseUrl: 'http://x', apiKey: 'k', fetch });
    const err = await client.projects.get('proj_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InboxKitApiError);
    expect(err).toMatchObject({ status: 404, code: 'project_not_found', type: 'not_found_error', message: 'Project not found' });
  });

  it('a 2xx body that is not JSON rejects with invalid_response_body', async () => {
    const { fetch } = fakeFetch(new Response('ok', { status: 200 }));
    const client = createClient({ baseUrl: 'http://x', apiKey: 'k', fetch });
    await expect(client.projects.list()).rejects.toMatchObject({ code: 'invalid_response_body', status: 200 });
  });
});
