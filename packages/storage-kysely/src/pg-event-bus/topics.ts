/**
 * Delivery bookkeeping of the PostgreSQL event bus (see `../pg-event-bus.ts`): per subscribed
 * topic, which sequences were delivered here (a watermark plus the few above it), so each event
 * reaches this process's subscribers once even when a local publish and a read from storage race;
 * and the reads from storage that deliver a topic's committed events after its watermark — after
 * another process's notification, to fill a hole, and after a (re)connection of the listener.
 */
import type { Kysely } from 'kysely';
import { topicOf, type BusMessage, type EventBus, type Store } from '@inbox-kit/core';
import type { Database } from '../schema.js';

/** What the bus knows about one subscribed topic. */
export interface TopicState {
  subscribers: number;
  /** Every sequence ≤ watermark was delivered here; undefined until the first event is seen. */
  watermark: number | undefined;
  /** Sequences above the watermark that were delivered (a local publish that overtook others). */
  above: Set<number>;
  /** A read from storage is running. */
  fetching: boolean;
  /** Another read was asked for while one ran. */
  again: boolean;
}

const positionOf = (message: BusMessage): number => (message.kind === 'project_event' ? message.event.sequence : message.event.seq);

/** Options of {@link TopicDelivery}. */
export interface TopicDeliveryOptions {
  /** The in-process bus that delivers to subscribers. */
  local: EventBus;
  store: Pick<Store, 'listProjectEvents' | 'listSessionEvents'>;
  db: Kysely<Database>;
  /** Events read from storage per query. */
  pageSize: number;
  /** Delay floor (ms) of a retried read after a storage failure. */
  retryMinMs: number;
  onError: (error: unknown) => void;
  isClosed: () => boolean;
}

/** The subscribed topics of one bus and the delivery of their events to this process. */
export class TopicDelivery {
  readonly topics = new Map<string, TopicState>();
  readonly #retryTimers = new Set<NodeJS.Timeout>();

  constructor(readonly options: TopicDeliveryOptions) {}

  /** Counts a subscriber of `topic`; the returned function uncounts it (once). */
  track(topic: string): () => void {
    let state = this.topics.get(topic);
    if (!state) this.topics.set(topic, (state = { subscribers: 0, watermark: undefined, above: new Set(), fetching: false, again: false }));
    state.subscribers += 1;
    const mine = state;
    return () => {
      mine.subscribers -= 1;
      if (mine.subscribers === 0 && this.topics.get(topic) === mine) this.topics.delete(topic);
    };
  }

  /** Whether `position` of the topic was delivered here. */
  delivered(state: TopicState, position: number): boolean {
    return state.watermark !== undefined && (position <= state.watermark || state.above.has(position));
  }

  #markDelivered(state: TopicState, position: number): void {
    if (state.watermark === undefined) state.watermark = position - 1;
    if (position <= state.watermark) return;
    state.above.add(position);
    while (state.above.delete(state.watermark + 1)) state.watermark += 1;
  }

  /** Delivers a message to this process's subscribers unless it was delivered already. */
  deliver(message: BusMessage): void {
    const state = this.topics.get(topicOf(message));
    if (state) {
      const position = positionOf(message);
      if (this.delivered(state, position)) return;
      this.#markDelivered(state, position);
    }
    this.options.local.publish(message);
  }

  /** After a local publish: a sequence above the watermark with a hole below it makes the topic read storage to fill the hole. */
  fillHoles(message: BusMessage): void {
    const topic = topicOf(message);
    const state = this.topics.get(topic);
    if (state && state.above.size > 0) this.fetch(topic, state);
  }

  /** Another process committed `position` in `topic`: read it from storage unless it was delivered here. */
  notified(topic: string, position: number): void {
    const state = this.topics.get(topic);
    if (!state) return; // nobody here listens to it
    if (state.watermark === undefined) state.watermark = position - 1;
    if (this.delivered(state, position)) return;
    this.fetch(topic, state);
  }

  async #readAfter(topic: string, after: number): Promise<BusMessage[]> {
    const { store, pageSize } = this.options;
    if (topic.startsWith('project:')) {
      const events = await store.listProjectEvents({ project_id: topic.slice('project:'.length), after, limit: pageSize });
      return events.map((event) => ({ kind: 'project_event', event }));
    }
    const events = await store.listSessionEvents({ session_id: topic.slice('session:'.length), after, limit: pageSize });
    return events.map((event) => ({ kind: 'session_event', event }));
  }

  /** The highest sequence allocated in a topic (the counter on its parent row; 0 when none). */
  async #latestPosition(topic: string): Promise<number> {
    const { db } = this.options;
    const row = topic.startsWith('project:')
      ? await db.selectFrom('projects').select('event_sequence as n').where('id', '=', topic.slice('project:'.length)).executeTakeFirst()
      : await db.selectFrom('sessions').select('event_seq as n').where('id', '=', topic.slice('session:'.length)).executeTakeFirst();
    return row ? Number(row.n) : 0;
  }

  /**
   * Reads and delivers the topic's committed events after its watermark until storage has no more.
   * One read per topic at a time; a request during a read makes it read again afterwards.
   */
  fetch(topic: string, state: TopicState): void {
    const { isClosed, pageSize, onError, retryMinMs } = this.options;
    if (isClosed()) return;
    if (state.fetching) {
      state.again = true;
      return;
    }
    state.fetching = true;
    void (async () => {
      try {
        do {
          state.again = false;
          for (;;) {
            if (isClosed() || this.topics.get(topic) !== state || state.watermark === undefined) return;
            const messages = await this.#readAfter(topic, state.watermark);
            if (isClosed() || this.topics.get(topic) !== state) return;
            for (const message of messages) this.deliver(message);
            if (messages.length < pageSize) break;
          }
        } while (state.again);
      } catch (error) {
        onError(error);
        // Storage hiccup: try again later (a reconnect resyncs too).
        const timer = setTimeout(() => {
          this.#retryTimers.delete(timer);
          if (this.topics.get(topic) === state) this.fetch(topic, state);
        }, Math.max(retryMinMs, 500));
        timer.unref?.();
        this.#retryTimers.add(timer);
      } finally {
        state.fetching = false;
      }
    })();
  }

  /** After a (re)connection: read every subscribed topic from storage, so nothing sent meanwhile is lost. */
  async resync(): Promise<void> {
    for (const [topic, state] of [...this.topics]) {
      try {
        if (state.watermark === undefined) {
          const latest = await this.#latestPosition(topic);
          if (latest === 0 || this.topics.get(topic) !== state) continue;
          if (state.watermark === undefined) state.watermark = latest - 1;
        }
        this.fetch(topic, state);
      } catch (error) {
        this.options.onError(error);
      }
    }
  }

  /** Cancels the retried reads (at close). */
  stop(): void {
    for (const timer of this.#retryTimers) clearTimeout(timer);
    this.#retryTimers.clear();
  }
}
