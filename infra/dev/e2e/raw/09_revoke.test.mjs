// Token lifecycle through the admin CLI: a minted token works, a revoked one gets 401.
// Runs last: it revokes carol/tester's tokens (the seeded one included).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadStack, skipUnlessStack, admin } from '../lib/env.mjs';
import { modernCall, post, bearer, newId } from '../lib/wire.mjs';

const { stack, skipReason } = await loadStack();

describe('token revocation', { skip: skipUnlessStack(skipReason) }, () => {
  test('mint-token works at once; after revoke-tokens both the minted and the seeded token get 401', async () => {
    const minted = admin(['mint-token', '--agent', 'carol/tester']);
    assert.match(minted.token, /^prk_a_/);
    assert.notEqual(minted.token, stack.tokens['carol/tester']);
    const ok = await modernCall(stack.url, minted.token, 'tools/list', {});
    assert.equal(ok.status, 200, ok.text);
    const ok2 = await modernCall(stack.url, stack.tokens['carol/tester'], 'tools/list', {});
    assert.equal(ok2.status, 200, ok2.text);

    admin(['revoke-tokens', '--agent', 'carol/tester']);
    for (const token of [minted.token, stack.tokens['carol/tester']]) {
      const r = await modernCall(stack.url, token, 'tools/list', {});
      assert.equal(r.status, 401, `revoked token: HTTP ${r.status} ${r.text}`);
      assert.match(r.headers.get('www-authenticate') || '', /^Bearer\b/i);
      const r2 = await post(stack.url, { jsonrpc: '2.0', id: newId(), method: 'tools/call', params: { name: 'read_room', arguments: { project: 'mobile-app' } } }, { ...bearer(token), 'MCP-Protocol-Version': '2025-11-25' });
      assert.equal(r2.status, 401, `revoked token (handshake era): HTTP ${r2.status}`);
    }
    // other agents are unaffected
    const bob = await modernCall(stack.url, stack.tokens['bob/reviewer'], 'tools/list', {});
    assert.equal(bob.status, 200);
  });
});
