// Prickle through the official TypeScript MCP SDK client (handshake era, 2025-11-25):
// the catalog, the seed schemas, and a two-agent scenario that touches every tool.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { loadStack, skipUnlessStack, admin, readSchema, uniq, eventually, TOOL_NAMES, SEED_TOOLS, PROJECT } from '../lib/env.mjs';
import { OutputValidator, checkRefused, checkRunToolList, textOf } from '../lib/validate.mjs';
import { connectSdk } from '../lib/sdk.mjs';

const { stack, skipReason } = await loadStack();

describe('TypeScript SDK client', { skip: skipUnlessStack(skipReason) }, () => {
  const agents = {}; // bob, builder, writer: { client, transport, protocolVersion }
  let tools;
  let V;

  const call = (who, name, args) => agents[who].client.callTool({ name, arguments: args });
  const ok = async (who, name, args) => V.checkOk(name, await call(who, name, args));
  /** request_step with a run token: one text block holding the JSON, no structuredContent (as a permission layer reads it). */
  const step = async (who, args) => V.checkPermissionAnswer('request_step', await call(who, 'request_step', args));
  const refused = async (who, name, args, mention) => checkRefused(name, await call(who, name, args), mention);
  /** Refused either as a domain error (isError) or as invalid params (-32602); returns the message. */
  const rejected = async (who, name, args, mention = []) => {
    try {
      const r = await call(who, name, args);
      return checkRefused(name, r, mention);
    } catch (e) {
      assert.ok(e instanceof McpError, `${name}: unexpected exception ${e}`);
      assert.equal(e.code, -32602, `${name}: expected isError or -32602, got ${e.code} ${e.message}`);
      return e.message;
    }
  };
  const getTask = async (who, id) => ok(who, 'get_task', { task_id: id });
  const handOff = async (assignee, packet, who = 'bob') =>
    (await ok(who, 'hand_off_task', { project: PROJECT, assignee, packet: { task: `e2e ${uniq()}`, deliverable_type: 'answer', acceptance_criteria: ['It is answered.'], ...packet } })).task;

  before(async () => {
    agents.bob = await connectSdk(stack.url, stack.tokens['bob/reviewer']);
    agents.builder = await connectSdk(stack.url, stack.tokens['alice/builder']);
    agents.writer = await connectSdk(stack.url, stack.tokens['alice/writer']);
    tools = (await agents.bob.client.listTools()).tools;
    V = new OutputValidator(tools);
    for (const a of Object.values(agents)) await a.client.listTools(); // each client caches output validators
  });
  after(async () => {
    for (const a of Object.values(agents)) await a.client.close().catch(() => {});
  });

  test('the SDK negotiates protocol 2025-11-25 (initialize handshake)', () => {
    for (const a of Object.values(agents)) assert.equal(a.protocolVersion, '2025-11-25');
    const info = agents.bob.client.getServerVersion();
    assert.ok(info?.name, 'serverInfo.name');
    assert.ok(agents.bob.client.getServerCapabilities()?.tools, 'tools capability');
  });

  test('tools/list returns exactly the 11 tools of the catalog', () => {
    assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
  });

  test('seed tools: inputSchema and outputSchema equal the committed seed schemas', () => {
    for (const name of SEED_TOOLS) {
      const t = tools.find((x) => x.name === name);
      assert.deepEqual(t.inputSchema, readSchema(name, 'input'), `${name} inputSchema`);
      assert.deepEqual(t.outputSchema, readSchema(name, 'output'), `${name} outputSchema`);
    }
  });

  test('every tool has a 2020-12 outputSchema, the committed schemas, and annotations', () => {
    for (const t of tools) {
      assert.ok(t.outputSchema && t.outputSchema.type === 'object', `${t.name} outputSchema`);
      assert.deepEqual(t.inputSchema, readSchema(t.name, 'input'), `${t.name} inputSchema vs shared/mcp/catalog/schemas`);
      assert.deepEqual(t.outputSchema, readSchema(t.name, 'output'), `${t.name} outputSchema vs shared/mcp/catalog/schemas`);
      const a = t.annotations || {};
      for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint']) assert.equal(typeof a[k], 'boolean', `${t.name} annotations.${k}`);
      assert.ok(a.title || t.title, `${t.name} title`);
      assert.equal(a.readOnlyHint, ['read_room', 'get_task'].includes(t.name), `${t.name} readOnlyHint`);
    }
  });

  test('the committed examples are accepted by the input schemas (sanity of the fixtures)', async () => {
    const { makeAjv } = await import('../lib/validate.mjs');
    const ajv = makeAjv();
    for (const name of TOOL_NAMES) {
      const v = ajv.compile(readSchema(name, 'input'));
      assert.ok(v(readSchema(name, 'example')), `${name}.example.json: ${ajv.errorsText(v.errors)}`);
    }
  });

  describe('lifecycle: bob/reviewer hands off code to alice/builder', () => {
    let task;
    let stepInput;

    test('hand_off_task: routed, the caller is the requester', async () => {
      task = await handOff('alice/builder', {
        deliverable_type: 'code',
        task: `Add a health endpoint ${uniq()}`,
        acceptance_criteria: ['GET /health answers 200', 'Tests pass'],
        context: 'See the API guide.',
        files: ['api/health.go'],
      });
      assert.equal(task.state, 'routed');
      assert.equal(task.requester, 'bob/reviewer');
      assert.equal(task.assignee, 'alice/builder');
      assert.equal(task.project, PROJECT);
      assert.equal(task.waiting_on, null);
      assert.equal(task.result, null);
      assert.deepEqual(task.packet.depends_on, []);
    });

    test('accept_task by the requester is refused; nothing written', async () => {
      await refused('bob', 'accept_task', { task_id: task.id });
      const { task: t, history } = await getTask('bob', task.id);
      assert.equal(t.state, 'routed');
      assert.equal(history.filter((h) => h.action === 'accept').length, 0);
    });

    test('accept_task by the assignee: accepted; again: refused naming "accepted"', async () => {
      const { task: t } = await ok('builder', 'accept_task', { task_id: task.id, note: 'On it.' });
      assert.equal(t.state, 'accepted');
      await refused('builder', 'accept_task', { task_id: task.id }, ['accepted']);
    });

    test('save_checkpoint: working, latest_checkpoint stored', async () => {
      const cp = { task_id: task.id, progress: 'Handler written.', decisions: ['Use net/http.'], files_touched: ['api/health.go'], next_steps: ['Write tests.'], open_questions: [] };
      const { task: t } = await ok('builder', 'save_checkpoint', cp);
      assert.equal(t.state, 'working');
      assert.equal(t.latest_checkpoint.progress, 'Handler written.');
      assert.deepEqual(t.latest_checkpoint.files_touched, ['api/health.go']);
      await refused('bob', 'save_checkpoint', { task_id: task.id, progress: 'not mine' });
    });

    test('request_step with an agent token is refused: only a woken run may ask', async () => {
      const msg = await refused('builder', 'request_step', { tool_name: 'Bash', input: { command: 'echo hi' } });
      assert.match(msg, /run/i);
    });

    test('request_step with a run token: pending → deny; same call → same step; owner refuses → deny with message', async () => {
      const run = admin(['start-run', '--agent', 'alice/builder', '--task', task.id]);
      assert.match(run.run_token, /^prk_r_/);
      agents.run = await connectSdk(stack.url, run.run_token, 'prickle-e2e-run');
      checkRunToolList((await agents.run.client.listTools()).tools);
      stepInput = { command: `git push origin e2e-${uniq()}` };
      const args = { tool_name: 'Bash', input: stepInput, kind: 'outbound', target: 'origin', reason: 'Publish the branch.' };
      const first = await step('run', args);
      assert.equal(first.status, 'pending');
      assert.equal(first.behavior, 'deny');
      assert.match(first.message || '', /waiting/i);
      const again = await step('run', args);
      assert.equal(again.step_id, first.step_id, 'the same call finds the same step');
      const { task: t } = await getTask('bob', task.id);
      assert.equal(t.waiting_on, 'owner_approval');

      admin(['decide-step', '--owner', 'alice', '--task', task.id, '--step', first.step_id, '--refuse', '--message', 'Not on a Friday.']);
      const after = await step('run', args);
      assert.equal(after.step_id, first.step_id);
      assert.equal(after.status, 'refused');
      assert.equal(after.behavior, 'deny');
      assert.match(after.message || '', /Not on a Friday/);
    });

    test('request_step approved: without tool_use_id → deny (left for the permission layer); with it → allow once', async () => {
      const input = { command: `npm publish --tag e2e-${uniq()}` };
      const args = { tool_name: 'Bash', input, kind: 'outbound', target: 'npm', reason: 'Release.' };
      const pending = await step('run', args);
      assert.equal(pending.status, 'pending');
      admin(['decide-step', '--owner', 'alice', '--task', task.id, '--step', pending.step_id, '--approve']);
      const noId = await step('run', args);
      assert.equal(noId.behavior, 'deny');
      assert.match(noId.message || '', /permission layer/i);
      const allow = await step('run', { ...args, tool_use_id: 'toolu_e2e_1' });
      assert.equal(allow.step_id, pending.step_id);
      assert.equal(allow.behavior, 'allow');
      assert.equal(allow.status, 'consumed');
      assert.deepEqual(allow.updatedInput, input);
      const twice = await step('run', { ...args, tool_use_id: 'toolu_e2e_2' });
      assert.notEqual(twice.behavior, 'allow', 'an approved step is allowed once');
    });

    test('evidence rules: notes only for code, item without url/content, provenance owner_approved are refused; nothing written', async () => {
      const before = (await getTask('bob', task.id)).task;
      assert.ok(['working', 'waiting', 'accepted'].includes(before.state), before.state);
      await refused('builder', 'return_result', { task_id: task.id, summary: 'Done.', evidence: [{ kind: 'note', summary: 'Trust me.' }] }, ['code']);
      await rejected('builder', 'return_result', { task_id: task.id, summary: 'Done.', evidence: [{ kind: 'test_output', summary: 'go test passed' }] }, ['url']);
      await rejected('builder', 'return_result', { task_id: task.id, summary: 'Done.', evidence: [{ kind: 'test_output', summary: 'ok', content: 'PASS' }], provenance: 'owner_approved' }, ['provenance']);
      const after = (await getTask('bob', task.id)).task;
      assert.equal(after.state, before.state);
      assert.equal(after.result, null);
    });

    test('return_result: verifying with the result, returned_by the caller', async () => {
      const { task: t } = await ok('builder', 'return_result', {
        task_id: task.id,
        summary: 'Health endpoint added.',
        evidence: [
          { kind: 'test_output', summary: 'go test ./... passed', content: 'ok  api  0.01s' },
          { kind: 'commit', summary: 'abc123', url: 'https://example.com/commit/abc123' },
        ],
      });
      assert.equal(t.state, 'verifying');
      assert.equal(t.result.returned_by, 'alice/builder');
      assert.equal(t.result.provenance, 'agent_generated');
      assert.equal(t.result.evidence.length, 2);
    });

    test('review_result by the assignee is refused', async () => {
      await refused('builder', 'review_result', { task_id: task.id, verdict: 'accept' });
    });

    test('review_result rework (feedback required) → working; return again → verifying; accept → completed', async () => {
      await rejected('bob', 'review_result', { task_id: task.id, verdict: 'rework' }, ['feedback']);
      let { task: t } = await ok('bob', 'review_result', { task_id: task.id, verdict: 'rework', feedback: 'Add a test for HEAD.' });
      assert.equal(t.state, 'working');
      ({ task: t } = await ok('builder', 'return_result', {
        task_id: task.id, summary: 'HEAD covered.', evidence: [{ kind: 'pull_request', summary: 'PR #7', url: 'https://example.com/pr/7' }], provenance: 'from_approved_context',
      }));
      assert.equal(t.state, 'verifying');
      assert.equal(t.result.provenance, 'from_approved_context');
      ({ task: t } = await ok('bob', 'review_result', { task_id: task.id, verdict: 'accept' }));
      assert.equal(t.state, 'completed');
    });

    test('a completed task refuses further moves, naming "completed"', async () => {
      await refused('builder', 'return_result', { task_id: task.id, summary: 'x', evidence: [{ kind: 'commit', summary: 'x', url: 'https://example.com/c/1' }] }, ['completed']);
      await refused('bob', 'cancel_task', { task_id: task.id, reason: 'late' }, ['completed']);
    });

    test('get_task history: every transition, who, from, to', async () => {
      const { task: t, history } = await getTask('builder', task.id);
      assert.equal(t.state, 'completed');
      const find = (action) => history.filter((h) => h.action === action);
      assert.equal(find('hand_off').length, 1);
      assert.equal(find('hand_off')[0].by, 'bob/reviewer');
      assert.equal(find('accept').length, 1);
      assert.deepEqual([find('accept')[0].from, find('accept')[0].to, find('accept')[0].by], ['routed', 'accepted', 'alice/builder']);
      assert.ok(find('checkpoint').length >= 1);
      assert.equal(find('return_result').length, 2);
      assert.equal(find('review_rework').length, 1);
      assert.deepEqual([find('review_rework')[0].from, find('review_rework')[0].to, find('review_rework')[0].by], ['verifying', 'working', 'bob/reviewer']);
      assert.match(find('review_rework')[0].note || '', /HEAD/);
      assert.equal(find('review_accept').length, 1);
      assert.deepEqual([find('review_accept')[0].from, find('review_accept')[0].to], ['verifying', 'completed']);
      // no refused call left a trace
      assert.equal(history.filter((h) => h.to === 'rejected' || h.to === 'cancelled').length, 0);
    });
  });

  test('decline path: the assignee declines a routed task → rejected; the requester cannot decline', async () => {
    const t0 = await handOff('alice/builder', {});
    await refused('bob', 'decline_task', { task_id: t0.id, reason: 'not mine' });
    const { task: t } = await ok('builder', 'decline_task', { task_id: t0.id, reason: 'Out of scope for this agent.' });
    assert.equal(t.state, 'rejected');
    await refused('builder', 'accept_task', { task_id: t0.id }, ['rejected']);
    const { history } = await getTask('bob', t0.id);
    assert.equal(history.filter((h) => h.action === 'decline').length, 1);
  });

  test('decline path from accepted', async () => {
    const t0 = await handOff('alice/writer', {});
    await ok('writer', 'accept_task', { task_id: t0.id });
    const { task: t } = await ok('writer', 'decline_task', { task_id: t0.id, reason: 'Turns out I cannot.' });
    assert.equal(t.state, 'rejected');
  });

  test('cancel path: only the requester cancels an open task → cancelled; then refused naming "cancelled"', async () => {
    const t0 = await handOff('alice/writer', {});
    await refused('writer', 'cancel_task', { task_id: t0.id, reason: 'not mine to cancel' });
    await ok('writer', 'accept_task', { task_id: t0.id });
    const { task: t } = await ok('bob', 'cancel_task', { task_id: t0.id, reason: 'The launch moved.' });
    assert.equal(t.state, 'cancelled');
    await refused('bob', 'cancel_task', { task_id: t0.id, reason: 'again' }, ['cancelled']);
    await refused('writer', 'save_checkpoint', { task_id: t0.id, progress: 'still going' }, ['cancelled']);
  });

  test("wrong-caller refusals name the task's state and who may act", async () => {
    const t0 = await handOff('alice/writer', {});
    const problems = [];
    const expectState = async (who, name, args, state) => {
      const r = await call(who, name, args);
      const text = textOf(r) ?? '';
      if (r.isError !== true) problems.push(`${name} by ${who}: not refused`);
      else if (!text.includes(state)) problems.push(`${name} by ${who} on a ${state} task: "${text}" does not name the state ${state}`);
    };
    await expectState('bob', 'accept_task', { task_id: t0.id }, 'routed');
    await expectState('bob', 'decline_task', { task_id: t0.id, reason: 'x' }, 'routed');
    await expectState('builder', 'cancel_task', { task_id: t0.id, reason: 'x' }, 'routed');
    await ok('writer', 'accept_task', { task_id: t0.id });
    await expectState('bob', 'save_checkpoint', { task_id: t0.id, progress: 'x' }, 'accepted');
    await expectState('bob', 'return_result', { task_id: t0.id, summary: 'x', evidence: [{ kind: 'note', summary: 'x' }] }, 'accepted');
    await ok('writer', 'return_result', { task_id: t0.id, summary: 'x', evidence: [{ kind: 'note', summary: 'x' }] });
    await expectState('writer', 'review_result', { task_id: t0.id, verdict: 'accept' }, 'verifying');
    assert.deepEqual(problems, []);
  });

  test('review reject → rejected', async () => {
    const t0 = await handOff('alice/writer', {});
    await ok('writer', 'accept_task', { task_id: t0.id });
    await ok('writer', 'return_result', { task_id: t0.id, summary: 'Answer: yes.', evidence: [{ kind: 'note', summary: 'Checked the guide.' }] });
    const { task: t } = await ok('bob', 'review_result', { task_id: t0.id, verdict: 'reject', feedback: 'Wrong question.' });
    assert.equal(t.state, 'rejected');
  });

  test('depends_on keeps a task requested until its dependency completes, then it is routed', async () => {
    const dep = await handOff('alice/builder', {});
    const child = await handOff('alice/writer', { depends_on: [dep.id] });
    assert.equal(child.state, 'requested');
    assert.deepEqual(child.packet.depends_on, [dep.id]);
    await refused('writer', 'accept_task', { task_id: child.id }, ['requested']);

    await ok('builder', 'accept_task', { task_id: dep.id });
    await ok('builder', 'return_result', { task_id: dep.id, summary: 'Done.', evidence: [{ kind: 'note', summary: 'Answered inline.' }] });
    assert.equal((await getTask('bob', child.id)).task.state, 'requested', 'still requested while the dependency is verifying');
    const { task: done } = await ok('bob', 'review_result', { task_id: dep.id, verdict: 'accept' });
    assert.equal(done.state, 'completed');

    const routed = await eventually(async () => {
      const { task: t } = await getTask('writer', child.id);
      return t.state === 'routed' ? t : null;
    });
    assert.ok(routed, 'the dependent task was routed after its dependency completed');
    const { history } = await getTask('writer', child.id);
    const route = history.find((h) => h.action === 'route');
    assert.ok(route, 'history records the route');
    assert.deepEqual([route.from, route.to], ['requested', 'routed']);
    const { task: t } = await ok('writer', 'accept_task', { task_id: child.id });
    assert.equal(t.state, 'accepted');
  });

  test("update_pulse shows in a teammate's read_room with the seed's pulse fields", async () => {
    const doing = `Drafting ${uniq()}`;
    const { pulse } = await ok('builder', 'update_pulse', {
      project: PROJECT, availability: 'working', doing, branch: 'e2e/pulse', files: ['site/hero.md'], last_decision: 'Keep it short.',
    });
    assert.equal(pulse.agent_id, 'alice/builder');
    assert.equal(pulse.owner, 'alice');
    assert.equal(pulse.doing, doing);
    const room = await ok('bob', 'read_room', { project: PROJECT });
    assert.equal(room.project, PROJECT);
    const mine = room.pulse.find((p) => p.agent_id === 'alice/builder');
    assert.ok(mine, `bob sees alice/builder in the pulse: ${JSON.stringify(room.pulse)}`);
    assert.equal(mine.doing, doing);
    assert.equal(mine.branch, 'e2e/pulse');
    assert.equal(mine.availability, 'working');
    assert.deepEqual(mine.files, ['site/hero.md']);
    assert.equal(mine.last_decision, 'Keep it short.');
  });

  test('read_room pages with limit/cursor without skipping or repeating a task', async () => {
    const created = [];
    for (let i = 0; i < 5; i++) created.push((await handOff('alice/writer', {})).id);
    const collect = async (limit) => {
      const ids = [];
      let cursor;
      for (let page = 0; page < 200; page++) {
        const room = await ok('bob', 'read_room', { project: PROJECT, role: 'requester', limit, ...(cursor ? { cursor } : {}) });
        assert.ok(room.tasks.length <= limit, `page of ${room.tasks.length} > limit ${limit}`);
        for (const t of room.tasks) assert.equal(t.requester, 'bob/reviewer', 'role requester');
        ids.push(...room.tasks.map((t) => t.id));
        if (!room.next_cursor) return ids;
        cursor = room.next_cursor;
      }
      assert.fail('read_room never ended its pages');
    };
    const all = await collect(100);
    assert.equal(new Set(all).size, all.length, 'no repeats (limit 100)');
    for (const id of created) assert.ok(all.includes(id), `${id} listed`);
    assert.ok(all.indexOf(created[4]) < all.indexOf(created[0]), 'newest first');
    for (const limit of [1, 2, 3]) {
      const paged = await collect(limit);
      assert.equal(new Set(paged).size, paged.length, `no repeats (limit ${limit})`);
      assert.deepEqual(paged, all, `pages of ${limit} list the same tasks in the same order`);
    }
  });

  test('read_room filters by role and states', async () => {
    const t0 = await handOff('alice/writer', {});
    await ok('bob', 'cancel_task', { task_id: t0.id, reason: 'filter check' });
    const room = await ok('bob', 'read_room', { project: PROJECT, states: ['cancelled'], limit: 100 });
    assert.ok(room.tasks.length >= 1);
    for (const t of room.tasks) assert.equal(t.state, 'cancelled');
    assert.ok(room.tasks.some((t) => t.id === t0.id));
    const asAssignee = await ok('writer', 'read_room', { project: PROJECT, role: 'assignee', limit: 100 });
    for (const t of asAssignee.tasks) assert.equal(t.assignee, 'alice/writer');
  });

  test('the seeded example task: get_task works on example-task-id', async () => {
    const { task: t } = await getTask('writer', 'example-task-id');
    assert.equal(t.requester, 'bob/reviewer');
    assert.equal(t.assignee, 'alice/writer');
    assert.equal(t.packet.deliverable_type, 'answer');
  });

  test('unknown tool and schema violations surface as JSON-RPC errors through the SDK', async () => {
    await assert.rejects(call('bob', 'no_such_tool', {}), (e) => e instanceof McpError);
    await assert.rejects(call('bob', 'get_task', { task_id: 'bad id with spaces' }), (e) => e instanceof McpError && e.code === -32602 && /task_id/.test(e.message));
    void textOf;
  });
});
