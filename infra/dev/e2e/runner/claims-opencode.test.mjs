// File claims of the opencode template end to end, with the real opencode (1.18.33, its linux x64
// build) against the running local stack and the scripted OpenAI chat stand-in (chatmodels.mjs: each
// call worded afresh, new ids every reply). alice/writer, a teammate, holds src/a-<run>.ts on Team Pulse
// (said with update_pulse); a new agent of alice's runs opencode from a pull-mode prickle-runner in its own clone
// of the repository, its project letting the edit tools and bash run without asking. Its model:
//   - edits src/a-<run>.ts with opencode's `edit`: the gate (run by the plugin's tool.execute.before)
//     stops it before it happens, naming alice/writer; the file is unchanged, the new agent holds nothing;
//   - then writes src/c-<run>.ts with `bash` (a command worded afresh, sometimes beside a `read`): the
//     plugin's tool.execute.after runs `prickle-runner hook --cli opencode --after`, which claims it while
//     the run goes on: read_room lists it in the new agent's pulse with the task and the branch before the
//     run ends (the model holds its last turn until the test has seen it).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadStack, skipUnlessStack, eventually, admin, uniq, PROJECT, E2E_DIR, npmNeed } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startChatModels } from './chatmodels.mjs';
import { RUN_WAIT_MS, runnerBinary, startRunner, keepRunnerLogs } from './harness.mjs';
import { workRepo, heldTurns, callTool } from './claimskit.mjs';

const OPENCODE = resolve(E2E_DIR, 'node_modules', 'opencode-linux-x64-baseline', 'bin', 'opencode');
const WOKE = /Prickle woke you (?:again )?for task (\S+) \((\w+)\)/;
const WRITER = 'alice/writer';
// A new agent of alice's for this file, so no wake-up left by earlier files runs beside its task.
let BUILDER;
let builderToken;
const HELLO = "export const greeting = 'hello';\n";
const RUN = uniq('oc');
const HELD = `src/a-${RUN}.ts`;
const SHELLED = `src/c-${RUN}.ts`;
const pick = (a) => a[Math.floor(Math.random() * a.length)];
const rnd = () => Math.random().toString(36).slice(2, 8);
// The user's own opencode config: the stand-in as their provider (read by the run, never written).
const USER_CONFIG = { $schema: 'https://opencode.ai/config.json', model: 'standin/mock-model', autoupdate: false,
  provider: { standin: { npm: '@ai-sdk/openai-compatible', name: 'Stand-in', options: { baseURL: '{env:STANDIN_MODEL_URL}/v1', apiKey: 'test' },
    models: { 'mock-model': { name: 'Mock model', cost: { input: 3, output: 15 } } } } } };

const { stack, skipReason } = await loadStack(npmNeed(OPENCODE, 'opencode'));

/**
 * opencode's model: accept the task, edit HELD with `edit`, then write SHELLED with `bash`; once that
 * call is answered it holds its last turn until `release(taskId)`, then says what happened.
 */
function claimsModel(clone) {
  const { held, release } = heldTurns();
  const turn = async (conv) => {
    if (!conv.tools.includes('bash')) return { text: 'Nothing to do in this request.' };
    const woke = conv.messages.filter((m) => m.role === 'user').map((m) => WOKE.exec(m.text)).find(Boolean);
    if (!woke) return { text: 'No Prickle task in this request.' };
    const taskId = woke[1];
    const calls = conv.messages.flatMap((m) => m.calls);
    const results = conv.messages.flatMap((m) => m.results);
    const resultOf = (c) => results.find((r) => r.id === c.id);
    const accept = conv.tools.find((t) => /prickle.accept_task$/.test(t));
    if (!accept) return { text: `No accept_task among ${conv.tools.join(', ')}` };
    if (!calls.some((c) => c.name === accept)) return { calls: [{ name: accept, args: { task_id: taskId, note: pick(['On it.', 'Taking this one.', 'Mine now.']) } }] };
    const edits = calls.filter((c) => c.name === 'edit');
    if (edits.length === 0) {
      return { calls: [{ name: 'edit', args: { filePath: join(clone, HELD), oldString: "'hello'", newString: `'hello from ${taskId} ${rnd()}'` } }] };
    }
    const shells = calls.filter((c) => c.name === 'bash');
    if (shells.length === 0) {
      const command = `printf '%s\\n' ${pick(['"from the shell"', '"shell edit"', '"written by printf"'])}-${rnd()} > ${SHELLED}`;
      const shell = { name: 'bash', args: { command, description: pick(['Write the module with the shell', 'Create the file', 'Write its contents']) } };
      return { calls: Math.random() < 0.5 ? [{ name: 'read', args: { filePath: '/etc/hostname' } }, shell] : [shell] };
    }
    await held(taskId); // the run goes on until the test has seen the claim
    return { text: `edit answered: ${(resultOf(edits[0])?.text || '').slice(0, 300)}; bash answered: ${(resultOf(shells[0])?.text || '').slice(0, 300)}` };
  };
  turn.release = release;
  return turn;
}

describe('prickle-runner, opencode template: its edit of a teammate\'s file is stopped; what its bash changed is claimed while the run goes on',
  { skip: skipUnlessStack(skipReason), timeout: 600_000 }, () => {
    const base = stack?.url.replace(/\/mcp$/, '');
    let dir;
    let runnerBin;
    let model;
    let script;
    let requester;
    let writer;
    const runners = [];
    const handedOff = [];
    const saved = {};
    const clone = () => join(dir, 'builder');
    const pulseOf = async (agent) => (await callTool(requester.client, 'read_room', { project: PROJECT, limit: 1 })).pulse.find((p) => p.agent_id === agent);

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-claims-opencode-'));
      workRepo(dir, [HELD], HELLO, [{ path: clone(), branch: 'feature/builder' }]);
      mkdirSync(join(dir, 'home', '.config', 'opencode'), { recursive: true });
      writeFileSync(join(dir, 'home', '.config', 'opencode', 'opencode.json'), JSON.stringify(USER_CONFIG, null, 2));
      runnerBin = runnerBinary(dir);
      script = claimsModel(clone());
      model = await startChatModels(script);
      requester = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-claims-opencode');
      writer = await connectSdk(stack.url, stack.tokens[WRITER], 'prickle-e2e-claims-opencode-writer');
      BUILDER = `alice/oc-claims-${Date.now().toString(36)}`;
      admin(['create-agent', '--id', BUILDER, '--projects', PROJECT]);
      builderToken = admin(['mint-token', '--agent', BUILDER]).token;
      assert.ok(builderToken, `a token for ${BUILDER}`);
      saved[WRITER] = await pulseOf(WRITER);
    });

    after(async () => {
      for (const id of handedOff) script?.release(id);
      for (const r of runners) await r.stop();
      if (stack) {
        for (const id of handedOff) {
          await requester.client.callTool({ name: 'cancel_task', arguments: { task_id: id, reason: 'The opencode claims suite is over.' } }).catch(() => {});
        }
        for (const agent of [WRITER]) {
          const p = saved[agent];
          if (!p) continue;
          // Later suites read these pulses as the seed left them.
          const c = await connectSdk(stack.url, stack.tokens[agent], 'prickle-e2e-claims-opencode-restore');
          const { project, availability, doing, task_id: taskId, branch, files, last_decision: decision } = p;
          await callTool(c.client, 'update_pulse', { project, availability, doing, files, ...(taskId ? { task_id: taskId } : {}),
            ...(branch ? { branch } : {}), ...(decision ? { last_decision: decision } : {}) });
          await c.client.close();
        }
      }
      await writer?.client.close().catch(() => {});
      await requester?.client.close().catch(() => {});
      await model?.close();
      const keep = keepRunnerLogs('runner-claims-opencode-logs', dir, runners);
      if (keep && model) writeFileSync(join(keep, 'model-requests.json'), JSON.stringify(model.requests.map((q) => ({ url: q.url, conversation: q.conversation })), null, 1));
      if (dir) {
        assert.deepEqual(JSON.parse(readFileSync(join(dir, 'home', '.config', 'opencode', 'opencode.json'), 'utf8')), USER_CONFIG, "the user's own config is untouched");
        rmSync(dir, { recursive: true, force: true });
      }
    });

    after(() => assert.deepEqual(model?.errors.map((e) => e.message) || [], [], 'the stand-in model scripted every turn'));

    test('alice/writer holds a file: opencode\'s edit of it is stopped naming her; its bash write is claimed before the run ends', async () => {
      // The teammate's claim, as any agent says its files.
      const p = saved[WRITER] || {};
      await callTool(writer.client, 'update_pulse', { project: PROJECT, availability: p.availability || 'available', doing: `Editing ${HELD}`, files: [HELD] });
      assert.ok((await pulseOf(WRITER)).files.includes(HELD), `${WRITER} holds ${HELD}`);

      const own = ['read_room', 'get_task', 'accept_task', 'save_checkpoint', 'return_result', 'review_result', 'update_pulse', 'request_step'].map((t) => `prickle_${t}`);
      const r = await startRunner(runnerBin, dir, 'claims-opencode', {
        prickle_url: base, agent: BUILDER, agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull', concurrency: 2, run_timeout: '4m', grace: '5s',
        log_dir: join(dir, 'logs'), state_dir: join(dir, 'state'),
        projects: { [PROJECT]: { dir: clone(), template: 'opencode', program: OPENCODE, args: [], allowed_tools: [...own, 'read', 'edit', 'write', 'apply_patch', 'bash'] } },
      }, { PATH: process.env.PATH, HOME: join(dir, 'home'), PRICKLE_AGENT_TOKEN: builderToken, STANDIN_MODEL_URL: model.url, OPENCODE_DISABLE_MODELS_FETCH: '1' });
      runners.push(r);
      const id = (await callTool(requester.client, 'hand_off_task', { project: PROJECT, assignee: BUILDER, packet: {
        task: `Change the greeting, then write the module ${uniq('oc')}`, deliverable_type: 'answer', acceptance_criteria: ['The files are changed.'] } })).task.id;
      handedOff.push(id);

      const claimed = await eventually(async () => {
        const b = await pulseOf(BUILDER);
        return (b?.files || []).includes(SHELLED) && b;
      }, { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
      assert.ok(claimed, `read_room lists ${SHELLED} in ${BUILDER}'s pulse: ${JSON.stringify(await pulseOf(BUILDER))}`);
      assert.equal(r.linesFor('run end', (l) => l.task === id).length, 0, 'claimed while the run goes on: after the bash call, not at the run\'s end');
      assert.equal(claimed.task_id, id, 'the claim names the task');
      assert.equal(claimed.branch, 'feature/builder', 'and the branch of the run\'s checkout');
      assert.ok(!claimed.files.includes(HELD), `${BUILDER} does not hold ${HELD}`);
      assert.ok(existsSync(join(clone(), SHELLED)), 'the shell wrote the file');

      const edits = new Set(model.requests.flatMap((q) => q.conversation.messages.flatMap((m) => m.calls)).filter((c) => c.name === 'edit').map((c) => c.id));
      const answered = [...new Set(model.requests.flatMap((q) => q.conversation.messages.flatMap((m) => m.results)).filter((x) => edits.has(x.id)).map((x) => x.text))];
      assert.ok(answered.some((t) => t.includes(`${WRITER} holds ${HELD}`) && /stopped this edit before it happened/.test(t)),
        `opencode's edit was stopped, alice/writer named: ${JSON.stringify(answered)}`);
      assert.equal(readFileSync(join(clone(), HELD), 'utf8'), HELLO, 'the held file is unchanged');
      assert.ok((await pulseOf(WRITER)).files.includes(HELD), 'alice/writer keeps it');

      script.release(id);
      const ended = await r.runEnded(id, 'task_routed');
      assert.equal(ended.exit_code, 0);
      assert.ok((await pulseOf(BUILDER)).files.includes(SHELLED), 'the claim outlives the run: the task goes on');
      assert.ok(model.requests.flatMap((q) => q.conversation.messages.flatMap((m) => m.calls)).every((c) => !/update_pulse/.test(c.name)), 'the model claimed nothing itself');
      await r.stop();
    });
  });
