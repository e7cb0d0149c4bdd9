/**
 * Load shedding at the HTTP edge, written once for every adapter: while the process is over a
 * threshold — the mean event-loop delay of the last sample, event-loop utilisation, heap, RSS — or
 * an external health check fails, new requests get 503 `overloaded` with `Retry-After` before any
 * work is done for them. Shedding starts once two of the last three samples are over a threshold (one long
 * block — a server's start, a GC pause, one heavy request — is not an overload: the loop answers
 * again right after it) and ends once three samples in a row are below every threshold. The sampler never throws: a metric that cannot be read (`EMFILE` while
 * the process is out of file descriptors makes `process.memoryUsage()` throw) keeps its last
 * value and is reported, and the sampler goes on.
 *
 * Runtime-neutral: the event-loop delay is measured as the lateness of a short timer; memory and
 * utilisation are read where the runtime has them (`process.memoryUsage`,
 * `performance.eventLoopUtilization`), else not checked.
 */
import { InboxKitError } from '../errors.js';

/** Thresholds of the load shedding; a threshold of 0 is not checked. */
export interface LoadSheddingOptions {
  /** Shed while the mean event-loop delay of the last sample is over this many ms (default 1,000). */
  maxEventLoopDelay?: number;
  /** Shed while event-loop utilisation over the last sample is over this fraction, 0–1 (default 0: off). */
  maxEventLoopUtilization?: number;
  /** Shed while the V8 heap in use is over this many bytes (default 0: off). */
  maxHeapUsedBytes?: number;
  /** Shed while the resident set is over this many bytes (default 0: off). */
  maxRssBytes?: number;
  /** Sampling interval of the metrics in ms (default 1,000). */
  sampleInterval?: number;
  /**
   * An external health check (e.g. the database answers); while it resolves `false` or throws,
   * requests are shed. Run at start (the server is unhealthy until it first returns true) and every
   * `healthCheckInterval` ms.
   */
  healthCheck?: () => Promise<boolean>;
  /** Interval of `healthCheck` in ms (default 5,000). */
  healthCheckInterval?: number;
  /** `Retry-After` of a shed request, in seconds (default 10). */
  retryAfter?: number;
}

/** Defaults of {@link LoadSheddingOptions}. */
export const LOAD_SHEDDING_DEFAULTS = { maxEventLoopDelay: 1_000, retryAfter: 10, healthCheckInterval: 5_000, sampleInterval: 1_000 } as const;

/** A running load shedder. */
export interface LoadShedder {
  /** The 503 to answer now, or `undefined` when the process is not under pressure. */
  refusal(): InboxKitError | undefined;
  /** The last sample: mean event-loop delay (ms), utilisation (0–1), heap and RSS (bytes), health. */
  sample(): { eventLoopDelay: number; eventLoopUtilization: number; heapUsed: number; rss: number; healthy: boolean };
  /** Stops its timers. */
  close(): void;
}

type Memory = () => { heapUsed: number; rss: number };
type Utilization = () => { idle: number; active: number };

/** The runtime's memory reader, if it has one (Node, Bun, Deno's compatibility layer). */
function runtimeMemory(): Memory | undefined {
  const proc = (globalThis as { process?: { memoryUsage?: Memory } }).process;
  return typeof proc?.memoryUsage === 'function' ? () => proc.memoryUsage!() : undefined;
}

/** The runtime's event-loop utilisation reader, if it has one (Node's `performance.eventLoopUtilization`). */
function runtimeUtilization(): Utilization | undefined {
  const perf = (globalThis as { performance?: { eventLoopUtilization?: Utilization } }).performance;
  return typeof perf?.eventLoopUtilization === 'function' ? () => perf.eventLoopUtilization!() : undefined;
}

/** How often the event-loop probe fires (ms); its lateness is the delay. */
const PROBE_MS = 20;
/** Calm samples in a row that end a period of shedding. */
const HOLD_SAMPLES = 3;
/** Samples over a threshold, of the last {@link ENTER_WINDOW}, that start a period of shedding. */
const ENTER_SAMPLES = 2;
/** The samples looked at to start a period of shedding. */
const ENTER_WINDOW = 3;
/** The same kind of sampler error is reported at most once per this many ms. */
const REPORT_EVERY_MS = 60_000;

/** How many bits of `bits` are set. */
function overCount(bits: number): number {
  let n = 0;
  for (let b = bits; b !== 0; b &= b - 1) n++;
  return n;
}

/**
 * Starts a load shedder.
 * @param report told of errors the sampler or the health check met (it goes on).
 * @throws TypeError on a negative threshold or a non-positive interval.
 */
export function createLoadShedder(options: LoadSheddingOptions = {}, report: (error: unknown, context: string) => void = () => {}): LoadShedder {
  const maxDelay = options.maxEventLoopDelay ?? LOAD_SHEDDING_DEFAULTS.maxEventLoopDelay;
  const maxElu = options.maxEventLoopUtilization ?? 0;
  const maxHeap = options.maxHeapUsedBytes ?? 0;
  const maxRss = options.maxRssBytes ?? 0;
  const interval = options.sampleInterval ?? LOAD_SHEDDING_DEFAULTS.sampleInterval;
  const retryAfter = options.retryAfter ?? LOAD_SHEDDING_DEFAULTS.retryAfter;
  for (const [name, v] of Object.entries({ maxEventLoopDelay: maxDelay, maxEventLoopUtilization: maxElu, maxHeapUsedBytes: maxHeap, maxRssBytes: maxRss })) {
    if (typeof v !== 'number' || !(v >= 0)) throw new TypeError(`loadShedding.${name} must be a number ≥ 0, got ${v}`);
  }
  if (!Number.isInteger(interval) || interval < 1) throw new TypeError(`loadShedding.sampleInterval must be an integer ≥ 1, got ${interval}`);
  const memory = maxHeap > 0 || maxRss > 0 ? runtimeMemory() : undefined;
  const utilization = maxElu > 0 ? runtimeUtilization() : undefined;

  const reported = new Map<string, number>();
  const tell = (error: unknown, context: string) => {
    const now = Date.now();
    if ((reported.get(context) ?? -Infinity) + REPORT_EVERY_MS > now) return;
    reported.set(context, now);
    try {
      report(error, context);
    } catch {
      // A failing reporter must not stop the sampler.
    }
  };

  const state = { eventLoopDelay: 0, eventLoopUtilization: 0, heapUsed: 0, rss: 0, healthy: options.healthCheck === undefined };
  let delaySum = 0;
  let delayCount = 0;
  let lastElu = utilization?.();
  let closed = false;
  /** Samples in a row below every threshold (the start counts as calm). */
  let calmSamples = HOLD_SAMPLES;
  /** The last ENTER_WINDOW samples, a bit each (1: over a threshold), the newest lowest. */
  let recent = 0;
  /** Shedding: from ENTER_SAMPLES over of the last ENTER_WINDOW until HOLD_SAMPLES calm in a row. */
  let shedding = false;
  const timers: ReturnType<typeof setTimeout>[] = [];
  const unref = <T>(t: T): T => {
    (t as { unref?: () => void }).unref?.();
    return t;
  };

  // The probe: how late a short timer fires is how long the event loop was blocked.
  let expected = Date.now() + PROBE_MS;
  const probe = () => {
    const now = Date.now();
    delaySum += Math.max(0, now - expected);
    delayCount++;
    expected = now + PROBE_MS;
    if (!closed) timers[0] = unref(setTimeout(probe, PROBE_MS));
  };
  const sample = () => {
    try {
      const now = Date.now();
      state.eventLoopDelay = delayCount === 0 ? Math.max(0, now - expected) : delaySum / delayCount;
      // The probe has not fired for longer than a sample: the loop is blocked right now.
      if (now - expected > interval) state.eventLoopDelay = Math.max(state.eventLoopDelay, now - expected);
      // The probe's lateness so far is in this sample; the next sample counts only what follows.
      if (now > expected) expected = now;
      delaySum = 0;
      delayCount = 0;
      if (utilization !== undefined && lastElu !== undefined) {
        const elu = utilization();
        const idle = elu.idle - lastElu.idle;
        const active = elu.active - lastElu.active;
        state.eventLoopUtilization = idle + active > 0 ? active / (idle + active) : 0;
        lastElu = elu;
      }
    } catch (error) {
      tell(error, 'load sample');
    }
    if (memory !== undefined) {
      try {
        const m = memory();
        state.heapUsed = m.heapUsed;
        state.rss = m.rss;
      } catch (error) {
        // e.g. EMFILE: the last values stay.
        tell(error, 'memory sample');
      }
    }
    const over = (maxDelay > 0 && state.eventLoopDelay > maxDelay) || (maxElu > 0 && state.eventLoopUtilization > maxElu)
      || (maxHeap > 0 && state.heapUsed > maxHeap) || (maxRss > 0 && state.rss > maxRss);
    calmSamples = over ? 0 : calmSamples + 1;
    recent = ((recent << 1) | (over ? 1 : 0)) & ((1 << ENTER_WINDOW) - 1);
    if (overCount(recent) >= ENTER_SAMPLES) shedding = true;
    else if (calmSamples >= HOLD_SAMPLES) shedding = false;
    if (!closed) timers[1] = unref(setTimeout(sample, interval));
  };
  // Over a threshold from ENTER_SAMPLES late samples of the last ENTER_WINDOW until HOLD_SAMPLES samples in a row
  // are calm again: one late sample neither starts shedding nor ends an overload still there.
  const loadOver = () => shedding;
  timers[0] = unref(setTimeout(probe, PROBE_MS));
  timers[1] = unref(setTimeout(sample, interval));

  const check = options.healthCheck;
  if (check !== undefined) {
    const every = options.healthCheckInterval ?? LOAD_SHEDDING_DEFAULTS.healthCheckInterval;
    const run = () => {
      let result: Promise<boolean>;
      try {
        result = Promise.resolve(check());
      } catch (error) {
        result = Promise.reject(error);
      }
      result.then((ok) => {
        state.healthy = ok === true;
      }, (error: unknown) => {
        state.healthy = false;
        tell(error, 'health check');
      }).finally(() => {
        if (!closed) timers[2] = unref(setTimeout(run, every));
      });
    };
    run();
  }

  return {
    refusal() {
      const over = loadOver() || !state.healthy;
      return over ? new InboxKitError('overloaded', 'The server is overloaded; retry later', [], { retryAfterSeconds: retryAfter }) : undefined;
    },
    sample: () => ({ ...state }),
    close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
    },
  };
}
