// "Owners at ease", end to end against the running local stack:
// the official TypeScript MCP SDK client for the agents (woken runs with the run tokens the wake-ups
// carry), the dev outbox for what the owner and the wake URLs receive, and headless Chromium for the
// owner, who approves with a standing grant on the approval page, revokes it on the task page, sets a
// budget on the owners page, approves a spend by hand, and downloads the audit trail there. Screenshots: $ARTIFACTS/screenshots/owners-*.png.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, uniq, eventually, admin, E2E_DIR, PROJECT, CHROMIUM_NEED, CHROMIUM } from '../lib/env.mjs';
import { OutputValidator, textOf } from '../lib/validate.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { parseCSV } from '../lib/csv.mjs';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = process.env.ARTIFACTS || resolve(E2E_DIR, 'artifacts');
const SHOTS = resolve(ARTIFACTS, 'screenshots');
const ALICE_EMAIL = 'alice@example.com';

const { stack, skipReason } = await loadStack(CHROMIUM_NEED);

describe('owners at ease: grants, budgets and the audit trail end to end', { skip: skipUnlessStack(skipReason) }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let V, bob, browser, alice;
  let task, wakeRun, resumedRun, grantId;

  const call = (client, name, args) => client.callTool({ name, arguments: args });
  const ok = async (client, name, args) => V.checkOk(name, await call(client, name, args));
  /** request_step as Claude Code's permission prompt sends it, read as Claude Code reads it: the JSON text. */
  const ask = async (run, args) => {
    const r = await call(run.client, 'request_step', args);
    if (r.isError) return { refused: textOf(r) };
    return V.checkPermissionAnswer('request_step', r);
  };
  const push = (run, branch, toolUseId) => ask(run, { tool_name: 'Bash', input: { command: `git push origin ${branch}` }, tool_use_id: toolUseId });
  const outbox = async () => (await (await fetch(`${base}/dev/outbox.json`)).json())
    .map((m) => ({ ...m, body: typeof m.body === 'string' ? JSON.parse(m.body) : m.body }));
  const claimsOf = (url) => JSON.parse(Buffer.from(new URL(url).pathname.split('/').pop().split('.')[0], 'base64url').toString('utf8'));
  const stepLinks = async (taskId) => (await outbox()).filter((m) => m.channel === 'email' && m.to === ALICE_EMAIL && m.links?.[0]?.startsWith(`${base}/a/`))
    .map((m) => ({ url: m.links[0], claims: claimsOf(m.links[0]) })).filter((l) => l.claims.task_id === taskId && l.claims.kind === 'step');
  const waitWake = async (taskId, reason, count = 1) => {
    const ws = await eventually(async () => {
      const found = (await outbox()).filter((m) => m.channel === 'wake' && m.to === 'alice/builder' && m.body?.task_id === taskId && m.body?.reason === reason);
      return found.length >= count ? found : null;
    }, { timeoutMs: 20000 });
    assert.ok(ws, `no ${reason} wake-up for ${taskId}`);
    return ws[count - 1].body;
  };
  const openRun = async (token) => {
    const c = await connectSdk(stack.url, token, 'prickle-e2e-owners-run');
    await c.client.listTools();
    return c;
  };
  // After a full-page screenshot of a page taller than its viewport, Chromium's next click lands
  // nowhere until the page scrolls (seen with the approval page's grant form): scroll back to the top.
  const shot = async (page, name) => {
    await page.screenshot({ path: resolve(SHOTS, `owners-${name}.png`), fullPage: true });
    await page.evaluate(() => window.scrollTo(0, 0));
  };

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-owners');
    V = new OutputValidator((await bob.client.listTools()).tools);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
    // alice signs in once, through a link from her email in the dev outbox.
    alice = await signIn('alice', ALICE_EMAIL);
  });
  /** A page of a browser signed in as owner, through a link from their email in the dev outbox. */
  const signIn = async (owner, email) => {
    const before = (await outbox()).length;
    assert.equal((await fetch(`${base}/signin`, { method: 'POST', body: new URLSearchParams({ owner }) })).status, 200);
    // notify sends the link off the event bus, after the form's answer: wait for it.
    const mail = await eventually(async () => (await outbox()).slice(before).find((m) => m.channel === 'email' && m.to === email));
    assert.ok(mail, `no sign-in email to ${owner}`);
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    assert.equal((await page.goto(mail.links.find((l) => l.includes('/signin/')))).status(), 200);
    await Promise.all([page.waitForURL(`${base}/`), page.locator('#signin-button').click()]);
    return page;
  };
  after(async () => {
    await browser?.close();
    for (const c of [bob, wakeRun, resumedRun]) await c?.client.close().catch(() => {});
  });

  test('acceptance 2: a pattern grant spares the asks of a run that pushes five times; revoking makes the next push ask', async () => {
    task = (await ok(bob.client, 'hand_off_task', {
      project: PROJECT, assignee: 'alice/builder',
      packet: { task: `Ship the release branch ${uniq('owners')}`, deliverable_type: 'code', acceptance_criteria: ['Pushed to origin.'], context: 'Owners at ease (e2e).' },
    })).task;
    const wake = await waitWake(task.id, 'task_routed');
    wakeRun = await openRun(wake.run_token);
    await ok(wakeRun.client, 'accept_task', { task_id: task.id });
    await ok(wakeRun.client, 'save_checkpoint', { task_id: task.id, progress: 'Release branch ready.', decisions: [], files_touched: [], next_steps: ['Push.'], open_questions: [] });

    const first = await push(wakeRun, 'main', 'toolu_owners_0');
    assert.deepEqual([first.status, first.behavior], ['pending', 'deny']);
    const link = await eventually(async () => (await stepLinks(task.id)).find((l) => l.claims.step_id === first.step_id), { timeoutMs: 20000 });
    assert.ok(link, 'alice got an approval link');

    // On the approval page alice widens her yes: Bash calls whose command matches "git push origin *", for 2 hours.
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    assert.equal((await page.goto(link.url)).status(), 200);
    assert.equal(await page.locator('input[name="field"]').inputValue(), 'command');
    assert.equal(await page.locator('#pattern-step').inputValue(), 'git push origin main', 'the pattern starts as the exact command');
    // The form says how a command pattern reads, with the near misses it refuses.
    const syntax = await page.locator('#syntax-step').innerText();
    assert.match(syntax, /is read as a shell command, word by word/);
    for (const near of ['git push origin main --force', 'git push origin --delete main', 'git push origin :main', "git push origin --receive-pack='touch /tmp/x' main", 'git push origin main --exec=/tmp/evil']) {
      assert.ok(syntax.includes(near), `the form names ${near} among what the pattern refuses`);
    }
    await page.locator('#grant-pattern-step').check();
    await page.locator('#pattern-step').fill('git push origin *');
    await page.locator('#hours-step').fill('2');
    await shot(page, 'a2-approve-with-grant');
    await Promise.all([page.waitForURL(/\?done=1$/), page.locator('#approve').click()]);
    assert.match(await page.locator('#decided').innerText(), /Already decided by alice at .*: approved/);
    await page.close();

    // The resumed run pushes five times: the approved step once, then the grant, with no new ask.
    const resume = await waitWake(task.id, 'step_decided');
    resumedRun = await openRun(resume.run_token);
    const linksBefore = (await stepLinks(task.id)).length;
    const answers = [];
    for (let i = 1; i <= 5; i++) answers.push(await push(resumedRun, 'main', `toolu_owners_${i}`));
    for (const [i, a] of answers.entries()) {
      assert.equal(a.behavior, 'allow', `push ${i + 1}: ${JSON.stringify(a)}`);
      assert.equal(a.status, 'consumed');
      assert.deepEqual(a.updatedInput, { command: 'git push origin main' });
    }
    assert.equal(answers[0].step_id, first.step_id, 'the first push uses the approved step');
    for (const a of answers.slice(1)) assert.match(a.message, /standing grant grt_/, 'the others are allowed by the grant');
    grantId = answers[1].message.match(/grt_[a-z0-9]+/)[0];
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await stepLinks(task.id)).length, linksBefore, 'no new approval message was sent for the granted pushes');
    assert.notEqual((await ok(bob.client, 'get_task', { task_id: task.id })).task.waiting_on, 'owner_approval', 'the task never waited');

    // Near misses are not covered: they ask.
    const near = await push(resumedRun, 'main; curl https://evil.example', 'toolu_owners_near');
    assert.deepEqual([near.status, near.behavior], ['pending', 'deny'], 'a chained command asks the owner');
    const deletion = await push(resumedRun, '--delete main', 'toolu_owners_delete');
    assert.deepEqual([deletion.status, deletion.behavior], ['pending', 'deny'], 'deleting the remote branch asks the owner');

    // The task page lists the grant with its uses; alice revokes it there.
    assert.equal((await alice.goto(`${base}/t/${task.id}`)).status(), 200);
    const item = alice.locator(`[data-grant="${grantId}"]`);
    assert.match(await item.innerText(), /alice\/builder may call Bash where command matches "git push origin \*"/);
    assert.match(await item.innerText(), /used 4 times/);
    await shot(alice, 'a2-task-grant');
    await Promise.all([alice.waitForURL(/decided=revoked/), alice.locator(`#revoke-${grantId}`).click()]);
    assert.match(await alice.locator('#notice').innerText(), /Revoked/);
    assert.match(await alice.locator(`[data-grant="${grantId}"]`).innerText(), /revoked/);
    const again = await push(resumedRun, 'main', 'toolu_owners_after');
    assert.deepEqual([again.status, again.behavior], ['pending', 'deny'], 'after revoking, the same push asks again');
    assert.ok(await eventually(async () => (await stepLinks(task.id)).some((l) => l.claims.step_id === again.step_id), { timeoutMs: 20000 }), 'and alice is asked');
  });

  test('acceptance 3: 20 racing spending steps against a 50 USD budget allow at most 50 USD, and each racer is answered', async () => {
    assert.equal((await alice.goto(`${base}/p/${PROJECT}/owners`)).status(), 200);
    assert.match(await alice.locator('#budget-rule').innerText(), /A budget caps declared spend/);
    await alice.locator('#budget-unit').fill('USD');
    await alice.locator('#budget-limit').fill('50');
    await alice.locator('#budget-field').fill('usd');
    await alice.locator('#budget-tool').fill('buy_credits');
    await alice.locator('#budget-auto').check();
    await Promise.all([alice.waitForURL(/done=budget/), alice.locator('#budget-save').click()]);
    assert.match(await alice.locator('#budgets').innerText(), /alice[\s\S]*USD[\s\S]*50[\s\S]*input field usd of buy_credits calls[\s\S]*on/);

    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(resumedRun, {
      tool_name: 'buy_credits', input: { pack: i, note: uniq('pack'), usd: 5 }, tool_use_id: `toolu_spend_${i}`, kind: 'spending', amount: { value: 5, unit: 'USD' }, reason: 'Credits for the load test.',
    })));
    const allowed = answers.filter((a) => a.behavior === 'allow');
    const waiting = answers.filter((a) => a.behavior === 'deny');
    for (const a of answers) assert.ok(!a.refused, `no racer gets a tool error: ${a.refused}`);
    assert.ok(allowed.length * 5 <= 50, `${allowed.length} × 5 USD allowed: more than the budget`);
    assert.equal(allowed.length, 10, 'exactly what fits is allowed');
    for (const a of allowed) assert.match(a.message, /budget/);
    assert.equal(waiting.length, 10, 'the others are told to wait');
    for (const a of waiting) assert.match(a.message, /^still waiting for your owner.*0 USD left of 50 USD/, 'still waiting, with what is left');
    const pending = waiting.filter((a) => a.status === 'pending');
    assert.equal(pending.length, 1, 'one step waits');
    for (const a of waiting.filter((x) => x.status !== 'pending')) assert.ok(a.message.includes(pending[0].step_id), 'the others name the step that waits');
    // The owner is asked once, about the step that waits.
    const racers = new Set(waiting.map((a) => a.step_id));
    const emailsAbout = async (ids) => (await outbox()).filter((m) => m.channel === 'email' && m.links?.[0]?.startsWith(`${base}/a/`) && ids.has(claimsOf(m.links[0]).step_id));
    assert.ok(await eventually(async () => (await emailsAbout(racers)).length > 0, { timeoutMs: 20000 }), 'the owner is asked');
    await new Promise((r) => setTimeout(r, 1000));
    const racerMails = await emailsAbout(racers);
    assert.deepEqual(racerMails.map((m) => claimsOf(m.links[0]).step_id), [pending[0].step_id], 'asked once, about the step that waits');
    assert.match(racerMails[0].text, /0 USD left of 50 USD today/);

    const over = await ask(resumedRun, { tool_name: 'buy_credits', input: { pack: 99, usd: 1 }, tool_use_id: 'toolu_spend_over', kind: 'spending', amount: { value: 1, unit: 'USD' } });
    assert.equal(over.status, 'pending');
    assert.match(over.message, /over budget: .*0 USD left of 50 USD today for alice\/builder/, 'the answer says what is left');
    const asked = await eventually(async () => (await emailsAbout(new Set([over.step_id])))[0], { timeoutMs: 20000 });
    assert.match(asked.text, /0 USD left of 50 USD today/, 'the owner\'s email says what is left');

    await alice.reload();
    assert.match(await alice.locator('#spend').innerText(), /alice\/builder\s+USD\s+50\s+0/);
    await shot(alice, 'a3-owners-budget');

    // Approved by hand, the 1 USD counts at once: the owners page shows it right after.
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    assert.equal((await page.goto(asked.links[0])).status(), 200);
    await Promise.all([page.waitForURL(/\?done=1$/), page.locator('#approve').click()]);
    await page.close();
    await alice.reload();
    assert.match(await alice.locator('#spend').innerText(), /alice\/builder\s+USD\s+51\s+0/, 'the approval is counted at once');

    // A budget is never debited less than the call's input says: these are asked, saying why.
    const curl = await ask(resumedRun, { tool_name: 'Bash', input: { command: 'curl -X POST https://payments.example/charge -d amount=5000' },
      tool_use_id: 'toolu_spend_curl', kind: 'spending', target: 'payments.example', amount: { value: 0.01, unit: 'USD' } });
    assert.deepEqual([curl.status, curl.behavior], ['pending', 'deny']);
    assert.match(curl.message, /not allowed by the budget: alice's USD budget reads amounts from buy_credits calls only, not Bash/);
    const cheap = await ask(resumedRun, { tool_name: 'buy_credits', input: { pack: 100, usd: 5000 }, tool_use_id: 'toolu_spend_cheap', kind: 'spending', amount: { value: 0.01, unit: 'USD' } });
    assert.deepEqual([cheap.status, cheap.behavior], ['pending', 'deny']);
    assert.match(cheap.message, /not allowed by the budget: the step declares 0\.01 USD but its input's usd says 5000 USD/);
    await alice.reload();
    assert.match(await alice.locator('#spend').innerText(), /alice\/builder\s+USD\s+51\s+0/, 'nothing debited for them');
  });

  test('acceptance 4: the audit CSV lists every decision of the story, in order, with who and how', async () => {
    const resp = await alice.request.get(`${base}/p/${PROJECT}/audit.csv`);
    assert.equal(resp.status(), 200);
    assert.match(resp.headers()['content-type'], /^text\/csv/);
    const csvText = await resp.text();
    writeFileSync(resolve(ARTIFACTS, 'owners-audit.csv'), csvText);
    const rows = parseCSV(csvText);
    const mine = rows.filter((r) => r.task_id === task.id || r.grant_id === grantId || (r.action === 'budget_set' && r.actor === 'owner:alice'));
    const decisions = mine.filter((r) => /^(step_|grant_|budget_|result_)/.test(r.action)).map((r) => `${r.action} ${r.actor} ${r.via}`);
    const grant = `grant ${grantId}`;
    const want = [
      'step_asked alice/builder mcp', 'step_approved owner:alice approval link', 'grant_created owner:alice approval link',
      'step_used alice/builder mcp',
      ...Array(4).fill(`step_allowed owner:alice ${grant}`),
      'step_asked alice/builder mcp', 'step_withdrawn alice/builder mcp', 'step_asked alice/builder mcp', 'grant_revoked owner:alice task page (signed in by email link)',
      'step_withdrawn alice/builder mcp', 'step_asked alice/builder mcp',
      'budget_set owner:alice owners page (signed in by email link)',
    ];
    assert.deepEqual(decisions.slice(0, want.length), want, `the audit trail in order:\n${decisions.join('\n')}`);
    const spending = decisions.slice(want.length);
    assert.equal(spending.filter((d) => d === 'step_allowed owner:alice budget USD').length, 10, 'ten steps allowed by the budget');
    assert.ok(spending.every((d) => /^step_(allowed|asked|withdrawn|approved) /.test(d)), `then only spending steps: ${spending.join(', ')}`);
    assert.equal(spending.filter((d) => d === 'step_approved owner:alice approval link').length, 1, 'the spend approved by hand');
    // Times never go backwards, the history is there too, and so are the run tokens the wake-ups minted.
    const times = mine.map((r) => Date.parse(r.at));
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'in time order');
    assert.deepEqual(mine.filter((r) => ['hand_off', 'accept', 'checkpoint'].includes(r.action)).map((r) => `${r.action} ${r.actor}`),
      ['hand_off bob/reviewer', 'accept alice/builder', 'checkpoint alice/builder']);
    const minted = mine.filter((r) => r.action === 'token_minted' && /run token/.test(r.detail));
    assert.ok(minted.length >= 2, 'the run tokens are in the trail');
    for (const r of minted) {
      assert.deepEqual([r.actor, r.via], ['prickle', 'wake-up webhook'], `a wake-up's run token is Prickle's, not an operator's: ${JSON.stringify(r)}`);
      assert.match(r.detail, /; woken by event .+ for (task_routed|step_decided)$/, 'and says which event woke the run');
    }
    assert.ok(!csvText.includes('prk_'), 'no token secret in the trail');
    const json = await (await alice.request.get(`${base}/p/${PROJECT}/audit.json`)).json();
    assert.equal(json.length, rows.length, 'the JSON has the same entries as the CSV');
  });

  test('edit, then allow: alice edits the command on the approval page and a JSON input on the task page; the run is allowed each edit once; the trail shows both; attacks store nothing', async () => {
    const started = async (what) => {
      const t = (await ok(bob.client, 'hand_off_task', { project: PROJECT, assignee: 'alice/builder',
        packet: { task: `${what} ${uniq('edit')}`, deliverable_type: 'code', acceptance_criteria: ['Done.'], context: 'Edit, then allow (e2e).' } })).task;
      const run = await openRun((await waitWake(t.id, 'task_routed')).run_token);
      await ok(run.client, 'accept_task', { task_id: t.id });
      return { t, run };
    };
    const stepOf = (taskId, stepId) => admin(['steps', '--task', taskId]).find((x) => x.step_id === stepId);
    /** Clicks a form's button and waits for the page its POST answers with. */
    const submit = async (p, button) => {
      await Promise.all([p.waitForResponse((r) => r.request().method() === 'POST'), p.locator(button).click()]);
      await p.waitForLoadState('load');
    };
    const trailOf = async (taskId) => (await (await alice.request.get(`${base}/p/${PROJECT}/audit.json`)).json()).filter((r) => r.task_id === taskId);

    // 1. The approval page: rm -rf build, edited to rm -rf build/tmp.
    const clean = await started('Clean the build');
    const asked = await ask(clean.run, { tool_name: 'Bash', input: { command: 'rm -rf build', description: 'Clean the build' }, tool_use_id: 'toolu_edit_0' });
    assert.deepEqual([asked.status, asked.behavior], ['pending', 'deny']);
    const link = await eventually(async () => (await stepLinks(clean.t.id)).find((l) => l.claims.step_id === asked.step_id), { timeoutMs: 20000 });
    assert.ok(link, 'alice got an approval link');
    // Editing from a link needs the owner's session: alice opens her link signed in.
    const page = await signIn('alice', 'alice@example.com');
    await page.setViewportSize({ width: 390, height: 844 });
    assert.equal((await page.goto(link.url)).status(), 200);
    assert.equal(await page.locator('#command-step').inputValue(), 'rm -rf build', 'the edit form holds the command line');
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();

    // bob, signed in, is refused on alice's link, even with her form token.
    const bobPage = await signIn('bob', 'bob@example.com');
    const stolen = await bobPage.request.post(link.url, { form: { csrf, decision: 'edit', command: 'rm -rf /' }, maxRedirects: 0 });
    assert.equal(stolen.status(), 403, 'another owner\'s session');
    await bobPage.context().close();
    // Over the bounds: refused, the form comes back with the owner's text.
    await page.locator('#edit-step summary').click();
    await page.locator('#command-step').fill(`echo ${'x'.repeat(70 * 1024)}`);
    await submit(page, '#approve-edit-step');
    assert.match(await page.locator('#notice').innerText(), /Nothing was decided: the edited input is \d+ bytes as canonical JSON: the limit of a step's input size is 65536 bytes/);
    assert.equal((await page.locator('#command-step').inputValue()).length, 5 + 70 * 1024, 'the form holds the owner\'s edit again');
    assert.equal(stepOf(clean.t.id, asked.step_id).status, 'pending', 'nothing stored for the refused edits');

    await page.locator('#command-step').fill('rm -rf build/tmp');
    await page.locator('#message').fill('Only the temporary files.');
    await shot(page, 'edit-approval-page');
    await Promise.all([page.waitForURL(/\?done=1$/), page.locator('#approve-edit-step').click()]);
    assert.equal((await page.locator('h1').innerText()).trim(), 'Your decision is recorded');
    assert.match(await page.locator('#input').innerText(), /"command": "rm -rf build"/);
    assert.match(await page.locator('#edited').innerText(), /"command": "rm -rf build\/tmp"/);
    await shot(page, 'edit-approval-done');
    // The same edit again, and another: decided once.
    const replay = await page.request.post(link.url, { form: { csrf, decision: 'edit', command: 'rm -rf /' }, maxRedirects: 0 });
    assert.equal(replay.status(), 409);
    assert.match(await replay.text(), /already approved by alice/);
    await page.close();
    const stored = stepOf(clean.t.id, asked.step_id);
    assert.equal(stored.status, 'approved');
    assert.deepEqual(stored.input, { command: 'rm -rf build', description: 'Clean the build' });
    assert.deepEqual(stored.edited_input, { command: 'rm -rf build/tmp', description: 'Clean the build' });

    // The run that resumes asks its call again: allowed as edited, once.
    const resumed = await openRun((await waitWake(clean.t.id, 'step_decided')).run_token);
    const allowed = await ask(resumed, { tool_name: 'Bash', input: { command: 'rm -rf build', description: 'Remove the build folder' }, tool_use_id: 'toolu_edit_0' });
    assert.deepEqual([allowed.step_id, allowed.status, allowed.behavior], [asked.step_id, 'consumed', 'allow']);
    assert.deepEqual(allowed.updatedInput, { command: 'rm -rf build/tmp', description: 'Clean the build' });
    assert.match(allowed.message, /^allowed as your owner edited it: .*rm -rf build\/tmp.*; your owner says: "Only the temporary files\."$/);
    const again = await ask(resumed, { tool_name: 'Bash', input: { command: 'rm -rf build/tmp' }, tool_use_id: 'toolu_edit_1' });
    assert.deepEqual([again.status, again.behavior], ['pending', 'deny'], 'the edit was used once: the edited call asks again');
    assert.notEqual(again.step_id, asked.step_id);
    await resumed.client.close();

    // The decided email says it was edited.
    const decided = await eventually(async () => (await outbox()).find((m) => m.channel === 'email' && m.to === ALICE_EMAIL && /^Approved step: Bash .* on task /.test(m.subject || '') && m.subject.includes(clean.t.id)), { timeoutMs: 20000 });
    assert.ok(decided, 'the decided email');
    assert.match(decided.text, /Approved as edited by alice/);
    assert.match(decided.text, /Input as alice edited it:[\s\S]*rm -rf build\/tmp/);

    // 2. The task page: a call without a command line, edited as JSON.
    const deploy = await started('Deploy the site');
    const dep = await ask(deploy.run, { tool_name: 'deploy_site', input: { env: 'prod', version: '1.2.3' }, tool_use_id: 'toolu_deploy_0' });
    assert.equal(dep.status, 'pending');
    assert.equal((await alice.goto(`${base}/t/${deploy.t.id}`)).status(), 200);
    await alice.locator(`#edit-${dep.step_id} summary`).click();
    const json = alice.locator(`#edit-input-${dep.step_id}`);
    assert.deepEqual(JSON.parse(await json.inputValue()), { env: 'prod', version: '1.2.3' }, 'the edit form holds the input as JSON');
    for (const [bad, why] of [['["staging"]', /must be a JSON object/], ['{"env": staging}', /must be a JSON object/],
      [`{"a":${'['.repeat(40)}${']'.repeat(40)}}`, /nests deeper than 32 levels/]]) {
      await json.fill(bad);
      await submit(alice, `#approve-edit-${dep.step_id}`);
      assert.match(await alice.locator('#notice').innerText(), why, bad);
      assert.equal(await alice.locator(`#edit-input-${dep.step_id}`).inputValue(), bad, 'the form holds the edit again');
    }
    assert.equal(stepOf(deploy.t.id, dep.step_id).status, 'pending', 'nothing stored for the refused edits');
    await json.fill('{"env": "staging", "version": "1.2.3"}');
    await shot(alice, 'edit-task-page');
    await Promise.all([alice.waitForURL(/decided=edited/), alice.locator(`#approve-edit-${dep.step_id}`).click()]);
    assert.match(await alice.locator('#notice').innerText(), /Approved as you edited it/);
    // The edit of a step already decided: refused.
    const late = await alice.request.post(`${base}/t/${deploy.t.id}`, { form: { csrf: await alice.locator('input[name="csrf"]').first().inputValue(),
      decision: 'edit', step: dep.step_id, input: '{"env":"prod"}' }, maxRedirects: 0 });
    assert.equal(late.status(), 409);
    assert.match(await late.text(), /already approved by alice/);
    // The edited call itself, asked without and then with tool_use_id: left for the permission layer, then used once.
    const run2 = await openRun((await waitWake(deploy.t.id, 'step_decided')).run_token);
    const look = await ask(run2, { tool_name: 'deploy_site', input: { version: '1.2.3', env: 'staging' } });
    assert.deepEqual([look.step_id, look.status, look.behavior, look.message],
      [dep.step_id, 'approved', 'deny', 'allowed as your owner edited it, left for your permission layer: make exactly that call now']);
    const used = await ask(run2, { tool_name: 'deploy_site', input: { version: '1.2.3', env: 'staging' }, tool_use_id: 'toolu_deploy_1' });
    assert.deepEqual([used.step_id, used.status, used.behavior], [dep.step_id, 'consumed', 'allow']);
    await run2.client.close();

    // 3. The audit trail (CSV) shows the call as asked and the edit, where approved and where used.
    const csv = parseCSV(await (await alice.request.get(`${base}/p/${PROJECT}/audit.csv`)).text());
    const row = (stepId, action) => csv.find((r) => r.step_id === stepId && r.action === action);
    assert.equal(row(asked.step_id, 'step_approved').detail,
      'Bash {"command":"rm -rf build","description":"Clean the build"}; edited by the owner to: Bash {"command":"rm -rf build/tmp","description":"Clean the build"}');
    assert.equal(row(asked.step_id, 'step_approved').via, 'approval link (signed in by email link)');
    assert.equal(row(asked.step_id, 'step_used').detail,
      'Bash {"command":"rm -rf build","description":"Clean the build"}; used as the owner edited it: Bash {"command":"rm -rf build/tmp","description":"Clean the build"}');
    assert.equal(row(dep.step_id, 'step_approved').detail, 'deploy_site {"env":"prod","version":"1.2.3"}; edited by the owner to: deploy_site {"env":"staging","version":"1.2.3"}');
    assert.equal(row(dep.step_id, 'step_approved').via, 'task page (signed in by email link)');
    assert.equal((await trailOf(deploy.t.id)).filter((r) => r.step_id === dep.step_id && r.action === 'step_approved').length, 1, 'approved once');
  });

  test('amounts beyond the bounds get -32602 naming the limit and store nothing; 0 within the spent budget is allowed', async () => {
    const trail = async () => (await (await alice.request.get(`${base}/p/${PROJECT}/audit.json`)).json()).filter((r) => r.task_id === task.id).length;
    const before = await trail();
    for (const [value, limit] of [[0.0000004, /\/amount\/value: has more than 6 decimal places/], [1e308, /\/amount\/value: is above 1000000000, the largest amount/]]) {
      await assert.rejects(call(resumedRun.client, 'request_step', {
        tool_name: 'buy_credits', input: { pack: String(value) }, tool_use_id: `toolu_bounds_${value}`, kind: 'spending', amount: { value, unit: 'USD' },
      }), (e) => e.code === -32602 && limit.test(e.message), `amount ${value}`);
    }
    assert.equal(await trail(), before, 'nothing stored for the refused amounts');
    const zero = await ask(resumedRun, { tool_name: 'buy_credits', input: { pack: 'free', usd: 0 }, tool_use_id: 'toolu_bounds_zero', kind: 'spending', amount: { value: 0, unit: 'USD' } });
    assert.equal(zero.behavior, 'allow', `a spending step of 0 with 0 USD left: ${JSON.stringify(zero)}`);
  });
});
