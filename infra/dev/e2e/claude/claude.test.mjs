// The real Claude Code (2.1.328, pinned in package.json) as a woken run whose permission prompt is
// Prickle's request_step, against the running local stack. No account, no network: the
// model is a scripted stand-in of the Messages API on loopback (standin.mjs) that asks for one Bash
// call which appends a line to a side-effect file, then ends. Claude Code is started as
// docs/running-agents.md says (--mcp-config with a run token, --permission-prompt-tool mcp__prickle__request_step,
// --allowedTools of Prickle tools only), so the Bash call goes to request_step:
//   pending → not run, and the model is told "still waiting";
//   the owner approves, a run that resumes the first makes the identical call → allowed, run once;
//   the owner refuses with a message → not run, and the model is told the owner's message.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStack, skipUnlessStack, admin, uniq, PROJECT, npmNeed } from '../lib/env.mjs';
import { CLAUDE, runClaude } from '../lib/claude.mjs';
import { connectSdk } from '../lib/sdk.mjs';
import { startStandIn, oneBashCall, resultText } from './standin.mjs';

const RUN_TIMEOUT_MS = 120_000;
const ALLOWED = ['read_room', 'get_task', 'save_checkpoint', 'return_result', 'update_pulse'].map((t) => `mcp__prickle__${t}`).join(',');

const { stack, skipReason } = await loadStack(npmNeed(CLAUDE, 'Claude Code'));

/** Runs Claude Code once, bounded by RUN_TIMEOUT_MS; resolves with its exit and output. */
const claude = (args, opts) => runClaude(args, { ...opts, timeoutMs: RUN_TIMEOUT_MS });

describe('Claude Code as a woken run: request_step is its permission prompt', { skip: skipUnlessStack(skipReason) }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let dir;
  let bob;
  let taskId;

  /**
   * One woken run: mints a run token (resuming `resumes` when given), writes the MCP config, and
   * runs `claude -p` against a fresh stand-in that asks for the Bash call `input`. Returns the
   * run, Claude Code's JSON output and the tool_result blocks the stand-in received.
   */
  async function wokenRun(input, resumes) {
    const run = admin(['start-run', '--agent', 'alice/writer', '--task', taskId, ...(resumes ? ['--resumes', resumes] : [])]);
    assert.match(run.run_token, /^prk_r_/, `start-run: ${JSON.stringify(run)}`);
    const config = join(dir, `mcp-${run.run_id}.json`);
    writeFileSync(config, JSON.stringify({ mcpServers: { prickle: { type: 'http', url: stack.url, headers: { Authorization: `Bearer ${run.run_token}` } } } }), { mode: 0o600 });
    const model = await startStandIn(oneBashCall(input));
    try {
      const home = mkdtempSync(join(dir, 'home-'));
      const out = await claude(['-p', `Prickle woke you for task ${taskId}. Continue the task.`, '--mcp-config', config,
        '--permission-prompt-tool', 'mcp__prickle__request_step', '--allowedTools', ALLOWED, '--output-format', 'json'], {
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'test',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ENABLE_TOOL_SEARCH: 'false' },
      });
      assert.equal(out.signal, null, `claude was killed after ${RUN_TIMEOUT_MS} ms: ${out.stderr}`);
      assert.equal(out.code, 0, `claude exited ${out.code}: ${out.stderr}\n${out.stdout.slice(0, 2000)}`);
      const main = model.requests.filter((r) => (r.tools || []).some((t) => t.name === 'Bash'));
      assert.ok(main.length >= 2, `the stand-in saw the main loop ask twice, got ${main.length} of ${model.requests.length}`);
      const names = main[0].tools.map((t) => t.name);
      assert.ok(names.includes('mcp__prickle__get_task'), `Prickle's tools reach the model without ToolSearch: ${names}`);
      const results = model.toolResults();
      assert.equal(results.length, 1, `one tool_result: ${JSON.stringify(results)}`);
      return { run, json: JSON.parse(out.stdout), result: results[0] };
    } finally {
      await model.close();
    }
  }
  const linesOf = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);
  const stepOf = (command) => {
    const steps = admin(['steps', '--task', taskId]);
    const s = steps.find((x) => x.tool_name === 'Bash' && x.input?.command === command);
    assert.ok(s, `a step for ${command} among ${JSON.stringify(steps)}`);
    return s;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-claude-'));
    bob = await connectSdk(stack.url, stack.tokens['bob/reviewer'], 'prickle-e2e-claude');
    const handed = await bob.client.callTool({ name: 'hand_off_task', arguments: { project: PROJECT, assignee: 'alice/writer', packet: {
      task: `Claude Code e2e ${uniq()}`, deliverable_type: 'answer', acceptance_criteria: ['The side-effect file has its line.'] } } });
    assert.notEqual(handed.isError, true, JSON.stringify(handed.content));
    taskId = handed.structuredContent.task.id;
  });
  after(async () => {
    await bob?.client.close().catch(() => {});
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  let first; // the run that asked and was told to wait
  let side;
  let input;

  test('pending: the Bash call is not run, and the model is told "still waiting"', async () => {
    side = join(dir, 'approved.txt');
    input = { command: `echo ran >> ${side}`, description: 'Append a line to the side-effect file' };
    // The run accepts its task first, with its own token, as a woken run would.
    const accepter = admin(['start-run', '--agent', 'alice/writer', '--task', taskId]);
    const c = await connectSdk(stack.url, accepter.run_token, 'prickle-e2e-claude-accept');
    const acc = await c.client.callTool({ name: 'accept_task', arguments: { task_id: taskId } });
    await c.client.close();
    assert.notEqual(acc.isError, true, JSON.stringify(acc.content));

    first = await wokenRun(input);
    assert.equal(existsSync(side), false, 'the command did not run');
    assert.equal(first.result.is_error, true, 'the denied call is an error tool_result');
    assert.match(resultText(first.result), /still waiting/);
    assert.deepEqual(first.json.permission_denials?.map((d) => d.tool_name), ['Bash']);
    const s = stepOf(input.command);
    assert.equal(s.status, 'pending');
    assert.equal(s.run_id, first.run.run_id);

    // The owner is told what the call does, though the permission layer sent no kind or reason.
    const box = await (await fetch(`${base}/dev/outbox.json`)).json();
    const mail = box.filter((m) => m.channel === 'email' && m.text?.includes(input.command)).at(-1);
    assert.ok(mail, 'the owner got an email about the step');
    assert.match(mail.subject, /run the shell command `echo ran >> /);
    assert.doesNotMatch(mail.subject, /—/);
    assert.match(mail.text, /Append a line to the side-effect file/);
  });

  test('approved: the run that resumes the first makes the identical call, which is allowed and runs exactly once', async () => {
    const s = stepOf(input.command);
    admin(['decide-step', '--owner', 'alice', '--task', taskId, '--step', s.step_id, '--approve']);
    const resumed = await wokenRun(input, first.run.run_id);
    assert.equal(linesOf(side), 1, 'the command ran exactly once');
    assert.notEqual(resumed.result.is_error, true, `the allowed call succeeded: ${resultText(resumed.result)}`);
    assert.deepEqual(resumed.json.permission_denials ?? [], []);
    assert.equal(stepOf(input.command).status, 'consumed');
  });

  test('refused with a message: not run, and the owner\'s message reaches the model', async () => {
    const refusedSide = join(dir, 'refused.txt');
    const refusedInput = { command: `echo ran >> ${refusedSide}`, description: 'Append a line to another file' };
    const asked = await wokenRun(refusedInput);
    assert.match(resultText(asked.result), /still waiting/);
    const s = stepOf(refusedInput.command);
    admin(['decide-step', '--owner', 'alice', '--task', taskId, '--step', s.step_id, '--refuse', '--message', 'Not that file, use the report instead.']);
    const resumed = await wokenRun(refusedInput, asked.run.run_id);
    assert.equal(existsSync(refusedSide), false, 'the refused command did not run');
    assert.equal(resumed.result.is_error, true);
    assert.match(resultText(resumed.result), /Not that file, use the report instead\./);
    assert.equal(linesOf(side), 1, 'the approved command still ran only once');
  });
});
