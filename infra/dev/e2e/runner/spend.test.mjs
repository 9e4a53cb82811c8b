// Model spend end to end in pull mode against the running local stack: the real Claude Code through
// prickle-runner, against the stand-in Messages API, which reports 50,000 input and 40,000 output
// tokens per reply of the main model, so that Claude Code itself prices each at 1 USD (claude-opus-5-5
// at 4 and 20 USD per million in the pinned version: the run's total_cost_usd is known, and the
// conversation stays far from the model's context window). The owner, alice, in Chromium:
//
//   a run's cost reaches the task page (as the runner reported it with the run's end), Team Pulse and
//   the owners page; with a daily cap below it, the next hand-off starts no run (its wake-up waits in
//   Prickle) and alice is asked once, by email; raising the cap from the email's link starts the
//   waiting run at once.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, admin, askSignInLink, uniq, eventually, sleep, PROJECT, CHROMIUM_NEED, npmNeed } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startStandIn } from '../claude/standin.mjs';
import { CLAUDE, CHROMIUM, CHROMIUM_ARGS, runnerBinary, startRunner, claudeProject, modelEnv, wokenModel, keepRunnerLogs } from './harness.mjs';

const { stack, skipReason } = await loadStack(npmNeed(CLAUDE, 'Claude Code'), CHROMIUM_NEED);

const MAIN_MODEL = 'claude-opus-5-5';
const USD_PER_REPLY = 1; // 50,000 × 4 + 40,000 × 20 USD per million
const CAP = 2;
const micros = (usd) => String(Math.round(usd * 1e6) / 1e6); // an amount as Prickle writes it

describe('model spend: counted, shown, capped (pull mode, the real Claude Code)', { skip: skipUnlessStack(skipReason), timeout: 600_000 }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let dir, bin, bob, model, browser, alice;
  const runners = [];
  const outbox = async () => (await fetch(`${base}/dev/outbox.json`)).json();
  const capEmails = async () => (await outbox()).filter((m) => m.channel === 'email' && m.to === 'alice@example.com'
    && /^alice\/writer reached \d+(\.\d+)? USD of model spend today$/.test(m.subject || ''));
  const call = async (client, name, args) => {
    const r = await client.callTool({ name, arguments: args });
    assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
    return r.structuredContent;
  };
  const handOff = async (what) => (await call(bob.client, 'hand_off_task', { project: PROJECT, assignee: 'alice/writer', packet: {
    task: `${what} ${uniq('spend')} [no approval]`, deliverable_type: 'answer', acceptance_criteria: ['A result.'] } })).task.id;
  /** alice sets (or, with '', removes) her agent's daily cap on the owners page. */
  const setCap = async (usd) => {
    assert.equal((await alice.goto(`${base}/p/${PROJECT}/owners`)).status(), 200);
    await alice.locator('[id="cap-alice/writer"]').fill(usd);
    await Promise.all([alice.waitForURL(/owners\?done=cap$/), alice.locator('[id="cap-save-alice/writer"]').click()]);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-spend-'));
    mkdirSync(join(dir, 'work'));
    bin = runnerBinary(dir);
    model = await startStandIn(wokenModel(() => 'true'), {
      usage: (req) => (req.model === MAIN_MODEL ? { input_tokens: 50_000, output_tokens: 40_000 } : { input_tokens: 10, output_tokens: 10 }),
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-spend');
    admin(['set-wake', '--agent', 'alice/writer', '--pull']);
    // alice signs in once, with the link from her email.
    const sent = (await outbox()).length;
    assert.equal((await askSignInLink(base, 'alice')).status, 200);
    const mail = await eventually(async () => (await outbox()).slice(sent).find((m) => m.channel === 'email' && m.to === 'alice@example.com'));
    assert.ok(mail, 'a sign-in email to alice');
    alice = await (await browser.newContext()).newPage();
    assert.equal((await alice.goto(mail.links.find((l) => l.includes('/signin/')))).status(), 200);
    await Promise.all([alice.waitForURL(`${base}/`), alice.locator('#signin-button').click()]);
  });

  after(async () => {
    for (const r of runners) await r.stop();
    if (alice) await setCap('').catch(() => {}); // the other suites' runs of alice/writer are not capped
    if (stack) admin(['set-wake', '--agent', 'alice/writer', '--url', `${base}/dev/wake/alice/writer`]);
    await browser?.close();
    await bob?.client.close().catch(() => {});
    await model?.close();
    keepRunnerLogs('runner-spend-logs', dir, runners);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a run\'s cost reaches the pages; over the cap the next hand-off waits, the owner is asked once, and raising it starts the run', async () => {
    assert.equal((await capEmails()).length, 0, 'no cap asked before');
    // The cap: 2 USD above what alice/writer's runs of the other suites spent today.
    assert.equal((await alice.goto(`${base}/p/${PROJECT}/owners`)).status(), 200);
    const spentBefore = Number(await alice.locator('#model-spend [data-agent="alice/writer"] .today').innerText());
    const cap = micros(spentBefore + CAP);
    await setCap(cap);
    const runner = await startRunner(bin, dir, 'spend', {
      prickle_url: base, agent: 'alice/writer', agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull',
      concurrency: 1, run_timeout: '2m', grace: '5s', log_dir: join(dir, 'logs-spend'), projects: { [PROJECT]: claudeProject(join(dir, 'work')) },
    }, { ...modelEnv(model, join(dir, 'home')), PRICKLE_AGENT_TOKEN: stack.tokens['alice/writer'] });
    runners.push(runner);

    // 1. A run's cost, as Claude Code computed it from the stand-in's usage, reaches the task page.
    const replies = () => model.requests.filter((r) => r.model === MAIN_MODEL).length;
    const before = replies();
    const first = await handOff('Spend first');
    const ended = await runner.runEnded(first, 'task_routed');
    const n = replies() - before;
    assert.ok(n >= 3, `the run asked the model ${n} times`);
    assert.ok(Math.abs(ended.cost_usd - n * USD_PER_REPLY) < 0.01, `Claude Code priced ${n} replies at ${ended.cost_usd} USD, want ${n * USD_PER_REPLY}`);
    const cost = micros(ended.cost_usd);
    const page = await eventually(async () => {
      await alice.goto(`${base}/t/${first}`);
      return (await alice.locator(`[data-run="${ended.run}"] .cost`).count()) ? alice : null;
    }, { timeoutMs: 20000 });
    assert.ok(page, 'the task page lists the run');
    assert.equal((await alice.locator(`[data-run="${ended.run}"] .cost`).innerText()).trim(), cost);
    assert.match(await alice.locator(`[data-run="${ended.run}"]`).innerText(), new RegExp(MAIN_MODEL));
    await alice.goto(`${base}/p/${PROJECT}`);
    const today = micros(spentBefore + ended.cost_usd);
    assert.match(await alice.locator('[data-agent="alice/writer"] .spend').innerText(), new RegExp(`Model spend: ${today} USD today`));

    // The audit export has the run's spend.
    const trail = await (await alice.request.get(`${base}/p/${PROJECT}/audit.json`)).json();
    const line = trail.find((e) => e.action === 'run_spend' && e.task_id === first);
    assert.ok(line, 'the audit trail has the run\'s spend');
    assert.equal(line.actor, 'alice/writer');
    assert.equal(line.via, 'prickle-runner');
    assert.match(line.detail, new RegExp(`^run ${ended.run}: ${cost} USD, `));

    // 2. Over the cap: the owner is asked once; the owners page says so.
    const asked = await eventually(async () => ((await capEmails()).length ? capEmails() : null), { timeoutMs: 20000 });
    assert.ok(asked, 'alice was asked about the cap');
    assert.equal(asked.length, 1);
    assert.equal(asked[0].subject, `alice/writer reached ${cap} USD of model spend today`);
    await alice.goto(`${base}/p/${PROJECT}/owners`);
    assert.match(await alice.locator('#model-spend [data-agent="alice/writer"]').innerText(), /cap reached/);

    // 3. The next hand-off starts no run: its wake-up waits in Prickle, the claims say until when.
    const second = await handOff('Spend held');
    await sleep(8000);
    assert.equal(runner.linesFor('wake-up', (l) => l.task === second).length, 0, 'no wake-up was handed out over the cap');
    assert.equal(runner.linesFor('run start', (l) => l.task === second).length, 0, 'no run started over the cap');
    assert.equal((await capEmails()).length, 1, 'alice is asked once a day');

    // 4. alice raises the cap from the email's link, in Chromium: the waiting run starts at once.
    const link = asked[0].links.find((l) => l.startsWith(`${base}/c/`));
    assert.ok(link, `the email links the cap page: ${asked[0].links}`);
    const decide = await (await browser.newContext()).newPage();
    assert.equal((await decide.goto(link)).status(), 200);
    assert.equal(await decide.locator('#spent').innerText(), `${today} USD`);
    const raisedTo = micros(Math.max(Number(cap), Number(today)) + Number(cap));
    assert.match(await decide.locator('#raise').innerText(), new RegExp(`Raise the cap for today to ${raisedTo} USD`));
    await Promise.all([decide.waitForURL(/\?done=1$/), decide.locator('#raise').click()]);
    assert.equal((await decide.locator('h1').innerText()).trim(), 'Your decision is recorded');
    assert.match(await decide.locator('#decided').innerText(), /Already decided by alice at .*: raised for today/);
    await decide.context().close();
    const resumed = await runner.runEnded(second, 'task_routed');
    assert.equal(resumed.exit_code, 0, JSON.stringify(resumed));
    assert.equal((await capEmails()).length, 1, 'still asked once');
    await runner.stop();
  });
});
