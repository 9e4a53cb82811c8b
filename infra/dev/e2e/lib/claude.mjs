// Claude Code (pinned in package.json) as the claude suites start it: where it is installed, and one
// bounded run.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { E2E_DIR } from './env.mjs';

export const CLAUDE = resolve(E2E_DIR, 'node_modules', '.bin', 'claude');

/** Runs Claude Code once in `cwd` with `env`, killed after `timeoutMs`; resolves with its exit and output. */
export function runClaude(args, { cwd, env, timeoutMs }) {
  return new Promise((done, fail) => {
    const child = spawn(CLAUDE, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); fail(e); });
    child.on('close', (code, signal) => { clearTimeout(timer); done({ code, signal, stdout, stderr }); });
  });
}
