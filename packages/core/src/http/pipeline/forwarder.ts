/**
 * Attempt routing over HTTP (live-inbox.md "Scale"): the `AttemptForwarder` that replays a Live
 * Inbox request (or an interrupt) on the process owning the attempt, with `fetch`. Any adapter's
 * `forwarding.secret` accepts what it sends; the demo and embedders take it from here whichever
 * adapter they serve with.
 */
import { RELAYED_REPLY_HEADERS, type AttemptForwarder, type ForwardedReply } from '../../sessions/routing.js';
import { DEFAULT_FORWARD_TIMEOUT_MS, forwardHeadersFor, forwardRequestOf } from '../forwarding.js';

/** Options of {@link createHttpAttemptForwarder}. */
export interface HttpAttemptForwarderOptions {
  /** The secret shared by every process of the deployment (the owner's `forwarding.secret`). */
  secret: string;
  /** Deadline for the owner's whole answer, in ms (default 2,000); past it the forward fails. */
  timeoutMs?: number;
  /** The `fetch` to use (default: the global `fetch`). */
  fetch?: typeof fetch;
}

/**
 * An `AttemptForwarder` over HTTP: sends the operation to `owner.host_url` with the same method,
 * path and JSON body as the route it came in on, the request id, and the internal credential;
 * resolves with the owner's status, `Content-Type`, body and the headers a caller must see
 * (`retry-after`, `x-should-retry`, `allow`), whatever the status.
 * Rejects on a network error or when the answer does not arrive within `timeoutMs`.
 * @throws TypeError when `secret` is empty.
 */
export function createHttpAttemptForwarder(options: HttpAttemptForwarderOptions): AttemptForwarder {
  if (options.secret === '') throw new TypeError('createHttpAttemptForwarder: secret must not be empty');
  const timeoutMs = options.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
  const doFetch = options.fetch ?? globalThis.fetch;
  return {
    async forward({ owner, session_id, operation, principal, request_id }): Promise<ForwardedReply> {
      const { method, path, body } = forwardRequestOf(session_id, operation);
      const headers: Record<string, string> = {
        ...forwardHeadersFor(options.secret, principal),
        'x-request-id': request_id,
        accept: 'application/json',
      };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const signal = AbortSignal.timeout(timeoutMs);
      const res = await doFetch(`${owner.host_url.replace(/\/+$/, '')}${path}`, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual', signal,
      });
      const relayed: Record<string, string> = {};
      for (const name of RELAYED_REPLY_HEADERS) {
        const value = res.headers.get(name);
        if (value !== null) relayed[name] = value;
      }
      return { status: res.status, content_type: res.headers.get('content-type'), body: await res.text(), headers: relayed };
    },
  };
}
