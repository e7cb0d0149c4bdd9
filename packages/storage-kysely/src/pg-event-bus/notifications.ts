/**
 * The notifications of the PostgreSQL event bus (see `../pg-event-bus.ts`): their small JSON body
 * (`{ origin, kind, project_id | session_id, sequence | seq, id }`, never the event itself: a
 * NOTIFY payload is limited to 8000 bytes), its parser, and the outbox that sends everything
 * published in one tick as one `pg_notify` statement, in publish order.
 */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { BusMessage } from '@inbox-kit/core';
import type { Database } from '../schema.js';

/** The JSON body of a notification (at most a few hundred bytes: ids are ≤ 128 characters). */
export type EventNotification =
  | { origin: string; kind: 'project_event'; project_id: string; sequence: number; id: string }
  | { origin: string; kind: 'session_event'; session_id: string; seq: number; id: string };

/** Builds the notification of a message. */
export function notificationOf(origin: string, message: BusMessage): EventNotification {
  return message.kind === 'project_event'
    ? { origin, kind: 'project_event', project_id: message.event.project_id, sequence: message.event.sequence, id: message.event.id }
    : { origin, kind: 'session_event', session_id: message.event.session_id, seq: message.event.seq, id: message.event.id };
}

/** Parses a notification; `undefined` when it is not one of ours. */
export function parseNotification(payload: string | undefined): EventNotification | undefined {
  if (payload === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.origin !== 'string' || typeof v.id !== 'string') return undefined;
  if (v.kind === 'project_event' && typeof v.project_id === 'string' && Number.isSafeInteger(v.sequence)) return v as EventNotification;
  if (v.kind === 'session_event' && typeof v.session_id === 'string' && Number.isSafeInteger(v.seq)) return v as EventNotification;
  return undefined;
}

/** Sends the notifications of published messages on `channel` through `db`, batched per tick. */
export class NotificationOutbox {
  #outbox: string[] | undefined;
  #sending: Promise<void> = Promise.resolve();

  constructor(
    readonly db: Kysely<Database>, readonly channel: string, readonly origin: string,
    readonly onError: (error: unknown) => void, readonly isClosed: () => boolean,
  ) {}

  /** Queues the notification of `message`; everything queued in the same tick goes out in one statement. */
  notify(message: BusMessage): void {
    const payload = JSON.stringify(notificationOf(this.origin, message));
    if (this.#outbox) {
      this.#outbox.push(payload);
      return;
    }
    this.#outbox = [payload];
    this.#sending = this.#sending.then(() => {
      const payloads = this.#outbox ?? [];
      this.#outbox = undefined;
      return this.#send(payloads, true);
    });
  }

  /** Resolves once every queued notification was sent (or failed); never rejects. */
  async flushed(): Promise<void> {
    await this.#sending.catch(() => undefined);
  }

  /** One statement for `payloads`; a failure is reported and, with `retry`, tried once more. */
  async #send(payloads: string[], retry: boolean): Promise<void> {
    try {
      await sql`select pg_notify(${this.channel}, p) from unnest(${payloads}::text[]) as t(p)`.execute(this.db);
    } catch (error) {
      this.onError(error);
      if (retry && !this.isClosed()) await this.#send(payloads, false);
    }
  }
}
