/**
 * Where the demo keeps its SQLite file and `credentials.json`: one rule for the server (config.ts)
 * and the administration command line (admin.ts), so that both open the same database. A module
 * of its own so that the command line loads nothing else of the server's configuration.
 */
import { resolve } from 'node:path';

/** DATA_DIR when none is set: `data`, relative to the working directory (apps/demo under `npm run demo` and `npm run admin`). */
export const DEFAULT_DATA_DIR = 'data';

/** The absolute data directory: DATA_DIR, else {@link DEFAULT_DATA_DIR}, resolved against the working directory. */
export function dataDirOf(env: NodeJS.ProcessEnv): string {
  return resolve(env.DATA_DIR || DEFAULT_DATA_DIR);
}
