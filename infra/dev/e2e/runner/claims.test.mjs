// Files claimed as they are touched, and edits guarded, end to end against the running local stack:
// two agents of website-v2, alice/writer and dave/coder (another owner, made here with the admin
// CLI), each with its own prickle-runner (pull mode), its own token and its own clone of one git
// repository (branches feature/alice and feature/dave), run the real Claude Code against the stand-in
// model. Their projects allow Edit and Write without asking (allowed_tools), as a team that lets its
// agents change code would set them. Neither model ever calls update_pulse: the runner's hook claims.
//
//   deny (the default file guard): alice's run edits src/app.ts and holds it (Team Pulse lists it
//     with her task and branch, in read_room and in Chromium, on Team Pulse and the task page);
//     dave's run edits the same file: the edit is stopped before it happens, with alice/writer, her
//     task and since when named, and dave's file is unchanged; dave's model waits (read_room) and
//     makes the edit again once alice's run ended and the runner released her files: it goes ahead,
//     and dave's pulse now holds the file;
//   ask (set-file-guard ask): dave's edit of a file alice holds is asked of dave's owner; the run
//     pauses on it; dave approves in Chromium; the resumed run makes the edit, and alice keeps the file;
//   warn (set-file-guard warn): dave's edit goes ahead, and his model is told who holds the file;
//   Bash: alice's run writes a file with a shell command (Bash allowed); the PostToolUse hook claims it
//     while the run goes on, and dave's edit of it is stopped until alice's run released it.
import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, admin, askSignInLink, uniq, eventually, sleep, PROJECT, CHROMIUM_NEED, npmNeed } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startStandIn, resultText } from '../claude/standin.mjs';
import { CLAUDE, CHROMIUM, CHROMIUM_ARGS, RUN_WAIT_MS, runnerBinary, startRunner, modelEnv, promptOf, toolUsesOf, keepRunnerLogs } from './harness.mjs';
import { workRepo, heldTurns, callTool } from './claimskit.mjs';

// The runner's default allow-list (config.go's DefaultAllowedTools) and the two edit tools.
const ALLOWED = ['mcp__prickle__read_room', 'mcp__prickle__get_task', 'mcp__prickle__accept_task', 'mcp__prickle__save_checkpoint',
  'mcp__prickle__return_result', 'mcp__prickle__review_result', 'mcp__prickle__update_pulse', 'Read', 'Grep', 'Glob', 'Edit', 'Write'];
const DAVE = 'dave/coder';
const HELLO = "export const greeting = 'hello';\n";
// The files of this run of the suite: Team Pulse outlives it, and a claim is a path in the repository.
const RUN = uniq('f');
const APP = `src/app-${RUN}.ts`;
const PAGE = `src/page-${RUN}.ts`;
const WARN = `src/warn-${RUN}.ts`;
const SHELL = `src/shell-${RUN}.ts`;
const re = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const { stack, skipReason } = await loadStack(npmNeed(CLAUDE, 'Claude Code'), CHROMIUM_NEED);

/**
 * The model of a woken run: it reads the task, accepts it, reads the file its title names
 * ("[edit ${APP}]") in its working directory and edits it. An edit stopped because a teammate holds
 * the file makes it wait: it reads the room every second and makes the same edit again once no other
 * task's pulse lists the file. "[stall]" holds it after its edit until `release(taskId)`; then it
 * returns its result.
 */
function claimingModel() {
  const { held, release } = heldTurns();
  let seq = 0;
  const use = (name, input) => ({ type: 'tool_use', id: `toolu_claims_${Date.now().toString(36)}_${++seq}`, name, input });
  const turn = async (req) => {
    if (!(req.tools || []).some((t) => t.name === 'Edit')) return [{ type: 'text', text: 'Prickle stand-in.' }];
    const m = /task (\S+) \((\w+)\)/.exec(promptOf(req));
    if (!m) return [{ type: 'text', text: 'No task in the prompt.' }];
    const [, taskId] = m;
    const cwd = /Primary working directory: ([^\s"\\]+)/.exec(JSON.stringify(req))?.[1];
    const uses = toolUsesOf(req);
    const results = new Map((req.messages || []).filter((x) => x.role === 'user').flatMap((x) => (Array.isArray(x.content) ? x.content : []))
      .filter((b) => b.type === 'tool_result').map((b) => [b.tool_use_id, b]));
    const got = uses.find((u) => u.name === 'mcp__prickle__get_task');
    if (!got) return [use('mcp__prickle__get_task', { task_id: taskId })];
    const title = resultText(results.get(got.id) || { content: '' });
    const bash = /\[bash (\S+)\]/.exec(title)?.[1];
    const rel = /\[edit (\S+)\]/.exec(title)?.[1] || bash;
    if (!uses.some((u) => u.name === 'mcp__prickle__accept_task')) return [use('mcp__prickle__accept_task', { task_id: taskId })];
    if (!rel || !cwd) return [{ type: 'text', text: `Nothing to edit (${rel}, ${cwd}).` }];
    const file = join(cwd, rel);
    if (bash) {
      // The file is written with Bash, the command worded afresh: the PostToolUse hook claims it.
      const ran = uses.find((u) => u.name === 'Bash');
      if (!ran) {
        return [use('Bash', { command: `printf '%s\\n' "${['regenerated', 'written by the shell', 'from a script'][seq % 3]} ${Date.now().toString(36)}" > ${rel}`,
          description: ['Regenerate the module', 'Write the file with the shell'][seq % 2] })];
      }
      if (uses.some((u) => u.name === 'mcp__prickle__return_result')) return [{ type: 'text', text: 'Result returned; done.' }];
      if (title.includes('[stall]')) await held(taskId);
      return [use('mcp__prickle__return_result', { task_id: taskId, summary: `Regenerated ${rel}.`,
        evidence: [{ kind: 'test_output', summary: 'The command', content: resultText(results.get(ran.id) || { content: 'ran' }) || 'ran' }] })];
    }
    if (!uses.some((u) => u.name === 'Read')) return [use('Read', { file_path: file })];
    if (uses.some((u) => u.name === 'mcp__prickle__return_result')) return [{ type: 'text', text: 'Result returned; done.' }];
    const edit = () => [use('Edit', { file_path: file, old_string: "'hello'", new_string: `'hello from ${taskId}'` })];
    const edits = uses.filter((u) => u.name === 'Edit');
    if (edits.length === 0) return edit();
    const last = uses.at(-1);
    const lastResult = results.get(last.id);
    if (last.name === 'mcp__prickle__read_room') {
      const room = JSON.parse(resultText(lastResult) || '{}');
      const held = (room.pulse || []).some((p) => p.task_id !== taskId && (p.files || []).includes(rel));
      if (!held || uses.filter((u) => u.name === 'mcp__prickle__read_room').length > 90) return edit();
      await sleep(1000);
      return [use('mcp__prickle__read_room', { project: PROJECT })];
    }
    const done = results.get(edits.at(-1).id);
    if (done && done.is_error && /holds/.test(resultText(done))) {
      await sleep(1000);
      return [use('mcp__prickle__read_room', { project: PROJECT })];
    }
    if (done && done.is_error) return [{ type: 'text', text: `The edit failed: ${resultText(done)}` }];
    if (title.includes('[stall]')) await held(taskId);
    return [use('mcp__prickle__return_result', { task_id: taskId, summary: `Edited ${rel}.`,
      evidence: [{ kind: 'test_output', summary: 'The edit', content: resultText(done || { content: 'edited' }) || 'edited' }] })];
  };
  turn.release = release;
  return turn;
}

describe('prickle-runner: files claimed as they are touched, edits guarded', { skip: skipUnlessStack(skipReason), timeout: 900_000 }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let dir;
  let bin;
  let model;
  let script;
  let browser;
  let requester; // bob/reviewer hands the tasks off and reads the room
  let davesToken;
  let alicesPulse; // alice/writer's pulse as the suites before left it, put back after
  const runners = [];
  const handedOff = [];
  const clone = (who) => join(dir, who);
  const fileOf = (who, rel) => readFileSync(join(clone(who), rel), 'utf8');
  const handOff = async (assignee, what) => {
    const id = (await callTool(requester.client, 'hand_off_task', { project: PROJECT, assignee, packet: {
      task: `${what} ${uniq('claims')}`, deliverable_type: 'answer', acceptance_criteria: ['The file says hello from the task.'] } })).task.id;
    handedOff.push(id);
    return id;
  };
  const pulseOf = async (agent) => (await callTool(requester.client, 'read_room', { project: PROJECT, limit: 1 })).pulse.find((p) => p.agent_id === agent);
  /** Waits until agent's pulse lists rel (or, with held false, no longer does); returns the entry. */
  const holds = async (agent, rel, held = true) => {
    let last;
    const ok = await eventually(async () => {
      last = await pulseOf(agent);
      return (last?.files || []).includes(rel) === held && last;
    }, { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
    assert.ok(ok, `${agent}'s pulse ${held ? 'lists' : 'no longer lists'} ${rel}: ${JSON.stringify(last)}`);
    return ok;
  };
  /** An agent's runner in pull mode, its project in the agent's clone, Edit and Write allowed. */
  const claimRunner = async (who, agent, token, allowed = ALLOWED) => {
    const home = join(dir, `home-${who}`);
    const r = await startRunner(bin, dir, `claims-${who}`, {
      prickle_url: base, agent, agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull', concurrency: 2, run_timeout: '4m', grace: '5s',
      log_dir: join(dir, `logs-${who}`), state_dir: join(dir, `state-${who}`),
      projects: { [PROJECT]: { dir: clone(who), template: 'claude', program: CLAUDE, allowed_tools: allowed } },
    }, { ...modelEnv(model, home), PRICKLE_AGENT_TOKEN: token });
    runners.push(r);
    return r;
  };
  /** The Edit tool_result blocks of taskId's conversations, each once, in order. */
  const editResults = (taskId) => {
    const seen = new Map();
    for (const r of model.requests.filter((q) => promptOf(q).includes(`task ${taskId} (`))) {
      const edits = new Set(toolUsesOf(r).filter((u) => u.name === 'Edit').map((u) => u.id));
      for (const m of (r.messages || []).filter((x) => x.role === 'user')) {
        for (const b of (Array.isArray(m.content) ? m.content : [])) if (b.type === 'tool_result' && edits.has(b.tool_use_id)) seen.set(b.tool_use_id, b);
      }
    }
    return [...seen.values()];
  };
  const noUpdatePulse = () => {
    const said = model.requests.flatMap(toolUsesOf).filter((u) => u.name === 'mcp__prickle__update_pulse');
    assert.equal(said.length, 0, `a model said its pulse itself: ${JSON.stringify(said)}`);
  };
  /** A browser context signed in as owner through a sign-in link from the dev outbox. */
  const signedIn = async (owner, email) => {
    const outbox = async () => (await fetch(`${base}/dev/outbox.json`)).json();
    const before = (await outbox()).length;
    assert.equal((await askSignInLink(base, owner)).status, 200);
    const mail = await eventually(async () => (await outbox()).slice(before).find((m) => m.channel === 'email' && m.to === email));
    assert.ok(mail, `a sign-in email to ${email}`);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(mail.links.find((l) => l.includes('/signin/')));
    await Promise.all([page.waitForURL(`${base}/`), page.locator('#signin-button').click()]);
    return { context, page };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-claims-'));
    workRepo(dir, [APP, PAGE, WARN, SHELL], HELLO, ['alice', 'dave'].map((who) => ({ path: clone(who), branch: `feature/${who}` })));
    bin = runnerBinary(dir);
    script = claimingModel();
    model = await startStandIn(script);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    requester = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-claims');
    admin(['create-owner', '--name', 'dave', '--email', 'dave@example.com']);
    admin(['create-agent', '--id', DAVE, '--projects', PROJECT]);
    davesToken = admin(['mint-token', '--agent', DAVE]).token;
    for (const agent of ['alice/writer', DAVE]) admin(['set-wake', '--agent', agent, '--pull']);
    alicesPulse = await pulseOf('alice/writer');
  });

  // A test that failed leaves no run behind: its runners stop, its open tasks are cancelled (their
  // wake-ups are dropped), and the project's guard is the default again.
  afterEach(async () => {
    for (const r of runners) await r.stop();
    for (const id of handedOff.splice(0)) {
      await requester.client.callTool({ name: 'cancel_task', arguments: { task_id: id, reason: 'The claims suite is over.' } }).catch(() => {});
    }
    admin(['set-file-guard', '--project', PROJECT, '--guard', 'deny']);
  });

  after(async () => {
    for (const r of runners) await r.stop();
    if (stack) {
      admin(['set-wake', '--agent', 'alice/writer', '--url', `${base}/dev/wake/alice/writer`]);
      admin(['set-file-guard', '--project', PROJECT, '--guard', 'deny']);
      if (alicesPulse) {
        // The pages suite reads alice/writer's pulse as the seed left it.
        const alice = await connectSdk(stack.url, stack.tokens['alice/writer'], 'prickle-e2e-claims-restore');
        const { project, availability, doing, task_id: taskId, branch, files, last_decision: decision } = alicesPulse;
        await callTool(alice.client, 'update_pulse', { project, availability, doing, files, ...(taskId ? { task_id: taskId } : {}),
          ...(branch ? { branch } : {}), ...(decision ? { last_decision: decision } : {}) });
        await alice.client.close();
      }
    }
    await browser?.close();
    await requester?.client.close().catch(() => {});
    await model?.close();
    keepRunnerLogs('runner-claims-logs', dir, runners);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('deny: the second edit of a held file is stopped with the holder named, and goes ahead once the holder\'s run released it', async () => {
    const a = await claimRunner('alice', 'alice/writer', stack.tokens['alice/writer']);
    const d = await claimRunner('dave', DAVE, davesToken);
    const mine = await handOff('alice/writer', `Change the greeting [edit ${APP}] [stall]`);
    const held = await holds('alice/writer', APP);
    assert.equal(held.task_id, mine, 'the claim names the task');
    assert.equal(held.branch, 'feature/alice', 'and the branch of the run\'s checkout');
    assert.ok(await eventually(() => fileOf('alice', APP).includes(`hello from ${mine}`)), 'the claim comes first, then the edit');

    // Team Pulse and the task page show it, in Chromium, to dave's owner.
    const { context, page } = await signedIn('dave', 'dave@example.com');
    await page.goto(`${base}/p/${PROJECT}`);
    const card = await page.locator('[data-agent="alice/writer"]').innerText();
    assert.match(card, new RegExp(`Files held\\s+${re(APP)}`));
    assert.match(card, /feature\/alice/);
    assert.equal(await page.locator(`[data-agent="alice/writer"] a[href$="t/${mine}"]`).count(), 1);
    await page.goto(`${base}/t/${mine}`);
    assert.match(await page.locator('#held').innerText(), new RegExp(`alice/writer: ${re(APP)}`));

    const theirs = await handOff(DAVE, `Change the greeting too [edit ${APP}] [stall]`);
    const stopped = await eventually(() => editResults(theirs).find((r) => r.is_error), { timeoutMs: RUN_WAIT_MS, intervalMs: 250 });
    assert.ok(stopped, 'dave\'s edit was answered');
    assert.match(resultText(stopped), new RegExp(`alice/writer holds ${re(APP)} for task ${mine} since \\d\\d:\\d\\d UTC`));
    assert.match(resultText(stopped), /Hand off, wait, or pick other work/);
    assert.equal(fileOf('dave', APP), HELLO, 'the stopped edit did not change dave\'s file');
    assert.ok(!((await pulseOf(DAVE))?.files || []).includes(APP), 'dave does not hold it');

    script.release(mine); // alice returns her result: her run ends, and the runner releases her files
    const ended = await a.runEnded(mine, 'task_routed');
    assert.equal(ended.checkpoint, 'own');
    assert.equal(a.linesFor('claimed files released', (l) => l.task === mine).length, 1);
    const after = await holds('alice/writer', APP, false);
    assert.equal(after.task_id, null);
    assert.equal(after.availability, 'idle');

    // dave's model, waiting on read_room, makes the edit again: dave claims the file (before the edit
    // is made), and the edit goes ahead.
    const davesHeld = await holds(DAVE, APP);
    assert.equal(davesHeld.task_id, theirs);
    assert.equal(davesHeld.branch, 'feature/dave');
    assert.ok(await eventually(() => fileOf('dave', APP).includes(`hello from ${theirs}`)), fileOf('dave', APP));
    const results = await eventually(() => editResults(theirs).length === 2 && editResults(theirs));
    assert.ok(results, 'both edits were answered');
    assert.notEqual(results[1].is_error, true, resultText(results[1]));
    await page.goto(`${base}/p/${PROJECT}`);
    assert.match(await page.locator('[data-agent="dave/coder"]').innerText(), new RegExp(`Files held\\s+${re(APP)}`));
    assert.doesNotMatch(await page.locator('[data-agent="alice/writer"]').innerText(), new RegExp(re(APP)));
    await context.close();
    script.release(theirs);
    await d.runEnded(theirs, 'task_routed');
    await holds(DAVE, APP, false);
    noUpdatePulse();
  });

  test('ask: the edit of a held file is asked of the editing agent\'s owner, who allows it once; the holder keeps the file', async () => {
    admin(['set-file-guard', '--project', PROJECT, '--guard', 'ask']);
    const a = await claimRunner('alice', 'alice/writer', stack.tokens['alice/writer']);
    const d = await claimRunner('dave', DAVE, davesToken);
    const mine = await handOff('alice/writer', `Change the page [edit ${PAGE}] [stall]`);
    await holds('alice/writer', PAGE);
    const theirs = await handOff(DAVE, `Change the page too [edit ${PAGE}]`);
    const paused = await d.runEnded(theirs, 'task_routed');
    assert.equal(paused.paused, 'Edit', `the run pauses on the edit: ${JSON.stringify(paused)}`);
    assert.equal(fileOf('dave', PAGE), HELLO, 'not edited while the owner decides');
    const step = admin(['steps', '--task', theirs]).find((s) => s.tool_name === 'Edit' && s.status === 'pending');
    assert.ok(step, 'a pending Edit step');
    assert.match(step.reason, new RegExp(`alice/writer holds ${re(PAGE)} for task ${mine}`));

    // dave (the owner) approves from the link in his email, in Chromium.
    const link = await eventually(async () => (await (await fetch(`${base}/dev/outbox.json`)).json())
      .find((m) => m.channel === 'email' && m.to === 'dave@example.com' && (m.subject || '').includes(theirs))?.links?.find((l) => l.startsWith(`${base}/a/`)),
    { timeoutMs: 20000 });
    assert.ok(link, 'dave\'s approval email');
    const page = await (await browser.newContext()).newPage();
    assert.equal((await page.goto(link)).status(), 200);
    assert.match(await page.locator('#input').textContent(), new RegExp(re(PAGE)));
    assert.match(await page.locator('body').innerText(), new RegExp(`alice/writer holds ${re(PAGE)}`));
    await Promise.all([page.waitForURL(/\?done=1$/), page.locator('#approve').click()]);
    await page.context().close();

    const resumed = await d.runEnded(theirs, 'step_decided');
    assert.equal(resumed.session, paused.session);
    assert.match(fileOf('dave', PAGE), new RegExp(`hello from ${theirs}`), 'the allowed edit was made');
    const results = editResults(theirs);
    assert.equal(results.length, 1);
    assert.notEqual(results[0].is_error, true, resultText(results[0]));
    const alice = await pulseOf('alice/writer');
    assert.ok(alice.files.includes(PAGE), 'alice keeps the file');
    assert.ok(!((await pulseOf(DAVE))?.files || []).includes(PAGE), 'dave did not claim it');
    script.release(mine);
    await a.runEnded(mine, 'task_routed');
    await holds('alice/writer', PAGE, false);
    noUpdatePulse();
  });

  test('warn: the edit of a held file goes ahead, and the model is told who holds it', async () => {
    admin(['set-file-guard', '--project', PROJECT, '--guard', 'warn']);
    const a = await claimRunner('alice', 'alice/writer', stack.tokens['alice/writer']);
    const d = await claimRunner('dave', DAVE, davesToken);
    const mine = await handOff('alice/writer', `Change the warning [edit ${WARN}] [stall]`);
    await holds('alice/writer', WARN);
    const theirs = await handOff(DAVE, `Change the warning too [edit ${WARN}]`);
    await d.runEnded(theirs, 'task_routed');
    assert.match(fileOf('dave', WARN), new RegExp(`hello from ${theirs}`), 'the edit went ahead');
    const [made] = editResults(theirs);
    assert.notEqual(made.is_error, true);
    const told = model.requests.find((q) => promptOf(q).includes(`task ${theirs} (`) &&
      JSON.stringify(q).includes(`prickle-runner: alice/writer holds ${WARN} for task ${mine}`));
    assert.ok(told, 'the model was told who holds the file');
    assert.match(JSON.stringify(told), /file guard warn/);
    assert.ok((await pulseOf('alice/writer')).files.includes(WARN), 'alice keeps the file');
    script.release(mine);
    await a.runEnded(mine, 'task_routed');
    noUpdatePulse();
  });

  test('Bash: what a command changed is claimed after the call (PostToolUse), and a teammate\'s edit of that file is stopped', async () => {
    const a = await claimRunner('alice', 'alice/writer', stack.tokens['alice/writer'], [...ALLOWED, 'Bash']);
    const d = await claimRunner('dave', DAVE, davesToken);
    const mine = await handOff('alice/writer', `Regenerate the module [bash ${SHELL}] [stall]`);
    const held = await holds('alice/writer', SHELL);
    assert.equal(held.task_id, mine, 'the claim names the task');
    assert.equal(held.branch, 'feature/alice');
    assert.notEqual(fileOf('alice', SHELL), HELLO, 'the command changed the file');
    assert.equal(a.linesFor('run end', (l) => l.task === mine).length, 0, 'claimed while the run goes on: by the PostToolUse hook');
    const theirs = await handOff(DAVE, `Change the module too [edit ${SHELL}] [stall]`);
    const stopped = await eventually(() => editResults(theirs).find((r) => r.is_error), { timeoutMs: RUN_WAIT_MS, intervalMs: 250 });
    assert.ok(stopped, 'dave\'s edit was answered');
    assert.match(resultText(stopped), new RegExp(`alice/writer holds ${re(SHELL)} for task ${mine} since \\d\\d:\\d\\d UTC`));
    assert.equal(fileOf('dave', SHELL), HELLO, 'the stopped edit did not change dave\'s file');
    script.release(mine);
    await a.runEnded(mine, 'task_routed');
    await holds('alice/writer', SHELL, false);
    assert.ok(await eventually(() => fileOf('dave', SHELL).includes(`hello from ${theirs}`)), 'dave\'s edit goes ahead once the file is released');
    script.release(theirs);
    await d.runEnded(theirs, 'task_routed');
    noUpdatePulse();
  });
});
