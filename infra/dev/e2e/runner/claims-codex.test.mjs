// File claims of the codex template end to end, with the real Codex CLI (pinned in package.json)
// hosted by `prickle-runner codex-run` (codex app-server), against the scripted Responses stand-in
// (responses.mjs: each call worded afresh, keys in a new order, new ids every reply, some replies
// with parallel calls). alice/writer, a teammate, holds src/a-<run>.ts on Team Pulse (said with
// update_pulse); a new agent of alice's runs Codex from a pull-mode prickle-runner in its own clone
// of the repository. The codex template has no allow-list: Codex asks before every patch and every
// command that is not read-only, and each such ask goes to the owner (here alice decides with
// prickle-admin decide-step). Its model, in one turn:
//   - patches src/a-<run>.ts with Codex's apply_patch: codex-run declines the change before the owner
//     is asked (file guard deny, the project's default): no step, the file unchanged, the new agent
//     holds nothing; the turn after tells the model who holds it (naming alice/writer);
//   - adds src/b-<run>.ts with apply_patch: asked of the owner, approved, claimed as it is allowed:
//     read_room lists it in the new agent's pulse with the task and the branch;
//   - writes src/c-<run>.ts with exec_command (a shell command, approved): codex-run compares the work
//     tree (`git status`) once Codex says the command completed, and claims it while the run goes on
//     (the model holds its next reply until the test has seen the claim).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStack, skipUnlessStack, eventually, admin, uniq, PROJECT, npmNeed } from '../lib/env.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startResponses, say, call, inputOf, textOf, callsOf } from './responses.mjs';
import { userMessages } from './codexmodel.mjs';
import { CODEX, RUN_WAIT_MS, runnerBinary, startRunner, keepRunnerLogs } from './harness.mjs';
import { workRepo, heldTurns, callTool } from './claimskit.mjs';

const NS = 'mcp__prickle';
const WOKE = /Prickle woke you (?:again )?for task (\S+) \((\w+)\)/;
const REFUSED = 'Prickle: these calls were not made';
const WRITER = 'alice/writer';
// A new agent of alice's for this file, so no wake-up left by earlier files runs beside its task.
let BUILDER;
let builderToken;
const HELLO = "export const greeting = 'hello';\n";
const RUN = uniq('cx');
const HELD = `src/a-${RUN}.ts`;
const FREE = `src/b-${RUN}.ts`;
const SHELLED = `src/c-${RUN}.ts`;
const pick = (a) => a[Math.floor(Math.random() * a.length)];
const rnd = () => Math.random().toString(36).slice(2, 8);

const { stack, skipReason } = await loadStack(npmNeed(CODEX, 'Codex'));

/** A patch as Codex's apply_patch reads it, through exec_command (Codex intercepts it), worded afresh. */
function patchCall(clone, body) {
  const patch = `*** Begin Patch\n${body}\n*** End Patch`;
  const tag = pick(['EOF', 'PATCH', 'END']);
  return call('exec_command', { cmd: `apply_patch <<'${tag}'\n${patch}\n${tag}\n`, workdir: clone, yield_time_ms: pick([2000, 5000, 10000]),
    ...pick([{}, { sandbox_permissions: 'require_escalated', justification: pick(['Change the file the task names.', 'Apply the edit the task asks for.', 'Write the module.']) }]) });
}

/**
 * Codex's model: accept the task (sometimes beside get_task), patch HELD (sometimes beside read_room),
 * add FREE with a patch, write SHELLED with a shell command; once that command is answered it holds
 * its reply until `release(taskId)`. Told a call was not made, it checkpoints what it was told and
 * ends its turn; any later run (step_decided) finds nothing to do.
 */
function claimsModel(clone) {
  const { held, release } = heldTurns();
  const turn = async (req) => {
    const users = userMessages(req);
    const woke = users.map(({ item }) => WOKE.exec(textOf(item))).find(Boolean);
    if (!woke) return [say(pick(['No Prickle task in this conversation.', 'Nothing to do here.']))];
    const taskId = woke[1];
    const last = users.at(-1);
    const prompt = textOf(last.item);
    const turnCalls = callsOf({ input: inputOf(req).slice(last.i) });
    const did = (pred) => turnCalls.find(pred);
    const getTask = () => call('get_task', { task_id: taskId }, NS);
    if (prompt.startsWith(REFUSED)) {
      if (!did((c) => c.name === 'save_checkpoint')) {
        const answer = prompt.split('answer: ')[1]?.split('\n')[0] || 'not made';
        return [call('save_checkpoint', { task_id: taskId, progress: `${pick(['Not changed', 'Left alone', 'Skipped'])}: ${answer.slice(0, 300)}`,
          decisions: [pick(['Leave the held file to its holder', 'Do not touch the teammate\'s file'])], files_touched: [FREE, SHELLED],
          next_steps: [pick(['Coordinate with the holder', 'Wait until the file is free'])], open_questions: [] }, NS)];
      }
      return [say(pick(['A teammate holds that file; I leave it and stop here.', 'The held file stays as it is; the rest is done.']))];
    }
    const [, , reason] = WOKE.exec(prompt) || [];
    if (reason !== 'task_routed') return [say(`Nothing left to do for ${reason || 'this prompt'} (${rnd()}).`)];
    if (!did((c) => c.name === 'accept_task')) {
      const accept = call('accept_task', { task_id: taskId, note: pick(['On it.', 'Taking this one.', `Mine now (${rnd()}).`]) }, NS);
      return Math.random() < 0.5 ? [getTask(), accept] : [accept];
    }
    const patches = (file) => turnCalls.filter((c) => c.name === 'exec_command' && (c.args.cmd || '').includes('*** Begin Patch') && c.args.cmd.includes(`${file}\n`));
    if (patches(HELD).length === 0) {
      const held = patchCall(clone, `*** Update File: ${pick([HELD, join(clone, HELD)])}\n@@\n-export const greeting = 'hello';\n+export const greeting = 'hello from ${taskId} ${rnd()}';`);
      const room = call('read_room', { project: PROJECT, limit: pick([3, 5, 10, 20]) }, NS);
      return Math.random() < 0.5 ? [room, held] : [held];
    }
    if (patches(FREE).length === 0) {
      return [patchCall(clone, `*** Add File: ${pick([FREE, join(clone, FREE)])}\n+export const farewell = '${pick(['bye', 'see you', 'so long'])} ${rnd()}';`)];
    }
    const shells = turnCalls.filter((c) => c.name === 'exec_command' && (c.args.cmd || '').includes(SHELLED));
    if (shells.length === 0) {
      const line = `${pick(['from the shell', 'shell edit', 'written by printf'])} ${rnd()}`;
      const cmd = pick([`printf '%s\\n' '${line}' > ${SHELLED}`, `echo '${line}' > ${SHELLED}`, `printf '${line}\\n' >${SHELLED}`]);
      return [call('exec_command', { cmd, yield_time_ms: pick([2000, 5000, 10000]), ...pick([{}, { workdir: clone }]),
        ...pick([{}, { sandbox_permissions: 'require_escalated', justification: pick(['Write the module with the shell.', 'Create the file the task asks for.']) }]) })];
    }
    if (!shells.at(-1).answered) return [say('Waiting for the command.')];
    await held(taskId); // the run goes on until the test has seen the claim
    const said = (c) => (c?.output || '').replace(/\s+/g, ' ').slice(0, 200);
    return [say(`held patch answered: ${said(patches(HELD)[0])}; free patch answered: ${said(patches(FREE)[0])}; shell answered: ${said(shells.at(-1))}`)];
  };
  turn.release = release;
  return turn;
}

describe('prickle-runner, codex template: its patch of a teammate\'s file is stopped unasked; its allowed patch and its shell write are claimed while the run goes on',
  { skip: skipUnlessStack(skipReason), timeout: 600_000 }, () => {
    const base = stack?.url.replace(/\/mcp$/, '');
    let dir;
    let runnerBin;
    let model;
    let script;
    let requester;
    let writer;
    let codexHome;
    const runners = [];
    const handedOff = [];
    const saved = {};
    const clone = () => join(dir, 'builder');
    const pulseOf = async (agent) => (await callTool(requester.client, 'read_room', { project: PROJECT, limit: 1 })).pulse.find((p) => p.agent_id === agent);
    const pending = async (taskId, tool, has) => {
      const s = await eventually(() => admin(['steps', '--task', taskId]).find((x) => x.tool_name === tool && x.status === 'pending' && JSON.stringify(x.input).includes(has)),
        { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
      assert.ok(s, `a pending ${tool} step on ${taskId} for ${has}: ${JSON.stringify(admin(['steps', '--task', taskId]))}`);
      return s;
    };
    const approve = (taskId, s) => admin(['decide-step', '--owner', 'alice', '--task', taskId, '--step', s.step_id, '--approve']);
    const modelCalls = () => model.requests.flatMap(callsOf);

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-claims-codex-'));
      workRepo(dir, [HELD], HELLO, [{ path: clone(), branch: 'feature/builder' }]);
      runnerBin = runnerBinary(dir);
      script = claimsModel(clone());
      model = await startResponses(script);
      codexHome = join(dir, 'codex-home');
      mkdirSync(codexHome);
      writeFileSync(join(codexHome, 'config.toml'), `model_provider = "mock"\nmodel = "gpt-5-standin"\n\n[model_providers.mock]\nname = "Responses stand-in"\n` +
        `base_url = "${model.url}"\nwire_api = "responses"\nenv_key = "MOCK_API_KEY"\n`);
      requester = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-claims-codex');
      writer = await connectSdk(stack.url, stack.tokens[WRITER], 'prickle-e2e-claims-codex-writer');
      BUILDER = `alice/cx-claims-${Date.now().toString(36)}`;
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
          await requester.client.callTool({ name: 'cancel_task', arguments: { task_id: id, reason: 'The Codex claims suite is over.' } }).catch(() => {});
        }
        const p = saved[WRITER];
        if (p) {
          // Later suites read alice/writer's pulse as the seed left it.
          const { project, availability, doing, task_id: taskId, branch, files, last_decision: decision } = p;
          await callTool(writer.client, 'update_pulse', { project, availability, doing, files, ...(taskId ? { task_id: taskId } : {}),
            ...(branch ? { branch } : {}), ...(decision ? { last_decision: decision } : {}) });
        }
      }
      await writer?.client.close().catch(() => {});
      await requester?.client.close().catch(() => {});
      await model?.close();
      const keep = keepRunnerLogs('runner-claims-codex-logs', dir, runners);
      if (keep && model) {
        writeFileSync(join(keep, 'model-requests.json'), JSON.stringify(model.requests.map((q) => ({ thread: q.prompt_cache_key,
          tools: (q.tools || []).map((t) => t.name || t.type), input: inputOf(q).slice(2) })), null, 1));
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    after(() => assert.deepEqual(model?.errors.map((e) => e.message) || [], [], 'the stand-in model scripted every turn'));

    test('alice/writer holds a file: Codex\'s patch of it is stopped unasked, naming her; its approved patch and its shell write are claimed before the run ends', async () => {
      // The teammate's claim, as any agent says its files.
      const p = saved[WRITER] || {};
      await callTool(writer.client, 'update_pulse', { project: PROJECT, availability: p.availability || 'available', doing: `Editing ${HELD}`, files: [HELD] });
      assert.ok((await pulseOf(WRITER)).files.includes(HELD), `${WRITER} holds ${HELD}`);

      const r = await startRunner(runnerBin, dir, 'claims-codex', {
        prickle_url: base, agent: BUILDER, agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull', concurrency: 2, run_timeout: '4m', grace: '5s',
        log_dir: join(dir, 'logs'), state_dir: join(dir, 'state'),
        projects: { [PROJECT]: { dir: clone(), template: 'codex', program: CODEX, args: ['--poll', '1s', '--poll-max', '2s'] } },
      }, { PATH: process.env.PATH, HOME: join(dir, 'home'), CODEX_HOME: codexHome, MOCK_API_KEY: 'test', PRICKLE_AGENT_TOKEN: builderToken });
      runners.push(r);
      const id = (await callTool(requester.client, 'hand_off_task', { project: PROJECT, assignee: BUILDER, packet: {
        task: `Change the greeting, add the farewell, then write the module ${uniq('cx')}`, deliverable_type: 'answer', acceptance_criteria: ['The files are changed.'] } })).task.id;
      handedOff.push(id);

      // (a) The held file's patch was declined before the owner was asked: the next ask is the free file's.
      const freeStep = await pending(id, 'apply_patch', FREE);
      const steps = admin(['steps', '--task', id]);
      assert.deepEqual(steps.filter((s) => JSON.stringify(s.input).includes(`a-${RUN}`)), [], `the owner was not asked about ${HELD}: ${JSON.stringify(steps)}`);
      const mails = (await (await fetch(`${base}/dev/outbox.json`)).json()).filter((m) => JSON.stringify(m).includes(`a-${RUN}`));
      assert.deepEqual(mails, [], 'no email asks the owner about the held file');
      const heldPatch = modelCalls().find((c) => c.name === 'exec_command' && (c.args.cmd || '').includes(`File: `) && c.args.cmd.includes(`a-${RUN}`) && c.answered);
      assert.ok(heldPatch, 'Codex answered the held file\'s patch');
      assert.doesNotMatch(heldPatch.output, /^Success/m, `the patch was not applied: ${heldPatch.output}`);
      assert.equal(readFileSync(join(clone(), HELD), 'utf8'), HELLO, 'the held file is unchanged');
      const declined = await eventually(() => {
        const start = r.linesFor('run start', (l) => l.task === id && l.reason === 'task_routed')[0];
        return start && readFileSync(start.log, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
          .find((l) => l.msg === 'approval declined: a teammate holds the file');
      });
      assert.ok(declined && declined.why.includes(`${WRITER} holds ${HELD}`), `codex-run declined it, naming ${WRITER}: ${JSON.stringify(declined)}`);
      assert.deepEqual((await pulseOf(BUILDER))?.files || [], [], `${BUILDER} holds nothing yet`);
      assert.ok((await pulseOf(WRITER)).files.includes(HELD), 'alice/writer keeps it');

      // (b) The free file's patch, approved by the owner, is claimed with the task and the branch.
      assert.equal(existsSync(join(clone(), FREE)), false, 'the patch waits for the owner');
      approve(id, freeStep);
      const patched = await eventually(async () => {
        const b = await pulseOf(BUILDER);
        return (b?.files || []).includes(FREE) && b;
      }, { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
      assert.ok(patched, `read_room lists ${FREE} in ${BUILDER}'s pulse: ${JSON.stringify(await pulseOf(BUILDER))}`);
      assert.equal(patched.task_id, id, 'the claim names the task');
      assert.equal(patched.branch, 'feature/builder', 'and the branch of the run\'s checkout');
      assert.ok(!patched.files.includes(HELD), `${BUILDER} does not hold ${HELD}`);

      // (c) The shell write, approved, is claimed from the work tree after the command, while the run goes on.
      const shellStep = await pending(id, 'exec_command', SHELLED);
      assert.ok(await eventually(() => existsSync(join(clone(), FREE))), 'the approved patch was applied');
      approve(id, shellStep);
      const claimed = await eventually(async () => {
        const b = await pulseOf(BUILDER);
        return (b?.files || []).includes(SHELLED) && b;
      }, { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
      assert.ok(claimed, `read_room lists ${SHELLED} in ${BUILDER}'s pulse: ${JSON.stringify(await pulseOf(BUILDER))}`);
      assert.equal(r.linesFor('run end', (l) => l.task === id).length, 0, 'claimed while the run goes on: after the command, not at the run\'s end');
      assert.equal(claimed.task_id, id);
      assert.equal(claimed.branch, 'feature/builder');
      assert.ok(claimed.files.includes(FREE) && !claimed.files.includes(HELD), `${BUILDER} holds ${FREE} and ${SHELLED}, not ${HELD}: ${claimed.files}`);
      assert.ok(existsSync(join(clone(), SHELLED)), 'the shell wrote the file');

      script.release(id);
      const ended = await r.runEnded(id, 'task_routed');
      assert.equal(ended.exit_code, 0);
      // The turn after the declined patch tells the model who holds the file.
      const told = model.requests.map((q) => textOf(userMessages(q).at(-1).item)).find((t) => t.startsWith(REFUSED) && t.includes(HELD.split('/')[1]));
      assert.ok(told && told.includes(`${WRITER} holds ${HELD}`) && /stopped this edit before it happened/.test(told),
        `the model is told ${WRITER} holds ${HELD}: ${told}`);
      const { task } = await callTool(requester.client, 'get_task', { task_id: id });
      assert.match(task.latest_checkpoint.progress, new RegExp(`${WRITER} holds ${HELD}`), 'and checkpointed what it was told');
      assert.equal(readFileSync(join(clone(), HELD), 'utf8'), HELLO, 'the held file is still unchanged');
      const later = await pulseOf(BUILDER);
      assert.ok(later.files.includes(FREE) && later.files.includes(SHELLED), 'the claims outlive the run: the task goes on');
      assert.ok((await pulseOf(WRITER)).files.includes(HELD), 'alice/writer still holds hers');
      assert.ok(modelCalls().every((c) => !/update_pulse/.test(c.name)), 'the model claimed nothing itself');
      assert.deepEqual(admin(['steps', '--task', id]).map((s) => [s.tool_name, s.status]).sort(), [['apply_patch', 'consumed'], ['exec_command', 'consumed']],
        'the owner was asked twice: the free patch and the command, each used once');
      // The owner's decisions woke the task (step_decided): that run resumes the thread and finds nothing to do.
      assert.equal((await r.runEnded(id, 'step_decided')).exit_code, 0);
      await r.stop();
    });
  });
