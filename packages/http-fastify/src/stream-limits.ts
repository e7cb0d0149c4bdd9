/**
 * A cap on the event streams one caller holds open at once (platform.md "Per-caller bounds"):
 * counted per server with the contract's `createStreamSlots`, per API key and acting account. Past
 * the cap a new stream is refused with 429 `too_many_streams` in the envelope before anything is
 * subscribed; closing a stream gives its slot back.
 */
import { createStreamSlots, DEFAULT_MAX_STREAMS_PER_CALLER, type StreamSlots } from '@inbox-kit/core/http';
import type { FastifyRequest } from 'fastify';

export { DEFAULT_MAX_STREAMS_PER_CALLER };

const slotsByServer = new WeakMap<object, StreamSlots>();

/**
 * Takes one stream slot for the request's caller on its server, or throws.
 * @returns the release function (idempotent).
 * @throws InboxKitError `too_many_streams` (429) when the caller already holds `max` streams.
 */
export function claimStreamSlot(request: FastifyRequest, max: number): () => void {
  let slots = slotsByServer.get(request.server.server);
  if (slots === undefined) slotsByServer.set(request.server.server, (slots = createStreamSlots()));
  return slots.claim(request.principal, max);
}
