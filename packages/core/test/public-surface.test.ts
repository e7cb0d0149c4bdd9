/**
 * The public surface of every published package (`scripts/public-surface.mjs`): each entry point
 * exports exactly the names of the committed snapshot `scripts/public-surface.json`, read from the
 * sources here (no build needed; the packaging check reads the built `dist` the same way). A name
 * exported by accident, or one that vanished, fails with the entry point, the name and how to
 * update the snapshot deliberately.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { runScript } from './run-script.js';

type Surface = Record<string, { values: string[]; types: string[] }>;
const snapshotFile = fileURLToPath(new URL('../../../scripts/public-surface.json', import.meta.url));
const snapshot = JSON.parse(readFileSync(snapshotFile, 'utf8')) as Surface;
const scratch = mkdtempSync(join(tmpdir(), 'inbox-kit-surface-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

it('every entry point of every published package exports exactly the names of the snapshot', { timeout: 120_000 }, async () => {
  const { code, output } = await runScript('public-surface.mjs', ['--from=src']);
  expect(code, output).toBe(0);
  expect(output).toContain('every entry point exports exactly the names of the snapshot');
  expect(Object.keys(snapshot)).toEqual(expect.arrayContaining([
    '@inbox-kit/core', '@inbox-kit/core/http', '@inbox-kit/core/memory', '@inbox-kit/core/testing', '@inbox-kit/storage-kysely',
    '@inbox-kit/storage-kysely/sqlite', '@inbox-kit/storage-kysely/postgres', '@inbox-kit/http-fastify', '@inbox-kit/http-fastify/server',
    '@inbox-kit/http-hono', '@inbox-kit/sdk', '@inbox-kit/model-anthropic', '@inbox-kit/model-anthropic/testing',
  ]));
});

it('internal helpers are not part of the core entry point', () => {
  const core = snapshot['@inbox-kit/core']!;
  for (const name of ['queryInt', 'measurePayload', 'filterFingerprint', 'encodeCursor', 'decodeCursor', 'writeTurn', 'loadSessionAccess', 'loadProjectAccess', 'parseOrThrow']) {
    expect(core.values, name).not.toContain(name);
  }
  expect(core.types).not.toContain('SessionAccess');
  expect(core.values).toEqual(expect.arrayContaining(['PlatformService', 'ProjectInboxService', 'SessionRuntimeService', 'ManagedSessionsService']));
});

it('every name of the HTTP contract (`@inbox-kit/core/http`) is in the README table adapter authors read', () => {
  // packages/core/README.md says what an entry point does not list is internal.
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
  const start = readme.indexOf('`@inbox-kit/core/http` is the framework-neutral HTTP contract');
  expect(start).toBeGreaterThanOrEqual(0);
  const table = readme.slice(start, readme.indexOf('\n## ', start));
  const http = snapshot['@inbox-kit/core/http']!;
  const unlisted = [...http.values, ...http.types].filter((name) => !new RegExp(`\`[^\`]*\\b${name}\\b[^\`]*\``).test(table));
  expect(unlisted).toEqual([]);
});

it('an export missing from the snapshot (an accidental new name) fails, naming it and how to update the snapshot', { timeout: 120_000 }, async () => {
  // The code exports what the committed snapshot lists; a snapshot without two of those names is
  // what the check sees when the code gains them.
  const older: Surface = structuredClone(snapshot);
  older['@inbox-kit/core']!.values = older['@inbox-kit/core']!.values.filter((n) => n !== 'PlatformService');
  older['@inbox-kit/core/http']!.types = older['@inbox-kit/core/http']!.types.filter((n) => n !== 'HttpRoute');
  const file = join(scratch, 'older.json');
  writeFileSync(file, JSON.stringify(older));
  const { code, output } = await runScript('public-surface.mjs', ['--from=src', `--snapshot=${file}`]);
  expect(code).toBe(1);
  expect(output).toContain('@inbox-kit/core: the exported names differ from the snapshot\n  added values: PlatformService');
  expect(output).toContain('@inbox-kit/core/http: the exported names differ from the snapshot\n  added types: HttpRoute');
  expect(output).toContain('node scripts/public-surface.mjs --update');
  expect(output).not.toContain('@inbox-kit/sdk:');
});
