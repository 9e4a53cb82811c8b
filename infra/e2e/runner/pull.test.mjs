// prickle-runner end to end in pull mode (issue 8, acceptance 3) against the running local stack:
// alice/writer has no webhook (`admin set-wake --pull`), so her wake-ups are stored and her runners
// claim them with her agent token (POST /runner/claim, a long poll) and acknowledge each once its
// run has started (POST /runner/ack).
//
//   the story, with the runner down when the owner decides: the first run (real Claude Code, the
//     stand-in model) asks and waits; the runner is stopped; the owner approves in Chromium; a runner
//     started later claims step_decided and resumes the run; the call runs exactly once;
//   two runners polling with the same token: each wake-up starts exactly one run;
//   a runner killed after claiming, before acknowledging: the wake-up comes back after the
//     visibility timeout (PRICKLE_WAKE_VISIBILITY_SECONDS on the stack) and another runner runs it once.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, admin, uniq, eventually, sleep, IN_CI, PROJECT } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startStandIn, resultText } from '../claude/standin.mjs';
import { CLAUDE, CHROMIUM, CHROMIUM_ARGS, runnerBinary, startRunner, claudeProject, modelEnv, wokenModel,
  bashResults, linesOf, approvalLink, decide, pendingStep, keepRunnerLogs } from './harness.mjs';

const VISIBILITY_S = Number(process.env.PRICKLE_WAKE_VISIBILITY_SECONDS || 120);

const { stack, skipReason: stackSkip } = await loadStack();
let skipReason = stackSkip;
for (const [path, what] of [[CLAUDE, 'Claude Code (npm ci in infra/e2e)'], [CHROMIUM, 'Chromium (apt-get install chromium)']]) {
  if (!skipReason && !existsSync(path)) {
    skipReason = `no ${what} at ${path}`;
    if (IN_CI) throw new Error(`CI: ${skipReason}`);
  }
}

describe('prickle-runner, pull mode: claimed wake-ups, two runners, a runner killed before its ack', { skip: skipUnlessStack(skipReason), timeout: 600_000 }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let dir;
  let bin;
  let bob;
  let model;
  let browser;
  const runners = [];
  const sideOf = (taskId) => join(dir, 'work', `side-${taskId}.txt`);
  const call = async (client, name, args) => {
    const r = await client.callTool({ name, arguments: args });
    assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
    return r.structuredContent;
  };
  const handOff = async (what) => (await call(bob.client, 'hand_off_task', { project: PROJECT, assignee: 'alice/writer', packet: {
    task: `${what} ${uniq('pull')}`, deliverable_type: 'answer', acceptance_criteria: ['The side-effect file has its line.'] } })).task.id;
  /** A runner in pull mode, as the README's config shows, running `projects` for alice/writer. */
  const pullRunner = async (name, projects, concurrency = 2) => {
    const r = await startRunner(bin, dir, name, {
      prickle_url: base, agent: 'alice/writer', agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull',
      concurrency, run_timeout: '2m', grace: '5s', log_dir: join(dir, `logs-${name}`), projects,
    }, { ...modelEnv(model, join(dir, 'home')), PRICKLE_AGENT_TOKEN: stack.tokens['alice/writer'] });
    runners.push(r);
    assert.equal(r.linesFor('prickle-runner pulling wake-ups').length, 1);
    return r;
  };
  const stopped = async (r) => {
    const out = await r.stop();
    assert.equal(out.code, 0, `${r.name} stops cleanly on SIGTERM: ${JSON.stringify(out)}`);
    assert.equal(r.linesFor('prickle-runner stopped').length, 1);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-pull-'));
    mkdirSync(join(dir, 'work'));
    bin = runnerBinary(dir);
    model = await startStandIn(wokenModel((taskId) => `echo ran >> ${sideOf(taskId)}`));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-pull');
    admin(['set-wake', '--agent', 'alice/writer', '--pull']);
  });

  after(async () => {
    for (const r of runners) await r.stop();
    if (stack) admin(['set-wake', '--agent', 'alice/writer', '--url', `${base}/dev/wake/alice/writer`]);
    await browser?.close();
    await bob?.client.close().catch(() => {});
    await model?.close();
    keepRunnerLogs('runner-pull-logs', dir, runners);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the story in pull mode; the runner is down when the owner decides, and nothing is lost', async () => {
    const a = await pullRunner('pull-a', { [PROJECT]: claudeProject(join(dir, 'work')) });
    const taskId = await handOff('Pull story');
    const first = await a.runEnded(taskId, 'task_routed');
    const wake = a.linesFor('wake-up', (l) => l.run === first.run)[0];
    assert.equal(wake.via, 'pull');
    assert.match(wake.delivery, /^wk_\d{13}_[0-9a-f]{16}$/);
    assert.equal(first.checkpoint, 'own');
    const [denied] = bashResults(model, taskId, 'task_routed');
    assert.match(resultText(denied), /still waiting/);
    assert.equal(linesOf(sideOf(taskId)), 0, 'the call was not made');
    const step = await pendingStep(admin, taskId);

    await stopped(a); // the runner is down...
    await decide(browser, await approvalLink(base, taskId, step.step_id), '#approve'); // ...when the owner decides
    await sleep(1000);
    assert.equal(linesOf(sideOf(taskId)), 0);

    const later = await pullRunner('pull-a-later', { [PROJECT]: claudeProject(join(dir, 'work')) });
    const resumed = await later.runEnded(taskId, 'step_decided');
    assert.equal(later.linesFor('wake-up', (l) => l.run === resumed.run)[0].resumes_run, first.run, 'it resumes the run that asked');
    assert.equal(linesOf(sideOf(taskId)), 1, 'the approved call ran exactly once');
    assert.equal(resumed.checkpoint, 'own');
    const { task } = await call(bob.client, 'get_task', { task_id: taskId });
    assert.equal(task.state, 'verifying');
    assert.equal((await call(bob.client, 'review_result', { task_id: taskId, verdict: 'accept' })).task.state, 'completed');
    await stopped(later);
  });

  test('two runners polling with the same agent token: each wake-up starts exactly one run', async () => {
    const script = 'echo "$PRICKLE_TASK_ID $PRICKLE_RUN_ID" >> "$RUNS_FILE"; sleep 1';
    const runsFile = join(dir, 'work', 'runs-by-both.txt');
    const project = { '*': { dir: join(dir, 'work'), template: 'command', command: ['sh', '-c', script.replace('$RUNS_FILE', runsFile)] } };
    const both = [await pullRunner('pull-b1', project), await pullRunner('pull-b2', project)];
    const tasks = [];
    for (let i = 0; i < 4; i++) tasks.push(await handOff(`Pull pair ${i}`));
    const ends = () => both.flatMap((r) => r.linesFor('run end', (l) => tasks.includes(l.task)));
    assert.ok(await eventually(() => ends().length >= 4, { timeoutMs: 60000 }), `four runs ended: ${JSON.stringify(ends())}`);
    await sleep(3000); // nothing else comes: every claim was acknowledged
    for (const t of tasks) {
      const starts = both.flatMap((r) => r.linesFor('run start', (l) => l.task === t).map((l) => `${r.name} ${l.run}`));
      assert.equal(starts.length, 1, `task ${t} started exactly one run: ${starts}`);
    }
    const lines = readFileSync(runsFile, 'utf8').trim().split('\n');
    assert.equal(lines.length, 4, lines.join('\n'));
    assert.deepEqual(new Set(lines.map((l) => l.split(' ')[0])), new Set(tasks));
    for (const r of both) await stopped(r);
  });

  test('a runner killed after claiming, before acknowledging: the wake-up comes back after the visibility timeout and runs once', { timeout: (VISIBILITY_S + 120) * 1000 }, async () => {
    // A task_routed run holds the task (it sleeps); a step_decided wake-up for the same task is then
    // claimed but waits behind it, unacknowledged, when the runner is killed.
    const script = `if [ "$PRICKLE_REASON" = task_routed ]; then echo $$ > "pid-$PRICKLE_TASK_ID"; exec sleep 60; fi
echo "$PRICKLE_TASK_ID $PRICKLE_RUN_ID $PRICKLE_REASON $PRICKLE_RESUMES_RUN" >> resumed.txt`;
    const project = { '*': { dir: join(dir, 'work'), template: 'command', command: ['sh', '-c', script] } };
    const c = await pullRunner('pull-c', project);
    const taskId = await handOff('Pull killed');
    await eventually(() => existsSync(join(dir, 'work', `pid-${taskId}`)), { timeoutMs: 30000 });
    // As the woken run would: accept and ask; the owner approves from the link.
    const run = await connectSdk(stack.url, admin(['start-run', '--agent', 'alice/writer', '--task', taskId]).run_token, 'prickle-e2e-pull-run');
    await call(run.client, 'accept_task', { task_id: taskId });
    const asked = await run.client.callTool({ name: 'request_step', arguments: { tool_name: 'Bash', input: { command: 'echo ran >> /dev/null' }, tool_use_id: 'toolu_pull_1' } });
    assert.match(asked.content[0].text, /still waiting/);
    await run.client.close();
    const step = await pendingStep(admin, taskId);
    await decide(browser, await approvalLink(base, taskId, step.step_id), '#approve');
    const queued = await eventually(() => c.linesFor('run waits: its task has a run going', (l) => l.task === taskId)[0], { timeoutMs: 40000 });
    assert.ok(queued, `the step_decided wake-up was claimed and waits: ${JSON.stringify(c.lines.slice(-5))}`);
    const claimed = c.linesFor('wake-up', (l) => l.run === queued.run)[0];
    assert.equal(claimed.reason, 'step_decided');
    c.child.kill('SIGKILL'); // killed between claim and ack
    process.kill(Number(readFileSync(join(dir, 'work', `pid-${taskId}`), 'utf8')), 'SIGKILL'); // and its orphaned run

    const d = await pullRunner('pull-d', project);
    const again = await d.runEnded(taskId, 'step_decided');
    const redelivered = d.linesFor('wake-up', (l) => l.run === again.run)[0];
    assert.equal(redelivered.delivery, claimed.delivery, 'the same wake-up');
    assert.notEqual(redelivered.run, claimed.run, 'with a new run');
    const waited = (Date.parse(redelivered.time) - Date.parse(claimed.time)) / 1000;
    assert.ok(waited >= VISIBILITY_S - 1, `it came back after the ${VISIBILITY_S}s visibility timeout, not before (${waited}s)`);
    assert.equal(again.exit_code, 0);
    await sleep(2000);
    const resumedLines = readFileSync(join(dir, 'work', 'resumed.txt'), 'utf8').trim().split('\n').filter((l) => l.startsWith(taskId));
    assert.deepEqual(resumedLines, [`${taskId} ${again.run} step_decided ${step.run_id}`], 'run once, resuming the run that asked');
    await stopped(d);
  });
});
