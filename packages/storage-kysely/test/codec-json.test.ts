// `Codec.json` (src/store/rows.ts) writes a row's record as JSON text without `JSON.stringify` of
// the record (PostgreSQL's `listInboxItemsJson`): its text must be exactly what `JSON.stringify`
// of the decoded record writes, whatever the strings hold (quotes, backslashes, control
// characters, surrogate pairs, lone surrogates, U+2028) and whatever the numbers are.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ITEM } from '../src/store/rows.js';

/** A `select` row of an inbox item as a driver hands it: numbers maybe as text (int8), the payload as its stored text. */
function rowOf(over: Record<string, unknown>): Record<string, unknown> {
  return {
    id: 'pinbox_1', workspace_id: 'ws_1', project_id: 'proj_1', account_id: 'acc_1', sender_account_id: 'acc_2',
    type: 'derived_output.review', title: 'A title', payload: '{"a":1}', source_event_id: null, source_session_id: null,
    source_floor_id: null, source_page_id: null, status: 'pending', decided_by_account_id: null, decided_at: null,
    created_at: '1764000000000', updated_at: 1764000000001, ...over,
  };
}

/** What `JSON.stringify` writes for the record the row holds (`decode` of a copy: it converts in place). */
const expected = (row: Record<string, unknown>): string => JSON.stringify(ITEM.decode({ ...row }));

describe('Codec.json: the record as JSON.stringify writes it', () => {
  const tricky = ['', 'plain', 'say "hi"', 'back\\slash', 'tab\tand\nnewline', '\u0000\u001f', '\u007f del', 'line\u2028sep\u2029',
    '候选摘要待确认', 'emoji 😀 pair', 'lone \ud800 high', 'lone \udc00 low', '</script>', '\\u0041'];

  it.each(tricky)('a text field holding %j', (title) => {
    const row = rowOf({ title, type: title });
    expect(ITEM.json(row)).toBe(expected(row));
  });

  it('numbers read as text or numbers, nulls and a stored payload', () => {
    for (const over of [{ decided_at: '1764000000005', decided_by_account_id: 'acc_1' }, { created_at: 0, updated_at: '9007199254740991' }, { payload: '{"k":[1.5,true,null,{"x":"y"}]}' }]) {
      const row = rowOf(over);
      expect(ITEM.json(row)).toBe(expected(row));
    }
  });

  it('a JSON column passes as its stored text (another writer\'s formatting too): the same value', () => {
    const row = rowOf({ payload: '{ "k" : [1.5, true, null, {"x": "\\u2028"}] }' });
    expect(ITEM.json(row)).toContain('"payload":{ "k" : [1.5, true, null, {"x": "\\u2028"}] },');
    expect(JSON.parse(ITEM.json(row))).toEqual(JSON.parse(expected(row)));
  });

  it('any string in any text field (property)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.option(fc.string({ unit: 'binary' })), (title, type, source) => {
      const row = rowOf({ title, type, source_page_id: source });
      expect(ITEM.json(row)).toBe(expected(row));
    }));
  });
});
