import { describe, expect, it } from 'vitest';
import type { Session, SessionEvent } from '../records.js';
import { agentSnapshot, managedSession, managedSessionEvent, rfc3339, rfc3339Bound, rfc3339Query, stopReasonOf } from './managed-agents.js';

const T = Date.parse('2026-11-30T14:37:57.123Z');
const event = (over: Partial<SessionEvent>): SessionEvent => ({
  id: 'sevt_1', session_id: 'sess_1', seq: 1, type: 'user.message', run_id: 'run_1', message_id: null, content: null,
  floor_id: null, page_id: null, processed_at: T, ...over,
});

describe('Managed Agents wire mapping', () => {
  it('writes RFC 3339 UTC timestamps with ms and reads RFC 3339 with offsets', () => {
    expect(rfc3339(T)).toBe('2026-11-30T14:37:57.123Z');
    expect(rfc3339Query.parse('2026-11-30T15:37:57.123+01:00')).toBe(T);
    expect(rfc3339Query.parse('2026-11-30T14:37:57.123000Z')).toBe(T);
    // A date-time without an offset (a naive Python datetime) is read as UTC (platform.md "Time filters").
    expect(rfc3339Query.parse('2026-11-30T14:37:57.123')).toBe(T);
    // Digits below the ms name no whole-ms instant: refused, never truncated.
    for (const bad of ['2026-11-30', '1700000000000', '2026-13-01T00:00:00Z', 'now', '2026-11-30T14:37:57.123456Z', '2026-02-30T00:00:00Z', '2026-11-30T24:00:00Z']) {
      expect(rfc3339Query.safeParse(bad).success, bad).toBe(false);
    }
  });

  it('time bounds keep sub-ms digits: the whole-ms bound selects exactly what the exact instant would', () => {
    const base = Date.parse('2026-01-01T00:00:00.000Z');
    const x = '2026-01-01T00:00:00.0005Z';
    expect([rfc3339Bound('gt').parse(x), rfc3339Bound('gte').parse(x), rfc3339Bound('lt').parse(x), rfc3339Bound('lte').parse(x)])
      .toEqual([base, base + 1, base + 1, base]);
    // Without sub-ms digits the bound is the instant itself; offsets are honoured.
    expect(rfc3339Bound('gte').parse('2026-01-01T01:00:00.000000+01:00')).toBe(base);
    expect(rfc3339Bound('lt').parse('2025-12-31T19:00:00.0000001-05:00')).toBe(base + 1);
    expect(rfc3339Bound('gte').safeParse('2026-02-29T00:00:00Z').success).toBe(false);
  });

  it('maps each Session event type to the shape the SDK declares', () => {
    const content = [{ type: 'text', text: 'hi' }];
    expect(managedSessionEvent(event({ content }))).toEqual({
      id: 'sevt_1', type: 'user.message', processed_at: '2026-11-30T14:37:57.123Z', content, session_id: 'sess_1', seq: 1,
      run_id: 'run_1', message_id: null, floor_id: null, page_id: null,
    });
    expect(managedSessionEvent(event({ type: 'agent.message', content, message_id: 'run_1-step-0' }))).toMatchObject({ type: 'agent.message', content, message_id: 'run_1-step-0' });
    const running = managedSessionEvent(event({ type: 'session.status_running' }));
    expect(running).not.toHaveProperty('content');
    expect(managedSessionEvent(event({ type: 'user.interrupt' }))).not.toHaveProperty('content');
    expect(managedSessionEvent(event({ type: 'session.status_idle', content: { outcome: 'completed' } }))).toMatchObject({
      type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null, outcome: 'completed', processed_at: '2026-11-30T14:37:57.123Z',
    });
    expect(managedSessionEvent(event({ type: 'session.status_idle', content: { outcome: 'cancelled' } })).stop_reason).toEqual({ type: 'end_turn' });
    expect(managedSessionEvent(event({ type: 'session.status_idle', content: { outcome: 'failed' } })).stop_reason).toEqual({ type: 'retries_exhausted' });
    expect(managedSessionEvent(event({ type: 'session.status_idle', content: { outcome: 'failed', error: { type: 'overloaded_error', message: 'busy' } } })))
      .toMatchObject({ outcome: 'failed', stop_reason: { type: 'retries_exhausted' }, error: { type: 'overloaded_error', message: 'busy' } });
    expect(managedSessionEvent(event({ type: 'session.status_idle', content: { outcome: 'completed' } }))).not.toHaveProperty('error');
    expect(stopReasonOf(undefined)).toEqual({ type: 'end_turn' });
  });

  it('maps a Session to BetaManagedAgentsSession, keeping metadata and environment_id as given', () => {
    const agent = agentSnapshot({ id: 'assistant', name: 'Assistant', model: 'scripted-demo' });
    const session: Session = {
      id: 'sess_1', workspace_id: 'ws_1', project_id: null, title: 'T', created_by_account_id: 'acc_1', created_at: T, agent,
      environment_id: 'env_ 1', metadata: { a: 'b' }, updated_at: T + 1000, archived_at: null,
    };
    expect(managedSession(session, 'idle')).toEqual({
      type: 'session', id: 'sess_1', agent, environment_id: 'env_ 1', title: 'T', metadata: { a: 'b' }, status: 'idle', archived_at: null,
      created_at: '2026-11-30T14:37:57.123Z', updated_at: '2026-11-30T14:37:58.123Z', budget: null, deployment_id: null,
      outcome_evaluations: [], resources: [], stats: {}, usage: {}, vault_ids: [], workspace_id: 'ws_1', project_id: null,
    });
    expect(agent).toEqual({
      type: 'agent', id: 'assistant', version: 1, name: 'Assistant', description: null, model: { id: 'scripted-demo' }, system: null,
      tools: [], mcp_servers: [], skills: [], multiagent: null, execution_identity: { type: 'service_account' }, host_tools: [],
    });
    expect(managedSession({ ...session, archived_at: T }, 'running')).toMatchObject({ status: 'running', archived_at: '2026-11-30T14:37:57.123Z' });
  });
});
