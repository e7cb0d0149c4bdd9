/**
 * @inbox-kit/storage-kysely/postgres — the PostgreSQL engine over `pg` (an optional peer
 * dependency: install it to use PostgreSQL): `openPostgres(url)` and the cross-process event bus
 * `createPostgresEventBus` (LISTEN/NOTIFY). The root entry's `openStore` loads this entry only
 * when it opens a `postgres://` URL.
 *
 * ```ts
 * import { createPostgresEventBus } from '@inbox-kit/storage-kysely/postgres';
 * ```
 */
export { openPostgres, type PostgresOptions } from './postgres.js';
export {
  createPostgresEventBus, EVENT_BUS_APPLICATION_NAME, EVENT_BUS_CHANNEL, EventBusListenError, type EventNotification, type PostgresEventBus,
  type PostgresEventBusOptions,
} from './pg-event-bus.js';
