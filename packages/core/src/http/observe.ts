/**
 * Observing requests (platform.md "Observing"): the hook an adapter calls for every request it
 * answers, so a host can count, time and trace them (the demo's `/metrics` and OpenTelemetry
 * spans) with no metrics library in the kit. Every adapter calls it alike through
 * {@link observeRequest}, which also makes a misbehaving observer harmless.
 */

/** What an adapter tells about a request as it starts. */
export interface ObservedRequestStart {
  method: string;
  /**
   * The route template that matched, with the adapter's prefix or mount (`/inbox/projects/:id/inbox`),
   * never the raw path; `null` when no route matched (a 404, or an answer before routing).
   */
  route: string | null;
}

/** What an adapter tells about a request as it ends. */
export interface ObservedRequestEnd {
  /** The response status (of the head written; for an event stream, 200). */
  status: number;
  /** True when the connection closed before the answer was complete (a stream's client left, or the client went away mid-answer). */
  aborted: boolean;
  /** True when the answer was an event stream (its duration is the stream's). */
  stream: boolean;
  /** ms from the start to the end. */
  duration_ms: number;
}

/** One request's hooks, as the observer answers them for its start. */
export interface RequestObservation {
  /** The head of an event stream was written: from now until `end` the request is an open stream. */
  streamOpened?(): void;
  /**
   * Runs the route's service call (e.g. inside a tracing span's context, so storage spans become
   * its children). It MUST call `run` once and settle as it settles.
   */
  within?<T>(run: () => Promise<T>): Promise<T>;
  /** Once, when the answer has been sent (or the connection closed first). */
  end?(outcome: ObservedRequestEnd): void;
}

/** The adapters' `observer` option: told of every request they answer. Its hooks must not throw (a throw is ignored). */
export interface HttpObserver {
  request(start: ObservedRequestStart): RequestObservation | undefined | void;
}

/** What an adapter holds for one observed request (safe to call whatever the observer does). */
export interface ObservedRequest {
  streamOpened(): void;
  within<T>(run: () => Promise<T>): Promise<T>;
  /** Ends the observation once (later calls do nothing). */
  end(outcome: { status: number; aborted: boolean }): void;
}

const ignore = (): void => {};
const direct = <T>(run: () => Promise<T>): Promise<T> => run();
/** What {@link observeRequest} answers when nothing observes the request (its hooks do nothing: an adapter may skip computing their arguments). */
export const UNOBSERVED: ObservedRequest = { streamOpened: ignore, within: direct, end: ignore };

/**
 * Starts observing one request with `observer` (none: a no-op). The answer's hooks never throw:
 * an observer's throw is swallowed, and `within` without an observer's own runs `run` as it is.
 */
export function observeRequest(observer: HttpObserver | undefined, start: ObservedRequestStart): ObservedRequest {
  if (observer === undefined) return UNOBSERVED;
  const started = performance.now();
  let observation: RequestObservation | undefined;
  try {
    observation = observer.request(start) ?? undefined;
  } catch {
    observation = undefined;
  }
  if (observation === undefined) return UNOBSERVED;
  let stream = false;
  let ended = false;
  return {
    streamOpened() {
      stream = true;
      try {
        observation.streamOpened?.();
      } catch {
        // the observer's own failure
      }
    },
    within: observation.within ? <T>(run: () => Promise<T>) => observation.within!(run) : direct,
    end({ status, aborted }) {
      if (ended) return;
      ended = true;
      try {
        observation.end?.({ status, aborted, stream, duration_ms: performance.now() - started });
      } catch {
        // the observer's own failure
      }
    },
  };
}
