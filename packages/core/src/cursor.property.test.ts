/**
 * Property tests of the cursor codec (project-inbox.md "GET /projects/:id/inbox": an opaque
 * cursor that does not decode strictly, or was minted for another project or filter set, is
 * `invalid_cursor`). Random bytes and strings never decode to a cursor and never throw anything but
 * `invalid_cursor`; what `encodeCursor` mints always round-trips; a tampered cursor is either
 * refused or is itself exactly what `encodeCursor` would mint (there is one spelling per position).
 * The HTTP side ("never a 500") is in packages/http-fastify/test/hostile-*.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, filterFingerprint, type CursorPosition } from './cursor.js';
import { InboxKitError } from './errors.js';
import { hasLoneSurrogate } from './validation.js';

const SCOPE = 'proj_main';
const FP = filterFingerprint({ status: 'pending' });
const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** Decodes, or returns the error code (anything but an InboxKitError fails the test). */
function decode(cursor: string, scope = SCOPE, filters = FP): { ok: true; pos: CursorPosition } | { ok: false; code: string } {
  try {
    return { ok: true, pos: decodeCursor(cursor, scope, filters) };
  } catch (error) {
    expect(error).toBeInstanceOf(InboxKitError);
    return { ok: false, code: (error as InboxKitError).code };
  }
}

const idArb = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 128 });
const positionArb: fc.Arbitrary<CursorPosition> = fc.record({ created_at: fc.nat({ max: Number.MAX_SAFE_INTEGER }), id: idArb });
/** Any well-formed Unicode (lone surrogates: see the last test). */
const wellFormed = (maxLength: number) => fc.string({ unit: 'binary', maxLength }).filter((s) => !hasLoneSurrogate(s));
const filtersArb = fc.dictionary(fc.constantFrom('status', 'type', 'sender_account_id', 'source_session_id'), fc.oneof(wellFormed(40), fc.nat(), fc.constant(undefined), fc.constant(null)));

describe('cursor codec (property)', () => {
  it('random bytes never decode to a cursor (base64url-encoded or not), and only ever throw invalid_cursor', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), wellFormed(20), (bytes, scope) => {
        expect(decode(b64url(bytes))).toEqual({ ok: false, code: 'invalid_cursor' });
        expect(decode(b64url(bytes), scope, '')).toEqual({ ok: false, code: 'invalid_cursor' });
        expect(decode(Buffer.from(bytes).toString('latin1'))).toEqual({ ok: false, code: 'invalid_cursor' });
        expect(decode(Buffer.from(bytes).toString('base64'))).toEqual({ ok: false, code: 'invalid_cursor' });
      }),
      { numRuns: 500 },
    );
  });

  it('arbitrary strings (any code points, lone surrogates included) only ever throw invalid_cursor', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 3000 }), (s) => {
        expect(decode(s)).toEqual({ ok: false, code: 'invalid_cursor' });
      }),
      { numRuns: 500 },
    );
  });

  it('random JSON in the cursor envelope decodes only when it is exactly the minted shape', () => {
    const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined));
    const field = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: anyValue });
    const payloadArb = fc.record(
      {
        v: field(fc.constant(1)),
        s: field(fc.constant(SCOPE)),
        f: field(fc.constant(FP)),
        c: field(fc.oneof(fc.nat({ max: Number.MAX_SAFE_INTEGER }), fc.constantFrom(-1, 1.5, 2 ** 53, 1e300, -0))),
        i: field(fc.oneof(idArb, fc.constantFrom('', 'a\u0000', 'é', 'x'.repeat(129), ' id'))),
        extra: fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: anyValue }),
      },
      { requiredKeys: ['v', 's', 'f', 'c', 'i', 'extra'] },
    );
    let accepted = 0;
    fc.assert(
      fc.property(payloadArb, (payload) => {
        const cursor = b64url(new TextEncoder().encode(JSON.stringify(payload)));
        const r = decode(cursor);
        if (r.ok) {
          accepted++;
          // Only the exact minted form gets through, and it names a sane position.
          expect(Number.isSafeInteger(r.pos.created_at) && r.pos.created_at >= 0).toBe(true);
          expect(r.pos.id).toMatch(/^[\x21-\x7e]{1,128}$/);
          expect(encodeCursor(SCOPE, FP, r.pos)).toBe(cursor);
        } else {
          expect(r.code).toBe('invalid_cursor');
        }
      }),
      { numRuns: 500 },
    );
    expect(accepted).toBeGreaterThan(0); // the valid branch was exercised too
  });

  it('what encodeCursor mints round-trips, is base64url, and is refused for any other scope or filter set', () => {
    fc.assert(
      fc.property(wellFormed(64), filtersArb, positionArb, wellFormed(64), filtersArb, (scope, filters, pos, otherScope, otherFilters) => {
        const fp = filterFingerprint(filters);
        const cursor = encodeCursor(scope, fp, pos);
        expect(cursor).toMatch(/^[A-Za-z0-9_-]*$/);
        expect(decode(cursor, scope, fp)).toEqual({ ok: true, pos });
        if (otherScope !== scope) expect(decode(cursor, otherScope, fp)).toEqual({ ok: false, code: 'invalid_cursor' });
        const otherFp = filterFingerprint(otherFilters);
        if (otherFp !== fp) expect(decode(cursor, scope, otherFp)).toEqual({ ok: false, code: 'invalid_cursor' });
      }),
      { numRuns: 500 },
    );
  });

  it('a tampered cursor is refused, or is exactly the cursor encodeCursor mints for what it decodes to', () => {
    const edit = fc.oneof(
      fc.record({ k: fc.constant('set' as const), at: fc.nat(), ch: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) }),
      fc.record({ k: fc.constant('insert' as const), at: fc.nat(), ch: fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }) }),
      fc.record({ k: fc.constant('delete' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 4 }) }),
      fc.record({ k: fc.constant('slice' as const), at: fc.nat(), n: fc.nat() }),
    );
    fc.assert(
      fc.property(positionArb, fc.array(edit, { minLength: 1, maxLength: 3 }), (pos, edits) => {
        let c = encodeCursor(SCOPE, FP, pos);
        for (const e of edits) {
          const at = c.length === 0 ? 0 : e.at % (c.length + 1);
          if (e.k === 'set') c = c.slice(0, at) + e.ch + c.slice(at + 1);
          else if (e.k === 'insert') c = c.slice(0, at) + e.ch + c.slice(at);
          else if (e.k === 'delete') c = c.slice(0, at) + c.slice(at + e.n);
          else c = c.slice(at, at + e.n);
        }
        const r = decode(c);
        if (r.ok) expect(encodeCursor(SCOPE, FP, r.pos)).toBe(c);
        else expect(r.code).toBe('invalid_cursor');
      }),
      { numRuns: 500 },
    );
  });

  it('scopes and filters with lone surrogates still round-trip (JSON escapes them), and stay apart from their U+FFFD look-alikes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 20 }), fc.constantFrom('\ud800', '\udfff', 'a\udc00b'), positionArb, (prefix, lone, pos) => {
        const scope = prefix + lone;
        const cursor = encodeCursor(scope, FP, pos);
        expect(decode(cursor, scope, FP)).toEqual({ ok: true, pos });
        expect(decode(cursor, scope.replace(/[\ud800-\udfff]/g, '\ufffd'), FP)).toEqual({ ok: false, code: 'invalid_cursor' });
      }),
      { numRuns: 200 },
    );
  });
});
