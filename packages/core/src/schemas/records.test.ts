// recordFields: the storage kind of every record field, read from the schema (the one place a
// record's fields are written), so adapters derive their columns and mappings from it.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { floorSchema, projectEventSchema, recordFields, sessionSchema } from './records.js';

describe('recordFields', () => {
  it('gives each field of a record schema its kind and nullability, in declaration order', () => {
    expect(recordFields(sessionSchema)).toEqual([
      { name: 'id', kind: 'text', nullable: false },
      { name: 'workspace_id', kind: 'text', nullable: false },
      { name: 'project_id', kind: 'text', nullable: true },
      { name: 'title', kind: 'text', nullable: true },
      { name: 'created_by_account_id', kind: 'text', nullable: false },
      { name: 'created_at', kind: 'number', nullable: false },
      { name: 'agent', kind: 'json', nullable: true },
      { name: 'environment_id', kind: 'text', nullable: true },
      { name: 'metadata', kind: 'json', nullable: false },
      { name: 'updated_at', kind: 'number', nullable: false },
      { name: 'archived_at', kind: 'number', nullable: true },
    ]);
  });

  it('reads enums and literals as text, JSON values and objects as json', () => {
    const kinds = (schema: z.ZodObject) => Object.fromEntries(recordFields(schema).map((f) => [f.name, f.kind]));
    expect(kinds(floorSchema)).toMatchObject({ state: 'text', number: 'number' });
    expect(kinds(projectEventSchema)).toMatchObject({ visibility: 'text', source: 'text', payload: 'json', sequence: 'number' });
  });

  it('a field added to a schema is a field of the record, with no other edit', () => {
    const extended = sessionSchema.extend({ note: z.string().nullable() });
    expect(recordFields(extended).at(-1)).toEqual({ name: 'note', kind: 'text', nullable: true });
  });
});
