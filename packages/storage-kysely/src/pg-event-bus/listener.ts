/**
 * The listening connection of the PostgreSQL event bus (see `../pg-event-bus.ts`): one dedicated
 * `pg.Client` that `LISTEN`s on the bus's channel and on a ping channel of its own; reconnection
 * with exponential backoff when it fails or ends (then the topics are re-read from storage); the
 * periodic health check — a notification the bus sends itself through `db` must arrive within
 * `healthCheckTimeoutMs`, else the listener is taken for dead (frozen backend, half-open TCP), its
 * socket destroyed, and it reconnects; and the start-up check that refuses a listener behind a
 * pooler in transaction or statement mode ({@link EventBusListenError}).
 */
import pg from 'pg';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { EVENT_BUS_APPLICATION_NAME } from '../constants.js';
import type { Database } from '../schema.js';

/**
 * The listening connection does not receive notifications sent to its database: thrown by
 * `start()` when the bus's first notification to itself did not arrive in time (typically: the
 * listener goes through a pooler in transaction or statement mode).
 */
export class EventBusListenError extends Error {
  override readonly name = 'EventBusListenError';
}

/** Options of {@link NotificationListener}. */
export interface NotificationListenerOptions {
  /** The listener's own connection URL. */
  listenUrl: string;
  /** Sends the health-check notifications (another connection, as every notification travels). */
  db: Kysely<Database>;
  /** The bus's id (in the listener's `application_name`, and its ping channel). */
  origin: string;
  /** The bus's NOTIFY channel. */
  channel: string;
  /** ms a health-check notification may take to arrive. */
  healthTimeoutMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** A notification on the bus's channel arrived. */
  onNotification: (payload: string | undefined) => void;
  /** The listener reconnected after a failure: re-read what it may have missed. */
  onReconnected: () => Promise<void>;
  onError: (error: unknown) => void;
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

/** The bus's listening connection, kept alive. */
export class NotificationListener {
  #client: pg.Client | undefined;
  #reconnects = 0;
  #missedHealthChecks = 0;
  #connectedAt: number | undefined;
  /** Health-check notifications sent and not received yet, by number, with their deadline timers. */
  readonly #awaitedPings = new Map<number, { client: pg.Client; timer: NodeJS.Timeout; resolve?: () => void }>();
  #pings = 0;
  #started = false;
  #closed = false;
  #attempt = 0;
  #reconnectTimer: NodeJS.Timeout | undefined;
  /** The channel only this bus listens on: its health-check notifications to itself. */
  readonly #pingChannel: string;

  constructor(readonly options: NotificationListenerOptions) {
    this.#pingChannel = `inbox_kit_ping_${options.origin.replaceAll('-', '')}`;
  }

  /** True while the listening connection is up. */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  stats(): { reconnects: number; missedHealthChecks: number; connectedAt: number | undefined } {
    return { reconnects: this.#reconnects, missedHealthChecks: this.#missedHealthChecks, connectedAt: this.#connectedAt };
  }

  /**
   * Connects, `LISTEN`s and checks that a notification reaches the connection; from then on a
   * failed connection reconnects. @throws the connection error, or {@link EventBusListenError}.
   */
  async start(): Promise<void> {
    await this.#connect();
    await this.#verify();
    this.#started = true;
  }

  /** One periodic health check of the current listener. */
  check(): void {
    const client = this.#client;
    if (client === undefined || this.#closed) return;
    // One check at a time per listener: a pending one will decide.
    for (const awaited of this.#awaitedPings.values()) if (awaited.client === client) return;
    void this.#ping(client, () => {
      if (this.#client !== client) return;
      this.#missedHealthChecks += 1;
      this.options.onError(new Error(`postgres event bus: the listening connection missed its health check (no notification within ${this.options.healthTimeoutMs} ms); reconnecting`));
      this.#drop(client, true);
    });
  }

  /** Stops reconnecting and ends the connection (idempotent). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#started = false;
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
    for (const { timer } of this.#awaitedPings.values()) clearTimeout(timer);
    this.#awaitedPings.clear();
  }

  /** Ends the current connection (after {@link close} and the outbox's last sends). */
  async end(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    if (client) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    }
  }

  /** A health-check notification arrived: the listener `client` is alive. */
  #onPing(payload: string | undefined): void {
    const n = Number(payload);
    const awaited = this.#awaitedPings.get(n);
    if (awaited === undefined) return;
    clearTimeout(awaited.timer);
    this.#awaitedPings.delete(n);
    awaited.resolve?.();
  }

  /**
   * Sends a notification to this bus's own channel through `db` and gives it `healthTimeoutMs` to
   * reach `client`; resolves true when it did, false when not (`onMissed` is called then). A send
   * that fails (the database, not the listener, is unreachable) resolves true after reporting it:
   * the listener is not judged on it.
   */
  #ping(client: pg.Client, onMissed: () => void): Promise<boolean> {
    return new Promise((resolve) => {
      const n = ++this.#pings;
      const timer = setTimeout(() => {
        if (!this.#awaitedPings.delete(n)) return;
        onMissed();
        resolve(false);
      }, this.options.healthTimeoutMs);
      timer.unref?.();
      this.#awaitedPings.set(n, { client, timer, resolve: () => resolve(true) });
      sql`select pg_notify(${this.#pingChannel}, ${String(n)})`.execute(this.options.db).catch((error: unknown) => {
        if (!this.#awaitedPings.delete(n)) return;
        clearTimeout(timer);
        this.options.onError(error);
        resolve(true);
      });
    });
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#reconnectTimer) return;
    const delay = Math.min(this.options.reconnectMaxMs, this.options.reconnectMinMs * 2 ** this.#attempt);
    this.#attempt += 1;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      this.#connect().then(
        () => {
          this.#reconnects += 1;
          return this.options.onReconnected();
        },
        (error: unknown) => {
          this.options.onError(error);
          this.#scheduleReconnect();
        },
      );
    }, delay);
    this.#reconnectTimer.unref?.();
  }

  /** Ends a listener that failed; `dead`: it may never answer (frozen backend, half-open TCP), so its socket is destroyed. */
  #drop(client: pg.Client, dead = false): void {
    if (this.#client === client) {
      this.#client = undefined;
      this.#connectedAt = undefined;
    }
    // Its later errors and end are this failure's, already handled.
    client.removeAllListeners();
    client.on('error', () => undefined);
    for (const [n, awaited] of this.#awaitedPings) {
      if (awaited.client !== client) continue;
      clearTimeout(awaited.timer);
      this.#awaitedPings.delete(n);
    }
    if (dead) destroySocket(client);
    client.end().catch(() => undefined);
    if (this.#started) this.#scheduleReconnect();
  }

  async #connect(): Promise<void> {
    const { listenUrl, origin, channel, onError, onNotification } = this.options;
    const client = new pg.Client({ connectionString: listenUrl, application_name: `${EVENT_BUS_APPLICATION_NAME} ${origin}`, keepAlive: true });
    let established = false;
    let failed = false;
    const fail = (error?: unknown) => {
      if (!established || failed) return; // before LISTEN succeeded, connect()/query() reject instead
      failed = true;
      if (error !== undefined) onError(error);
      this.#drop(client);
    };
    // Listeners first: a pg.Client that emits 'error' with no listener would crash the process.
    client.on('error', (error) => fail(error));
    client.on('end', () => fail());
    client.on('notification', (message) => {
      if (message.channel === channel) onNotification(message.payload);
      else if (message.channel === this.#pingChannel) this.#onPing(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(channel)}; LISTEN ${quoteIdent(this.#pingChannel)}`);
    } catch (error) {
      client.removeAllListeners('notification');
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.#closed) {
      client.removeAllListeners('notification');
      await client.end().catch(() => undefined);
      return;
    }
    established = true;
    this.#client = client;
    this.#connectedAt = Date.now();
    this.#attempt = 0;
  }

  /**
   * Start-up check: a notification sent through `db` must reach the new listener, else the
   * listener is closed and `start()` fails (see the module comment: a transaction-mode pooler).
   */
  async #verify(): Promise<void> {
    const client = this.#client;
    if (client === undefined) return;
    if (await this.#ping(client, () => undefined)) return;
    this.#client = undefined;
    this.#connectedAt = undefined;
    client.removeAllListeners();
    client.on('error', () => undefined);
    destroySocket(client);
    await client.end().catch(() => undefined);
    const where = describeUrl(this.options.listenUrl);
    throw new EventBusListenError(
      `postgres event bus: a notification sent to the database did not reach the LISTEN connection (${where}) within ${this.options.healthTimeoutMs} ms. ` +
      'Is that a connection pooler in transaction or statement mode (e.g. PgBouncer with pool_mode = transaction)? ' +
      'LISTEN/NOTIFY needs a direct connection to PostgreSQL or a pooler in session mode: point the listener there ' +
      '(DATABASE_LISTEN_URL in the demo, option listenUrl of createPostgresEventBus) and keep the pooler for everything else.',
    );
  }
}
