/**
 * The event bus: how committed Project Events and Session ledger entries reach live subscribers.
 * Publishing happens only after commit; a publish failure never undoes the write (platform.md
 * "Project Events", project-inbox.md "Project Events and Operation Log").
 */
import type { ProjectEvent, SessionEvent } from '../records.js';

export type BusMessage =
  | { kind: 'project_event'; event: ProjectEvent }
  | { kind: 'session_event'; event: SessionEvent };

export type BusListener = (message: BusMessage) => void;

export interface EventBus {
  /** Delivers to every subscriber of the topic, in call order. MUST NOT throw to the publisher. */
  publish(message: BusMessage): void;
  /** Topic: `project:<id>` or `session:<id>`. Returns an idempotent unsubscribe. */
  subscribe(topic: string, listener: BusListener): () => void;
  /** Number of live subscriptions (all topics); for leak checks. */
  subscriberCount(): number;
}

/** The topic a message is published on. */
export function topicOf(message: BusMessage): string {
  return message.kind === 'project_event' ? `project:${message.event.project_id}` : `session:${message.event.session_id}`;
}

/**
 * The in-process bus. A listener that throws is reported to `onError` and never stops delivery
 * to the others.
 */
export function createLocalEventBus(onError: (error: unknown) => void = () => {}): EventBus {
  const topics = new Map<string, Set<BusListener>>();
  let count = 0;
  return {
    publish(message) {
      const listeners = topics.get(topicOf(message));
      if (!listeners) return;
      for (const listener of [...listeners]) {
        try {
          listener(message);
        } catch (error) {
          onError(error);
        }
      }
    },
    subscribe(topic, listener) {
      let set = topics.get(topic);
      if (!set) topics.set(topic, (set = new Set()));
      const wrapped: BusListener = (m) => listener(m);
      set.add(wrapped);
      count++;
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        count--;
        set.delete(wrapped);
        if (set.size === 0) topics.delete(topic);
      };
    },
    subscriberCount: () => count,
  };
}
