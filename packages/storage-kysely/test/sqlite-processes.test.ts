// SQLite shared by several processes: each process has its own connection (Kysely serialises the
// transactions inside a process; across processes `BEGIN IMMEDIATE` + busy_timeout do). 4 processes
// × 50 read-then-write transactions on one file must all succeed — no SQLITE_BUSY — and leave
// sequences 1..200. The children run a bundle of this package's sources built with tsup.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/index.js';
import { sqliteRawReader } from './helpers.js';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
// Under the package so the bundle resolves kysely and better-sqlite3 from its node_modules.
const workDir = join(packageDir, '.tmp', `processes-${process.pid}-${Date.now()}`);

const CHILD = `
import { openStore } from './index.js';
const [file, tag, count, startAt] = process.argv.slice(2);
const { store, close } = await openStore({ sqliteFile: file });
while (Date.now() < Number(startAt)) await new Promise((r) => setTimeout(r, 2));
const errors = [];
let committed = 0;
await Promise.all(Array.from({ length: Number(count) }, async (_, i) => {
  const id = tag + '_' + i;
  try {
    await store.transaction(async (tx) => {
      // Read first, then write (as the services do): the case a deferred BEGIN can fail with SQLITE_BUSY.
      const project = await tx.getProject('ws_mp', 'proj_mp');
      if (!project) throw new Error('project missing');
      await tx.insertInboxItem({ id: 'pinbox_' + id, workspace_id: 'ws_mp', project_id: project.id, account_id: project.account_id,
        sender_account_id: project.account_id, type: 't', title: null, payload: { i }, source_event_id: null, source_session_id: null,
        source_floor_id: null, source_page_id: null, status: 'pending', decided_by_account_id: null, decided_at: null,
        created_at: Date.now(), updated_at: Date.now() });
      await tx.appendOperationLog({ id: 'oplog_' + id, workspace_id: 'ws_mp', project_id: project.id, actor_account_id: project.account_id,
        action: 'project_inbox_item.create', target_type: 'project_inbox_item', target_id: 'pinbox_' + id, request_id: null,
        metadata: {}, created_at: Date.now() });
      await tx.appendProjectEvent({ id: 'evt_' + id, workspace_id: 'ws_mp', project_id: project.id, type: 'project_inbox.item.created',
        actor_account_id: null, session_id: null, floor_id: null, page_id: null, operation_log_id: null, correlation_id: null,
        causation_event_id: null, payload: {}, visibility: 'project', source: 'api', created_at: Date.now() });
    });
    committed += 1;
  } catch (error) {
    errors.push(String(error && (error.code || error.message)));
  }
}));
await close();
process.stdout.write(JSON.stringify({ committed, errors }));
`;

describe('sqlite shared by several processes', () => {
  beforeAll(async () => {
    mkdirSync(workDir, { recursive: true });
    const { build } = await import('tsup');
    await build({
      config: false, entry: { index: join(packageDir, 'src/index.ts') }, outDir: workDir, format: ['esm'], target: 'node20',
      dts: false, sourcemap: false, clean: false, silent: true, external: ['kysely', 'better-sqlite3', 'pg'],
    });
    writeFileSync(join(workDir, 'child.mjs'), CHILD);
  }, 60_000);
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it('4 processes × 50 concurrent transactions on one file: no SQLITE_BUSY, sequences 1..200', async () => {
    const file = join(workDir, 'shared.sqlite');
    const setup = await openStore({ sqliteFile: file });
    await setup.store.insertWorkspace({ id: 'ws_mp', name: 'mp', created_at: 1 });
    await setup.store.insertAccount({ id: 'acc_mp', name: 'mp', created_at: 1 }, ['ws_mp']);
    await setup.store.insertProject({ id: 'proj_mp', workspace_id: 'ws_mp', account_id: 'acc_mp', name: 'mp', status: 'active', created_at: 1, updated_at: 1 });
    await setup.close();

    const startAt = Date.now() + 1500;
    const children = await Promise.all(['a', 'b', 'c', 'd'].map((tag) =>
      run(process.execPath, [join(workDir, 'child.mjs'), file, tag, '50', String(startAt)], { cwd: workDir, timeout: 60_000 })));
    const reports = children.map((c) => JSON.parse(c.stdout) as { committed: number; errors: string[] });
    expect(reports.flatMap((r) => r.errors)).toEqual([]);
    expect(reports.map((r) => r.committed)).toEqual([50, 50, 50, 50]);

    const reader = sqliteRawReader(file);
    try {
      expect(await reader.raw.eventSequences('proj_mp')).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
      expect(await reader.raw.countRows('project_inbox_items', 'proj_mp')).toBe(200);
    } finally {
      reader.close();
    }
  }, 90_000);
});
