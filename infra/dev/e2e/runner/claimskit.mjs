// What the file-claims files share (claims, claims-codex, claims-opencode, shellclaims .test.mjs): a git
// repository whose files the agents' clones start from, a model turn held until the test has seen what
// it waits for, and a tool call that must succeed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** git in cwd, as a fixed committer. */
export const git = (cwd, ...args) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd, stdio: 'pipe' });

/**
 * A repository under dir/origin holding each of files (paths under src/) with content, committed on
 * main; each of clones ({path, branch}) a clone of it checked out on its own branch. Returns origin.
 */
export function workRepo(dir, files, content, clones) {
  const origin = join(dir, 'origin');
  mkdirSync(join(origin, 'src'), { recursive: true });
  git(dir, 'init', '-q', '-b', 'main', origin);
  for (const f of files) writeFileSync(join(origin, f), content);
  git(origin, 'add', '.');
  git(origin, 'commit', '-q', '-m', 'hello');
  for (const { path, branch } of clones) {
    git(dir, 'clone', '-q', origin, path);
    git(path, 'checkout', '-q', '-b', branch);
  }
  return origin;
}

/** Turns held per task: `held(taskId)` resolves once the test calls `release(taskId)`. */
export function heldTurns() {
  const gates = new Map();
  const gate = (taskId) => {
    if (!gates.has(taskId)) {
      let open;
      const p = new Promise((done) => { open = done; });
      gates.set(taskId, { p, open });
    }
    return gates.get(taskId);
  };
  return { held: (taskId) => gate(taskId).p, release: (taskId) => gate(taskId).open() };
}

/** A tool call through an SDK client that must succeed; its structured content. */
export async function callTool(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}
