/**
 * The SDK's shared shapes: JSON values and the options every call accepts (`accountId`,
 * `signal`; create calls add an `Idempotency-Key`). Re-exported by `../types.ts`.
 */

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object, e.g. an event `payload` or an Operation Log `metadata`. */
export type JsonObject = { [key: string]: JsonValue };

// ---------------------------------------------------------------------------------------------
// Per-call options
// ---------------------------------------------------------------------------------------------

/** Options every call accepts. */
export interface RequestOptions {
  /**
   * Act as this account (sent as `x-account-id`). Only a `service` key may act as another account
   * of its workspace; an ordinary key sending another id gets 403. Overrides the client default.
   * Spec: platform.md "Identity and credentials".
   */
  accountId?: string;
  /** Aborts the request (and any retry wait). The call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Options of a create call (`POST`): adds an `Idempotency-Key`. */
export interface CreateOptions extends RequestOptions {
  /** Sent as `Idempotency-Key`, so the server can recognise a repeated create. */
  idempotencyKey?: string;
}
