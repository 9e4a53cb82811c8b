// File claims of edits made through a shell, end to end against the running local stack, with the real
// CLIs: two agents of website-v2, alice/writer on the qwen template and alice/builder on the gemini
// template, each with its own pull-mode prickle-runner and its own clone of one git repository, their
// models the scripted stand-ins of chatmodels.mjs (each call worded afresh). Their projects let the shell
// (qwen) and the edit tools (gemini) run without asking. Neither model ever calls update_pulse.
//
//   alice/writer's model changes src/a-<run>.ts with `run_shell_command` (`printf … > src/a-….ts`): Qwen
//   Code's PostToolUse hook (`prickle-runner hook --cli qwen --after`) compares the work tree with the
//   run's picture and claims the file; read_room lists it in alice/writer's pulse, with her task and her
//   branch, and the claim outlives her run (the task goes on). alice/builder's model then edits the same
//   file with Gemini CLI's `replace`: the gate stops it before it happens, naming alice/writer, and
//   alice/builder's file is unchanged;
//   the same with Copilot CLI as alice/builder: its `edit` of a file qwen's shell changed is stopped.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadStack, skipUnlessStack, eventually, sleep, admin, uniq, IN_CI, PROJECT, E2E_DIR } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startChatModels } from './chatmodels.mjs';
import { RUN_WAIT_MS, runnerBinary, startRunner, keepRunnerLogs } from './harness.mjs';

const bin = (name) => resolve(E2E_DIR, 'node_modules', '.bin', name);
const QWEN = bin('qwen');
const GEMINI = bin('gemini');
const WOKE = /Prickle woke you (?:again )?for task (\S+) \((\w+)\)/;
const WRITER = 'alice/writer';
const BUILDER = 'alice/builder';
const HELLO = "export const greeting = 'hello';\n";
const RUN = uniq('s');
const APP = `src/a-${RUN}.ts`;
const APP2 = `src/b-${RUN}.ts`;
const COPILOT = bin('copilot');
const pick = (a) => a[Math.floor(Math.random() * a.length)];
const own = (prefix, ...more) => ['read_room', 'get_task', 'accept_task', 'save_checkpoint', 'return_result', 'review_result', 'update_pulse', 'request_step']
  .map((t) => prefix + t).concat(more);

const { stack, skipReason: stackSkip } = await loadStack();
let skipReason = stackSkip;
for (const [path, what] of [[QWEN, 'Qwen Code (npm ci in infra/dev/e2e)'], [GEMINI, 'Gemini CLI (npm ci in infra/dev/e2e)'], [COPILOT, 'Copilot CLI (npm ci in infra/dev/e2e)']]) {
  if (!skipReason && !existsSync(path)) {
    skipReason = `no ${what} at ${path}`;
    if (IN_CI) throw new Error(`CI: ${skipReason}`);
  }
}

/**
 * The models of both runs, told apart by their wire (qwen: OpenAI chat; gemini: Gemini). Each first
 * accepts its task (as the CLI names Prickle's tool, or through qwen's tool_call bridge), then: qwen's
 * writes APP with its shell, a command worded afresh each time; gemini's replaces the greeting in APP
 * with `replace`. Once the call was answered, each says what happened and ends its turn (qwen's only
 * once `release()` is called).
 */
function shellModel(cloneOf) {
  const gates = new Map();
  const gate = (taskId) => {
    if (!gates.has(taskId)) {
      let open;
      const p = new Promise((done) => { open = done; });
      gates.set(taskId, { p, open });
    }
    return gates.get(taskId);
  };
  const qwenTasks = []; // the first qwen task writes APP, the next APP2
  const turn = async (conv, { api }) => {
    if (!conv.tools.length) return { text: 'Nothing to do in this request.' };
    const woke = conv.messages.filter((m) => m.role === 'user').map((m) => WOKE.exec(m.text)).find(Boolean);
    if (!woke) return { text: 'No Prickle task in this request.' };
    const taskId = woke[1];
    const calls = conv.messages.flatMap((m) => m.calls);
    const results = conv.messages.flatMap((m) => m.results);
    const resultOf = (c) => results.find((r) => r.id === c.id || (r.name && r.name === c.name));
    const accepts = calls.filter((c) => /accept_task$/.test(c.name) || /accept_task$/.test(c.args?.name || ''));
    const accepted = accepts.some((c) => !/not registered|could not be loaded/.test(resultOf(c)?.text || ''));
    if (!accepted && accepts.length < 6) {
      if (accepts.length) await sleep(2000);
      const args = { task_id: taskId, note: pick(['On it.', 'Taking this one.', 'Mine now.']) };
      const tool = conv.tools.find((t) => /prickle.accept_task$/.test(t));
      if (tool) return { calls: [{ name: tool, args }] };
      if (conv.tools.includes('tool_call')) return { calls: [{ name: 'tool_call', args: { name: 'mcp__prickle__accept_task', arguments: args } }] };
      return { text: `No accept_task among ${conv.tools.join(', ')}` };
    }
    const role = api === 'gemini' ? 'gemini' : conv.tools.includes('run_shell_command') ? 'qwen' : 'copilot';
    const copilotEdit = conv.tools.includes('edit') ? 'edit' : 'str_replace_editor';
    const name = { gemini: 'replace', qwen: 'run_shell_command', copilot: copilotEdit }[role];
    if (role === 'qwen' && !qwenTasks.includes(taskId)) qwenTasks.push(taskId);
    const file = role === 'qwen' ? [APP, APP2][qwenTasks.indexOf(taskId)] : role === 'copilot' ? APP2 : APP;
    const mine = calls.filter((c) => c.name === name);
    if (mine.length === 0) {
      if (role === 'copilot') {
        const args = { path: join(cloneOf(BUILDER), file), old_str: "'hello'", new_str: `'hello from ${taskId} ${Math.random().toString(36).slice(2, 8)}'` };
        return { calls: [{ name, args: name === 'edit' ? args : { command: 'str_replace', ...args } }] };
      }
      if (role === 'gemini') {
        return { calls: [{ name, args: { file_path: join(cloneOf(BUILDER), APP), instruction: pick(['Greet the builder.', 'Change the greeting.']),
          old_string: "'hello'", new_string: `'hello from ${taskId} ${Math.random().toString(36).slice(2, 8)}'` } }] };
      }
      const command = `printf '%s\\n' ${pick(['"from the shell"', '"shell edit"', '"written by printf"'])}-${Math.random().toString(36).slice(2, 8)} > ${file}`;
      const shell = { name, args: { command, description: pick(['Write the file with the shell', 'Rewrite the module', 'Replace its contents']) } };
      // Sometimes beside a read, in one message (parallel calls).
      return { calls: Math.random() < 0.5 ? [{ name: 'read_file', args: { file_path: '/etc/hostname' } }, shell] : [shell] };
    }
    const said = resultOf(mine.at(-1))?.text || '';
    // qwen's run goes on until the test has seen the claim: it was made after the call, not at the run's end.
    if (role === 'qwen') await gate(taskId).p;
    return { text: `${name} answered: ${said.slice(0, 400)}` };
  };
  turn.release = (taskId) => gate(taskId).open();
  return turn;
}

describe('prickle-runner: what a shell call changed is claimed, and a teammate\'s edit of it stopped (qwen, gemini, copilot)', { skip: skipUnlessStack(skipReason), timeout: 600_000 }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let dir;
  let runnerBin;
  let model;
  let script;
  let requester;
  const runners = [];
  const handedOff = [];
  const saved = {};
  const cloneOf = (agent) => join(dir, agent.replace('/', '-'));
  const call = async (client, name, args) => {
    const r = await client.callTool({ name, arguments: args });
    assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
    return r.structuredContent;
  };
  const handOff = async (assignee, what) => {
    const id = (await call(requester.client, 'hand_off_task', { project: PROJECT, assignee, packet: {
      task: `${what} ${uniq('shell')}`, deliverable_type: 'answer', acceptance_criteria: ['The file is changed.'] } })).task.id;
    handedOff.push(id);
    return id;
  };
  const pulseOf = async (agent) => (await call(requester.client, 'read_room', { project: PROJECT, limit: 1 })).pulse.find((p) => p.agent_id === agent);
  const git = (cwd, ...args) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd, stdio: 'pipe' });
  const agentRunner = async (agent, template, program, allowed, env, args = []) => {
    const label = agent.replace('/', '-');
    const r = await startRunner(runnerBin, dir, `shellclaims-${label}`, {
      prickle_url: base, agent, agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull', concurrency: 2, run_timeout: '4m', grace: '5s',
      log_dir: join(dir, `logs-${label}`), state_dir: join(dir, `state-${label}`),
      projects: { [PROJECT]: { dir: cloneOf(agent), template, program, args, allowed_tools: allowed } },
    }, { PATH: process.env.PATH, HOME: join(dir, 'home'), PRICKLE_AGENT_TOKEN: stack.tokens[agent], ...env });
    runners.push(r);
    return r;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-shellclaims-'));
    const origin = join(dir, 'origin');
    mkdirSync(join(origin, 'src'), { recursive: true });
    git(dir, 'init', '-q', '-b', 'main', origin);
    writeFileSync(join(origin, APP), HELLO);
    writeFileSync(join(origin, APP2), HELLO);
    git(origin, 'add', '.');
    git(origin, 'commit', '-q', '-m', 'hello');
    for (const agent of [WRITER, BUILDER]) {
      git(dir, 'clone', '-q', origin, cloneOf(agent));
      git(cloneOf(agent), 'checkout', '-q', '-b', `feature/${agent.split('/')[1]}`);
    }
    // The user's own settings of each CLI (what a real login leaves in its home): read, never written.
    for (const [d, s] of [['.qwen', { security: { auth: { selectedType: 'openai' } }, telemetry: { enabled: false }, privacy: { usageStatisticsEnabled: false } }],
      ['.gemini', { security: { auth: { selectedType: 'gemini-api-key' } }, telemetry: { enabled: false }, privacy: { usageStatisticsEnabled: false } }]]) {
      mkdirSync(join(dir, 'home', d), { recursive: true });
      writeFileSync(join(dir, 'home', d, 'settings.json'), JSON.stringify(s));
    }
    runnerBin = runnerBinary(dir);
    script = shellModel(cloneOf);
    model = await startChatModels(script);
    model.release = script.release;
    requester = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-shellclaims');
    for (const agent of [WRITER, BUILDER]) {
      saved[agent] = await pulseOf(agent);
      admin(['set-wake', '--agent', agent, '--pull']);
    }
  });

  after(async () => {
    for (const id of handedOff) script?.release(id);
    for (const r of runners) await r.stop();
    if (stack) {
      for (const id of handedOff) {
        await requester.client.callTool({ name: 'cancel_task', arguments: { task_id: id, reason: 'The shell claims suite is over.' } }).catch(() => {});
      }
      for (const agent of [WRITER, BUILDER]) {
        admin(['set-wake', '--agent', agent, '--url', `${base}/dev/wake/${agent}`]);
        const p = saved[agent];
        if (!p) continue;
        // Later suites read these pulses as the seed left them.
        const c = await connectSdk(stack.url, stack.tokens[agent], 'prickle-e2e-shellclaims-restore');
        const { project, availability, doing, task_id: taskId, branch, files, last_decision: decision } = p;
        await call(c.client, 'update_pulse', { project, availability, doing, files, ...(taskId ? { task_id: taskId } : {}),
          ...(branch ? { branch } : {}), ...(decision ? { last_decision: decision } : {}) });
        await c.client.close();
      }
    }
    await requester?.client.close().catch(() => {});
    await model?.close();
    const keep = keepRunnerLogs('runner-shellclaims-logs', dir, runners);
    if (keep && model) writeFileSync(join(keep, 'model-requests.json'), JSON.stringify(model.requests.map((q) => ({ url: q.url, conversation: q.conversation })), null, 1));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  after(() => assert.deepEqual(model?.errors.map((e) => e.message) || [], [], 'the stand-in model scripted every turn'));

  test('qwen\'s shell writes a file: it is claimed after the call; gemini\'s edit of it is stopped, alice/writer named', async () => {
    const w = await agentRunner(WRITER, 'qwen', QWEN, own('mcp__prickle__', 'tool_search', 'read_file', 'run_shell_command'),
      { OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'test', OPENAI_MODEL: 'mock-model' });
    const mine = await handOff(WRITER, 'Rewrite the module with the shell');
    const held = await eventually(async () => {
      const p = await pulseOf(WRITER);
      return (p?.files || []).includes(APP) && p;
    }, { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
    assert.ok(held, `read_room lists ${APP} in ${WRITER}'s pulse: ${JSON.stringify(await pulseOf(WRITER))}`);
    assert.equal(held.task_id, mine, 'the claim names the task');
    assert.equal(held.branch, 'feature/writer', 'and the branch of the run\'s checkout');
    assert.notEqual(readFileSync(join(cloneOf(WRITER), APP), 'utf8'), HELLO, 'the shell changed the file');
    assert.equal(w.linesFor('run end', (l) => l.task === mine).length, 0, 'claimed while the run goes on: by the post-tool hook');
    model.release(mine);
    const ended = await w.runEnded(mine, 'task_routed');
    assert.equal(ended.exit_code, 0);
    assert.ok((await pulseOf(WRITER)).files.includes(APP), 'the claim outlives the run: the task goes on');
    const shellCalls = model.requests.flatMap((q) => q.conversation.messages.flatMap((m) => m.calls)).filter((c) => c.name === 'run_shell_command');
    assert.ok(shellCalls.length >= 1 && shellCalls.every((c) => !/update_pulse/.test(JSON.stringify(c))), 'the model claimed nothing itself');

    const g = await agentRunner(BUILDER, 'gemini', GEMINI, own('mcp_prickle_', 'read_file', 'replace', 'write_file'),
      { GOOGLE_GEMINI_BASE_URL: model.url, GEMINI_API_KEY: 'test' }, ['-m', 'gemini-2.5-flash']);
    const theirs = await handOff(BUILDER, 'Change the greeting');
    const done = await g.runEnded(theirs, 'task_routed');
    assert.equal(done.exit_code, 0);
    const answered = model.requests.filter((q) => q.api === 'gemini').flatMap((q) => q.conversation.messages.flatMap((m) => m.results))
      .filter((r) => r.name === 'replace').map((r) => r.text);
    assert.ok(answered.length > 0, 'gemini\'s edit was answered');
    assert.ok(answered.some((t) => t.includes(`${WRITER} holds ${APP} for task ${mine}`) && /stopped this edit before it happened/.test(t)),
      `the edit was stopped, alice/writer named: ${JSON.stringify(answered)}`);
    assert.equal(readFileSync(join(cloneOf(BUILDER), APP), 'utf8'), HELLO, 'alice/builder\'s file is unchanged');
    assert.ok(!((await pulseOf(BUILDER))?.files || []).includes(APP), 'alice/builder does not hold it');
    assert.ok((await pulseOf(WRITER)).files.includes(APP), 'alice/writer keeps it');
    await w.stop();
    await g.stop();
  });

  test('copilot: its edit of a file qwen\'s shell changed is stopped by its gate, alice/writer named', async () => {
    const w = await agentRunner(WRITER, 'qwen', QWEN, own('mcp__prickle__', 'tool_search', 'read_file', 'run_shell_command'),
      { OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'test', OPENAI_MODEL: 'mock-model' });
    const mine = await handOff(WRITER, 'Rewrite the other module with the shell');
    assert.ok(await eventually(async () => ((await pulseOf(WRITER))?.files || []).includes(APP2), { timeoutMs: RUN_WAIT_MS, intervalMs: 500 }),
      `read_room lists ${APP2} in ${WRITER}'s pulse`);
    model.release(mine);
    await w.runEnded(mine, 'task_routed');

    const c = await agentRunner(BUILDER, 'copilot', COPILOT, own('prickle-', 'view', 'glob', 'grep', 'report_intent', 'edit', 'create', 'str_replace_editor'), {
      COPILOT_OFFLINE: 'true', COPILOT_PROVIDER_BASE_URL: `${model.url}/v1`, COPILOT_PROVIDER_API_KEY: 'test', COPILOT_MODEL: 'mock-model',
      XDG_CACHE_HOME: join(tmpdir(), 'prickle-e2e-copilot-cache') });
    const theirs = await handOff(BUILDER, 'Change the other greeting');
    const done = await c.runEnded(theirs, 'task_routed');
    assert.equal(done.exit_code, 0);
    const copilotCalls = new Set(model.requests.filter((q) => q.conversation.tools.includes('bash'))
      .flatMap((q) => q.conversation.messages.flatMap((m) => m.calls)).filter((k) => k.name === 'edit' || k.name === 'str_replace_editor').map((k) => k.id));
    const answered = model.requests.filter((q) => q.conversation.tools.includes('bash')).flatMap((q) => q.conversation.messages.flatMap((m) => m.results))
      .filter((r) => copilotCalls.has(r.id)).map((r) => r.text);
    assert.ok(answered.some((t) => t.includes(`${WRITER} holds ${APP2} for task ${mine}`)), `copilot's edit was stopped, alice/writer named: ${JSON.stringify(answered)}`);
    assert.equal(readFileSync(join(cloneOf(BUILDER), APP2), 'utf8'), HELLO, 'alice/builder\'s file is unchanged');
    assert.ok(!((await pulseOf(BUILDER))?.files || []).includes(APP2), 'alice/builder does not hold it');
  });
});
