// prickle-runner end to end (issue 8) against the running local stack: the runner is built from
// infra/prickle-runner and started with a config file as the README's "Run your agents" shows; it
// starts the real Claude Code (pinned in package.json) for each wake-up, against a scripted stand-in
// of the Messages API on loopback (no account, no network). The owner decides in headless Chromium
// from the link in the dev outbox.
//
//   approve: hand_off_task to alice/writer → task_routed reaches the runner → Claude Code accepts,
//     checkpoints, tries a Bash call outside its allow-list → pending, not run, "still waiting" →
//     the run ends → the owner approves → step_decided reaches the runner, which resumes the run →
//     the identical call is allowed and runs exactly once → return_result → the requester accepts;
//   refuse: the owner's message reaches the model, the call never runs, and the run, which ends
//     without a checkpoint of its own, gets one from the runner saying how it ended;
//   webhook: a bad signature and a stale timestamp get 401; a replayed delivery runs once.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, admin, uniq, eventually, E2E_DIR, REPO_ROOT, IN_CI, PROJECT } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startStandIn, toolResultsOf, resultText } from '../claude/standin.mjs';

const CLAUDE = resolve(E2E_DIR, 'node_modules', '.bin', 'claude');
const CHROMIUM = process.env.PRICKLE_CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const RUN_WAIT_MS = 120_000;

const { stack, skipReason: stackSkip } = await loadStack();
let skipReason = stackSkip;
for (const [path, what] of [[CLAUDE, 'Claude Code (npm ci in infra/e2e)'], [CHROMIUM, 'Chromium (apt-get install chromium)']]) {
  if (!skipReason && !existsSync(path)) {
    skipReason = `no ${what} at ${path}`;
    if (IN_CI) throw new Error(`CI: ${skipReason}`);
  }
}

const freePort = () => new Promise((done, fail) => {
  const s = createServer();
  s.on('error', fail);
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => done(port)); });
});

/** The text of a conversation's first user message: the prompt the runner gave Claude Code. */
const promptOf = (req) => {
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
function wokenModel(commandFor) {
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

describe('prickle-runner: wake-ups start Claude Code, the owner decides, the run resumes', { skip: skipUnlessStack(skipReason) }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let dir;
  let bob;
  let model;
  let browser;
  let runner;
  let secret;
  let hookURL;
  const lines = [];
  const sideOf = (taskId) => join(dir, 'work', `side-${taskId}.txt`);
  const linesOf = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);
  const call = async (client, name, args) => {
    const r = await client.callTool({ name, arguments: args });
    assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
    return r.structuredContent;
  };
  const linesFor = (msg, pred = () => true) => lines.filter((l) => l.msg === msg && pred(l));
  /** Waits for the runner's "run end" line of a run of taskId with reason (the n-th such, 1-based). */
  const runEnded = async (taskId, reason, n = 1) => {
    const starts = () => linesFor('run start', (l) => l.task === taskId && l.reason === reason);
    const ok = await eventually(() => {
      const s = starts()[n - 1];
      return s && linesFor('run end', (l) => l.run === s.run)[0];
    }, { timeoutMs: RUN_WAIT_MS, intervalMs: 250 });
    assert.ok(ok, `run ${n} (${reason}) of ${taskId} ended; runner said:\n${lines.slice(-12).map((l) => JSON.stringify(l)).join('\n')}`);
    return ok;
  };
  const requestsOf = (taskId, reason) => model.requests.filter((r) => promptOf(r).includes(`task ${taskId} (${reason})`) && (r.tools || []).some((t) => t.name === 'Bash'));
  const bashResults = (taskId, reason) => {
    const reqs = requestsOf(taskId, reason);
    const uses = new Map(reqs.flatMap((r) => r.messages).filter((m) => m.role === 'assistant').flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((b) => b.type === 'tool_use').map((b) => [b.id, b.name]));
    const seen = new Map();
    for (const r of reqs) for (const b of toolResultsOf(r)) if (uses.get(b.tool_use_id) === 'Bash') seen.set(b.tool_use_id, b);
    return [...seen.values()];
  };
  const pendingStep = async (taskId) => {
    const s = await eventually(() => admin(['steps', '--task', taskId]).find((x) => x.tool_name === 'Bash' && x.status === 'pending'), { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
    assert.ok(s, `a pending Bash step on ${taskId}`);
    return s;
  };
  const approvalLink = async (taskId, stepId) => {
    const claimsOf = (u) => JSON.parse(Buffer.from(new URL(u).pathname.split('/').pop().split('.')[0], 'base64url').toString('utf8'));
    const forStep = (u) => u.startsWith(`${base}/a/`) && claimsOf(u).kind === 'step' && claimsOf(u).step_id === stepId;
    const mail = await eventually(async () => (await (await fetch(`${base}/dev/outbox.json`)).json())
      .find((m) => m.channel === 'email' && (m.links || []).some(forStep)), { timeoutMs: 20000 });
    assert.ok(mail, `the owner's email for step ${stepId} of ${taskId}`);
    assert.doesNotMatch(mail.subject, /—/);
    assert.match(mail.subject, /run the shell command `echo ran >> /);
    return mail.links.find(forStep);
  };
  const decide = async (url, button, message) => {
    const page = await (await browser.newContext()).newPage();
    assert.equal((await page.goto(url)).status(), 200);
    assert.match(await page.locator('#input').textContent(), /echo ran >> /);
    if (message) await page.locator('#message').fill(message);
    await Promise.all([page.waitForURL(/\?done=1$/), page.locator(button).click()]);
    assert.equal((await page.locator('h1').textContent()).trim(), 'Your decision is recorded');
    await page.context().close();
  };
  const handOff = async (what) => (await call(bob.client, 'hand_off_task', { project: PROJECT, assignee: 'alice/writer', packet: {
    task: `${what} ${uniq('runner')}`, deliverable_type: 'answer', acceptance_criteria: ['The side-effect file has its line.'] } })).task.id;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-runner-'));
    mkdirSync(join(dir, 'work'));
    const bin = join(dir, 'bin', 'prickle-runner');
    if (process.env.PRICKLE_RUNNER) {
      mkdirSync(join(dir, 'bin'));
      writeFileSync(bin, readFileSync(process.env.PRICKLE_RUNNER), { mode: 0o755 });
    } else {
      execFileSync('go', ['build', '-o', bin, './infra/prickle-runner'], { cwd: REPO_ROOT, stdio: 'inherit', timeout: 300_000 });
    }
    model = await startStandIn(wokenModel((taskId) => `echo ran >> ${sideOf(taskId)}`));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
    bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-runner');

    // The README's steps: register the runner's URL with a secret, write the config, start it.
    const port = await freePort();
    hookURL = `http://127.0.0.1:${port}/prickle`;
    secret = `whsec_${randomBytes(24).toString('base64url')}`;
    admin(['set-wake', '--agent', 'alice/writer', '--url', hookURL, '--secret', secret]);
    const config = join(dir, 'runner.yaml');
    writeFileSync(config, [
      `prickle_url: ${base}`,
      'agent: alice/writer',
      'agent_token_env: PRICKLE_AGENT_TOKEN',
      'mode: webhook',
      'webhook:',
      `  listen: 127.0.0.1:${port}`,
      '  path: /prickle',
      '  secret_env: PRICKLE_WAKE_SECRET',
      'concurrency: 2',
      'run_timeout: 2m',
      'grace: 5s',
      `log_dir: ${join(dir, 'logs')}`,
      'projects:',
      `  ${PROJECT}:`,
      `    dir: ${join(dir, 'work')}`,
      '    template: claude',
      `    program: ${CLAUDE}`,
      '    args: [--output-format, json]',
      '',
    ].join('\n'), { mode: 0o600 });
    runner = spawn(bin, ['--config', config], {
      cwd: dir, stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, HOME: join(dir, 'home'), ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'test',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ENABLE_TOOL_SEARCH: 'false',
        PRICKLE_AGENT_TOKEN: stack.tokens['alice/writer'], PRICKLE_WAKE_SECRET: secret },
    });
    mkdirSync(join(dir, 'home'));
    let buf = '';
    runner.stdout.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try { lines.push(JSON.parse(line)); } catch { lines.push({ msg: 'unparsed', line }); }
      }
    });
    let stderr = '';
    runner.stderr.on('data', (d) => { stderr += d; });
    const up = await eventually(() => linesFor('prickle-runner listening for wake-ups')[0], { timeoutMs: 15000 });
    assert.ok(up, `the runner listens: ${stderr} ${JSON.stringify(lines)}`);
    assert.equal(up.url, hookURL);
  });

  after(async () => {
    if (runner && runner.exitCode === null) {
      const exited = new Promise((done) => runner.on('exit', done));
      runner.kill('SIGTERM');
      await Promise.race([exited, new Promise((done) => setTimeout(done, 15000))]);
      if (runner.exitCode === null) runner.kill('SIGKILL');
    }
    // Point alice/writer back at the stack's own receiver, as the seed had it, for the suites after this one.
    if (stack) admin(['set-wake', '--agent', 'alice/writer', '--url', `${base}/dev/wake/alice/writer`]);
    await browser?.close();
    await bob?.client.close().catch(() => {});
    await model?.close();
    if (process.env.ARTIFACTS && dir && existsSync(join(dir, 'logs'))) {
      const keep = join(process.env.ARTIFACTS, 'runner-logs');
      mkdirSync(keep, { recursive: true });
      for (const f of readdirSync(join(dir, 'logs'))) if (f.endsWith('.log') || f.endsWith('.jsonl')) writeFileSync(join(keep, f), readFileSync(join(dir, 'logs', f)));
      writeFileSync(join(keep, 'runner-output.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  let refusedTask;

  test('approved: the runner starts Claude Code, the call waits for the owner, and after the approval it runs exactly once', async () => {
    const taskId = await handOff('Runner story');
    const first = await runEnded(taskId, 'task_routed');
    assert.equal(first.exit_code, 0, JSON.stringify(first));
    assert.equal(first.checkpoint, 'own', 'the run checkpointed itself, so the runner adds none');
    assert.equal(linesOf(sideOf(taskId)), 0, 'the call was not made');
    const [denied] = bashResults(taskId, 'task_routed');
    assert.ok(denied, 'the model got a tool_result for its Bash call');
    assert.equal(denied.is_error, true);
    assert.match(resultText(denied), /still waiting/);
    const step = await pendingStep(taskId);
    assert.equal(step.input.command, `echo ran >> ${sideOf(taskId)}`);
    assert.equal(step.run_id, first.run);

    // The wake-up and run lines, the run's log file and its MCP config gone.
    assert.equal(linesFor('wake-up', (l) => l.task === taskId && l.reason === 'task_routed' && l.via === 'webhook').length, 1);
    assert.ok(existsSync(first.log) && statSync(first.log).size > 0, `the run's log ${first.log}`);
    assert.equal((statSync(first.log).mode & 0o777), 0o600);
    assert.match(readFileSync(first.log, 'utf8'), /permission_denials/);
    assert.deepEqual(readdirSync(join(dir, 'logs', 'mcp')), [], 'the run\'s MCP config (with its token) was removed');

    await decide(await approvalLink(taskId, step.step_id), '#approve');
    const resumed = await runEnded(taskId, 'step_decided');
    const wake = linesFor('wake-up', (l) => l.run === resumed.run)[0];
    assert.equal(wake.resumes_run, first.run, 'the wake-up resumes the run that asked');
    assert.equal(resumed.exit_code, 0, JSON.stringify(resumed));
    assert.equal(resumed.checkpoint, 'own', 'return_result counts as the run\'s own');
    assert.equal(linesOf(sideOf(taskId)), 1, 'the approved call ran exactly once');
    const [allowed] = bashResults(taskId, 'step_decided');
    assert.notEqual(allowed.is_error, true, resultText(allowed));
    const consumed = admin(['steps', '--task', taskId]).find((x) => x.step_id === step.step_id);
    assert.equal(consumed.status, 'consumed');

    const { task } = await call(bob.client, 'get_task', { task_id: taskId });
    assert.equal(task.state, 'verifying');
    assert.equal(task.result.evidence[0].kind, 'test_output');
    const reviewed = await call(bob.client, 'review_result', { task_id: taskId, verdict: 'accept' });
    assert.equal(reviewed.task.state, 'completed');
  });

  test('refused: the owner\'s message reaches the model, the call never runs, and the runner checkpoints how the run ended', async () => {
    const taskId = await handOff('Runner refusal');
    refusedTask = taskId;
    await runEnded(taskId, 'task_routed');
    const step = await pendingStep(taskId);
    await decide(await approvalLink(taskId, step.step_id), '#refuse', 'Not that file: use the report instead.');
    const resumed = await runEnded(taskId, 'step_decided');
    assert.equal(linesOf(sideOf(taskId)), 0, 'the refused call never ran');
    const [denied] = bashResults(taskId, 'step_decided');
    assert.equal(denied.is_error, true);
    assert.match(resultText(denied), /Not that file: use the report instead\./);
    assert.equal(resumed.checkpoint, 'saved by the runner');
    const { task } = await call(bob.client, 'get_task', { task_id: taskId });
    assert.match(task.latest_checkpoint.progress, new RegExp(`^prickle-runner: run ${resumed.run} \\(step_decided\\) exited with status 0 after \\d+s without return_result or a checkpoint of its own\\.$`));
    const records = readFileSync(join(dir, 'logs', 'runs.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const rec = records.find((r) => r.run_id === resumed.run);
    assert.equal(rec.exit.code, 0);
    assert.equal(rec.checkpoint, 'saved by the runner');
  });

  test('webhook: a bad signature and a stale timestamp get 401; a replayed delivery runs once', async () => {
    const run = admin(['start-run', '--agent', 'alice/writer', '--task', refusedTask]);
    const body = JSON.stringify({ task_id: refusedTask, run_id: run.run_id, run_token: run.run_token, reason: 'result_refused', resumes_run: '' });
    const sign = (ts, key = secret) => `v1=${createHmac('sha256', key).update(`${ts}.${body}`).digest('hex')}`;
    const post = (ts, sig) => fetch(hookURL, { method: 'POST', body, headers: { 'Content-Type': 'application/json', 'Prickle-Timestamp': String(ts), 'Prickle-Signature': sig } });
    const now = Math.floor(Date.now() / 1000);
    const before = linesFor('wake-up').length;
    assert.equal((await post(now, sign(now, 'whsec_not_the_secret_at_all'))).status, 401, 'bad signature');
    assert.equal((await post(now - 600, sign(now - 600))).status, 401, 'stale timestamp, correctly signed');
    assert.equal((await post(now, 'v1=')).status, 401, 'empty signature');
    assert.equal((await fetch(hookURL)).status, 405);
    assert.equal(linesFor('wake-up').length, before, 'nothing refused was taken');
    assert.equal((await post(now, sign(now))).status, 202, 'the delivery is taken');
    assert.equal((await post(now, sign(now))).status, 200, 'the replay is answered, not run');
    await runEnded(refusedTask, 'result_refused');
    assert.equal((await post(now, sign(now))).status, 200, 'a replay after the run is not run either');
    assert.equal(linesFor('run start', (l) => l.run === run.run_id).length, 1, 'one run for the delivery');
    assert.equal(linesFor('wake-up repeated; not run again', (l) => l.run === run.run_id).length, 2);
  });
});
