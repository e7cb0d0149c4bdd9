/**
 * Request bodies in the pipeline (platform.md "Connections and request bodies"): read as they
 * arrive, refused 413 `payload_too_large` as soon as they pass the limit (announced or counted;
 * the rest is never buffered), and 408 `request_timeout` when they have not all arrived by the
 * deadline (counted from the request's start). The deadline costs no timer per request: pending
 * reads are noted with their deadline, and one interval per handler, running only while reads
 * are pending, expires those past it (between the deadline and a tenth of it later, at most 1 s).
 * A Node.js request stream is read through its events; any other body (a web `ReadableStream`)
 * through its async iterator.
 */
import { InboxKitError } from '../../errors.js';

/** Thrown when the body did not arrive within the deadline (answered 408 `request_timeout`, `Connection: close`). */
export class BodyTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`The request body did not arrive within ${timeoutMs} ms`);
    this.name = 'BodyTimeoutError';
  }
}

/** True when the request announces a body (`Transfer-Encoding`, or a `Content-Length` other than 0). */
export function announcesBody(headers: Readonly<Record<string, string | undefined>>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The announced `Content-Length` in bytes, or undefined (absent, chunked, malformed). */
export function announcedLength(headers: Readonly<Record<string, string | undefined>>): number | undefined {
  const length = headers['content-length'];
  if (length === undefined) return undefined;
  const n = Number(length);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

interface PendingRead {
  deadline: number;
  expire(): void;
}

/** The body reader of one handler, with its deadline sweeper. */
export interface BodyReader {
  /**
   * Reads `body` whole. @param startedAt `performance.now()` of the request's start.
   * @throws InboxKitError `payload_too_large`; {@link BodyTimeoutError}.
   */
  read(body: AsyncIterable<Uint8Array> | null | undefined, announced: number | undefined, startedAt: number): Promise<Uint8Array>;
  /** Stops the sweeper (pending reads are left to their sockets). */
  close(): void;
}

const EMPTY = new Uint8Array(0);
/** 413 naming the body limit (bytes), so a client knows how far to cut the body. */
const tooLarge = (limit: number) => new InboxKitError('payload_too_large', `Request body is too large; the limit is ${limit} bytes`);

/** `chunks` (of `size` bytes in all) as one array: the chunk itself when there is one. */
function joined(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/**
 * A Node.js readable stream (an `http.IncomingMessage`), as far as the reader uses it: it is read
 * through its events — one promise and four listeners a body — rather than its async iterator
 * (a promise per chunk, and end-of-stream bookkeeping per request).
 */
interface NodeReadable {
  on(event: 'data' | 'end' | 'error' | 'close', listener: (value?: never) => void): unknown;
  removeListener(event: 'data' | 'end' | 'error' | 'close', listener: (value?: never) => void): unknown;
  read(): unknown;
  pause(): unknown;
  resume?(): unknown;
  readableEnded?: boolean;
}

const isNodeReadable = (body: object): body is NodeReadable => {
  const b = body as Partial<NodeReadable>;
  return typeof b.on === 'function' && typeof b.removeListener === 'function' && typeof b.read === 'function' && typeof b.pause === 'function';
};

/** What a Node stream that closed before its end rejects with (as its async iterator would). */
function prematureClose(): Error {
  return Object.assign(new Error('The request body ended before it was complete'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/**
 * A body reader for `limit` bytes and `timeoutMs` (0: no deadline).
 * @throws TypeError when `timeoutMs` is not an integer ≥ 0 or `limit` not an integer ≥ 0.
 */
export function createBodyReader(limit: number, timeoutMs: number): BodyReader {
  if (!Number.isInteger(timeoutMs) || timeoutMs < 0) throw new TypeError(`bodyTimeoutMs must be an integer ≥ 0, got ${timeoutMs}`);
  if (!Number.isInteger(limit) || limit < 0) throw new TypeError(`bodyLimit must be an integer ≥ 0, got ${limit}`);
  const pending = new Set<PendingRead>();
  let sweeper: ReturnType<typeof setInterval> | undefined;
  const period = Math.min(1000, Math.max(10, Math.floor(timeoutMs / 10)));
  const sweep = () => {
    const now = performance.now();
    for (const read of pending) {
      if (now >= read.deadline) {
        pending.delete(read);
        read.expire();
      }
    }
    if (pending.size === 0 && sweeper !== undefined) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };
  const watch = (read: PendingRead) => {
    pending.add(read);
    if (sweeper === undefined) {
      sweeper = setInterval(sweep, period);
      (sweeper as { unref?: () => void }).unref?.();
    }
  };
  /** Reads a Node stream whole by its events; past `limit` or the deadline it stops reading. */
  const readNode = (stream: NodeReadable, startedAt: number): Promise<Uint8Array> => new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let entry: PendingRead | undefined;
    const settled = () => {
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onError);
      stream.removeListener('close', onClose);
      if (entry !== undefined) pending.delete(entry);
    };
    // Past the limit or the deadline the rest is not read: the stream stays paused (the socket
    // stops reading once its buffer fills) until the answer, sent with `Connection: close`, ends it.
    const fail = (error: unknown) => {
      settled();
      stream.pause();
      reject(error);
    };
    function onData(chunk?: Uint8Array) {
      size += chunk!.byteLength;
      if (size > limit) fail(tooLarge(limit));
      else chunks.push(chunk!);
    }
    function onEnd() {
      settled();
      resolve(joined(chunks, size));
    }
    function onError(error?: unknown) {
      settled();
      reject(error);
    }
    function onClose() {
      settled();
      reject(prematureClose());
    }
    stream.on('data', onData as (value?: never) => void);
    stream.on('end', onEnd);
    stream.on('error', onError as (value?: never) => void);
    stream.on('close', onClose);
    stream.resume?.(); // flowing even if something paused it before the pipeline got it
    if (timeoutMs > 0) watch((entry = { deadline: startedAt + timeoutMs, expire: () => fail(new BodyTimeoutError(timeoutMs)) }));
  });
  return {
    async read(body, announced, startedAt) {
      if (announced !== undefined && announced > limit) throw tooLarge(limit);
      if (body === null || body === undefined) return EMPTY;
      if (timeoutMs > 0 && performance.now() - startedAt >= timeoutMs) throw new BodyTimeoutError(timeoutMs);
      if (isNodeReadable(body)) return body.readableEnded === true ? EMPTY : readNode(body, startedAt);
      const iterator = body[Symbol.asyncIterator]();
      const chunks: Uint8Array[] = [];
      let size = 0;
      const reading = (async () => {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
          size += next.value.byteLength;
          if (size > limit) throw tooLarge(limit);
          chunks.push(next.value);
        }
      })();
      let entry: PendingRead | undefined;
      try {
        if (timeoutMs > 0) {
          await Promise.race([reading, new Promise<never>((_resolve, reject) => {
            entry = { deadline: startedAt + timeoutMs, expire: () => reject(new BodyTimeoutError(timeoutMs)) };
            watch(entry);
          })]);
        } else {
          await reading;
        }
      } catch (error) {
        reading.catch(() => {}); // the socket is closed with the answer; a pending read then fails
        Promise.resolve(iterator.return?.()).catch(() => {});
        throw error;
      } finally {
        if (entry !== undefined) pending.delete(entry);
      }
      return joined(chunks, size);
    },
    close() {
      if (sweeper !== undefined) clearInterval(sweeper);
      sweeper = undefined;
      pending.clear();
    },
  };
}
