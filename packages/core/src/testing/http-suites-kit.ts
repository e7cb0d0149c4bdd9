/**
 * The shape of the HTTP kit's suites (`http-suites-*.ts`): each suite is data — a group of named
 * checks (`name`, `layer`, `run(ctx)`), with what its checks share built once (`open(kit)`,
 * before the first check; `close(ctx)` after the last) — as the storage kit's
 * `conformance-checks/*` are. {@link registerSuite} registers a group with vitest through
 * `kitIt` (so layers and opt-outs work as for every check of the kit): one `describe` per group
 * and nested block, one test per check (per row of `each`).
 */
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import { kitIt, layerRuns, type HttpCheckLayer, type HttpKitMode } from './http-kit.js';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { rawRequest, type RawRequest } from './http-raw.js';
import type { HttpWorld, WorldResponse } from './http-world.js';

/** One named check of a suite. */
export interface HttpSuiteCheck<C> {
  /** The test's title (`%s` and the like filled from each row of `each`): what users see and opt out by. */
  name: string;
  /** Default: the block's layer. */
  layer?: HttpCheckLayer;
  /** Registered once per row (`it.each(each)`); `run` gets the row's values after the context. */
  each?: readonly unknown[];
  timeout?: number;
  run(ctx: C, ...row: any[]): Promise<void> | void;
}

/** What every check's context holds besides its block's own fields. */
export interface HttpSuiteBase {
  kit: HttpConformanceOptions;
  /** The run's mode (`sockets`, `in-process`, `wire`). */
  mode: HttpKitMode;
}

/** A suite (or a block of one): data. */
export interface HttpSuiteGroup<C = any, P = any> {
  /** The `describe` title. */
  name: string;
  /** The group its checks are opted out by (default: the top block's name). */
  group?: string;
  /** The default layer of its checks (default: the parent's, else `behaviour`). */
  layer?: HttpCheckLayer;
  /** Builds what its checks share, once before the first (absent: the parent's context, else `{ kit, mode }`). */
  open?(base: HttpSuiteBase, parent: P): Promise<C> | C;
  /** ms `open` may take (default: the run's hook timeout). */
  openTimeout?: number;
  /** Releases what `open` built, after the last check (also when `open` half failed: `ctx` is then undefined). */
  close?(ctx: C | undefined): Promise<void> | void;
  /** Whether the block is registered at all for this run (default: yes): e.g. only on the kit's in-memory run. */
  only?(kit: HttpConformanceOptions): boolean;
  /** After each check of the block and its nested blocks (e.g. unfreezing the world's clock). */
  afterEach?(ctx: C): Promise<void> | void;
  checks?: readonly HttpSuiteCheck<C>[];
  /** Nested blocks (each its own `describe`), after the checks. */
  blocks?: readonly HttpSuiteGroup<any, C>[];
}

/** Whether a run in `mode` registers anything of block `g` (vitest refuses an empty describe). */
function blockRuns(mode: HttpKitMode, g: HttpSuiteGroup, layer: HttpCheckLayer): boolean {
  const own = g.layer ?? layer;
  return (g.checks ?? []).some((c) => layerRuns(mode, c.layer ?? own)) || (g.blocks ?? []).some((b) => blockRuns(mode, b, own));
}

/**
 * Registers suite `g` for `kit`: `describe(g.name)`, `open` in a `beforeAll`, `close` in an
 * `afterAll`, one test per check whose layer the run's mode takes (opted-out ones skipped with the
 * reason, see `kitIt`). Nothing at all when the mode takes none of its checks.
 */
export function registerSuite(kit: HttpConformanceOptions, g: HttpSuiteGroup, inherited?: { group: string; layer: HttpCheckLayer; ctx: () => unknown }): void {
  const mode = kit.mode ?? 'sockets';
  const group = g.group ?? inherited?.group ?? g.name;
  const layer = g.layer ?? inherited?.layer ?? 'behaviour';
  if (g.only && !g.only(kit)) return;
  const it = kitIt(kit, group, layer);
  if (!blockRuns(mode, g, layer)) {
    // Still met (an opt-out naming a check of another layer is no typo).
    for (const c of g.checks ?? []) it[c.layer ?? layer]?.(c.name, () => {});
    return;
  }
  const base: HttpSuiteBase = { kit, mode };
  let ctx: unknown;
  const current = g.open ? () => ctx : (inherited?.ctx ?? (() => base));
  describe(g.name, () => {
    if (g.open) {
      beforeAll(async () => {
        ctx = await g.open!(base, inherited?.ctx());
      }, g.openTimeout);
      afterAll(async () => {
        await g.close?.(ctx);
      });
    }
    if (g.afterEach) afterEach(() => g.afterEach!(current() as never));
    for (const c of g.checks ?? []) {
      const reg = it[c.layer ?? layer];
      if (c.each) reg.each(c.each)(c.name, (...row: unknown[]) => c.run(current(), ...row), c.timeout);
      else reg(c.name, () => c.run(current()), c.timeout);
    }
    for (const b of g.blocks ?? []) registerSuite(kit, b, { group, layer, ctx: current });
  });
}

/** In a `wire` run (each adapter's thin wire suite) only `sample`, else all of `items`: the full matrix runs in-process once per store. */
export function thin<T>(base: Pick<HttpSuiteBase, 'mode'>, items: readonly T[], sample: (item: T, index: number) => boolean): T[] {
  return base.mode === 'wire' ? items.filter(sample) : [...items];
}

/** `r` as a fetch `Request` to the in-process handler: headers as given (a lying Content-Length too), chunks as a stream without a length. */
export async function sendInProcess(h: HttpWorld, r: RawRequest): Promise<WorldResponse> {
  const headers = new Headers(r.headers);
  // As on the wire (`rawRequest`): an accurate Content-Length unless the request lies or sends none.
  if (r.body !== undefined && r.contentLength !== null) headers.set('content-length', String(r.contentLength ?? Buffer.byteLength(r.body)));
  let body: BodyInit | undefined = r.body as BodyInit | undefined;
  if (r.chunks !== undefined) {
    headers.set('transfer-encoding', 'chunked');
    const chunks = r.chunks[Symbol.iterator]();
    body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
    });
  }
  const res = await h.fetch(h.url + r.path, { method: r.method, headers, body, duplex: 'half', signal: AbortSignal.timeout(20_000) } as RequestInit);
  if (r.headOnly && (res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, headers: res.headers, body: undefined, text: '' };
  }
  const responseText = await res.text();
  const parsed: unknown = (res.headers.get('content-type') ?? '').includes('json') && responseText !== '' ? JSON.parse(responseText) : responseText;
  return { status: res.status, headers: res.headers, body: parsed, text: responseText };
}

/** How a suite sends a raw request (`http-raw.ts`) to world `h`: in-process to its handler in an `in-process` run, else over a fresh connection. */
export function rawSender(base: Pick<HttpSuiteBase, 'mode'>, h: HttpWorld): (r: RawRequest) => Promise<WorldResponse> {
  return base.mode === 'in-process' ? (r) => sendInProcess(h, r) : (r) => rawRequest(h.url, r);
}
