/**
 * A cap on the event streams one caller holds open at once (platform.md "Per-caller bounds"):
 * counted per server, per API key and acting account (a service key acting as several accounts
 * gets a budget per account). Past the cap a new stream is refused with 429 `too_many_streams`
 * in the envelope before anything is subscribed; closing a stream gives its slot back.
 */
import { InboxKitError } from '@inbox-kit/core';
import type { FastifyRequest } from 'fastify';

/** Default number of event streams one API key (per acting account) may hold open on one server: 16. */
export const DEFAULT_MAX_STREAMS_PER_CALLER = 16;

const counts = new WeakMap<object, Map<string, number>>();

/**
 * Takes one stream slot for the request's caller, or throws.
 * @param max streams allowed per caller (integer ≥ 1).
 * @returns the release function (idempotent) that gives the slot back.
 * @throws InboxKitError `too_many_streams` (429) when the caller already holds `max` streams.
 */
export function claimStreamSlot(request: FastifyRequest, max: number): () => void {
  const principal = request.principal;
  if (principal === null || principal === undefined) return () => {};
  let byCaller = counts.get(request.server.server);
  if (byCaller === undefined) {
    byCaller = new Map();
    counts.set(request.server.server, byCaller);
  }
  const caller = `${principal.key_id}\n${principal.account_id}`;
  const held = byCaller.get(caller) ?? 0;
  if (held >= max) {
    throw new InboxKitError('too_many_streams', `This API key already holds ${max} open event streams; close one before opening another`);
  }
  byCaller.set(caller, held + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const now = (byCaller.get(caller) ?? 1) - 1;
    if (now <= 0) byCaller.delete(caller);
    else byCaller.set(caller, now);
  };
}
