/**
 * Bulk seeding of Project Inbox items straight into the demo's database (the server is stopped
 * while this runs): SQLite through a raw better-sqlite3 connection (multi-row inserts in large
 * transactions), PostgreSQL with one `INSERT … SELECT generate_series`. Rows carry the columns a
 * create writes, with matching workspace/project/account ids, created 10 ms apart (oldest first)
 * so keyset paging sees a realistic spread.
 *
 * Item ids are `pinbox_` + a 21-character tag (the server's length): `<tag letter>` + the index
 * zero-padded to 20 digits, so callers can name them without reading them back.
 */
import Database from 'better-sqlite3';
import pg from 'pg';

/** The id of seeded item `i` of batch `tag` (one letter). */
export const seededId = (tag, i) => `pinbox_${tag}${String(i).padStart(20, '0')}`;

const STATUSES = ['pending', 'pending', 'pending', 'pending', 'pending', 'pending', 'pending', 'accepted', 'rejected', 'archived'];

/** Column values of item `i`; `pendingOnly` keeps every item pending (decide targets). */
function itemRow({ tag, project, i, base, pendingOnly, session }) {
  const status = pendingOnly ? 'pending' : STATUSES[i % STATUSES.length];
  const created = base + i * 10;
  const decided = status === 'pending' ? null : created + 5;
  return [
    seededId(tag, i), 'ws_demo', project, 'acc_owner', 'acc_deriver', 'derived_output.review', `候选摘要待确认 #${i}`,
    JSON.stringify({ derived_output_id: `dout_${i}`, suggested_action: 'review', confidence: (i % 100) / 100 }),
    null, session, null, null, status, decided === null ? null : 'acc_owner', decided, created, decided ?? created,
  ];
}

const COLUMNS = `id, workspace_id, project_id, account_id, sender_account_id, type, title, payload, source_event_id, source_session_id,
  source_floor_id, source_page_id, status, decided_by_account_id, decided_at, created_at, updated_at`;

/**
 * Inserts items `from … to-1` of batch `tag` into `project` of the SQLite file `file`.
 * `base` is the created_at (ms) of item 0.
 */
export function seedSqliteItems(file, { project, tag, from = 0, to, base, pendingOnly = false, session = null }) {
  const db = new Database(file, { timeout: 5000 });
  try {
    // Durability is irrelevant for set-up data: the file is checkpointed and synced on close.
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    const perStatement = 500;
    const placeholders = `(${new Array(17).fill('?').join(', ')})`;
    const many = db.prepare(`insert into project_inbox_items (${COLUMNS}) values ${new Array(perStatement).fill(placeholders).join(', ')}`);
    const one = db.prepare(`insert into project_inbox_items (${COLUMNS}) values ${placeholders}`);
    const chunk = db.transaction((start, end) => {
      let i = start;
      for (; i + perStatement <= end; i += perStatement) {
        const values = [];
        for (let j = i; j < i + perStatement; j++) values.push(...itemRow({ tag, project, i: j, base, pendingOnly, session }));
        many.run(values);
      }
      for (; i < end; i++) one.run(itemRow({ tag, project, i, base, pendingOnly, session }));
    });
    for (let start = from; start < to; start += 100_000) chunk(start, Math.min(to, start + 100_000));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.exec('analyze');
  } finally {
    db.close();
  }
}

/** Items of `project` in the SQLite file. */
export function countSqliteItems(file, project) {
  const db = new Database(file, { readonly: true, timeout: 5000 });
  try {
    return db.prepare('select count(*) as n from project_inbox_items where project_id = ?').get(project).n;
  } finally {
    db.close();
  }
}

/** The current Project Event sequence of `project` in the SQLite file. */
export function sqliteEventSequence(file, project) {
  const db = new Database(file, { readonly: true, timeout: 5000 });
  try {
    return Number(db.prepare('select event_sequence as s from projects where id = ?').get(project).s);
  } finally {
    db.close();
  }
}

/** As {@link seedSqliteItems}, on PostgreSQL, computed server-side. */
export async function seedPostgresItems(url, { project, tag, from = 0, to, base, pendingOnly = false, session = null }) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const status = pendingOnly
      ? `'pending'`
      : `(array['pending','pending','pending','pending','pending','pending','pending','accepted','rejected','archived'])[(i % 10) + 1]`;
    await client.query(`
      insert into project_inbox_items (${COLUMNS})
      select 'pinbox_' || $1 || lpad(i::text, 20, '0'), 'ws_demo', $2, 'acc_owner', 'acc_deriver', 'derived_output.review',
             '候选摘要待确认 #' || i,
             json_build_object('derived_output_id', 'dout_' || i, 'suggested_action', 'review', 'confidence', (i % 100) / 100.0)::text::json,
             null, $3, null, null, st,
             case when st = 'pending' then null else 'acc_owner' end,
             case when st = 'pending' then null else $4::bigint + i * 10 + 5 end,
             $4::bigint + i * 10,
             case when st = 'pending' then $4::bigint + i * 10 else $4::bigint + i * 10 + 5 end
      from (select i, ${status} as st from generate_series($5::bigint, $6::bigint - 1) as i) g`,
    [tag, project, session, base, from, to]);
    // Vacuum now, so autovacuum does not start on the new rows in the middle of a measured run.
    await client.query('vacuum (analyze) project_inbox_items');
  } finally {
    await client.end();
  }
}

/** Items of `project` on PostgreSQL. */
export async function countPostgresItems(url, project) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query('select count(*) as n from project_inbox_items where project_id = $1', [project])).rows[0].n);
  } finally {
    await client.end();
  }
}

/** The current Project Event sequence of `project` on PostgreSQL. */
export async function postgresEventSequence(url, project) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query('select event_sequence as s from projects where id = $1', [project])).rows[0].s);
  } finally {
    await client.end();
  }
}
