/**
 * The event bus across processes on PostgreSQL (platform.md "Project Events": "With PostgreSQL,
 * events committed by one server process reach the streams held by every other process";
 * ARCHITECTURE.md "Stream events").
 *
 * How it works:
 * - `publish` (called by the services after commit) delivers to this process's subscribers at once,
 *   through the in-process bus, and sends `pg_notify('inbox_kit_events', <small JSON>)` so other
 *   processes learn that the event exists. The notification carries no event body (a NOTIFY
 *   payload is limited to 8000 bytes), only `{ origin, kind, project_id | session_id,
 *   sequence | seq, id }`.
 * - One dedicated connection `LISTEN`s. A notification from another process (its `origin` differs)
 *   for a topic someone subscribed to here makes the bus read the committed events of that topic
 *   after the last one it delivered, from storage, and deliver them locally in sequence order.
 * - Per topic the bus remembers which sequences it delivered (a watermark plus the few above it),
 *   so a subscriber gets each event once even when a local publish and a read from storage race.
 * - When the listening connection fails or ends (server restart, `pg_terminate_backend`, network),
 *   it reconnects with exponential backoff and then re-reads every subscribed topic from storage
 *   after its watermark: notifications sent while it was away are not lost, they are replaced by
 *   the stored sequence.
 * - A listener can also die silently: its backend frozen, or a half-open TCP connection after a NAT
 *   drop or a failover, which the OS keepalive notices only hours later. So the bus checks its
 *   listener: every `healthCheckIntervalMs` (5 s) it sends a notification to itself on a channel
 *   of its own, through `db` (another connection, as every notification travels); one that has not
 *   arrived within `healthCheckTimeoutMs` (3 s) marks the listener dead: its socket is destroyed,
 *   and the bus reconnects and re-reads from its watermarks as above. A dead listener is noticed
 *   within `healthCheckIntervalMs + healthCheckTimeoutMs` (8 s by default).
 * - The listener has its own connection (`listenUrl`, default `url`): LISTEN needs a session that
 *   lasts, which a pooler in transaction (or statement) mode does not give — PgBouncer drops every
 *   notification there ("got packet 'A' from server when not linked"). `start()` sends itself one
 *   notification and refuses to start ({@link EventBusListenError}) when it does not arrive, so such
 *   a set-up fails at start-up instead of delivering nothing.
 *
 * What subscribers may rely on: every committed event of a subscribed topic is delivered once,
 * events read from storage arrive in ascending sequence, but a local publish may overtake a remote
 * event of a lower sequence. After a reconnect, a topic that had delivered nothing since it was
 * subscribed receives its latest stored event (possibly one the subscriber already read from
 * storage). Consumers therefore order and de-duplicate by sequence and read storage to fill a gap,
 * as the core's event-stream loop (`runEventStream` of `@inbox-kit/core/http`) does.
 *
 * The parts live in `./pg-event-bus/`: the notifications and their outbox (`notifications.ts`),
 * delivery bookkeeping and reads from storage per topic (`topics.ts`), the listening connection,
 * its reconnection and health checks (`listener.ts`). This file composes them.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createLocalEventBus, type BusListener, type EventBus } from '@inbox-kit/core';
import { EVENT_BUS_APPLICATION_NAME, EVENT_BUS_CHANNEL } from './constants.js';
import { EventBusListenError, NotificationListener } from './pg-event-bus/listener.js';
import { NotificationOutbox, parseNotification, type EventNotification } from './pg-event-bus/notifications.js';
import { TopicDelivery } from './pg-event-bus/topics.js';
import { openPostgres } from './postgres.js';
import type { Database } from './schema.js';
import { createKyselyStore } from './store.js';

export { EVENT_BUS_APPLICATION_NAME, EVENT_BUS_CHANNEL, EventBusListenError, type EventNotification };

/** Options of {@link createPostgresEventBus}. */
export interface PostgresEventBusOptions {
  /** `postgres://…` URL of the database the services write to (the default `db` and `listenUrl`). */
  url: string;
  /**
   * The listener's own connection (default `url`): a direct connection to PostgreSQL, or a pooler
   * in session mode. Not a pooler in transaction or statement mode (PgBouncer's usual set-up): it
   * drops notifications, and `start()` refuses it with an {@link EventBusListenError}.
   */
  listenUrl?: string;
  /**
   * ms between two health checks of the listener (default 5,000; 0 turns them off): the bus sends
   * a notification to itself and, when it has not arrived within {@link healthCheckTimeoutMs},
   * takes the listener for dead, reconnects and re-reads what it missed.
   */
  healthCheckIntervalMs?: number;
  /** ms a health-check notification may take to arrive (default 3,000); also the start-up check's deadline. */
  healthCheckTimeoutMs?: number;
  /**
   * Kysely instance on the same database (e.g. `openStore(...).db`), used to send notifications
   * and read events. Default: a pool of 2 connections on `url`, ended by `close()`. A given `db`
   * is never destroyed by the bus.
   */
  db?: Kysely<Database>;
  /**
   * Whether the bus's own pool (when no `db` is given) runs its reads as named prepared statements
   * (`openPostgres`'s option; default `true`). Pass `false` when `url` is a transaction-mode pooler
   * that does not keep them (PgBouncer before 1.21); left at `true` there, the pool falls back to
   * unnamed statements after the first refusal (reported to `onError`).
   */
  preparedStatements?: boolean;
  /** The in-process bus that delivers to subscribers (default: a new `createLocalEventBus`). */
  local?: EventBus;
  /**
   * Receives failures that the bus survives: a lost listener connection, a failed notification or
   * read, a malformed notification. Default: `console.error`.
   */
  onError?: (error: unknown) => void;
  /** NOTIFY channel (default {@link EVENT_BUS_CHANNEL}). Every process of one deployment must use the same. */
  channel?: string;
  /** First reconnect delay in ms (default 100); doubles per failed attempt. */
  reconnectMinMs?: number;
  /** Largest reconnect delay in ms (default 5,000). */
  reconnectMaxMs?: number;
  /** Events read from storage per query (default 500). */
  pageSize?: number;
}

/** The bus plus its lifecycle. */
export interface PostgresEventBus extends EventBus {
  /**
   * Connects the listener and `LISTEN`s. Call once before serving.
   * @throws the connection error when the first connection fails (nothing is retried then).
   */
  start(): Promise<void>;
  /** Stops listening, sends the notifications still queued, and ends its own pool (idempotent). */
  close(): Promise<void>;
  /** This bus's id, sent as `origin` in its notifications and in the listener's `application_name`. */
  readonly origin: string;
  /** True while the listening connection is up (false before `start`, while reconnecting, after `close`). */
  isListening(): boolean;
  /**
   * What the listener has been through: how many times it reconnected, how many health checks it
   * missed, and when (ms, `Date.now()`) the current listener connected; for logs, metrics and tests.
   */
  listenerStats(): { reconnects: number; missedHealthChecks: number; connectedAt: number | undefined };
}

/**
 * Creates the PostgreSQL event bus (see the module comment for the delivery guarantees).
 * Subscribe through this bus (not `local`) so it knows which topics to read after a notification.
 *
 * ```ts
 * const opened = await openStore({ databaseUrl });
 * const bus = createPostgresEventBus({ url: databaseUrl, db: opened.db });
 * await bus.start();
 * // … services use `bus`; on shutdown, after the HTTP server: await bus.close();
 * ```
 */
export function createPostgresEventBus(options: PostgresEventBusOptions): PostgresEventBus {
  const channel = options.channel ?? EVENT_BUS_CHANNEL;
  const onError = options.onError ?? ((error: unknown) => console.error('[inbox-kit] postgres event bus:', error));
  const local = options.local ?? createLocalEventBus(onError);
  const minDelay = options.reconnectMinMs ?? 100;
  const ownDb = options.db === undefined;
  const db = options.db ?? openPostgres(options.url, { max: 2, onError, preparedStatements: options.preparedStatements ?? true });
  const origin = randomUUID();
  const healthInterval = options.healthCheckIntervalMs ?? 5_000;
  let started = false;
  let closed = false;
  let healthTimer: NodeJS.Timeout | undefined;
  const isClosed = () => closed;

  const topics = new TopicDelivery({
    local, store: createKyselyStore(db, { dialect: 'postgres' }), db, pageSize: options.pageSize ?? 500, retryMinMs: minDelay, onError, isClosed,
  });
  const outbox = new NotificationOutbox(db, channel, origin, onError, isClosed);
  const listener = new NotificationListener({
    listenUrl: options.listenUrl ?? options.url, db, origin, channel, onError,
    healthTimeoutMs: options.healthCheckTimeoutMs ?? 3_000, reconnectMinMs: minDelay, reconnectMaxMs: options.reconnectMaxMs ?? 5_000,
    onNotification: (payload) => {
      const note = parseNotification(payload);
      if (!note) {
        onError(new Error(`postgres event bus: ignored a malformed notification on ${channel}`));
        return;
      }
      if (note.origin === origin) return; // published here: already delivered locally
      if (note.kind === 'project_event') topics.notified(`project:${note.project_id}`, note.sequence);
      else topics.notified(`session:${note.session_id}`, note.seq);
    },
    onReconnected: () => topics.resync(),
  });

  return {
    origin,

    publish(message) {
      try {
        topics.deliver(message);
        // A sequence above the watermark with a hole below it: another process's event (or a
        // concurrent local publish) is not here yet; read storage to fill the hole.
        topics.fillHoles(message);
        if (!closed) outbox.notify(message);
      } catch (error) {
        onError(error); // publish MUST NOT throw to the publisher
      }
    },

    subscribe(topic: string, listener_: BusListener) {
      const off = local.subscribe(topic, listener_);
      const untrack = topics.track(topic);
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        off();
        untrack();
      };
    },

    subscriberCount: () => local.subscriberCount(),

    isListening: () => listener.listening,

    listenerStats: () => listener.stats(),

    async start() {
      if (started) return;
      if (closed) throw new Error('postgres event bus: start() after close()');
      await listener.start();
      started = true;
      if (healthInterval > 0) {
        healthTimer = setInterval(() => listener.check(), healthInterval);
        healthTimer.unref?.();
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      started = false;
      await listener.close();
      if (healthTimer) clearInterval(healthTimer);
      healthTimer = undefined;
      topics.stop();
      await outbox.flushed();
      await listener.end();
      if (ownDb) await db.destroy();
    },
  };
}
