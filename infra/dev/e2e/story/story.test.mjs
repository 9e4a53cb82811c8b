// "Owners decide", end to end against the running local stack:
// the official TypeScript MCP SDK client for the agents, the dev outbox for what the owner and the
// agents' wake URLs receive, and headless Chromium at a phone's size (390×844) for the owner.
//
// Nothing here is faked: run tokens come from the wake-ups the stack's receiver records in the
// outbox, approval links from the owner's email and Slack messages there, and every decision is a
// click on the approval page. Screenshots: $ARTIFACTS/screenshots/story-*.png.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, uniq, eventually, E2E_DIR, PROJECT, CHROMIUM_NEED, CHROMIUM } from '../lib/env.mjs';
import { OutputValidator, checkRefused, checkRunToolList } from '../lib/validate.mjs';
import { connectSdk } from '../lib/sdk.mjs';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SHOTS = resolve(process.env.ARTIFACTS || resolve(E2E_DIR, 'artifacts'), 'screenshots');
const VIEWPORT = { width: 390, height: 844 };
const ALICE_EMAIL = 'alice@example.com';
const ALICE_SLACK = '#alice-agents';
const STAMP = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z`;

const { stack, skipReason } = await loadStack(CHROMIUM_NEED);

describe('owners decide: the story end to end', { skip: skipUnlessStack(skipReason) }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  const agents = {}; // bob, builder, writer: agent tokens; run clients are opened per wake-up
  let V;
  let browser;

  // ---------- MCP helpers ----------
  const call = (client, name, args) => client.callTool({ name, arguments: args });
  const ok = async (client, name, args) => V.checkOk(name, await call(client, name, args));
  const refused = async (client, name, args, mention) => checkRefused(name, await call(client, name, args), mention);
  /** Refused as a domain error (isError) or as invalid params (-32602); returns the message. */
  const rejected = async (client, name, args, mention = []) => {
    try {
      return checkRefused(name, await call(client, name, args), mention);
    } catch (e) {
      assert.ok(e instanceof McpError, `${name}: unexpected exception ${e}`);
      assert.equal(e.code, -32602, `${name}: expected isError or -32602, got ${e.code} ${e.message}`);
      for (const m of [].concat(mention)) assert.match(e.message.toLowerCase(), new RegExp(m.toLowerCase()));
      return e.message;
    }
  };
  const getTask = (id) => ok(agents.bob.client, 'get_task', { task_id: id });
  const openRun = async (runToken) => {
    const c = await connectSdk(stack.url, runToken, 'prickle-e2e-story-run');
    checkRunToolList((await c.client.listTools()).tools);
    return c;
  };
  /**
   * request_step the way Claude Code's permission layer reads it: one text block holding the JSON
   * answer ({behavior, updatedInput} or {behavior, message}, plus step_id and status), no
   * structuredContent (a run token's answer).
   */
  const requestStep = async (run, args) => {
    const parsed = V.checkPermissionAnswer('request_step', await call(run.client, 'request_step', args));
    if (parsed.behavior === 'allow') {
      assert.ok(parsed.updatedInput && typeof parsed.updatedInput === 'object', 'allow carries updatedInput');
    } else {
      assert.equal(parsed.behavior, 'deny');
      assert.equal(typeof parsed.message, 'string', 'deny carries a message');
      assert.ok(parsed.message.length > 0);
    }
    return parsed;
  };
  const handOffDoc = async (what) => (await ok(agents.bob.client, 'hand_off_task', {
    project: PROJECT, assignee: 'alice/builder',
    packet: {
      task: `${what} ${uniq('story')}`, deliverable_type: 'doc',
      acceptance_criteria: ['The launch notes are published.'], context: 'Owners decide story (e2e).',
    },
  })).task;

  // ---------- dev outbox helpers ----------
  const outbox = async () => {
    const r = await fetch(`${base}/dev/outbox.json`);
    assert.equal(r.status, 200, 'GET /dev/outbox.json');
    return (await r.json()).map((m) => ({ ...m, body: typeof m.body === 'string' ? safeJSON(m.body) : m.body }));
  };
  const safeJSON = (s) => { try { return JSON.parse(s); } catch { return s; } };
  /** The claims of an approval link (base64url JSON before the signature). */
  const claimsOf = (url) => {
    const token = new URL(url).pathname.split('/').pop();
    return JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8'));
  };
  const isApprovalLink = (u) => typeof u === 'string' && u.startsWith(`${base}/a/`);
  /** Wait for the wake-ups of `agent` for `taskId` with `reason`; returns the payloads, oldest first. */
  const waitWakes = async (agent, taskId, reason, count = 1) => {
    const found = await eventually(async () => {
      const ws = (await outbox()).filter((m) => m.channel === 'wake' && m.to === agent && m.body?.task_id === taskId && m.body?.reason === reason);
      return ws.length >= count ? ws : null;
    }, { timeoutMs: 20000 });
    assert.ok(found, `no ${count}× wake-up "${reason}" for ${agent} on ${taskId} in the outbox:\n${JSON.stringify((await outbox()).filter((m) => m.channel === 'wake').slice(-5), null, 1)}`);
    for (const w of found) {
      assert.deepEqual(Object.keys(w.body).sort(), ['reason', 'resumes_run', 'run_id', 'run_token', 'task_id']);
      assert.match(w.body.run_token, /^prk_r_/);
    }
    return found.map((w) => w.body);
  };
  /** Alice's email and Slack messages carrying an approval link whose claims match; each link names, signed, where it went. */
  const waitOwnerMessages = async (match, what) => {
    const found = await eventually(async () => {
      const msgs = (await outbox()).filter((m) => (m.channel === 'email' || m.channel === 'slack') && isApprovalLink(m.links?.[0]) && match(claimsOf(m.links[0])));
      const email = msgs.find((m) => m.channel === 'email' && m.to === ALICE_EMAIL);
      const slack = msgs.find((m) => m.channel === 'slack' && m.to === ALICE_SLACK);
      return email && slack ? { email, slack } : null;
    }, { timeoutMs: 20000 });
    assert.ok(found, `alice's email (${ALICE_EMAIL}) and Slack (${ALICE_SLACK}) messages for ${what} are in the outbox:\n${JSON.stringify((await outbox()).slice(-6), null, 1)}`);
    assert.equal(claimsOf(found.email.links[0]).via, 'email', 'the emailed link says it was emailed');
    assert.equal(claimsOf(found.slack.links[0]).via, 'slack', 'the Slack link says it was posted to Slack');
    return { ...found, url: found.email.links[0] };
  };
  const stepMessages = (taskId, stepId) => waitOwnerMessages((c) => c.kind === 'step' && c.task_id === taskId && c.step_id === stepId, `step ${stepId}`);
  const resultMessages = (taskId, after = 0) => waitOwnerMessages((c) => c.kind === 'result' && c.task_id === taskId && Date.parse(c.exp) > after, `the result of ${taskId}`);

  // ---------- browser helpers ----------
  const phonePage = async () => {
    const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    return context.newPage();
  };
  const shot = (page, name) => page.screenshot({ path: resolve(SHOTS, `story-${name}.png`), fullPage: true });
  /** No horizontal scroll at 390 px; Approve and Refuse visible, inside the viewport's width, tappable. */
  const assertPhoneFriendly = async (page) => {
    const width = await page.evaluate(() => document.scrollingElement.scrollWidth);
    assert.ok(width <= VIEWPORT.width, `the page scrolls horizontally: scrollWidth ${width} > ${VIEWPORT.width}`);
    for (const id of ['#approve', '#refuse']) {
      const b = page.locator(id);
      assert.ok(await b.isVisible(), `${id} is not visible`);
      const box = await b.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= VIEWPORT.width, `${id} is outside the 390px width: ${JSON.stringify(box)}`);
      assert.ok(box.height >= 44 && box.width >= 44, `${id} is ${JSON.stringify(box)}: too small to tap`);
    }
  };
  const text = async (page, sel) => (await page.locator(sel).textContent()).trim();
  /** Open the approval link, check it shows the exact call, and return the page. */
  const openStepPage = async (url, args, { status = 'pending', name } = {}) => {
    const page = await phonePage();
    const resp = await page.goto(url);
    assert.equal(resp.status(), 200, `GET ${url}`);
    assert.equal(await text(page, '#tool-name'), args.tool_name);
    assert.deepEqual(JSON.parse(await text(page, '#input')), args.input, 'the page shows the exact input');
    assert.match(await text(page, '#input'), new RegExp(args.input.command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.equal(await text(page, '#kind'), args.kind);
    assert.equal(await text(page, '#target'), args.target);
    assert.equal(await text(page, '#reason'), args.reason);
    assert.equal(await text(page, '#agent'), 'alice/builder');
    assert.equal(await text(page, '#status'), status);
    if (name) await shot(page, name);
    return page;
  };
  /** Click a decision button; the page redirects (POST/Redirect/GET) to "?done=1" saying who decided. */
  const decide = async (page, button, message) => {
    if (message !== undefined) await page.locator('#message').fill(message);
    await Promise.all([page.waitForURL(/\?done=1$/), page.locator(button).click()]);
    assert.equal(await text(page, 'h1'), 'Your decision is recorded');
    const decided = await text(page, '#decided');
    assert.match(decided, new RegExp(`^Already decided by alice at ${STAMP}: `));
    assert.equal(await page.locator('#approve').count(), 0, 'a decided page offers no Approve');
    return decided;
  };

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    agents.bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-story');
    agents.builder = await connectSdk(stack.url, stack.tokens['alice/builder'], 'prickle-e2e-story');
    agents.writer = await connectSdk(stack.url, stack.tokens['alice/writer'], 'prickle-e2e-story');
    V = new OutputValidator((await agents.bob.client.listTools()).tools);
    for (const a of Object.values(agents)) await a.client.listTools();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  });
  after(async () => {
    await browser?.close();
    for (const a of Object.values(agents)) await a.client.close().catch(() => {});
  });

  /** Hand off a doc task to alice/builder and take its task_routed wake-up; the woken run accepts and checkpoints. */
  const startWokenRun = async (what) => {
    const task = await handOffDoc(what);
    assert.equal(task.state, 'routed');
    const [wake] = await waitWakes('alice/builder', task.id, 'task_routed');
    assert.equal(wake.resumes_run, '', 'a first wake-up resumes no run');
    const run = await openRun(wake.run_token);
    assert.equal((await ok(run.client, 'accept_task', { task_id: task.id, note: 'Woken; on it.' })).task.state, 'accepted');
    const { task: t } = await ok(run.client, 'save_checkpoint', {
      task_id: task.id, progress: 'Launch notes drafted on a branch.', decisions: ['Publish from main.'],
      files_touched: ['docs/launch.md'], next_steps: ['Push the branch.'], open_questions: [],
    });
    assert.equal(t.state, 'working');
    return { task, wake, run };
  };

  test('acceptance 1 + 2: the woken run asks, GET never decides, the owner approves on a phone, the resumed run is allowed once; Refuse gives deny with the message', async () => {
    const { task, wake, run } = await startWokenRun('Publish the launch notes');
    const args = { tool_name: 'Bash', input: { command: 'git push origin main' }, kind: 'outbound', target: 'origin', reason: `Publish the reviewed branch (${task.id}).` };

    // The run asks: pending, deny "still waiting".
    const first = await requestStep(run, args);
    assert.equal(first.status, 'pending');
    assert.equal(first.behavior, 'deny');
    assert.match(first.message, /waiting/i);
    assert.equal((await getTask(task.id)).task.waiting_on, 'owner_approval');

    // Alice gets the same link by email and by Slack, showing the exact call.
    const { email, slack, url } = await stepMessages(task.id, first.step_id);
    assert.match(email.text, /git push origin main/, 'the email shows the command');
    assert.match(email.text, /outbound/, 'the email shows the kind');
    assert.match(JSON.stringify(slack.body?.blocks ?? slack.body), /git push origin main/, 'the Slack blocks show the command');
    assert.match(JSON.stringify(slack.body?.blocks ?? slack.body), /outbound/, 'the Slack blocks show the kind');

    // Mail scanners and unfurlers fetch links: three plain GETs decide nothing.
    for (let i = 0; i < 3; i++) {
      const r = await fetch(url);
      assert.equal(r.status, 200, `GET ${i + 1}`);
      assert.match(await r.text(), /<dd id="status">pending<\/dd>/, `GET ${i + 1}: still pending`);
    }
    const still = await requestStep(run, args);
    assert.deepEqual([still.step_id, still.status, still.behavior], [first.step_id, 'pending', 'deny'], 'after 3 GETs the step is still pending');
    const { task: t1, history: h1 } = await getTask(task.id);
    assert.equal(t1.waiting_on, 'owner_approval');
    assert.equal(h1.filter((h) => /step|decide|approve|refuse/i.test(h.action) && h.by?.startsWith('owner:')).length, 0, 'no owner decision in history');

    // The owner opens the link on a phone: the exact call, phone-friendly. A second tab keeps the form.
    const page = await openStepPage(url, args, { name: 'a1-step-pending' });
    await assertPhoneFriendly(page);
    const staleTab = await openStepPage(url, args);
    const decided = await decide(page, '#approve', 'Go ahead, once.');
    assert.match(decided, /: approved\. Message: "Go ahead, once\."$/);
    assert.equal(await text(page, '#status'), 'approved');
    await shot(page, 'a1-step-approved');

    // Acceptance 2: a second POST (the other tab's form) says who decided and when; nothing changes.
    const [resp2] = await Promise.all([staleTab.waitForResponse((r) => r.request().method() === 'POST'), staleTab.locator('#refuse').click()]);
    assert.equal(resp2.status(), 409, 'a second POST is refused');
    await staleTab.waitForLoadState();
    assert.match(await text(staleTab, '#decided'), new RegExp(`^Already decided by alice at ${STAMP}: approved`));
    assert.equal(await staleTab.locator('#approve').count(), 0);
    await shot(staleTab, 'a2-second-post');
    await staleTab.context().close();

    // The wake URL receives a signed resume: step_decided, resumes_run = the asking run, a new run token.
    const [resume] = await waitWakes('alice/builder', task.id, 'step_decided');
    assert.equal(resume.resumes_run, wake.run_id, 'resumes_run names the run that asked');
    assert.notEqual(resume.run_id, wake.run_id, 'a new run');
    assert.notEqual(resume.run_token, wake.run_token, 'a new run token');
    assert.notEqual((await getTask(task.id)).task.waiting_on, 'owner_approval', 'nothing waits for the owner after the decision');

    // The resumed run's permission layer (Claude Code: tool_name, input, tool_use_id) gets allow + updatedInput, once.
    const resumed = await openRun(resume.run_token);
    const allow = await requestStep(resumed, { tool_name: args.tool_name, input: args.input, tool_use_id: 'toolu_story_1' });
    assert.equal(allow.behavior, 'allow');
    assert.equal(allow.step_id, first.step_id);
    assert.equal(allow.status, 'consumed');
    assert.deepEqual(allow.updatedInput, args.input, 'updatedInput is exactly the approved input');
    const again = await requestStep(resumed, { tool_name: args.tool_name, input: args.input, tool_use_id: 'toolu_story_2' });
    assert.equal(again.behavior, 'deny');
    assert.equal(again.status, 'pending', 'a second identical call is a new step waiting for the owner');
    assert.notEqual(again.step_id, first.step_id, 'a new step_id');

    // The approved step's page now says it was used.
    await page.reload();
    assert.match(await text(page, '#decided'), /^Already decided by alice at .*approved/);
    await page.context().close();

    // Refuse path, on the new step: the owner refuses with a message; the run gets deny with it.
    const refusal = await stepMessages(task.id, again.step_id);
    assert.notEqual(refusal.url, url, 'the new step has its own link');
    // This step was asked by the permission layer alone (tool_name, input, tool_use_id): no kind, target or reason.
    const rpage = await openStepPage(refusal.url, { ...args, kind: '—', target: '—', reason: '—' }, { name: 'a1-step2-pending' });
    await assertPhoneFriendly(rpage);
    assert.match(await decide(rpage, '#refuse', 'Not twice: main is frozen.'), /: refused\. Message: "Not twice: main is frozen\."$/);
    await shot(rpage, 'a1-step2-refused');
    await rpage.context().close();
    const [, resume2] = await waitWakes('alice/builder', task.id, 'step_decided', 2);
    assert.equal(resume2.resumes_run, resume.run_id, 'the refusal resumes the run that asked');
    for (const [who, r] of [['the asking run', resumed], ['the resumed run', await openRun(resume2.run_token)]]) {
      const deny = await requestStep(r, { tool_name: args.tool_name, input: args.input, tool_use_id: 'toolu_story_3' });
      assert.equal(deny.behavior, 'deny', who);
      assert.equal(deny.status, 'refused', who);
      assert.equal(deny.step_id, again.step_id, who);
      assert.match(deny.message, /Not twice: main is frozen\./, `${who}: deny carries the owner's message`);
    }
    for (const r of [run, resumed]) await r.client.close().catch(() => {});
  });

  test('acceptance 2: a tampered link is refused with 403, by GET and by POST, and decides nothing', async () => {
    const { task, run } = await startWokenRun('Tamper check');
    const args = { tool_name: 'Bash', input: { command: 'git push origin main' }, kind: 'outbound', target: 'origin', reason: 'Tamper check.' };
    const pending = await requestStep(run, args);
    const { url } = await stepMessages(task.id, pending.step_id);
    const u = new URL(url);
    const [payload, sig] = u.pathname.split('/').pop().split('.');
    const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const forged = Buffer.from(JSON.stringify({ ...claimsOf(url), owner: 'bob' })).toString('base64url');
    for (const bad of [`${u.origin}/a/${flip(payload, 10)}.${sig}`, `${u.origin}/a/${payload}.${flip(sig, 5)}`, `${u.origin}/a/${forged}.${sig}`]) {
      assert.equal((await fetch(bad)).status, 403, `GET ${bad}`);
      const post = await fetch(bad, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=approve', redirect: 'manual' });
      assert.equal(post.status, 403, `POST ${bad}`);
    }
    const page = await phonePage();
    const resp = await page.goto(`${u.origin}/a/${flip(payload, 10)}.${sig}`);
    assert.equal(resp.status(), 403);
    assert.match(await text(page, 'h1'), /not valid/);
    assert.equal(await page.locator('#approve').count(), 0);
    await shot(page, 'a2-tampered');
    // A POST of the genuine link without the page's form token decides nothing either.
    const noCsrf = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=approve', redirect: 'manual' });
    assert.equal(noCsrf.status, 403, 'POST without the form token');
    const after = await requestStep(run, args);
    assert.deepEqual([after.step_id, after.status], [pending.step_id, 'pending'], 'the step is still pending');
    await page.context().close();
    await run.client.close().catch(() => {});
  });

  /** The woken run returns a doc result with a link; bob accepts; the task waits for alice. */
  const toApproval = async (run, task, summary) => {
    const { task: v } = await ok(run.client, 'return_result', {
      task_id: task.id, summary,
      evidence: [
        { kind: 'link', summary: 'Published launch notes', url: 'https://example.com/docs/launch' },
        { kind: 'commit', summary: 'docs: launch notes', url: 'https://github.com/acme/site/commit/0123abc' },
      ],
    });
    assert.equal(v.state, 'verifying');
    assert.equal(v.result.provenance, 'agent_generated');
    const { task: a } = await ok(agents.bob.client, 'review_result', { task_id: task.id, verdict: 'accept' });
    assert.equal(a.state, 'approval', 'a doc result accepted by the requester waits for the owner');
    assert.equal(a.waiting_on, 'owner_approval');
    return a;
  };
  const openResultPage = async (url, summary, name) => {
    const page = await phonePage();
    assert.equal((await page.goto(url)).status(), 200);
    assert.equal(await text(page, '#summary'), summary);
    assert.equal(await text(page, '#type'), 'doc');
    assert.equal(await text(page, '#provenance'), 'agent_generated');
    assert.equal(await text(page, '#status'), 'approval');
    assert.equal(await page.locator('#evidence a[href="https://example.com/docs/launch"]').count(), 1);
    await assertPhoneFriendly(page);
    if (name) await shot(page, name);
    return page;
  };

  test('acceptance 4: no agent produces owner_approved; a doc result in approval completes only through the owner\'s link', async () => {
    const { task, run } = await startWokenRun('Launch notes for owner approval');
    const evidence = [{ kind: 'link', summary: 'Launch notes', url: 'https://example.com/docs/launch' }];

    // An agent claiming owner_approved is refused (run token and agent token); nothing is written.
    await rejected(run.client, 'return_result', { task_id: task.id, summary: 'Done.', evidence, provenance: 'owner_approved' }, ['provenance']);
    await rejected(agents.builder.client, 'return_result', { task_id: task.id, summary: 'Done.', evidence, provenance: 'owner_approved' }, ['provenance']);
    assert.equal((await getTask(task.id)).task.result, null, 'a refused return_result writes nothing');

    // The owner refuses first: back to working with her message, and the assignee is woken (result_refused).
    const summary1 = 'Launch notes published (first draft).';
    await toApproval(run, task, summary1);
    const first = await resultMessages(task.id);
    const rp = await openResultPage(first.url, summary1, 'a4-result-pending');
    assert.match(await decide(rp, '#refuse', 'Add the pricing section.'), /: refused: the task went back to working\. Message: "Add the pricing section\."$/);
    await rp.context().close();
    const { task: back, history: hb } = await getTask(task.id);
    assert.equal(back.state, 'working');
    const refuseEntry = hb.find((h) => h.action === 'owner_refuse');
    assert.ok(refuseEntry, `history has owner_refuse: ${JSON.stringify(hb.map((h) => h.action))}`);
    assert.equal(refuseEntry.by, 'owner:alice');
    assert.match(refuseEntry.note || '', /pricing section/);
    const [refusedWake] = await waitWakes('alice/builder', task.id, 'result_refused');
    const run2 = await openRun(refusedWake.run_token);

    // Second round: in approval again; no agent tool can complete it.
    const summary = 'Launch notes published with pricing.';
    const sinceFirst = Date.parse(claimsOf(first.url).exp);
    await toApproval(run2, task, summary);
    await refused(agents.bob.client, 'review_result', { task_id: task.id, verdict: 'accept' }, ['approval']);
    await refused(agents.builder.client, 'review_result', { task_id: task.id, verdict: 'accept' });
    await refused(agents.writer.client, 'review_result', { task_id: task.id, verdict: 'accept' });
    await refused(run2.client, 'review_result', { task_id: task.id, verdict: 'accept' });
    await rejected(run2.client, 'return_result', { task_id: task.id, summary: 'Approved.', evidence, provenance: 'owner_approved' });
    await refused(run2.client, 'return_result', { task_id: task.id, summary: 'Again.', evidence }, ['approval']);
    const { task: waiting } = await getTask(task.id);
    assert.equal(waiting.state, 'approval', 'still waiting for the owner after every agent tool');
    assert.equal(waiting.result.provenance, 'agent_generated');

    // The owner's new link (from the second round's messages) completes it, in Chromium.
    const second = await resultMessages(task.id, sinceFirst);
    assert.notEqual(second.url, first.url);
    const page = await openResultPage(second.url, summary);
    assert.match(await decide(page, '#approve'), /: approved: the task is completed\.$/);
    await shot(page, 'a4-result-approved');
    await page.context().close();
    const { task: done, history } = await getTask(task.id);
    assert.equal(done.state, 'completed');
    assert.equal(done.waiting_on, null);
    assert.equal(done.result.provenance, 'owner_approved');
    const approveEntry = history.find((h) => h.action === 'owner_approve');
    assert.ok(approveEntry);
    assert.deepEqual([approveEntry.from, approveEntry.to, approveEntry.by], ['approval', 'completed', 'owner:alice']);
    const spent = await fetch(first.url);
    assert.doesNotMatch(await spent.text(), /id="approve"/, 'the first link, used to refuse, offers no Approve once the task is completed');
    for (const r of [run, run2]) await r.client.close().catch(() => {});
  });

  test('acceptance 2/4: a result link decides once: the link used to refuse round 1 cannot decide round 2', async () => {
    const { task, run } = await startWokenRun('Single-use result link');
    await toApproval(run, task, 'Round 1.');
    const first = await resultMessages(task.id);
    const p1 = await openResultPage(first.url, 'Round 1.');
    await decide(p1, '#refuse', 'Round 2, please.');
    await p1.context().close();
    const [w] = await waitWakes('alice/builder', task.id, 'result_refused');
    const run2 = await openRun(w.run_token);
    await toApproval(run2, task, 'Round 2.');
    // Round 2 waits for the owner; the round-1 link was already used for a decision.
    const page = await phonePage();
    assert.equal((await page.goto(first.url)).status(), 200);
    await shot(page, 'a2-spent-result-link');
    const offers = await page.locator('#approve').count();
    let state = (await getTask(task.id)).task.state;
    if (offers) {
      await Promise.all([page.waitForLoadState(), page.locator('#approve').click()]);
      state = (await getTask(task.id)).task.state;
    }
    await page.context().close();
    for (const r of [run, run2]) await r.client.close().catch(() => {});
    assert.equal(offers, 0, `the round-1 result link (used to refuse) offers Approve again for round 2; clicking it left the task ${state}`);
    assert.equal(state, 'approval', 'the spent link decided nothing');
  });

  test('acceptance 6: hand off → wake → accept → checkpoint → request_step → owner approves → resume → allow → return_result → review accept → owner approves result → completed, owner_approved', async () => {
    // bob hands off a doc task; alice/builder's wake URL receives the routed task with a run token.
    const task = await handOffDoc('Ship the launch notes');
    const [wake] = await waitWakes('alice/builder', task.id, 'task_routed');
    const run = await openRun(wake.run_token);
    await ok(run.client, 'accept_task', { task_id: task.id });
    await ok(run.client, 'save_checkpoint', {
      task_id: task.id, progress: 'Notes written; push pending.', decisions: ['Push to main.'], files_touched: ['docs/launch.md'],
      next_steps: ['git push origin main'], open_questions: [],
    });

    // The permission layer asks before the push: pending; alice gets the link.
    const input = { command: 'git push origin main' };
    const args = { tool_name: 'Bash', input, kind: 'outbound', target: 'origin', reason: 'Publish the launch notes.' };
    const pending = await requestStep(run, { ...args, tool_use_id: 'toolu_story_push_1' });
    assert.deepEqual([pending.status, pending.behavior], ['pending', 'deny']);
    await ok(run.client, 'save_checkpoint', {
      task_id: task.id, progress: 'Waiting for alice to approve the push.', decisions: [], files_touched: ['docs/launch.md'],
      next_steps: ['Push once approved.'], open_questions: [],
    });
    const { url } = await stepMessages(task.id, pending.step_id);
    const page = await openStepPage(url, args, { name: 'a6-step-pending' });
    await assertPhoneFriendly(page);
    await decide(page, '#approve');
    await shot(page, 'a6-step-approved');
    await page.context().close();

    // Resumed: the new run's permission layer gets allow with the exact input.
    const [resume] = await waitWakes('alice/builder', task.id, 'step_decided');
    assert.equal(resume.resumes_run, wake.run_id);
    assert.notEqual(resume.run_token, wake.run_token);
    const resumed = await openRun(resume.run_token);
    const allow = await requestStep(resumed, { tool_name: 'Bash', input, tool_use_id: 'toolu_story_push_2' });
    assert.deepEqual([allow.behavior, allow.status, allow.step_id], ['allow', 'consumed', pending.step_id]);
    assert.deepEqual(allow.updatedInput, input);

    // Result with doc evidence → verifying → bob accepts → approval; bob is woken with the result.
    const summary = 'Launch notes pushed to main.';
    const { task: v } = await ok(resumed.client, 'return_result', {
      task_id: task.id, summary,
      evidence: [
        { kind: 'commit', summary: 'docs: launch notes', url: 'https://github.com/acme/site/commit/0123abc' },
        { kind: 'link', summary: 'Published launch notes', url: 'https://example.com/docs/launch' },
      ],
    });
    assert.equal(v.state, 'verifying');
    await waitWakes('bob/reviewer', task.id, 'result_returned');
    const { task: a } = await ok(agents.bob.client, 'review_result', { task_id: task.id, verdict: 'accept' });
    assert.deepEqual([a.state, a.waiting_on], ['approval', 'owner_approval']);

    // Alice approves the result from her email's link.
    const { url: resultUrl } = await resultMessages(task.id);
    const rpage = await openResultPage(resultUrl, summary, 'a6-result-pending');
    await decide(rpage, '#approve');
    await shot(rpage, 'a6-result-approved');
    await rpage.context().close();

    const { task: done, history } = await getTask(task.id);
    assert.equal(done.state, 'completed');
    assert.equal(done.result.provenance, 'owner_approved');
    const actions = history.map((h) => h.action);
    for (const a2 of ['hand_off', 'accept', 'checkpoint', 'return_result', 'review_accept', 'owner_approve']) assert.ok(actions.includes(a2), `history has ${a2}: ${actions.join(', ')}`);
    const oa = history.find((h) => h.action === 'owner_approve');
    assert.deepEqual([oa.from, oa.to, oa.by], ['approval', 'completed', 'owner:alice']);
    assert.deepEqual([history.find((h) => h.action === 'review_accept').from, history.find((h) => h.action === 'review_accept').to], ['verifying', 'approval']);
    for (const r of [run, resumed]) await r.client.close().catch(() => {});
  });
});
