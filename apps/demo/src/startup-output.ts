/**
 * What the demo prints about its API keys on start (apps/demo README "Secrets"): the keys only on
 * the start that created them (or, when that start ended before serving, on the next start that
 * serves), never the `service` key (it is only in the credentials file), and
 * nothing at all when `LOG_LEVEL` is above `info` (`warn`, `error`, `fatal`, `silent`). Later
 * starts say where the keys are, or that there are none here (start-up never needs the file).
 */
import type { StartUp } from './seed.js';

/** LOG_LEVEL values at which the demo prints informational lines (keys, where they are). */
const PRINTING_LEVELS = new Set(['info', 'debug', 'trace']);

/** How to make a key without the file (README "Administration"). */
const MAKE_A_KEY = 'create one with `npm run admin -- keys create --account <account id>` (same DATABASE_URL / DATA_DIR)';

/**
 * The lines to print about the API keys.
 * @param start what the start found and did (`startUp` of seed.ts).
 * @param logLevel the demo's LOG_LEVEL.
 * @returns lines without trailing newline; empty when the level is above `info`.
 */
export function keyLines(start: Pick<StartUp, 'credentials' | 'created' | 'unshown' | 'kind' | 'workspace' | 'file'>, logLevel: string): string[] {
  if (!PRINTING_LEVELS.has(logLevel)) return [];
  const { file } = start;
  if (start.unshown === true && Object.keys(start.credentials).some((account) => account !== 'service')) {
    // The start that created them ended before serving (e.g. a taken port) and printed none.
    const lines = [`API keys, created by an earlier start that ended before serving (shown once). All keys are kept in ${file.path}; the service key is only there.`];
    for (const [account, key] of Object.entries(start.credentials)) {
      if (account !== 'service') lines.push(`  ${account.padEnd(13)} ${key}`);
    }
    return lines;
  }
  if (start.kind === 'bootstrapped') {
    const ws = start.workspace;
    return [
      `Workspace "${ws?.name}" (${ws?.id}) created with one admin key, shown once (also kept in ${file.path}):`,
      `  admin         ${start.credentials.admin}`,
      'Add accounts and keys with it (POST /admin/accounts, POST /admin/accounts/{id}/keys) or with `npm run admin -- accounts create --name …`.',
    ];
  }
  if (start.created) {
    const lines = [`API keys, created now (shown once). All keys are kept in ${file.path}; the service key is only there.`];
    for (const [account, key] of Object.entries(start.credentials)) {
      if (account !== 'service') lines.push(`  ${account.padEnd(13)} ${key}`);
    }
    return lines;
  }
  if (!file.present) return [`API keys: no ${file.path} here (a replica, a restored database, or the file was removed); the server does not need it: ${MAKE_A_KEY}`];
  if (file.valid < file.keys) {
    return [`API keys: in ${file.path}; ${file.keys - file.valid} of ${file.keys} do not authenticate against this database (revoked, or of another database) and are not offered; ${MAKE_A_KEY}`];
  }
  return [`API keys: in ${file.path} (printed only on the start that created them)`];
}
