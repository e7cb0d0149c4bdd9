/**
 * How the HTTP kit registers its checks: every check has a name and a group (the suite it belongs
 * to), and a *layer*:
 * - `behaviour` (the default): what the contract answers; needs nothing but a request and its
 *   response, so it runs in-process against a fetch-style handler (`runHttpBehaviour`);
 * - `wire`: what only a real socket shows (raw malformed requests, slow and refused bodies,
 *   408/413 with `Connection: close`, connection caps, SSE over a socket, the router's raw bytes);
 *   it runs in the thin wire suite of each adapter (`runHttpWire`);
 * - `both`: a few happy paths per area, run by both.
 * `runHttpConformance` (third-party adapter authors with only a server) runs every layer over sockets.
 *
 * A run opts a check or a whole group out with a reason (`optOut: { 'name or group': 'why' }`):
 * the check is then registered as `it.skip` with the reason in its title, so a report shows it.
 */
import { describe as vitestDescribe, it as vitestIt } from 'vitest';
import type { HttpConformanceOptions } from './http-conformance-checks.js';

/** A check's layer (see the module comment). */
export type HttpCheckLayer = 'behaviour' | 'wire' | 'both';

/** Which layers a run registers: `sockets` all of them, `in-process` behaviour + both, `wire` wire + both. */
export type HttpKitMode = 'sockets' | 'in-process' | 'wire';

/**
 * Checks or groups a run does not run, each with the reason (shown in the skipped test's title).
 * Keys are a check's name (its title as registered, `%s` placeholders included) or a group's name.
 */
export type HttpKitOptOut = Readonly<Record<string, string>>;

/** What a run of the kit hands every group besides the adapter: its mode and opt-outs. */
export interface HttpKitRun {
  /** Default `sockets`. */
  mode?: HttpKitMode;
  optOut?: HttpKitOptOut;
}

/** Whether a run in `mode` registers a check of `layer`. */
export function layerRuns(mode: HttpKitMode, layer: HttpCheckLayer): boolean {
  if (mode === 'sockets' || layer === 'both') return true;
  return mode === 'in-process' ? layer === 'behaviour' : layer === 'wire';
}

type TestFn = (...args: any[]) => unknown;
type Register = (name: string, fn: TestFn, timeout?: number) => void;
type RegisterEach = <T>(table: readonly T[]) => (name: string, fn: (...args: T extends readonly unknown[] ? T : [T]) => unknown, timeout?: number) => void;

/** The `it` a group's checks are registered with: `it(name, fn)`, `it.each(table)(name, fn)`, and the same per layer. */
export interface KitIt extends Register {
  each: RegisterEach;
  /** A check only a real socket shows. */
  wire: Register & { each: RegisterEach };
  /** A happy path both the in-process and the wire run keep. */
  both: Register & { each: RegisterEach };
  /** A check of the behaviour layer, whatever the group's default. */
  behaviour: Register & { each: RegisterEach };
}

/** The part of vitest's `it` the kit registers with (a test may pass a recorder instead). */
export interface TestRegistrar {
  (name: string, fn: () => unknown, timeout?: number): void;
  each(table: readonly any[]): (name: string, fn: (...args: any[]) => unknown, timeout?: number) => void;
  skip: { (name: string, fn: () => unknown): void; each(table: readonly any[]): (name: string, fn: (...args: any[]) => unknown) => void };
}

/** The reason `kit` opts the check `name` of `group` out, if it does. */
export function optedOut(kit: HttpKitRun, group: string, name: string): string | undefined {
  return kit.optOut?.[name] ?? kit.optOut?.[group];
}

/** The check and group names a run has met (to refuse an opt-out that names nothing). */
const metNames = new WeakMap<object, Set<string>>();

/** Records that a run met the check `name` of `group` (whatever its layer). */
export function meetCheck(kit: HttpKitRun, group: string, name?: string): void {
  let names = metNames.get(kit);
  if (names === undefined) metNames.set(kit, (names = new Set()));
  names.add(group);
  if (name !== undefined) names.add(name);
}

/**
 * Refuses opt-outs that name no check nor group the run met (a typo must not silently run
 * everything). Called by `runHttpConformance` once every check is registered.
 * @throws TypeError naming the unknown keys.
 */
export function assertKnownOptOuts(kit: HttpKitRun): void {
  const names = metNames.get(kit) ?? new Set<string>();
  const unknown = Object.keys(kit.optOut ?? {}).filter((key) => !names.has(key));
  if (unknown.length > 0) {
    throw new TypeError(`@inbox-kit/core/testing: optOut names no check or group of the HTTP kit: ${unknown.map((k) => JSON.stringify(k)).join(', ')} (a check is named by its title as registered, \`%s\` placeholders included)`);
  }
}

/** One check as a run treats it: `skip` is the opt-out's reason, if it is opted out. */
export interface PlannedHttpCheck<C> {
  check: C;
  skip: string | undefined;
}

/** The checks of `checks` a run in `kit.mode` registers, each with its opt-out reason (if any). */
export function planHttpChecks<C extends { name: string; group: string; layer?: HttpCheckLayer }>(checks: readonly C[], kit: HttpKitRun): PlannedHttpCheck<C>[] {
  const mode = kit.mode ?? 'sockets';
  for (const check of checks) meetCheck(kit, check.group, check.name);
  return checks.filter((check) => layerRuns(mode, check.layer ?? 'behaviour')).map((check) => ({ check, skip: optedOut(kit, check.group, check.name) }));
}

/**
 * The `it` of one group of the kit: registers a check only when the run's mode takes its layer,
 * as `it.skip('<name> — opted out: <reason>')` when the run opts it (or its group) out.
 * @param register what to register with (default vitest's `it`).
 */
export function kitIt(kit: HttpConformanceOptions & HttpKitRun, group: string, layer: HttpCheckLayer = 'behaviour', register: TestRegistrar = vitestIt as unknown as TestRegistrar): KitIt {
  const mode = kit.mode ?? 'sockets';
  meetCheck(kit, group);
  const forLayer = (l: HttpCheckLayer): Register & { each: RegisterEach } => {
    const one: Register = (name, fn, timeout) => {
      meetCheck(kit, group, name);
      if (!layerRuns(mode, l)) return;
      const reason = optedOut(kit, group, name);
      if (reason !== undefined) register.skip(`${name} — opted out: ${reason}`, () => {});
      else register(name, fn as () => Promise<void>, timeout);
    };
    const each: RegisterEach = (table) => (name, fn, timeout) => {
      meetCheck(kit, group, name);
      if (!layerRuns(mode, l)) return;
      const reason = optedOut(kit, group, name);
      if (reason !== undefined) register.skip.each(table)(`${name} — opted out: ${reason}`, () => {});
      else register.each(table)(name, fn as (...args: any[]) => unknown, timeout);
    };
    return Object.assign(one, { each });
  };
  return Object.assign(forLayer(layer), { wire: forLayer('wire'), both: forLayer('both'), behaviour: forLayer('behaviour') });
}

/** Whether a run registers any check of `layers` (a group whose checks are all of other layers registers nothing: vitest refuses an empty describe). */
export function groupRuns(kit: HttpKitRun, ...layers: HttpCheckLayer[]): boolean {
  return layers.some((layer) => layerRuns(kit.mode ?? 'sockets', layer));
}

/** `describe` for a block whose checks are of `layers`: registered only when the run takes one of them. */
export function describeFor(kit: HttpKitRun, ...layers: HttpCheckLayer[]): (name: string, fn: () => void) => void {
  return groupRuns(kit, ...layers) ? (name, fn) => vitestDescribe(name, fn) : () => {};
}
