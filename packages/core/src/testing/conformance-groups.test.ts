// The conformance kit grouped by sub-port: a store may declare sub-ports it does not implement,
// and the checks that need them are reported as skipped with the reason while the rest run. Each
// check's `requires` is proved complete: the check passes on a store whose other sub-ports throw.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { reshaped } from '../../test/fixtures/partial-store/reshaped.js';
import {
  STORE_PORT_GROUPS, STORE_PORT_METHODS, planStoreConformance, storeConformanceChecks, type StorePortGroup,
} from './conformance.js';
import { memoryConformanceSubject } from './conformance-memory.js';

const fixture = fileURLToPath(new URL('../../test/fixtures/partial-store', import.meta.url));
const vitest = fileURLToPath(new URL('../../../../node_modules/vitest/vitest.mjs', import.meta.url));

describe('planStoreConformance', () => {
  const needsRuns = storeConformanceChecks.filter((c) => c.requires.includes('runs')).map((c) => c.name);

  it('skips exactly the checks that need an unsupported sub-port, with the reason', () => {
    expect(needsRuns.length).toBeGreaterThanOrEqual(3);
    const plan = planStoreConformance(storeConformanceChecks, { runs: 'this store keeps no Runs' });
    expect(plan.filter((p) => p.skip !== undefined).map((p) => p.check.name)).toEqual(needsRuns);
    for (const p of plan.filter((q) => q.skip !== undefined)) expect(p.skip).toBe('the store declares "runs" (this store keeps no Runs) unsupported');
    expect(plan.filter((p) => p.skip === undefined)).toHaveLength(storeConformanceChecks.length - needsRuns.length);
    expect(planStoreConformance(storeConformanceChecks, ['runs', 'idempotency']).find((p) => p.check.group === 'idempotency')?.skip)
      .toBe('the store declares "idempotency" unsupported');
    expect(planStoreConformance(storeConformanceChecks).every((p) => p.skip === undefined)).toBe(true);
  });

  it('refuses an unknown sub-port name instead of skipping nothing', () => {
    expect(() => planStoreConformance(storeConformanceChecks, ['run' as StorePortGroup])).toThrow(/unknown sub-port "run".*one of: identity, projects/);
  });

  it('groups every check under a sub-port (or transactions) and lists every sub-port', () => {
    expect(STORE_PORT_GROUPS).toEqual(['identity', 'projects', 'inbox', 'events', 'sessions', 'runs', 'idempotency', 'agents']);
    for (const check of storeConformanceChecks) {
      expect(['transactions', ...STORE_PORT_GROUPS]).toContain(check.group);
      if (check.group !== 'transactions') expect(check.requires).toContain(check.group);
    }
  });
});

describe('each check needs only the sub-ports it requires', () => {
  for (const check of storeConformanceChecks) {
    it(check.name, async () => {
      const subject = await memoryConformanceSubject();
      const others = STORE_PORT_GROUPS.filter((group) => !check.requires.includes(group));
      const store = reshaped(subject.store, others, (method) => () => {
        throw new Error(`${method} was called, but the check does not require its sub-port`);
      });
      try {
        await check.run({ store, raw: subject.raw });
      } finally {
        await subject.close();
      }
    });
  }
});

describe('a store that declares "runs" unsupported', () => {
  // Run in a child vitest (its own report), so this suite itself reports no skipped test.
  it('reports the checks needing Runs as skipped (reason: the plan test above) and passes every other check', { timeout: 120_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbox-kit-partial-store-'));
    try {
      const report = join(dir, 'vitest.json');
      const r = spawnSync(process.execPath, [vitest, 'run', '--root', fixture, '--config', join(fixture, 'vitest.config.mjs'), '--reporter=json', `--outputFile=${report}`], { cwd: fixture, encoding: 'utf8' });
      expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
      const json = JSON.parse(readFileSync(report, 'utf8')) as { testResults: { assertionResults: { title: string; status: string }[] }[] };
      const states = new Map(json.testResults.flatMap((f) => f.assertionResults.map((a) => [a.title, a.status] as const)));
      const expected = new Map(storeConformanceChecks.map((c) => [c.name, c.requires.includes('runs') ? 'skipped' : 'passed']));
      expect(states).toEqual(expected);
      expect([...expected.values()].filter((v) => v === 'skipped').length).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
