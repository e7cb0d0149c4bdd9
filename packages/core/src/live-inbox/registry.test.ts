import { describe, it, expect } from 'vitest';
import { InboxKitError } from '../errors.js';
import { LiveInboxHost, type ContentBlock, type LiveInboxQueue } from './index.js';

const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];
const textOf = (content: ContentBlock[]): string => content.map((b) => (b.type === 'text' ? b.text : '<image>')).join('');
const items = (q: LiveInboxQueue) => q.snapshot().messages.map((m) => [m.id, textOf(m.content)]);

async function ticks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve();
}

describe('LiveInboxHost attempts', () => {
  it('a native attempt owns an open inbox, reachable through liveInbox()', () => {
    const host = new LiveInboxHost({ hostId: 'h1' });
    const handle = host.openAttempt({ session_id: 's1', run_id: 'run_1', executor: 'native' });
    expect(handle).toMatchObject({ session_id: 's1', run_id: 'run_1', executor: 'native' });
    expect(handle.inbox).not.toBeNull();
    expect(host.active('s1')).toBe(handle);
    expect(host.liveInbox('s1')).toBe(handle.inbox);
    expect(host.liveInbox('other')).toBeUndefined();
    expect(Object.isFrozen(handle)).toBe(true);
  });

  it('an ACP attempt has no inbox, so liveInbox() is undefined', () => {
    const host = new LiveInboxHost();
    const handle = host.openAttempt({ session_id: 's1', run_id: 'run_1', executor: 'acp' });
    expect(handle.inbox).toBeNull();
    expect(host.active('s1')).toBe(handle);
    expect(host.liveInbox('s1')).toBeUndefined();
    expect(host.closeAttempt(handle)).toEqual([]);
    expect(host.active('s1')).toBeUndefined();
  });

  it('attempt ids are unique and generations increase per session', () => {
    const host = new LiveInboxHost();
    const handles = [
      host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' }),
      host.openAttempt({ session_id: 's2', run_id: 'r2', executor: 'native' }),
      host.openAttempt({ session_id: 's1', run_id: 'r3', executor: 'acp' }),
      host.openAttempt({ session_id: 's1', run_id: 'r4', executor: 'native' }),
    ];
    expect(new Set(handles.map((h) => h.attempt_id)).size).toBe(4);
    const s1 = handles.filter((h) => h.session_id === 's1').map((h) => h.generation);
    expect(s1).toEqual([...s1].sort((a, b) => a - b));
    expect(new Set(s1).size).toBe(s1.length);
  });

  it('closeAttempt closes the inbox and returns its leftovers; liveInbox() is then undefined', () => {
    const host = new LiveInboxHost();
    const handle = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
    handle.inbox!.queue(text('a'));
    handle.inbox!.queue(text('b'));
    const leftovers = host.closeAttempt(handle);
    expect(leftovers.map((m) => [m.id, textOf(m.content)])).toEqual([[1, 'a'], [2, 'b']]);
    expect(handle.inbox!.closed).toBe(true);
    expect(host.active('s1')).toBeUndefined();
    expect(host.liveInbox('s1')).toBeUndefined();
    expect(host.closeAttempt(handle)).toEqual([]);
    expect(host.pendingCarryOver('s1').map(textOf)).toEqual(['a', 'b']);
  });
});

describe('LiveInboxHost carry-over', () => {
  it('leftovers are re-queued into the next native attempt in order with new ids', () => {
    const host = new LiveInboxHost();
    const first = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
    for (const t of ['a', 'b', 'c', 'd']) first.inbox!.queue(text(t));
    first.inbox!.withdraw(2);
    first.inbox!.reorder([4, 1, 3]);
    host.closeAttempt(first);

    const second = host.openAttempt({ session_id: 's1', run_id: 'r2', executor: 'native' });
    expect(items(second.inbox!)).toEqual([[1, 'd'], [2, 'a'], [3, 'c']]);
    expect(second.inbox!.version).toBe(3);
    expect(host.pendingCarryOver('s1')).toEqual([]);
    // Old ids mean nothing in the new queue beyond what it gave; the old queue refuses everything.
    expect(() => first.inbox!.withdraw(4)).toThrow(InboxKitError);
    expect(second.inbox!.queue(text('e'))).toBe(4);
  });

  it('carry-over is never duplicated: a second native attempt after the first gets nothing', () => {
    const host = new LiveInboxHost();
    const first = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
    first.inbox!.queue(text('a'));
    host.closeAttempt(first);
    const second = host.openAttempt({ session_id: 's1', run_id: 'r2', executor: 'native' });
    host.closeAttempt(second);
    const third = host.openAttempt({ session_id: 's1', run_id: 'r3', executor: 'native' });
    expect(items(third.inbox!)).toEqual([[1, 'a']]);
  });

  it('carry-over accumulates across closes and is scoped to its session', () => {
    const host = new LiveInboxHost();
    const a = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
    a.inbox!.queue(text('a1'));
    host.closeAttempt(a);
    const other = host.openAttempt({ session_id: 's2', run_id: 'r2', executor: 'native' });
    expect(other.inbox!.size).toBe(0);
    const b = host.openAttempt({ session_id: 's1', run_id: 'r3', executor: 'native' });
    b.inbox!.queue(text('b1'));
    host.closeAttempt(b);
    expect(host.pendingCarryOver('s1').map(textOf)).toEqual(['a1', 'b1']);
  });

  it('an ACP attempt leaves the carry-over pending for the next native attempt', () => {
    const host = new LiveInboxHost();
    const native = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
    native.inbox!.queue(text('keep'));
    host.closeAttempt(native);
    const acp = host.openAttempt({ session_id: 's1', run_id: 'r2', executor: 'acp' });
    expect(host.pendingCarryOver('s1').map(textOf)).toEqual(['keep']);
    host.closeAttempt(acp);
    const next = host.openAttempt({ session_id: 's1', run_id: 'r3', executor: 'native' });
    expect(items(next.inbox!)).toEqual([[1, 'keep']]);
  });

  it('opening a new attempt closes the active one and carries its leftovers', () => {
    const host = new LiveInboxHost();
    const first = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
    first.inbox!.queue(text('x'));
    const second = host.openAttempt({ session_id: 's1', run_id: 'r2', executor: 'native' });
    expect(first.inbox!.closed).toBe(true);
    expect(host.active('s1')).toBe(second);
    expect(items(second.inbox!)).toEqual([[1, 'x']]);
  });

  it('pendingCarryOver is a read-only copy', () => {
    const host = new LiveInboxHost();
    const h = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
    h.inbox!.queue(text('a'));
    host.closeAttempt(h);
    const view = host.pendingCarryOver('s1');
    view.push(text('injected'));
    (view[0]![0] as { text: string }).text = 'mutated';
    expect(host.pendingCarryOver('s1').map(textOf)).toEqual(['a']);
  });

  it('undelivered content is carried ahead of the leftovers', () => {
    const host = new LiveInboxHost();
    const h = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
    h.inbox!.queue(text('queued'));
    host.closeAttempt(h, { undelivered: [text('drained-not-committed')] });
    expect(host.pendingCarryOver('s1').map(textOf)).toEqual(['drained-not-committed', 'queued']);
  });
});

describe('LiveInboxHost stale handles', () => {
  it('a superseded handle can neither close nor shadow its replacement', () => {
    const host = new LiveInboxHost();
    const stale = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
    const fresh = host.openAttempt({ session_id: 's1', run_id: 'r2', executor: 'native' });
    fresh.inbox!.queue(text('live'));
    expect(host.closeAttempt(stale)).toEqual([]);
    expect(fresh.inbox!.closed).toBe(false);
    expect(host.active('s1')).toBe(fresh);
    expect(host.liveInbox('s1')).toBe(fresh.inbox);
    expect(items(fresh.inbox!)).toEqual([[1, 'live']]);
    expect(host.pendingCarryOver('s1')).toEqual([]);
  });

  it('undelivered content of a stale handle goes into the active native inbox', () => {
    const host = new LiveInboxHost();
    const stale = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
    const fresh = host.openAttempt({ session_id: 's1', run_id: 'r2', executor: 'native' });
    host.closeAttempt(stale, { undelivered: [text('rescued')] });
    expect(items(fresh.inbox!)).toEqual([[1, 'rescued']]);
    expect(fresh.inbox!.closed).toBe(false);
  });

  it('an inbox closed directly (not through the host) is reported inactive', () => {
    const host = new LiveInboxHost();
    const h = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
    h.inbox!.close();
    expect(host.liveInbox('s1')).toBeUndefined();
    expect(host.closeAttempt(h)).toEqual([]);
    expect(host.active('s1')).toBeUndefined();
  });
});

describe('LiveInboxHost races', () => {
  it('a queue racing closeAttempt is either carried over or refused, never lost nor doubled', async () => {
    const outcomes = new Set<string>();
    for (let queueDelay = 0; queueDelay < 4; queueDelay++) {
      for (let closeDelay = 0; closeDelay < 4; closeDelay++) {
        const host = new LiveInboxHost();
        const h = host.openAttempt({ session_id: 's1', run_id: 'r1', executor: 'native' });
        const [queued] = await Promise.all([
          (async () => {
            await ticks(queueDelay);
            const inbox = host.liveInbox('s1');
            if (inbox === undefined) return 'gone';
            try {
              inbox.queue(text('late'));
              return 'queued';
            } catch (error) {
              return (error as InboxKitError).code;
            }
          })(),
          (async () => {
            await ticks(closeDelay);
            host.closeAttempt(h);
          })(),
        ]);
        const pending = host.pendingCarryOver('s1').map(textOf);
        expect(pending).toEqual(queued === 'queued' ? ['late'] : []);
        outcomes.add(queued);
      }
    }
    expect(outcomes).toEqual(new Set(['queued', 'gone']));
  });
});
