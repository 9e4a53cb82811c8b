// A run killed while its gated call waits for the owner, with the real CLIs of every template of
// agents.mjs's CLIS and Codex, all at once on agents of their own (pull mode, the local stack). Nothing is lost
// and nothing runs twice:
//   the CLI killed (SIGKILL, its gate left running): the run ends; the owner approves while the
//     orphaned gate still holds the call, which must not take the approval for a CLI that is gone;
//     the owner's decision wakes the task, the resumed run is told the call, makes it again, and the
//     approval runs it exactly once there; the owner was asked once;
//   the runner killed with its whole run (SIGKILL: a crashed machine): the wake-up comes back (the
//     visibility timeout) to a runner started again, whose run is told the call left waiting and makes
//     it again; the owner approves it and it runs exactly once.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { skipUnlessStack, admin, eventually, sleep } from '../lib/env.mjs';
import { approvalLink, decide, linesOf, stepEmails, RUN_WAIT_MS } from './harness.mjs';
import { TEMPLATES, storyPrereqs, story } from './stories.mjs';

// Every template of the stories, and codex (its own suite stops its runner, it does not kill it).
const KILLED = [...TEMPLATES, 'codex'];
// The owner's email names the command (Codex's in its shell wrapper).
const SUBJECT = /run the shell command `.*echo ran >> /;

const { stack, skipReason } = await storyPrereqs();

/** The processes of this machine: pid, ppid, pgid, command line and (where readable) environment. */
function processes() {
  const out = [];
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ');
      let env = '';
      try { env = readFileSync(`/proc/${d}/environ`, 'utf8'); } catch { /* not ours */ }
      out.push({ pid: Number(d), ppid: Number(f[1]), pgid: Number(f[2]), cmd, env: env.split('\0') });
    } catch { /* gone */ }
  }
  return out;
}

/** The processes of run runId: agent-run, the CLI's and the gate's (they have the run's id). */
const runProcesses = (runId) => processes().filter((p) => p.env.includes(`PRICKLE_RUN_ID=${runId}`));

/**
 * The CLI's processes of run runId, to kill while the call waits: for qwen, gemini and copilot, those
 * between agent-run and the shell the CLI started its gate in, for opencode those between agent-run and
 * the gate its plugin started (the gate, a process of its own, lives on); for codex, Codex itself
 * (codex-run, its host, is the gate).
 */
async function cliOf(name, runId) {
  if (name === 'codex') {
    const codex = await eventually(() => { const c = runProcesses(runId).filter((p) => !p.cmd.includes('prickle-runner')); return c.length ? c : null; }, { timeoutMs: 20000 });
    assert.ok(codex, `Codex of run ${runId}`);
    return codex.map((p) => p.pid);
  }
  // The gate's own process, not the shell around it, whose command line has the whole wrapper.
  const gates = await eventually(() => { const g = runProcesses(runId).filter((p) => / hook --cli /.test(p.cmd) && !p.cmd.includes('||')); return g.length ? g : null; }, { timeoutMs: 20000 });
  assert.ok(gates, `the gate of run ${runId} is holding the call`);
  const procs = runProcesses(runId);
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const parent = byPid.get(gates[0].ppid);
  assert.ok(parent, 'the gate runs in the shell the CLI started (opencode: in its plugin, opencode itself)');
  const agentRun = procs.find((p) => / agent-run /.test(p.cmd));
  // The CLI: the shell's parent (opencode: the gate's), and whatever stands between it and agent-run (a loader).
  const cli = [];
  for (let p = / hook --cli /.test(parent.cmd) ? byPid.get(parent.ppid) : parent; p && p.pid !== agentRun.pid; p = byPid.get(p.ppid)) cli.push(p.pid);
  assert.ok(cli.length > 0, 'the CLI process');
  return cli;
}

const kill = (pid) => { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } };

describe('agent stories: a run killed while its call waits for the owner (every template at once)', { skip: skipUnlessStack(skipReason), timeout: 600_000, concurrency: true }, () => {
  const s = story('kill');
  before(() => s.setup(stack));
  after(() => s.teardown());

  for (const name of KILLED) {
    test(`${name}: the CLI killed mid-wait; the owner's later approval runs the call once, in the resumed run`, async () => {
      const agent = s.newAgent(`killcli-${name}`);
      const r = await s.runner(name, 'killcli', agent);
      const taskId = await s.handOff(`${name} CLI killed`, agent);
      const step = await s.pendingShell(name, taskId);
      const run = r.linesFor('run start', (l) => l.task === taskId)[0].run;
      for (const pid of await cliOf(name, run)) kill(pid);
      const end = await r.runEnded(taskId, 'task_routed');
      // (codex-run, Codex's host, ends when Codex dies; the others' exit status is the CLI's.)
      if (name !== 'codex') assert.notEqual(end.exit_code, 0, `the run ended with its CLI killed: ${JSON.stringify(end)}`);
      // The owner approves; a gate still holding the call for the CLI that is gone takes nothing.
      await decide(s.browser, await approvalLink(s.base, taskId, step.step_id, SUBJECT), '#approve');
      const resumed = await r.runEnded(taskId, 'step_decided');
      assert.equal(resumed.exit_code, 0, JSON.stringify(resumed));
      assert.equal(linesOf(s.sideOf(taskId)), 1, 'the approved call ran exactly once, in the resumed run');
      assert.deepEqual(admin(['steps', '--task', taskId]).map((x) => [x.step_id, x.status]), [[step.step_id, 'consumed']], 'the same step, used once');
      assert.equal((await stepEmails(s.base, taskId)).length, 1, 'the owner was asked once');
      await r.stop();
    });

    test(`${name}: the runner killed with its run mid-wait; the wake-up comes back and the call runs once when approved`, async () => {
      const agent = s.newAgent(`killall-${name}`);
      const a = await s.runner(name, 'killall-a', agent);
      const taskId = await s.handOff(`${name} runner killed`, agent);
      const first = await s.pendingShell(name, taskId);
      const run = a.linesFor('run start', (l) => l.task === taskId)[0].run;
      // A crash: the runner and every process of its run, at once.
      kill(a.child.pid);
      for (const p of runProcesses(run)) kill(p.pid);
      await a.stop();
      await sleep(500);
      assert.deepEqual(runProcesses(run).map((p) => p.cmd), [], 'nothing of the run is left');
      assert.equal(linesOf(s.sideOf(taskId)), 0);

      // Started again: the unacknowledged wake-up comes back after the visibility timeout, a new run
      // of it resumes the task's session, is told the call left waiting, and makes it again.
      const b = await s.runner(name, 'killall-b', agent);
      const again = await eventually(() => admin(['steps', '--task', taskId]).find((x) => x.status === 'pending' && x.step_id !== first.step_id), { timeoutMs: RUN_WAIT_MS, intervalMs: 1000 });
      assert.ok(again, `the call is asked again: ${JSON.stringify(admin(['steps', '--task', taskId]))}`);
      assert.equal(linesOf(s.sideOf(taskId)), 0, 'nothing ran before the owner decided');
      await decide(s.browser, await approvalLink(s.base, taskId, again.step_id, SUBJECT), '#approve');
      await eventually(() => linesOf(s.sideOf(taskId)) > 0, { timeoutMs: RUN_WAIT_MS, intervalMs: 500 });
      // Every wake-up of the task has run to its end: nothing is left to make the call again.
      await b.runEnded(taskId, 'step_decided');
      await sleep(2000);
      assert.equal(linesOf(s.sideOf(taskId)), 1, 'the approved call ran exactly once');
      const steps = admin(['steps', '--task', taskId]);
      assert.equal(steps.filter((x) => x.status === 'consumed').length, 1, `one step used, once: ${JSON.stringify(steps.map((x) => [x.step_id, x.status]))}`);
      assert.equal(steps.filter((x) => x.status === 'pending').length, 0, 'nothing left asked');
      await b.stop();
    });
  }
});
