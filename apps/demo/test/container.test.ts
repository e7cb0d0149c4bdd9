/**
 * The container recipe (Dockerfile, compose.yaml, .nvmrc) says what the README documents, and its
 * start command works: there is no Docker engine here, so the image's CMD runs as a process in the
 * image's WORKDIR (mapped from /app to the repository) with the image's environment — only HOST,
 * PORT and DATA_DIR are pointed at loopback, a free port and a temp folder — and must serve, then
 * stop on SIGTERM (`docker stop`) with exit status 0. The image's HEALTHCHECK command (liveness,
 * `/health`) and compose.yaml's health check of the demo (readiness, `/ready`) run as processes
 * too: exit 0 while it serves, 1 once it is gone. Needs the built demo.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { stopWhenFileEnds, waitUntil } from './demo-process.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** The instructions of a Dockerfile, continuation lines joined, comments dropped. */
function instructions(dockerfile: string): Array<{ op: string; args: string }> {
  return dockerfile.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
    .map((l) => ({ op: l.split(/\s+/)[0]!.toUpperCase(), args: l.slice(l.split(/\s+/)[0]!.length).trim() }));
}

const image = (() => {
  const steps = instructions(read('Dockerfile'));
  const from = steps.filter((s) => s.op === 'FROM').at(-1)!.args;
  const workdir = steps.filter((s) => s.op === 'WORKDIR').at(-1)!.args;
  const cmd = JSON.parse(steps.find((s) => s.op === 'CMD')!.args) as string[];
  const healthcheck = steps.find((s) => s.op === 'HEALTHCHECK')!.args;
  const healthcheckCmd = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD ') + 4)) as string[];
  const env: Record<string, string> = {};
  for (const s of steps.filter((x) => x.op === 'ENV')) for (const [, k, v] of s.args.matchAll(/(\w+)=(\S+)/g)) env[k!] = v!;
  return { from, workdir, cmd, env, healthcheck, healthcheckCmd };
})();

/** compose.yaml's health check command of the demo service (`test: ["CMD", …]`). */
const composeHealthcheck = (() => {
  const compose = read('compose.yaml');
  const demo = compose.slice(compose.indexOf('\n  demo:'));
  return (JSON.parse(/healthcheck:\n\s+test: (\[.*\])/.exec(demo)![1]!) as string[]).slice(1);
})();

/** Runs a health-check command (`node -e …`) as Docker would in the container; resolves with its exit code. */
function runHealthcheck(command: string[], env: Record<string, string>): Promise<number | null> {
  expect(command[0]).toBe('node');
  const child = spawn(process.execPath, command.slice(1), { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' });
  return new Promise((r) => child.on('close', (code) => r(code)));
}
const readme = read('README.md');
const deployment = readme.slice(readme.indexOf('## Deployment'), readme.indexOf('\n## ', readme.indexOf('## Deployment') + 3));

describe('the container recipe', () => {
  it('starts the demo with its start script, and the README documents that command and every variable the image sets', () => {
    const start = (JSON.parse(read('apps/demo/package.json')) as { scripts: { start: string } }).scripts.start;
    expect(image.cmd.join(' ')).toBe(start);
    expect(image.workdir).toBe('/app/apps/demo');
    expect(deployment).toContain(`\`${start}\``);
    expect(deployment).toContain(`\`${image.workdir}\``);
    expect(Object.keys(image.env).sort()).toEqual(['DATA_DIR', 'HOST', 'LOG_FORMAT', 'NODE_ENV', 'PORT']);
    for (const [k, v] of Object.entries(image.env)) expect(deployment).toContain(`\`${k}=${v}\``);
    // Every demo variable the image sets is in the configuration table (NODE_ENV is Node's own).
    for (const k of Object.keys(image.env).filter((k) => k !== 'NODE_ENV')) expect(readme).toMatch(new RegExp(`^\\| \`${k}\` \\|`, 'm'));
  });

  it('uses the Node major of .nvmrc and engines, and the compose file runs it on PostgreSQL', () => {
    const major = read('.nvmrc').trim();
    expect(major).toBe('20');
    expect(image.from).toMatch(new RegExp(`^node:${major}[-.]`));
    expect((JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node).toBe(`>=${major}`);
    const compose = read('compose.yaml');
    expect(compose).toMatch(/^ {2}demo:\n {4}build: \.$/m);
    expect(compose).toMatch(/image: postgres:15/);
    expect(compose).toMatch(/DATABASE_URL: postgres:\/\/inbox_kit:inbox_kit@postgres:5432\/inbox_kit/);
    expect(compose).toMatch(/- demo-data:\/data/); // the image's DATA_DIR keeps credentials.json
    expect(compose).toMatch(/- "3000:3000"/);
    expect(image.env['PORT']).toBe('3000');
  });

  it('has health checks: the image asks /health (liveness), compose asks /ready (readiness); the README says which and why', () => {
    expect(image.healthcheck).toMatch(/--interval=\d+s --timeout=\d+s --start-period=\d+s --retries=\d+\s+CMD /);
    expect(image.healthcheckCmd.join(' ')).toContain("/health'");
    expect(composeHealthcheck.join(' ')).toContain('http://127.0.0.1:3000/ready');
    expect(deployment).toContain('`HEALTHCHECK` asks `/health`');
    expect(deployment).toContain("`compose.yaml`'s health check of the demo asks\n`/ready`");
  });
});

describe("the image's start command, run without Docker", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('serves, then stops on SIGTERM with exit status 0', { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'inbox-kit-image-'));
    dirs.push(dataDir);
    const cwd = join(root, relative('/app', image.workdir));
    const [command, ...args] = image.cmd;
    expect(command).toBe('node');
    const child = spawn(process.execPath, args, {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...image.env, HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stopWhenFileEnds(child);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    try {
      await waitUntil(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(out), 'the demo to listen', 30_000);
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
      // Where the API keys are kept (printed after the listening line).
      await waitUntil(() => out.includes(`in ${join(dataDir, 'credentials.json')}`), 'the line naming credentials.json', 5_000);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      const port = new URL(url).port;
      expect(await runHealthcheck(image.healthcheckCmd, { ...image.env, PORT: port })).toBe(0);
      const compose = composeHealthcheck.map((arg) => arg.replace('127.0.0.1:3000', `127.0.0.1:${port}`));
      expect(await runHealthcheck(compose, {})).toBe(0);
      child.kill('SIGTERM');
      expect(await exited, out).toBe(0);
      expect(out.trimEnd().split('\n').at(-1), out).toBe('inbox-kit demo stopped');
      expect(await runHealthcheck(image.healthcheckCmd, { ...image.env, PORT: port })).toBe(1);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
