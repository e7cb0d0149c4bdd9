// The closing line of scripts/test.mjs, from vitest's JSON report.

/**
 * The closing counts from vitest's JSON report (`null` when there is none) and vitest's exit
 * status: a file that fails to load counts as one failure, and a failed run with no failing test
 * counts as one failure.
 */
export function summarize(json, status) {
  if (json === null) return { passed: 0, failed: 1, skipped: 0 };
  const passed = json.numPassedTests ?? 0;
  let failed = json.numFailedTests ?? 0;
  // A file that fails to load has no failing test of its own: count it once.
  for (const file of json.testResults ?? []) {
    if (file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed')) failed++;
  }
  const skipped = (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
  if (status !== 0 && failed === 0) failed = 1;
  return { passed, failed, skipped };
}

/** The closing line: `N passed, N failed, N skipped`. */
export const summaryLine = ({ passed, failed, skipped }) => `${passed} passed, ${failed} failed, ${skipped} skipped`;


/**
 * Adds the turbo checks (scripts/check-task.mjs) to the counts, one check as one test: a check
 * whose verdict says `passed` passes, `failed` fails; a check that was asked for but left no verdict
 * (turbo or the check crashed before writing it) fails; a check that was not asked for (a filtered
 * run) did not run and counts as skipped. `verdicts` maps each check's name to its verdict or null.
 */
export function addChecks(counts, verdicts, selected) {
  const out = { ...counts };
  for (const [name, v] of Object.entries(verdicts)) {
    if (!selected.includes(name)) out.skipped++;
    else if (v?.status === 'passed') out.passed++;
    else out.failed++;
  }
  return out;
}
