// prickle-runner end to end in pull mode against the running local stack:
// alice/writer has no webhook (`admin set-wake --pull`), so her wake-ups are stored and her runners
// claim them with her agent token (POST /runner/claim, a long poll) and acknowledge each once its
// run has started (POST /runner/ack).
//
//   the story, with the runner down when the owner decides: the first run (real Claude Code, the
//     stand-in model) pauses on its call; the runner is stopped; the owner approves in Chromium; a
//     runner started later claims step_decided and resumes the same session; the call runs once;
//   edit, then allow: the paused call is `rm -rf build`; the owner edits it to `rm -rf build/tmp` on the
//     approval page; the resumed session runs the edit in its place, once (Claude Code's hook passes it
//     as updatedInput), the model is told so beside the result, and the audit CSV shows both calls;
//   a call made beside another in one message (no pause possible): the model is told to wait and
//     ends its turn; after the approval the resumed conversation makes the call again, worded afresh,
//     and it is allowed (the same step: its description is not part of what runs) and runs once;
//   a runner stopped (Ctrl-C) in the middle of a run, then started again: the wake-up comes back
//     and the next run resumes the stopped run's session;
//   two runners polling with the same token: each wake-up starts exactly one run;
//   a runner killed after claiming, before acknowledging: the wake-up comes back after the
//     visibility timeout (PRICKLE_WAKE_VISIBILITY_SECONDS on the stack) and another runner runs it once.
import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, admin, uniq, eventually, sleep, PROJECT, CHROMIUM_NEED, npmNeed } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { parseCSV } from '../lib/csv.mjs';
import { startStandIn, resultText } from '../claude/standin.mjs';
import { CLAUDE, CHROMIUM, CHROMIUM_ARGS, runnerBinary, startRunner, claudeProject, modelEnv, wokenModel,
  bashResults, requestWithResult, toolUsesOf, stepEmails, linesOf, approvalLink, decide, pendingStep, keepRunnerLogs, signInToEdit } from './harness.mjs';

const VISIBILITY_S = Number(process.env.PRICKLE_WAKE_VISIBILITY_SECONDS || 120);

const { stack, skipReason } = await loadStack(npmNeed(CLAUDE, 'Claude Code'), CHROMIUM_NEED);

describe('prickle-runner, pull mode: claimed wake-ups, two runners, a runner killed before its ack', { skip: skipUnlessStack(skipReason), timeout: 600_000 }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let dir;
  let bin;
  let bob;
  let model;
  let script;
  let browser;
  const runners = [];
  const sideOf = (taskId) => join(dir, 'work', `side-${taskId}.txt`);
  const buildOf = (taskId) => join(dir, 'work', `build-${taskId}`);
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
    script = wokenModel((taskId, task) => (task.includes('[edit]') ? `rm -rf ${buildOf(taskId)}` : `echo ran >> ${sideOf(taskId)}`));
    model = await startStandIn(script);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-pull');
    admin(['set-wake', '--agent', 'alice/writer', '--pull']);
  });

  // A test that failed leaves no runner claiming the next test's wake-ups.
  afterEach(async () => { for (const r of runners) await r.stop(); });

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
    assert.equal(first.paused, 'Bash', JSON.stringify(first));
    assert.equal(linesOf(sideOf(taskId)), 0, 'the call was not made');
    const step = await pendingStep(admin, taskId);

    await stopped(a); // the runner is down...
    await decide(browser, await approvalLink(base, taskId, step.step_id), '#approve'); // ...when the owner decides
    await sleep(1000);
    assert.equal(linesOf(sideOf(taskId)), 0);

    const later = await pullRunner('pull-a-later', { [PROJECT]: claudeProject(join(dir, 'work')) });
    const resumed = await later.runEnded(taskId, 'step_decided');
    assert.equal(later.linesFor('wake-up', (l) => l.run === resumed.run)[0].resumes_run, first.run, 'it resumes the run that asked');
    assert.equal(resumed.session, first.session, 'the runner started again resumes the same session');
    assert.equal(resumed.resumed, true);
    assert.equal(linesOf(sideOf(taskId)), 1, 'the approved call ran exactly once');
    assert.deepEqual(script.bashCalls(taskId).map((b) => b.id), [first.paused_call], 'the very call, not generated again');
    assert.equal(resumed.checkpoint, 'own');
    assert.equal((await stepEmails(base, taskId)).length, 1, 'the owner was asked once');
    const { task } = await call(bob.client, 'get_task', { task_id: taskId });
    assert.equal(task.state, 'verifying');
    assert.equal((await call(bob.client, 'review_result', { task_id: taskId, verdict: 'accept' })).task.state, 'completed');
    await stopped(later);
  });

  test('edit, then allow: the model asks rm -rf build, the owner edits it to rm -rf build/tmp in Chromium; only build/tmp goes, once; the model is told; the trail shows both', async () => {
    const a = await pullRunner('pull-e', { [PROJECT]: claudeProject(join(dir, 'work')) });
    const taskId = await handOff('Clean the build [edit]');
    const build = buildOf(taskId);
    for (const d of ['tmp', 'keep']) {
      mkdirSync(join(build, d), { recursive: true });
      writeFileSync(join(build, d, 'file.txt'), d);
    }
    const first = await a.runEnded(taskId, 'task_routed');
    assert.equal(first.paused, 'Bash', JSON.stringify(first));
    assert.ok(existsSync(join(build, 'tmp')), 'nothing removed while the owner is asked');
    const step = await pendingStep(admin, taskId);
    assert.equal(step.input.command, `rm -rf ${build}`);

    // The owner opens the emailed link in Chromium, signs in to edit (an edit needs her session), edits
    // the command line, approves the edit.
    const page = await (await browser.newContext()).newPage();
    const link = await approvalLink(base, taskId, step.step_id, /run the shell command `rm -rf /);
    assert.equal((await page.goto(link)).status(), 200);
    assert.match(await page.locator('#input').textContent(), new RegExp(`"command": "rm -rf ${build}"`));
    await signInToEdit(page, base, link);
    await page.locator('#edit-step summary').click();
    assert.equal(await page.locator('#command-step').inputValue(), `rm -rf ${build}`);
    await page.locator('#command-step').fill(`rm -rf ${build}/tmp`);
    await Promise.all([page.waitForURL(/\?done=1$/), page.locator('#approve-edit-step').click()]);
    assert.equal((await page.locator('h1').textContent()).trim(), 'Your decision is recorded');
    assert.match(await page.locator('#edited').textContent(), new RegExp(`"command": "rm -rf ${build}/tmp"`));
    await page.context().close();

    const resumed = await a.runEnded(taskId, 'step_decided');
    assert.equal(resumed.session, first.session, 'the paused session resumes');
    assert.ok(!existsSync(join(build, 'tmp')), 'the edited command ran: build/tmp is gone');
    assert.equal(readFileSync(join(build, 'keep', 'file.txt'), 'utf8'), 'keep', 'build/keep survives: the call as asked never ran');

    // The model asked once; Claude Code ran the edit in its place, once, and the model is told.
    const calls = script.bashCalls(taskId);
    assert.deepEqual(calls.map((c) => c.input.command), [`rm -rf ${build}`], 'the model wrote one call, as asked');
    const results = bashResults(model, taskId);
    assert.equal(results.length, 1, 'one result: the call ran once');
    assert.notEqual(results[0].is_error, true, resultText(results[0]));
    const next = JSON.stringify(requestWithResult(model, calls[0].id));
    assert.ok(next.includes('allowed as your owner edited it'), `the model's next request carries Prickle's note of the edit:\n${next.slice(-3000)}`);
    assert.ok(next.includes(`rm -rf ${build}/tmp`), 'naming the edited command');
    const { task } = await call(bob.client, 'get_task', { task_id: taskId });
    assert.equal(task.state, 'verifying', 'the run returned its result');

    const steps = admin(['steps', '--task', taskId]);
    assert.deepEqual(steps.map((x) => [x.step_id, x.status, x.input.command, x.edited_input?.command]),
      [[step.step_id, 'consumed', `rm -rf ${build}`, `rm -rf ${build}/tmp`]], 'one step, used once, keeping both calls');
    const csv = parseCSV(admin(['audit', '--project', PROJECT, '--format', 'csv'])).filter((r) => r.step_id === step.step_id);
    assert.deepEqual(csv.map((r) => r.action), ['step_asked', 'step_approved', 'step_used']);
    const approvedRow = csv.find((r) => r.action === 'step_approved');
    assert.match(approvedRow.detail, new RegExp(`^Bash \\{"command":"rm -rf ${build}",.*\\}; edited by the owner to: Bash \\{"command":"rm -rf ${build}/tmp",`));
    assert.equal(approvedRow.via, 'approval link (signed in by email link)', 'the edit says how its session was signed in');
    assert.match(csv.find((r) => r.action === 'step_used').detail, new RegExp(`; used as the owner edited it: Bash \\{"command":"rm -rf ${build}/tmp",`));
    await stopped(a);
  });

  test('a call made beside another cannot pause: the model waits, then makes it again worded afresh, and it runs once', async () => {
    const a = await pullRunner('pull-p', { [PROJECT]: claudeProject(join(dir, 'work')) });
    const taskId = await handOff('Pull parallel [parallel]');
    const first = await a.runEnded(taskId, 'task_routed');
    assert.equal(first.paused, undefined, `a call beside another is not paused on: ${JSON.stringify(first)}`);
    const [waited] = bashResults(model, taskId);
    assert.equal(waited.is_error, true);
    assert.match(resultText(waited), /still waiting/);
    assert.equal(linesOf(sideOf(taskId)), 0);
    const step = await pendingStep(admin, taskId);
    await decide(browser, await approvalLink(base, taskId, step.step_id), '#approve');
    const resumed = await a.runEnded(taskId, 'step_decided');
    assert.equal(resumed.session, first.session, 'the same conversation, resumed with a prompt');
    assert.equal(linesOf(sideOf(taskId)), 1, 'the approved call ran exactly once');
    const calls = script.bashCalls(taskId);
    assert.equal(calls.length, 2, 'the model made the call again');
    assert.equal(calls[0].input.command, calls[1].input.command);
    assert.notEqual(calls[0].input.description, calls[1].input.description, 'worded afresh');
    assert.notDeepEqual(Object.keys(calls[0].input), Object.keys(calls[1].input), 'its keys in another order');
    const ran = bashResults(model, taskId).find((b) => b.tool_use_id === calls[1].id);
    assert.notEqual(ran.is_error, true, resultText(ran));
    assert.ok(toolUsesOf(requestWithResult(model, calls[1].id)).some((u) => u.id === calls[0].id), 'in the first run\'s conversation');
    const steps = admin(['steps', '--task', taskId]);
    assert.deepEqual(steps.map((x) => [x.step_id, x.status]), [[step.step_id, 'consumed']], 'the reworded call is the same step');
    assert.equal((await stepEmails(base, taskId)).length, 1, 'the owner was asked once');
    await stopped(a);
  });

  test('a runner stopped in the middle of a run, then started again: the wake-up comes back and resumes that session', { timeout: (VISIBILITY_S + 120) * 1000 }, async () => {
    const a = await pullRunner('pull-s', { [PROJECT]: claudeProject(join(dir, 'work')) });
    const taskId = await handOff('Pull stopped [stall] [no approval]');
    const started = await eventually(() => a.linesFor('run start', (l) => l.task === taskId)[0], { timeoutMs: 60000 });
    assert.ok(started, 'the run started');
    // The model is stalled after the checkpoint: wait for it, then Ctrl-C the runner mid-run.
    assert.ok(await eventually(async () => (await call(bob.client, 'get_task', { task_id: taskId })).task.state === 'working', { timeoutMs: 60000 }));
    await stopped(a);
    script.release();
    const cut = a.linesFor('run end', (l) => l.run === started.run)[0];
    assert.equal(cut.stopped, true, JSON.stringify(cut));
    assert.equal(a.linesFor('wake-up kept: the run was stopped, so it comes back and resumes its session', (l) => l.run === started.run).length, 1);

    const b = await pullRunner('pull-s-again', { [PROJECT]: claudeProject(join(dir, 'work')) });
    const again = await b.runEnded(taskId, 'task_routed');
    const redelivered = b.linesFor('wake-up', (l) => l.run === again.run)[0];
    assert.equal(redelivered.delivery, a.linesFor('wake-up', (l) => l.run === started.run)[0].delivery, 'the same wake-up came back');
    assert.equal(again.session, started.session, 'and resumed the stopped run\'s session');
    assert.equal(again.resumed, true);
    const { task } = await call(bob.client, 'get_task', { task_id: taskId });
    assert.equal(task.state, 'verifying', 'the work went on to its result');
    const resultReq = model.requests.find((r) => toolUsesOf(r).some((u) => u.name === 'mcp__prickle__return_result' && u.input.task_id === taskId));
    assert.ok(resultReq && toolUsesOf(resultReq).some((u) => u.name === 'mcp__prickle__accept_task'), 'the resumed run continued the stopped one\'s conversation');
    await stopped(b);
  });

  test('two runners polling with the same agent token: each wake-up starts exactly one run', async () => {
    const line = 'echo "$PRICKLE_TASK_ID $PRICKLE_RUN_ID" >> "$RUNS_FILE"; sleep 1';
    const runsFile = join(dir, 'work', 'runs-by-both.txt');
    const project = { '*': { dir: join(dir, 'work'), template: 'command', command: ['sh', '-c', line.replace('$RUNS_FILE', runsFile)] } };
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

  test('a runner killed while its run goes and another wake-up waits: both come back after the visibility timeout and each runs once', { timeout: (VISIBILITY_S + 120) * 1000 }, async () => {
    // A task_routed run holds the task (it sleeps); a step_decided wake-up for the same task is then
    // claimed but waits behind it when the runner is killed. Neither has ended by itself, so both
    // come back: the task_routed run (this time it ends at once), then the step_decided one.
    const commands = `if [ "$PRICKLE_REASON" = task_routed ]; then
  if [ -f "pid-$PRICKLE_TASK_ID" ]; then echo "$PRICKLE_TASK_ID $PRICKLE_RUN_ID" >> routed-again.txt; exit 0; fi
  echo $$ > "pid-$PRICKLE_TASK_ID"; exec sleep 60
fi
echo "$PRICKLE_TASK_ID $PRICKLE_RUN_ID $PRICKLE_REASON $PRICKLE_RESUMES_RUN" >> resumed.txt`;
    const project = { '*': { dir: join(dir, 'work'), template: 'command', command: ['sh', '-c', commands] } };
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
    const routedAgain = await d.runEnded(taskId, 'task_routed');
    assert.equal(d.linesFor('wake-up', (l) => l.run === routedAgain.run)[0].delivery,
      c.linesFor('wake-up', (l) => l.task === taskId && l.reason === 'task_routed')[0].delivery, 'the killed run\'s wake-up came back');
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
    assert.deepEqual(readFileSync(join(dir, 'work', 'routed-again.txt'), 'utf8').trim().split('\n').filter((l) => l.startsWith(taskId)),
      [`${taskId} ${routedAgain.run}`], 'the killed run\'s wake-up ran once more');
    await stopped(d);
  });
});
