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
 * as `sendEventStream` of `@inbox-kit/http-fastify` does.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { createLocalEventBus, topicOf, type BusListener, type BusMessage, type EventBus } from '@inbox-kit/core';
import { EVENT_BUS_APPLICATION_NAME, EVENT_BUS_CHANNEL } from './constants.js';
import { openPostgres } from './postgres.js';
import type { Database } from './schema.js';
import { createKyselyStore } from './store.js';

export { EVENT_BUS_APPLICATION_NAME, EVENT_BUS_CHANNEL };

/**
 * The listening connection does not receive notifications sent to its database: thrown by
 * `start()` when the bus's first notification to itself did not arrive in time (typically: the
 * listener goes through a pooler in transaction or statement mode).
 */
export class EventBusListenError extends Error {
  override readonly name = 'EventBusListenError';
}

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

/** The JSON body of a notification (at most a few hundred bytes: ids are ≤ 128 characters). */
export type EventNotification =
  | { origin: string; kind: 'project_event'; project_id: string; sequence: number; id: string }
  | { origin: string; kind: 'session_event'; session_id: string; seq: number; id: string };

/** What the bus knows about one subscribed topic. */
interface TopicState {
  subscribers: number;
  /** Every sequence ≤ watermark was delivered here; undefined until the first event is seen. */
  watermark: number | undefined;
  /** Sequences above the watermark that were delivered (a local publish that overtook others). */
  above: Set<number>;
  /** A read from storage is running. */
  fetching: boolean;
  /** Another read was asked for while one ran. */
  again: boolean;
}

const positionOf = (message: BusMessage): number => (message.kind === 'project_event' ? message.event.sequence : message.event.seq);

/** Builds the notification of a message. */
function notificationOf(origin: string, message: BusMessage): EventNotification {
  return message.kind === 'project_event'
    ? { origin, kind: 'project_event', project_id: message.event.project_id, sequence: message.event.sequence, id: message.event.id }
    : { origin, kind: 'session_event', session_id: message.event.session_id, seq: message.event.seq, id: message.event.id };
}

/** Parses a notification; `undefined` when it is not one of ours. */
function parseNotification(payload: string | undefined): EventNotification | undefined {
  if (payload === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.origin !== 'string' || typeof v.id !== 'string') return undefined;
  if (v.kind === 'project_event' && typeof v.project_id === 'string' && Number.isSafeInteger(v.sequence)) return v as EventNotification;
  if (v.kind === 'session_event' && typeof v.session_id === 'string' && Number.isSafeInteger(v.seq)) return v as EventNotification;
  return undefined;
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** `host:port/database` of a connection URL (never its password), for error messages. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'the listen URL';
  }
}

/**
 * Destroys the socket of a client that may never answer: `end()` waits for the server to close
 * the connection, which a frozen backend or a half-open TCP connection never does.
 */
function destroySocket(client: pg.Client): void {
  try {
    (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
  } catch {
    // Already gone.
  }
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
  const maxDelay = options.reconnectMaxMs ?? 5_000;
  const pageSize = options.pageSize ?? 500;
  const ownDb = options.db === undefined;
  const db = options.db ?? openPostgres(options.url, { max: 2, onError });
  const store = createKyselyStore(db, { dialect: 'postgres' });
  const origin = randomUUID();
  const listenUrl = options.listenUrl ?? options.url;
  const healthInterval = options.healthCheckIntervalMs ?? 5_000;
  const healthTimeout = options.healthCheckTimeoutMs ?? 3_000;
  /** The channel only this bus listens on: its health-check notifications to itself. */
  const pingChannel = `inbox_kit_ping_${origin.replaceAll('-', '')}`;

  const topics = new Map<string, TopicState>();
  let listener: pg.Client | undefined;
  let reconnects = 0;
  let missedHealthChecks = 0;
  let connectedAt: number | undefined;
  let healthTimer: NodeJS.Timeout | undefined;
  /** Health-check notifications sent and not received yet, by number, with their deadline timers. */
  const awaitedPings = new Map<number, { client: pg.Client; timer: NodeJS.Timeout; resolve?: () => void }>();
  let pings = 0;
  let started = false;
  let closed = false;
  let attempt = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  const retryTimers = new Set<NodeJS.Timeout>();

  // — delivery bookkeeping —

  const delivered = (state: TopicState, position: number) =>
    state.watermark !== undefined && (position <= state.watermark || state.above.has(position));

  const markDelivered = (state: TopicState, position: number) => {
    if (state.watermark === undefined) state.watermark = position - 1;
    if (position <= state.watermark) return;
    state.above.add(position);
    while (state.above.delete(state.watermark + 1)) state.watermark += 1;
  };

  /** Delivers a message to this process's subscribers unless it was delivered already. */
  const deliver = (message: BusMessage) => {
    const state = topics.get(topicOf(message));
    if (state) {
      const position = positionOf(message);
      if (delivered(state, position)) return;
      markDelivered(state, position);
    }
    local.publish(message);
  };

  // — reading storage —

  const readAfter = async (topic: string, after: number): Promise<BusMessage[]> => {
    if (topic.startsWith('project:')) {
      const events = await store.listProjectEvents({ project_id: topic.slice('project:'.length), after, limit: pageSize });
      return events.map((event) => ({ kind: 'project_event', event }));
    }
    const events = await store.listSessionEvents({ session_id: topic.slice('session:'.length), after, limit: pageSize });
    return events.map((event) => ({ kind: 'session_event', event }));
  };

  /** The highest sequence allocated in a topic (the counter on its parent row; 0 when none). */
  const latestPosition = async (topic: string): Promise<number> => {
    const row = topic.startsWith('project:')
      ? await db.selectFrom('projects').select('event_sequence as n').where('id', '=', topic.slice('project:'.length)).executeTakeFirst()
      : await db.selectFrom('sessions').select('event_seq as n').where('id', '=', topic.slice('session:'.length)).executeTakeFirst();
    return row ? Number(row.n) : 0;
  };

  /**
   * Reads and delivers the topic's committed events after its watermark until storage has no more.
   * One read per topic at a time; a request during a read makes it read again afterwards.
   */
  const fetchTopic = (topic: string, state: TopicState): void => {
    if (closed) return;
    if (state.fetching) {
      state.again = true;
      return;
    }
    state.fetching = true;
    void (async () => {
      try {
        do {
          state.again = false;
          for (;;) {
            if (closed || topics.get(topic) !== state || state.watermark === undefined) return;
            const messages = await readAfter(topic, state.watermark);
            if (closed || topics.get(topic) !== state) return;
            for (const message of messages) deliver(message);
            if (messages.length < pageSize) break;
          }
        } while (state.again);
      } catch (error) {
        onError(error);
        // Storage hiccup: try again later (a reconnect resyncs too).
        const timer = setTimeout(() => {
          retryTimers.delete(timer);
          if (topics.get(topic) === state) fetchTopic(topic, state);
        }, Math.max(minDelay, 500));
        timer.unref?.();
        retryTimers.add(timer);
      } finally {
        state.fetching = false;
      }
    })();
  };

  // — notifications out —

  let outbox: string[] | undefined;
  let sending: Promise<void> = Promise.resolve();
  const send = async (payloads: string[], retry: boolean): Promise<void> => {
    try {
      await sql`select pg_notify(${channel}, p) from unnest(${payloads}::text[]) as t(p)`.execute(db);
    } catch (error) {
      onError(error);
      if (retry && !closed) await send(payloads, false);
    }
  };
  const notify = (message: BusMessage) => {
    const payload = JSON.stringify(notificationOf(origin, message));
    if (outbox) {
      outbox.push(payload);
      return;
    }
    // Everything published in the same tick goes out in one statement, in publish order.
    outbox = [payload];
    sending = sending.then(() => {
      const payloads = outbox ?? [];
      outbox = undefined;
      return send(payloads, true);
    });
  };

  // — notifications in —

  const onNotification = (payload: string | undefined) => {
    const note = parseNotification(payload);
    if (!note) {
      onError(new Error(`postgres event bus: ignored a malformed notification on ${channel}`));
      return;
    }
    if (note.origin === origin) return; // published here: already delivered locally
    const topic = note.kind === 'project_event' ? `project:${note.project_id}` : `session:${note.session_id}`;
    const state = topics.get(topic);
    if (!state) return; // nobody here listens to it
    const position = note.kind === 'project_event' ? note.sequence : note.seq;
    if (state.watermark === undefined) state.watermark = position - 1;
    if (delivered(state, position)) return;
    fetchTopic(topic, state);
  };

  /** After a (re)connection: read every subscribed topic from storage, so nothing sent meanwhile is lost. */
  const resync = async () => {
    for (const [topic, state] of [...topics]) {
      try {
        if (state.watermark === undefined) {
          const latest = await latestPosition(topic);
          if (latest === 0 || topics.get(topic) !== state) continue;
          if (state.watermark === undefined) state.watermark = latest - 1;
        }
        fetchTopic(topic, state);
      } catch (error) {
        onError(error);
      }
    }
  };

  // — the listener's health —

  /** A health-check notification arrived: the listener `client` is alive. */
  const onPing = (payload: string | undefined) => {
    const n = Number(payload);
    const awaited = awaitedPings.get(n);
    if (awaited === undefined) return;
    clearTimeout(awaited.timer);
    awaitedPings.delete(n);
    awaited.resolve?.();
  };

  const forgetPings = () => {
    for (const { timer } of awaitedPings.values()) clearTimeout(timer);
    awaitedPings.clear();
  };

  /**
   * Sends a notification to this bus's own channel through `db` and gives it `healthTimeout` ms to
   * reach `client`; resolves true when it did, false when not (`onMissed` is called then). A send
   * that fails (the database, not the listener, is unreachable) resolves true after reporting it:
   * the listener is not judged on it.
   */
  const ping = (client: pg.Client, onMissed: () => void): Promise<boolean> => new Promise((resolve) => {
    const n = ++pings;
    const timer = setTimeout(() => {
      if (!awaitedPings.delete(n)) return;
      onMissed();
      resolve(false);
    }, healthTimeout);
    timer.unref?.();
    awaitedPings.set(n, { client, timer, resolve: () => resolve(true) });
    sql`select pg_notify(${pingChannel}, ${String(n)})`.execute(db).catch((error: unknown) => {
      if (!awaitedPings.delete(n)) return;
      clearTimeout(timer);
      onError(error);
      resolve(true);
    });
  });

  /** One periodic health check of the current listener. */
  const checkListener = () => {
    const client = listener;
    if (client === undefined || closed) return;
    // One check at a time per listener: a pending one will decide.
    for (const awaited of awaitedPings.values()) if (awaited.client === client) return;
    void ping(client, () => {
      if (listener !== client) return;
      missedHealthChecks += 1;
      onError(new Error(`postgres event bus: the listening connection missed its health check (no notification within ${healthTimeout} ms); reconnecting`));
      drop(client, true);
    });
  };

  // — the listening connection —

  const scheduleReconnect = () => {
    if (closed || reconnectTimer) return;
    const delay = Math.min(maxDelay, minDelay * 2 ** attempt);
    attempt += 1;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      connect().then(
        () => {
          reconnects += 1;
          return resync();
        },
        (error: unknown) => {
          onError(error);
          scheduleReconnect();
        },
      );
    }, delay);
    reconnectTimer.unref?.();
  };

  /** Ends a listener that failed; `dead`: it may never answer (frozen backend, half-open TCP), so its socket is destroyed. */
  const drop = (client: pg.Client, dead = false) => {
    if (listener === client) {
      listener = undefined;
      connectedAt = undefined;
    }
    // Its later errors and end are this failure's, already handled.
    client.removeAllListeners();
    client.on('error', () => undefined);
    for (const [n, awaited] of awaitedPings) {
      if (awaited.client !== client) continue;
      clearTimeout(awaited.timer);
      awaitedPings.delete(n);
    }
    if (dead) destroySocket(client);
    client.end().catch(() => undefined);
    if (started) scheduleReconnect();
  };

  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: listenUrl, application_name: `${EVENT_BUS_APPLICATION_NAME} ${origin}`, keepAlive: true });
    let established = false;
    let failed = false;
    const fail = (error?: unknown) => {
      if (!established || failed) return; // before LISTEN succeeded, connect()/query() reject instead
      failed = true;
      if (error !== undefined) onError(error);
      drop(client);
    };
    // Listeners first: a pg.Client that emits 'error' with no listener would crash the process.
    client.on('error', (error) => fail(error));
    client.on('end', () => fail());
    client.on('notification', (message) => {
      if (message.channel === channel) onNotification(message.payload);
      else if (message.channel === pingChannel) onPing(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(channel)}; LISTEN ${quoteIdent(pingChannel)}`);
    } catch (error) {
      client.removeAllListeners('notification');
      await client.end().catch(() => undefined);
      throw error;
    }
    if (closed) {
      client.removeAllListeners('notification');
      await client.end().catch(() => undefined);
      return;
    }
    established = true;
    listener = client;
    connectedAt = Date.now();
    attempt = 0;
  };

  /**
   * Start-up check: a notification sent through `db` must reach the new listener, else the
   * listener is closed and `start()` fails (see the module comment: a transaction-mode pooler).
   */
  const verifyListener = async (): Promise<void> => {
    const client = listener;
    if (client === undefined) return;
    if (await ping(client, () => undefined)) return;
    listener = undefined;
    connectedAt = undefined;
    client.removeAllListeners();
    client.on('error', () => undefined);
    destroySocket(client);
    await client.end().catch(() => undefined);
    const where = describeUrl(listenUrl);
    throw new EventBusListenError(
      `postgres event bus: a notification sent to the database did not reach the LISTEN connection (${where}) within ${healthTimeout} ms. ` +
      'Is that a connection pooler in transaction or statement mode (e.g. PgBouncer with pool_mode = transaction)? ' +
      'LISTEN/NOTIFY needs a direct connection to PostgreSQL or a pooler in session mode: point the listener there ' +
      '(DATABASE_LISTEN_URL in the demo, option listenUrl of createPostgresEventBus) and keep the pooler for everything else.',
    );
  };

  return {
    origin,

    publish(message) {
      try {
        deliver(message);
        const state = topics.get(topicOf(message));
        // A sequence above the watermark with a hole below it: another process's event (or a
        // concurrent local publish) is not here yet; read storage to fill the hole.
        if (state && state.above.size > 0) fetchTopic(topicOf(message), state);
        if (!closed) notify(message);
      } catch (error) {
        onError(error); // publish MUST NOT throw to the publisher
      }
    },

    subscribe(topic: string, listener_: BusListener) {
      const off = local.subscribe(topic, listener_);
      let state = topics.get(topic);
      if (!state) topics.set(topic, (state = { subscribers: 0, watermark: undefined, above: new Set(), fetching: false, again: false }));
      state.subscribers += 1;
      const mine = state;
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        off();
        mine.subscribers -= 1;
        if (mine.subscribers === 0 && topics.get(topic) === mine) topics.delete(topic);
      };
    },

    subscriberCount: () => local.subscriberCount(),

    isListening: () => listener !== undefined,

    listenerStats: () => ({ reconnects, missedHealthChecks, connectedAt }),

    async start() {
      if (started) return;
      if (closed) throw new Error('postgres event bus: start() after close()');
      await connect();
      await verifyListener();
      started = true;
      if (healthInterval > 0) {
        healthTimer = setInterval(checkListener, healthInterval);
        healthTimer.unref?.();
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      started = false;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      reconnectTimer = undefined;
      if (healthTimer) clearInterval(healthTimer);
      healthTimer = undefined;
      forgetPings();
      for (const timer of retryTimers) clearTimeout(timer);
      retryTimers.clear();
      await sending.catch(() => undefined);
      const client = listener;
      listener = undefined;
      if (client) {
        client.removeAllListeners();
        client.on('error', () => undefined);
        await client.end().catch(() => undefined);
      }
      if (ownDb) await db.destroy();
    },
  };
}
