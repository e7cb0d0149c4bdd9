/**
 * How a Run's end is recorded: the error result every tool use left without one gets, by outcome,
 * and what a failed Run records on its `session.status_idle` event (`content.error`) — a model's
 * own error, a leftover's reason, or a fixed `api_error` that shows no internal detail. Spec:
 * live-inbox.md ("Model", "Tools and boundaries").
 */
import { isInboxKitError } from '../errors.js';
import { isModelError, isToolUseLimitError } from '../live-inbox/agent-loop.js';

/**
 * What a failed Run records on its `session.status_idle` event (`content.error`): a
 * {@link ModelError}'s own `type` and `message` (the model's words, meant for Session readers);
 * any other cause (a ledger or store failure, a model bug) as `api_error` with a fixed message, so
 * no internal detail reaches a reader. The cause itself goes to `onRunError`.
 */
export interface RunFailure {
  type: string;
  message: string;
}

/** The error result given to every tool use of a Run that ends without one, by outcome. */
export const UNANSWERED: Record<'cancelled' | 'failed' | 'completed' | 'leftover', string> = {
  cancelled: 'The Run was interrupted before this call got a result.',
  failed: 'The Run failed before this call got a result.',
  completed: 'The Run ended before this call got a result.',
  leftover: 'The Run ended before this call got a result: the process running it stopped.',
};

/**
 * What a Run ended as a leftover records (`content.error` of its `session.status_idle`): with
 * leases, its process stopped renewing its lease (died, froze or lost the database) and another
 * process ended it; without, a later start of the service found it running.
 */
export function leftoverFailure(leased: boolean): RunFailure {
  return leased
    ? { type: 'api_error', message: 'The process executing this Run stopped before the Run ended (its lease expired); another process ended the Run.' }
    : { type: 'api_error', message: 'The process executing this Run stopped before the Run ended; the Run was ended when the service started again.' };
}

/** The {@link RunFailure} a failed Run records for `error`. */
export function runFailureOf(error: unknown): RunFailure {
  if (isModelError(error)) return { type: error.type, message: error.message };
  if (isToolUseLimitError(error)) return { type: error.type, message: error.message };
  // The write gate stopped the Run's commit: its project or Session was archived meanwhile.
  if (isInboxKitError(error) && (error.code === 'project_archived' || error.code === 'session_archived')) return { type: 'invalid_request_error', message: error.message };
  return { type: 'api_error', message: 'The Run failed on an internal error.' };
}
