/**
 * The registry of PostgreSQL named prepared statements, in a module that loads no driver: the
 * store registers its compiled-once queries here, the pools of `openPostgres` read it.
 */

/** Statement names by SQL text: only texts registered by {@link prepareStatement}, a bounded set. */
export const statementNames = new Map<string, string>();

/**
 * Registers `text` (a query the store compiled once) to run as a named prepared statement on the
 * pools of `openPostgres`. The name is derived from the text's registration order, so one
 * text has one name in the whole process (node-postgres refuses one name for two texts).
 */
export function prepareStatement(text: string): void {
  if (!statementNames.has(text)) statementNames.set(text, `inbox_kit_${statementNames.size + 1}`);
}

