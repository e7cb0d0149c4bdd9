/** Runs a Node script of `scripts/` (with `args`) as a child process; resolves with its exit code and all it printed. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export function runScript(name: string, args: string[] = []): Promise<{ code: number | null; output: string }> {
  const script = fileURLToPath(new URL(`../../../scripts/${name}`, import.meta.url));
  // Asynchronous, so the other test files of this worker's project keep running meanwhile.
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (exitCode) => resolve({ code: exitCode, output }));
  });
}
