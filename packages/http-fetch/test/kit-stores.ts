/**
 * The stores the HTTP kit runs of this package open per world (`openStore` of the kit): a fresh
 * SQLite file, or a fresh database on the PostgreSQL server of `INBOX_KIT_TEST_PG_URL`, from
 * `@inbox-kit/storage-kysely/testing` (with its raw row reader: raw SQL, not the Store port).
 */
import { openPostgresTestStore, openSqliteTestStore } from '@inbox-kit/storage-kysely/testing';

/** The admin URL of the test PostgreSQL server, if one is configured. */
export const PG_ADMIN_URL = process.env.INBOX_KIT_TEST_PG_URL || undefined;

/** Why the PostgreSQL runs are skipped when no server is configured. */
export const NO_POSTGRES = 'skipped: INBOX_KIT_TEST_PG_URL is not set (start a server with `node scripts/postgres.mjs` and export the URL it prints)';

export const openSqliteKitStore = openSqliteTestStore;
export const openPostgresKitStore = () => openPostgresTestStore(PG_ADMIN_URL!);
