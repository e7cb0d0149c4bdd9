/**
 * The size limits of issue 29 over `packages/*\/src` (scripts/source-limits.mjs): no file over 450
 * lines, no function of any kind over 150 lines. The scanner's own rules are checked on small
 * sources first, then every package source is scanned; the failure names each file and function.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain .mjs script without types
import { exemptionFor, findViolations, formatViolation, lineCount, scanSource, TEMPORARY_EXEMPTIONS } from '../source-limits.mjs';

type Violation = { kind: 'file' | 'function'; name?: string; line?: number; lines: number; path?: string; exempt?: string };
const small = { file: 10, fn: 3 };
const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');

describe('the scanner', () => {
  it('counts lines as an editor shows them', () => {
    expect(lineCount('')).toBe(0);
    expect(lineCount('a')).toBe(1);
    expect(lineCount('a\n')).toBe(1);
    expect(lineCount('a\nb')).toBe(2);
  });

  it('flags a file over the file limit, and not one at it', () => {
    expect(scanSource('x;\n'.repeat(10), 'a.ts', small)).toEqual([]);
    expect(scanSource('x;\n'.repeat(11), 'a.ts', small)).toEqual([{ kind: 'file', lines: 11 }]);
  });

  it('measures every kind of function from its first token to its last, doc comment excluded', () => {
    const src = [
      '/** docs',
      ' * more docs */',
      'function declared() {', body(2), '}', // 4 lines: over
      'function fits() {', body(1), '}', // 3 lines: at the limit
      'const arrow = () => {', body(2), '};',
      'const expr = function () {', body(2), '};',
      'class K {',
      '  constructor() {', body(2), '  }',
      '  method() {', body(2), '  }',
      '  get value() {', body(2), '    return 1;', '  }',
      '  set value(v: number) {', body(2), '  }',
      '}',
      'const o = { m() {', body(2), '} };',
      "describe('topic', () => {", body(2), '});',
      'function overload(a: string): void;',
    ].join('\n');
    const found = (scanSource(src, 'a.ts', { file: 1000, fn: 3 }) as Violation[]).map((v) => [v.name, v.line, v.lines]);
    expect(found).toEqual([
      ['declared', 3, 4],
      ['arrow', 10, 4],
      ['expr', 14, 4],
      ['constructor', 19, 4],
      ['method', 23, 4],
      ['get value', 27, 5],
      ['set value', 32, 4],
      ['m', 37, 4],
      ["callback of describe 'topic'", 41, 4],
    ]);
  });

  it('measures nested callbacks on their own, and formats a violation with its place and limit', () => {
    const src = ["describe('outer', () => {", "  it('inner', () => {", body(3), '  });', '});'].join('\n');
    const found = scanSource(src, 'a.test.ts', { file: 1000, fn: 4 }) as Violation[];
    expect(found.map((v) => v.name)).toEqual(["callback of describe 'outer'", "callback of it 'inner'"]);
    expect(formatViolation({ path: 'packages/x/src/a.ts', ...found[0]! })).toBe("packages/x/src/a.ts:1 callback of describe 'outer' — 7 lines (limit 150)");
    expect(formatViolation({ path: 'packages/x/src/a.ts', kind: 'file', lines: 500, exempt: 'T1 (kit)' })).toBe('packages/x/src/a.ts — 500 lines (limit 450) [temporarily exempt: T1 (kit)]');
  });

  it('exempts nothing: the HTTP kit\'s suites are under the limits like every other file', () => {
    expect(exemptionFor('packages/core/src/testing/http-suites-events.ts')).toBeUndefined();
    expect(exemptionFor('packages/core/src/testing/http-suites-hostile.ts')).toBeUndefined();
    expect(exemptionFor('packages/core/src/testing/http-world.ts')).toBeUndefined();
    expect(exemptionFor('packages/core/src/http/routes.ts')).toBeUndefined();
    expect(exemptionFor('packages/core/src/platform/service.ts')).toBeUndefined();
    expect(exemptionFor('packages/http-hono/src/app.ts')).toBeUndefined();
    expect(exemptionFor('packages/core/src/sessions/run-supervisor.ts')).toBeUndefined();
  });
});

describe('packages/*/src', () => {
  it('has no file over 450 lines and no function over 150 lines', () => {
    const failing = (findViolations() as Violation[]).filter((v) => !v.exempt).map(formatViolation);
    expect(failing, `over the limits:\n${failing.join('\n')}`).toEqual([]);
  }, 60_000); // parses every source file: a few seconds on a loaded 2-core machine

  it('keeps no temporary exemption', () => {
    expect(TEMPORARY_EXEMPTIONS).toEqual([]);
  });
});
