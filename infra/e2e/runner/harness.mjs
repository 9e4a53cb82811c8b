// What the runner suites share: the prickle-runner binary, started with a config file as the README
// shows, its JSON output lines; the scripted model of a woken run; the owner deciding in Chromium.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { eventually, E2E_DIR, REPO_ROOT } from '../lib/env.mjs';
import { toolResultsOf, resultText } from '../claude/standin.mjs';

export const CLAUDE = resolve(E2E_DIR, 'node_modules', '.bin', 'claude');
export const CHROMIUM = process.env.PRICKLE_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const RUN_WAIT_MS = 120_000;

export const freePort = () => new Promise((done, fail) => {
  const s = createServer();
  s.on('error', fail);
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => done(port)); });
});

/** The prickle-runner binary: the one run.sh built ($PRICKLE_RUNNER), else built into dir. */
export function runnerBinary(dir) {
  if (process.env.PRICKLE_RUNNER) return process.env.PRICKLE_RUNNER;
  const bin = join(dir, 'bin', 'prickle-runner');
  execFileSync('go', ['build', '-o', bin, './infra/prickle-runner'], { cwd: REPO_ROOT, stdio: 'inherit', timeout: 300_000 });
  return bin;
}

/** YAML of a plain object of strings, numbers, arrays of strings and nested objects. */
export function yaml(obj, indent = '') {
  return Object.entries(obj).map(([k, v]) => {
    const key = /^[\w-]+$/.test(k) ? k : JSON.stringify(k);
    if (Array.isArray(v)) return `${indent}${key}: [${v.map((x) => JSON.stringify(x)).join(', ')}]`;
    if (v && typeof v === 'object') return `${indent}${key}:\n${yaml(v, `${indent}  `)}`;
    return `${indent}${key}: ${typeof v === 'string' ? JSON.stringify(v) : v}`;
  }).join('\n');
}

/** The claude project entry the suites use: the pinned Claude Code, JSON output into the run's log. */
export const claudeProject = (dir) => ({ dir, template: 'claude', program: CLAUDE, args: ['--output-format', 'json'] });

/** The model's environment: Claude Code against the stand-in, no account and no network. */
export const modelEnv = (model, home) => ({ PATH: process.env.PATH, HOME: home, ANTHROPIC_BASE_URL: model.url,
  ANTHROPIC_API_KEY: 'test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ENABLE_TOOL_SEARCH: 'false' });

/**
 * Starts `prickle-runner --config <dir>/<name>.yaml` with env; collects its JSON lines. Resolves
 * once it says it is listening or pulling.
 */
export async function startRunner(bin, dir, name, config, env) {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, `${yaml(config)}\n`, { mode: 0o600 });
  mkdirSync(env.HOME || join(dir, 'home'), { recursive: true });
  const child = spawn(bin, ['--config', path], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env });
  const lines = [];
  let buf = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try { lines.push(JSON.parse(line)); } catch { lines.push({ msg: 'unparsed', line }); }
    }
  });
  child.stderr.on('data', (d) => { stderr += d; });
  // 'close', not 'exit': it comes once stdout is read to its end, so the runner's last lines are in `lines`.
  const exited = new Promise((done) => child.on('close', (code, signal) => done({ code, signal })));
  const r = {
    name, child, lines, path,
    linesFor: (msg, pred = () => true) => lines.filter((l) => l.msg === msg && pred(l)),
    /** Waits for the "run end" line of the n-th run (1-based) of taskId with reason. */
    async runEnded(taskId, reason, n = 1) {
      const ok = await eventually(() => {
        const s = r.linesFor('run start', (l) => l.task === taskId && l.reason === reason)[n - 1];
        return s && r.linesFor('run end', (l) => l.run === s.run)[0];
      }, { timeoutMs: RUN_WAIT_MS, intervalMs: 250 });
      assert.ok(ok, `${name}: run ${n} (${reason}) of ${taskId} ended; it said:\n${lines.slice(-12).map((l) => JSON.stringify(l)).join('\n')}\n${stderr}`);
      return ok;
    },
    /** SIGTERM (Ctrl-C), then waits for the exit; returns {code, signal}. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const out = await Promise.race([exited, new Promise((done) => setTimeout(() => done(null), 20000))]);
      if (!out) { child.kill('SIGKILL'); return exited; }
      return out;
    },
  };
  const up = await eventually(() => lines.find((l) => /^prickle-runner (listening|pulling)/.test(l.msg)) || child.exitCode !== null, { timeoutMs: 15000 });
  assert.ok(up && child.exitCode === null, `${name} started: ${stderr} ${JSON.stringify(lines)}`);
  return r;
}

/** The text of a conversation's first user message: the prompt the runner gave Claude Code. */
export const promptOf = (req) => {
  const first = (req.messages || []).find((m) => m.role === 'user');
  if (!first) return '';
  if (typeof first.content === 'string') return first.content;
  return (first.content || []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
};

/**
 * The model of a woken run, from the prompt the runner wrote (task id and reason): on task_routed it
 * accepts, checkpoints and tries the task's Bash call; on step_decided it tries the identical call
 * again and, if it ran, returns a result; anything else ends at once.
 */
export function wokenModel(commandFor) {
  let seq = 0;
  const toolUse = (name, input) => ({ type: 'tool_use', id: `toolu_runner_${Date.now().toString(36)}_${++seq}`, name, input });
  return (req) => {
    if (!(req.tools || []).some((t) => t.name === 'Bash')) return [{ type: 'text', text: 'Prickle stand-in.' }];
    const m = /task (\S+) \((\w+)\)/.exec(promptOf(req));
    if (!m) return [{ type: 'text', text: 'No task in the prompt.' }];
    const [, taskId, reason] = m;
    const done = (req.messages || []).filter((x) => x.role === 'assistant').flatMap((x) => (Array.isArray(x.content) ? x.content : []))
      .filter((b) => b.type === 'tool_use').length;
    const bash = { command: commandFor(taskId), description: 'Append a line to the side-effect file' };
    const last = toolResultsOf(req).at(-1);
    if (reason === 'task_routed') {
      const plan = [
        toolUse('mcp__prickle__accept_task', { task_id: taskId, note: 'Woken by prickle-runner; on it.' }),
        toolUse('mcp__prickle__save_checkpoint', { task_id: taskId, progress: 'About to append the line.', decisions: [], files_touched: [], next_steps: ['Append the line.'], open_questions: [] }),
        toolUse('Bash', bash),
      ];
      return done < plan.length ? [plan[done]] : [{ type: 'text', text: 'Waiting for my owner; ending my turn.' }];
    }
    if (reason === 'step_decided') {
      if (done === 0) return [toolUse('Bash', bash)];
      if (done === 1 && last && !last.is_error) {
        return [toolUse('mcp__prickle__return_result', { task_id: taskId, summary: 'Appended the line once.',
          evidence: [{ kind: 'test_output', summary: 'The command ran', content: resultText(last) || 'ran' }] })];
      }
      return [{ type: 'text', text: 'Done for this run.' }];
    }
    return [{ type: 'text', text: `Nothing to do for ${reason}.` }];
  };
}

/** The tool_result blocks of the model's Bash calls in the runs of taskId woken for reason. */
export function bashResults(model, taskId, reason) {
  const reqs = model.requests.filter((r) => promptOf(r).includes(`task ${taskId} (${reason})`) && (r.tools || []).some((t) => t.name === 'Bash'));
  const uses = new Map(reqs.flatMap((r) => r.messages).filter((m) => m.role === 'assistant').flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b) => b.type === 'tool_use').map((b) => [b.id, b.name]));
  const seen = new Map();
  for (const r of reqs) for (const b of toolResultsOf(r)) if (uses.get(b.tool_use_id) === 'Bash') seen.set(b.tool_use_id, b);
  return [...seen.values()];
}

export const linesOf = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);

/** The approval link of a step from the owner's email in the dev outbox. */
export async function approvalLink(base, taskId, stepId) {
  const claimsOf = (u) => JSON.parse(Buffer.from(new URL(u).pathname.split('/').pop().split('.')[0], 'base64url').toString('utf8'));
  const forStep = (u) => u.startsWith(`${base}/a/`) && claimsOf(u).kind === 'step' && claimsOf(u).step_id === stepId;
  const mail = await eventually(async () => (await (await fetch(`${base}/dev/outbox.json`)).json())
    .find((m) => m.channel === 'email' && (m.links || []).some(forStep)), { timeoutMs: 20000 });
  assert.ok(mail, `the owner's email for step ${stepId} of ${taskId}`);
  assert.doesNotMatch(mail.subject, /—/);
  assert.match(mail.subject, /run the shell command `echo ran >> /);
  return mail.links.find(forStep);
}

/** The owner opens the link in Chromium, sees the call's input, and clicks Approve or Refuse (with a message). */
export async function decide(browser, url, button, message, input = /echo ran >> /) {
  const page = await (await browser.newContext()).newPage();
  assert.equal((await page.goto(url)).status(), 200);
  assert.match(await page.locator('#input').textContent(), input);
  if (message) await page.locator('#message').fill(message);
  await Promise.all([page.waitForURL(/\?done=1$/), page.locator(button).click()]);
  assert.equal((await page.locator('h1').textContent()).trim(), 'Your decision is recorded');
  await page.context().close();
}

/** Keeps the runners' output lines and the run logs of dir's logs* folders in $ARTIFACTS/<name>; returns that folder. */
export function keepRunnerLogs(name, dir, runners) {
  if (!process.env.ARTIFACTS || !dir) return null;
  const keep = join(process.env.ARTIFACTS, name);
  mkdirSync(keep, { recursive: true });
  for (const r of runners) writeFileSync(join(keep, `${r.name}-output.jsonl`), r.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  for (const d of readdirSync(dir).filter((f) => f.startsWith('logs'))) {
    for (const f of readdirSync(join(dir, d))) if (f.endsWith('.log') || f.endsWith('.jsonl')) writeFileSync(join(keep, `${d}-${f}`), readFileSync(join(dir, d, f)));
  }
  return keep;
}

/** A pending Bash step on the task, from the admin CLI. */
export async function pendingStep(admin, taskId) {
  const s = await eventually(() => admin(['steps', '--task', taskId]).find((x) => x.tool_name === 'Bash' && x.status === 'pending'), { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
  assert.ok(s, `a pending Bash step on ${taskId}`);
  return s;
}
