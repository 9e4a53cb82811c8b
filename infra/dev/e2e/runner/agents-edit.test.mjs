// Edit, then allow, with the real CLIs of every template of agents.mjs's CLIS (qwen, gemini, copilot, opencode),
// all at once on agents of their own (pull mode, the local stack): the model appends a line with the
// CLI's shell tool → the gate holds it, pending → alice, signed in, opens her email's approval link,
// edits the command and approves the edit (or, every other template, does so inside Slack) → the edited command runs exactly once (the one asked never
// runs), the model is told its owner edited the call, the owner was asked once, one step, consumed.
// gemini, copilot and opencode run the edit in place of the call; qwen, whose hook ignores an edited input, is
// denied with the edited call quoted, and the model's next call (that one) is the approved step.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { skipUnlessStack, admin } from '../lib/env.mjs';
import { approvalLink, stepEmails } from './harness.mjs';
import { TEMPLATES, storyPrereqs, story } from './stories.mjs';

const { stack, skipReason } = await storyPrereqs();
// What tells the model: the gate's note (qwen's deny, copilot's additionalContext), Gemini CLI's own.
const TOLD = /owner edited this call|parameters were modified by a hook/i;

describe('agent stories: the owner edits the call, then allows it (every template at once)', { skip: skipUnlessStack(skipReason), timeout: 600_000, concurrency: true }, () => {
  const s = story('edit');
  before(async () => {
    await s.setup(stack);
    await s.signInAlice();
  });
  after(() => s.teardown());

  // The owner edits on the approval page signed in, or inside Slack: every other template each way.
  TEMPLATES.forEach((name, i) => {
    const via = i % 2 ? 'slack' : 'the web page';
    test(`${name}: edited from ${via}, the call runs as edited, exactly once, and the model is told`, async () => {
      const agent = s.newAgent(`edit-${name}`);
      const r = await s.runner(name, 'edit', agent);
      const taskId = await s.handOff(`${name} edit`, agent);
      const step = await s.pendingShell(name, taskId);
      const edit = step.input.command.replace('echo ran', 'echo edited');
      assert.notEqual(edit, step.input.command);

      if (via === 'slack') {
        await s.slackEdit(taskId, step.step_id, edit);
      } else {
        const link = await approvalLink(s.base, taskId, step.step_id);
        const page = await s.alice.newPage();
        assert.equal((await page.goto(link)).status(), 200);
        await page.locator('#edit-step summary').click();
        assert.equal(await page.locator('#command-step').inputValue(), step.input.command);
        await page.locator('#command-step').fill(edit);
        await Promise.all([page.waitForURL(/\?done=1$/), page.locator('#approve-edit-step').click()]);
        await page.close();
      }

      const end = await r.runEnded(taskId, 'task_routed');
      assert.equal(end.exit_code, 0);
      assert.deepEqual(readFileSync(s.sideOf(taskId), 'utf8').split('\n').filter(Boolean), ['edited'], 'the edited command ran once; the one asked never ran');
      assert.ok(s.toldOf(taskId).some((t) => TOLD.test(t)), `the model was told: ${JSON.stringify(s.toldOf(taskId))}`);
      const steps = admin(['steps', '--task', taskId]);
      assert.deepEqual(steps.map((x) => [x.step_id, x.status, x.edited_input?.command]), [[step.step_id, 'consumed', edit]], 'the edited call was the step, used once');
      assert.equal((await stepEmails(s.base, taskId)).length, 1, 'the owner was asked once');
      // The decision's wake-up (step_decided) resumes the session and finds nothing left to run.
      const again = await r.runEnded(taskId, 'step_decided');
      assert.equal(again.exit_code, 0);
      assert.equal(readFileSync(s.sideOf(taskId), 'utf8').split('\n').filter(Boolean).length, 1, 'still once');
      await r.stop();
    });
  });
});
