// Shared plumbing for the e2e suites: where the local stack is, its tokens, the admin CLI.
import { readFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const E2E_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = resolve(E2E_DIR, '..', '..', '..');
export const SCHEMA_DIR = resolve(REPO_ROOT, 'shared', 'mcp', 'catalog', 'schemas');
export const IN_CI = !!process.env.CI;

export const TOOL_NAMES = [
  'read_room', 'get_task', 'hand_off_task', 'accept_task', 'decline_task', 'save_checkpoint',
  'request_step', 'return_result', 'review_result', 'cancel_task', 'update_pulse',
];
export const SEED_TOOLS = ['request_step', 'return_result', 'update_pulse'];
export const PROJECT = 'website-v2';

export function localJsonPath() {
  if (process.env.PRICKLE_LOCAL_JSON) return resolve(process.env.PRICKLE_LOCAL_JSON);
  const stateDir = process.env.PRICKLE_STATE_DIR || resolve(REPO_ROOT, '.prickle');
  return resolve(stateDir, 'local.json');
}

/** The Chromium the page tests drive. */
export const CHROMIUM = process.env.PRICKLE_CHROMIUM || '/usr/bin/chromium';

/** A program a suite needs, for loadStack: Chromium, and the agent CLIs npm installs. */
export const CHROMIUM_NEED = { path: CHROMIUM, name: 'Chromium', how: 'apt-get install chromium' };
export const npmNeed = (path, name = basename(path)) => ({ path, name, how: 'npm ci in infra/dev/e2e' });

/**
 * The running local stack, or null (with the reason in `skipReason`) when none is up; with the stack
 * up, the first of `needs` (programs the suite runs) that is missing is the reason. In CI neither is
 * ever a skip: a missing program fails here, a missing stack in skipUnlessStack (callers pass
 * `skipReason` to node:test's `skip` through it).
 */
export async function loadStack(...needs) {
  const found = await findStack();
  if (found.skipReason) return found;
  for (const { path, name, how } of needs) {
    if (!existsSync(path)) {
      const skipReason = `no ${name} at ${path} (${how})`;
      if (IN_CI) throw new Error(`CI: ${skipReason}`);
      return { stack: found.stack, skipReason };
    }
  }
  return found;
}

async function findStack() {
  const path = localJsonPath();
  if (!existsSync(path)) return { stack: null, skipReason: `no local stack: ${path} not found (run infra/dev/e2e/run.sh or \`go run ./infra/dev/local\`)` };
  const local = JSON.parse(readFileSync(path, 'utf8'));
  for (const agent of ['alice/writer', 'alice/builder', 'bob/reviewer', 'carol/tester']) {
    if (!local.tokens?.[agent]) throw new Error(`${path}: no token for ${agent}`);
  }
  // A busy stack answers late, a stopped one not at all: try for up to 30 s before calling it down.
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      await fetch(local.mcp_url, { method: 'GET', signal: AbortSignal.timeout(5000) });
      break;
    } catch (e) {
      if (Date.now() >= until) return { stack: null, skipReason: `local stack not reachable at ${local.mcp_url}: ${e.message}` };
      await new Promise((done) => setTimeout(done, 1000));
    }
  }
  return { stack: { url: local.mcp_url, tokens: local.tokens, local, path }, skipReason: null };
}

/** skip option for node:test: skip locally when the stack is down, fail in CI. */
export function skipUnlessStack(skipReason) {
  if (!skipReason) return false;
  if (IN_CI) throw new Error(`CI: ${skipReason}`);
  return skipReason;
}

/**
 * Clears loopback's sign-in counts for these owners, as an operator would (prickle-admin reopen-signin):
 * the runner suite signs the same owner in more often in one 15-minute window than one address may ask
 * for one name, and whether its sign-ins fell into one window or two depended on the clock. The limits
 * themselves are tested on their own (shared/auth/session, the pages and oauth suites).
 */
export function allowSignIn(...owners) {
  for (const owner of owners) admin(['reopen-signin', '--owner', owner, '--client', '127.0.0.1']);
}

/** Asks for a sign-in link for owner from loopback, as the sign-in form does, its counts cleared first. */
export async function askSignInLink(base, owner) {
  allowSignIn(owner);
  return fetch(`${base}/signin`, { method: 'POST', body: new URLSearchParams({ owner }) });
}

/**
 * Run the admin CLI (`go run ./infra/cmd/prickle-admin <args> --local`, or the prebuilt binary in
 * $PRICKLE_ADMIN) and return its stdout parsed as JSON (last JSON line) or as text.
 */
export function admin(args) {
  const [cmd, argv] = process.env.PRICKLE_ADMIN
    ? [process.env.PRICKLE_ADMIN, [...args, '--local']]
    : ['go', ['run', './infra/cmd/prickle-admin', ...args, '--local']];
  let out;
  try {
    out = execFileSync(cmd, argv, { cwd: REPO_ROOT, env: process.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  } catch (e) {
    throw new Error(`admin ${args.join(' ')} failed (exit ${e.status}): ${e.stderr || e.message}`);
  }
  const lines = out.trim().split('\n').reverse();
  for (const line of lines) {
    const l = line.trim();
    if (l.startsWith('{')) { try { return JSON.parse(l); } catch { /* not JSON */ } }
  }
  try { return JSON.parse(out); } catch { return out.trim(); }
}

export function readSchema(tool, kind) {
  return JSON.parse(readFileSync(resolve(SCHEMA_DIR, `${tool}.${kind}.json`), 'utf8'));
}

export const uniq = (prefix = 'e2e') => `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Poll fn until it returns a truthy value or the deadline passes; returns the last value. */
export async function eventually(fn, { timeoutMs = 15000, intervalMs = 250 } = {}) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > end) return last;
    await sleep(intervalMs);
  }
}
