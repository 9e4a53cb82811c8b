// Approval pages in headless Chromium at a phone's size (390×844): the link an owner gets opens the
// exact call, fetching it never decides, Approve decides once, a reload says who decided and when.
//
// Stands up its own server (infra/dev/e2e/webserver, under infra/dev/emulator/with-emulator.sh): fresh tables,
// a run asking for `git push origin main`, a result waiting for its owner, and the approval links
// taken from the dev outbox the way the owner gets them. Screenshots: $ARTIFACTS/screenshots/approval-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';
import { E2E_DIR, REPO_ROOT, IN_CI, CHROMIUM } from '../lib/env.mjs';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SHOTS = resolve(process.env.ARTIFACTS || resolve(E2E_DIR, 'artifacts'), 'screenshots');
const VIEWPORT = { width: 390, height: 844 };

function missing() {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
  if (!existsSync(resolve(REPO_ROOT, '.venv/bin/python'))) return 'no project venv (.venv) for the emulator';
  return null;
}
const skipReason = missing();
if (skipReason && IN_CI) throw new Error(`CI: ${skipReason}`);

let server; let links; let browser;

/** Start the web server on the emulator and read the links it prints. */
function startServer() {
  return new Promise((resolveLinks, reject) => {
    server = spawn('bash', [resolve(REPO_ROOT, 'infra/dev/emulator/with-emulator.sh'), 'go', 'run', './infra/dev/e2e/webserver'],
      { cwd: REPO_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    server.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
    const timer = setTimeout(() => reject(new Error(`webserver not ready after 240 s:\n${stderr}`)), 240_000);
    server.on('exit', (code) => { clearTimeout(timer); reject(new Error(`webserver exited (${code}):\n${stderr}`)); });
    createInterface({ input: server.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      clearTimeout(timer);
      resolveLinks(JSON.parse(line));
    });
  });
}

before(async () => {
  if (skipReason) return;
  mkdirSync(SHOTS, { recursive: true });
  links = await startServer();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
});

after(async () => {
  await browser?.close();
  if (server?.pid) { try { process.kill(-server.pid, 'SIGTERM'); } catch { /* already gone */ } }
});

async function phonePage() {
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  return context.newPage();
}

/** The page fits the phone's width, and its buttons are large enough to tap. */
async function assertPhoneFriendly(page) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the 390px viewport`);
  for (const id of ['#approve', '#refuse']) {
    const box = await page.locator(id).boundingBox();
    assert.ok(box && box.height >= 44 && box.width >= 44, `${id} is ${JSON.stringify(box)}: too small to tap`);
  }
}

test('step approval link: GET never decides, Approve decides once, reload says who decided', { skip: skipReason || false }, async () => {
  for (let i = 0; i < 3; i++) {
    const r = await fetch(links.step_url);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-security-policy'), /default-src 'self'/);
    assert.equal(r.headers.get('x-frame-options'), 'DENY');
    assert.equal(r.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(r.headers.get('cache-control'), 'no-store');
    assert.match(await r.text(), /<dd id="status">pending<\/dd>/, `fetch ${i + 1} found the step no longer pending`);
  }

  const page = await phonePage();
  const resp = await page.goto(links.step_url);
  assert.equal(resp.status(), 200);
  assert.equal((await page.locator('#tool-name').textContent()).trim(), 'Bash');
  assert.match(await page.locator('#input').textContent(), /"command": "git push origin main"/);
  assert.equal((await page.locator('#kind').textContent()).trim(), 'outbound');
  assert.equal((await page.locator('#target').textContent()).trim(), 'origin');
  assert.equal((await page.locator('#reason').textContent()).trim(), 'Publish the reviewed branch.');
  assert.equal((await page.locator('#agent').textContent()).trim(), 'alice/writer');
  assert.match(await page.locator('#task').textContent(), /tsk_e2e_push/);
  assert.equal((await page.locator('#status').textContent()).trim(), 'pending');
  await assertPhoneFriendly(page);
  await page.screenshot({ path: resolve(SHOTS, 'approval-step-pending.png'), fullPage: true });

  await page.locator('#message').fill('Go ahead, once.');
  await Promise.all([page.waitForURL(/\?done=1$/), page.locator('#approve').click()]);
  assert.equal((await page.locator('h1').textContent()).trim(), 'Your decision is recorded');
  assert.match(await page.locator('#decided').textContent(), /^Already decided by alice at \d{4}-\d\d-\d\dT[\d:]+Z: approved\. Message: "Go ahead, once\."$/);
  assert.equal((await page.locator('#status').textContent()).trim(), 'approved');
  assert.equal(await page.locator('#approve').count(), 0, 'the decided page still offers Approve');
  await page.screenshot({ path: resolve(SHOTS, 'approval-step-approved.png'), fullPage: true });

  await page.reload();
  assert.match(await page.locator('#decided').textContent(), /^Already decided by alice at \d{4}-\d\d-\d\dT[\d:]+Z: approved/);
  assert.equal(await page.locator('#approve').count(), 0);
  await page.goto(links.step_url);
  assert.match(await page.locator('#decided').textContent(), /^Already decided by alice at /);
  await page.screenshot({ path: resolve(SHOTS, 'approval-step-already-decided.png'), fullPage: true });
  await page.context().close();
});

test('result approval link: summary and evidence, Refuse with a message', { skip: skipReason || false }, async () => {
  const page = await phonePage();
  assert.equal((await page.goto(links.result_url)).status(), 200);
  assert.equal((await page.locator('#summary').textContent()).trim(), 'Pricing page built; all tests pass.');
  assert.equal(await page.locator('#evidence a[href="https://github.com/acme/site/pull/12"]').count(), 1);
  assert.match(await page.locator('#evidence').textContent(), /go test \.\/\.\.\./);
  assert.equal((await page.locator('#provenance').textContent()).trim(), 'agent_generated');
  await assertPhoneFriendly(page);
  await page.screenshot({ path: resolve(SHOTS, 'approval-result-pending.png'), fullPage: true });

  await page.locator('#message').fill('The footer overlaps on mobile.');
  await Promise.all([page.waitForURL(/\?done=1$/), page.locator('#refuse').click()]);
  assert.match(await page.locator('#decided').textContent(), /^Already decided by alice at .*: refused: the task went back to working\. Message: "The footer overlaps on mobile\."$/);
  await page.screenshot({ path: resolve(SHOTS, 'approval-result-refused.png'), fullPage: true });
  await page.context().close();
});

test('tampered link is refused with 403, expired wording is not shown', { skip: skipReason || false }, async () => {
  const page = await phonePage();
  const u = new URL(links.step_url);
  const token = u.pathname.split('/').pop();
  const [payload, sig] = token.split('.');
  const flipped = payload.slice(0, 10) + (payload[10] === 'A' ? 'B' : 'A') + payload.slice(11);
  const resp = await page.goto(`${u.origin}/a/${flipped}.${sig}`);
  assert.equal(resp.status(), 403);
  assert.match(await page.locator('h1').textContent(), /not valid/);
  await page.screenshot({ path: resolve(SHOTS, 'approval-tampered.png'), fullPage: true });
  await page.context().close();
});

test('dev outbox lists the owner\'s messages with working links', { skip: skipReason || false }, async () => {
  const msgs = await (await fetch(`${links.base_url}/dev/outbox.json`)).json();
  const step = msgs.find((m) => m.channel === 'email' && m.links[0] === links.step_url);
  assert.ok(step, 'the step email is in the outbox');
  assert.deepEqual(Object.keys(step).sort(), ['at', 'body', 'channel', 'links', 'subject', 'text', 'to']);
  assert.match(step.text, /git push origin main/);
  const updated = msgs.find((m) => m.channel === 'slack' && m.subject.startsWith('updated: '));
  assert.ok(updated, 'the Slack message was updated after the decision');
  const page = await phonePage();
  await page.goto(links.outbox_url);
  assert.ok(await page.locator(`a[href="${links.step_url}"]`).count() >= 1);
  await page.screenshot({ path: resolve(SHOTS, 'approval-dev-outbox.png'), fullPage: true });
  await page.context().close();
});
