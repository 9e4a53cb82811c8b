// A runner joins its agent by the owner's sign-in: `prickle-runner login <Prickle URL>` (the binary
// run.sh built) prints a code and a link; headless Chromium at a phone's size plays alice: the sign-in
// link from the dev outbox brings her back to the device page, which shows the runner's code and name;
// she picks alice/writer and allows. The runner keeps the agent token (0600) and claims with it; the
// owners page lists the joined runner, and its Revoke makes the next claim 401. axe-core checks the
// device page. Screenshots: $ARTIFACTS/screenshots/device-*.png.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, statSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, eventually, E2E_DIR, PROJECT, REPO_ROOT, CHROMIUM_NEED, CHROMIUM } from '../lib/env.mjs';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SHOTS = resolve(process.env.ARTIFACTS || resolve(E2E_DIR, 'artifacts'), 'screenshots');
const AXE = resolve(E2E_DIR, 'node_modules/axe-core/axe.min.js');
const PHONE = { width: 390, height: 844 };

const { stack, skipReason } = await loadStack(CHROMIUM_NEED);

function runnerBinary(dir) {
  if (process.env.PRICKLE_RUNNER) return process.env.PRICKLE_RUNNER;
  const bin = join(dir, 'prickle-runner');
  execFileSync('go', ['build', '-o', bin, './infra/cmd/prickle-runner'], { cwd: REPO_ROOT, stdio: 'inherit', timeout: 300_000 });
  return bin;
}

describe('prickle-runner login: a runner joins alice/writer by alice\'s sign-in in Chromium', { skip: skipUnlessStack(skipReason) }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let dir;
  let browser;
  let context;
  let page;
  let login; // the running `prickle-runner login`
  let output = '';
  let exited;
  let token;

  const claim = (t) => fetch(`${base}/runner/claim`, { method: 'POST', headers: { Authorization: `Bearer ${t}` }, body: '{"wait_seconds": 0, "max": 1}' });

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'prickle-device-'));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    context = await browser.newContext({ viewport: PHONE });
    page = await context.newPage();
  });
  after(async () => {
    login?.kill();
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('login prints a short code and the link to the device page', async () => {
    const bin = runnerBinary(dir);
    login = spawn(bin, ['login', base, '--state-dir', join(dir, 'state'), '--name', 'e2e-box', '--config', join(dir, 'none.yaml')],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    login.stdout.on('data', (b) => { output += b; });
    login.stderr.on('data', (b) => { output += b; });
    exited = new Promise((ok) => login.on('exit', (code) => ok(code)));
    const link = await eventually(async () => output.match(/(http\S+\/oauth\/device\?code=([B-Z]{4}-[B-Z]{4}))/));
    assert.ok(link, `no link in ${output}`);
    login.link = link[1];
    login.code = link[2];
    assert.match(output, new RegExp(`code\\s+${login.code}\\s+\\(it works once, for 10 minutes\\)`));
  });

  test('alice signs in from the page, checks the code and the machine, and allows alice/writer', async () => {
    const signin = await page.goto(login.link);
    assert.match(await page.locator('h1').innerText(), /Sign in to join a runner/);
    assert.equal(signin.headers()['x-frame-options'], 'DENY');
    assert.equal(signin.headers()['x-content-type-options'], 'nosniff');
    const before = (await (await fetch(`${base}/dev/outbox.json`)).json()).length;
    await page.locator('#owner').fill('alice');
    await page.locator('#send-link').click();
    await page.waitForLoadState();
    const link = await eventually(async () => {
      const mails = (await (await fetch(`${base}/dev/outbox.json`)).json()).slice(before);
      return mails.find((m) => m.channel === 'email' && m.to === 'alice@example.com')?.links?.find((l) => l.includes('/signin/'));
    });
    assert.ok(link, 'no sign-in link to alice in the outbox');
    await page.goto(link);
    await Promise.all([page.waitForURL(/\/oauth\/device\?code=/), page.locator('#signin-button').click()]);
    assert.equal(await page.locator('#code').inputValue(), login.code);
    assert.equal(await page.locator('#runner-name').innerText(), 'e2e-box');
    assert.equal(await page.locator('input[name="agent"][value^="bob/"]').count(), 0, 'only alice\'s own agents are offered');
    await page.screenshot({ path: resolve(SHOTS, 'device-page.png'), fullPage: true });

    // axe-core on the device page, in a context sharing alice's session (CSP bypassed to inject axe).
    const axeContext = await browser.newContext({ viewport: PHONE, bypassCSP: true, storageState: await context.storageState() });
    try {
      const axePage = await axeContext.newPage();
      await axePage.goto(login.link);
      await axePage.addScriptTag({ path: AXE });
      const res = await axePage.evaluate(async () => await globalThis.axe.run(document, { resultTypes: ['violations'] }));
      const serious = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      assert.deepEqual(serious.map((v) => v.id), [], JSON.stringify(serious, null, 1));
    } finally {
      await axeContext.close();
    }

    await page.locator('input[name="agent"][value="alice/writer"]').check();
    await Promise.all([page.waitForLoadState(), page.locator('#allow').click()]);
    assert.equal(await page.locator('h1').innerText(), 'Runner joined');
    await page.screenshot({ path: resolve(SHOTS, 'device-joined.png'), fullPage: true });
  });

  test('the runner receives alice/writer\'s token, keeps it 0600, and claims with it', async () => {
    assert.equal(await Promise.race([exited, new Promise((ok) => setTimeout(() => ok('timeout'), 30_000))]), 0, output);
    assert.match(output, /Joined: this machine runs alice\/writer/);
    const file = join(dir, 'state', 'agent-token.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const kept = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(kept.agent, 'alice/writer');
    assert.equal(kept.prickle_url, base);
    token = kept.token;
    assert.ok(!output.includes(token), 'the token is never printed');
    const r = await claim(token);
    assert.equal(r.status, 200, await r.text());
  });

  test('the owners page lists the joined runner; Revoke ends its token at once', async () => {
    await page.goto(`${base}/p/${PROJECT}/owners`);
    const row = page.locator('#runners li', { hasText: 'e2e-box' });
    assert.equal(await row.count(), 1, await page.locator('#runners').innerText());
    assert.match(await row.innerText(), /runs alice\/writer/);
    await page.screenshot({ path: resolve(SHOTS, 'device-owners.png'), fullPage: true });
    await Promise.all([page.waitForURL(/done=runner/), row.locator('button').click()]);
    assert.match(await page.locator('#notice').innerText(), /Runner revoked/);
    assert.equal(await page.locator('#runners li', { hasText: 'e2e-box' }).count(), 0);
    assert.equal((await claim(token)).status, 401, 'the revoked runner\'s next claim is refused');
  });
});
