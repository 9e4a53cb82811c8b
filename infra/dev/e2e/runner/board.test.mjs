// The local story from the board, with the second command: `make agents`' command (infra/dev/agents)
// starts prickle-runner for alice/writer in pull mode from the stack's local.json (no token handed to
// it), using the Claude Code on its PATH (the pinned one, against the scripted stand-in model). alice,
// on a phone-sized page, creates a task for alice/writer on the board as alice/builder → the runner
// wakes Claude Code, the run asks a Bash call and pauses on it → alice approves it on the task page →
// the resumed session makes the call, once, and returns the result → alice accepts it on the task page.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, admin, askSignInLink, uniq, eventually, PROJECT, REPO_ROOT, localJsonPath, CHROMIUM_NEED, npmNeed } from '../lib/env.mjs';
import { startStandIn } from '../claude/standin.mjs';
import { CLAUDE, CHROMIUM, CHROMIUM_ARGS, RUN_WAIT_MS, runnerBinary, modelEnv, wokenModel, linesOf } from './harness.mjs';

const PHONE = { width: 390, height: 844 };

const { stack, skipReason } = await loadStack(npmNeed(CLAUDE, 'Claude Code'), CHROMIUM_NEED);

describe('make agents, then the board: a task alice creates wakes alice/writer; she approves its call and accepts its result', { skip: skipUnlessStack(skipReason), timeout: 600_000 }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let dir;
  let agents; // the agents command, with its runner
  const lines = []; // the JSON lines its runner printed
  let out = ''; // everything it printed
  let model;
  let script;
  let browser;
  const sideOf = (taskId) => join(dir, 'work', `side-${taskId}.txt`);

  /** The runner's line msg for the task and reason, waited for. */
  const runEnd = (taskId, reason) => eventually(async () => lines.find((l) => l.msg === 'run end' && l.task === taskId &&
    lines.some((s) => s.msg === 'run start' && s.run === l.run && s.reason === reason)), { timeoutMs: RUN_WAIT_MS });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-board-'));
    mkdirSync(join(dir, 'work'));
    mkdirSync(join(dir, 'home'));
    const bin = runnerBinary(dir);
    mkdirSync(join(dir, 'bin'), { recursive: true });
    const cmd = join(dir, 'bin', 'agents');
    execFileSync('go', ['build', '-o', cmd, './infra/dev/agents'], { cwd: REPO_ROOT, stdio: 'inherit', timeout: 300_000 });
    script = wokenModel((taskId) => `echo ran >> ${sideOf(taskId)}`);
    model = await startStandIn(script);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    // As a user runs it: claude on the PATH, the stack's state folder; no token in the environment.
    const env = { ...modelEnv(model, join(dir, 'home')), PATH: `${dirname(CLAUDE)}:${process.env.PATH}`, PRICKLE_STATE_DIR: dirname(localJsonPath()) };
    agents = spawn(cmd, ['-runner', bin, '-dir', join(dir, 'work')], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    const take = (chunk) => {
      out += chunk;
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.startsWith('{')) { try { lines.push(JSON.parse(line)); } catch { /* not JSON */ } }
      }
    };
    agents.stdout.setEncoding('utf8').on('data', take);
    agents.stderr.setEncoding('utf8').on('data', take);
    const up = await eventually(async () => lines.find((l) => l.msg === 'prickle-runner pulling wake-ups'), { timeoutMs: 60_000 });
    assert.ok(up, `the runner did not start:\n${out}`);
    assert.equal(up.agent, 'alice/writer');
  });

  after(async () => {
    if (agents && agents.exitCode === null) {
      const exited = new Promise((done) => agents.on('exit', done));
      agents.kill('SIGTERM');
      await exited;
    }
    if (stack) admin(['set-wake', '--agent', 'alice/writer', '--url', `${base}/dev/wake/alice/writer`]);
    await browser?.close();
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('from the board to the accepted result', async () => {
    assert.match(out, /agents: prickle-runner for alice\/writer, pull mode, claude \([^,]+, signed in\)/);
    assert.doesNotMatch(out, /prk_/, 'no token is shown');

    // alice signs in (a link from the dev outbox) on a phone-sized page.
    const before = (await (await fetch(`${base}/dev/outbox.json`)).json()).length;
    await askSignInLink(base, 'alice');
    const mail = await eventually(async () => (await (await fetch(`${base}/dev/outbox.json`)).json()).slice(before)
      .find((m) => m.channel === 'email' && m.to === 'alice@example.com'));
    const context = await browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    await page.goto(mail.links.find((l) => l.includes('/signin/')));
    await Promise.all([page.waitForURL(`${base}/`), page.locator('#signin-button').click()]);

    await page.goto(`${base}/p/${PROJECT}/tasks`);
    await page.locator('#new-task summary').click();
    await page.selectOption('#nt-requester', 'alice/builder');
    await page.selectOption('#nt-assignee', 'alice/writer');
    await page.fill('#nt-task', `Append the line ${uniq('board')}`);
    await page.selectOption('#nt-type', 'answer');
    await page.fill('#nt-criteria', 'The side-effect file has its line.');
    await Promise.all([page.waitForURL(/\/t\/[A-Za-z0-9_-]+\?decided=created$/), page.locator('#nt-create').click()]);
    const taskId = new URL(page.url()).pathname.split('/').pop();

    // The runner wakes Claude Code; the run pauses on its Bash call, which has not run.
    const first = await runEnd(taskId, 'task_routed');
    assert.ok(first, `no run of ${taskId}:\n${out}`);
    assert.equal(first.paused, 'Bash', JSON.stringify(first));
    assert.equal(linesOf(sideOf(taskId)), 0);

    // alice approves the call on the task page.
    await page.goto(`${base}/t/${taskId}`);
    const step = page.locator('section.pending');
    assert.equal(await step.count(), 1, 'one step waits');
    assert.match(await step.innerText(), /echo ran >> /);
    await Promise.all([page.waitForURL(/decided=approved/), step.locator('button[value="approve"]').click()]);

    // The resumed session makes the very call, once, and returns the result.
    const resumed = await runEnd(taskId, 'step_decided');
    assert.ok(resumed, `no step_decided run:\n${out}`);
    assert.equal(resumed.session, first.session, 'the same conversation');
    assert.equal(linesOf(sideOf(taskId)), 1, 'the approved call ran exactly once');
    await eventually(async () => {
      await page.goto(`${base}/t/${taskId}`);
      return (await page.locator('#state').innerText()) === 'verifying';
    }, { timeoutMs: 30_000, intervalMs: 1000 });

    // alice accepts the result on the task page.
    await Promise.all([page.waitForURL(/decided=accepted$/), page.locator('#review-accept').click()]);
    assert.equal(await page.locator('#state').innerText(), 'completed');
    assert.match(await page.locator('#history').innerText(), /review accept by owner:alice/);
    await context.close();
  });
});
