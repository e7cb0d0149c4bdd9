/**
 * The one place where the drivers' "the database cannot be reached" errors become the core's
 * `storage_unavailable` (503 with `Retry-After` on every HTTP adapter, platform.md "Health"):
 * refused, reset or timed-out connections, DNS failures, a server shutting down, starting up or
 * out of connection slots, and a connection lost mid-query. Everything else passes through
 * unchanged (a constraint violation stays what it is). Loads no driver.
 */
import { InboxKitError, isInboxKitError } from '@inbox-kit/core';

/** Node's network error codes of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/**
 * PostgreSQL SQLSTATEs of an unavailable server: class 08 (connection exception), 57P01
 * (admin_shutdown), 57P02 (crash_shutdown), 57P03 (cannot_connect_now: starting up or shutting
 * down), 53300 (too_many_connections).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** node-postgres messages of a lost or impossible connection (it gives these errors no code). */
const LOST_CONNECTION = /^(Connection terminated|Client has encountered a connection error|Connection terminated unexpectedly|timeout exceeded when trying to connect|Client was closed and is not queryable)/;

/** True when `error` says the database cannot be reached now (see the module comment). */
export function isConnectionError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || isInboxKitError(error)) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  if (error instanceof AggregateError) return error.errors.some(isConnectionError);
  return typeof message === 'string' && LOST_CONNECTION.test(message);
}

/**
 * `error` as the core's `storage_unavailable` when it is a connection error ({@link
 * isConnectionError}), with the driver's error as `cause` (for logs; the HTTP answer shows only the
 * core's words); any other value unchanged.
 */
export function asStorageError(error: unknown): unknown {
  if (!isConnectionError(error)) return error;
  return new InboxKitError('storage_unavailable', 'The database cannot be reached; retry later', [], { cause: error });
}
