/**
 * The `responseValidation` option of `inboxKitHono` / `serveInboxKit`, over real HTTP: off (as in
 * production), a body is `JSON.stringify` of what the service returned; on (the default outside
 * production), the same bytes when the route's schema takes the data unchanged, and a 500 that
 * shows none of it when the schema would reject or change it.
 */
import { describe, expect, it } from 'vitest';
import { serveInboxKit } from '../src/index.js';

type Services = Parameters<typeof serveInboxKit>[0]['services'];
const principal = { workspace_id: 'ws_1', account_id: 'acc_1', key_id: 'key_1', key_kind: 'standard' };
const me = { account: { id: 'acc_1', name: 'Ann', created_at: 1 }, workspace_id: 'ws_1', key_kind: 'standard' };
/** Services whose `identity.whoami` (`GET /me`) answers `body`. */
const services = (body: unknown) => ({
  platform: { authenticate: async () => ({ ...principal }), identity: { whoami: async () => body } }, projectInbox: {},
}) as unknown as Services;

async function getMe(body: unknown, responseValidation?: boolean): Promise<{ status: number; text: string }> {
  const server = await serveInboxKit({ services: services(body), reportError: () => {}, ...(responseValidation === undefined ? {} : { responseValidation }) });
  try {
    const response = await fetch(`${server.url}/me`, { headers: { authorization: 'Bearer ik_any' } });
    return { status: response.status, text: await response.text() };
  } finally {
    await server.close();
  }
}

describe('responseValidation option', () => {
  it('sends the same bytes with and without the check when the schema takes the data unchanged', async () => {
    const checked = await getMe(me);
    const unchecked = await getMe(me, false);
    expect(checked).toEqual({ status: 200, text: JSON.stringify(me) });
    expect(unchecked).toEqual(checked);
  });

  it('with the check (the default in tests), a field the schema lacks is a 500 that shows none of it', async () => {
    const leaky = { ...me, account: { ...me.account, internal_note: 'not for clients' } };
    const res = await getMe(leaky);
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('not for clients');
    expect(res.text).not.toMatch(/schema|zod/i);
    // Off, the service's data is sent as it is: no parse on the way out.
    expect(await getMe(leaky, false)).toEqual({ status: 200, text: JSON.stringify(leaky) });
  });

  it('with the check, a missing required field is a 500', async () => {
    const { workspace_id: _gone, ...lossy } = me;
    expect((await getMe(lossy)).status).toBe(500);
    expect((await getMe(lossy, true)).status).toBe(500);
  });
});
