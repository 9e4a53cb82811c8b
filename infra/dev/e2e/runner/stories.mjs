// What the agent stories share (agents-edit, agents-cap, agents-kill, agents-chain .test.mjs): one
// stand-in model of the chat wires for every template of agents.mjs's CLIS (a new template is one row
// there) and one of the Responses API for Codex (codexmodel.mjs), one runner per template and test on
// an agent of its own (created for the test, pull mode), so that every template's case of a story runs
// at once against the one local stack.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { loadStack, admin, askSignInLink, uniq, eventually, sleep, PROJECT, CHROMIUM_NEED, npmNeed } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startChatModels } from './chatmodels.mjs';
import { startResponses } from './responses.mjs';
import { codexModel } from './codexmodel.mjs';
import { routeOf, ranOutcome, notRunOutcome, handOffArgs, acceptArgs } from './relay.mjs';
import { CLIS } from './agents.mjs';
import { CODEX, CHROMIUM, CHROMIUM_ARGS, RUN_WAIT_MS, runnerBinary, startRunner, keepRunnerLogs } from './harness.mjs';

export { CLIS };
/** The templates every story runs, one case each: agents.mjs's CLIS. */
export const TEMPLATES = Object.keys(CLIS);
/** The Codex CLI (codex-run hosts it): the stories its own suite (codex.test.mjs) does not tell run it too. */
/** The shell tool of a template, as Prickle is asked about it. */
export const shellOf = (name) => (name === 'codex' ? 'exec_command' : CLIS[name].shell);

const WOKE = /Prickle woke you (?:again )?for task (\S+) \((\w+)\)/;
const NOT_RUN = /blocked|Denied|not made|refused|still waiting|gate failed|hook exited|not allowed|cancel|interrupt|abort/i;
const EDITED = /Make exactly this call now instead[\s\S]*?\(the command: (.*)\)/;
const DESCRIPTIONS = ['Append a line to the side file', 'Record that the step ran', 'Write the marker line', 'Add one line to the side-effect file'];
const pick = (a) => a[Math.floor(Math.random() * a.length)];

/** The skip reason of a story: the stack, the CLIs and Chromium must be there (CI fails instead). */
export async function storyPrereqs() {
  return loadStack(...[...Object.values(CLIS).map((c) => c.program), CODEX].map((p) => npmNeed(p)), CHROMIUM_NEED);
}

/**
 * The model of a woken run of a story, from the conversation it is sent (like agents.mjs's, and more):
 * it accepts the task, then appends a line to the task's side file with the CLI's shell tool (worded
 * afresh, sometimes beside a read in one message); told its owner edited the call (qwen), it makes the
 * edited call; once the call ran it returns the task's result when `plan(taskId).result`; when the call
 * was not made it says so and ends its turn, and makes it again only when a resumed run's prompt comes
 * after a "still waiting" or quotes the call it asked (its run ended before the answer came). `plan(taskId)` is what the test registered for the task: {result} returns
 * the result once the call ran, {shell: false} makes no call at all, {relay: true} is a link of a relay
 * (relay.mjs): it reads the task before its call, then hands the next link on (and returns its result
 * when the call ran, in either order), and woken for a result it asked for, it reads the task and accepts it.
 */
export function storyModel(sideOf, plan = () => ({})) {
  return async (conv) => {
    const shell = conv.tools.find((t) => t === 'run_shell_command' || t === 'bash');
    if (!shell) return { text: 'Nothing to do in this request.' };
    const woke = conv.messages.filter((m) => m.role === 'user').map((m) => WOKE.exec(m.text)).find(Boolean);
    if (!woke) return { text: 'No Prickle task in this conversation.' };
    const taskId = woke[1];
    const cli = Object.values(CLIS).find((c) => c.shell === shell && conv.tools.includes(c.marker));
    const calls = conv.messages.flatMap((m) => m.calls.filter((c) => c.name === shell));
    const ids = new Set(calls.map((c) => c.id));
    const results = conv.messages.flatMap((m) => m.results.filter((r) => (r.name ? r.name === shell : ids.has(r.id))));
    const allResults = conv.messages.flatMap((m) => m.results);
    const resultOf = (c) => allResults.find((r) => r.id === c.id || r.name === c.name);
    /** Prickle's tool as the CLI names it, or through qwen's tool_call bridge. */
    const prickle = (tool, args) => {
      const own = conv.tools.find((t) => new RegExp(`prickle.${tool}$`).test(t));
      if (own) return { calls: [{ name: own, args }] };
      if (conv.tools.includes('tool_call')) return { calls: [{ name: 'tool_call', args: { name: `mcp__prickle__${tool}`, arguments: args } }] };
      return { text: `No ${tool} among ${conv.tools.join(', ')}` };
    };
    const made = (tool) => conv.messages.flatMap((m) => m.calls.filter((c) => c.name.endsWith(tool) || (c.args?.name || '').endsWith(tool)));
    // A relay's requester, woken for the result it asked for: reads the task, accepts the result, no other call.
    if (woke[2] === 'result_returned' && (await plan(taskId))?.relay) {
      if (!made('get_task').length) return prickle('get_task', { task_id: taskId });
      if (!made('review_result').length) return prickle('review_result', acceptArgs(taskId));
      return { text: pick(['Accepted the result.', 'The result is accepted; nothing else to do.']) };
    }
    /** A relay link once its call was decided: the next link handed on, the result returned when it ran (either first). */
    const relay = (outcome, ran) => {
      const route = routeOf(resultOf(made('get_task').at(-1) || {})?.text);
      const todo = [];
      if (route?.length && !made('hand_off_task').length) todo.push(() => prickle('hand_off_task', handOffArgs(route, outcome)));
      if (ran && !made('return_result').length) {
        todo.push(() => prickle('return_result', { task_id: taskId, summary: pick(['Appended the line once.', 'The side file has its line.']),
          evidence: [{ kind: 'test_output', summary: 'The shell call ran', content: ran.slice(0, 300) || 'ran' }] }));
      }
      return todo.length ? pick(todo)() : { text: pick(['Done with my link of the relay.', 'My link is done and handed on.']) };
    };
    const call = (command = `echo ran >> ${sideOf(taskId)}`) => {
      const shellCall = { name: shell, args: Math.random() < 0.5 ? { command, description: pick(DESCRIPTIONS) } : { description: pick(DESCRIPTIONS), command } };
      const read = cli?.read && calls.length === 0 && Math.random() < 0.5 ? [{ name: cli.read.name, args: cli.read.args('/etc/hostname') }] : [];
      return { calls: [...read, shellCall] };
    };
    // Qwen Code's bridge refuses an MCP tool its discovery has not registered yet: tried again.
    const accepts = made('accept_task');
    const accepted = accepts.some((c) => !/not registered|could not be loaded/.test(resultOf(c)?.text || ''));
    if (!accepted && accepts.length < 6) {
      if (accepts.length) await sleep(2000);
      return prickle('accept_task', { task_id: taskId, note: pick(['On it.', 'Taking this one.']) });
    }
    if (calls.length === 0) {
      const p = await plan(taskId);
      if (p?.relay && !made('get_task').length) return prickle('get_task', { task_id: taskId });
      return p?.shell === false ? { text: pick(['Nothing to run for this task.', 'No call needed here; done.']) } : call();
    }
    const lastUser = conv.messages.map((m, i) => ({ m, i })).filter(({ m }) => m.role === 'user').at(-1);
    const lastResult = conv.messages.findLastIndex((m) => m.results.length);
    // Woken again and told the call it asked about (its run ended before the answer came): made again.
    const toldAsked = lastUser && lastUser.i > lastResult && /woke you again/.test(lastUser.m.text) && !/asked your owner about: none/.test(lastUser.m.text);
    if (!results.length) return toldAsked ? call() : { text: 'The call got no answer; ending my turn.' };
    const last = results.at(-1).text;
    const edited = EDITED.exec(last);
    if (edited) return call(JSON.parse(`"${edited[1].replace(/"/g, '\\"')}"`));
    if (!NOT_RUN.test(last)) {
      if ((await plan(taskId))?.relay) return relay(ranOutcome(), last || 'ran');
      const returned = made('return_result');
      const want = (await plan(taskId))?.result;
      if (want && (returned.length === 0 || (/not registered|could not be loaded/.test(resultOf(returned.at(-1))?.text || '') && returned.length < 6))) {
        if (returned.length) await sleep(2000);
        return prickle('return_result', { task_id: taskId, summary: pick(['Appended the line once.', 'The side file has its line.']),
          evidence: [{ kind: 'test_output', summary: 'The shell call ran', content: last.slice(0, 300) || 'ran' }] });
      }
      return { text: pick(['Done: the line is appended.', 'The line is in the side file; done.']) };
    }
    if (toldAsked || (/still waiting/i.test(last) && lastUser && lastUser.i > lastResult && /woke you again/.test(lastUser.m.text))) return call();
    if (!/still waiting/i.test(last) && (await plan(taskId))?.relay) return relay(notRunOutcome(last), null);
    return { text: `The call was not made: ${last}` };
  };
}

/**
 * The shared state of one story file: its directory, the runner binary, the stand-in model, Chromium,
 * bob's SDK client, and a way to start a pull-mode runner of a fresh agent with a template. With relay,
 * every task of the file is a link of a relay (relay.mjs): the models need no plan registered for it.
 */
export function story(label, { usage, relay = false } = {}) {
  const s = {
    dir: null, bin: null, model: null, browser: null, bob: null, base: null, stack: null,
    runners: [], agents: [], plans: new Map(),
    sideOf: (taskId) => join(s.dir, 'work', `side-${taskId}.txt`),
  };
  s.setup = async (stack) => {
    s.stack = stack;
    s.base = stack.url.replace(/\/mcp$/, '');
    s.dir = mkdtempSync(join(tmpdir(), `prickle-e2e-${label}-`));
    mkdirSync(join(s.dir, 'work'));
    s.bin = runnerBinary(s.dir);
    s.model = await startChatModels(storyModel(s.sideOf, async (taskId) => {
      if (relay) return { relay: true };
      await eventually(() => s.plans.has(taskId), { timeoutMs: 10000, intervalMs: 100 });
      return s.plans.get(taskId);
    }), { usage });
    // Codex's stand-in (the Responses API) and its home, whose config points Codex at it.
    s.responses = await startResponses(codexModel({ commandFor: (t) => `echo ran >> ${s.sideOf(t)}`, patchFor: (t) => join(s.dir, 'work', `notes-${t}.txt`), sideOf: s.sideOf, relay }));
    s.codexHome = join(s.dir, 'codex-home');
    mkdirSync(s.codexHome);
    writeFileSync(join(s.codexHome, 'config.toml'), `model_provider = "mock"\nmodel = "gpt-5-standin"\n\n[model_providers.mock]\nname = "Responses stand-in"\n` +
      `base_url = "${s.responses.url}"\nwire_api = "responses"\nenv_key = "MOCK_API_KEY"\n`);
    s.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    s.bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], `prickle-e2e-${label}`);
  };
  s.teardown = async () => {
    for (const r of s.runners) await r.stop();
    await s.alice?.close();
    await s.browser?.close();
    await s.bob?.client.close().catch(() => {});
    await s.model?.close();
    await s.responses?.close();
    const keep = keepRunnerLogs(`runner-${label}-logs`, s.dir, s.runners);
    if (keep && s.model) writeFileSync(join(keep, 'model-requests.json'), JSON.stringify(s.model.requests.map((q) => ({ url: q.url, conversation: q.conversation })), null, 1));
    if (s.dir) rmSync(s.dir, { recursive: true, force: true });
    assert.deepEqual(s.model?.errors.map((e) => e.message) || [], [], 'the stand-in model scripted every turn');
  };
  /** A new agent of alice's in the project, with a token; pull mode (it has no webhook). */
  s.newAgent = (what) => {
    const id = `alice/${what}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    admin(['create-agent', '--id', id, '--projects', PROJECT]);
    const { token } = admin(['mint-token', '--agent', id]);
    assert.ok(token, `a token for ${id}`);
    s.agents.push(id);
    return { id, token };
  };
  /** A pull-mode runner of agent whose project runs template name. */
  s.runner = async (name, runLabel, agent, { extraEnv = {}, config = {}, settings } = {}) => {
    if (name === 'codex') {
      const r = await startRunner(s.bin, s.dir, `codex-${runLabel}`, {
        prickle_url: s.base, agent: agent.id, agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull',
        concurrency: 2, run_timeout: '4m', grace: '5s', log_dir: join(s.dir, `logs-codex-${runLabel}`), state_dir: join(s.dir, `state-codex-${agent.id.split('/')[1]}`),
        projects: { [PROJECT]: { dir: join(s.dir, 'work'), template: 'codex', program: CODEX, args: ['--poll', '1s', '--poll-max', '2s'] } }, ...config,
      }, { PATH: process.env.PATH, HOME: join(s.dir, 'home-codex'), CODEX_HOME: s.codexHome, MOCK_API_KEY: 'test', PRICKLE_AGENT_TOKEN: agent.token, ...extraEnv });
      s.runners.push(r);
      return r;
    }
    const cli = CLIS[name];
    // A test whose user configures the CLI otherwise (settings) has a home of its own.
    const home = join(s.dir, settings ? `home-${name}-${runLabel}` : `home-${name}`);
    const file = cli.settings && join(home, cli.settings[0], cli.settings[2] || 'settings.json');
    if (cli.settings && !existsSync(file)) {
      // The user's own configuration (what a real login leaves): read by the runs, never written.
      mkdirSync(join(home, cli.settings[0]), { recursive: true });
      writeFileSync(file, JSON.stringify(settings ? settings(structuredClone(cli.settings[1])) : cli.settings[1], null, 2));
    }
    const r = await startRunner(s.bin, s.dir, `${name}-${runLabel}`, {
      prickle_url: s.base, agent: agent.id, agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull',
      concurrency: 2, run_timeout: '4m', grace: '5s', log_dir: join(s.dir, `logs-${name}-${runLabel}`), state_dir: join(s.dir, `state-${name}-${agent.id.split('/')[1]}`),
      projects: { [PROJECT]: { dir: join(s.dir, 'work'), template: name, program: cli.program, args: cli.args } }, ...config,
    }, { PATH: process.env.PATH, HOME: home, PRICKLE_AGENT_TOKEN: agent.token, ...cli.env(s.model.url), ...extraEnv });
    s.runners.push(r);
    return r;
  };
  s.outbox = async () => (await fetch(`${s.base}/dev/outbox.json`)).json();
  /** alice, signed in once with the link from her email: a browser context of hers. */
  s.signInAlice = async () => {
    const sent = (await s.outbox()).length;
    assert.equal((await askSignInLink(s.base, 'alice')).status, 200);
    const mail = await eventually(async () => (await s.outbox()).slice(sent).find((m) => m.channel === 'email' && m.to === 'alice@example.com'
      && (m.links || []).some((l) => l.includes('/signin/'))));
    assert.ok(mail, 'a sign-in email to alice');
    s.alice = await s.browser.newContext();
    const page = await s.alice.newPage();
    assert.equal((await page.goto(mail.links.find((l) => l.includes('/signin/')))).status(), 200);
    await Promise.all([page.waitForURL(`${s.base}/`), page.locator('#signin-button').click()]);
    await page.close();
  };
  /**
   * alice edits the step's command inside Slack and approves the edit, as slack.test.mjs plays Slack: her
   * request message's Edit… button (a signed block_actions), then the modal submitted (view_submission).
   */
  s.slackEdit = async (taskId, stepId, edited) => {
    const secret = s.stack.local.slack_signing_secret;
    assert.ok(secret, 'local.json has the Slack signing secret');
    const messages = async () => (await s.outbox()).map((m) => ({ ...m, body: typeof m.body === 'string' ? JSON.parse(m.body) : m.body }));
    const buttons = (m) => Object.fromEntries((m.body?.blocks ?? []).filter((b) => b.type === 'actions').flatMap((b) => b.elements).map((e) => [e.action_id, e.value ?? e.url]));
    const claims = (token) => JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8'));
    const message = await eventually(async () => (await messages()).find((m) => m.channel === 'slack' && !m.subject.startsWith('updated: ')
      && buttons(m).prickle_edit && claims(buttons(m).prickle_edit).step_id === stepId), { timeoutMs: 20000 });
    assert.ok(message, `alice's Slack message for ${stepId} of ${taskId}`);
    const token = buttons(message).prickle_edit;
    const post = async (payload) => {
      const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
      const ts = String(Math.floor(Date.now() / 1000));
      const r = await fetch(s.stack.local.slack_interactivity_url, { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded',
        'X-Slack-Request-Timestamp': ts, 'X-Slack-Signature': `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}` } });
      return { status: r.status, text: await r.text() };
    };
    const user = { id: 'U0ALICE', username: 'alice', name: 'alice', team_id: 'T0PRICKLE' };
    const team = { id: 'T0PRICKLE', domain: 'prickle' };
    assert.equal((await post({ type: 'block_actions', user, api_app_id: 'A0PRICKLE', team, trigger_id: `${Date.now()}.1.e2e`,
      container: { type: 'message', message_ts: message.body.ts, channel_id: 'C0ALICE' }, channel: { id: 'C0ALICE', name: 'alice-agents' },
      state: { values: {} }, response_url: 'https://hooks.slack.com/actions/T0PRICKLE/1/e2e',
      actions: [{ action_id: 'prickle_edit', block_id: 'prickle_decide', type: 'button', value: token, action_ts: `${Date.now() / 1000}` }] })).status, 200);
    const modal = await eventually(async () => (await messages()).find((m) => m.subject === 'modal: Edit, then approve' && m.body.private_metadata === token), { timeoutMs: 20000 });
    assert.ok(modal, 'the Edit modal opened');
    const values = { message: { message: { type: 'plain_text_input', value: '' } }, edit_command: { edit: { type: 'plain_text_input', value: edited } } };
    assert.deepEqual(await post({ type: 'view_submission', team, user, api_app_id: 'A0PRICKLE', trigger_id: `${Date.now()}.2.e2e`,
      view: { ...modal.body, id: 'V0E2E', state: { values } }, response_urls: [] }), { status: 200, text: '' }, 'the edit is approved; the modal closes');
  };
  s.call = async (client, tool, args) => {
    const r = await client.callTool({ name: tool, arguments: args });
    assert.notEqual(r.isError, true, `${tool}: ${JSON.stringify(r.content)}`);
    return r.structuredContent;
  };
  /** bob hands a task to agent; plan is what the model does with it ({result}). */
  s.handOff = async (what, agent, plan = {}) => {
    const { task } = await s.call(s.bob.client, 'hand_off_task', { project: PROJECT, assignee: agent.id, packet: {
      task: `${what} ${uniq(label)}${plan.shell === false ? ' [no call]' : ''}`, deliverable_type: 'answer', acceptance_criteria: ['The side-effect file has its line.'] } });
    s.plans.set(task.id, plan);
    return task.id;
  };
  s.pendingShell = async (name, taskId) => {
    const st = await eventually(() => admin(['steps', '--task', taskId]).find((x) => x.tool_name === shellOf(name) && x.status === 'pending'), { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
    assert.ok(st, `a pending ${shellOf(name)} step on ${taskId}`);
    return st;
  };
  /** The model's requests in taskId's conversation. */
  s.requestsOf = (taskId) => s.model.requests.filter((q) => q.conversation.messages.some((m) => m.role === 'user' && m.text.includes(`task ${taskId} (`)));
  /** Every tool result the model read in taskId's conversation, each once. */
  s.resultsOf = (taskId) => [...new Set(s.requestsOf(taskId).flatMap((q) => q.conversation.messages.flatMap((m) => m.results)).map((r) => r.text))];
  /** What the model read in taskId's conversation: every tool result and every later user message. */
  s.toldOf = (taskId) => [...new Set(s.requestsOf(taskId).flatMap((q) => q.conversation.messages.slice(1).flatMap((m) => [...m.results.map((x) => x.text), ...(m.role === 'user' ? [m.text] : [])])))];
  /** The JSON lines of a run's log. */
  s.runLog = (r, runId) => {
    const start = r.linesFor('run start', (l) => l.run === runId)[0];
    return readFileSync(start.log, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => { try { return JSON.parse(l); } catch { return {}; } });
  };
  return s;
}
