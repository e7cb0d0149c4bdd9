/**
 * How the HTTP kit plans its checks (`http-kit.ts`): which layers each mode runs, opt-outs by
 * check or group with the reason in the skipped test's title, an opt-out naming nothing refused.
 */
import { describe, expect, it } from 'vitest';
import { httpConformanceChecks, type HttpConformanceOptions } from './http-conformance-checks.js';
import { assertKnownOptOuts, kitIt, layerRuns, planHttpChecks, type TestRegistrar } from './http-kit.js';

/** A registrar that records what the kit would register with vitest. */
function recorder(): { register: TestRegistrar; seen: Array<{ name: string; skipped: boolean }> } {
  const seen: Array<{ name: string; skipped: boolean }> = [];
  const register = Object.assign((name: string) => void seen.push({ name, skipped: false }), {
    each: (table: readonly unknown[]) => (name: string) => void table.forEach(() => seen.push({ name, skipped: false })),
    skip: Object.assign((name: string) => void seen.push({ name, skipped: true }), {
      each: (table: readonly unknown[]) => (name: string) => void table.forEach(() => seen.push({ name, skipped: true })),
    }),
  }) as unknown as TestRegistrar;
  return { register, seen };
}

const adapter = { start: async () => ({ url: 'http://x', close: async () => {} }) } satisfies HttpConformanceOptions;

describe('the HTTP kit plans its checks', () => {
  it('sockets runs every layer; in-process behaviour and both; wire wire and both', () => {
    expect(['behaviour', 'wire', 'both'].map((l) => layerRuns('sockets', l as never))).toEqual([true, true, true]);
    expect(['behaviour', 'wire', 'both'].map((l) => layerRuns('in-process', l as never))).toEqual([true, false, true]);
    expect(['behaviour', 'wire', 'both'].map((l) => layerRuns('wire', l as never))).toEqual([false, true, true]);
  });

  it('every contract check has a group; in-process and wire runs share only the both-layer checks and together cover all', () => {
    for (const check of httpConformanceChecks) expect(check.group, check.name).toMatch(/^contract: /);
    const all = planHttpChecks(httpConformanceChecks, { mode: 'sockets' }).map((p) => p.check.name);
    const inProcess = planHttpChecks(httpConformanceChecks, { mode: 'in-process' }).map((p) => p.check.name);
    const wire = planHttpChecks(httpConformanceChecks, { mode: 'wire' }).map((p) => p.check.name);
    expect(all).toHaveLength(httpConformanceChecks.length);
    expect(new Set([...inProcess, ...wire])).toEqual(new Set(all));
    const shared = inProcess.filter((n) => wire.includes(n));
    expect(shared.sort()).toEqual(httpConformanceChecks.filter((c) => c.layer === 'both').map((c) => c.name).sort());
  });

  it('an opt-out by group or by name skips exactly those checks, with the reason; nothing else is skipped', () => {
    const [first, second] = httpConformanceChecks;
    const plan = planHttpChecks(httpConformanceChecks, { optOut: { [first!.group]: 'no such routes here', [second!.name]: 'keys live elsewhere' } });
    const skipped = plan.filter((p) => p.skip !== undefined).map((p) => [p.check.name, p.skip]);
    const byGroup = httpConformanceChecks.filter((c) => c.group === first!.group).map((c) => [c.name, 'no such routes here']);
    expect(skipped).toEqual([...byGroup, [second!.name, 'keys live elsewhere']]);
  });

  it('a suite group registers an opted-out check as skipped with the reason in its title, and only the layers of the run', () => {
    const { register, seen } = recorder();
    const kit = { ...adapter, mode: 'in-process' as const, optOut: { 'check b': 'the host answers it' } };
    const it2 = kitIt(kit, 'a group', 'behaviour', register);
    it2('check a', () => {});
    it2('check b', () => {});
    it2.wire('a wire check', () => {});
    it2.both('a happy path', () => {});
    it2.each([1, 2])('check %s', () => {});
    expect(seen).toEqual([
      { name: 'check a', skipped: false },
      { name: 'check b — opted out: the host answers it', skipped: true },
      { name: 'a happy path', skipped: false },
      { name: 'check %s', skipped: false },
      { name: 'check %s', skipped: false },
    ]);
    // A whole group opted out: every check of it skipped, with the reason.
    const group = recorder();
    const optedGroup = kitIt({ ...adapter, optOut: { 'a group': 'not served' } }, 'a group', 'behaviour', group.register);
    optedGroup('check a', () => {});
    optedGroup.wire('a wire check', () => {});
    expect(group.seen).toEqual([
      { name: 'check a — opted out: not served', skipped: true },
      { name: 'a wire check — opted out: not served', skipped: true },
    ]);
  });

  it('an opt-out naming no check nor group of the run is refused with a TypeError naming it', () => {
    const { register } = recorder();
    const kit = { ...adapter, optOut: { 'check a': 'fine', 'chek b': 'a typo' } };
    kitIt(kit, 'a group', 'behaviour', register)('check a', () => {});
    expect(() => assertKnownOptOuts(kit)).toThrow(TypeError);
    expect(() => assertKnownOptOuts(kit)).toThrow(/"chek b"/);
    expect(() => assertKnownOptOuts({ ...kit, optOut: { 'check a': 'fine' } })).toThrow(/"check a"/); // another run met nothing
  });
});
