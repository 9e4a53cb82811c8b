// The README's way to connect Claude Code (2.1.328, pinned in package.json) to a running stack:
// `claude mcp add --transport http prickle <url> --header "Authorization: Bearer <token>"` with a
// seeded agent's token, then `claude mcp list` says it is connected, and a `claude -p` run sends
// the model Prickle's 11 tools. No account, no network: the model is the scripted stand-in of
// the Messages API (standin.mjs), here answering text only. Also run against `sam local start-api`
// (`make e2e-sam`).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStack, skipUnlessStack, TOOL_NAMES, npmNeed } from '../lib/env.mjs';
import { CLAUDE, runClaude } from '../lib/claude.mjs';
import { startStandIn } from './standin.mjs';

const RUN_TIMEOUT_MS = 180_000;

const { stack, skipReason } = await loadStack(npmNeed(CLAUDE, 'Claude Code'));

/** Runs Claude Code once in `cwd` with its own HOME, bounded by RUN_TIMEOUT_MS. */
const claude = (args, opts) => runClaude(args, { ...opts, timeoutMs: RUN_TIMEOUT_MS });

describe('claude mcp add with a seeded token', { skip: skipUnlessStack(skipReason) }, () => {
  let dir;
  let env;
  let model;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prickle-e2e-mcp-add-'));
    model = await startStandIn(() => [{ type: 'text', text: 'Prickle stand-in.' }]);
    env = { PATH: process.env.PATH, HOME: join(dir, 'home'), ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'test',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ENABLE_TOOL_SEARCH: 'false', MCP_TIMEOUT: '120000' };
  });
  after(async () => {
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('added, connected, and the model is sent the 11 tools', async () => {
    const add = await claude(['mcp', 'add', '--transport', 'http', 'prickle', stack.url,
      '--header', `Authorization: Bearer ${stack.tokens['alice/writer']}`], { cwd: dir, env });
    assert.equal(add.code, 0, `claude mcp add exited ${add.code}: ${add.stderr}${add.stdout}`);

    const list = await claude(['mcp', 'list'], { cwd: dir, env });
    assert.equal(list.code, 0, `claude mcp list exited ${list.code}: ${list.stderr}`);
    assert.match(list.stdout, /prickle: .*✔ Connected/, `claude mcp list: ${list.stdout}`);

    const run = await claude(['-p', 'Which Prickle tools do you have?', '--output-format', 'json'], { cwd: dir, env });
    assert.equal(run.signal, null, `claude was killed after ${RUN_TIMEOUT_MS} ms: ${run.stderr}`);
    assert.equal(run.code, 0, `claude -p exited ${run.code}: ${run.stderr}\n${run.stdout.slice(0, 2000)}`);
    const main = model.requests.find((r) => (r.tools || []).some((t) => t.name.startsWith('mcp__prickle__')));
    assert.ok(main, `a request with Prickle's tools among ${model.requests.length}`);
    const names = main.tools.map((t) => t.name).filter((n) => n.startsWith('mcp__prickle__')).sort();
    assert.deepEqual(names, TOOL_NAMES.map((t) => `mcp__prickle__${t}`).sort());
  });
});
