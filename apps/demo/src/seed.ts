/**
 * First-start seed data (issue "Monorepo foundation"): workspace ws_demo with acc_owner,
 * acc_deriver, acc_observer and acc_outsider; project proj_main owned by acc_owner with the
 * deriver and observer as members; session sess_001 in it; workspace ws_other with acc_stranger.
 * API keys are issued once and written to `<DATA_DIR>/credentials.json`; later starts reuse them.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PlatformService, RequestContext, Store } from '@inbox-kit/core';

/** `{ "<account id>": "<key>", …, "service": "<service key of ws_demo>" }` */
export type Credentials = Record<string, string>;

/** The credentials file does not match the database the demo opened. */
export class CredentialsMismatchError extends Error {
  override readonly name = 'CredentialsMismatchError';
}

export const DEMO_ACCOUNTS = ['acc_owner', 'acc_deriver', 'acc_observer', 'acc_outsider'] as const;

/** Seeds an empty database and returns the credentials (read from the file when already seeded). */
export async function seed(store: Store, platform: PlatformService, dataDir: string): Promise<{ credentials: Credentials; created: boolean }> {
  const file = join(dataDir, 'credentials.json');
  if (await store.getWorkspace('ws_demo')) {
    if (!existsSync(file)) throw new CredentialsMismatchError(`the database is seeded but ${file} is missing; remove the database or restore the file`);
    const credentials = JSON.parse(readFileSync(file, 'utf8')) as Credentials;
    // The file must belong to this database (DATA_DIR is shared when DATABASE_URL changes).
    const owner = credentials.acc_owner === undefined ? undefined : await platform.authenticate(credentials.acc_owner).catch(() => undefined);
    if (owner?.account_id !== 'acc_owner') {
      throw new CredentialsMismatchError(`${file} holds keys of another database (was DATABASE_URL changed?); use the DATA_DIR that was used when this database was first seeded`);
    }
    return { credentials, created: false };
  }
  if (existsSync(file)) {
    // A fresh database next to another database's keys: keep them, never overwrite silently.
    const kept = join(dataDir, `credentials.${Date.now()}.json`);
    renameSync(file, kept);
    console.warn(`inbox-kit demo: seeding a new database; the previous ${file} (keys of another database) was kept as ${kept}`);
  }
  await platform.createWorkspace({ id: 'ws_demo', name: 'Demo workspace' });
  await platform.createWorkspace({ id: 'ws_other', name: 'Another tenant' });
  const names: Record<string, string> = { acc_owner: 'Olivia Owner', acc_deriver: 'Derek Deriver (agent)', acc_observer: 'Omar Observer', acc_outsider: 'Uma Outsider' };
  const credentials: Credentials = {};
  for (const id of DEMO_ACCOUNTS) {
    await platform.createAccount({ id, name: names[id] ?? id, workspace_ids: ['ws_demo'] });
    credentials[id] = (await platform.issueApiKey({ workspace_id: 'ws_demo', account_id: id })).secret;
  }
  await platform.createAccount({ id: 'acc_stranger', name: 'Sam Stranger', workspace_ids: ['ws_other'] });
  credentials.acc_stranger = (await platform.issueApiKey({ workspace_id: 'ws_other', account_id: 'acc_stranger' })).secret;
  credentials.service = (await platform.issueApiKey({ workspace_id: 'ws_demo', account_id: 'acc_owner', kind: 'service' })).secret;

  const owner = await platform.authenticate(credentials.acc_owner);
  const ctx: RequestContext = { principal: owner, request_id: 'req_seed', source: 'system' };
  await platform.createProject(ctx, { id: 'proj_main', name: 'Main project' });
  await platform.addMember(ctx, 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
  await platform.addMember(ctx, 'proj_main', { account_id: 'acc_observer', role: 'observer' });
  await platform.createSession(ctx, { id: 'sess_001', project_id: 'proj_main', title: 'First session' });

  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  return { credentials, created: true };
}
