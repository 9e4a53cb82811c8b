// The acceptance story: a relay of hand-offs across Claude Code, Codex, Gemini CLI, Copilot CLI and opencode
// (the real pinned CLIs, each on an agent of its own run by its own prickle-runner in pull mode, against
// the local stack and stand-in models: standin.mjs, responses.mjs, chatmodels.mjs, playing relay.mjs),
// agent to agent as a team uses Prickle. bob hands only the first link to the Claude Code agent, its packet
// naming the route; every agent asks its owner, alice, once for one guarded call (a shell command appending
// a line to the task's side file) and, once she decided, its model itself hands the next link to the next
// agent on the route (hand_off_task with its run token, not asked: the packet carries what its call came
// to) and, when the call ran, returns its result. Approved, the call ran exactly once; refused (one link),
// the owner's message reached that agent's model, nothing ran, and the relay goes on. bob accepts the first
// link's result; every later link's requester is the agent before it, woken for the returned result
// (result_returned), whose model accepts it (review_result) and asks nothing. The last link completes.
// The chain is a table: a template joins it with one row.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { skipUnlessStack, admin, eventually, IN_CI, PROJECT } from '../lib/env.mjs';
import { startStandIn } from '../claude/standin.mjs';
import { CLAUDE, RUN_WAIT_MS, approvalLink, decide, linesOf, stepEmails, startRunner, claudeProject, modelEnv, wokenModel, bashResults } from './harness.mjs';
import { CLIS, storyPrereqs, story, shellOf } from './stories.mjs';
import { relayContext } from './relay.mjs';

const { stack, skipReason: prereq } = await storyPrereqs();
let skipReason = prereq;
for (const path of [CLAUDE]) {
  if (!skipReason && !existsSync(path)) {
    skipReason = `no ${path} (npm ci in infra/dev/e2e)`;
    if (IN_CI) throw new Error(`CI: ${skipReason}`);
  }
}

const REFUSAL = 'Not this one: the side file stays as it is.';

// The chain, in order: each row's template, its shell tool as Prickle is asked it, and the owner's decision.
const CHAIN = [
  { template: 'claude', tool: 'Bash', decision: 'approve' },
  { template: 'codex', tool: shellOf('codex'), decision: 'approve' },
  { template: 'gemini', tool: CLIS.gemini.shell, decision: 'refuse' },
  { template: 'copilot', tool: CLIS.copilot.shell, decision: 'approve' },
  { template: 'opencode', tool: CLIS.opencode.shell, decision: 'approve' },
];

describe('agent stories: a relay of hand-offs, agent to agent, across Claude Code, Codex, Gemini CLI, Copilot CLI and opencode', { skip: skipUnlessStack(skipReason), timeout: 600_000 }, () => {
  const s = story('chain', { relay: true });
  const commandFor = (taskId) => `echo ran >> ${s.sideOf(taskId)}`;
  let claudeModel;
  const runners = new Map();

  before(async () => {
    await s.setup(stack);
    claudeModel = await startStandIn(wokenModel(commandFor, { relay: true }));
    // Every link's runner starts at once: one agent each.
    await Promise.all(CHAIN.map(async (link) => {
      const agent = s.newAgent(`chain-${link.template}`);
      let r;
      if (link.template === 'claude') {
        r = await startRunner(s.bin, s.dir, 'chain-claude', { prickle_url: s.base, agent: agent.id, agent_token_env: 'PRICKLE_AGENT_TOKEN', mode: 'pull',
          concurrency: 2, run_timeout: '4m', grace: '5s', log_dir: join(s.dir, 'logs-claude'), state_dir: join(s.dir, 'state-claude'),
          projects: { [PROJECT]: claudeProject(join(s.dir, 'work')) } }, { ...modelEnv(claudeModel, join(s.dir, 'home-claude')), PRICKLE_AGENT_TOKEN: agent.token });
        s.runners.push(r);
      } else {
        r = await s.runner(link.template, 'chain', agent);
      }
      runners.set(link.template, { agent, r });
    }));
  });
  after(async () => {
    await s.teardown();
    await claudeModel?.close();
  });

  test('bob hands off the first link; each agent asks its owner once, hands the next link on and reviews the result it asked for; the last link completes', async () => {
    const links = CHAIN.map((link) => ({ ...link, ...runners.get(link.template) }));
    const ids = links.map((l) => l.agent.id);
    const getTask = async (id) => s.call(s.bob.client, 'get_task', { task_id: id });
    const first = await s.call(s.bob.client, 'hand_off_task', { project: PROJECT, assignee: ids[0], packet: {
      task: 'Relay link: append a line to your side file', deliverable_type: 'answer',
      context: relayContext(ids.slice(1), 'The first link of the chain.'), acceptance_criteria: ['The side-effect file has its line.'] } });
    let taskId = first.task.id;
    let prev = null; // what the previous link came to: 'ran' or 'refused'
    const tasks = [];
    for (const [i, link] of links.entries()) {
      const who = `${link.template} (link ${i + 1})`;
      if (i > 0) {
        // The previous agent handed this link on: the task this agent's runner was woken for.
        taskId = await eventually(() => link.r.linesFor('run start', (l) => l.reason === 'task_routed')[0]?.task, { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
        assert.ok(taskId, `${who}: the previous agent handed a task on to ${link.agent.id}`);
        const { task, history } = await getTask(taskId);
        assert.equal(task.requester, ids[i - 1], `${who}: the task's requester is the previous agent`);
        assert.equal(task.assignee, link.agent.id, `${who}: handed to the next agent on the route`);
        assert.equal(history[0].by, ids[i - 1], `${who}: created by the previous agent`);
        assert.ok(task.packet.context.startsWith(relayContext(ids.slice(i + 1), '')), `${who}: the rest of the route in the context: ${task.packet.context}`);
        if (prev === 'refused') assert.ok(task.packet.context.includes(REFUSAL), `${who}: the context carries the previous link's refusal: ${task.packet.context}`);
        else assert.match(task.packet.context, /\bran\b/, `${who}: the context says the previous link's call ran`);
      }
      tasks.push(taskId);
      const step = await eventually(() => admin(['steps', '--task', taskId]).find((x) => x.tool_name === link.tool && x.status === 'pending'), { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
      assert.ok(step, `${who}: a pending ${link.tool} step`);
      assert.equal(step.agent, link.agent.id, `${who}: asked by its agent`);
      assert.equal(linesOf(s.sideOf(taskId)), 0, `${who}: nothing ran before the owner decided`);
      const url = await approvalLink(s.base, taskId, step.step_id, /run the shell command `.*echo ran >> /);
      if (link.decision === 'approve') {
        await decide(s.browser, url, '#approve');
        // The first link's requester is bob; every later one's is the agent before it, whose model accepts on its own.
        const want = i === 0 ? ['verifying'] : ['completed'];
        const returned = await eventually(async () => {
          const t = await getTask(taskId);
          return want.includes(t.task.state) ? t : null;
        }, { timeoutMs: RUN_WAIT_MS, intervalMs: 1000 });
        assert.ok(returned, `${who}: the agent returned its result${i ? ' and its requester accepted it' : ''}`);
        assert.equal(returned.task.result?.returned_by, link.agent.id, `${who}: returned by its agent`);
        assert.equal(linesOf(s.sideOf(taskId)), 1, `${who}: the approved call ran exactly once`);
        assert.deepEqual(admin(['steps', '--task', taskId]).map((x) => [x.step_id, x.status]), [[step.step_id, 'consumed']], `${who}: one step, used once`);
        if (i === 0) {
          assert.equal((await s.call(s.bob.client, 'review_result', { task_id: taskId, verdict: 'accept' })).task.state, 'completed');
        } else {
          const accepted = returned.history.filter((h) => h.action === 'review_accept');
          assert.deepEqual(accepted.map((h) => h.by), [ids[i - 1]], `${who}: accepted by its requester, the previous agent`);
          await links[i - 1].r.runEnded(taskId, 'result_returned');
        }
        prev = 'ran';
      } else {
        await decide(s.browser, url, '#refuse', REFUSAL);
        const heard = await eventually(() => {
          const told = link.template === 'claude' ? bashResults(claudeModel, taskId).map((b) => JSON.stringify(b.content))
            : link.template === 'codex' ? s.responses.requests.map((q) => JSON.stringify(q.input)).filter((t) => t.includes(taskId))
              : s.toldOf(taskId);
          return told.some((t) => t.includes(REFUSAL));
        }, { timeoutMs: RUN_WAIT_MS, intervalMs: 1000 });
        assert.ok(heard, `${who}: the owner's message reached the model`);
        assert.equal(linesOf(s.sideOf(taskId)), 0, `${who}: the refused call never ran`);
        assert.deepEqual(admin(['steps', '--task', taskId]).map((x) => [x.step_id, x.status]), [[step.step_id, 'refused']], `${who}: one step, refused`);
        prev = 'refused';
      }
      assert.equal((await stepEmails(s.base, taskId)).length, 1, `${who}: the owner was asked once`);
    }
    // Nothing else was asked or handed on: each agent was woken for its one link, the requesters' runs asked
    // nothing (each task's steps are its assignee's one), and the last link handed nothing on.
    for (const [i, link] of links.entries()) {
      assert.deepEqual([...new Set(link.r.linesFor('run start', (l) => l.reason === 'task_routed').map((l) => l.task))], [tasks[i]], `${link.template}: woken for its link only`);
      assert.deepEqual(tasks.flatMap((t) => admin(['steps', '--task', t])).filter((x) => x.agent === link.agent.id).length, 1, `${link.template}: asked its owner once`);
    }
    assert.equal((await getTask(tasks.at(-1))).task.state, 'completed', 'the last link completes');
  });
});
