/** Tests of the top-level-only case mapping (camelCase SDK ↔ snake_case wire). */
import { describe, expect, it } from 'vitest';
import { camelKey, fromWire, listFromWire, snakeKey, toWire, unwrap } from './case.js';

describe('case mapping', () => {
  it('renames keys both ways', () => {
    expect(snakeKey('sourceSessionId')).toBe('source_session_id');
    expect(snakeKey('type')).toBe('type');
    expect(snakeKey('already_snake')).toBe('already_snake');
    expect(camelKey('source_session_id')).toBe('sourceSessionId');
    expect(camelKey('id')).toBe('id');
    expect(camelKey('alreadyCamel')).toBe('alreadyCamel');
  });

  it('maps only the top level of a request body, drops undefined and keeps null', () => {
    const payload = { derivedOutputId: 'dout_001', nested_key: { innerCamel: 1 } };
    const wire = toWire({ type: 't', title: null, payload, sourceSessionId: 'sess_1', sourceFloorId: undefined });
    expect(wire).toEqual({ type: 't', title: null, payload: { derivedOutputId: 'dout_001', nested_key: { innerCamel: 1 } }, source_session_id: 'sess_1' });
    expect(wire['payload']).toBe(payload);
    expect('source_floor_id' in wire).toBe(false);
  });

  it('maps only the top level of a response record', () => {
    const record = { id: 'pinbox_1', sender_account_id: 'acc_1', payload: { snake_inside: [{ deep_key: 1 }] } };
    expect(fromWire(record)).toEqual({ id: 'pinbox_1', senderAccountId: 'acc_1', payload: { snake_inside: [{ deep_key: 1 }] } });
    expect(fromWire(null)).toBeNull();
    expect(fromWire([1])).toEqual([1]);
    expect(listFromWire([{ created_at: 1 }, { created_at: 2 }])).toEqual([{ createdAt: 1 }, { createdAt: 2 }]);
    expect(listFromWire(undefined)).toEqual([]);
  });

  it('unwraps a single-record envelope', () => {
    expect(unwrap({ project: { workspace_id: 'ws_1' } }, 'project')).toEqual({ workspaceId: 'ws_1' });
    expect(unwrap({ workspace_id: 'ws_1' }, 'project')).toEqual({ workspaceId: 'ws_1' });
  });
});
