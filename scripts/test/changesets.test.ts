/**
 * The pending changesets make a release plan (README "Contributing and releases"): the real
 * `changeset status` CLI assembles them as `changeset version` would, and fails on what would
 * stop a release — a changeset naming a package that does not exist, or one mixing a package the
 * config ignores (the private demo, the bench) with published ones.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = join(root, '.changeset');
const ignored: string[] = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).ignore;

/** The package names in each pending changeset's front matter. */
function pending(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.md') && f !== 'README.md')) {
    const front = /^---\n([\s\S]*?)\n---/.exec(readFileSync(join(dir, file), 'utf8'))?.[1] ?? '';
    out.set(file, [...front.matchAll(/^"([^"]+)":\s*(?:major|minor|patch)\s*$/gm)].map((m) => m[1]!));
  }
  return out;
}

describe('pending changesets', () => {
  it('never mix an ignored package with published ones (changesets refuses the whole release)', () => {
    const mixed = [...pending()].filter(([, names]) => names.some((n) => ignored.includes(n)) && names.some((n) => !ignored.includes(n)));
    expect(mixed.map(([file]) => file), `split these: a changeset names either ${ignored.join(' / ')} or published packages`).toEqual([]);
  });

  it('assemble into a release plan with the changesets CLI', () => {
    const bin = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'changeset.cmd' : 'changeset');
    const out = execFileSync(bin, ['status'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(out).toMatch(/Packages to be bumped|NO packages to be bumped/);
  }, 60_000);
});
