/**
 * Responses: checked against their route's schema in tests (`responseValidation`, on outside
 * production), `JSON.stringify` in production — the same bytes whenever the check passes.
 * Real HTTP, real database (SQLite and PostgreSQL).
 */
import type { ProjectInboxItem, Store } from '@inbox-kit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { engines, expectError, startHarness, type Harness } from './harness.js';

/** A store whose item reads (both read paths of a get) pass every item through `change`. */
const changedItems = (change: (item: ProjectInboxItem) => Record<string, unknown>) => (store: Store): Store => new Proxy(store, {
  get(target, prop, receiver) {
    if (prop === 'getInboxItem') {
      return async (...args: Parameters<Store['getInboxItem']>) => {
        const item = await target.getInboxItem(...args);
        return item && change(item);
      };
    }
    if (prop === 'getInboxItemWithAccess' && target.getInboxItemWithAccess) {
      return async (...args: Parameters<NonNullable<Store['getInboxItemWithAccess']>>) => {
        const read = await target.getInboxItemWithAccess!(...args);
        return read && { ...read, item: read.item && change(read.item) };
      };
    }
    const value = Reflect.get(target, prop, receiver);
    return typeof value === 'function' ? value.bind(target) : value;
  },
});

/** Item reads carry a field no response schema has (e.g. an internal column). */
const leakyStore = changedItems((item) => ({ ...item, internal_note: 'not for clients' }));

/** Item reads lose a required field. */
const lossyStore = changedItems(({ title: _title, ...rest }) => rest);

const itemBody = { type: 'task', title: 'Check the 表 title', payload: { steps: ['a', 'b'], n: 1.5, flag: null } };

describe.each(engines)('response serialization (%s)', (engine) => {
  const open: Harness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });
  const start = async (options: Parameters<typeof startHarness>[1]) => {
    const h = await startHarness(engine, options);
    open.push(h);
    return h;
  };

  it('sends the same bytes with and without the check (create, get, list, decide)', async () => {
    const servers = [await start({}), await start({ responseValidation: false })];
    const texts: string[][] = [[], []];
    for (const [i, h] of servers.entries()) {
      const created = await h.request<{ item: { id: string } }>('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: itemBody });
      expect(created.status).toBe(201);
      const id = created.body.item.id;
      const get = await h.request('GET', `/projects/proj_main/inbox/${id}`, { as: 'acc_owner' });
      const list = await h.request('GET', '/projects/proj_main/inbox?limit=1', { as: 'acc_owner' });
      const decided = await h.request('PATCH', `/projects/proj_main/inbox/${id}`, { as: 'acc_owner', body: { decision: 'accept', note: 'ok' } });
      for (const res of [created, get, list, decided]) {
        expect(res.status).toBeLessThan(300);
        // The two servers' ids, times and cursors differ; everything else must be byte for byte the same.
        texts[i]!.push(res.text.replaceAll(id, 'ID').replace(/"(created_at|updated_at|decided_at)":\d+/g, '"$1":0')
          .replace(/"next_cursor":"[^"]*"/, '"next_cursor":"C"'));
      }
    }
    expect(texts[0]).toEqual(texts[1]);
    expect(texts[0]![1]).toContain('"title":"Check the 表 title"');
  });

  it('with the check, a response carrying a field its schema lacks is a 500 that shows none of it', async () => {
    const h = await start({ wrapStore: leakyStore });
    const { id } = (await h.request<{ item: { id: string } }>('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: itemBody })).body.item;
    const res = await h.request('GET', `/projects/proj_main/inbox/${id}`, { as: 'acc_owner' });
    expectError(res, 500, 'internal_error');
    expect(res.text).not.toContain('not for clients');
    expect(res.text).not.toContain('internal_note');
    expect(res.text).not.toMatch(/schema|zod|at .*\.ts/i);
  });

  it('with the check, a response missing a required field is a 500', async () => {
    const h = await start({ wrapStore: lossyStore });
    const { id } = (await h.request<{ item: { id: string } }>('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: itemBody })).body.item;
    expectError(await h.request('GET', `/projects/proj_main/inbox/${id}`, { as: 'acc_owner' }), 500, 'internal_error');
  });

  it('without the check (production), the response is JSON.stringify of what the service returned', async () => {
    const h = await start({ wrapStore: leakyStore, responseValidation: false });
    const { id } = (await h.request<{ item: { id: string } }>('POST', '/projects/proj_main/inbox', { as: 'acc_deriver', body: itemBody })).body.item;
    const res = await h.request<{ item: Record<string, unknown> }>('GET', `/projects/proj_main/inbox/${id}`, { as: 'acc_owner' });
    expect(res.status).toBe(200);
    expect(res.body.item.internal_note).toBe('not for clients');
    expect(res.body.item.payload).toEqual(itemBody.payload);
  });
});
