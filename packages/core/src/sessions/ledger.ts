/**
 * The Session ledger: a Session's committed events (`seq`-ordered history), the Floor and Page each
 * committed message writes, reading that history (pages, the SSE feed, a Run's transcript) and
 * publishing what was committed. It starts and ends nothing: the Run supervisor decides what to
 * commit and when. Spec: live-inbox.md ("Model", "HTTP", "Drain, commit, carry-over",
 * "Managed Agents compatibility"), platform.md (Floor and Page of a committed turn).
 */
import type { RequestContext, ServiceDeps } from '../context.js';
import { decodeCursor, encodeCursor, filterFingerprint } from '../cursor.js';
import type { RunLedger, TranscriptMessage } from '../live-inbox/agent-loop.js';
import { contentSchema, type ContentBlock } from '../live-inbox/content.js';
import type { Feed, FeedItem } from '../ports/feed.js';
import type { NewSessionEvent, StoreTx } from '../ports/store.js';
import type { JsonValue, Session, SessionEvent } from '../records.js';
import { parseOrThrow } from '../validation.js';
import { loadSessionAccess, writeTurn } from './access.js';
import { gateRunWrite } from '../policy/write-gate.js';
import { listSessionEventsQuery, timeBoundsOf, type ListSessionEventsInput } from './managed-agents.js';

/** Session event types the Runtime writes. */
export const SESSION_EVENT_TYPES = {
  userMessage: 'user.message',
  userInterrupt: 'user.interrupt',
  agentMessage: 'agent.message',
  running: 'session.status_running',
  idle: 'session.status_idle',
} as const;

/**
 * One page of committed Session history, in the order asked for (by `seq`). `next_page` (an opaque
 * cursor for `page`) is null on the last page.
 */
export interface SessionEventPage {
  data: SessionEvent[];
  next_page: string | null;
  has_more: boolean;
}

/** One committed message: who said it, its Run (null for durable input) and its Run-scoped id. */
export interface LedgerMessage {
  role: 'user' | 'assistant';
  run_id: string | null;
  /** `{run_id}-inbox-{n}` / `{run_id}-step-{k}` for the agent loop's commits; null for durable input. */
  message_id: string | null;
  content: ContentBlock[];
}

/** Rows read per page when the ledger scans a Session's history. */
const PAGE = 1000;

/** The Session ledger over the store; every method is safe to call concurrently. */
export class SessionLedger {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  /**
   * `GET /v1/sessions/{id}/events`: one page of committed history (see
   * `SessionRuntimeService.listEvents` for the parameters).
   * @throws InboxKitError `validation_error` (400), `invalid_cursor` (400), `session_not_found` (404).
   */
  async listEvents(ctx: RequestContext, session_id: string, input: ListSessionEventsInput = {}): Promise<SessionEventPage> {
    const query = parseOrThrow(listSessionEventsQuery, input, 'query');
    const { session } = await loadSessionAccess(this.#deps.store, ctx.principal, session_id);
    const types = query.types === undefined && query['types[]'] === undefined ? undefined : [...(query.types ?? []), ...(query['types[]'] ?? [])];
    const processed_at = timeBoundsOf(query);
    const scope = `session_events:${session.id}`;
    const fingerprint = filterFingerprint({
      order: query.order, after: query.after, types: types?.join(','),
      gt: processed_at?.gt, gte: processed_at?.gte, lt: processed_at?.lt, lte: processed_at?.lte,
    });
    let after = query.after ?? 0;
    let before: number | undefined;
    if (query.page !== undefined) {
      const position = decodeCursor(query.page, scope, fingerprint).created_at;
      if (query.order === 'asc') after = Math.max(after, position);
      else before = position;
    }
    const rows = await this.#deps.store.listSessionEvents({
      session_id: session.id, after, before, order: query.order, types, processed_at, limit: query.limit + 1,
    });
    const data = rows.slice(0, query.limit);
    const has_more = rows.length > query.limit;
    const last = data[data.length - 1];
    // In the order of the wire schema ({ data, next_page, has_more }), so the response check's same-text fast path holds.
    return { data, next_page: has_more && last !== undefined ? encodeCursor(scope, fingerprint, { created_at: last.seq, id: last.id }) : null, has_more };
  }

  /**
   * The caller's feed of the ledger for `GET /v1/sessions/{id}/events/stream` (see
   * `SessionRuntimeService.eventFeed`).
   * @throws InboxKitError `session_not_found`.
   */
  async eventFeed(ctx: RequestContext, session_id: string): Promise<Feed<SessionEvent>> {
    const { session } = await loadSessionAccess(this.#deps.store, ctx.principal, session_id);
    const sid = session.id;
    const toItem = (e: SessionEvent): FeedItem<SessionEvent> => ({ id: e.seq, type: e.type, data: e });
    return {
      replay: async (after, limit) => (await this.#deps.store.listSessionEvents({ session_id: sid, after, limit })).map(toItem),
      latest: () => this.#deps.store.lastSessionEventSeq(sid),
      authorize: async () => {
        await loadSessionAccess(this.#deps.store, ctx.principal, session_id);
      },
      subscribe: (push) => this.#deps.bus.subscribe(`session:${sid}`, (m) => {
        if (m.kind === 'session_event' && m.event.session_id === sid) push(toItem(m.event));
      }),
      visible: () => true,
    };
  }

  /**
   * Inside `tx`: writes the message's Floor and Page (Page content `{ role, message_id, event_id,
   * content }`) and returns its Session event (`user.message` or `agent.message`), to append.
   * Takes the event id, then the Floor's and the Page's, from the id generator.
   */
  async message(tx: StoreTx, session: Session, m: LedgerMessage, now: number): Promise<NewSessionEvent> {
    const id = this.#deps.ids.next('sevt');
    const { floor, page } = await writeTurn(tx, this.#deps, session, pageContent(m.role, m.message_id, id, m.content));
    return {
      id, session_id: session.id, type: m.role === 'user' ? SESSION_EVENT_TYPES.userMessage : SESSION_EVENT_TYPES.agentMessage,
      run_id: m.run_id, message_id: m.message_id, content: m.content as unknown as JsonValue, floor_id: floor.id, page_id: page.id,
      processed_at: now,
    };
  }

  /** A `user.interrupt` event of `run_id` (null: no Run was running). */
  interrupt(session_id: string, run_id: string | null, now: number): NewSessionEvent {
    return this.#status(session_id, SESSION_EVENT_TYPES.userInterrupt, run_id, null, now);
  }

  /** The `session.status_running` event that opens a Run. */
  running(session_id: string, run_id: string, now: number): NewSessionEvent {
    return this.#status(session_id, SESSION_EVENT_TYPES.running, run_id, null, now);
  }

  /** The `session.status_idle` event that closes a Run: `content: { outcome, error? }`. */
  idle(session_id: string, run_id: string, outcome: string, now: number, error?: { type: string; message: string }): NewSessionEvent {
    const content: JsonValue = error === undefined ? { outcome } : { outcome, error: { type: error.type, message: error.message } };
    return this.#status(session_id, SESSION_EVENT_TYPES.idle, run_id, content, now);
  }

  /**
   * Publishes committed events on the bus (`session:<id>`); a publish failure goes to
   * `onPublishError` and never undoes the write.
   */
  publish(events: SessionEvent[]): void {
    for (const event of events) {
      try {
        this.#deps.bus.publish({ kind: 'session_event', event });
      } catch (error) {
        this.#deps.onPublishError?.(error);
      }
    }
  }

  /**
   * The transcript a Run starts from: every `user.message` and `agent.message` with `seq ≤ upTo`,
   * oldest first. Ids: the Run-scoped `message_id`, or the event id for durable input.
   */
  async transcript(session_id: string, upTo: number): Promise<TranscriptMessage[]> {
    const out: TranscriptMessage[] = [];
    let after = 0;
    for (;;) {
      const rows = await this.#deps.store.listSessionEvents({ session_id, after, limit: PAGE });
      for (const e of rows) {
        if (e.seq > upTo) return out;
        const role = e.type === SESSION_EVENT_TYPES.userMessage ? 'user' : e.type === SESSION_EVENT_TYPES.agentMessage ? 'assistant' : undefined;
        if (role === undefined) continue;
        const content = contentSchema.safeParse(e.content);
        if (content.success) out.push({ id: e.message_id ?? e.id, role, content: content.data });
      }
      const last = rows[rows.length - 1];
      if (rows.length < PAGE || last === undefined) return out;
      after = last.seq;
    }
  }

  /**
   * Inside `tx`: whether durable `user.message` input was committed after `startSeq` and after the
   * last `user.interrupt` since — input a Run that started at `startSeq` never saw.
   */
  async hasDurableInputAfter(tx: StoreTx, session_id: string, startSeq: number): Promise<boolean> {
    let after = startSeq;
    let durableAfterInterrupt = false;
    for (;;) {
      const rows = await tx.listSessionEvents({ session_id, after, limit: PAGE });
      for (const e of rows) {
        if (e.type === SESSION_EVENT_TYPES.userInterrupt) durableAfterInterrupt = false;
        else if (e.type === SESSION_EVENT_TYPES.userMessage && e.message_id === null) durableAfterInterrupt = true;
      }
      const last = rows[rows.length - 1];
      if (rows.length < PAGE || last === undefined) return durableAfterInterrupt;
      after = last.seq;
    }
  }

  /**
   * The ledger as the agent loop commits to it for a Run of `session`: one transaction per commit,
   * one Floor, Page and Session event per message (`user.message` for drained inbox input,
   * `agent.message` for a step), published after commit. Through the write gate (`run.commit`):
   * a commit whose Run is no longer `running` commits nothing and rejects with `conflict`; one
   * whose project or Session was archived, with `project_archived` / `session_archived`.
   */
  runLedger(session: Session): RunLedger {
    return {
      commit: async ({ run_id, messages }) => {
        const events = await this.#deps.store.transaction(async (tx) => {
          // The write gate, under the Session's lock: a drain racing the Run's end (a leftover
          // ended by another process, a recovery at start-up) or an archive commits nothing; the
          // attempt then fails and its drained input moves to the Session's next attempt.
          await gateRunWrite(tx, session, 'run.commit', run_id);
          const now = this.#deps.clock.now();
          const rows: NewSessionEvent[] = [];
          for (const m of messages) rows.push(await this.message(tx, session, { role: m.role, run_id, message_id: m.id, content: m.content }, now));
          return tx.appendSessionEvents(rows);
        });
        this.publish(events);
      },
    };
  }

  #status(session_id: string, type: string, run_id: string | null, content: JsonValue, now: number): NewSessionEvent {
    return { id: this.#deps.ids.next('sevt'), session_id, type, run_id, message_id: null, content, floor_id: null, page_id: null, processed_at: now };
  }
}

/** The Page content of one committed message. */
function pageContent(role: 'user' | 'assistant', message_id: string | null, event_id: string, content: ContentBlock[]): JsonValue {
  return { role, message_id, event_id, content: content as unknown as JsonValue };
}
