/**
 * What the Session Runtime is built from ({@link SessionRuntimeService}'s dependencies): the
 * common service ports, the process's Live Inbox host, who executes Runs (the native loop on a
 * `Model`, or an application's executor), the configured agents, tools and Run options, the
 * observers of Run errors and ends, leftover recovery and cross-process attempt routing.
 * Spec: live-inbox.md ("Run executors", "Tools and boundaries", "Scale (we go further)").
 */
import type { ServiceDeps } from '../context.js';
import type { Model } from '../live-inbox/agent-loop.js';
import type { LiveInboxHost } from '../live-inbox/registry.js';
import type { Tool } from '../live-inbox/tools.js';
import type { RunExecutor } from './executor.js';
import type { ManagedAgentDefinition, RunOptions } from './managed-agents.js';
import type { AttemptRoutingOptions } from './routing.js';

/** Dependencies of {@link SessionRuntimeService}. */
export type SessionRuntimeDeps = ServiceDeps & {
  /** The process's attempt registry; owns every Live Inbox. */
  host: LiveInboxHost;
  /**
   * The model of the native executor. With it (and no `executor`), durable input starts Runs that
   * the native agent loop executes. Optional: an application that executes its Runs on its own loop
   * gives `executor`, or neither and starts its Runs with {@link SessionRuntimeService.startRun}.
   */
  model?: Model;
  /**
   * Who executes the Runs durable input starts, and their follow-ups (see {@link RunExecutor};
   * default the native executor on `model`). Without `executor` and `model`, durable input is
   * committed and starts no Run: the application starts Runs itself ({@link SessionRuntimeService.startRun}).
   */
  executor?: RunExecutor;
  /**
   * The deployment's configured agents (ids unique; `ManagedSessionsService` takes them from here
   * when not given its own): a Run of a Session created with one of them gets its host tools
   * (with `execute`, run by the Runtime), the client tools of the Session's agent snapshot, and
   * its `run` options. Spec: live-inbox.md "Tools and boundaries".
   */
  agents?: readonly ManagedAgentDefinition[];
  /** The tools of Runs of Sessions created without an agent (`POST /sessions`); default none. */
  tools?: readonly Tool[];
  /** Run options every agent's Runs start from (`drain`, `maxToolRounds`, `toolConcurrency`, `toolTimeoutMs`). */
  runDefaults?: RunOptions;
  /** Told when a background Run fails (model or ledger error) or its bookkeeping fails. */
  onRunError?: (error: unknown, info: { session_id: string; run_id: string }) => void;
  /**
   * Told when a Run this process executes stops executing: ended (`completed`, `cancelled`,
   * `failed`, committed) or parked `awaiting` client tool results or confirmations (for metrics;
   * platform.md "Observing"). Must not throw (a throw is ignored).
   */
  onRunEnded?: (info: { session_id: string; run_id: string; outcome: 'completed' | 'cancelled' | 'failed' | 'awaiting' }) => void;
  /**
   * End Runs left `running` by an earlier process (default true): a Run this instance does not
   * execute and that started at or before this instance was built is ended `failed` when durable
   * input next reaches its Session, or when {@link SessionRuntimeService.recoverStaleRuns} is
   * called (false makes that call a no-op). With `routing`, a Run whose attempt holds a live ownership
   * lease is never ended by another process; without it, set false when several processes share
   * one database, so one process never ends another's live Run.
   */
  recoverStaleRuns?: boolean;
  /**
   * Cross-process attempt routing (live-inbox.md "Scale"), off when absent: every native attempt
   * records its ownership of the Session in storage under a renewed lease, and
   * {@link SessionRuntimeService.routeLiveInbox} forwards requests to the owning process.
   */
  routing?: AttemptRoutingOptions;
};
