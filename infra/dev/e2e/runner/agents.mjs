// prickle-runner's qwen, gemini, copilot and opencode templates end to end (agents-<template>.test.mjs each run one) (pull mode) against the running local
// stack, with the real CLIs (pinned in package.json: @qwen-code/qwen-code, @google/gemini-cli,
// @github/copilot, opencode's linux-x64-baseline build) and scripted stand-ins of their model APIs on loopback (chatmodels.mjs: OpenAI chat
// SSE for qwen, copilot and opencode, Gemini SSE for gemini; no account, no network). The runner starts
// `prickle-runner agent-run`, which runs the CLI with Prickle's MCP server (the run token) and the gate
// `prickle-runner hook --cli <name>` before every call; the owner decides in headless Chromium.
// Per template:
//   approve: the model appends a line with the CLI's shell tool (worded afresh; on qwen and gemini
//     sometimes beside a read in one message) → the gate asks the owner and holds the call → the owner
//     approves → the call runs exactly once, the owner was asked once → the owner's decision wakes the
//     task again (step_decided) and that run continues the same session (its request holds the call);
//   refuse: the owner refuses with a message → the command never runs, the message reaches the model;
//   crashed gate: the gate's process fails (exits 1, is killed, panics) → the CLI denies the call, nothing
//     is asked or run (opencode: its plugin throws).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, admin, uniq, eventually, sleep, PROJECT, E2E_DIR, CHROMIUM_NEED, npmNeed } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startChatModels } from './chatmodels.mjs';
import { CHROMIUM, CHROMIUM_ARGS, RUN_WAIT_MS, runnerBinary, startRunner, linesOf, keepRunnerLogs, approvalLink, decide, stepEmails } from './harness.mjs';

const bin = (name) => resolve(E2E_DIR, 'node_modules', '.bin', name);
const WOKE = /Prickle woke you (?:again )?for task (\S+) \((\w+)\)/;
const NOT_RUN = /blocked|Denied|not made|refused|still waiting|gate failed|hook exited/i;
const DESCRIPTIONS = ['Append a line to the side file', 'Record that the step ran', 'Write the marker line', 'Add one line to the side-effect file'];
const AGENTS = ['alice/writer', 'alice/builder'];
const pick = (a) => a[Math.floor(Math.random() * a.length)];

// Each template: its CLI, its shell and read tools, its model wire, the user's own settings (what a
// real login leaves in the CLI's home) and the environment that points it at the stand-in.
export const CLIS = {
  qwen: { program: bin('qwen'), shell: 'run_shell_command', marker: 'read_file', read: { name: 'read_file', args: (p) => ({ file_path: p }) },
    settings: ['.qwen', { security: { auth: { selectedType: 'openai' } }, telemetry: { enabled: false }, privacy: { usageStatisticsEnabled: false } }],
    env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'test', OPENAI_MODEL: 'mock-model' }), args: [] },
  gemini: { program: bin('gemini'), shell: 'run_shell_command', marker: 'read_file', read: { name: 'read_file', args: (p) => ({ file_path: p }) },
    settings: ['.gemini', { security: { auth: { selectedType: 'gemini-api-key' } }, telemetry: { enabled: false }, privacy: { usageStatisticsEnabled: false } }],
    env: (url) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'test' }), args: ['-m', 'gemini-2.5-flash'] },
  copilot: { program: bin('copilot'), shell: 'bash', marker: 'view', read: null, settings: null,
    env: (url) => ({ COPILOT_OFFLINE: 'true', COPILOT_PROVIDER_BASE_URL: `${url}/v1`, COPILOT_PROVIDER_API_KEY: 'test', COPILOT_MODEL: 'mock-model',
      // Copilot unpacks itself (235 MB) into its cache on the first run: one cache for every run.
      XDG_CACHE_HOME: join(tmpdir(), 'prickle-e2e-copilot-cache') }), args: [] },
  // The user's own opencode config names the stand-in as their provider (its address from the environment,
  // as a user's config takes an API key); no models.dev fetch offline.
  opencode: { program: resolve(E2E_DIR, 'node_modules', 'opencode-linux-x64-baseline', 'bin', 'opencode'), shell: 'bash', marker: 'read',
    read: { name: 'read', args: (p) => ({ filePath: p }) },
    settings: [join('.config', 'opencode'), { $schema: 'https://opencode.ai/config.json', model: 'standin/mock-model', autoupdate: false,
      provider: { standin: { npm: '@ai-sdk/openai-compatible', name: 'Stand-in', options: { baseURL: '{env:STANDIN_MODEL_URL}/v1', apiKey: 'test' },
        models: { 'mock-model': { name: 'Mock model', cost: { input: 3, output: 15 } } } } } }, 'opencode.json'],
    env: (url) => ({ STANDIN_MODEL_URL: url, OPENCODE_DISABLE_MODELS_FETCH: '1' }), args: [] },
};

const { stack, skipReason } = await loadStack(...Object.values(CLIS).map((c) => npmNeed(c.program)), CHROMIUM_NEED);

/**
 * The model of a woken run, from the conversation it is sent: it appends a line to the task's side file
 * with the CLI's shell tool, worded afresh (its description and key order), sometimes beside a read;
 * once the call ran it says it is done; when it was not made it says so and ends its turn, and makes it
 * again only when a resumed run's prompt comes after a "still waiting".
 */
function agentModel(sideOf) {
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
    const call = () => {
      const command = `echo ran >> ${sideOf(taskId)}`;
      const shellCall = { name: shell, args: Math.random() < 0.5 ? { command, description: pick(DESCRIPTIONS) } : { description: pick(DESCRIPTIONS), command } };
      const read = cli?.read && calls.length === 0 && Math.random() < 0.5 ? [{ name: cli.read.name, args: cli.read.args('/etc/hostname') }] : [];
      return { calls: [...read, shellCall] };
    };
    // First the task is accepted (request_step needs it): by Prickle's tool as the CLI names it, or
    // through qwen's tool_call bridge when the tool is deferred.
    // Qwen Code's bridge refuses an MCP tool its discovery has not registered yet (a loaded machine):
    // like a model would, it tries again.
    const allResults = conv.messages.flatMap((m) => m.results);
    const accepts = conv.messages.flatMap((m) => m.calls.filter((c) => /accept_task$/.test(c.name) || /accept_task$/.test(c.args?.name || '')));
    const acceptResult = (c) => allResults.find((r) => r.id === c.id || r.name === c.name);
    const accepted = accepts.some((c) => !/not registered|could not be loaded/.test(acceptResult(c)?.text || ''));
    if (!accepted && accepts.length < 6) {
      if (accepts.length) await sleep(2000);
      const args = { task_id: taskId, note: pick(['On it.', 'Taking this one.']) };
      const own = conv.tools.find((t) => /prickle.accept_task$/.test(t));
      if (own) return { calls: [{ name: own, args }] };
      if (conv.tools.includes('tool_call')) return { calls: [{ name: 'tool_call', args: { name: 'mcp__prickle__accept_task', arguments: args } }] };
      return { text: `No accept_task among ${conv.tools.join(', ')}` };
    }
    if (calls.length === 0) return call();
    const last = results.at(-1)?.text || '';
    if (!results.length) return { text: 'The call got no answer; ending my turn.' };
    if (!NOT_RUN.test(last)) return { text: 'Done: the line is appended.' };
    const lastUser = conv.messages.map((m, i) => ({ m, i })).filter(({ m }) => m.role === 'user').at(-1);
    const lastResult = conv.messages.findLastIndex((m) => m.results.length);
    if (/still waiting/i.test(last) && lastUser && lastUser.i > lastResult && /woke you again/.test(lastUser.m.text)) return call();
    return { text: `The call was not made: ${last}` };
  };
}

/**
 * The suite of one template (its own test file: each file has the runner suite's per-file timeout);
 * part 'wait' is the call still pending past the gate's hold (agents-qwen-wait.test.mjs: qwen's hold is
 * the shortest, capped by Qwen Code; agents-opencode-wait.test.mjs: opencode awaits its plugin unbounded,
 * so the hold is the runner's own).
 */
export function agentSuite(name, part = 'main') {
  const cli = CLIS[name];
  // Two lanes at once (CI time): approve as alice/writer; refuse, then a crashed gate, as alice/builder.
  describe(`prickle-runner, ${name} template${part === 'wait' ? ' (a call still pending past the hold)' : ''}: the gate asks the owner before the shell call`, { skip: skipUnlessStack(skipReason), timeout: 600_000, concurrency: true }, () => {
    const base = stack?.url.replace(/\/mcp$/, '');
    let dir;
    let runnerBin;
    let bob;
    let model;
    let browser;
    const runners = [];
    const sideOf = (taskId) => join(dir, 'work', `side-${taskId}.txt`);
    const callTool = async (client, tool, args) => {
      const r = await client.callTool({ name: tool, arguments: args });
      assert.notEqual(r.isError, true, `${tool}: ${JSON.stringify(r.content)}`);
      return r.structuredContent;
    };
    const handOff = async (what, assignee) => (await callTool(bob.client, 'hand_off_task', { project: PROJECT, assignee, packet: {
      task: `${what} ${uniq(name)}`, deliverable_type: 'answer', acceptance_criteria: ['The side-effect file has its line.'] } })).task.id;
    /** A pull-mode runner of agent (each test its own agent: the tests run at once). */
    const agentRunner = async (label, agent, extraEnv = {}) => {
      const r = await startRunner(runnerBin, dir, `${name}-${label}`, {
        prickle_url: base, agent, agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull',
        concurrency: 2, run_timeout: '4m', grace: '5s', log_dir: join(dir, `logs-${label}`), state_dir: join(dir, 'state'),
        projects: { [PROJECT]: { dir: join(dir, 'work'), template: name, program: cli.program, args: cli.args } },
      }, { PATH: process.env.PATH, HOME: join(dir, 'home'), PRICKLE_AGENT_TOKEN: stack.tokens[agent], ...cli.env(model.url), ...extraEnv });
      runners.push(r);
      return r;
    };
    const pendingShell = async (taskId) => {
      const s = await eventually(() => admin(['steps', '--task', taskId]).find((x) => x.tool_name === cli.shell && x.status === 'pending'), { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
      assert.ok(s, `a pending ${cli.shell} step on ${taskId}`);
      return s;
    };
    /** The model's requests in taskId's conversation. */
    const requestsOf = (taskId) => model.requests.filter((q) => q.conversation.messages.some((m) => m.role === 'user' && m.text.includes(`task ${taskId} (`)));
    const shellResultsOf = (taskId) => [...new Set(requestsOf(taskId).flatMap((q) => q.conversation.messages.flatMap((m) => m.results)).map((r) => r.text))];
    const runLog = (r, runId) => {
      const start = r.linesFor('run start', (l) => l.run === runId)[0];
      return readFileSync(start.log, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => { try { return JSON.parse(l); } catch { return {}; } });
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), `prickle-e2e-${name}-`));
      mkdirSync(join(dir, 'work'));
      mkdirSync(join(dir, 'home'));
      if (cli.settings) {
        // The user's own configuration: read by the run, never written.
        mkdirSync(join(dir, 'home', cli.settings[0]), { recursive: true });
        writeFileSync(join(dir, 'home', cli.settings[0], cli.settings[2] || 'settings.json'), JSON.stringify(cli.settings[1], null, 2));
      }
      runnerBin = runnerBinary(dir);
      model = await startChatModels(agentModel(sideOf));
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
      bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], `prickle-e2e-${name}`);
      for (const agent of AGENTS) admin(['set-wake', '--agent', agent, '--pull']);
    });

    after(async () => {
      for (const r of runners) await r.stop();
      if (stack) for (const agent of AGENTS) admin(['set-wake', '--agent', agent, '--url', `${base}/dev/wake/${agent}`]);
      await browser?.close();
      await bob?.client.close().catch(() => {});
      await model?.close();
      const keep = keepRunnerLogs(`runner-${name}-logs`, dir, runners);
      if (keep && model) writeFileSync(join(keep, 'model-requests.json'), JSON.stringify(model.requests.map((q) => ({ url: q.url, conversation: q.conversation })), null, 1));
      if (cli.settings && dir) {
        assert.deepEqual(JSON.parse(readFileSync(join(dir, 'home', cli.settings[0], cli.settings[2] || 'settings.json'), 'utf8')), cli.settings[1], "the user's own settings are untouched");
        // opencode installs its plugin package into every config dir it reads: not into the user's.
        if (name === 'opencode') assert.deepEqual(readdirSync(join(dir, 'home', cli.settings[0])), ['opencode.json'], "nothing written into the user's opencode config dir");
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    after(() => assert.deepEqual(model?.errors.map((e) => e.message) || [], [], 'the stand-in model scripted every turn'));

    if (part === 'wait') {
      test('still pending past the hold: denied "still waiting", nothing runs; the owner approves later; the resumed run makes the same call, allowed once', async () => {
        // Still pending when the hold ends: the call is denied "still waiting", nothing runs, the run ends;
        // the owner approves later; the step_decided run is told the call, makes it again (worded afresh),
        // and it is the same step, allowed once.
        const w = await agentRunner('wait', 'alice/writer');
        const waited = await handOff(`${name} wait`, 'alice/writer');
        const asked = await pendingShell(waited);
        const first = await w.runEnded(waited, 'task_routed');
        assert.equal(first.exit_code, 0);
        assert.equal(linesOf(sideOf(waited)), 0, 'nothing ran while the owner had not decided');
        assert.ok(shellResultsOf(waited).some((t) => /still waiting/.test(t)), `the model was told to wait: ${JSON.stringify(shellResultsOf(waited))}`);
        await decide(browser, await approvalLink(base, waited, asked.step_id), '#approve');
        const resumedRun = await w.runEnded(waited, 'step_decided');
        assert.equal(resumedRun.exit_code, 0);
        assert.equal(linesOf(sideOf(waited)), 1, 'the approved call ran once, in the resumed run');
        assert.deepEqual(admin(['steps', '--task', waited]).map((x) => [x.step_id, x.status]), [[asked.step_id, 'consumed']], 'the same step, used once');
        assert.equal((await stepEmails(base, waited)).length, 1, 'the owner was asked once');
        await w.stop();
      });
      return;
    }

    test('approve: the gate holds the call while the owner decides; it runs exactly once; the next run continues the session', async () => {
      const r = await agentRunner('approve', 'alice/writer');
      const taskId = await handOff(`${name} approve`, 'alice/writer');
      const step = await pendingShell(taskId);
      assert.equal(linesOf(sideOf(taskId)), 0, 'the call has not run');
      assert.match(step.input.command, new RegExp(`echo ran >> ${sideOf(taskId)}$`));
      await decide(browser, await approvalLink(base, taskId, step.step_id), '#approve');
      const end = await r.runEnded(taskId, 'task_routed');
      assert.equal(end.exit_code, 0);
      assert.equal(linesOf(sideOf(taskId)), 1, 'the approved call ran exactly once');
      assert.equal((await stepEmails(base, taskId)).length, 1, 'the owner was asked once');
      assert.equal(admin(['steps', '--task', taskId]).length, 1, 'one step');
      // The owner's decision woke the task again: that run resumes the same session.
      const again = await r.runEnded(taskId, 'step_decided');
      assert.equal(again.exit_code, 0);
      const resumed = requestsOf(taskId).filter((q) => q.conversation.messages.some((m) => m.role === 'user' && /woke you again/.test(m.text)));
      assert.ok(resumed.length > 0, 'the resumed run asked the model');
      assert.ok(resumed[0].conversation.messages.some((m) => m.calls.some((c) => c.name === cli.shell)), 'its conversation holds the first run\'s call: the same session');
      assert.equal(linesOf(sideOf(taskId)), 1, 'still once');
      for (const run of [end.run, again.run]) {
        const u = runLog(r, run).find((l) => l.msg === 'agent-run usage')?.usage;
        assert.ok(u?.input_tokens > 0 && u?.output_tokens > 0, `run ${run} reports its tokens: ${JSON.stringify(u)}`);
      }
      await r.stop();
    });

    test('refuse: the command never runs and the owner\'s message reaches the model; then a crashed gate denies', async () => {
      const r = await agentRunner('refuse', 'alice/builder');
      const taskId = await handOff(`${name} refuse`, 'alice/builder');
      const step = await pendingShell(taskId);
      await decide(browser, await approvalLink(base, taskId, step.step_id), '#refuse', 'Not on a Friday: leave the side file alone.');
      const end = await r.runEnded(taskId, 'task_routed');
      assert.equal(end.exit_code, 0);
      assert.equal(linesOf(sideOf(taskId)), 0, 'the refused call never ran');
      assert.ok(shellResultsOf(taskId).some((t) => t.includes('Not on a Friday: leave the side file alone.')), `the model heard the owner: ${JSON.stringify(shellResultsOf(taskId))}`);
      await r.stop();

      // A crashed gate: one that exits 1 (qwen, opencode), is killed (gemini) or panics (copilot) denies the call;
      // nothing is asked or run.
      const fault = { qwen: 'exit1', gemini: 'kill', copilot: 'panic', opencode: 'exit1' }[name];
      const c = await agentRunner('crash', 'alice/builder', { TEST_PRICKLE_GATE_FAULT: fault });
      const crashed = await handOff(`${name} crashed gate`, 'alice/builder');
      const ended = await c.runEnded(crashed, 'task_routed');
      assert.equal(ended.exit_code, 0);
      assert.equal(linesOf(sideOf(crashed)), 0, 'the call was not made');
      assert.deepEqual(admin(['steps', '--task', crashed]), [], 'nothing was asked');
      assert.ok(shellResultsOf(crashed).some((t) => /gate failed|hook exited with code 2/.test(t)), `the model was told: ${JSON.stringify(shellResultsOf(crashed))}`);
      await c.stop();
    });
  });
}
