/**
 * Property tests of the Live Inbox queue (live-inbox.md "Queue semantics") against a plain model:
 * random sequences of queue / replace / withdraw / reorder / drain / close, with valid and invalid
 * arguments, must keep ids unique and strictly increasing, the order the model says, the version
 * the spec says (+1 per successful queue, replace, withdraw, reorder, close; never on drain or a
 * failure), and account for every acknowledged message exactly once: drained, withdrawn, left over
 * at close, or still queued — never two of those. The host-level property adds attempts and
 * carry-over (a message is never both drained and carried, never lost).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InboxKitError } from '../errors.js';
import { LiveInboxHost, LiveInboxQueue, type ContentBlock, type LiveInboxMessage } from './index.js';

const RUNS = 300;

const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];
const textOf = (content: readonly ContentBlock[]): string => content.map((b) => (b.type === 'text' ? b.text : '<image>')).join('');

/** Content the queue must refuse (validation_error), whatever the operation. */
const BAD_CONTENT: unknown[] = [
  [],
  [{ type: 'audio', data: 'x' }],
  [{ type: 'text', text: 'x', bold: true }],
  [{ type: 'text', text: 1 }],
  [{ type: 'image', source: { type: 'file', path: '/etc/passwd' } }],
  [{ type: 'text', text: 'lone \ud800 surrogate' }],
  'not an array',
  null,
];

/** Runs `fn`; returns `{ ok, value }` or the InboxKitError code it threw (anything else fails the test). */
function attempt<T>(fn: () => T): { ok: true; value: T } | { ok: false; code: string } {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    if (!(error instanceof InboxKitError)) throw error;
    return { ok: false, code: error.code };
  }
}

/** Which id an edit names: a queued one, one that is gone (drained/withdrawn/left over), or never given. */
type IdPick = { from: 'current' | 'gone'; index: number } | { from: 'never'; value: number };

type Op =
  | { k: 'queue'; token: number; bad: number | null }
  | { k: 'replace'; pick: IdPick; token: number; bad: number | null }
  | { k: 'withdraw'; pick: IdPick }
  | { k: 'reorder'; keys: number[]; flaw: 'none' | 'drop' | 'dup' | 'unknown' | 'extra' | 'unsafe' }
  | { k: 'drain' }
  | { k: 'close' }
  | { k: 'tamper'; index: number };

const pickArb: fc.Arbitrary<IdPick> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ from: fc.constant('current' as const), index: fc.nat(50) }) },
  { weight: 2, arbitrary: fc.record({ from: fc.constant('gone' as const), index: fc.nat(50) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      from: fc.constant('never' as const),
      value: fc.oneof(fc.integer({ min: -5, max: 1000 }), fc.constantFrom(0, -1, 1.5, Number.NaN, Infinity, 2 ** 53, Number.MAX_SAFE_INTEGER)),
    }),
  },
);
/** Mostly valid content (null), sometimes the index of a {@link BAD_CONTENT} entry. */
const badArb: fc.Arbitrary<number | null> = fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat(BAD_CONTENT.length - 1) });

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 16, arbitrary: fc.record({ k: fc.constant('queue' as const), token: fc.nat(), bad: badArb }) },
  { weight: 6, arbitrary: fc.record({ k: fc.constant('replace' as const), pick: pickArb, token: fc.nat(), bad: badArb }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('withdraw' as const), pick: pickArb }) },
  {
    weight: 6,
    arbitrary: fc.record({
      k: fc.constant('reorder' as const),
      keys: fc.array(fc.nat(), { maxLength: 12 }),
      flaw: fc.constantFrom('none', 'none', 'none', 'drop', 'dup', 'unknown', 'extra', 'unsafe'),
    }),
  },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('drain' as const) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('tamper' as const), index: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('close' as const) }) },
);

interface Model {
  entries: { id: number; text: string }[];
  nextId: number;
  version: number;
  closed: boolean;
  /** Ids whose queue identity ended, and how. */
  drained: Map<number, string>;
  withdrawn: Set<number>;
  leftover: Map<number, string>;
  issued: number[];
}

function resolvePick(m: Model, pick: IdPick): number {
  if (pick.from === 'never') return pick.value;
  const pool = pick.from === 'current' ? m.entries.map((e) => e.id) : [...m.drained.keys(), ...m.withdrawn, ...m.leftover.keys()];
  // No such id to pick: fall back to one that was never given.
  return pool.length === 0 ? m.nextId + pick.index : pool[pick.index % pool.length]!;
}

/** The reorder list an op describes, given the queue's current ids. */
function orderFor(m: Model, op: Extract<Op, { k: 'reorder' }>): { order: number[]; valid: boolean } {
  const ids = m.entries.map((e) => e.id);
  const perm = ids
    .map((id, i) => ({ id, key: op.keys.length === 0 ? i : op.keys[i % op.keys.length]! * 64 + i }))
    .sort((a, b) => a.key - b.key)
    .map((x) => x.id);
  switch (op.flaw) {
    case 'none':
      return { order: perm, valid: true };
    case 'drop':
      return ids.length === 0 ? { order: [m.nextId], valid: false } : { order: perm.slice(1), valid: false };
    case 'dup':
      // Same length, one id twice (or, with one id, that id twice: a wrong length).
      return ids.length === 0 ? { order: [1, 1], valid: false } : { order: ids.length === 1 ? [perm[0]!, perm[0]!] : [perm[0]!, ...perm.slice(0, -1)], valid: false };
    case 'unknown':
      return ids.length === 0 ? { order: [m.nextId + 1], valid: false } : { order: [...perm.slice(0, -1), m.nextId + 7], valid: false };
    case 'extra':
      return { order: [...perm, m.nextId + 3], valid: false };
    case 'unsafe':
      return ids.length === 0 ? { order: [2 ** 53 + 2], valid: false } : { order: [...perm.slice(0, -1), perm[perm.length - 1]! + 0.5], valid: false };
  }
}

const view = (messages: readonly LiveInboxMessage[]) => messages.map((m) => ({ id: m.id, text: textOf(m.content) }));

function checkAgainstModel(q: LiveInboxQueue, m: Model): void {
  const snap = q.snapshot();
  expect(snap.version).toBe(m.version);
  expect(view(snap.messages)).toEqual(m.entries);
  expect(q.version).toBe(m.version);
  expect(q.size).toBe(m.entries.length);
  expect(q.closed).toBe(m.closed);
  const ids = snap.messages.map((x) => x.id);
  expect(new Set(ids).size).toBe(ids.length);
}

describe('LiveInboxQueue against a model (property)', () => {
  it('random operation sequences keep ids, order, version and every message as the model says', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 80, size: 'max' }), (ops) => {
        const q = new LiveInboxQueue();
        const m: Model = { entries: [], nextId: 1, version: 0, closed: false, drained: new Map(), withdrawn: new Set(), leftover: new Map(), issued: [] };
        const inactive = { ok: false, code: 'live_inbox_inactive' };
        for (const op of ops) {
          const before = q.snapshot();
          switch (op.k) {
            case 'queue': {
              const content = op.bad === null ? text(`m${op.token}`) : BAD_CONTENT[op.bad];
              const r = attempt(() => q.queue(content as ContentBlock[]));
              if (m.closed) expect(r).toEqual(inactive);
              else if (op.bad !== null) expect(r).toEqual({ ok: false, code: 'validation_error' });
              else {
                expect(r).toEqual({ ok: true, value: m.nextId });
                m.issued.push(m.nextId);
                m.entries.push({ id: m.nextId++, text: `m${op.token}` });
                m.version++;
              }
              break;
            }
            case 'replace': {
              const id = resolvePick(m, op.pick);
              const content = op.bad === null ? text(`r${op.token}`) : BAD_CONTENT[op.bad];
              const r = attempt(() => q.replace(id, content as ContentBlock[]));
              const entry = m.entries.find((e) => e.id === id);
              if (m.closed) expect(r).toEqual(inactive);
              else if (op.bad !== null) expect(r).toEqual({ ok: false, code: 'validation_error' });
              else if (entry === undefined) expect(r).toEqual({ ok: false, code: 'live_inbox_message_not_found' });
              else {
                expect(r.ok).toBe(true);
                entry.text = `r${op.token}`;
                m.version++;
              }
              break;
            }
            case 'withdraw': {
              const id = resolvePick(m, op.pick);
              const r = attempt(() => q.withdraw(id));
              const index = m.entries.findIndex((e) => e.id === id);
              if (m.closed) expect(r).toEqual(inactive);
              else if (index < 0) expect(r).toEqual({ ok: false, code: 'live_inbox_message_not_found' });
              else {
                expect(r.ok).toBe(true);
                m.entries.splice(index, 1);
                m.withdrawn.add(id);
                m.version++;
              }
              break;
            }
            case 'reorder': {
              const { order, valid } = orderFor(m, op);
              const r = attempt(() => q.reorder(order));
              if (m.closed) expect(r).toEqual(inactive);
              else if (!valid) expect(r).toEqual({ ok: false, code: 'live_inbox_order_conflict' });
              else {
                expect(r.ok).toBe(true);
                m.entries = order.map((id) => m.entries.find((e) => e.id === id)!);
                m.version++;
              }
              break;
            }
            case 'drain': {
              const r = attempt(() => q.drain());
              if (m.closed) expect(r).toEqual(inactive);
              else {
                expect(r.ok && view(r.value)).toEqual(m.entries);
                for (const e of m.entries) m.drained.set(e.id, e.text);
                m.entries = [];
              }
              break;
            }
            case 'close': {
              const r = attempt(() => q.close());
              if (m.closed) expect(r).toEqual(inactive);
              else {
                expect(r.ok && view(r.value)).toEqual(m.entries);
                for (const e of m.entries) m.leftover.set(e.id, e.text);
                m.entries = [];
                m.closed = true;
                m.version++;
              }
              break;
            }
            case 'tamper': {
              // Snapshots are copies: scribbling on one changes nothing.
              const snap = q.snapshot();
              const msg = snap.messages[op.index % Math.max(1, snap.messages.length)];
              if (msg) {
                msg.id = -1;
                (msg.content[0] as { text: string }).text = 'tampered';
                msg.content.push({ type: 'text', text: 'more' });
              }
              snap.messages.reverse();
              snap.version = -1;
              break;
            }
          }
          const failed = op.k !== 'tamper' && op.k !== 'drain' && q.version === before.version;
          if (failed) expect(q.snapshot()).toEqual(before); // a failed operation leaves the queue exactly as it was
          // The cached snapshot text (made once per state) is always the text of the snapshot now.
          expect(q.snapshotJson()).toBe(JSON.stringify(q.snapshot()));
          checkAgainstModel(q, m);
        }

        // Ids were handed out from 1, strictly increasing, never reused.
        expect(m.issued).toEqual(m.issued.map((_, i) => i + 1));
        // Every acknowledged message is in exactly one place.
        const places = [m.entries.map((e) => e.id), [...m.drained.keys()], [...m.withdrawn], [...m.leftover.keys()]];
        const all = places.flat();
        expect(new Set(all).size).toBe(all.length);
        expect([...all].sort((a, b) => a - b)).toEqual(m.issued);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('LiveInboxQueue: edits racing a drain (property)', () => {
  it('edits racing a drain have exactly one winner each (any interleaving)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.record({ kind: fc.constantFrom('replace', 'withdraw'), index: fc.nat(5) }), { minLength: 1, maxLength: 8 }),
        async (s, n, edits) => {
          const q = new LiveInboxQueue();
          for (let i = 1; i <= n; i++) q.queue(text(`orig${i}`));
          const results: { edit: number; kind: string; id: number; seq: number; ok: boolean; code?: string }[] = [];
          let clock = 0;
          let drained: { at: number; messages: LiveInboxMessage[] } | undefined;
          const tasks = edits.map((e, i) => s.schedule(Promise.resolve(), `${e.kind}#${i}`).then(() => {
            const id = (e.index % n) + 1;
            const r = attempt(() => (e.kind === 'replace' ? q.replace(id, text(`edit${i}`)) : q.withdraw(id)));
            results.push({ edit: i, kind: e.kind, id, seq: clock++, ok: r.ok, ...(r.ok ? {} : { code: r.code }) });
          }));
          tasks.push(s.schedule(Promise.resolve(), 'drain').then(() => {
            drained = { at: clock++, messages: q.drain() };
          }));
          await s.waitAll();
          await Promise.all(tasks);

          const d = drained!;
          const drainedText = new Map(d.messages.map((msg) => [msg.id, textOf(msg.content)]));
          // Replay what ran, in the order it ran, against a map of id → text.
          const model = new Map<number, string>(Array.from({ length: n }, (_, i) => [i + 1, `orig${i + 1}`]));
          let modelDrained: Map<number, string> | undefined;
          const byTime = [...results].sort((a, b) => a.seq - b.seq);
          let k = 0;
          for (let t = 0; t < clock; t++) {
            if (t === d.at) {
              modelDrained = new Map(model);
              model.clear();
              continue;
            }
            const r = byTime[k++]!;
            // The edit won iff its message was still queued when it ran; otherwise it got "unknown id".
            expect(r.ok).toBe(model.has(r.id));
            if (!r.ok) expect(r.code).toBe('live_inbox_message_not_found');
            if (r.ok && r.kind === 'withdraw') model.delete(r.id);
            if (r.ok && r.kind === 'replace') model.set(r.id, `edit${r.edit}`);
          }
          expect(drainedText).toEqual(modelDrained);
          // After the drain nothing is editable, and the queue is empty.
          expect(q.snapshot().messages).toEqual([]);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

type HostOp =
  | { k: 'open'; executor: 'native' | 'acp' }
  | { k: 'closeActive'; undelivered: number }
  | { k: 'closeStale'; undelivered: number }
  | { k: 'queue' }
  | { k: 'withdraw'; index: number }
  | { k: 'replace'; index: number }
  | { k: 'drain' };

const hostOpArb: fc.Arbitrary<HostOp> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ k: fc.constant('open' as const), executor: fc.constantFrom('native' as const, 'native' as const, 'acp' as const) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('closeActive' as const), undelivered: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('closeStale' as const), undelivered: fc.nat(2) }) },
  { weight: 6, arbitrary: fc.record({ k: fc.constant('queue' as const) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('withdraw' as const), index: fc.nat(10) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('replace' as const), index: fc.nat(10) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('drain' as const) }) },
);

describe('LiveInboxHost carry-over (property)', () => {
  it('across attempts, every acknowledged message is drained once, withdrawn or still waiting — never two of those, never lost', () => {
    fc.assert(
      fc.property(fc.array(hostOpArb, { maxLength: 80, size: 'max' }), (ops) => {
        const host = new LiveInboxHost({ hostId: 'prop' });
        const S = 'sess_prop';
        let token = 0;
        const acknowledged = new Set<string>(); // the latest text of every live message
        const drained: string[] = [];
        const withdrawn = new Set<string>();
        const replaced = new Set<string>();
        const handles: ReturnType<LiveInboxHost['openAttempt']>[] = [];
        let runs = 0;
        for (const op of ops) {
          const inbox = host.liveInbox(S);
          switch (op.k) {
            case 'open':
              handles.push(host.openAttempt({ session_id: S, run_id: `run_${++runs}`, executor: op.executor }));
              break;
            case 'closeActive':
            case 'closeStale': {
              const active = host.active(S);
              const target = op.k === 'closeActive' ? active : handles.find((h) => h !== active);
              if (!target) break;
              // Content drained but never committed comes back as `undelivered`.
              const undelivered = Array.from({ length: op.undelivered }, () => {
                const t = `u${++token}`;
                acknowledged.add(t);
                return text(t);
              });
              host.closeAttempt(target, { undelivered });
              break;
            }
            case 'queue':
              if (inbox) {
                const t = `q${++token}`;
                inbox.queue(text(t));
                acknowledged.add(t);
              }
              break;
            case 'withdraw':
            case 'replace': {
              const snap = inbox?.snapshot().messages ?? [];
              const target = snap[op.index % Math.max(1, snap.length)];
              if (!inbox || !target) break;
              const old = textOf(target.content);
              if (op.k === 'withdraw') {
                inbox.withdraw(target.id);
                withdrawn.add(old);
              } else {
                const t = `r${++token}`;
                inbox.replace(target.id, text(t));
                replaced.add(old);
                acknowledged.add(t);
              }
              acknowledged.delete(old);
              break;
            }
            case 'drain':
              if (inbox) for (const msg of inbox.drain()) drained.push(textOf(msg.content));
              break;
          }
          // Queue ids of the open inbox are unique; ids never repeat within it.
          const ids = host.liveInbox(S)?.snapshot().messages.map((x) => x.id) ?? [];
          expect(new Set(ids).size).toBe(ids.length);
        }
        const waiting = [...(host.liveInbox(S)?.snapshot().messages.map((x) => textOf(x.content)) ?? []), ...host.pendingCarryOver(S).map(textOf)];
        // Drained at most once each, and nothing drained is still waiting (never both drained and carried).
        expect(new Set(drained).size).toBe(drained.length);
        expect(waiting.filter((t) => drained.includes(t))).toEqual([]);
        expect(new Set(waiting).size).toBe(waiting.length);
        // Withdrawn or replaced content is gone for good.
        for (const t of [...withdrawn, ...replaced]) {
          expect(drained).not.toContain(t);
          expect(waiting).not.toContain(t);
        }
        // Nothing acknowledged is lost: each live message was drained or is still waiting.
        expect([...drained, ...waiting].sort()).toEqual([...acknowledged].sort());
      }),
      { numRuns: RUNS },
    );
  });
});
