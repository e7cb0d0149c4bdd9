/**
 * Opening an attempt of a Run: the transcript it starts from (a resumed Run: up to its start plus
 * its own commits, its open tool round left open), its Live Inbox bridge, the tools and options of
 * the Session's agent, the ledger it commits to (with `park` when the store can keep a Run
 * awaiting), and its first boundary. Spec: live-inbox.md ("Run executors", "Tools and boundaries").
 */
import { InboxKitError } from '../errors.js';
import { LiveInboxBridge, type RunLedger, type RunLedgerPark, type RunLedgerParkOutcome, type TranscriptMessage } from '../live-inbox/bridge.js';
import type { OpenRound, Tool, ToolUseResolution } from '../live-inbox/tools.js';
import { gateRunWrite } from '../policy/write-gate.js';
import type { NewSessionEvent } from '../ports/store.js';
import type { Run, Session, SessionEvent } from '../records.js';
import type { AttemptLeases } from './attempt-leases.js';
import type { RunAttempt, RunExecutor } from './executor.js';
import type { SessionLedger } from './ledger.js';
import { clientToolsOf, isRuntimeAgent, systemOf, type RunOptions } from './managed-agents.js';
import type { RunSupervisorDeps } from './run-supervisor.js';

/** The Run an attempt is opened for. */
export interface AttemptOf {
  run: Run;
  session: Session;
  /** `seq` of the Run's first `session.status_running` event. */
  startSeq: number;
  /** True when the attempt resumes a Run that parked on client tool results or confirmations. */
  resume: boolean;
}

/** Opens the attempts of the Runs a {@link RunSupervisor} executes or hands to an application. */
export class RunAttempts {
  constructor(
    readonly deps: RunSupervisorDeps, readonly ledger: SessionLedger, readonly leases: AttemptLeases,
  ) {}

  /**
   * Opens the attempt's bridge and — unless it resumes a parked round — takes its first boundary
   * (live-inbox.md "Tools and boundaries" 1): the Session's carry-over is drained and committed, so
   * the transcript handed to the executor ends with the Run's new input whoever executes it.
   */
  async open(active: AttemptOf, executor: RunExecutor | undefined, signal: AbortSignal): Promise<RunAttempt> {
    const { run, session } = active;
    const { transcript, resume } = await this.#input(active);
    const ledger = this.#runLedger(session);
    const bridge = LiveInboxBridge.open({
      host: this.deps.host, ledger, session_id: session.id, run_id: run.id, transcript, executor: executor?.kind === 'native' ? 'native' : 'framework',
    });
    const { tools, ...options } = this.#runConfig(session);
    const attempt: RunAttempt = {
      session, session_id: session.id, run_id: run.id, transcript, bridge, signal, tools, options, ledger,
      ...(resume ? { resume } : {}), ...(systemOf(session.agent) !== undefined ? { system: systemOf(session.agent)! } : {}),
    };
    if (resume === undefined) {
      try {
        attempt.transcript.push(...(await bridge.commit(bridge.drain())));
      } catch (error) {
        bridge.close();
        throw error;
      }
    }
    return attempt;
  }

  /** The tools and options of a Run of `session`: its agent's (see `SessionRuntimeDeps.agents`), else the Runtime's. */
  #runConfig(session: Session): { tools: Tool[] } & RunOptions {
    const defaults = this.deps.runDefaults ?? {};
    const snapshot = session.agent;
    // No agent named (`POST /sessions`): the Runtime's own tools.
    if (snapshot === null || typeof snapshot !== 'object' || Array.isArray(snapshot) || isRuntimeAgent(snapshot)) return { ...defaults, tools: [...(this.deps.tools ?? [])] };
    const configured = this.deps.agents?.find((a) => a.id === snapshot.id);
    const host = (configured?.tools ?? []).filter((t) => t.execute !== undefined);
    return { ...defaults, ...(configured?.run ?? {}), tools: [...host, ...clientToolsOf(snapshot)] };
  }

  /** The ledger the loop commits to for `session`, with `park` when the store can keep a Run awaiting. */
  #runLedger(session: Session): RunLedger {
    const base = this.ledger.runLedger(session);
    if (this.deps.store.updateRunStatus === undefined || this.deps.store.getAwaitingRun === undefined) return base;
    return { commit: base.commit, park: (input) => this.#park(session, input) };
  }

  /**
   * `RunLedger.park` for a Run of `session` (live-inbox.md "Tools and boundaries"): in one
   * transaction under the Session's lock, conditional on the Run still running — when the client
   * already answered every pending tool use, nothing is written and the answers are returned; else
   * the ready results are committed, the Run goes `awaiting` and `session.status_idle` with
   * `stop_reason: { type: 'requires_action', event_ids }` (the ids still pending) is appended.
   */
  async #park(session: Session, input: RunLedgerPark): Promise<RunLedgerParkOutcome> {
    const { events, outcome } = await this.deps.store.transaction(async (tx) => {
      // The write gate (\`run.commit\`, under the Session's lock): only a Run still running parks,
      // and not in an archived project or Session (the attempt then fails, like any refused commit).
      await gateRunWrite(tx, session, 'run.commit', input.run_id);
      const round = await this.ledger.lastRound(tx, session.id, input.run_id);
      const resolutions: Record<string, ToolUseResolution> = {};
      for (const id of input.pending) {
        const resolution = round?.tool_uses.find((u) => u.block.id === id)?.resolution;
        if (resolution !== undefined) resolutions[id] = resolution;
      }
      const waiting = input.pending.filter((id) => resolutions[id] === undefined);
      if (waiting.length === 0) return { events: [] as SessionEvent[], outcome: { parked: false as const, resolutions } };
      const now = this.deps.clock.now();
      const rows: NewSessionEvent[] = input.results.content.length === 0 ? [] : await this.ledger.turn(tx, session, input.run_id, input.results, {}, now);
      if (!(await tx.updateRunStatus!(input.run_id, 'running', { status: 'awaiting' }))) {
        throw new InboxKitError('conflict', `Run ${input.run_id} is no longer running`);
      }
      rows.push(this.ledger.idle(session.id, input.run_id, null, now, undefined, { type: 'requires_action', event_ids: waiting }));
      // Executed by nobody now: the process that resumes it claims the lease anew.
      await this.leases.releaseForRun(tx, session.id, input.run_id);
      return { events: await tx.appendSessionEvents(rows), outcome: { parked: true as const } };
    });
    this.ledger.publish(events);
    return outcome;
  }

  /**
   * The transcript a Run's attempt starts from (resumed: up to its start plus its own commits, its
   * open round left open), and that round.
   */
  async #input(active: AttemptOf): Promise<{ transcript: TranscriptMessage[]; resume: OpenRound | undefined }> {
    const { run, session } = active;
    let resume: OpenRound | undefined;
    if (active.resume) {
      const round = await this.ledger.lastRound(this.deps.store, session.id, run.id);
      if (round !== undefined && !round.complete) resume = { step_id: round.step_id, tool_uses: round.tool_uses };
    }
    const transcript = active.resume
      ? await this.ledger.transcript(session.id, active.startSeq, { run_id: run.id, ...(resume ? { open: resume.step_id } : {}) })
      : await this.ledger.transcript(session.id, active.startSeq);
    return { transcript, resume };
  }
}
