/**
 * Host authentication (platform.md "Embedding: the host's own authentication"): an adapter's
 * `authenticate(request) → principal | null` option replaces inbox-kit's API-key check with the
 * host's own, and both adapters answer it alike through {@link authenticateWithHost}.
 */
import { z } from 'zod';
import type { Principal } from '../context.js';
import { InboxKitError } from '../errors.js';
import { apiKeyKindSchema } from '../schemas/records.js';

/**
 * The host's authentication of one request (`request` is the adapter's own: a `FastifyRequest`, a
 * Hono `Context`): the caller as a {@link Principal}, or `null` (or `undefined`) when the request
 * is not authenticated. An `InboxKitError` it throws answers as that error (e.g.
 * `invalid_credentials`: 401, `permission_denied`: 403); anything else it throws is a 500 `internal_error`
 * (the error reported, never shown).
 */
export type HostAuthenticate<R> = (request: R) => Principal | null | undefined | Promise<Principal | null | undefined>;

const principalSchema = z.object({
  workspace_id: z.string().min(1),
  account_id: z.string().min(1),
  key_id: z.string().min(1),
  key_kind: apiKeyKindSchema,
});

/** What a host's `authenticate` answered when it is not a {@link Principal}: a bug of the host (answered 500). */
export class HostPrincipalError extends TypeError {
  override readonly name = 'HostPrincipalError';
}

/**
 * Runs the host's `authenticate` on `request` and checks its answer.
 * @returns a copy of the principal (`{ workspace_id, account_id, key_id, key_kind }`, nothing else).
 * @throws InboxKitError `authentication_required` (401) when it answers `null` or `undefined`;
 *   the `InboxKitError` it threw, unchanged; {@link HostPrincipalError} (500) when its answer is
 *   not a principal; any other error it threw, unchanged (500 through `envelopeOf`).
 */
export async function authenticateWithHost<R>(authenticate: HostAuthenticate<R>, request: R): Promise<Principal> {
  // What it throws passes unchanged: an InboxKitError answers as itself, anything else is a 500.
  const answer: unknown = await authenticate(request);
  if (answer === null || answer === undefined) throw new InboxKitError('authentication_required', 'This request is not authenticated');
  const parsed = principalSchema.safeParse(answer);
  if (!parsed.success) {
    throw new HostPrincipalError(`authenticate answered no principal ({ workspace_id, account_id, key_id, key_kind }): ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  return { ...parsed.data };
}

/**
 * True when `again` (a stream's re-authentication before a delivery) is still the caller the
 * stream was opened for: same account in the same workspace.
 */
export function samePrincipal(first: Principal | null | undefined, again: Principal | null | undefined): boolean {
  return first != null && again != null && first.account_id === again.account_id && first.workspace_id === again.workspace_id;
}
