// What the runner suites share: the prickle-runner binary, started with a config file as the README
// shows, its JSON output lines; the scripted model of a woken run; the owner deciding in Chromium.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { allowSignIn, eventually, CHROMIUM, E2E_DIR, REPO_ROOT } from '../lib/env.mjs';
import { CLAUDE } from '../lib/claude.mjs';
import { resultText } from '../claude/standin.mjs';
import { routeOf, ranOutcome, notRunOutcome, handOffArgs, acceptArgs } from './relay.mjs';

export { CHROMIUM, CLAUDE };
export const CODEX = resolve(E2E_DIR, 'node_modules', '.bin', 'codex');
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
  execFileSync('go', ['build', '-o', bin, './infra/cmd/prickle-runner'], { cwd: REPO_ROOT, stdio: 'inherit', timeout: 300_000 });
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

/** The claude project entry the suites use: the pinned Claude Code (the runner asks for its JSON result). */
export const claudeProject = (dir) => ({ dir, template: 'claude', program: CLAUDE });

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
      let timer;
      const out = await Promise.race([exited, new Promise((done) => { timer = setTimeout(() => done(null), 20000); })]);
      clearTimeout(timer); // left running, it would keep the test file's process alive 20 s after its last test
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

// How a real model words the same call afresh each time it generates it: the Bash description and
// the order of the input's keys change; what runs (the command) does not.
const DESCRIPTIONS = ['Append a line to the side-effect file', 'Record that the step ran', 'Write the marker line',
  'Add one line to the side file', 'Log the run to the side-effect file'];
let generation = 0;
function bashInput(command) {
  const description = DESCRIPTIONS[generation % DESCRIPTIONS.length];
  generation += 1;
  return generation % 2 ? { command, description } : { description, command };
}

/** Every tool_use block of a request's conversation, in order. */
export const toolUsesOf = (req) => (req.messages || []).filter((m) => m.role === 'assistant')
  .flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_use');

/** Every tool_result block of a request's conversation, by tool_use_id. */
const toolResultsById = (req) => new Map((req.messages || []).filter((m) => m.role === 'user')
  .flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result').map((b) => [b.tool_use_id, b]));

/** The text blocks of the request's last user message. */
const lastUserText = (req) => {
  const last = [...(req.messages || [])].reverse().find((m) => m.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return last.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
};

/**
 * The model of a woken run, driven by the conversation it is sent, as a real one is: it reads the
 * task (get_task and read_room in parallel), accepts, checkpoints, then makes the task's Bash call,
 * worded afresh each time it generates it. After the call ran it returns a result; refused, it says
 * so and ends; told "still waiting", it ends its turn, and makes the call again (worded afresh) when
 * a resumed conversation tells it to. The task's title picks a variant: "[parallel]" makes the call
 * beside a Read in one message; "[no approval]" returns a result without the call; "[stall]" stalls
 * its first answer after the checkpoint until `release()` (a run to stop mid-way). commandFor(taskId,
 * task) is the call's command; task is get_task's answer. A task whose packet names a relay route
 * (relay.mjs) is handed on to the next agent once the call was decided, with the result returned when it
 * ran (one after the other, or both in one message); with relay, woken for a result it asked for
 * (result_returned), it reads the task and accepts the result, and makes no other call.
 */
export function wokenModel(commandFor, { relay = false } = {}) {
  let seq = 0;
  let release;
  let released = new Promise((done) => { release = done; });
  const generated = []; // every call the model wrote: {taskId, id, name, input (as written: Claude Code's echo may reorder keys)}
  let current = '';
  const toolUse = (name, input) => {
    const id = `toolu_runner_${Date.now().toString(36)}_${++seq}`;
    generated.push({ taskId: current, id, name, input: JSON.stringify(input) });
    return { type: 'tool_use', id, name, input };
  };
  const turn = async (req) => {
    if (!(req.tools || []).some((t) => t.name === 'Bash')) return [{ type: 'text', text: 'Prickle stand-in.' }];
    const m = /task (\S+) \((\w+)\)/.exec(promptOf(req));
    if (!m) return [{ type: 'text', text: 'No task in the prompt.' }];
    const [, taskId, reason] = m;
    current = taskId;
    const uses = toolUsesOf(req);
    const results = toolResultsById(req);
    const used = (name) => uses.some((u) => u.name === `mcp__prickle__${name}`);
    const got = uses.find((u) => u.name === 'mcp__prickle__get_task');
    if (reason === 'result_returned') {
      if (!relay) return [{ type: 'text', text: 'Nothing to review here.' }];
      if (!got) return [toolUse('mcp__prickle__get_task', { task_id: taskId })];
      return used('review_result') ? [{ type: 'text', text: 'Accepted the result.' }] : [toolUse('mcp__prickle__review_result', acceptArgs(taskId))];
    }
    const title = got && results.get(got.id) ? resultText(results.get(got.id)) : '';
    const route = routeOf(title);
    const resumed = /Prickle woke you again/.test(lastUserText(req));
    if (!got) {
      return [toolUse('mcp__prickle__get_task', { task_id: taskId }), toolUse('mcp__prickle__read_room', { project: 'website-v2' })];
    }
    if (!used('accept_task')) return [toolUse('mcp__prickle__accept_task', { task_id: taskId, note: 'Woken by prickle-runner; on it.' })];
    if (!used('save_checkpoint')) {
      return [toolUse('mcp__prickle__save_checkpoint', { task_id: taskId, progress: 'Read the task; about to make the call.', decisions: [],
        files_touched: [], next_steps: ['Make the call.'], open_questions: [] })];
    }
    if (used('return_result') && !route) return [{ type: 'text', text: 'Result returned; done.' }];
    const result = (summary, content) => [toolUse('mcp__prickle__return_result', { task_id: taskId, summary,
      evidence: [{ kind: 'test_output', summary: 'What the run saw', content }] })];
    /** A relay link once its call was decided: the next link handed on, the result returned when it ran. */
    const relayOn = (outcome, ran) => {
      const todo = [];
      if (route.length && !used('hand_off_task')) todo.push(() => toolUse('mcp__prickle__hand_off_task', handOffArgs(route, outcome)));
      if (ran !== null && !used('return_result')) todo.push(() => result('Appended the line once.', ran)[0]);
      if (!todo.length) return [{ type: 'text', text: 'My link of the relay is done.' }];
      return todo.length === 2 && Math.random() < 0.5 ? todo.map((f) => f()) : [todo[Math.floor(Math.random() * todo.length)]()];
    };
    if (title.includes('[stall]') && !resumed) {
      await released; // the run is stopped meanwhile
      return [{ type: 'text', text: 'Still thinking.' }];
    }
    if (title.includes('[no approval]')) return result('Done without a guarded call.', 'nothing to run');
    const bash = uses.filter((u) => u.name === 'Bash');
    const call = () => {
      const b = toolUse('Bash', bashInput(commandFor(taskId, title)));
      return title.includes('[parallel]') && bash.length === 0 ? [toolUse('Read', { file_path: '/etc/hostname' }), b] : [b];
    };
    if (bash.length === 0) return call();
    const last = results.get(bash.at(-1).id);
    if (last && !last.is_error) return route ? relayOn(ranOutcome(), resultText(last) || 'ran') : result('Appended the line once.', resultText(last) || 'ran');
    const said = last ? resultText(last) : '';
    if (/still waiting/.test(said) && !resumed) return [{ type: 'text', text: 'Waiting for my owner; ending my turn.' }];
    if (/still waiting/.test(said) || !last) return call();
    if (route) return relayOn(notRunOutcome(said), null);
    return [{ type: 'text', text: `My owner refused; finishing without it: ${said}` }];
  };
  turn.release = () => { release(); released = new Promise((done) => { release = done; }); };
  /** The Bash calls the model wrote for taskId, in order: {id, input} with the input's keys as written. */
  turn.bashCalls = (taskId) => generated.filter((g) => g.taskId === taskId && g.name === 'Bash').map((g) => ({ id: g.id, input: JSON.parse(g.input), written: g.input }));
  return turn;
}

/** The Bash tool_result blocks in the conversations of taskId's runs, each once, in order. */
export function bashResults(model, taskId) {
  const reqs = model.requests.filter((r) => promptOf(r).includes(`task ${taskId} (`) && (r.tools || []).some((t) => t.name === 'Bash'));
  const bash = new Set(reqs.flatMap(toolUsesOf).filter((b) => b.name === 'Bash').map((b) => b.id));
  const seen = new Map();
  for (const r of reqs) for (const b of toolResultsById(r).values()) if (bash.has(b.tool_use_id)) seen.set(b.tool_use_id, b);
  return [...seen.values()];
}

/** The model request that carries the tool_result of tool_use_id, with the whole conversation before it. */
export const requestWithResult = (model, toolUseId) => model.requests.find((r) => toolResultsById(r).has(toolUseId));

/** The emails the owner got for steps of taskId (each step's approval link once). */
export async function stepEmails(base, taskId) {
  const outbox = await (await fetch(`${base}/dev/outbox.json`)).json();
  return outbox.filter((m) => m.channel === 'email' && (m.subject || '').includes(taskId) && /^Approve /.test(m.subject || ''));
}

export const linesOf = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);

/** The approval link of a step from the owner's email in the dev outbox, whose subject names the command. */
export async function approvalLink(base, taskId, stepId, command = /run the shell command `echo ran >> /) {
  const claimsOf = (u) => JSON.parse(Buffer.from(new URL(u).pathname.split('/').pop().split('.')[0], 'base64url').toString('utf8'));
  const forStep = (u) => u.startsWith(`${base}/a/`) && claimsOf(u).kind === 'step' && claimsOf(u).step_id === stepId;
  const mail = await eventually(async () => (await (await fetch(`${base}/dev/outbox.json`)).json())
    .find((m) => m.channel === 'email' && (m.links || []).some(forStep)), { timeoutMs: 20000 });
  assert.ok(mail, `the owner's email for step ${stepId} of ${taskId}`);
  assert.doesNotMatch(mail.subject, /—/);
  assert.match(mail.subject, command);
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

/**
 * On an emailed approval link's page opened without a session, the owner presses Sign in to edit (an edit
 * needs the owner's signed-in session), opens the sign-in link Prickle emails and comes back to the page,
 * where the edit form is.
 */
export async function signInToEdit(page, base, url) {
  assert.equal(await page.locator('#edit-step').count(), 0, 'no edit form without a session');
  const outbox = async () => (await fetch(`${base}/dev/outbox.json`)).json();
  const before = (await outbox()).length;
  allowSignIn('alice', 'bob', 'carol');
  await Promise.all([page.waitForURL(/\/signin$/), page.locator('#sign-in-to-edit').click()]);
  const mail = await eventually(async () => (await outbox()).slice(before)
    .find((m) => m.channel === 'email' && (m.links || []).some((l) => l.includes('/signin/'))), { timeoutMs: 20000 });
  assert.ok(mail, 'no sign-in email');
  await page.goto(mail.links.find((l) => l.includes('/signin/')));
  await Promise.all([page.waitForURL(url), page.locator('#signin-button').click()]);
  assert.equal(await page.locator('#edit-step').count(), 1, 'signed in, the page offers the edit');
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
