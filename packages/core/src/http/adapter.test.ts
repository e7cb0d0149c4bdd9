/**
 * The helpers every adapter writes around the pipeline (`adapter.ts`): the served routes, the target
 * within a mount, a host's 404 / 405, request ids, the envelope of a thrown value, and the Node
 * helpers on a stand-in `ServerResponse` (the adapters' suites drive them over real sockets).
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { InboxKitError } from '../errors.js';
import type { HttpServices } from './routes.js';
import {
  answerClientError, clientLeftSignal, requestIdHeaders, requestIdReusing, servedRoutes, type ServerResponseLike, targetWithin, thrownAnswer, unroutedAnswer, writeEventStream,
} from './index.js';
import { httpRoutesFor, methodIndex } from './index.js';

const services = { platform: {}, projectInbox: {} } as unknown as HttpServices;

describe('servedRoutes', () => {
  it('is the table for the services, then the OpenAPI document at its path unless openapi is false', () => {
    const table = httpRoutesFor(services);
    const served = servedRoutes(services);
    expect(served.slice(0, -1)).toEqual(table);
    expect(served.at(-1)).toMatchObject({ method: 'GET', path: '/openapi.json', operationId: 'getOpenapiJson', tags: ['meta'], public: true, status: 200, errors: [] });
    expect(servedRoutes(services, { documentPath: '/spec.json' }).at(-1)!.path).toBe('/spec.json');
    expect(servedRoutes(services, false)).toEqual(table);
  });
});

describe('targetWithin', () => {
  it('removes the mount, keeping the query, and answers `/` for the mount itself', () => {
    expect(targetWithin('/inbox/me?x=1', '/inbox')).toBe('/me?x=1');
    expect(targetWithin('/inbox', '/inbox')).toBe('/');
    expect(targetWithin('/inbox?x=1', '/inbox')).toBe('/?x=1');
    expect(targetWithin('/me', '')).toBe('/me');
  });
});

describe('unroutedAnswer', () => {
  const index = methodIndex([{ method: 'GET', path: '/projects/:id' }, { method: 'POST', path: '/projects' }]);
  it('is 405 with Allow on a known path under another method, within the mount it is below; else 404', () => {
    const mounts = [{ mount: '/inbox', index }, { mount: '', index: methodIndex([{ method: 'GET', path: '/health' }]) }];
    const refused = unroutedAnswer(mounts, 'DELETE', '/inbox/projects/p1?x=1', 'req_1');
    expect(refused).toMatchObject({ status: 405, headers: { allow: 'GET, HEAD' }, body: { error: { code: 'method_not_allowed', request_id: 'req_1' } } });
    expect(unroutedAnswer(mounts, 'POST', '/health', 'req_2')).toMatchObject({ status: 405, headers: { allow: 'GET, HEAD' } });
    expect(unroutedAnswer(mounts, 'GET', '/inboxes/projects/p1', 'req_3')).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(unroutedAnswer([], 'GET', '/anything', 'req_4').status).toBe(404);
  });
});

describe('request ids', () => {
  it('both headers carry the id', () => {
    expect(requestIdHeaders('req_x')).toEqual({ 'x-request-id': 'req_x', 'request-id': 'req_x' });
  });

  it("reuse the caller's safe header, else the host's id when it is one of ours, else a new one", () => {
    const own = 'req_ABCDEFGHIJKLMNOPQRSTU';
    expect(requestIdReusing('mine-1', own)).toBe('mine-1');
    expect(requestIdReusing('bad id', own)).toBe(own);
    expect(requestIdReusing(undefined, own)).toBe(own);
    expect(requestIdReusing(['a', 'b'], own)).toBe(own);
    const fresh = requestIdReusing(undefined, 'req-1');
    expect(fresh).toMatch(/^req_[A-Za-z0-9_-]{21}$/);
    expect(fresh).not.toBe('req-1');
  });
});

describe('thrownAnswer', () => {
  it('answers an InboxKitError by the table, a statusCode by its status, anything else a bare 500', () => {
    expect(thrownAnswer(new InboxKitError('project_not_found', 'Project not found'), 'r')).toMatchObject({ status: 404, unexpected: false, body: { error: { code: 'project_not_found' } } });
    expect(thrownAnswer(Object.assign(new Error('Body is too large'), { statusCode: 413 }), 'r')).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
    expect(thrownAnswer(Object.assign(new Error('nope'), { statusCode: 400 }), 'r')).toMatchObject({ status: 400, body: { error: { code: 'validation_error', message: 'nope' } } });
    const hidden = thrownAnswer(Object.assign(new Error('SELECT secret'), { statusCode: 500 }), 'r');
    expect(hidden).toMatchObject({ status: 500, unexpected: true, body: { error: { code: 'internal_error', message: 'Internal server error' } } });
    expect(thrownAnswer(new Error('boom'), 'r')).toMatchObject({ status: 500, unexpected: true });
    expect(thrownAnswer(null, 'r')).toMatchObject({ status: 500, unexpected: true });
  });
});

/** A stand-in for Node's `ServerResponse`: records what is written; `full` holds writes unread until `drain()`. */
function response(full = false) {
  const emitter = new EventEmitter();
  const state = { head: undefined as unknown, chunks: [] as string[], ended: false, unread: 0 };
  const res: ServerResponseLike & { drain(): void; closeEarly(): void } = {
    get writableLength() { return state.unread; },
    get writableFinished() { return state.ended; },
    destroyed: false,
    writeHead: (status, headers) => { state.head = { status, headers }; },
    write: (chunk) => { state.chunks.push(chunk); if (full) state.unread += chunk.length; },
    end: () => { state.ended = true; emitter.emit('close'); },
    on: (event, listener) => emitter.on(event, listener),
    off: (event, listener) => emitter.off(event, listener),
    once: (event, listener) => emitter.once(event, listener),
    drain: () => { state.unread = 0; emitter.emit('drain'); },
    closeEarly: () => emitter.emit('close'),
  };
  return { res, state, emitter };
}

describe('the Node helpers', () => {
  it('clientLeftSignal aborts when the response closes unfinished, not after it ended', () => {
    const gone = response();
    const signal = clientLeftSignal(gone.res);
    gone.res.closeEarly();
    expect(signal.aborted).toBe(true);
    const done = response();
    const kept = clientLeftSignal(done.res);
    done.res.end();
    expect(kept.aborted).toBe(false);
    const closed = response();
    (closed.res as { destroyed: boolean }).destroyed = true;
    expect(clientLeftSignal(closed.res).aborted).toBe(true);
  });

  it("writeEventStream writes the head (the host's headers, then the answer's), the frames with back-pressure, and ends", async () => {
    const { res, state, emitter } = response(true);
    let waited = false;
    const stream = {
      end: () => {},
      async pipe(sink: { write(c: string): void; buffered(): number; drained(): Promise<void>; close(): void }) {
        sink.write('retry: 1000\n\n');
        expect(sink.buffered()).toBe(13);
        const drained = sink.drained().then(() => { waited = true; });
        expect(emitter.listenerCount('drain')).toBe(1);
        res.drain();
        await drained;
        expect(emitter.listenerCount('drain')).toBe(0);
        await sink.drained(); // nothing unread: at once
        sink.write(': heartbeat\n\n');
        sink.close();
      },
    };
    await writeEventStream(res, { status: 200, headers: { 'content-type': 'text/event-stream', 'x-request-id': 'req_a' }, stream }, { 'x-request-id': 'host', 'x-host': '1' });
    expect(state.head).toEqual({ status: 200, headers: { 'x-request-id': 'req_a', 'x-host': '1', 'content-type': 'text/event-stream' } });
    expect(state.chunks).toEqual(['retry: 1000\n\n', ': heartbeat\n\n']);
    expect(waited).toBe(true);
    expect(state.ended).toBe(true);
    await expect(writeEventStream(res, { status: 200, headers: {} })).rejects.toThrow(TypeError);
  });

  it('answerClientError writes the envelope and destroys the socket, and leaves a reset or destroyed one alone', () => {
    const socket = () => ({ destroyed: false, writable: true, written: [] as string[], write(t: string) { this.written.push(t); }, destroy() { this.destroyed = true; } });
    const large = socket();
    answerClientError(Object.assign(new Error('too large'), { code: 'HPE_HEADER_OVERFLOW' }), large);
    expect(large.written[0]).toMatch(/^HTTP\/1\.1 431 /);
    expect(large.written[0]).toMatch(/x-request-id: req_[A-Za-z0-9_-]{21}\r\n/);
    expect(large.destroyed).toBe(true);
    const reset = socket();
    answerClientError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), reset);
    expect(reset).toMatchObject({ written: [], destroyed: false });
    const closed = { ...socket(), writable: false };
    answerClientError(new Error('garbage'), closed);
    expect(closed).toMatchObject({ written: [], destroyed: true });
  });
});
