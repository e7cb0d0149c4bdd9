/**
 * Routes as declarations (platform.md "HTTP contract"): every declaration is data and has one
 * binding; every error code a route answers is one it declares — the guard of `bindRoute` (on
 * under vitest, so every HTTP test checks it) and a drive of every platform, Project Inbox and
 * administration route through its failures, in process, on the in-memory store — and the
 * declarations are sane the other way (no code declared twice, none a shared set already gives,
 * none the route's kind cannot answer).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { RequestContext } from '../context.js';
import { ERROR_CODES, InboxKitError, isInboxKitError, type ErrorCode } from '../errors.js';
import { createManualClock, createSequentialIdGenerator } from '../ports/clock.js';
import { createLocalEventBus } from '../ports/event-bus.js';
import { ProjectInboxService } from '../project-inbox/service.js';
import { PlatformService } from '../platform/service.js';
import { createMemoryStore } from '../testing/memory-store.js';
import { STATUS_BY_CODE } from './errors.js';
import { ROUTE_BINDINGS } from './route-bindings.js';
import {
  AUTHENTICATED_ERROR_CODES, BODY_ERROR_CODES, declaredErrorCodes, FORWARDING_ERROR_CODES, GENERIC_ERROR_CODES, readsBody, STREAM_ERROR_CODES,
  type HttpCall, type HttpServices, type RouteDeclaration,
} from './route-types.js';
import { bindRoute, HTTP_ROUTES, ROUTE_DECLARATIONS } from './routes.js';

describe('the route declarations', () => {
  it('are data: one binding each, unique operation ids, no function but the body precheck', () => {
    const ids = ROUTE_DECLARATIONS.map((d) => d.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.keys(ROUTE_BINDINGS).sort()).toEqual([...ids].sort());
    expect(HTTP_ROUTES.map((r) => r.operationId)).toEqual(ids);
    for (const d of ROUTE_DECLARATIONS) {
      const functions = Object.entries(d).filter(([key, value]) => typeof value === 'function' && key !== 'precheckBody').map(([key]) => key);
      expect(functions, d.operationId).toEqual([]);
    }
  });

  it('declare each of their own codes once, from ERROR_CODES, none a shared set already gives them', () => {
    for (const d of ROUTE_DECLARATIONS) {
      expect(new Set(d.errors).size, d.operationId).toBe(d.errors.length);
      for (const code of d.errors) expect(ERROR_CODES, d.operationId).toContain(code);
      const shared: ErrorCode[] = [
        ...GENERIC_ERROR_CODES, ...(d.public ? [] : AUTHENTICATED_ERROR_CODES), ...(readsBody(d) ? BODY_ERROR_CODES : []),
        ...(d.stream ? STREAM_ERROR_CODES : []), ...(d.forwardable ? FORWARDING_ERROR_CODES : []),
      ];
      expect(d.errors.filter((c) => shared.includes(c)), d.operationId).toEqual([]);
    }
  });

  it('declare no code the route cannot answer: own codes are 4xx, Live Inbox codes only on the Live Inbox, idempotency only with its header', () => {
    for (const d of ROUTE_DECLARATIONS) {
      for (const code of d.errors) {
        const status = STATUS_BY_CODE[code];
        expect(status >= 400 && status < 500, `${d.operationId} ${code}`).toBe(true);
        if (code.startsWith('live_inbox_')) expect(d.path, `${d.operationId} ${code}`).toContain('/live-inbox');
        if (code === 'idempotency_key_reused') expect(d.headers, d.operationId).toBeDefined();
        if (code.startsWith('project_inbox_') && !code.startsWith('project_inbox_payload')) expect(d.tags, `${d.operationId} ${code}`).toContain('project-inbox');
        if (code === 'api_key_not_found' || code === 'agent_not_found') expect(d.public, d.operationId).toBeUndefined();
      }
      if (!readsBody(d)) expect(declaredErrorCodes(d).filter((c) => (BODY_ERROR_CODES as readonly string[]).includes(c)), d.operationId).toEqual([]);
    }
  });

  it('give the shared codes to every route by its kind', () => {
    const health = ROUTE_DECLARATIONS.find((d) => d.operationId === 'health')!;
    expect(declaredErrorCodes(health)).toEqual([...GENERIC_ERROR_CODES]);
    const create = ROUTE_DECLARATIONS.find((d) => d.operationId === 'createInboxItem')!;
    expect(declaredErrorCodes(create)).toEqual(expect.arrayContaining([...GENERIC_ERROR_CODES, ...AUTHENTICATED_ERROR_CODES, ...BODY_ERROR_CODES, 'idempotency_key_reused']));
    const stream = ROUTE_DECLARATIONS.find((d) => d.operationId === 'streamProjectEvents')!;
    expect(declaredErrorCodes(stream)).toContain('too_many_streams');
    expect(declaredErrorCodes(stream)).not.toContain('payload_too_large');
  });
});

describe('bindRoute', () => {
  const declaration: RouteDeclaration = {
    operationId: 'probe', method: 'GET', path: '/probe', summary: 'probe', tags: [], status: 200, response: undefined as never, errors: ['project_not_found'],
  };
  const call = {} as HttpCall;
  const services = {} as HttpServices;
  const throwing = (error: unknown) => bindRoute(declaration, async () => { throw error; }, true);

  it('turns a code the route does not declare into internal_error naming the route and the code', async () => {
    const error = await throwing(new InboxKitError('session_not_found', 'Session not found')).handle(services, call).catch((e: unknown) => e);
    expect(isInboxKitError(error) && error.code).toBe('internal_error');
    expect((error as InboxKitError).details).toEqual([{ path: 'probe', message: 'undeclared error code session_not_found: Session not found', code: 'session_not_found' }]);
  });

  it('lets declared and shared codes, and errors that are not InboxKitError, through unchanged', async () => {
    for (const code of ['project_not_found', 'validation_error', 'authentication_required', 'storage_busy'] as const) {
      const thrown = new InboxKitError(code, 'x');
      expect(await throwing(thrown).handle(services, call).catch((e: unknown) => e)).toBe(thrown);
    }
    const crash = new TypeError('boom');
    expect(await throwing(crash).handle(services, call).catch((e: unknown) => e)).toBe(crash);
  });

  it('checks nothing when not enforcing (production)', async () => {
    const thrown = new InboxKitError('session_not_found', 'x');
    expect(await bindRoute(declaration, async () => { throw thrown; }, false).handle(services, call).catch((e: unknown) => e)).toBe(thrown);
  });
});

describe('every code a route answers is declared (each platform, Project Inbox and admin route driven through its failures)', () => {
  const store = createMemoryStore();
  const deps = { store, bus: createLocalEventBus(), clock: createManualClock(), ids: createSequentialIdGenerator() };
  const services: HttpServices = { platform: new PlatformService(deps), projectInbox: new ProjectInboxService(deps) };
  const callers: Record<string, RequestContext> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const { platform } = services;
    await platform.createWorkspace({ id: 'ws_1', name: 'W' });
    for (const [id, kind] of [['acc_owner', 'standard'], ['acc_deriver', 'standard'], ['acc_observer', 'standard'], ['acc_stranger', 'standard'], ['acc_admin', 'admin']] as const) {
      await platform.createAccount({ id, name: id, workspace_ids: ['ws_1'] });
      const { secret } = await platform.issueApiKey({ workspace_id: 'ws_1', account_id: id, kind });
      callers[id] = { principal: await platform.authenticate(secret), request_id: `req_${id}` };
    }
    const owner = callers['acc_owner']!;
    const project = await platform.createProject(owner, { name: 'P' });
    await platform.addMember(owner, project.id, { account_id: 'acc_deriver', role: 'deriver' });
    await platform.addMember(owner, project.id, { account_id: 'acc_observer', role: 'observer' });
    const archived = await platform.createProject(owner, { name: 'A' });
    const session = await platform.createSession(owner, { project_id: project.id, title: 'S' });
    const { floor } = await platform.commitTurn(owner, session.id, { content: { text: 'hi' } });
    const item = await services.projectInbox.create(callers['acc_deriver']!, project.id, { type: 'note', title: 'T', payload: {} } as never);
    await platform.archiveProject(owner, archived.id);
    Object.assign(ids, { project: project.id, archived: archived.id, session: session.id, floor: floor.id, item: item.id });
  });

  /** The values tried for each path parameter: an existing id, one of an archived project, a missing one. */
  const paramValues = (name: string): string[] => {
    if (name === 'id') return [ids['project']!, ids['archived']!, ids['session']!, 'x_missing'];
    if (name === 'floor_id') return [ids['floor']!, 'floor_missing'];
    if (name === 'item_id') return [ids['item']!, 'item_missing'];
    if (name === 'account_id') return ['acc_deriver', 'acc_missing'];
    return ['x_missing'];
  };

  it('answers only declared codes, whoever calls with whatever ids', async () => {
    const undeclared: string[] = [];
    const seen = new Set<string>();
    const routes = ROUTE_DECLARATIONS.filter((d) => !d.requiresRuntime && !d.requiresManagedSessions && !d.stream);
    for (const d of routes) {
      const names = d.path.split('/').filter((s) => s.startsWith(':')).map((s) => s.slice(1));
      // Archiving the project every other route is driven on would leave only `project_archived` to find.
      const values = (n: string) => paramValues(n).filter((v) => !(d.operationId === 'archiveProject' && v === ids['project']));
      const combos = names.reduce<Record<string, string>[]>((acc, n) => acc.flatMap((p) => values(n).map((v) => ({ ...p, [n]: v }))), [{}]);
      const queryInput = d.operationId === 'listOperationLogsByProject' ? { project_id: ids['project'] } : {};
      const query = d.query?.safeParse(queryInput);
      const candidates: unknown[] = [
        {}, { name: 'N' }, { account_id: 'acc_observer', role: 'observer' }, { account_id: 'acc_missing', role: 'deriver' }, { content: { text: 'x' } },
        { decision: 'accept' }, { decision: 'archive' }, { project_id: ids['project'], title: 'S' }, { project_id: ids['archived'] }, { project_id: 'proj_missing' },
        { type: 'note', title: 'T', payload: {} }, { type: 'note', title: 'T', payload: {}, source: { session_id: 'sess_missing' } }, { kind: 'service' }, { grace_ms: 10 },
      ];
      const valid = candidates.filter((c) => d.body?.safeParse(c).success);
      const bodies = d.body === undefined ? [undefined] : [...valid, { unknown_field: true }];
      for (const [who, ctx] of Object.entries(callers)) {
        for (const params of combos) {
          for (const body of bodies) {
            const call: HttpCall = { ctx: () => ctx, params, query: query?.success ? query.data : queryInput, body, headers: {}, forwarded: false, lastEventId: undefined };
            try {
              await ROUTE_BINDINGS[d.operationId]!(services, call);
            } catch (error) {
              if (!isInboxKitError(error)) throw error;
              seen.add(`${d.operationId} ${error.code}`);
              if (!declaredErrorCodes(d).includes(error.code)) undeclared.push(`${d.operationId} as ${who} ${JSON.stringify(params)}: ${error.code} (${error.message})`);
            }
          }
        }
      }
    }
    expect(undeclared).toEqual([]);
    // The drive reaches the routes' own failures, not only validation.
    for (const expected of ['getProject project_not_found', 'archiveProject project_not_found', 'addMember permission_denied', 'createInboxItem project_inbox_write_denied', 'createSession project_archived', 'removeMember member_not_found',
      'getSession session_not_found', 'listPages floor_not_found', 'getInboxItem project_inbox_item_not_found', 'decideInboxItem project_inbox_decide_denied',
      'adminDisableAccount account_not_found', 'adminRevokeApiKey api_key_not_found']) {
      expect([...seen], expected).toContain(expected);
    }
  });
});
