// File claims of the qwen, gemini and copilot templates end to end against the running local stack, with
// the real CLIs (agents.mjs's CLIS) and the scripted stand-ins of their model APIs (chatmodels.mjs: each
// call worded afresh, new ids every reply, some calls made beside a read in one message). One row of
// TEMPLATES per template; each row is a new agent of alice's for this file, with its own pull-mode
// prickle-runner and its own clone of one git repository (on its own branch), its project letting its
// shell and edit tools run without asking. The rows run at once; each runs one task, whose model:
//   - writes its own file src/<template>-<run>.ts with the CLI's shell tool (`run_shell_command` on qwen
//     and gemini, `bash` on copilot; a command worded afresh, on qwen and gemini sometimes beside a
//     read). The CLI's post-tool hook (Qwen Code's PostToolUse, Gemini CLI's AfterTool, Copilot CLI's
//     postToolUse: `prickle-runner hook --cli <template> --after`) compares the work tree with the run's
//     picture and claims the file: read_room lists it in that agent's pulse, with its task and its
//     branch, while the run still goes on (the model holds its next turn until the test has seen it);
//   - then edits the file the row before it claimed (qwen: copilot's, with `edit` or `write_file`;
//     gemini: qwen's, with `replace` or `write_file`; copilot: gemini's, with `edit`): the gate stops it
//     before it happens, and the model is told who holds it, for which task. The editor's file is
//     unchanged, the editor does not hold it, the holder keeps it;
//   - ends its turn. Its own claim outlives the run (the task goes on), and the model never called
//     update_pulse.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStack, skipUnlessStack, eventually, sleep, admin, uniq, PROJECT, npmNeed } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startChatModels } from './chatmodels.mjs';
import { CLIS } from './agents.mjs';
import { RUN_WAIT_MS, runnerBinary, startRunner, keepRunnerLogs } from './harness.mjs';
import { workRepo, callTool } from './claimskit.mjs';

const WOKE = /Prickle woke you (?:again )?for task (\S+) \((\w+)\)/;
const HELLO = "export const greeting = 'hello';\n";
const RUN = uniq('s');
const pick = (a) => a[Math.floor(Math.random() * a.length)];
const rnd = () => Math.random().toString(36).slice(2, 8);
const own = (prefix, ...more) => ['read_room', 'get_task', 'accept_task', 'save_checkpoint', 'return_result', 'review_result', 'update_pulse', 'request_step']
  .map((t) => prefix + t).concat(more);

// One row per template: its shell, the edit calls its model may make of a file (each worded afresh),
// the read it sometimes makes beside the shell call (none: never in parallel), and its allow-list.
// Each row edits the file of the row before it (the first, the last's).
const TEMPLATES = [
  { name: 'qwen', shell: 'run_shell_command', read: (p) => ({ name: 'read_file', args: { file_path: p } }),
    edits: {
      edit: (path, tag) => ({ file_path: path, old_string: "'hello'", new_string: `'hello from ${tag}'` }),
      write_file: (path, tag) => ({ file_path: path, content: `export const greeting = 'hello from ${tag}';\n` }),
    },
    allowed: own('mcp__prickle__', 'tool_search', 'read_file', 'run_shell_command', 'edit', 'write_file') },
  { name: 'gemini', shell: 'run_shell_command', read: (p) => ({ name: 'read_file', args: { file_path: p } }),
    edits: {
      replace: (path, tag) => ({ file_path: path, instruction: pick(['Greet the builder.', 'Change the greeting.']), old_string: "'hello'", new_string: `'hello from ${tag}'` }),
      write_file: (path, tag) => ({ file_path: path, content: `export const greeting = 'hello from ${tag}';\n` }),
    },
    allowed: own('mcp_prickle_', 'read_file', 'run_shell_command', 'replace', 'write_file') },
  { name: 'copilot', shell: 'bash', read: null,
    edits: {
      edit: (path, tag) => ({ path, old_str: "'hello'", new_str: `'hello from ${tag}'` }),
      str_replace_editor: (path, tag) => ({ command: 'str_replace', path, old_str: "'hello'", new_str: `'hello from ${tag}'` }),
    },
    allowed: own('prickle-', 'view', 'glob', 'grep', 'report_intent', 'bash', 'edit', 'create', 'str_replace_editor') },
].map((row) => ({ ...row, cli: CLIS[row.name], file: `src/${row.name}-${RUN}.ts` }));
TEMPLATES.forEach((row, i) => { row.held = TEMPLATES[(i + TEMPLATES.length - 1) % TEMPLATES.length]; });

const { stack, skipReason } = await loadStack(...TEMPLATES.map(({ cli }) => npmNeed(cli.program)));

/** A promise and what settles it. */
const deferred = () => {
  let open;
  const p = new Promise((done) => { open = done; });
  return { p, open };
};

/**
 * The model of every row's run, told apart by its task (rowOf). It accepts the task (as the CLI names
 * Prickle's tool, or through qwen's tool_call bridge), writes the row's file with its shell, waits until
 * `release(taskId)`, edits the file of the row before it with one of its edit tools, and says what happened.
 */
function claimsModel(rowOf) {
  const gates = new Map();
  const gate = (taskId) => {
    if (!gates.has(taskId)) gates.set(taskId, deferred());
    return gates.get(taskId);
  };
  const turn = async (conv) => {
    if (!conv.tools.length) return { text: 'Nothing to do in this request.' };
    const woke = conv.messages.filter((m) => m.role === 'user').map((m) => WOKE.exec(m.text)).find(Boolean);
    if (!woke) return { text: 'No Prickle task in this request.' };
    const taskId = woke[1];
    const row = await eventually(() => rowOf.get(taskId), { timeoutMs: 10_000, intervalMs: 100 });
    if (!row) throw new Error(`no row runs task ${taskId}`);
    const calls = conv.messages.flatMap((m) => m.calls);
    const results = conv.messages.flatMap((m) => m.results);
    const resultOf = (c) => results.find((r) => r.id === c.id || (r.name && r.name === c.name));
    // Qwen Code's bridge refuses an MCP tool its discovery has not registered yet: like a model, it tries again.
    const accepts = calls.filter((c) => /accept_task$/.test(c.name) || /accept_task$/.test(c.args?.name || ''));
    const accepted = accepts.some((c) => !/not registered|could not be loaded/.test(resultOf(c)?.text || ''));
    if (!accepted && accepts.length < 6) {
      if (accepts.length) await sleep(2000);
      // A retry is worded anew too: never the same call byte for byte.
      const args = { task_id: taskId, note: pick(['On it.', 'Taking this one.', 'Mine now.']) + (accepts.length ? ` (try ${accepts.length + 1})` : '') };
      const tool = conv.tools.find((t) => /prickle.accept_task$/.test(t));
      if (tool) return { calls: [{ name: tool, args }] };
      if (conv.tools.includes('tool_call')) return { calls: [{ name: 'tool_call', args: { name: 'mcp__prickle__accept_task', arguments: args } }] };
      throw new Error(`no accept_task among ${conv.tools.join(', ')}`);
    }
    if (!conv.tools.includes(row.shell)) throw new Error(`${row.name}: no ${row.shell} among ${conv.tools.join(', ')}`);
    const shells = calls.filter((c) => c.name === row.shell);
    if (shells.length === 0) {
      const command = `printf '%s\\n' ${pick(['"from the shell"', '"shell edit"', '"written by printf"'])}-${rnd()} > ${row.file}`;
      const shell = { name: row.shell, args: { command, description: pick(['Write the file with the shell', 'Rewrite the module', 'Replace its contents']) } };
      return { calls: row.read && Math.random() < 0.5 ? [row.read('/etc/hostname'), shell] : [shell] };
    }
    const editTools = Object.keys(row.edits).filter((t) => conv.tools.includes(t));
    const edits = calls.filter((c) => Object.hasOwn(row.edits, c.name));
    if (edits.length === 0) {
      // The run goes on until the test has seen this row's claim and the one it is about to edit.
      await gate(taskId).p;
      if (!editTools.length) throw new Error(`${row.name}: none of ${Object.keys(row.edits).join(', ')} among ${conv.tools.join(', ')}`);
      const tool = pick(editTools);
      return { calls: [{ name: tool, args: row.edits[tool](join(row.clone, row.held.file), `${taskId} ${rnd()}`) }] };
    }
    return { text: `${row.shell} answered: ${(resultOf(shells[0])?.text || '').slice(0, 300)}; ${edits[0].name} answered: ${(resultOf(edits[0])?.text || '').slice(0, 400)}` };
  };
  turn.release = (taskId) => gate(taskId).open();
  return turn;
}

describe('prickle-runner, qwen, gemini and copilot templates: what a shell call changed is claimed while the run goes on, and an edit of a teammate\'s file is stopped',
  { skip: skipUnlessStack(skipReason), timeout: 600_000, concurrency: true }, () => {
    const base = stack?.url.replace(/\/mcp$/, '');
    let dir;
    let runnerBin;
    let model;
    let script;
    let requester;
    const runners = [];
    const rowOf = new Map();
    const pulseOf = async (agent) => (await callTool(requester.client, 'read_room', { project: PROJECT, limit: 1 })).pulse.find((p) => p.agent_id === agent);
    /** The model's requests in taskId's conversation. */
    const requestsOf = (taskId) => model.requests.filter((q) => q.conversation.messages.some((m) => m.role === 'user' && m.text.includes(`task ${taskId} (`)));

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-shellclaims-'));
      for (const row of TEMPLATES) {
        row.clone = join(dir, `clone-${row.name}`);
        row.branch = `feature/${row.name}-${RUN}`;
      }
      workRepo(dir, TEMPLATES.map((row) => row.file), HELLO, TEMPLATES.map((row) => ({ path: row.clone, branch: row.branch })));
      for (const row of TEMPLATES) {
        // A new agent of alice's per row, so no wake-up left by earlier files runs beside its task.
        row.agent = `alice/sh-${row.name}-${Date.now().toString(36)}${rnd().slice(0, 4)}`;
        admin(['create-agent', '--id', row.agent, '--projects', PROJECT]);
        row.token = admin(['mint-token', '--agent', row.agent]).token;
        assert.ok(row.token, `a token for ${row.agent}`);
        // The user's own settings of the CLI (what a real login leaves in its home): read, never written.
        if (row.cli.settings) {
          mkdirSync(join(dir, 'home', row.cli.settings[0]), { recursive: true });
          writeFileSync(join(dir, 'home', row.cli.settings[0], row.cli.settings[2] || 'settings.json'), JSON.stringify(row.cli.settings[1]));
        }
      }
      runnerBin = runnerBinary(dir);
      script = claimsModel(rowOf);
      model = await startChatModels(script);
      requester = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-shellclaims');
    });

    after(async () => {
      for (const id of rowOf.keys()) script?.release(id);
      for (const r of runners) await r.stop();
      if (stack) {
        for (const id of rowOf.keys()) {
          await requester.client.callTool({ name: 'cancel_task', arguments: { task_id: id, reason: 'The shell claims suite is over.' } }).catch(() => {});
        }
      }
      await requester?.client.close().catch(() => {});
      await model?.close();
      const keep = keepRunnerLogs('runner-shellclaims-logs', dir, runners);
      if (keep && model) writeFileSync(join(keep, 'model-requests.json'), JSON.stringify(model.requests.map((q) => ({ url: q.url, conversation: q.conversation })), null, 1));
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    after(() => assert.deepEqual(model?.errors.map((e) => e.message) || [], [], 'the stand-in model scripted every turn'));

    for (const row of TEMPLATES) {
      const { held } = row;
      test(`${row.name}: its ${row.shell} writes a file, claimed by its post-tool hook while the run goes on; its ${Object.keys(row.edits).join('/')} of ${held.name}'s file is stopped, the holder named`, async () => {
        const r = await startRunner(runnerBin, dir, `shellclaims-${row.name}`, {
          prickle_url: base, agent: row.agent, agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull', concurrency: 2, run_timeout: '4m', grace: '5s',
          log_dir: join(dir, `logs-${row.name}`), state_dir: join(dir, `state-${row.name}`),
          projects: { [PROJECT]: { dir: row.clone, template: row.name, program: row.cli.program, args: row.cli.args, allowed_tools: row.allowed } },
        }, { PATH: process.env.PATH, HOME: join(dir, 'home'), PRICKLE_AGENT_TOKEN: row.token, ...row.cli.env(model.url) });
        runners.push(r);
        const id = (await callTool(requester.client, 'hand_off_task', { project: PROJECT, assignee: row.agent, packet: {
          task: `Rewrite the module with the shell, then change the greeting ${uniq('shell')}`, deliverable_type: 'answer', acceptance_criteria: ['The files are changed.'] } })).task.id;
        rowOf.set(id, row);
        row.task = id;

        // What the shell changed is on the agent's pulse, with the task and the branch, before the run ends.
        const mine = await eventually(async () => {
          const p = await pulseOf(row.agent);
          return (p?.files || []).includes(row.file) && p;
        }, { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
        assert.ok(mine, `read_room lists ${row.file} in ${row.agent}'s pulse: ${JSON.stringify(await pulseOf(row.agent))}`);
        assert.equal(r.linesFor('run end', (l) => l.task === id).length, 0, 'claimed while the run goes on: by the post-tool hook, not at the run\'s end');
        assert.equal(mine.task_id, id, 'the claim names the task');
        assert.equal(mine.branch, row.branch, 'and the branch of the run\'s checkout');
        assert.notEqual(readFileSync(join(row.clone, row.file), 'utf8'), HELLO, 'the shell changed the file');
        row.claimedBy = id;

        // Its edit of the file the row before it holds: once that one is claimed too.
        const heldTask = await eventually(() => held.claimedBy, { timeoutMs: RUN_WAIT_MS, intervalMs: 250 });
        assert.ok(heldTask, `${held.agent} (${held.name}) claimed ${held.file}`);
        script.release(id);
        const ended = await r.runEnded(id, 'task_routed');
        assert.equal(ended.exit_code, 0);
        const convo = requestsOf(id).flatMap((q) => q.conversation.messages);
        const edits = convo.flatMap((m) => m.calls).filter((c) => Object.hasOwn(row.edits, c.name));
        assert.ok(edits.length > 0, `${row.name}'s model made its edit`);
        const answered = [...new Set(convo.flatMap((m) => m.results).filter((x) => edits.some((c) => x.id === c.id || (x.name && x.name === c.name))).map((x) => x.text))];
        assert.ok(answered.some((t) => t.includes(`${held.agent} holds ${held.file} for task ${heldTask}`) && /stopped this edit before it happened/.test(t)),
          `${row.name}'s ${edits[0].name} was stopped, ${held.agent} named: ${JSON.stringify(answered)}`);
        assert.equal(readFileSync(join(row.clone, held.file), 'utf8'), HELLO, `${row.agent}'s copy of ${held.file} is unchanged`);
        const theirs = await pulseOf(row.agent);
        assert.ok(!theirs.files.includes(held.file), `${row.agent} does not hold ${held.file}`);
        assert.ok(theirs.files.includes(row.file), 'its own claim outlives the run: the task goes on');
        assert.ok((await pulseOf(held.agent)).files.includes(held.file), `${held.agent} keeps ${held.file}`);
        assert.ok(convo.flatMap((m) => m.calls).every((c) => !/update_pulse/.test(c.name) && !/update_pulse/.test(c.args?.name || '')), 'the model claimed nothing itself');
        await r.stop();
      });
    }
  });
