/**
 * The Session ledger: a Session's committed events (`seq`-ordered history), the Floor and Page each
 * committed message writes, reading that history (pages, the SSE feed, a Run's transcript) and
 * publishing what was committed. It starts and ends nothing: the Run supervisor decides what to
 * commit and when. Spec: live-inbox.md ("Model", "HTTP", "Drain, commit, carry-over",
 * "Managed Agents compatibility"), platform.md (Floor and Page of a committed turn).
 */
import type { RequestContext, ServiceDeps } from '../context.js';
import { decodeCursor, encodeCursor, filterFingerprint } from '../cursor.js';
import type { RunLedger, RunLedgerCommitExtras, TranscriptMessage } from '../live-inbox/bridge.js';
import type { ContentBlock } from '../live-inbox/content.js';
import { toolResultsMessageId, type ToolResultBlock, type ToolUseBlock } from '../live-inbox/tools.js';
import type { Feed, FeedItem } from '../ports/feed.js';
import type { NewSessionEvent, StoreTx } from '../ports/store.js';
import type { JsonValue, Session, SessionEvent } from '../records.js';
import { parseOrThrow } from '../validation.js';
import { loadSessionAccess, writeTurn } from './access.js';
import { gateRunWrite } from '../policy/write-gate.js';
import { listSessionEventsQuery, timeBoundsOf, type ListSessionEventsInput } from './managed-agents.js';
import { TOOL_EVENT_TYPES, TranscriptBuilder, lastRound, toolResultContent, toolUseContent, type LedgerRound } from './tool-rounds.js';

/** Session event types the Runtime writes. */
export const SESSION_EVENT_TYPES = {
  userMessage: 'user.message',
  userInterrupt: 'user.interrupt',
  agentMessage: 'agent.message',
  running: 'session.status_running',
  idle: 'session.status_idle',
  error: 'session.error',
  agentToolUse: TOOL_EVENT_TYPES.toolUse,
  agentCustomToolUse: TOOL_EVENT_TYPES.customToolUse,
  agentToolResult: TOOL_EVENT_TYPES.toolResult,
  userCustomToolResult: TOOL_EVENT_TYPES.customToolResult,
  userToolConfirmation: TOOL_EVENT_TYPES.toolConfirmation,
} as const;

/**
 * `stop_reason` of a `session.status_idle` when the outcome alone does not say it:
 * `requires_action` (the Run parked; `event_ids` are the tool uses it waits for) or `refusal`.
 */
export type IdleStopReason = { type: 'requires_action'; event_ids: string[] } | { type: 'refusal' };

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

  /**
   * Inside `tx`: the events of one message the agent loop commits for `run_id`, with the message's
   * Floor and Page (Page content `{ role, message_id, event_id, content }`, the whole content,
   * tool blocks included): an assistant step is an `agent.message` with its text (none when it
   * has no text) and one tool-use event per `tool_use` block (the event id is the block's id;
   * `agent.tool_use` or `agent.custom_tool_use` as `extras.tool_uses` says); a user message is a
   * `user.message` with its content blocks and one `agent.tool_result` per `tool_result` block
   * whose id is not in `extras.recorded_results`.
   */
  async turn(tx: StoreTx, session: Session, run_id: string, m: TranscriptMessage, extras: RunLedgerCommitExtras, now: number): Promise<NewSessionEvent[]> {
    const content = m.content.filter((b): b is ContentBlock => b.type === 'text' || b.type === 'image');
    const uses = m.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    const recorded = new Set(extras.recorded_results ?? []);
    const results = m.content.filter((b): b is ToolResultBlock => b.type === 'tool_result' && !recorded.has(b.tool_use_id));
    if (m.role === 'user' && uses.length === 0 && results.length === 0 && m.content.length === content.length) {
      return [await this.message(tx, session, { role: 'user', run_id, message_id: m.id, content }, now)];
    }
    if (m.role === 'assistant' && uses.length === 0) {
      return [await this.message(tx, session, { role: 'assistant', run_id, message_id: m.id, content: content.filter((b) => b.type === 'text') }, now)];
    }
    const events: NewSessionEvent[] = [];
    const text = m.role === 'assistant' ? content.filter((b) => b.type === 'text') : content;
    // Results all in the ledger already (a resumed round answered by the client): nothing to write.
    if (text.length === 0 && uses.length === 0 && results.length === 0) return [];
    const first = text.length > 0 ? this.#deps.ids.next('sevt') : (uses[0]?.id ?? this.#deps.ids.next('sevt'));
    const { floor, page } = await writeTurn(tx, this.#deps, session, pageContent(m.role, m.id, first, m.content as unknown as JsonValue));
    const at = { run_id, floor_id: floor.id, page_id: page.id, processed_at: now, session_id: session.id };
    if (text.length > 0) {
      events.push({ id: first, type: m.role === 'user' ? SESSION_EVENT_TYPES.userMessage : SESSION_EVENT_TYPES.agentMessage, message_id: m.id, content: text as unknown as JsonValue, ...at });
    }
    for (const use of uses) {
      const disposition = extras.tool_uses?.[use.id] ?? { kind: 'refused', reason: 'The call was not recorded.' };
      const type = disposition.kind === 'custom' ? SESSION_EVENT_TYPES.agentCustomToolUse : SESSION_EVENT_TYPES.agentToolUse;
      events.push({ id: use.id, type, message_id: m.id, content: toolUseContent(use, disposition), ...at });
    }
    for (const result of results) {
      events.push({ id: this.#deps.ids.next('sevt'), type: SESSION_EVENT_TYPES.agentToolResult, message_id: m.id, content: toolResultContent(result), ...at });
    }
    return events;
  }

  /**
   * Inside `tx`: closes the last tool round of `run_id` — one `agent.tool_result` (`is_error`,
   * content `message`, `message_id` `{step}-results`) for every tool use without a result — so
   * every tool use of an ended Run has its result and the next Run's transcript is valid. These
   * closing results are ledger events only (no Floor or Page: nobody produced them). Nothing when
   * the round is complete (or the Run has none).
   */
  async closeRound(tx: StoreTx, session_id: string, run_id: string, message: string, now: number): Promise<NewSessionEvent[]> {
    const round = await lastRound(tx, session_id, run_id);
    if (round === undefined || round.complete) return [];
    return round.tool_uses.filter((u) => u.result === undefined).map((u): NewSessionEvent => ({
      id: this.#deps.ids.next('sevt'), session_id, type: SESSION_EVENT_TYPES.agentToolResult, run_id, message_id: toolResultsMessageId(round.step_id),
      content: toolResultContent({ type: 'tool_result', tool_use_id: u.block.id, content: [{ type: 'text', text: message }], is_error: true }),
      floor_id: null, page_id: null, processed_at: now,
    }));
  }

  /** Inside `tx` (or on the store): the last tool round of `run_id` (see `lastRound`). */
  lastRound(tx: Pick<StoreTx, 'listSessionEvents'>, session_id: string, run_id: string): Promise<LedgerRound | undefined> {
    return lastRound(tx, session_id, run_id);
  }

  /**
   * A client's answer to a pending tool use, for `run_id`: `user.custom_tool_result`
   * (`{ custom_tool_use_id, content, is_error }`) or `user.tool_confirmation` (`{ tool_use_id,
   * result, deny_message }`).
   */
  answer(session_id: string, run_id: string, type: typeof TOOL_EVENT_TYPES.customToolResult | typeof TOOL_EVENT_TYPES.toolConfirmation, content: JsonValue, now: number): NewSessionEvent {
    return this.#status(session_id, type, run_id, content, now);
  }

  /** A `session.error` of `run_id`: `content: { error: { type, message, retry_status: { type: 'exhausted' } } }`. */
  error(session_id: string, run_id: string, error: { type: string; message: string }, now: number): NewSessionEvent {
    return this.#status(session_id, SESSION_EVENT_TYPES.error, run_id, { error: { type: error.type, message: error.message, retry_status: { type: 'exhausted' } } }, now);
  }

  /** A `user.interrupt` event of `run_id` (null: no Run was running). */
  interrupt(session_id: string, run_id: string | null, now: number): NewSessionEvent {
    return this.#status(session_id, SESSION_EVENT_TYPES.userInterrupt, run_id, null, now);
  }

  /** The `session.status_running` event that opens a Run. */
  running(session_id: string, run_id: string, now: number): NewSessionEvent {
    return this.#status(session_id, SESSION_EVENT_TYPES.running, run_id, null, now);
  }

  /**
   * The `session.status_idle` event that closes a Run (`content: { outcome, error?, stop_reason? }`),
   * or — outcome null with `stop_reason: { type: 'requires_action', event_ids }` — that parks it.
   */
  idle(session_id: string, run_id: string, outcome: string | null, now: number, error?: { type: string; message: string }, stop_reason?: IdleStopReason): NewSessionEvent {
    const content: Record<string, JsonValue> = { outcome };
    if (error !== undefined) content.error = { type: error.type, message: error.message };
    if (stop_reason !== undefined) content.stop_reason = stop_reason as unknown as JsonValue;
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
   * The transcript a Run (re)starts from, oldest first: every message with `seq ≤ upTo`, plus —
   * with `run.run_id` — what that Run committed after `upTo` (its steps, drained input, tool
   * rounds; not durable input others sent meanwhile). Ids: the Run-scoped `message_id`, or the
   * event id for durable input. Tool rounds are `tool_use` blocks in the step's assistant message
   * and a user message `{step}-results` of `tool_result` blocks; the round of `run.open` (a step
   * resumed mid-round) is left without results.
   */
  async transcript(session_id: string, upTo: number, run: { run_id?: string; open?: string } = {}): Promise<TranscriptMessage[]> {
    const builder = new TranscriptBuilder();
    let after = 0;
    for (;;) {
      const rows = await this.#deps.store.listSessionEvents({ session_id, after, limit: PAGE });
      for (const e of rows) {
        if (e.seq > upTo && (run.run_id === undefined || e.run_id !== run.run_id)) {
          if (run.run_id === undefined) return builder.build(run.open);
          continue;
        }
        builder.add(e);
      }
      const last = rows[rows.length - 1];
      if (rows.length < PAGE || last === undefined) return builder.build(run.open);
      after = last.seq;
    }
  }

  /**
   * Inside `tx`: the `seq` of `run_id`'s first `session.status_running` (where its transcript
   * ends; a resumed Run has one per resumption), read backwards; 0 when there is none.
   */
  async runStartSeq(tx: Pick<StoreTx, 'listSessionEvents'>, session_id: string, run_id: string): Promise<number> {
    let first = 0;
    let before: number | undefined;
    for (;;) {
      const rows = await tx.listSessionEvents({
        session_id, after: 0, ...(before !== undefined ? { before } : {}), order: 'desc', types: [SESSION_EVENT_TYPES.running], limit: PAGE,
      });
      for (const e of rows) {
        if (e.run_id !== run_id) return first;
        first = e.seq;
      }
      const last = rows[rows.length - 1];
      if (rows.length < PAGE || last === undefined) return first;
      before = last.seq;
    }
  }

  /** Inside `tx`: the `seq` of the Session's latest `session.status_running` (0 when no Run ever started). */
  async lastRunStartSeq(tx: Pick<StoreTx, 'listSessionEvents'>, session_id: string): Promise<number> {
    const [opened] = await tx.listSessionEvents({ session_id, after: 0, order: 'desc', types: [SESSION_EVENT_TYPES.running], limit: 1 });
    return opened?.seq ?? 0;
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
   * one Floor and Page per message and its events ({@link turn}: `user.message` for drained inbox
   * input, `agent.message` and tool-use events for a step, `agent.tool_result` for a round's
   * results), published after commit. Through the write gate (`run.commit`): a commit whose Run is
   * no longer `running` commits nothing and rejects with `conflict`; one whose project or Session
   * was archived, with `project_archived` / `session_archived`.
   */
  runLedger(session: Session): RunLedger {
    return {
      commit: async ({ run_id, messages, ...extras }) => {
        const events = await this.#deps.store.transaction(async (tx) => {
          // The write gate, under the Session's lock: a drain racing the Run's end (a leftover
          // ended by another process, a recovery at start-up) or an archive commits nothing; the
          // attempt then fails and its drained input moves to the Session's next attempt.
          await gateRunWrite(tx, session, 'run.commit', run_id);
          const now = this.#deps.clock.now();
          const rows: NewSessionEvent[] = [];
          for (const m of messages) rows.push(...(await this.turn(tx, session, run_id, m, extras, now)));
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
function pageContent(role: 'user' | 'assistant', message_id: string | null, event_id: string, content: ContentBlock[] | JsonValue): JsonValue {
  return { role, message_id, event_id, content: content as unknown as JsonValue };
}
