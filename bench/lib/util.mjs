/**
 * Helpers shared by the benchmark scripts: latency statistics at sub-millisecond resolution,
 * child processes (start, wait for a line, stop), the resident set size of a process, and a
 * small JSON HTTP client (keep-alive) for set-up calls.
 */
import { createHash, hash } from 'node:crypto';
import { fork, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import http from 'node:http';

/** Lowercase hex SHA-256 of `text`: the one-shot `hash` where Node has it (≥ 20.12), as the core's default uses. */
export const sha256Hex = typeof hash === 'function' ? (text) => hash('sha256', text, 'hex') : (text) => createHash('sha256').update(text).digest('hex');

/** Percentile `p` (0–100) of an ascending array of numbers (nearest rank); NaN when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** `{ count, mean, p50, p90, p99, max }` of latencies in ms (kept at µs resolution). */
export function summarize(values) {
  const sorted = Float64Array.from(values).sort();
  const round = (v) => (Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null);
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    mean: round(sorted.length ? sum / sorted.length : Number.NaN),
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.length ? sorted[sorted.length - 1] : Number.NaN),
  };
}

/**
 * CPU time process `pid` has used so far (user + system, all threads), in µs, from
 * /proc/<pid>/stat (clock ticks, assumed 100 per second as on Linux); null when unreadable.
 */
export function cpuTimeUsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

/** Resident set size of process `pid` in bytes (VmRSS of /proc/<pid>/status); null when unreadable. */
/** The parts of a process's RSS (`/proc/<pid>/status`: anonymous, file-backed, shared memory), bytes; null when unreadable. */
export function rssPartsOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { anon: kib('RssAnon'), file: kib('RssFile'), shmem: kib('RssShmem') };
  } catch {
    return null;
  }
}

export function rssOf(pid) {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** This process's file-descriptor limits `{ soft, hard }` (Linux /proc/self/limits; Infinity for unlimited), or null elsewhere. */
export function fdLimits() {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const [soft, hard] = line.slice('Max open files'.length).trim().split(/\s+/).map((v) => (v === 'unlimited' ? Infinity : Number(v)));
    return { soft, hard };
  } catch {
    return null;
  }
}

/**
 * The command and arguments that run `node <args>`: with `fdLimit`, through `sh -c 'ulimit -n …;
 * exec node …'` so the child may open that many files even when this process's soft limit is
 * lower (the hard limit must allow it; see {@link fdLimits}). `exec` keeps the pid and the IPC channel.
 */
function nodeCommand(args, fdLimit) {
  if (!fdLimit) return [process.execPath, args];
  return ['/bin/sh', ['-c', `ulimit -n ${Number(fdLimit)} && exec "$0" "$@"`, process.execPath, ...args]];
}

/**
 * Starts `node <args>` and resolves once a stdout line matches `ready` (with the match), or
 * rejects when the process exits first or `timeoutMs` passes. stderr (and stdout, when
 * `echo`) is kept for error messages. With `stdoutFile`, the child writes its stdout straight
 * to that file (as a deployment logging to a file does; no pipe through this process) and the
 * file is watched for `ready`.
 */
export function startNode(args, { env = {}, ready, timeoutMs = 60_000, execArgv = [], cwd, stdoutFile, fdLimit } = {}) {
  if (stdoutFile !== undefined) return startNodeToFile(args, { env, ready, timeoutMs, execArgv, cwd, stdoutFile, fdLimit });
  const child = spawn(...nodeCommand([...execArgv, ...args], fdLimit), {
    cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { output = (output + d).slice(-8000); });
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')}: not ready after ${timeoutMs} ms\n${output}`));
    }, timeoutMs);
    const onData = (d) => {
      buffer += d;
      output = (output + d).slice(-8000);
      const match = ready.exec(buffer);
      if (match) {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        child.stdout.resume();
        child.off('exit', onExit);
        resolve({ child, match, output: () => output });
      }
    };
    const onExit = (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited (${code ?? signal}) before it was ready:\n${output}`));
    };
    child.stdout.on('data', onData);
    child.once('exit', onExit);
  });
}

function startNodeToFile(args, { env, ready, timeoutMs, execArgv, cwd, stdoutFile, fdLimit }) {
  const fd = openSync(stdoutFile, 'w');
  const child = spawn(...nodeCommand([...execArgv, ...args], fdLimit), { cwd, env: { ...process.env, ...env }, stdio: ['ignore', fd, 'pipe'] });
  closeSync(fd);
  let errors = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { errors = (errors + d).slice(-8000); });
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const onExit = (code, signal) => {
      clearInterval(timer);
      reject(new Error(`${args.join(' ')} exited (${code ?? signal}) before it was ready:\n${errors}`));
    };
    const timer = setInterval(() => {
      const match = ready.exec(readFileSync(stdoutFile, 'utf8'));
      if (match) {
        clearInterval(timer);
        child.off('exit', onExit);
        resolve({ child, match, output: () => errors });
      } else if (Date.now() > deadline) {
        clearInterval(timer);
        child.kill('SIGKILL');
        reject(new Error(`${args.join(' ')}: not ready after ${timeoutMs} ms\n${errors}`));
      }
    }, 50);
    child.once('exit', onExit);
  });
}

/** Sends SIGTERM and waits for the exit (SIGKILL after `graceMs`). */
export function stopChild(child, graceMs = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Forks `script` with `message` as its job (`fdLimit`: see `nodeCommand`); resolves with the one result it sends back. */
export function runChild(script, message, { execArgv = [], env = {}, fdLimit } = {}) {
  return new Promise((resolve, reject) => {
    const options = { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] };
    const child = fdLimit ? spawn(...nodeCommand([...execArgv, script], fdLimit), options) : fork(script, [], { ...options, execArgv });
    let result;
    child.on('message', (m) => {
      if (m && m.type === 'result') result = m.result;
      if (m && m.type === 'error') result = { __error: m.error };
    });
    child.send(message);
    child.on('error', reject);
    child.on('exit', (code) => {
      if (result && result.__error) reject(new Error(`${script}: ${result.__error}`));
      else if (result !== undefined) resolve(result);
      else reject(new Error(`${script} exited with ${code} without a result`));
    });
  });
}

/** The job of a forked child: calls `fn(job)` and sends its result (or error) to the parent. */
export function childMain(fn) {
  process.once('message', async (job) => {
    try {
      const result = await fn(job);
      process.send({ type: 'result', result }, () => process.exit(0));
    } catch (error) {
      process.send({ type: 'error', error: error?.stack ?? String(error) }, () => process.exit(1));
    }
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/**
 * One JSON request: `{ status, body, text }` (body parsed when JSON). `key` becomes the bearer token.
 * @throws when `expect` is given and the status differs.
 */
export function request(base, method, path, { key, body, expect } = {}) {
  const url = new URL(path, base);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method, agent,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
      },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed = text;
        try { parsed = text ? JSON.parse(text) : undefined; } catch { /* not JSON */ }
        if (expect !== undefined && res.statusCode !== expect) {
          reject(new Error(`${method} ${path}: expected ${expect}, got ${res.statusCode}: ${text.slice(0, 500)}`));
        } else {
          resolve({ status: res.statusCode, body: parsed, text });
        }
      });
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** Closes the keep-alive sockets of {@link request}. */
export function closeRequests() {
  agent.destroy();
}
