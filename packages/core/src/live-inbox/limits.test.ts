/**
 * Live Inbox bounds (live-inbox.md "Limits"): each inbox holds at most `maxMessages` messages and
 * `maxBytes` of content (UTF-8 bytes of the content's JSON text); queue and replace past them throw
 * `live_inbox_full` and change nothing; drain, withdraw and close give the room back; a Session's
 * pending carry-over keeps at most one inbox's worth (the oldest), so it always fits the next inbox.
 */
import { describe, expect, it } from 'vitest';
import { rejection } from '../test-support.js';
import {
  DEFAULT_LIVE_INBOX_LIMITS, DEFAULT_MAX_CARRY_OVER_BYTES, LiveInboxHost, LiveInboxQueue, contentBytes, liveInboxLimits, type ContentBlock,
} from './index.js';

const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];
/** Content of exactly `n` bytes (JSON `[{"type":"text","text":"…"}]` is 27 bytes plus the text). */
const sized = (n: number, fill = 'x'): ContentBlock[] => text(fill.repeat(n - 27));
const fullCode = async (fn: () => unknown) => (await rejection((async () => fn())())).code;

describe('Live Inbox limits', () => {
  it('defaults: 100 messages and 4 MiB; partial limits are completed; a limit that is not an integer ≥ 1 is a TypeError', () => {
    expect(DEFAULT_LIVE_INBOX_LIMITS).toEqual({ maxMessages: 100, maxBytes: 4_194_304 });
    expect(new LiveInboxQueue().limits).toEqual(DEFAULT_LIVE_INBOX_LIMITS);
    expect(liveInboxLimits({ maxMessages: 3 })).toEqual({ maxMessages: 3, maxBytes: 4_194_304 });
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity]) {
      expect(() => new LiveInboxQueue({ maxMessages: bad })).toThrow(TypeError);
      expect(() => new LiveInboxHost({ limits: { maxBytes: bad } })).toThrow(TypeError);
    }
  });

  it('measures content as the UTF-8 bytes of its JSON text', () => {
    expect(contentBytes(text(''))).toBe(27);
    expect(contentBytes(sized(100))).toBe(100);
    expect(contentBytes(text('é'))).toBe(29);
    expect(contentBytes(text('😀'))).toBe(31);
  });

  it('queue past maxMessages → live_inbox_full; nothing changes; a drain or withdraw gives the room back', async () => {
    const q = new LiveInboxQueue({ maxMessages: 2 });
    q.queue(text('a'));
    const b = q.queue(text('b'));
    const before = q.snapshot();
    const error = await rejection((async () => q.queue(text('c')))());
    expect(error.code).toBe('live_inbox_full');
    expect(error.details).toEqual([expect.objectContaining({ path: 'content', code: 'max_messages' })]);
    expect(q.snapshot()).toEqual(before);
    q.withdraw(b);
    expect(q.queue(text('c'))).toBe(3);
    q.drain();
    expect(q.size).toBe(0);
    q.queue(text('d'));
    q.queue(text('e'));
    expect(await fullCode(() => q.queue(text('f')))).toBe('live_inbox_full');
  });

  it('queue and replace past maxBytes → live_inbox_full with code max_bytes; exactly at the limit is accepted', async () => {
    const q = new LiveInboxQueue({ maxBytes: 300 });
    const a = q.queue(sized(100));
    const b = q.queue(sized(200));
    expect(q.bytes).toBe(300);
    const before = q.snapshot();
    const error = await rejection((async () => q.queue(sized(28)))()); // the smallest non-blank message (blank text is refused, issue 15)
    expect(error).toMatchObject({ code: 'live_inbox_full', details: [expect.objectContaining({ code: 'max_bytes' })] });
    expect(await fullCode(() => q.replace(a, sized(101)))).toBe('live_inbox_full');
    expect(q.snapshot()).toEqual(before);
    expect(q.bytes).toBe(300);
    q.replace(b, sized(50));
    expect(q.bytes).toBe(150);
    q.replace(a, sized(250));
    expect(q.bytes).toBe(300);
    q.withdraw(a);
    expect(q.bytes).toBe(50);
    q.drain();
    expect(q.bytes).toBe(0);
    expect(() => q.queue(sized(300))).not.toThrow();
    q.close();
    expect(q.bytes).toBe(0);
  });

  it('a single message larger than maxBytes is refused even into an empty inbox', async () => {
    const q = new LiveInboxQueue({ maxBytes: 100 });
    expect(await fullCode(() => q.queue(sized(101)))).toBe('live_inbox_full');
    expect(q.version).toBe(0);
  });
});

describe('LiveInboxHost carry-over bounds', () => {
  it('the host opens inboxes with its limits', async () => {
    const host = new LiveInboxHost({ limits: { maxMessages: 1 } });
    const inbox = host.openAttempt({ session_id: 's', run_id: 'r1', executor: 'native' }).inbox!;
    expect(inbox.limits.maxMessages).toBe(1);
    inbox.queue(text('a'));
    expect(await fullCode(() => inbox.queue(text('b')))).toBe('live_inbox_full');
  });

  it('pending carry-over keeps at most one inbox worth (the oldest), reports the drop, and fits the next inbox', () => {
    const dropped: Array<{ session_id: string; dropped: number }> = [];
    const host = new LiveInboxHost({ limits: { maxMessages: 3, maxBytes: 1_000 }, onCarryOverDropped: (info) => dropped.push(info) });
    const first = host.openAttempt({ session_id: 's', run_id: 'r1', executor: 'native' });
    first.inbox!.queue(text('l1'));
    first.inbox!.queue(text('l2'));
    // Two undelivered (drained, not committed) plus two leftovers: four messages, the limit is three.
    host.closeAttempt(first, { undelivered: [text('u1'), text('u2')] });
    expect(host.pendingCarryOver('s').map((c) => (c[0] as { text: string }).text)).toEqual(['u1', 'u2', 'l1']);
    expect(dropped).toEqual([{ session_id: 's', dropped: 1 }]);
    const next = host.openAttempt({ session_id: 's', run_id: 'r2', executor: 'native' });
    expect(next.inbox!.size).toBe(3);
    expect(host.pendingCarryOver('s')).toEqual([]);
  });

  it('carry-over past maxBytes keeps the oldest that fit', () => {
    const dropped: number[] = [];
    const host = new LiveInboxHost({ limits: { maxBytes: 300 }, onCarryOverDropped: (info) => dropped.push(info.dropped) });
    const first = host.openAttempt({ session_id: 's', run_id: 'r1', executor: 'native' });
    first.inbox!.queue(sized(200));
    host.closeAttempt(first, { undelivered: [sized(150)] });
    expect(host.pendingCarryOver('s').map(contentBytes)).toEqual([150]);
    expect(dropped).toEqual([1]);
  });

  it('undelivered content of a stale handle goes into the open inbox while it has room, the rest waits (bounded)', () => {
    const host = new LiveInboxHost({ limits: { maxMessages: 2 } });
    const stale = host.openAttempt({ session_id: 's', run_id: 'r1', executor: 'native' });
    const current = host.openAttempt({ session_id: 's', run_id: 'r2', executor: 'native' });
    current.inbox!.queue(text('now'));
    host.closeAttempt(stale, { undelivered: [text('u1'), text('u2'), text('u3')] });
    expect(current.inbox!.size).toBe(2);
    expect(host.pendingCarryOver('s').map((c) => (c[0] as { text: string }).text)).toEqual(['u2', 'u3']);
  });

  it('all Sessions together keep at most maxCarryOverBytes of carry-over; opening an attempt gives the room back', () => {
    expect(DEFAULT_MAX_CARRY_OVER_BYTES).toBe(64 * 1024 * 1024);
    expect(() => new LiveInboxHost({ maxCarryOverBytes: 0 })).toThrow(TypeError);
    const dropped: Array<{ session_id: string; dropped: number }> = [];
    const host = new LiveInboxHost({ limits: { maxBytes: 1_000 }, maxCarryOverBytes: 500, onCarryOverDropped: (info) => dropped.push(info) });
    const abandon = (session_id: string, sizes: number[]) => {
      const handle = host.openAttempt({ session_id, run_id: `run_${session_id}`, executor: 'native' });
      for (const size of sizes) handle.inbox!.queue(sized(size));
      host.closeAttempt(handle);
    };
    abandon('a', [200, 100]);
    abandon('b', [150, 100]);
    expect(host.carryOverBytes).toBe(450);
    expect(host.pendingCarryOver('b').map(contentBytes)).toEqual([150]);
    abandon('c', [100]);
    expect(host.pendingCarryOver('c')).toEqual([]);
    expect(dropped).toEqual([{ session_id: 'b', dropped: 1 }, { session_id: 'c', dropped: 1 }]);
    expect(host.carryOverBytes).toBe(450);
    // Session a's next attempt takes its carry-over: the room comes back.
    expect(host.openAttempt({ session_id: 'a', run_id: 'run_a2', executor: 'native' }).inbox!.size).toBe(2);
    expect(host.carryOverBytes).toBe(150);
    abandon('c', [300]);
    expect(host.pendingCarryOver('c').map(contentBytes)).toEqual([300]);
    expect(host.carryOverBytes).toBe(450);
  });
});
