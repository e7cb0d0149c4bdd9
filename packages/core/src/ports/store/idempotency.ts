/**
 * The idempotency sub-port of the storage port (`../store.ts`): recorded uses of an
 * `Idempotency-Key`, written with the write they guard (platform.md "Idempotency"). Conformance
 * group `idempotency`.
 */

/** Who used an `Idempotency-Key`: the key is unique per workspace and acting account. */
export interface IdempotencyScope {
  workspace_id: string;
  account_id: string;
  /** The caller's key: 1–255 printable ASCII characters, compared byte for byte. */
  key: string;
}

/**
 * One recorded use of an `Idempotency-Key`: which request claimed the key and what it created.
 * Written in the same transaction as the write it guards, so it exists exactly when that write
 * committed.
 */
export interface IdempotencyRecord extends IdempotencyScope {
  /** Hex SHA-256 of the request (method, path and canonical body); another request with the key → 409. */
  request_hash: string;
  /** What the request created, e.g. `project_inbox_item`. */
  resource_type: string;
  /** The id of the created resource (the response is rebuilt from it on a replay). */
  resource_id: string;
  created_at: number;
}

/**
 * Recorded uses of `Idempotency-Key` (platform.md "Idempotency"). Conformance group `idempotency`.
 */
export interface IdempotencyStore {
  /**
   * The committed record of `(workspace_id, account_id, key)`, or `undefined`. MUST match all three
   * exactly (byte for byte: no case folding, no trimming); a record of another workspace or account
   * is never returned. Inside a transaction it MUST also see the transaction's own insert.
   */
  findIdempotencyRecord(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined>;
  /**
   * Conditional insert: stores `record` only if no record of its `(workspace_id, account_id, key)`
   * exists, and returns `true` when it did, `false` when the key is already taken (the stored record
   * is left unchanged). MUST NOT be check-then-write: of N concurrent calls for one scope (in
   * transactions or not), exactly one returns `true`; a caller whose competitor has not committed
   * yet waits for its outcome (its rollback frees the key, and then this insert succeeds). Inside a
   * transaction the record is released by a rollback.
   */
  insertIdempotencyRecord(record: IdempotencyRecord): Promise<boolean>;
  /**
   * OPTIONAL (without it records never expire: the services then keep answering a key with its
   * first outcome forever, as before expiry existed). Deletes records whose `created_at` is before
   * `query.created_before` (ms), oldest first, at most `query.limit` (≥ 1) of them; with
   * `query.scope`, only that scope's record. Returns how many it deleted. MUST NOT delete a record
   * created at or after `created_before`, nor (with `scope`) one of another scope; MUST be safe
   * concurrently with inserts and with itself (a record is deleted at most once; a record inserted
   * meanwhile stays). After it, the scope of a deleted record is free: `insertIdempotencyRecord`
   * for it returns true. Inside a transaction, a rollback restores what it deleted.
   * Retention: platform.md "Retention".
   */
  sweepIdempotencyRecords?(query: { created_before: number; scope?: IdempotencyScope; limit: number }): Promise<number>;
}
