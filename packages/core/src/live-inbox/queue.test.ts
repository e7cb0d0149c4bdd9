import { describe, it, expect } from 'vitest';
import { InboxKitError } from '../errors.js';
import { LiveInboxQueue, type ContentBlock } from './index.js';
import { codeOf } from '../test-support.js';

const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];
const textOf = (content: ContentBlock[]): string => content.map((b) => (b.type === 'text' ? b.text : '<image>')).join('');

/** Yields `n` microtask turns, so concurrent async tasks interleave deterministically. */
async function ticks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve();
}

function filled(...texts: string[]): LiveInboxQueue {
  const q = new LiveInboxQueue();
  for (const t of texts) q.queue(text(t));
  return q;
}

const view = (q: LiveInboxQueue) => ({ version: q.version, items: q.snapshot().messages.map((m) => [m.id, textOf(m.content)]) });

describe('LiveInboxQueue ids and version', () => {
  it('starts empty, open, at version 0', () => {
    const q = new LiveInboxQueue();
    expect(q.snapshot()).toEqual({ version: 0, messages: [] });
    expect(q.size).toBe(0);
    expect(q.closed).toBe(false);
  });

  it('gives ids from 1, strictly increasing, appending at the tail', () => {
    const q = new LiveInboxQueue();
    expect([q.queue(text('a')), q.queue(text('b')), q.queue(text('c'))]).toEqual([1, 2, 3]);
    expect(view(q)).toEqual({ version: 3, items: [[1, 'a'], [2, 'b'], [3, 'c']] });
    expect(q.size).toBe(3);
  });

  it('never reuses an id after withdraw or drain', () => {
    const q = filled('a', 'b');
    q.withdraw(2);
    expect(q.queue(text('c'))).toBe(3);
    q.drain();
    expect(q.queue(text('d'))).toBe(4);
  });

  it('ids are per queue', () => {
    filled('a', 'b', 'c');
    expect(new LiveInboxQueue().queue(text('x'))).toBe(1);
  });

  it('bumps version once per successful queue, replace, withdraw, reorder and close', () => {
    const q = new LiveInboxQueue();
    q.queue(text('a'));
    q.queue(text('b'));
    expect(q.version).toBe(2);
    q.replace(1, text('A'));
    expect(q.version).toBe(3);
    q.reorder([2, 1]);
    expect(q.version).toBe(4);
    q.withdraw(2);
    expect(q.version).toBe(5);
    q.close();
    expect(q.version).toBe(6);
  });

  it('does not bump version on drain, on an empty drain, or on failed edits', () => {
    const q = filled('a', 'b');
    q.drain();
    q.drain();
    expect(q.version).toBe(2);
    expect(codeOf(() => q.replace(1, text('x')))).toBe('live_inbox_message_not_found');
    expect(codeOf(() => q.withdraw(99))).toBe('live_inbox_message_not_found');
    expect(codeOf(() => q.reorder([1]))).toBe('live_inbox_order_conflict');
    expect(codeOf(() => q.queue([]))).toBe('validation_error');
    expect(q.version).toBe(2);
  });
});

describe('LiveInboxQueue edits', () => {
  it('replace keeps id and position', () => {
    const q = filled('a', 'b', 'c');
    q.replace(2, text('B'));
    expect(view(q).items).toEqual([[1, 'a'], [2, 'B'], [3, 'c']]);
  });

  it('replace with invalid content changes nothing', () => {
    const q = filled('a');
    const before = view(q);
    expect(codeOf(() => q.replace(1, [{ type: 'text' } as unknown as ContentBlock]))).toBe('validation_error');
    expect(view(q)).toEqual(before);
  });

  it('queue and replace refuse content a model would refuse (blank text, a wrong image type, a metadata URL); nothing changes', () => {
    const q = filled('a');
    const before = view(q);
    const version = q.version;
    const bad = [
      text(''), text(' \n\t'),
      [{ type: 'image', source: { type: 'base64', media_type: 'text/html', data: 'PGh0bWw+' } }],
      [{ type: 'image', source: { type: 'url', url: 'http://169.254.169.254/latest' } }],
    ] as unknown as ContentBlock[][];
    for (const content of bad) {
      expect(codeOf(() => q.queue(content))).toBe('validation_error');
      expect(codeOf(() => q.replace(1, content))).toBe('validation_error');
    }
    expect(view(q)).toEqual(before);
    expect(q.version).toBe(version);
  });

  it('withdraw removes only its target', () => {
    const q = filled('a', 'b', 'c');
    q.withdraw(2);
    expect(view(q).items).toEqual([[1, 'a'], [3, 'c']]);
    expect(codeOf(() => q.withdraw(2))).toBe('live_inbox_message_not_found');
  });

  it('replace and withdraw of an id never given throw not_found', () => {
    const q = filled('a');
    expect(codeOf(() => q.replace(0, text('x')))).toBe('live_inbox_message_not_found');
    expect(codeOf(() => q.replace(2, text('x')))).toBe('live_inbox_message_not_found');
    expect(codeOf(() => q.withdraw(-1))).toBe('live_inbox_message_not_found');
    expect(view(q)).toEqual({ version: 1, items: [[1, 'a']] });
  });

  it('reorder applies an exact permutation', () => {
    const q = filled('a', 'b', 'c');
    q.reorder([3, 1, 2]);
    expect(view(q)).toEqual({ version: 4, items: [[3, 'c'], [1, 'a'], [2, 'b']] });
    expect(q.drain().map((m) => m.id)).toEqual([3, 1, 2]);
  });

  it('reorder with the current order still counts as an edit', () => {
    const q = filled('a', 'b');
    q.reorder([1, 2]);
    expect(q.version).toBe(3);
  });

  it('reorder of an empty queue accepts only the empty list', () => {
    const q = new LiveInboxQueue();
    q.reorder([]);
    expect(q.version).toBe(1);
    expect(codeOf(() => q.reorder([1]))).toBe('live_inbox_order_conflict');
  });

  it.each([
    ['too short', [1, 2]],
    ['too long', [1, 2, 3, 3]],
    ['an unknown id', [1, 2, 4]],
    ['a duplicate', [1, 2, 2]],
    ['a withdrawn id in place of a live one', [1, 2, 0]],
    ['a non-integer', [1, 2, 2.5]],
  ])('reorder rejects %s and leaves the queue identical, version included', (_label, order) => {
    const q = filled('a', 'b', 'c');
    const before = view(q);
    expect(codeOf(() => q.reorder(order))).toBe('live_inbox_order_conflict');
    expect(view(q)).toEqual(before);
  });
});

describe('LiveInboxQueue drain and close', () => {
  it('drain takes every entry in queue order and empties the queue', () => {
    const q = filled('a', 'b', 'c');
    q.reorder([2, 3, 1]);
    expect(q.drain().map((m) => [m.id, textOf(m.content)])).toEqual([[2, 'b'], [3, 'c'], [1, 'a']]);
    expect(q.size).toBe(0);
    expect(q.snapshot().messages).toEqual([]);
    expect(q.drain()).toEqual([]);
  });

  it('drained ids are unknown afterwards', () => {
    const q = filled('a', 'b');
    q.drain();
    expect(codeOf(() => q.replace(1, text('x')))).toBe('live_inbox_message_not_found');
    expect(codeOf(() => q.withdraw(2))).toBe('live_inbox_message_not_found');
    expect(codeOf(() => q.reorder([1, 2]))).toBe('live_inbox_order_conflict');
  });

  it('close returns the leftovers in order and refuses every later operation', () => {
    const q = filled('a', 'b', 'c');
    q.withdraw(2);
    const leftovers = q.close();
    expect(leftovers.map((m) => [m.id, textOf(m.content)])).toEqual([[1, 'a'], [3, 'c']]);
    expect(q.closed).toBe(true);
    expect(q.size).toBe(0);
    const version = q.version;
    expect(codeOf(() => q.queue(text('x')))).toBe('live_inbox_inactive');
    expect(codeOf(() => q.replace(1, text('x')))).toBe('live_inbox_inactive');
    expect(codeOf(() => q.withdraw(1))).toBe('live_inbox_inactive');
    expect(codeOf(() => q.reorder([]))).toBe('live_inbox_inactive');
    expect(codeOf(() => q.drain())).toBe('live_inbox_inactive');
    expect(codeOf(() => q.close())).toBe('live_inbox_inactive');
    expect(q.version).toBe(version);
    expect(q.snapshot()).toEqual({ version, messages: [] });
  });

  it('inactive wins over a bad id or bad content after close', () => {
    const q = new LiveInboxQueue();
    q.close();
    expect(codeOf(() => q.queue([]))).toBe('live_inbox_inactive');
    expect(codeOf(() => q.withdraw(42))).toBe('live_inbox_inactive');
  });
});

describe('LiveInboxQueue defensive copies', () => {
  it('mutating the queued input does not change the queue', () => {
    const q = new LiveInboxQueue();
    const input: ContentBlock[] = [{ type: 'text', text: 'a' }];
    q.queue(input);
    (input[0] as { text: string }).text = 'mutated';
    input.push({ type: 'text', text: 'extra' });
    expect(textOf(q.snapshot().messages[0]!.content)).toBe('a');
  });

  it('mutating a snapshot does not change the queue', () => {
    const q = filled('a', 'b');
    const snap = q.snapshot();
    snap.messages.reverse();
    snap.messages[0]!.id = 99;
    (snap.messages[0]!.content[0] as { text: string }).text = 'mutated';
    snap.messages.push({ id: 7, content: text('z') });
    snap.version = 100;
    expect(view(q)).toEqual({ version: 2, items: [[1, 'a'], [2, 'b']] });
  });

  it('mutating replace input afterwards does not change the queue', () => {
    const q = filled('a');
    const input: ContentBlock[] = [{ type: 'image', source: { type: 'url', url: 'https://a' } }];
    q.replace(1, input);
    (input[0] as { source: { url: string } }).source.url = 'https://evil';
    expect(q.snapshot().messages[0]!.content).toEqual([{ type: 'image', source: { type: 'url', url: 'https://a' } }]);
  });
});

describe('LiveInboxQueue races (operations are synchronous, hence atomic)', () => {
  it('many concurrent queues are all delivered exactly once with unique ids', async () => {
    const q = new LiveInboxQueue({ maxMessages: 200 });
    const ids = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        await ticks(i % 7);
        return q.queue(text(`m${i}`));
      }),
    );
    expect(new Set(ids).size).toBe(200);
    expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(q.version).toBe(200);
    const drained = q.drain();
    expect(drained.map((m) => textOf(m.content)).sort()).toEqual(Array.from({ length: 200 }, (_, i) => `m${i}`).sort());
  });

  it('concurrent queues and drains deliver every acknowledged message exactly once', async () => {
    const q = new LiveInboxQueue();
    const delivered: string[] = [];
    const producers = Array.from({ length: 100 }, async (_, i) => {
      await ticks(i % 11);
      q.queue(text(`m${i}`));
    });
    const drainers = Array.from({ length: 12 }, async (_, i) => {
      await ticks(i);
      delivered.push(...q.drain().map((m) => textOf(m.content)));
    });
    await Promise.all([...producers, ...drainers]);
    delivered.push(...q.drain().map((m) => textOf(m.content)));
    expect(delivered.length).toBe(100);
    expect(new Set(delivered).size).toBe(100);
  });

  it('an edit racing a drain has exactly one winner', async () => {
    const outcomes = new Set<string>();
    for (let editDelay = 0; editDelay < 4; editDelay++) {
      for (let drainDelay = 0; drainDelay < 4; drainDelay++) {
        const q = filled('original');
        const [edit, drained] = await Promise.all([
          (async () => {
            await ticks(editDelay);
            try {
              q.replace(1, text('edited'));
              return 'applied';
            } catch (error) {
              return (error as InboxKitError).code;
            }
          })(),
          (async () => {
            await ticks(drainDelay);
            return q.drain();
          })(),
        ]);
        expect(drained).toHaveLength(1);
        if (edit === 'applied') expect(textOf(drained[0]!.content)).toBe('edited');
        else {
          expect(edit).toBe('live_inbox_message_not_found');
          expect(textOf(drained[0]!.content)).toBe('original');
        }
        expect(q.size).toBe(0);
        outcomes.add(edit);
      }
    }
    expect(outcomes).toEqual(new Set(['applied', 'live_inbox_message_not_found']));
  });

  it('a withdraw racing a drain has exactly one winner', async () => {
    const outcomes = new Set<string>();
    for (let withdrawDelay = 0; withdrawDelay < 3; withdrawDelay++) {
      for (let drainDelay = 0; drainDelay < 3; drainDelay++) {
        const q = filled('a');
        const [result, drained] = await Promise.all([
          (async () => {
            await ticks(withdrawDelay);
            try {
              q.withdraw(1);
              return 'withdrawn';
            } catch (error) {
              return (error as InboxKitError).code;
            }
          })(),
          (async () => {
            await ticks(drainDelay);
            return q.drain();
          })(),
        ]);
        expect(drained.length).toBe(result === 'withdrawn' ? 0 : 1);
        if (result !== 'withdrawn') expect(result).toBe('live_inbox_message_not_found');
        outcomes.add(result);
      }
    }
    expect(outcomes.size).toBe(2);
  });

  it('a queue racing a close has exactly one owner', async () => {
    const outcomes = new Set<string>();
    for (let queueDelay = 0; queueDelay < 4; queueDelay++) {
      for (let closeDelay = 0; closeDelay < 4; closeDelay++) {
        const q = new LiveInboxQueue();
        const [queued, leftovers] = await Promise.all([
          (async () => {
            await ticks(queueDelay);
            try {
              return q.queue(text('late'));
            } catch (error) {
              return (error as InboxKitError).code;
            }
          })(),
          (async () => {
            await ticks(closeDelay);
            return q.close();
          })(),
        ]);
        if (typeof queued === 'number') {
          expect(leftovers.map((m) => m.id)).toEqual([queued]);
          outcomes.add('closed-with-it');
        } else {
          expect(queued).toBe('live_inbox_inactive');
          expect(leftovers).toEqual([]);
          outcomes.add('refused');
        }
      }
    }
    expect(outcomes).toEqual(new Set(['closed-with-it', 'refused']));
  });
});

describe('LiveInboxQueue snapshotJson', () => {
  it('is the text of the snapshot, made once per state and again after every edit, drain and close', () => {
    const q = filled('a', 'b');
    const first = q.snapshotJson();
    expect(first).toBe(JSON.stringify(q.snapshot()));
    expect(q.snapshotJson()).toBe(first); // unchanged queue: the same text
    const edits: Array<(q: LiveInboxQueue) => void> = [
      (x) => x.queue(text('c')),
      (x) => x.replace(1, text('A')),
      (x) => x.reorder([3, 2, 1]),
      (x) => x.withdraw(2),
      (x) => void x.drain(), // no version bump, but the window is empty now
      (x) => x.queue(text('d')),
      (x) => void x.close(),
    ];
    for (const edit of edits) {
      const before = q.snapshotJson();
      edit(q);
      expect(q.snapshotJson()).toBe(JSON.stringify(q.snapshot()));
      expect(q.snapshotJson()).not.toBe(before);
    }
  });

  it('shares nothing a caller can change: a snapshot scribbled on leaves the text as it was', () => {
    const q = filled('a');
    const textBefore = q.snapshotJson();
    const snap = q.snapshot();
    (snap.messages[0]!.content[0] as { text: string }).text = 'tampered';
    expect(q.snapshotJson()).toBe(textBefore);
  });
});
