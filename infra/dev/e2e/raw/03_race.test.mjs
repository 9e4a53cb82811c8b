// Concurrent conflicting transitions on one task: exactly one wins, history shows one transition.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { loadStack, skipUnlessStack } from '../lib/env.mjs';
import { rawClient, handOffRaw } from '../lib/rawtools.mjs';
import { textOf } from '../lib/validate.mjs';

const { stack, skipReason } = await loadStack();

describe('races', { skip: skipUnlessStack(skipReason) }, () => {
  let bob, builder;
  before(async () => {
    bob = await rawClient(stack.url, stack.tokens['bob/reviewer']);
    builder = await rawClient(stack.url, stack.tokens['alice/builder']);
  });

  const tally = (results) => {
    const wins = results.filter((r) => r.json?.result && !r.json.result.isError);
    const losses = results.filter((r) => !(r.json?.result && !r.json.result.isError));
    return { wins, losses };
  };

  test('20 parallel accept_task by the assignee: one accepted, 19 clear refusals, one history entry', async () => {
    const t = await handOffRaw(bob, 'alice/builder');
    const results = await Promise.all(Array.from({ length: 20 }, () => builder.raw('accept_task', { task_id: t.id })));
    const { wins, losses } = tally(results);
    assert.equal(wins.length, 1, `exactly one success, got ${wins.length}: ${wins.map((w) => w.text).join('\n')}`);
    builder.V.checkOk('accept_task', wins[0].json.result);
    for (const l of losses) {
      assert.equal(l.json?.result?.isError, true, `a loser is a domain refusal (isError), got HTTP ${l.status} ${l.text.slice(0, 300)}`);
      assert.match(textOf(l.json.result), /accepted/, `the refusal names the state: ${textOf(l.json.result)}`);
    }
    const { task, history } = await bob.ok('get_task', { task_id: t.id });
    assert.equal(task.state, 'accepted');
    assert.equal(history.filter((h) => h.action === 'accept').length, 1, JSON.stringify(history));
  });

  test('10 cancel_task (requester) racing 10 decline_task (assignee) on a routed task: exactly one wins', async () => {
    const t = await handOffRaw(bob, 'alice/builder');
    const calls = [];
    for (let i = 0; i < 10; i++) {
      calls.push(bob.raw('cancel_task', { task_id: t.id, reason: `cancel ${i}` }));
      calls.push(builder.raw('decline_task', { task_id: t.id, reason: `decline ${i}` }));
    }
    const results = await Promise.all(calls);
    const { wins, losses } = tally(results);
    assert.equal(wins.length, 1, `exactly one success, got ${wins.length}`);
    for (const l of losses) assert.equal(l.json?.result?.isError, true, l.text.slice(0, 300));
    const { task, history } = await bob.ok('get_task', { task_id: t.id });
    assert.ok(['cancelled', 'rejected'].includes(task.state), task.state);
    assert.equal(history.filter((h) => h.action === 'cancel' || h.action === 'decline').length, 1, JSON.stringify(history));
  });

  test('20 parallel return_result on one working task: one verifying, one history entry', async () => {
    const t = await handOffRaw(bob, 'alice/builder');
    await builder.ok('accept_task', { task_id: t.id });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => builder.raw('return_result', {
      task_id: t.id, summary: `result ${i}`, evidence: [{ kind: 'note', summary: `n${i}` }],
    })));
    const { wins } = tally(results);
    assert.equal(wins.length, 1, `exactly one success, got ${wins.length}`);
    const { task, history } = await bob.ok('get_task', { task_id: t.id });
    assert.equal(task.state, 'verifying');
    assert.equal(history.filter((h) => h.action === 'return_result').length, 1);
    assert.equal(task.result.summary, wins[0].json.result.structuredContent.task.result.summary, 'the stored result is the winner\'s');
  });
});
