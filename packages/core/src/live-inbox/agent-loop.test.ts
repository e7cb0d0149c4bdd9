import { describe, it, expect } from 'vitest';
import { InboxKitError } from '../errors.js';
import {
  LiveInboxHost,
  inboxMessageId,
  isModelError,
  ModelError,
  runNativeAttempt,
  stepMessageId,
  type ContentBlock,
  type Model,
  type ModelStepResult,
  type RunLedger,
  type TranscriptBlock,
  type TranscriptMessage,
} from './index.js';

const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];
const textOf = (content: readonly TranscriptBlock[]): string => content.map((b) => (b.type === 'text' ? b.text : `<${b.type}>`)).join('');
const brief = (messages: readonly TranscriptMessage[]) => messages.map((m) => `${m.role}:${m.id}:${textOf(m.content)}`);

const SESSION = 'sess_1';
const start: TranscriptMessage[] = [{ id: 'sevt_1', role: 'user', content: text('hi') }];

type Log = string[];

/** An in-memory ledger that logs every commit; `failOn` makes the commit holding that id reject. */
function fakeLedger(log: Log, opts: { failOn?: string; during?: (ids: string[]) => void } = {}): RunLedger & { messages: TranscriptMessage[] } {
  const messages: TranscriptMessage[] = [];
  return {
    messages,
    async commit(input) {
      await Promise.resolve();
      opts.during?.(input.messages.map((m) => m.id));
      if (opts.failOn !== undefined && input.messages.some((m) => m.id === opts.failOn)) {
        log.push(`commit-failed:${input.messages.map((m) => m.id).join(',')}`);
        throw new Error('ledger down');
      }
      expect(input.session_id).toBe(SESSION);
      messages.push(...input.messages);
      log.push(`commit:${input.messages.map((m) => m.id).join(',')}`);
    },
  };
}

/**
 * A scripted model: step `i` runs `script[i]` (which may queue into the live inbox, or throw),
 * awaits a few microtask turns like a real call, and logs what it saw.
 */
function fakeModel(log: Log, script: ((transcript: readonly TranscriptMessage[], signal: AbortSignal) => ModelStepResult | Promise<ModelStepResult>)[]): Model & { seen: string[][] } {
  const seen: string[][] = [];
  let i = 0;
  return {
    seen,
    async step(transcript, signal) {
      const k = i++;
      log.push(`model:${k}`);
      seen.push(brief(transcript));
      const fn = script[k];
      if (fn === undefined) throw new Error(`unexpected step ${k}`);
      await Promise.resolve();
      return fn(transcript, signal);
    },
  };
}

const reply = (t: string, more = false) => (): ModelStepResult => ({ content: text(t), continue: more });

describe('inboxMessageId / stepMessageId', () => {
  it('formats Run-scoped ids', () => {
    expect(inboxMessageId('run_a', 0)).toBe('run_a-inbox-0');
    expect(inboxMessageId('run_a', 12)).toBe('run_a-inbox-12');
    expect(stepMessageId('run_a', 3)).toBe('run_a-step-3');
  });
});

describe('runNativeAttempt', () => {
  it('completes a single step, commits it and closes the attempt', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const ledger = fakeLedger(log);
    let inboxDuringStep: unknown;
    const model = fakeModel(log, [
      () => {
        inboxDuringStep = host.liveInbox(SESSION);
        return { content: text('hello'), continue: false };
      },
    ]);
    const transcript = start.map((m) => ({ ...m }));
    const result = await runNativeAttempt({ host, model, ledger, session_id: SESSION, run_id: 'run_1', transcript });
    expect(result.status).toBe('completed');
    expect(brief(result.committed)).toEqual(['assistant:run_1-step-0:hello']);
    expect(log).toEqual(['model:0', 'commit:run_1-step-0']);
    expect(model.seen[0]).toEqual(['user:sevt_1:hi']);
    expect(inboxDuringStep).toBeDefined();
    expect(host.liveInbox(SESSION)).toBeUndefined();
    expect(host.active(SESSION)).toBeUndefined();
    expect(transcript).toEqual(start);
  });

  it('commits drained messages as {run}-inbox-{n} user messages before the next model call', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const ledger = fakeLedger(log);
    const model = fakeModel(log, [
      () => {
        const inbox = host.liveInbox(SESSION)!;
        inbox.queue(text('first'));
        const id = inbox.queue(text('second'));
        inbox.queue(text('third'));
        inbox.replace(id, text('second, edited'));
        inbox.withdraw(1);
        return { content: text('thinking'), continue: true };
      },
      () => {
        host.liveInbox(SESSION)!.queue(text('fourth'));
        return { content: text('still'), continue: true };
      },
      reply('done'),
    ]);
    const result = await runNativeAttempt({ host, model, ledger, session_id: SESSION, run_id: 'run_1', transcript: start });
    expect(result.status).toBe('completed');
    expect(log).toEqual([
      // One commit per boundary: the step's output, then what was drained after it (issue 18).
      'model:0',
      'commit:run_1-step-0,run_1-inbox-0,run_1-inbox-1',
      'model:1',
      'commit:run_1-step-1,run_1-inbox-2',
      'model:2',
      'commit:run_1-step-2',
    ]);
    expect(model.seen[1]).toEqual([
      'user:sevt_1:hi',
      'assistant:run_1-step-0:thinking',
      'user:run_1-inbox-0:second, edited',
      'user:run_1-inbox-1:third',
    ]);
    expect(brief(ledger.messages)).toEqual(brief(result.committed));
    expect(result.committed.map((m) => m.id)).toEqual(['run_1-step-0', 'run_1-inbox-0', 'run_1-inbox-1', 'run_1-step-1', 'run_1-inbox-2', 'run_1-step-2']);
  });

  it('a message queued during the final step keeps the Run going one more step', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const model = fakeModel(log, [
      () => {
        host.liveInbox(SESSION)!.queue(text('wait, one more thing'));
        return { content: text('final answer'), continue: false };
      },
      reply('revised answer'),
    ]);
    const result = await runNativeAttempt({ host, model, ledger: fakeLedger(log), session_id: SESSION, run_id: 'run_1', transcript: start });
    expect(result.status).toBe('completed');
    expect(log).toEqual(['model:0', 'commit:run_1-step-0,run_1-inbox-0', 'model:1', 'commit:run_1-step-1']);
    expect(model.seen[1]?.at(-1)).toBe('user:run_1-inbox-0:wait, one more thing');
    expect(host.pendingCarryOver(SESSION)).toEqual([]);
  });

  it('input queued while the final step commits gets a boundary of its own and one more step', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const model = fakeModel(log, [() => ({ content: text('final answer'), continue: false }), reply('revised answer')]);
    const ledger = fakeLedger(log, {
      during: (ids) => {
        if (ids.includes('run_1-step-0')) host.liveInbox(SESSION)!.queue(text('arrived during the commit'));
      },
    });
    const result = await runNativeAttempt({ host, model, ledger, session_id: SESSION, run_id: 'run_1', transcript: start });
    expect(result.status).toBe('completed');
    expect(log).toEqual(['model:0', 'commit:run_1-step-0', 'commit:run_1-inbox-0', 'model:1', 'commit:run_1-step-1']);
    expect(model.seen[1]?.at(-1)).toBe('user:run_1-inbox-0:arrived during the commit');
    expect(host.pendingCarryOver(SESSION)).toEqual([]);
  });

  it('a message queued while the final step commits is delivered or refused, never lost', async () => {
    const outcomes = new Set<string>();
    for (let delay = 0; delay < 12; delay++) {
      const log: Log = [];
      const host = new LiveInboxHost();
      const model = fakeModel(log, [reply('done'), reply('again')]);
      const run = runNativeAttempt({ host, model, ledger: fakeLedger(log), session_id: SESSION, run_id: 'run_1', transcript: start });
      let outcome = 'refused';
      for (let i = 0; i < delay; i++) await Promise.resolve();
      try {
        const inbox = host.liveInbox(SESSION);
        if (inbox !== undefined) {
          inbox.queue(text('late'));
          outcome = 'accepted';
        }
      } catch (error) {
        expect((error as InboxKitError).code).toBe('live_inbox_inactive');
      }
      const result = await run;
      const committedLate = result.committed.filter((m) => textOf(m.content) === 'late').length;
      const carried = host.pendingCarryOver(SESSION).filter((c) => textOf(c) === 'late').length;
      if (outcome === 'accepted') expect(committedLate + carried).toBe(1);
      else expect(committedLate + carried).toBe(0);
      outcomes.add(outcome === 'accepted' ? (committedLate === 1 ? 'committed' : 'carried') : 'refused');
    }
    expect(outcomes.has('committed')).toBe(true);
    expect(outcomes.has('refused')).toBe(true);
  });

  it('starts n at inboxCounterStart and k at stepCounterStart', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const model = fakeModel(log, [
      () => {
        host.liveInbox(SESSION)!.queue(text('x'));
        return { content: text('a'), continue: false };
      },
      reply('b'),
    ]);
    const result = await runNativeAttempt({
      host, model, ledger: fakeLedger(log), session_id: SESSION, run_id: 'run_1', transcript: start,
      inboxCounterStart: 5, stepCounterStart: 2,
    });
    expect(result.committed.map((m) => m.id)).toEqual(['run_1-step-2', 'run_1-inbox-5', 'run_1-step-3']);
  });
});

describe('runNativeAttempt: abort, failure and carry-over', () => {
  it('on abort, leftovers carry over to the next native attempt, which consumes them before its first model call', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const controller = new AbortController();
    const model1 = fakeModel(log, [
      (_t, signal) => {
        const inbox = host.liveInbox(SESSION)!;
        inbox.queue(text('steer A'));
        inbox.queue(text('steer B'));
        controller.abort(new Error('user cancelled'));
        expect(signal.aborted).toBe(true);
        throw signal.reason;
      },
    ]);
    const first = await runNativeAttempt({ host, model: model1, ledger: fakeLedger(log), session_id: SESSION, run_id: 'run_1', transcript: start, signal: controller.signal });
    expect(first.status).toBe('cancelled');
    expect(first.committed).toEqual([]);
    expect(host.liveInbox(SESSION)).toBeUndefined();
    expect(host.pendingCarryOver(SESSION).map(textOf)).toEqual(['steer A', 'steer B']);
    expect(log).toEqual(['model:0']);

    const log2: Log = [];
    const ledger2 = fakeLedger(log2);
    const model2 = fakeModel(log2, [reply('got it')]);
    const second = await runNativeAttempt({ host, model: model2, ledger: ledger2, session_id: SESSION, run_id: 'run_2', transcript: start });
    expect(second.status).toBe('completed');
    expect(log2).toEqual(['commit:run_2-inbox-0,run_2-inbox-1', 'model:0', 'commit:run_2-step-0']);
    expect(model2.seen[0]).toEqual(['user:sevt_1:hi', 'user:run_2-inbox-0:steer A', 'user:run_2-inbox-1:steer B']);
    expect(host.pendingCarryOver(SESSION)).toEqual([]);
  });

  it('an abort that lands while the step resolves still cancels without committing it', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const controller = new AbortController();
    const model = fakeModel(log, [
      () => {
        host.liveInbox(SESSION)!.queue(text('pending'));
        controller.abort();
        return { content: text('too late'), continue: false };
      },
    ]);
    const result = await runNativeAttempt({ host, model, ledger: fakeLedger(log), session_id: SESSION, run_id: 'run_1', transcript: start, signal: controller.signal });
    expect(result.status).toBe('cancelled');
    expect(result.committed).toEqual([]);
    expect(host.pendingCarryOver(SESSION).map(textOf)).toEqual(['pending']);
  });

  it('an already-aborted signal never calls the model', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const controller = new AbortController();
    controller.abort();
    const result = await runNativeAttempt({ host, model: fakeModel(log, []), ledger: fakeLedger(log), session_id: SESSION, run_id: 'run_1', transcript: start, signal: controller.signal });
    expect(result.status).toBe('cancelled');
    expect(log).toEqual([]);
    expect(host.active(SESSION)).toBeUndefined();
  });

  it('a model error fails the attempt and carries the leftovers', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const boom = new Error('model exploded');
    const model = fakeModel(log, [
      () => {
        host.liveInbox(SESSION)!.queue(text('keep me'));
        throw boom;
      },
    ]);
    const result = await runNativeAttempt({ host, model, ledger: fakeLedger(log), session_id: SESSION, run_id: 'run_1', transcript: start });
    expect(result).toEqual({ status: 'failed', error: boom, committed: [] });
    expect(host.active(SESSION)).toBeUndefined();
    expect(host.pendingCarryOver(SESSION).map(textOf)).toEqual(['keep me']);
  });

  it('a failed commit of a step and its drained input carries that input over ahead of later leftovers', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const model = fakeModel(log, [
      () => {
        host.liveInbox(SESSION)!.queue(text('drained'));
        return { content: text('a'), continue: true };
      },
    ]);
    const ledger = fakeLedger(log, {
      failOn: 'run_1-inbox-0',
      // The inbox stays open while the drained batch is being committed.
      during: (ids) => {
        if (ids.includes('run_1-inbox-0')) host.liveInbox(SESSION)!.queue(text('queued later'));
      },
    });
    const result = await runNativeAttempt({ host, model, ledger, session_id: SESSION, run_id: 'run_1', transcript: start });
    expect(result.status).toBe('failed');
    expect((result.error as Error).message).toBe('ledger down');
    // The step and the drained input share the failed commit (issue 18): neither is committed.
    expect(result.committed).toEqual([]);
    expect(log).toEqual(['model:0', 'commit-failed:run_1-step-0,run_1-inbox-0']);
    expect(host.pendingCarryOver(SESSION).map(textOf)).toEqual(['drained', 'queued later']);
  });

  it('a superseded attempt stops as cancelled and its replacement keeps the inbox', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    let replacementInbox: ReturnType<LiveInboxHost['liveInbox']>;
    const model = fakeModel(log, [
      () => {
        host.liveInbox(SESSION)!.queue(text('moved'));
        const replacement = host.openAttempt({ session_id: SESSION, run_id: 'run_2', executor: 'native' });
        replacementInbox = replacement.inbox!;
        return { content: text('ignored'), continue: true };
      },
    ]);
    const result = await runNativeAttempt({ host, model, ledger: fakeLedger(log), session_id: SESSION, run_id: 'run_1', transcript: start });
    expect(result.status).toBe('cancelled');
    expect(result.committed).toEqual([]);
    expect(host.liveInbox(SESSION)).toBe(replacementInbox);
    expect(replacementInbox!.closed).toBe(false);
    expect(replacementInbox!.snapshot().messages.map((m) => [m.id, textOf(m.content)])).toEqual([[1, 'moved']]);
  });

  it('does not let the model mutate the transcript it keeps', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const model = fakeModel(log, [
      (transcript) => {
        (transcript as TranscriptMessage[]).length = 0;
        return { content: text('one'), continue: true };
      },
      reply('two'),
    ]);
    await runNativeAttempt({ host, model, ledger: fakeLedger(log), session_id: SESSION, run_id: 'run_1', transcript: start });
    expect(model.seen[1]).toEqual(['user:sevt_1:hi', 'assistant:run_1-step-0:one']);
  });
});

describe('ModelError', () => {
  it('carries a type, a message, the provider status and the attempt count; isModelError recognises it', () => {
    const cause = new Error('socket hang up');
    const e = new ModelError('rate_limit_error', 'Rate limited (429) after 3 attempts.', { status: 429, attempts: 3, cause });
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ name: 'ModelError', type: 'rate_limit_error', message: 'Rate limited (429) after 3 attempts.', status: 429, attempts: 3 });
    expect(e.cause).toBe(cause);
    expect(isModelError(e)).toBe(true);
    const lookalike = Object.assign(new Error('x'), { name: 'ModelError', type: 'api_error' });
    expect(isModelError(lookalike)).toBe(true);
    expect(isModelError(new Error('plain'))).toBe(false);
    expect(isModelError({ name: 'ModelError', type: 'api_error' })).toBe(false);
  });
});

describe('runNativeAttempt: input queued while a boundary commits', () => {
  it('drains input queued while a boundary committed at that boundary, before the next model call (once per boundary)', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    let queuedDuring = 0;
    const ledger = fakeLedger(log, {
      during: (ids) => {
        // While the first step's commit is in flight, and again while the catch-up commit is.
        if (ids[0] === 'run_1-step-0' || (ids[0] === 'run_1-inbox-0' && queuedDuring === 1)) {
          host.liveInbox(SESSION)!.queue(text(`during commit ${++queuedDuring}`));
        }
      },
    });
    const model = fakeModel(log, [reply('one', true), reply('two', true), reply('three')]);
    const result = await runNativeAttempt({ host, model, ledger, session_id: SESSION, run_id: 'run_1', transcript: start });
    expect(result.status).toBe('completed');
    expect(log).toEqual([
      'model:0',
      'commit:run_1-step-0',
      // Queued while step 0 committed: drained at the same boundary, committed before model:1.
      'commit:run_1-inbox-0',
      // Queued while that catch-up committed: once per boundary, so it waits for step 1's boundary.
      'model:1',
      'commit:run_1-step-1,run_1-inbox-1',
      'model:2',
      'commit:run_1-step-2',
    ]);
    expect(model.seen[1]).toEqual(['user:sevt_1:hi', 'assistant:run_1-step-0:one', 'user:run_1-inbox-0:during commit 1']);
    expect(brief(ledger.messages)).toEqual(brief(result.committed));
  });

  it('drains input queued while a tool round\'s results committed before the next model call', async () => {
    const log: Log = [];
    const host = new LiveInboxHost();
    const ledger = fakeLedger(log, {
      during: (ids) => {
        if (ids[0] === 'run_1-step-0-results') host.liveInbox(SESSION)!.queue(text('during results'));
      },
    });
    const model = fakeModel(log, [
      () => ({ content: [{ type: 'tool_use', id: 'toolu_x', name: 'echo', input: {} }], stop_reason: 'tool_use' }),
      reply('done'),
    ]);
    const tools = [{ name: 'echo', description: 'Echoes.', input_schema: { type: 'object' as const }, execute: async () => 'ok' }];
    const result = await runNativeAttempt({ host, model, ledger, session_id: SESSION, run_id: 'run_1', transcript: start, tools });
    expect(result.status).toBe('completed');
    expect(log).toEqual(['model:0', 'commit:run_1-step-0', 'commit:run_1-step-0-results', 'commit:run_1-inbox-0', 'model:1', 'commit:run_1-step-1']);
    expect(model.seen[1]?.at(-1)).toBe('user:run_1-inbox-0:during results');
  });
});
