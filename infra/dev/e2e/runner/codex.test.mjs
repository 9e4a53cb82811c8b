// prickle-runner's codex template end to end (pull mode) against the running local stack, with the
// real Codex CLI (pinned in package.json) and a scripted stand-in of the OpenAI Responses API on
// loopback (responses.mjs; no account, no network). The runner starts `prickle-runner codex-run`,
// which hosts `codex app-server` for the task's one thread and asks the owner (request_step) before
// each command Codex asks about. The owner decides in headless Chromium from the emailed link.
//
//   approve: bob hands a task to alice/writer → the model accepts (MCP), checkpoints, asks
//     exec_command to append a line → pending: the call has not run, the owner was asked once
//     (codex-run asks request_step again every second meanwhile: the same step) → the owner
//     approves → the same call runs exactly once, in the same turn → return_result → bob accepts;
//   refuse: the owner refuses with a message → SIGUSR1 makes codex-run ask at once (its poll is a
//     minute) → the command never runs → the model's next request, in the same thread, holds the
//     owner's message;
//   patch: apply_patch is asked with its diff and applied once when allowed;
//   edit: the owner edits the command and approves the edit; codex-run declines Codex's request without
//     using the approval, tells the model the edited command, and that command is allowed once;
//   mcp: another MCP server's destructive tool is asked as mcp__other__append and called once when allowed;
//   stopped: the runner stops while the owner is asked → the owner approves → a runner started later
//     runs step_decided, which resumes the thread with the asked call quoted → the model makes it
//     again → the same step, allowed once: the line is appended once.
import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, admin, uniq, eventually, sleep, PROJECT, CHROMIUM_NEED, npmNeed } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startResponses, inputOf, textOf, callsOf } from './responses.mjs';
import { codexModel, userMessages } from './codexmodel.mjs';
import { CODEX, CHROMIUM, CHROMIUM_ARGS, RUN_WAIT_MS, runnerBinary, startRunner, linesOf, keepRunnerLogs, decide as decideIn, signInToEdit } from './harness.mjs';

const { stack, skipReason } = await loadStack(npmNeed(CODEX, 'Codex'), CHROMIUM_NEED);

/**
 * Another MCP server on loopback (streamable HTTP, JSON answers, stateless) with one tool, `append`,
 * annotated destructive: it appends a line to a file. Codex asks before calling it.
 */
async function startOtherMcp() {
  const calls = [];
  const tool = { name: 'append', description: 'Append a line to a file.', annotations: { destructiveHint: true, readOnlyHint: false },
    inputSchema: { type: 'object', properties: { path: { type: 'string' }, line: { type: 'string' } }, required: ['path', 'line'] } };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      let m;
      try { m = JSON.parse(body); } catch { res.writeHead(405).end(); return; }
      if (m.id === undefined) { res.writeHead(202).end(); return; }
      const answer = (result, error) => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...(error ? { error } : { result }) })); };
      if (m.method === 'initialize') return answer({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'other', version: '1' } });
      if (m.method === 'tools/list') return answer({ tools: [tool] });
      if (m.method === 'tools/call' && m.params.name === 'append') {
        calls.push(m.params.arguments);
        appendFileSync(m.params.arguments.path, `${m.params.arguments.line}\n`);
        return answer({ content: [{ type: 'text', text: 'appended one line' }] });
      }
      return answer(undefined, { code: -32601, message: `no ${m.method}` });
    });
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${server.address().port}/mcp`, calls, close: () => new Promise((done) => server.close(done)) };
}

describe('prickle-runner, codex template: Codex asks, the owner decides, the same call runs once', { skip: skipUnlessStack(skipReason), timeout: 900_000 }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let dir;
  let bin;
  let bob;
  let model;
  let browser;
  let codexHome;
  const runners = [];
  const sideOf = (taskId) => join(dir, 'work', `side-${taskId}.txt`);
  const commandFor = (taskId) => `echo ran >> ${sideOf(taskId)}`;
  const notesOf = (taskId) => join(dir, 'work', `notes-${taskId}.txt`);
  const callTool = async (client, name, args) => {
    const r = await client.callTool({ name, arguments: args });
    assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
    return r.structuredContent;
  };
  const handOff = async (what) => (await callTool(bob.client, 'hand_off_task', { project: PROJECT, assignee: 'alice/writer', packet: {
    task: `${what} ${uniq('codex')}`, deliverable_type: 'answer', acceptance_criteria: ['The side-effect file has its line.'] } })).task.id;
  /** A pull-mode runner whose website-v2 runs are Codex runs, codex-run flags in args. */
  const codexRunner = async (name, args) => {
    const r = await startRunner(bin, dir, name, {
      prickle_url: base, agent: 'alice/writer', agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull',
      concurrency: 2, run_timeout: '5m', grace: '5s', log_dir: join(dir, 'logs'),
      projects: { [PROJECT]: { dir: join(dir, 'work'), template: 'codex', program: CODEX, args } },
    }, { PATH: process.env.PATH, HOME: join(dir, 'home'), CODEX_HOME: codexHome, MOCK_API_KEY: 'test',
      PRICKLE_AGENT_TOKEN: stack.tokens['alice/writer'] });
    runners.push(r);
    return r;
  };
  /** The JSON lines codex-run wrote into a run's log. */
  const runLog = (r, runId) => {
    const start = r.linesFor('run start', (l) => l.run === runId)[0];
    assert.ok(start, `run ${runId} started`);
    return readFileSync(start.log, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  };
  const runOf = async (r, taskId, reason) => {
    const s = await eventually(() => r.linesFor('run start', (l) => l.task === taskId && l.reason === reason)[0], { timeoutMs: RUN_WAIT_MS });
    assert.ok(s, `a ${reason} run of ${taskId} started`);
    return s.run;
  };
  const logLine = async (r, runId, msg, pred = () => true, timeoutMs = RUN_WAIT_MS) => {
    const l = await eventually(() => runLog(r, runId).find((x) => x.msg === msg && pred(x)), { timeoutMs, intervalMs: 250 });
    assert.ok(l, `run ${runId} logged "${msg}": ${JSON.stringify(runLog(r, runId).slice(-6))}`);
    return l;
  };
  const pendingExec = async (taskId, tool = 'exec_command') => {
    const s = await eventually(() => admin(['steps', '--task', taskId]).find((x) => x.tool_name === tool && x.status === 'pending'), { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
    assert.ok(s, `a pending ${tool} step on ${taskId}`);
    return s;
  };
  const outbox = async () => (await fetch(`${base}/dev/outbox.json`)).json();
  const claimsOf = (u) => JSON.parse(Buffer.from(new URL(u).pathname.split('/').pop().split('.')[0], 'base64url').toString('utf8'));
  const mailsFor = async (stepId) => (await outbox()).filter((m) => m.channel === 'email' && (m.links || []).some((u) => u.startsWith(`${base}/a/`) && claimsOf(u).step_id === stepId));
  const decide = async (stepId, button, message, subject = /Approve exec_command for alice\/writer\? \(to run the shell command `.*echo ran >> /, input) => {
    const [mail] = await eventually(async () => { const m = await mailsFor(stepId); return m.length ? m : null; }, { timeoutMs: 20000 });
    assert.match(mail.subject, subject);
    await decideIn(browser, mail.links.find((u) => u.startsWith(`${base}/a/`) && claimsOf(u).step_id === stepId), button, message, input);
  };
  /** The model's requests in the thread of taskId (Codex sends the thread id as prompt_cache_key). */
  const requestsOf = (taskId) => model.requests.filter((q) => userMessages(q).some(({ item }) => textOf(item).includes(`task ${taskId} (`)));
  const execCallsOf = (taskId) => new Set(requestsOf(taskId).flatMap(callsOf).filter((c) => c.name === 'exec_command').map((c) => c.call_id));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-codex-'));
    mkdirSync(join(dir, 'work'));
    bin = runnerBinary(dir);
    model = await startResponses(codexModel({ commandFor, patchFor: notesOf, sideOf }));
    codexHome = join(dir, 'codex-home');
    mkdirSync(codexHome);
    writeFileSync(join(codexHome, 'config.toml'), `model_provider = "mock"\nmodel = "gpt-5-standin"\n\n[model_providers.mock]\nname = "Responses stand-in"\n` +
      `base_url = "${model.url}"\nwire_api = "responses"\nenv_key = "MOCK_API_KEY"\n`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-codex');
    admin(['set-wake', '--agent', 'alice/writer', '--pull']);
  });

  after(async () => {
    for (const r of runners) await r.stop();
    if (stack) admin(['set-wake', '--agent', 'alice/writer', '--url', `${base}/dev/wake/alice/writer`]);
    await browser?.close();
    await bob?.client.close().catch(() => {});
    await model?.close();
    const keep = keepRunnerLogs('runner-codex-logs', dir, runners);
    if (keep && model) writeFileSync(join(keep, 'model-requests.json'), JSON.stringify(model.requests.map((q) => ({ thread: q.prompt_cache_key, input: inputOf(q).slice(2) })), null, 1));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const r of runners) await r.stop(); // a test that failed leaves no runner claiming the next one's wake-ups
    assert.deepEqual(model.errors.map((e) => e.message), [], 'the stand-in model scripted every turn');
  });

  test('approve: the call pauses while the owner decides, then runs exactly once in the same turn', async () => {
    const r = await codexRunner('codex-approve', ['--poll', '1s', '--poll-max', '2s']);
    const taskId = await handOff('Codex approve');
    const runId = await runOf(r, taskId, 'task_routed');
    const step = await pendingExec(taskId);
    const asked = await logLine(r, runId, 'approval asked');
    assert.equal(asked.tool_name, 'exec_command');
    assert.match(asked.does, /^run the shell command `.*echo ran >> .*` in /);
    await sleep(4000); // codex-run asks again every 1-2 s meanwhile
    assert.equal(linesOf(sideOf(taskId)), 0, 'the call has not run');
    assert.equal(admin(['steps', '--task', taskId]).length, 1, 'asked again, it is the same step');
    assert.equal((await mailsFor(step.step_id)).length, 1, 'the owner was asked once');
    assert.equal(r.linesFor('run end', (l) => l.run === runId).length, 0, 'the run is paused on the call, not ended');
    assert.deepEqual(Object.keys(step.input).sort(), ['command', 'cwd'], 'the step is what runs, nothing the model words');
    assert.equal(step.input.cwd, join(dir, 'work'));
    assert.match(step.input.command, new RegExp(`echo ran >> ${sideOf(taskId)}'?$`));

    await decide(step.step_id, '#approve');
    const answered = await logLine(r, runId, 'approval answered');
    assert.equal(answered.decision, 'accept');
    assert.equal(answered.status, 'consumed');
    const end = await r.runEnded(taskId, 'task_routed');
    assert.equal(end.run, runId);
    assert.equal(end.exit_code, 0);
    assert.equal(end.checkpoint, 'own');
    assert.equal(linesOf(sideOf(taskId)), 1, 'the approved call ran exactly once');
    assert.equal(execCallsOf(taskId).size, 1, 'the model asked for it once: the same call ran, in the same turn');
    assert.equal(runLog(r, runId).filter((l) => l.msg === 'approval asked').length, 1);
    const { task } = await callTool(bob.client, 'get_task', { task_id: taskId });
    assert.equal(task.state, 'verifying');
    // The owner's decision also woke the task (step_decided): that run resumes the thread and finds
    // nothing to do. It comes before bob's review: a wake-up claimed once its task is closed starts no run.
    const again = await r.runEnded(taskId, 'step_decided');
    assert.equal(again.exit_code, 0);
    assert.ok(runLog(r, again.run).some((l) => l.msg === 'codex thread resumed'));
    assert.equal(linesOf(sideOf(taskId)), 1);
    assert.equal((await callTool(bob.client, 'review_result', { task_id: taskId, verdict: 'accept' })).task.state, 'completed');
    // Each run reports its own tokens (the stand-in's 10 in and 10 out per reply), not the thread's
    // running total: together they are the thread's replies, once each.
    const usage = (id) => runLog(r, id).find((l) => l.msg === 'codex-run usage')?.usage;
    const [u1, u2] = [usage(runId), usage(again.run)];
    assert.ok(u1?.input_tokens > 0 && u2?.input_tokens > 0, `each run reports its usage: ${JSON.stringify([u1, u2])}`);
    assert.equal(u1.input_tokens + u2.input_tokens, 10 * requestsOf(taskId).length);
    assert.equal(u1.output_tokens + u2.output_tokens, 10 * requestsOf(taskId).length);
    assert.deepEqual([u1.model, u1.cost_usd, u2.model], ['gpt-5-standin', 0, 'gpt-5-standin']);
    await r.stop();
  });

  test('refuse: the command never runs and the model hears the owner in the same thread; SIGUSR1 asks at once', async () => {
    const r = await codexRunner('codex-refuse', ['--poll', '60s', '--poll-max', '60s']);
    const taskId = await handOff('Codex refuse');
    const runId = await runOf(r, taskId, 'task_routed');
    const step = await pendingExec(taskId);
    const waiting = await logLine(r, runId, 'waiting for the owner');
    assert.ok(waiting.pid, 'codex-run says its pid');
    await decide(step.step_id, '#refuse', 'Not on a Friday: leave the side file alone.');
    // The decision's wake-up (step_decided) reaches the runner, which tells the waiting run (SIGUSR1):
    // with its poll at a minute, only that explains an answer within seconds.
    const told = await eventually(() => r.linesFor('running run told of the wake-up', (l) => l.task === taskId)[0], { timeoutMs: 20000 });
    assert.ok(told, 'the runner told the waiting run of the step_decided wake-up');
    const answered = await logLine(r, runId, 'approval answered', () => true, 15000);
    assert.ok(Date.parse(answered.time) - Date.parse(waiting.time) < 50000, 'answered well before the minute of its poll');
    assert.equal(answered.decision, 'decline');
    assert.equal(answered.status, 'refused');
    const end = await r.runEnded(taskId, 'task_routed');
    assert.equal(end.exit_code, 0);
    assert.equal(linesOf(sideOf(taskId)), 0, 'the refused command never ran');
    const heard = requestsOf(taskId).find((q) => textOf(userMessages(q).at(-1).item).includes('Not on a Friday'));
    assert.ok(heard, "the model's next request holds the owner's message");
    const execInThread = callsOf(heard).find((c) => c.name === 'exec_command');
    assert.ok(execInThread && /rejected/.test(execInThread.output), 'in the same thread: the request carries the declined call');
    const threads = new Set(requestsOf(taskId).map((q) => q.prompt_cache_key));
    assert.equal(threads.size, 1, `one thread for the task: ${[...threads]}`);
    const { task } = await callTool(bob.client, 'get_task', { task_id: taskId });
    assert.match(task.latest_checkpoint.progress, /Not on a Friday/);
    await r.runEnded(taskId, 'step_decided');
    assert.equal(linesOf(sideOf(taskId)), 0);
    await r.stop();
  });

  test('edit: the owner edits the command; Codex\'s request is declined unused; the model runs the edited command, allowed once', async () => {
    const r = await codexRunner('codex-edit', ['--poll', '1s', '--poll-max', '2s']);
    const taskId = await handOff('Codex edit');
    const runId = await runOf(r, taskId, 'task_routed');
    const step = await pendingExec(taskId);
    const edit = step.input.command.replace('echo ran', 'echo edited');
    assert.notEqual(edit, step.input.command);
    const [mail] = await eventually(async () => { const m = await mailsFor(step.step_id); return m.length ? m : null; }, { timeoutMs: 20000 });
    const page = await (await browser.newContext()).newPage();
    const link = mail.links.find((u) => u.startsWith(`${base}/a/`) && claimsOf(u).step_id === step.step_id);
    assert.equal((await page.goto(link)).status(), 200);
    await signInToEdit(page, base, link);
    await page.locator('#edit-step summary').click();
    assert.equal(await page.locator('#command-step').inputValue(), step.input.command);
    await page.locator('#command-step').fill(edit);
    await Promise.all([page.waitForURL(/\?done=1$/), page.locator('#approve-edit-step').click()]);
    await page.context().close();

    const declined = await logLine(r, runId, 'approval answered', (l) => l.decision === 'decline: the owner edited the call');
    assert.equal(declined.status, 'approved', 'looked at, not used');
    const allowed = await logLine(r, runId, 'approval answered', (l) => l.decision === 'accept');
    assert.equal(allowed.status, 'consumed');
    const end = await r.runEnded(taskId, 'task_routed');
    assert.equal(end.exit_code, 0);
    assert.deepEqual(readFileSync(sideOf(taskId), 'utf8').split('\n').filter(Boolean), ['edited'], 'the edited command ran once; the one asked never ran');
    const told = requestsOf(taskId).find((q) => textOf(userMessages(q).at(-1).item).startsWith('Prickle: your owner edited these calls'));
    assert.ok(told && textOf(userMessages(told).at(-1).item).includes(`so run this command instead: echo edited >> ${sideOf(taskId)}`), 'the model is told the edited command');
    const steps = admin(['steps', '--task', taskId]);
    assert.deepEqual(steps.map((x) => [x.step_id, x.status, x.edited_input?.command]), [[step.step_id, 'consumed', edit]], 'the edited call was the same step, used once');
    assert.equal((await callTool(bob.client, 'get_task', { task_id: taskId })).task.state, 'verifying');
    await r.runEnded(taskId, 'step_decided');
    await r.stop();
  });

  test('a patch: asked as apply_patch with its diff, applied once when the owner allows it', async () => {
    const r = await codexRunner('codex-patch', ['--poll', '1s', '--poll-max', '2s']);
    const taskId = await handOff('Codex patch');
    const runId = await runOf(r, taskId, 'task_routed');
    const step = await pendingExec(taskId, 'apply_patch');
    assert.deepEqual(step.input, { changes: [{ path: notesOf(taskId), kind: 'add', diff: 'patched once\n' }] });
    assert.equal(existsSync(notesOf(taskId)), false, 'the patch waits for the owner');
    await decide(step.step_id, '#approve', undefined, /Approve apply_patch for alice\/writer\? \(to apply a patch to the file .*notes-/, /patched once/);
    const answered = await logLine(r, runId, 'approval answered');
    assert.equal(answered.status, 'consumed');
    const end = await r.runEnded(taskId, 'task_routed');
    assert.equal(end.exit_code, 0);
    assert.equal(readFileSync(notesOf(taskId), 'utf8'), 'patched once\n');
    assert.equal((await callTool(bob.client, 'get_task', { task_id: taskId })).task.state, 'verifying');
    await r.runEnded(taskId, 'step_decided');
    await r.stop();
  });

  test("another MCP server's destructive tool: asked as mcp__other__append, called once when allowed", async () => {
    const other = await startOtherMcp();
    try {
      const r = await codexRunner('codex-mcp', ['--poll', '1s', '--poll-max', '2s', '-c', `mcp_servers.other.url=${JSON.stringify(other.url)}`]);
      const taskId = await handOff('Codex MCP');
      const runId = await runOf(r, taskId, 'task_routed');
      const step = await pendingExec(taskId, 'mcp__other__append');
      assert.deepEqual(step.input, { path: sideOf(taskId), line: 'ran' });
      assert.equal(other.calls.length, 0, 'the tool waits for the owner');
      const asked = await logLine(r, runId, 'approval asked');
      assert.match(asked.tool_use_id, /^call_standin_/, "the tool_use_id is Codex's item id of the call");
      await decide(step.step_id, '#approve', undefined, /Approve mcp__other__append for alice\/writer\? \(to call the tool append of the MCP server other/, /"line": "ran"/);
      const end = await r.runEnded(taskId, 'task_routed');
      assert.equal(end.exit_code, 0);
      assert.equal(other.calls.length, 1, 'called exactly once');
      assert.equal(linesOf(sideOf(taskId)), 1);
      assert.equal((await callTool(bob.client, 'get_task', { task_id: taskId })).task.state, 'verifying');
      await r.runEnded(taskId, 'step_decided');
      await r.stop();
    } finally {
      await other.close();
    }
  });

  test('stopped: the runner stops while the owner is asked; the next run quotes the call and it runs once', async () => {
    const a = await codexRunner('codex-stop-a', ['--poll', '60s']);
    const taskId = await handOff('Codex stopped');
    const first = await runOf(a, taskId, 'task_routed');
    const step = await pendingExec(taskId);
    await logLine(a, first, 'waiting for the owner');
    const out = await a.stop();
    assert.equal(out.code, 0, `the runner stops cleanly: ${JSON.stringify(out)}`);
    assert.ok(runLog(a, first).some((l) => l.msg === 'approval left open: the run is stopping'));
    await decide(step.step_id, '#approve');
    await sleep(1000);
    assert.equal(linesOf(sideOf(taskId)), 0);

    const b = await codexRunner('codex-stop-b', ['--poll', '60s']);
    const resumed = await b.runEnded(taskId, 'step_decided');
    assert.equal(b.linesFor('wake-up', (l) => l.run === resumed.run)[0].resumes_run, first);
    assert.equal(resumed.exit_code, 0);
    assert.equal(linesOf(sideOf(taskId)), 1, 'the approved call ran exactly once');
    const quoted = requestsOf(taskId).find((q) => textOf(userMessages(q).at(-1).item).includes('and it ended before the answer came'));
    assert.ok(quoted, 'the resumed run quotes the call left waiting');
    assert.ok(textOf(userMessages(quoted).at(-1).item).includes(`echo ran >> ${sideOf(taskId)}`));
    const answered = runLog(b, resumed.run).find((l) => l.msg === 'approval answered');
    assert.equal(answered?.status, 'consumed', 'the same step, allowed once');
    assert.equal(admin(['steps', '--task', taskId]).length, 1);
    assert.equal((await callTool(bob.client, 'get_task', { task_id: taskId })).task.state, 'verifying');
    assert.equal((await callTool(bob.client, 'review_result', { task_id: taskId, verdict: 'accept' })).task.state, 'completed');
    await b.stop();
  });
});
