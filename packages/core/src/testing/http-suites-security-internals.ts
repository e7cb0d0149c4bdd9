/**
 * No stack, SQL or internals in any error (`http-suites-security.ts`): a store failing on every
 * call, and real database errors on every write route. Data: each `run(ctx)` gets {@link InternalsCtx}.
 */
import { expect } from 'vitest';
import type { StoreTx } from '../ports/store.js';
import { expectNoLeak, keyOf, type ParamValues } from './http-raw.js';
import { expectError } from './http-world.js';
import type { HttpSuiteCheck } from './http-suites-kit.js';
import { THIN_ROUTES } from './http-suites-hostile.js';
import { BODIES, SESSION, dumpWrittenRows, type InternalsCtx } from './http-suites-security.js';

export const internalsChecks: HttpSuiteCheck<InternalsCtx>[] = [
  {
    name: 'a store failing on every call: every route answers the envelope (500 api_error) with nothing of the failure in it',
    async run(c) {
      const { h, routes, send } = c;
      h.failure.everything = true;
      let fivehundreds = 0;
      try {
        for (const route of routes.filter((r) => !r.public)) {
          const res = await send(route);
          if (res.status < 300) continue; // /me reads only what authentication read
          const env = expectError(res, res.status);
          expectNoLeak(res.text, Object.values(h.keys), keyOf(route));
          expect(res.text).not.toContain('SELCT');
          expect(res.text).not.toContain('deadbeef');
          if (res.status === 500) {
            fivehundreds++;
            expect(env.error.type).toBe('api_error');
            expect(env.error.message).toBe('Internal server error');
            expect(env.error.details).toEqual([]);
          }
        }
      } finally {
        h.failure.everything = false;
      }
      expect(fivehundreds).toBeGreaterThanOrEqual(routes.filter((r) => !r.public).length - 2);
      expect((await h.request('GET', '/health')).status).toBe(200);
      expect((await h.request('GET', '/projects/proj_main/inbox', { as: 'acc_owner' })).status).toBe(200);
    },
  },

  {
    name: 'real database errors (a write that violates a key) on every write route: 500 envelope without SQL, nothing partial left',
    async run(c) {
      const { h, routes, send, mode } = c;
      /** Every row (`dumpRows`, keys' `last_used_at` masked), else the world's Store-port counts. */
      const rows = async () => (await dumpWrittenRows(h)) ?? (await h.worldState()).counts;
      const allMethods = ['insertProject', 'upsertMembership', 'insertSession', 'insertFloor', 'insertPage', 'insertInboxItem', 'decideInboxItem', 'appendProjectEvent', 'appendOperationLog', 'appendSessionEvents', 'insertRun'] as const;
      // An adapter's wire run: two failures on the thin routes (the 500 envelope is the pipeline's; the full matrix runs in-process once per store).
      const txMethods = mode === 'wire' ? (['insertInboxItem', 'appendOperationLog'] as const) : allMethods;
      // Destructive routes last, so every route meets each failure on live resources.
      const last = ['POST /admin/keys/{id}/rotate', 'DELETE /admin/keys/{id}', 'POST /admin/accounts/{id}/disable', 'POST /admin/accounts/{id}/enable', 'DELETE /projects/{id}/members/{account_id}', 'POST /projects/{id}/archive'];
      const writes = routes.filter((r) => r.method !== 'GET' && !r.public && (mode !== 'wire' || THIN_ROUTES.has(keyOf(r)))).sort((a, b) => last.indexOf(keyOf(a)) - last.indexOf(keyOf(b)));
      const bodies = { ...BODIES, 'POST /projects/{id}/inbox': { type: 'security.probe' } };
      const failed = new Set<string>();
      for (const method of txMethods) {
        // Fresh resources for each failure: a project with members, a session, an item and a floor.
        const { project_id, session_id } = await h.newProject();
        const item = await h.request('POST', `/projects/${project_id}/inbox`, { as: 'acc_deriver', body: { type: 'probe' } });
        const turn = await h.request('POST', `/sessions/${session_id}/floors`, { as: 'acc_owner', body: { content: 'turn' } });
        // And for the administration: an account with a key.
        const account = await h.request('POST', '/admin/accounts', { as: 'admin', body: { name: 'fresh' } });
        const key = await h.request('POST', `/admin/accounts/${account.body.account.id}/keys`, { as: 'admin', body: {} });
        const fresh: ParamValues = {
          projects: project_id, sessions: session_id, inbox: item.body.item.id, members: 'acc_deriver', floors: turn.body.floor.id, 'live-inbox': '1',
          accounts: account.body.account.id, keys: key.body.key.id,
        };
        for (const route of writes) {
          await Promise.all([h.runtime!.whenIdle(SESSION), h.runtime!.whenIdle(session_id)]);
          // Enabling writes only for a disabled account (the disable before it may have failed).
          if (keyOf(route) === 'POST /admin/accounts/{id}/enable') await h.request('POST', `/admin/accounts/${fresh.accounts}/disable`, { as: 'admin' });
          const before = await rows();
          h.failure.method = method as keyof StoreTx;
          const res = await send(route, fresh, bodies).finally(() => { h.failure.method = null; });
          // A Run the request started (on the seeded Session or the fresh one) writes in the background: let it finish.
          await Promise.all([h.runtime!.whenIdle(SESSION), h.runtime!.whenIdle(session_id)]);
          if (res.status >= 400) {
            expectError(res, res.status);
            expectNoLeak(res.text, Object.values(h.keys), `${keyOf(route)} with ${method} failing`);
            // A failed write leaves no partial rows behind.
            if (res.status >= 500) {
              failed.add(keyOf(route));
              expect(await rows(), `${keyOf(route)} with ${method} failing left rows`).toEqual(before);
            }
          }
        }
      }
      // Every route that writes through a transaction met a real failure at least once.
      // (A stream token is signed, not stored: its route writes nothing.)
      expect([...failed].sort()).toEqual(writes.filter((r) => !r.template.includes('live-inbox') && keyOf(r) !== 'POST /stream-tokens').map(keyOf).sort());
      await h.runtime!.whenIdle(SESSION);
      expect((await h.request('GET', '/health')).status).toBe(200);
    },
  },
];
