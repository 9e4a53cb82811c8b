// Approve inside Slack, end to end against the running local stack: the woken run asks
// through the official TypeScript MCP SDK, alice's Slack message in the dev outbox carries the
// Approve and Refuse buttons, and this suite plays Slack: it posts the documented interaction
// payloads (block_actions, view_submission) to /slack/interactivity, signed with the stack's
// signing secret from local.json exactly as Slack signs them (v0 HMAC-SHA256 of "v0:<ts>:<body>").
// The run resumes as with the web page (a step_decided wake-up), the message is updated in place,
// a teammate's click decides nothing, and forged, stale and replayed requests are refused.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { loadStack, skipUnlessStack, uniq, eventually, PROJECT } from '../lib/env.mjs';
import { OutputValidator, textOf } from '../lib/validate.mjs';
import { connectSdk } from '../lib/sdk.mjs';

const ALICE_SLACK = '#alice-agents';
const RESPONSE_URL = 'https://hooks.slack.com/actions/T0PRICKLE/1234567890/e2eResponse';

const { stack, skipReason } = await loadStack();

describe('approve inside Slack', { skip: skipUnlessStack(skipReason ?? (stack.local.slack_signing_secret ? null : 'local.json has no slack_signing_secret')) }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let bob; let V;

  const call = (client, name, args) => client.callTool({ name, arguments: args });
  const ok = async (client, name, args) => V.checkOk(name, await call(client, name, args));
  const requestStep = async (run, args) => JSON.parse(textOf(await call(run.client, 'request_step', args)));
  const outbox = async () => (await (await fetch(`${base}/dev/outbox.json`)).json())
    .map((m) => ({ ...m, body: typeof m.body === 'string' ? JSON.parse(m.body) : m.body }));
  const waitFor = async (what, find) => {
    const found = await eventually(async () => find(await outbox()), { timeoutMs: 20000 });
    assert.ok(found, `${what}: not in the outbox:\n${JSON.stringify((await outbox()).slice(-4), null, 1)}`);
    return found;
  };
  const buttonsOf = (m) => Object.fromEntries((m.body.blocks ?? []).filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements).map((e) => [e.action_id, e.value ?? e.url]));
  const tokenClaims = (token) => JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8'));
  /** Alice's Slack request message for a step, with its buttons. */
  const stepMessage = (taskId, stepId) => waitFor(`the Slack message of ${stepId}`, (msgs) => msgs.find((m) => {
    if (m.channel !== 'slack' || m.to !== ALICE_SLACK || m.subject.startsWith('updated: ')) return false;
    const approve = buttonsOf(m).prickle_approve;
    return approve && tokenClaims(approve).task_id === taskId && tokenClaims(approve).step_id === stepId;
  }));
  const wakes = (taskId, reason, count = 1) => waitFor(`${count}× ${reason} wake-up of ${taskId}`, (msgs) => {
    const w = msgs.filter((m) => m.channel === 'wake' && m.body?.task_id === taskId && m.body?.reason === reason);
    return w.length >= count ? w.map((m) => m.body) : null;
  });

  // ---------- Slack's side ----------
  const sign = (secret, ts, body) => `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
  const now = () => Math.floor(Date.now() / 1000);
  const form = (payload) => `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  /** POST a body as Slack does; returns status and text. */
  const post = async (body, { ts = now(), secret = stack.local.slack_signing_secret, signature } = {}) => {
    const r = await fetch(stack.local.slack_interactivity_url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
        'X-Slack-Request-Timestamp': String(ts), 'X-Slack-Signature': signature ?? sign(secret, String(ts), body),
      },
      body,
    });
    return { status: r.status, text: await r.text() };
  };
  const user = (id) => ({ id, username: id.slice(2).toLowerCase(), name: id.slice(2).toLowerCase(), team_id: 'T0PRICKLE' });
  const blockActions = (userId, actionId, value) => ({
    type: 'block_actions', user: user(userId), api_app_id: 'A0PRICKLE', token: 'deprecated',
    container: { type: 'message', message_ts: '1733050000.000100', channel_id: 'C0ALICE', is_ephemeral: false },
    trigger_id: `${Date.now()}.738474920.8088930838d88f008e0`, team: { id: 'T0PRICKLE', domain: 'prickle' },
    enterprise: null, is_enterprise_install: false, channel: { id: 'C0ALICE', name: 'alice-agents' },
    state: { values: {} }, response_url: RESPONSE_URL,
    actions: [{ action_id: actionId, block_id: 'prickle_decide', type: 'button', value, text: { type: 'plain_text', text: 'x' }, action_ts: `${now()}.000200` }],
  });
  const viewSubmission = (userId, view, message) => ({
    type: 'view_submission', team: { id: 'T0PRICKLE', domain: 'prickle' }, user: user(userId), api_app_id: 'A0PRICKLE', token: 'deprecated',
    trigger_id: `${Date.now()}.738474920.8088930838d88f008e1`,
    view: { ...view, id: 'V0E2E', state: { values: { message: { message: { type: 'plain_text_input', value: message } } } } },
    response_urls: [], is_enterprise_install: false, enterprise: null,
  });

  /** The Edit modal submitted: the edited call in its block, and a message. */
  const editSubmission = (userId, view, block, edited, message) => {
    const p = viewSubmission(userId, view, message);
    p.view.state.values[block] = { edit: { type: 'plain_text_input', value: edited } };
    return p;
  };

  before(async () => {
    bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-slack');
    V = new OutputValidator((await bob.client.listTools()).tools);
  });
  after(async () => { await bob?.client.close().catch(() => {}); });

  /** Hand off a task to alice/builder; the woken run accepts, checkpoints and asks for a step. */
  const askingRun = async (args) => {
    const { task } = await ok(bob.client, 'hand_off_task', {
      project: PROJECT, assignee: 'alice/builder',
      packet: { task: `Ship it ${uniq('slack')}`, deliverable_type: 'answer', acceptance_criteria: ['Shipped.'] },
    });
    const [wake] = await wakes(task.id, 'task_routed');
    const run = await connectSdk(stack.url, wake.run_token, 'prickle-e2e-slack-run');
    await run.client.listTools();
    await ok(run.client, 'accept_task', { task_id: task.id });
    await ok(run.client, 'save_checkpoint', { task_id: task.id, progress: 'Ready.', decisions: [], files_touched: [], next_steps: ['Push.'], open_questions: [] });
    const asked = await requestStep(run, args(task.id));
    assert.equal(asked.status, 'pending');
    return { task, wake, run, asked, message: await stepMessage(task.id, asked.step_id) };
  };

  test('a teammate cannot decide; forged and stale requests get 401; alice approves; the run resumes; the message updates in place; a replay is refused', async () => {
    const args = (id) => ({ tool_name: 'Bash', input: { command: `git push origin ${id}` }, kind: 'outbound', target: 'origin', reason: 'Publish.' });
    const { task, wake, run, asked, message } = await askingRun(args);
    const token = buttonsOf(message).prickle_approve;
    assert.equal(buttonsOf(message).prickle_refuse, token, 'Refuse carries the same token');
    assert.match(buttonsOf(message).open_approval, new RegExp(`^${base}/a/`), 'the page button stays');

    // bob is in the channel: his click decides nothing and he alone is told why.
    const teammate = await post(form(blockActions('U0BOB', 'prickle_approve', token)));
    assert.equal(teammate.status, 200);
    const [ephemeral] = await waitFor('the ephemeral answer to bob', (msgs) => {
      const e = msgs.filter((m) => m.subject.startsWith('ephemeral: ') && m.to === RESPONSE_URL && /Only alice can decide this/.test(m.text));
      return e.length ? e : null;
    });
    assert.equal(ephemeral.body.response_type, 'ephemeral');
    assert.equal(ephemeral.body.replace_original, false);
    assert.equal((await requestStep(run, args(task.id))).status, 'pending', "a teammate's click decided nothing");

    // Not signed by Slack: refused, nothing decided.
    const body = form(blockActions('U0ALICE', 'prickle_approve', token));
    assert.equal((await post(body, { secret: 'not-the-secret' })).status, 401, 'forged signature');
    assert.equal((await post(body, { ts: now() - 6 * 60 })).status, 401, 'stale timestamp');
    assert.equal((await post(body, { signature: '' })).status, 401, 'no signature');
    assert.equal((await requestStep(run, args(task.id))).status, 'pending', 'an unverified request decided nothing');

    // alice clicks Approve.
    const ts = now();
    const signature = sign(stack.local.slack_signing_secret, String(ts), body);
    const approved = await post(body, { ts, signature });
    assert.deepEqual(approved, { status: 200, text: '' });

    // The run resumes as with the web page.
    const [resume] = await wakes(task.id, 'step_decided');
    assert.equal(resume.resumes_run, wake.run_id, 'resumes_run names the run that asked');
    const resumed = await connectSdk(stack.url, resume.run_token, 'prickle-e2e-slack-resumed');
    await resumed.client.listTools();
    const allow = await requestStep(resumed, { ...args(task.id), tool_use_id: 'toolu_e2e_slack_1' });
    assert.equal(allow.behavior, 'allow');
    assert.deepEqual(allow.updatedInput, args(task.id).input);

    // The message is updated in place: same ts, who and when, no buttons.
    const update = await waitFor('the updated Slack message', (msgs) => msgs.find((m) => m.channel === 'slack' && m.subject.startsWith('updated: ') && m.body.update_of === message.body.ts));
    assert.match(update.text, /^Approved by alice at \d{4}-\d\d-\d\dT/);
    assert.deepEqual(buttonsOf(update), {}, 'the buttons are gone');

    // The same signed request again: a replay.
    assert.equal((await post(body, { ts, signature })).status, 401, 'replay');
    await run.client.close(); await resumed.client.close();
  });

  test('Refuse opens a modal; its submission refuses with the message; the run is told', async () => {
    const args = (id) => ({ tool_name: 'Bash', input: { command: `rm -rf build/${id}` }, kind: 'destructive', target: 'build', reason: 'Clean.' });
    const { task, wake, asked, message } = await askingRun(args);
    const token = buttonsOf(message).prickle_refuse;
    assert.equal((await post(form(blockActions('U0ALICE', 'prickle_refuse', token)))).status, 200);
    const modal = await waitFor('the Refuse modal', (msgs) => msgs.find((m) => m.subject === 'modal: Refuse' && m.body.private_metadata === token));
    assert.equal(modal.body.callback_id, 'prickle_refuse');

    // bob cannot submit it either.
    const bobs = await post(form(viewSubmission('U0BOB', modal.body, 'fine by me')));
    assert.equal(bobs.status, 200);
    assert.match(JSON.parse(bobs.text).errors.message, /Only alice can decide this/);

    const submitted = await post(form(viewSubmission('U0ALICE', modal.body, 'Not the build folder; clean with make clean.')));
    assert.deepEqual(submitted, { status: 200, text: '' }, 'an empty 200 closes the modal');
    const [resume] = await wakes(task.id, 'step_decided');
    assert.equal(resume.resumes_run, wake.run_id);
    const resumed = await connectSdk(stack.url, resume.run_token, 'prickle-e2e-slack-resumed');
    await resumed.client.listTools();
    const deny = await requestStep(resumed, { ...args(task.id), tool_use_id: 'toolu_e2e_slack_2' });
    assert.equal(deny.behavior, 'deny');
    assert.equal(deny.step_id, asked.step_id);
    assert.match(deny.message, /Not the build folder; clean with make clean\./);
    const update = await waitFor('the updated Slack message', (msgs) => msgs.find((m) => m.channel === 'slack' && m.subject.startsWith('updated: ') && m.body.update_of === message.body.ts));
    assert.match(update.text, /^Refused by alice at .*Not the build folder/);
    assert.deepEqual(buttonsOf(update), {});
    await resumed.client.close();
  });

  test('Edit… opens the command in a modal; alice approves her edit; the run is allowed the edited call once; out-of-bounds, replayed and late edits decide nothing', async () => {
    const args = (id) => ({ tool_name: 'Bash', input: { command: `git push --force origin ${id}` }, kind: 'outbound', target: 'origin', reason: 'Publish.' });
    const { task, wake, run, asked, message } = await askingRun(args);
    const token = buttonsOf(message).prickle_edit;
    assert.equal(token, buttonsOf(message).prickle_approve, 'Edit… carries the same token');

    // bob's click opens nothing.
    assert.equal((await post(form(blockActions('U0BOB', 'prickle_edit', token)))).status, 200);
    await waitFor('the ephemeral answer to bob', (msgs) => msgs.find((m) => m.subject.startsWith('ephemeral: ') && /Only alice can decide this/.test(m.text)));
    assert.equal((await outbox()).filter((m) => m.subject === 'modal: Edit, then approve' && m.body.private_metadata === token).length, 0, "bob's click opened no modal");

    assert.equal((await post(form(blockActions('U0ALICE', 'prickle_edit', token)))).status, 200);
    const modal = await waitFor('the Edit modal', (msgs) => msgs.find((m) => m.subject === 'modal: Edit, then approve' && m.body.private_metadata === token));
    assert.equal(modal.body.callback_id, 'prickle_edit');
    const field = modal.body.blocks.find((b) => b.block_id === 'edit_command');
    assert.equal(field.element.initial_value, `git push --force origin ${task.id}`, 'the modal holds the command line');

    // Refused submissions: bob's; an empty command; one over the bounds (forged beyond Slack's field). Nothing is stored.
    const errorsOf = async (payload) => JSON.parse((await post(form(payload))).text).errors;
    assert.match((await errorsOf(editSubmission('U0BOB', modal.body, 'edit_command', 'git push origin main', ''))).edit_command, /Only alice can decide this/);
    assert.match((await errorsOf(editSubmission('U0ALICE', modal.body, 'edit_command', '   ', ''))).edit_command, /the edited command is empty/);
    assert.match((await errorsOf(editSubmission('U0ALICE', modal.body, 'edit_command', `echo ${'x'.repeat(70 * 1024)}`, ''))).edit_command,
      /limit of a step's input size is 65536 bytes/);
    const updates = async () => (await outbox()).filter((m) => m.channel === 'slack' && m.subject.startsWith('updated: ') && m.body.update_of === message.body.ts);
    assert.equal((await updates()).length, 0, 'no decision was announced');
    assert.equal((await requestStep(run, args(task.id))).status, 'pending', 'the refused edits decided nothing');

    const body = form(editSubmission('U0ALICE', modal.body, 'edit_command', `git push origin feature/${task.id}`, 'Not main: the feature branch.'));
    const ts = now();
    const signature = sign(stack.local.slack_signing_secret, String(ts), body);
    assert.deepEqual(await post(body, { ts, signature }), { status: 200, text: '' }, 'an empty 200 closes the modal');
    assert.equal((await post(body, { ts, signature })).status, 401, 'the same signed submission again: a replay');
    // A new submission (a new signature) after the decision: decided once.
    assert.match((await errorsOf(editSubmission('U0ALICE', modal.body, 'edit_command', 'rm -rf /', ''))).edit_command, /already approved by alice/);

    const update = await waitFor('the updated Slack message', (msgs) => msgs.find((m) => m.channel === 'slack' && m.subject.startsWith('updated: ') && m.body.update_of === message.body.ts));
    assert.match(update.text, /^Approved as edited by alice at /);
    assert.ok(JSON.stringify(update.body.blocks).includes(`git push origin feature/${task.id}`), 'the update shows the edit');
    assert.deepEqual(buttonsOf(update), {});

    const [resume] = await wakes(task.id, 'step_decided');
    assert.equal(resume.resumes_run, wake.run_id);
    const resumed = await connectSdk(stack.url, resume.run_token, 'prickle-e2e-slack-resumed');
    await resumed.client.listTools();
    const allow = await requestStep(resumed, { ...args(task.id), tool_use_id: 'toolu_e2e_slack_edit' });
    assert.deepEqual([allow.step_id, allow.status, allow.behavior], [asked.step_id, 'consumed', 'allow']);
    assert.deepEqual(allow.updatedInput, { command: `git push origin feature/${task.id}` });
    assert.match(allow.message, /^allowed as your owner edited it: /);
    const again = await requestStep(resumed, { ...args(task.id), tool_use_id: 'toolu_e2e_slack_edit_2' });
    assert.equal(again.status, 'pending', 'used once');
    await run.client.close(); await resumed.client.close();
  });
});
