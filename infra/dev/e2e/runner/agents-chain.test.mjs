// The acceptance story: a chain of hand-offs across Claude Code, Codex, Gemini CLI, Copilot CLI and opencode (the
// real pinned CLIs, each on an agent of its own run by its own prickle-runner in pull mode, against the
// local stack and stand-in models: standin.mjs, responses.mjs, chatmodels.mjs). bob hands the first task
// to the Claude Code agent; each link's result is handed on, with its summary, to the next agent. Every
// agent asks its owner, alice, once for one guarded call (a shell command appending a line to the task's
// side file): approved, it ran exactly once and the agent returned its result, which bob accepts;
// refused (one link), the owner's message reached that agent's model, nothing ran, and the chain goes on.
// The chain is a table: a template joins it with one row.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { skipUnlessStack, admin, eventually, IN_CI, PROJECT } from '../lib/env.mjs';
import { startStandIn } from '../claude/standin.mjs';
import { CLAUDE, RUN_WAIT_MS, approvalLink, decide, linesOf, stepEmails, startRunner, claudeProject, modelEnv, wokenModel, bashResults } from './harness.mjs';
import { CLIS, storyPrereqs, story, shellOf } from './stories.mjs';

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

describe('agent stories: a chain of hand-offs across Claude Code, Codex, Gemini CLI, Copilot CLI and opencode', { skip: skipUnlessStack(skipReason), timeout: 600_000 }, () => {
  const s = story('chain');
  const commandFor = (taskId) => `echo ran >> ${s.sideOf(taskId)}`;
  let claudeModel;
  const runners = new Map();

  before(async () => {
    await s.setup(stack);
    claudeModel = await startStandIn(wokenModel(commandFor));
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

  test('each agent asks its owner once for one guarded call; approved calls run once, a refusal reaches its model; the chain completes', async () => {
    let context = 'The first link of the chain.';
    for (const link of CHAIN) {
      const { agent } = runners.get(link.template);
      const { task } = await s.call(s.bob.client, 'hand_off_task', { project: PROJECT, assignee: agent.id, packet: {
        task: `Chain link ${link.template}: append a line to your side file`, deliverable_type: 'answer', context,
        acceptance_criteria: ['The side-effect file has its line.'] } });
      const taskId = task.id;
      s.plans.set(taskId, { result: true });
      const step = await eventually(() => admin(['steps', '--task', taskId]).find((x) => x.tool_name === link.tool && x.status === 'pending'), { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
      assert.ok(step, `${link.template}: a pending ${link.tool} step`);
      assert.equal(linesOf(s.sideOf(taskId)), 0, `${link.template}: nothing ran before the owner decided`);
      const url = await approvalLink(s.base, taskId, step.step_id, /run the shell command `.*echo ran >> /);
      if (link.decision === 'approve') {
        await decide(s.browser, url, '#approve');
        const returned = await eventually(async () => {
          const { task: t } = await s.call(s.bob.client, 'get_task', { task_id: taskId });
          return t.state === 'verifying' ? t : null;
        }, { timeoutMs: RUN_WAIT_MS, intervalMs: 1000 });
        assert.ok(returned, `${link.template}: the agent returned its result`);
        assert.equal(linesOf(s.sideOf(taskId)), 1, `${link.template}: the approved call ran exactly once`);
        assert.deepEqual(admin(['steps', '--task', taskId]).map((x) => [x.step_id, x.status]), [[step.step_id, 'consumed']], `${link.template}: one step, used once`);
        assert.equal((await s.call(s.bob.client, 'review_result', { task_id: taskId, verdict: 'accept' })).task.state, 'completed');
        context = `The ${link.template} link returned: ${returned.result?.summary || 'its result'}`;
      } else {
        await decide(s.browser, url, '#refuse', REFUSAL);
        const heard = await eventually(() => {
          const told = link.template === 'claude' ? bashResults(claudeModel, taskId).map((b) => JSON.stringify(b.content))
            : link.template === 'codex' ? s.responses.requests.map((q) => JSON.stringify(q.input)).filter((t) => t.includes(taskId))
              : s.toldOf(taskId);
          return told.some((t) => t.includes(REFUSAL));
        }, { timeoutMs: RUN_WAIT_MS, intervalMs: 1000 });
        assert.ok(heard, `${link.template}: the owner's message reached the model`);
        assert.equal(linesOf(s.sideOf(taskId)), 0, `${link.template}: the refused call never ran`);
        context = `The ${link.template} link was refused by its owner: ${REFUSAL}`;
      }
      assert.equal((await stepEmails(s.base, taskId)).length, 1, `${link.template}: the owner was asked once`);
    }
  });
});
