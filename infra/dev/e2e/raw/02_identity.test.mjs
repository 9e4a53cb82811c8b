// Identity comes from the token only; an agent outside the project sees nothing of it.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { loadStack, skipUnlessStack, uniq, PROJECT } from '../lib/env.mjs';
import { rawClient, handOffRaw } from '../lib/rawtools.mjs';
import { textOf } from '../lib/validate.mjs';

const { stack, skipReason } = await loadStack();

describe('identity', { skip: skipUnlessStack(skipReason) }, () => {
  let bob, writer, builder, carol;
  before(async () => {
    bob = await rawClient(stack.url, stack.tokens['bob/reviewer']);
    writer = await rawClient(stack.url, stack.tokens['alice/writer']);
    builder = await rawClient(stack.url, stack.tokens['alice/builder']);
    carol = await rawClient(stack.url, stack.tokens['carol/tester']);
  });

  /** Call with an extra argument naming another agent: either refused as invalid params, or it has no effect on the caller. */
  const withSpoof = async (client, name, args) => {
    const r = await client.raw(name, args);
    if (r.json?.error) {
      assert.equal(r.json.error.code, -32602, r.text);
      return null;
    }
    return client.V.checkOk(name, r.json.result);
  };

  test("hand_off_task: a 'requester' argument does not change the requester", async () => {
    const out = await withSpoof(bob, 'hand_off_task', {
      project: PROJECT, assignee: 'alice/builder', requester: 'alice/writer', caller: 'alice/writer', agent_id: 'alice/writer', owner: 'alice',
      packet: { task: `spoof ${uniq()}`, deliverable_type: 'answer', acceptance_criteria: ['x'], requester: 'alice/writer' },
    });
    if (out) assert.equal(out.task.requester, 'bob/reviewer');
    // The packet has additionalProperties: false, so the nested 'requester' is invalid: retry without it.
    const out2 = await withSpoof(bob, 'hand_off_task', {
      project: PROJECT, assignee: 'alice/builder', requester: 'alice/writer', agent_id: 'alice/writer',
      packet: { task: `spoof ${uniq()}`, deliverable_type: 'answer', acceptance_criteria: ['x'] },
    });
    if (out2) {
      assert.equal(out2.task.requester, 'bob/reviewer');
      // alice/writer, named as requester, cannot act as requester of it
      await writer.refused('cancel_task', { task_id: out2.task.id, reason: 'I am the requester?' });
      const { task } = await bob.ok('cancel_task', { task_id: out2.task.id, reason: 'cleanup' });
      assert.equal(task.state, 'cancelled');
    }
  });

  test("update_pulse: an 'agent_id' argument does not change whose pulse it is", async () => {
    const doing = `spoofing ${uniq()}`;
    const out = await withSpoof(bob, 'update_pulse', { project: PROJECT, doing, agent_id: 'alice/writer', owner: 'alice' });
    if (out) {
      assert.equal(out.pulse.agent_id, 'bob/reviewer');
      assert.equal(out.pulse.owner, 'bob');
    }
    const room = await writer.ok('read_room', { project: PROJECT });
    const aw = room.pulse.find((p) => p.agent_id === 'alice/writer');
    assert.ok(!aw || aw.doing !== doing, "alice/writer's pulse was not written by bob");
  });

  test("accept_task: naming the assignee does not let another agent accept", async () => {
    const t = await handOffRaw(bob, 'alice/builder');
    const r = await writer.raw('accept_task', { task_id: t.id, assignee: 'alice/builder', agent_id: 'alice/builder' });
    if (!r.json.error) {
      assert.equal(r.json.result.isError, true, r.text);
    }
    const { task, history } = await bob.ok('get_task', { task_id: t.id });
    assert.equal(task.state, 'routed');
    assert.equal(history.filter((h) => h.action === 'accept').length, 0);
  });

  describe('carol/tester (only in mobile-app) sees nothing of website-v2', () => {
    const notFound = (name, result) => {
      assert.equal(result.isError, true, `${name}: ${JSON.stringify(result).slice(0, 500)}`);
      const text = textOf(result);
      assert.match(text, /not found|\bno (task|project)\b/i, `${name}: refused as not found: ${text}`);
      return text;
    };

    test('read_room website-v2 is refused as not found, like a project that does not exist', async () => {
      const a = notFound('read_room', await carol.result('read_room', { project: PROJECT }));
      const b = notFound('read_room', await carol.result('read_room', { project: 'no-such-project-e2e' }));
      assert.equal(a.replaceAll(PROJECT, 'P'), b.replaceAll('no-such-project-e2e', 'P'), 'same answer for hidden and missing projects');
      assert.ok(!/alice|bob/.test(a), `no member names leak: ${a}`);
    });

    test('get_task on a website-v2 task is refused as not found, like a missing task', async () => {
      const a = notFound('get_task', await carol.result('get_task', { task_id: 'example-task-id' }));
      const b = notFound('get_task', await carol.result('get_task', { task_id: 'no-such-task-e2e' }));
      assert.equal(a.replaceAll('example-task-id', 'T'), b.replaceAll('no-such-task-e2e', 'T'), 'same answer for hidden and missing tasks');
    });

    test('carol cannot move, hand off into, or post pulse to website-v2', async () => {
      const t = await handOffRaw(bob, 'alice/writer');
      for (const [name, args] of [
        ['accept_task', { task_id: t.id }],
        ['decline_task', { task_id: t.id, reason: 'no' }],
        ['cancel_task', { task_id: t.id, reason: 'no' }],
        ['save_checkpoint', { task_id: t.id, progress: 'x' }],
        ['review_result', { task_id: t.id, verdict: 'accept' }],
        ['return_result', { task_id: t.id, summary: 'x', evidence: [{ kind: 'note', summary: 'x' }] }],
      ]) notFound(name, await carol.result(name, args));
      const h = await carol.result('hand_off_task', { project: PROJECT, assignee: 'alice/writer', packet: { task: 'carol was here', deliverable_type: 'answer', acceptance_criteria: ['x'] } });
      assert.equal(h.isError, true);
      const p = await carol.result('update_pulse', { project: PROJECT, doing: 'carol was here' });
      assert.equal(p.isError, true);
      const room = await bob.ok('read_room', { project: PROJECT, limit: 100 });
      assert.ok(!room.pulse.some((x) => x.agent_id === 'carol/tester'), 'no carol pulse in website-v2');
      assert.ok(!room.tasks.some((x) => x.packet.task === 'carol was here'));
      assert.equal((await bob.ok('get_task', { task_id: t.id })).task.state, 'routed');
    });

    test("carol's own project works and shows nothing of website-v2", async () => {
      const room = await carol.ok('read_room', { project: 'mobile-app', limit: 100 });
      assert.equal(room.project, 'mobile-app');
      for (const t of room.tasks) assert.equal(t.project, 'mobile-app');
      for (const p of room.pulse) assert.equal(p.project, 'mobile-app');
    });
  });
});
