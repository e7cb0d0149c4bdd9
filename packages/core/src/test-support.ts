/**
 * Helpers shared by the core's unit tests (not exported from the package): content and
 * request-context builders, a condition poller with a deadline, and catchers of the error code a
 * call throws or a promise rejects with.
 */
import type { RequestContext } from './context.js';
import { InboxKitError } from './errors.js';
import type { ContentBlock } from './live-inbox/index.js';

/** One text block. */
export const text = (t: string): ContentBlock[] => [{ type: 'text', text: t }];

/** A standard-key caller acting as `account_id` in `workspace_id`. */
export const ctxOf = (workspace_id: string, account_id: string): RequestContext => ({
  principal: { workspace_id, account_id, key_id: `key_${account_id}`, key_kind: 'standard' },
  request_id: `req_${account_id}`,
});

/** Polls `probe` until it returns a truthy value; throws after `ms` (default 5,000 ms). */
export async function waitFor<T>(probe: () => T | Promise<T>, what = 'condition', ms = 5_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** The InboxKitError `promise` rejects with; throws when it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<InboxKitError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof InboxKitError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

/** The InboxKitError code `fn` throws, or undefined when it returns; any other error is rethrown. */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    if (error instanceof InboxKitError) return error.code;
    throw error;
  }
}
