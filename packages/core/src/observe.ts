/**
 * Observing the core at work without depending on a metrics or tracing library (platform.md
 * "Observing"): wrappers that report every storage call and every event-bus delivery to hooks a
 * host gives (the demo feeds `prom-client` and `@opentelemetry/api` from them). Without them
 * nothing is wrapped and nothing costs.
 */
import type { Clock } from './ports/clock.js';
import type { BusListener, BusMessage, EventBus } from './ports/event-bus.js';
import type { Store, StoreTx } from './ports/store.js';

/** Hooks around storage calls. */
export interface StoreObserver {
  /**
   * Runs one storage call: `operation` is the port method's name (`findApiKeyByHash`,
   * `transaction`, …; a call inside a unit of work is reported too, as its own name). It MUST
   * call `run` once and settle as it settles (same value, same error): time it, count its errors,
   * wrap it in a span.
   */
  call<T>(operation: string, run: () => Promise<T>): Promise<T>;
}

/**
 * `store` with every method call reported to `observer.call` (the methods of the unit of work's
 * `tx` as well); optional methods stay absent where the store lacks them, `close` is not reported.
 * The result behaves exactly as `store` (same answers, same errors).
 */
export function observeStore<S extends Store>(store: S, observer: StoreObserver): S {
  return wrap(store, observer, true);
}

function wrap<T extends StoreTx>(target: T, observer: StoreObserver, root: boolean): T {
  const cache = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(object, key, receiver) {
      const value = Reflect.get(object, key, receiver);
      if (typeof value !== 'function' || typeof key !== 'string' || key === 'close' || key === 'constructor') return value;
      let wrapped = cache.get(key);
      if (wrapped === undefined) {
        const method = value as (...args: unknown[]) => unknown;
        wrapped = root && key === 'transaction'
          ? (fn: (tx: StoreTx) => Promise<unknown>) => observer.call('transaction', () => method.call(object, (tx: StoreTx) => fn(wrap(tx, observer, false))) as Promise<unknown>)
          : (...args: unknown[]) => observer.call(key, () => method.apply(object, args) as Promise<unknown>);
        cache.set(key, wrapped);
      }
      return wrapped;
    },
  });
}

/** Hooks on event-bus deliveries. */
export interface EventBusObserver {
  /**
   * A committed event reached its first listener in this process: `lag_ms` from its commit time (`created_at`, a Session event's `processed_at`)
   * to now (≥ 0; on PostgreSQL, the NOTIFY hop from the committing process included). Once per
   * message, however many listeners it has. Must not throw (a throw is ignored).
   */
  delivered(info: { kind: BusMessage['kind']; lag_ms: number }): void;
}

/** When a message's event was committed (ms): a Project Event's `created_at`, a Session event's `processed_at`. */
const committedAt = (message: BusMessage): number => (message.kind === 'project_event' ? message.event.created_at : message.event.processed_at);

/**
 * `bus` with every delivered message reported to `observer.delivered` (see there). Publishing and
 * subscribing behave exactly as on `bus`.
 */
export function observeEventBus<B extends EventBus>(bus: B, observer: EventBusObserver, clock: Clock): B {
  const seen = new WeakSet<BusMessage>();
  const subscribe = (topic: string, listener: BusListener) => bus.subscribe(topic, (message) => {
    if (!seen.has(message)) {
      seen.add(message);
      try {
        observer.delivered({ kind: message.kind, lag_ms: Math.max(0, clock.now() - committedAt(message)) });
      } catch {
        // an observer's failure is its own
      }
    }
    listener(message);
  });
  return new Proxy(bus, {
    get(object, key, receiver) {
      if (key === 'subscribe') return subscribe;
      const value = Reflect.get(object, key, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}
