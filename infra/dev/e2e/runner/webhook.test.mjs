// prickle-runner end to end in webhook mode against the running local stack: the runner is
// built from infra/cmd/prickle-runner and started with a config file as docs/running-agents.md (webhook mode)
// shows; it starts the real Claude Code (pinned in package.json) for each wake-up, against a scripted
// stand-in of the Messages API on loopback (no account, no network). The owner decides in headless
// Chromium from the link in the dev outbox.
//
//   approve: hand_off_task to alice/writer → task_routed reaches the runner → Claude Code reads the
//     task, accepts, checkpoints, tries a Bash call outside its allow-list → pending: the run pauses
//     on that very call (Prickle's PreToolUse hook defers it) → the owner approves → step_decided
//     reaches the runner, which resumes the same session with no prompt → Claude Code asks the same
//     call again (same tool_use_id), it is allowed and runs exactly once, and the model's next
//     request holds the first run's conversation → return_result → the requester accepts;
//   refuse: the owner's message reaches the model in the same conversation, the call never runs,
//     and the run, which ends without a checkpoint of its own, gets one from the runner;
//   webhook: a bad signature and a stale timestamp get 401; a replayed delivery runs once.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, admin, uniq, eventually, PROJECT, CHROMIUM_NEED, npmNeed } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startStandIn, resultText } from '../claude/standin.mjs';
import { CLAUDE, CHROMIUM, CHROMIUM_ARGS, freePort, runnerBinary, startRunner, claudeProject, modelEnv, wokenModel,
  bashResults, requestWithResult, toolUsesOf, stepEmails, linesOf, approvalLink, decide, pendingStep } from './harness.mjs';

const { stack, skipReason } = await loadStack(npmNeed(CLAUDE, 'Claude Code'), CHROMIUM_NEED);

describe('prickle-runner, webhook mode: wake-ups start Claude Code, the owner decides, the run resumes', { skip: skipUnlessStack(skipReason) }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let dir;
  let bob;
  let model;
  let script;
  let browser;
  let runner;
  let secret;
  let hookURL;
  const sideOf = (taskId) => join(dir, 'work', `side-${taskId}.txt`);
  const call = async (client, name, args) => {
    const r = await client.callTool({ name, arguments: args });
    assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
    return r.structuredContent;
  };
  const handOff = async (what) => (await call(bob.client, 'hand_off_task', { project: PROJECT, assignee: 'alice/writer', packet: {
    task: `${what} ${uniq('runner')}`, deliverable_type: 'answer', acceptance_criteria: ['The side-effect file has its line.'] } })).task.id;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-runner-'));
    mkdirSync(join(dir, 'work'));
    const bin = runnerBinary(dir);
    script = wokenModel((taskId) => `echo ran >> ${sideOf(taskId)}`);
    model = await startStandIn(script);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-runner');

    // docs/running-agents.md's steps: register the runner's URL with a secret, write the config, start it.
    const port = await freePort();
    hookURL = `http://127.0.0.1:${port}/prickle`;
    secret = `whsec_${randomBytes(24).toString('base64url')}`;
    admin(['set-wake', '--agent', 'alice/writer', '--url', hookURL, '--secret', secret]);
    runner = await startRunner(bin, dir, 'runner', {
      prickle_url: base, agent: 'alice/writer', agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'webhook',
      webhook: { listen: `127.0.0.1:${port}`, path: '/prickle', secret_env: 'PRICKLE_WAKE_SECRET' },
      concurrency: 2, run_timeout: '2m', grace: '5s', log_dir: join(dir, 'logs'),
      projects: { [PROJECT]: claudeProject(join(dir, 'work')) },
    }, { ...modelEnv(model, join(dir, 'home')), PRICKLE_AGENT_TOKEN: stack.tokens['alice/writer'], PRICKLE_WAKE_SECRET: secret });
    assert.equal(runner.linesFor('prickle-runner listening for wake-ups')[0].url, hookURL);
  });

  after(async () => {
    if (runner) {
      const out = await runner.stop();
      assert.equal(out.code, 0, `the runner stops cleanly on SIGTERM: ${JSON.stringify(out)}`);
      assert.equal(runner.linesFor('prickle-runner stopped').length, 1);
    }
    // Point alice/writer back at the stack's own receiver, as the seed had it, for the suites after this one.
    if (stack) admin(['set-wake', '--agent', 'alice/writer', '--url', `${base}/dev/wake/alice/writer`]);
    await browser?.close();
    await bob?.client.close().catch(() => {});
    await model?.close();
    if (process.env.ARTIFACTS && dir && existsSync(join(dir, 'logs'))) {
      const keep = join(process.env.ARTIFACTS, 'runner-webhook-logs');
      mkdirSync(keep, { recursive: true });
      for (const f of readdirSync(join(dir, 'logs'))) if (f.endsWith('.log') || f.endsWith('.jsonl')) writeFileSync(join(keep, f), readFileSync(join(dir, 'logs', f)));
      writeFileSync(join(keep, 'runner-output.jsonl'), runner.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  let refusedTask;

  test('approved: the run pauses on the call, the owner approves once, and the same session makes that call exactly once', async () => {
    const taskId = await handOff('Runner story');
    const first = await runner.runEnded(taskId, 'task_routed');
    assert.equal(first.exit_code, 0, JSON.stringify(first));
    assert.equal(first.paused, 'Bash', `the run paused on its Bash call: ${JSON.stringify(first)}`);
    assert.ok(first.session && first.resumed === false, 'a new session');
    assert.equal(first.checkpoint, 'own', 'the run checkpointed itself, so the runner adds none');
    assert.equal(linesOf(sideOf(taskId)), 0, 'the call was not made');
    assert.deepEqual(bashResults(model, taskId), [], 'paused: the model was told nothing yet');
    const [asked] = script.bashCalls(taskId);
    assert.equal(first.paused_call, asked.id, 'it paused on the very call the model made');
    const step = await pendingStep(admin, taskId);
    assert.equal(step.input.command, `echo ran >> ${sideOf(taskId)}`);
    assert.equal(step.run_id, first.run);

    // The wake-up and run lines, the run's log file and its MCP config gone.
    assert.equal(runner.linesFor('wake-up', (l) => l.task === taskId && l.reason === 'task_routed' && l.via === 'webhook').length, 1);
    assert.ok(existsSync(first.log) && statSync(first.log).size > 0, `the run's log ${first.log}`);
    assert.equal((statSync(first.log).mode & 0o777), 0o600);
    assert.match(readFileSync(first.log, 'utf8'), /"stop_reason":"tool_deferred"/);
    assert.deepEqual(readdirSync(join(dir, 'logs', 'mcp')), [], 'the run\'s MCP config (with its token) was removed');

    await decide(browser, await approvalLink(base, taskId, step.step_id), '#approve');
    const resumed = await runner.runEnded(taskId, 'step_decided');
    const wake = runner.linesFor('wake-up', (l) => l.run === resumed.run)[0];
    assert.equal(wake.resumes_run, first.run, 'the wake-up resumes the run that asked');
    assert.equal(resumed.session, first.session, 'the same session');
    assert.equal(resumed.resumed, true);
    assert.equal(resumed.exit_code, 0, JSON.stringify(resumed));
    assert.equal(resumed.checkpoint, 'own', 'return_result counts as the run\'s own');
    assert.equal(linesOf(sideOf(taskId)), 1, 'the approved call ran exactly once');
    assert.deepEqual(script.bashCalls(taskId).map((b) => b.id), [asked.id], 'the call was not generated again');
    const [allowed] = bashResults(model, taskId);
    assert.equal(allowed.tool_use_id, asked.id);
    assert.notEqual(allowed.is_error, true, resultText(allowed));
    const after = requestWithResult(model, asked.id);
    assert.ok(toolUsesOf(after).some((u) => u.name === 'mcp__prickle__accept_task'), 'the request after the call holds the first run\'s conversation');
    const steps = admin(['steps', '--task', taskId]);
    assert.deepEqual(steps.map((x) => [x.step_id, x.status]), [[step.step_id, 'consumed']], 'one step, used once');
    assert.equal((await stepEmails(base, taskId)).length, 1, 'the owner was asked once');

    const { task } = await call(bob.client, 'get_task', { task_id: taskId });
    assert.equal(task.state, 'verifying');
    assert.equal(task.result.evidence[0].kind, 'test_output');
    const reviewed = await call(bob.client, 'review_result', { task_id: taskId, verdict: 'accept' });
    assert.equal(reviewed.task.state, 'completed');
  });

  test('refused: the owner\'s message reaches the model in the same conversation, the call never runs, and the runner checkpoints how the run ended', async () => {
    const taskId = await handOff('Runner refusal');
    refusedTask = taskId;
    const first = await runner.runEnded(taskId, 'task_routed');
    assert.equal(first.paused, 'Bash');
    const step = await pendingStep(admin, taskId);
    await decide(browser, await approvalLink(base, taskId, step.step_id), '#refuse', 'Not that file: use the report instead.');
    const resumed = await runner.runEnded(taskId, 'step_decided');
    assert.equal(resumed.session, first.session);
    assert.equal(linesOf(sideOf(taskId)), 0, 'the refused call never ran');
    const [denied] = bashResults(model, taskId);
    assert.equal(denied.tool_use_id, first.paused_call);
    assert.equal(denied.is_error, true);
    assert.match(resultText(denied), /Not that file: use the report instead\./);
    assert.ok(toolUsesOf(requestWithResult(model, denied.tool_use_id)).some((u) => u.name === 'mcp__prickle__accept_task'), 'in the same conversation');
    assert.equal(resumed.checkpoint, 'saved by the runner');
    const { task } = await call(bob.client, 'get_task', { task_id: taskId });
    assert.match(task.latest_checkpoint.progress, new RegExp(`^prickle-runner: run ${resumed.run} \\(step_decided\\) exited with status 0 after \\d+s without return_result or a checkpoint of its own\\.$`));
    const records = readFileSync(join(dir, 'logs', 'runs.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const rec = records.find((r) => r.run_id === resumed.run);
    assert.equal(rec.exit.code, 0);
    assert.equal(rec.checkpoint, 'saved by the runner');
    assert.equal(rec.session, first.session);
    assert.equal(rec.resumed, true);
  });

  test('webhook: a bad signature and a stale timestamp get 401; a replayed delivery runs once', async () => {
    const run = admin(['start-run', '--agent', 'alice/writer', '--task', refusedTask]);
    const body = JSON.stringify({ task_id: refusedTask, run_id: run.run_id, run_token: run.run_token, reason: 'result_refused', resumes_run: '' });
    const sign = (ts, key = secret) => `v1=${createHmac('sha256', key).update(`${ts}.${body}`).digest('hex')}`;
    const post = (ts, sig) => fetch(hookURL, { method: 'POST', body, headers: { 'Content-Type': 'application/json', 'Prickle-Timestamp': String(ts), 'Prickle-Signature': sig } });
    const now = Math.floor(Date.now() / 1000);
    const before = runner.linesFor('wake-up').length;
    const refusedBefore = runner.linesFor('webhook refused').length;
    assert.equal((await post(now, sign(now, 'whsec_not_the_secret_at_all'))).status, 401, 'bad signature');
    assert.equal((await post(now - 600, sign(now - 600))).status, 401, 'stale timestamp, correctly signed');
    assert.equal((await post(now, 'v1=')).status, 401, 'empty signature');
    assert.equal((await fetch(hookURL)).status, 405);
    await eventually(() => runner.linesFor('webhook refused').length >= refusedBefore + 3, { timeoutMs: 5000 });
    assert.deepEqual(runner.linesFor('webhook refused').slice(-3).map((l) => l.why), ['bad signature', 'stale timestamp', 'bad signature']);
    assert.equal(runner.linesFor('wake-up').length, before, 'nothing refused was taken');
    assert.equal((await post(now, sign(now))).status, 202, 'the delivery is taken');
    assert.equal((await post(now, sign(now))).status, 200, 'the replay is answered, not run');
    await runner.runEnded(refusedTask, 'result_refused');
    assert.equal((await post(now, sign(now))).status, 200, 'a replay after the run is not run either');
    assert.equal(runner.linesFor('run start', (l) => l.run === run.run_id).length, 1, 'one run for the delivery');
    const repeats = () => runner.linesFor('wake-up repeated; not run again', (l) => l.run === run.run_id).length;
    await eventually(() => repeats() >= 2, { timeoutMs: 5000 }); // the runner's output arrives after its answers
    assert.equal(repeats(), 2);
  });
});
