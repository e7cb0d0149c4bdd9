/**
 * What the demo prints about its API keys on start (apps/demo README "Secrets"): the keys only on
 * the start that created them, never the `service` key (it is only in the credentials file), and
 * nothing at all when `LOG_LEVEL` is above `info` (`warn`, `error`, `fatal`, `silent`).
 */
import type { Credentials } from './seed.js';

/** LOG_LEVEL values at which the demo prints informational lines (keys, where they are). */
const PRINTING_LEVELS = new Set(['info', 'debug', 'trace']);

/**
 * The lines to print about the API keys.
 * @param credentials account id → key, plus `service` (never printed).
 * @param created true on the start that seeded the database and issued the keys.
 * @param file the path of `credentials.json`.
 * @param logLevel the demo's LOG_LEVEL.
 * @returns lines without trailing newline; empty when the level is above `info`.
 */
export function keyLines(credentials: Credentials, created: boolean, file: string, logLevel: string): string[] {
  if (!PRINTING_LEVELS.has(logLevel)) return [];
  if (!created) return [`API keys: in ${file} (printed only on the start that created them)`];
  const lines = [`API keys, created now (shown once). All keys are kept in ${file}; the service key is only there.`];
  for (const [account, key] of Object.entries(credentials)) {
    if (account !== 'service') lines.push(`  ${account.padEnd(13)} ${key}`);
  }
  return lines;
}
