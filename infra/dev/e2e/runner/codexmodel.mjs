// The scripted model of a woken Codex run (codex.test.mjs, agents-chain.test.mjs), against the
// Responses stand-in (responses.mjs).
import { say, call, inputOf, textOf, callsOf } from './responses.mjs';
import { routeOf, ranOutcome, notRunOutcome, handOffArgs, acceptArgs } from './relay.mjs';

const NS = 'mcp__prickle';
const pick = (a) => a[Math.floor(Math.random() * a.length)];
export const userMessages = (req) => inputOf(req).map((item, i) => ({ item, i })).filter(({ item }) => item.type === 'message' && item.role === 'user');
const WOKE = /Prickle woke you for task (\S+) \((\w+)\)/;

/**
 * The model of a woken Codex run, from the conversation it is sent. The turn's prompt is the last
 * user message; the calls after it are this turn's. task_routed: get_task and update_pulse in
 * parallel, accept_task, save_checkpoint, then exec_command appending a line to the task's side file
 * (its justification and argument order worded afresh each time), or, for a task that asks for a
 * "Codex patch", apply_patch adding the task's notes file, or, for "Codex MCP", the destructive tool
 * `append` of the MCP server "other", or, for "[no call]", nothing; if it ran, return_result. A resumed run
 * whose prompt quotes the call left waiting makes it again. After a refusal: a checkpoint quoting
 * the owner, and the end of the turn. Told its owner edited the call: the command it is told to run.
 * A task whose packet names a relay route (relay.mjs) is handed on to the next agent once the call was
 * decided (with the result returned when it ran: one after the other or both in one response); with
 * relay, woken for a result it asked for (result_returned), it reads the task and accepts the result.
 */
export function codexModel({ commandFor, patchFor, sideOf, relay = false }) {
  return (req) => {
    const users = userMessages(req);
    const woke = users.map(({ item }) => WOKE.exec(textOf(item))).filter(Boolean);
    if (!woke.length) return [say('No Prickle task in this conversation.')];
    const taskId = woke[0][1];
    const last = users.at(-1);
    const prompt = textOf(last.item);
    const turn = callsOf({ input: inputOf(req).slice(last.i) });
    const did = (name) => turn.some((c) => c.name === name);
    const execs = turn.filter((c) => c.name === 'exec_command');
    const asks = (what) => callsOf(req).some((c) => c.name === 'get_task' && c.output.includes(what));
    const route = routeOf(callsOf(req).find((c) => c.name === 'get_task')?.output);
    /** A relay link's calls once its call was decided: the next link handed on, the result returned when it ran. */
    const relayOn = (outcome, out) => {
      const todo = [];
      if (route?.length && !callsOf(req).some((c) => c.name === 'hand_off_task')) todo.push(call('hand_off_task', handOffArgs(route, outcome), NS));
      if (out !== null && !did('return_result')) todo.push(result(out));
      if (todo.length < 2) return todo;
      return pick([todo, [todo[0]], [todo[1]]]);
    };
    const patching = asks('Codex patch');
    // Worded afresh each time: with or without an escalation and its justification, another wait.
    const cmd = patching ? `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ${patchFor(taskId)}\n+patched once\n*** End Patch\nEOF\n` : commandFor(taskId);
    const exec = () => call('exec_command', { cmd, yield_time_ms: pick([2000, 5000, 10000]),
      ...pick([{}, { sandbox_permissions: 'require_escalated', justification: pick(['Append the line the task asks for.',
        'Write the task line into the side-effect file.', 'Record the run in the side file, as the task says.']) }]) });
    const result = (out) => call('return_result', { task_id: taskId, summary: pick(['Appended the line once.', 'The line is in the side file.']),
      evidence: [{ kind: 'test_output', summary: 'The command ran', content: out.slice(0, 400) || 'ran' }] }, NS);
    const afterExec = () => {
      const out = (execs.length ? execs : turn.filter((c) => c.name === 'append')).at(-1).output;
      const ran = /exited with code 0|^Success|appended one line/m.test(out);
      if (route) {
        const next = relayOn(ran ? ranOutcome() : notRunOutcome(out), ran ? out : null);
        if (next.length) return next;
      }
      if (!ran) return [say('The command was not run; I end my turn here.')];
      return did('return_result') ? [say('Returned the result.')] : [result(out)];
    };
    const edited = /so run this command instead: (.*)\n/.exec(prompt);
    if (prompt.startsWith('Prickle: your owner edited these calls') && edited) {
      return execs.length ? afterExec() : [call('exec_command', { cmd: edited[1], yield_time_ms: 5000 })];
    }
    if (prompt.startsWith('Prickle: these calls were not made')) {
      if (!did('save_checkpoint')) {
        return [call('save_checkpoint', { task_id: taskId, progress: `Not appended: ${prompt.split('answer: ')[1]?.split('\n')[0] || 'refused'}`,
          decisions: ['Stop without the command'], files_touched: [], next_steps: ['Wait for new instructions'], open_questions: [] }, NS)];
      }
      const next = route ? relayOn(notRunOutcome(prompt), null) : [];
      return next.length ? next : [say('My owner refused the command; I stop here without it.')];
    }
    const [, , reason] = WOKE.exec(prompt) || [];
    if (relay && reason === 'result_returned') {
      if (!did('get_task')) return [call('get_task', { task_id: taskId }, NS)];
      return did('review_result') ? [say(pick(['Accepted the result.', 'The result is accepted.']))] : [call('review_result', acceptArgs(taskId), NS)];
    }
    if (reason === 'task_routed') {
      if (!did('get_task')) {
        return [call('get_task', { task_id: taskId }, NS),
          call('update_pulse', { project: 'website-v2', doing: pick(['Picking up a task', 'Starting on the side file']), task_id: taskId }, NS)];
      }
      if (!did('accept_task')) return [call('accept_task', { task_id: taskId, note: pick(['On it.', 'Taking this one.']) }, NS)];
      if (!did('save_checkpoint')) {
        return [call('save_checkpoint', { task_id: taskId, progress: 'About to append the line.', decisions: [], files_touched: [],
          next_steps: ['Append the line.'], open_questions: [] }, NS)];
      }
      if (asks('[no call]')) return did('return_result') ? [say('Returned the result.')] : [result('nothing to run')];
      if (asks('Codex MCP')) return did('append') ? afterExec() : [call('append', { path: sideOf(taskId), line: 'ran' }, 'mcp__other')];
      return execs.length ? afterExec() : [exec()];
    }
    if (prompt.includes('and it ended before the answer came')) return execs.length ? afterExec() : [exec()];
    return [say(`Nothing left to do for ${reason || 'this prompt'}.`)];
  };
}

