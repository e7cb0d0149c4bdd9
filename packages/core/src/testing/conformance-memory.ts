/**
 * The conformance kit's raw reader for the in-memory reference store: reads its rows directly
 * (`MemoryStore.raw()`), bypassing the port, as a SQL adapter's reader would run raw queries.
 */
import type { RawReader, StoreConformanceSubject } from './conformance-checks.js';
import { createMemoryStore, type MemoryStore } from './memory-store.js';

/** A {@link RawReader} over the rows of an in-memory store. */
export function memoryRawReader(store: MemoryStore): RawReader {
  const rows = () => store.raw();
  return {
    async countRows(table, project_id) {
      const s = rows();
      if (table === 'project_inbox_items') return [...s.items.values()].filter((i) => i.project_id === project_id).length;
      if (table === 'project_events') return s.events.filter((e) => e.project_id === project_id).length;
      return s.logs.filter((l) => l.project_id === project_id).length;
    },
    async eventSequences(project_id) {
      return rows().events.filter((e) => e.project_id === project_id).map((e) => e.sequence).sort((a, b) => a - b);
    },
    async sessionEventSeqs(session_id) {
      return rows().sessionEvents.filter((e) => e.session_id === session_id).map((e) => e.seq).sort((a, b) => a - b);
    },
    async itemStatus(item_id) {
      return rows().items.get(item_id)?.status;
    },
    async itemPayloadText(item_id) {
      const item = rows().items.get(item_id);
      return item && JSON.stringify(item.payload);
    },
    async memberRole(project_id, account_id) {
      return [...rows().memberships.values()].find((m) => m.project_id === project_id && m.account_id === account_id)?.role;
    },
    async runStatus(run_id) {
      return rows().runs.get(run_id)?.status;
    },
    async idempotencyRequestHashes(scope) {
      return [...rows().idempotency.values()]
        .filter((r) => r.workspace_id === scope.workspace_id && r.account_id === scope.account_id && r.key === scope.key)
        .map((r) => r.request_hash);
    },
    async attemptOwnerHosts(session_id) {
      const row = rows().attemptOwners.get(session_id);
      return row ? [row.host_id] : [];
    },
  };
}

/** A conformance subject over a fresh in-memory store (`runStoreConformance('memory', memoryConformanceSubject)`). */
export async function memoryConformanceSubject(): Promise<StoreConformanceSubject> {
  const store = createMemoryStore();
  return { store, raw: memoryRawReader(store), close: () => store.close() };
}
