/**
 * scripts/setup.mjs: each step says what it does and roughly how long it takes, hides the
 * command's output when it succeeds, and prints that output, then the failing command and its exit
 * code, when it fails.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain .mjs script without types
import { runStep, setupSteps } from '../setup.mjs';

/** A console stand-in that records what the step printed. */
function recorder() {
  const lines: Array<{ stream: 'out' | 'err'; text: string }> = [];
  return {
    lines,
    out: { log: (text: string) => lines.push({ stream: 'out', text }), error: (text: string) => lines.push({ stream: 'err', text }) },
  };
}

const noisy = (exitCode: number) => ({
  cmd: process.execPath,
  args: ['-e', `console.log('CC(target) sqlite3.o'); console.error('gyp info ok'); process.exit(${exitCode})`],
});

describe('runStep', () => {
  it('announces the step with its estimate, hides the output of a step that succeeds and says how long it took', async () => {
    const r = recorder();
    const code = await runStep({ label: 'compiling things', estimate: 'about 2 minutes', ...noisy(0), out: r.out });
    expect(code).toBe(0);
    expect(r.lines[0]).toEqual({ stream: 'out', text: 'setup: compiling things (about 2 minutes)…' });
    expect(r.lines.at(-1)?.text).toMatch(/^setup: done \(\d+ s\)$/);
    expect(r.lines.map((l) => l.text).join('\n')).not.toMatch(/sqlite3\.o|gyp info/);
  });

  it('prints the captured output, then the command and its exit code, when the step fails', async () => {
    const r = recorder();
    const step = noisy(3);
    const code = await runStep({ label: 'compiling things', estimate: 'about 2 minutes', ...step, out: r.out });
    expect(code).toBe(3);
    const errors = r.lines.filter((l) => l.stream === 'err').map((l) => l.text);
    expect(errors[0]).toContain('CC(target) sqlite3.o');
    expect(errors[0]).toContain('gyp info ok');
    expect(errors.at(-1)).toBe(`setup: ${[step.cmd, ...step.args].join(' ')} failed with exit code 3 (its output is above)`);
  });

  it('a command that cannot start fails the step with its error', async () => {
    const r = recorder();
    const code = await runStep({ label: 'x', estimate: 'y', cmd: '/nonexistent/inbox-kit-command', args: [], out: r.out });
    expect(code).toBe(1);
    expect(r.lines.filter((l) => l.stream === 'err').map((l) => l.text).join('\n')).toMatch(/ENOENT/);
  });
});

describe('setupSteps', () => {
  it('installs (frozen lockfile) then builds, and warns about the compile on a first install only', () => {
    const first = setupSteps({ frozen: true, firstInstall: true });
    expect(first.map((s: { label: string }) => s.label)).toEqual(['installing dependencies with pnpm 12.4.2', 'building the packages']);
    expect(first[0].args).toContain('--frozen-lockfile');
    expect(first[0].estimate).toMatch(/2–3 minutes.*better-sqlite3/);
    const again = setupSteps({ frozen: false, firstInstall: false });
    expect(again[0].args).not.toContain('--frozen-lockfile');
    expect(again[0].estimate).toBe('a few seconds when nothing changed');
  });
});
