// Connect from the web: the official TypeScript SDK's client auth (`auth()`
// with an OAuthClientProvider) discovers the authorization server from the 401 of /mcp, registers
// itself (RFC 7591), sends the owner to authorize with PKCE, and exchanges the code; headless
// Chromium at a phone's size plays alice: the sign-in link from the dev outbox, then the consent page.
// Then the SDK client lists tools and reads the room as the agent alice chose. axe-core checks the
// consent and connected-applications pages. Last, Sign out everywhere ends what alice's sessions
// connected: the connector's refresh token is refused and its access token gets 401 on /mcp.
// Screenshots: $ARTIFACTS/screenshots/oauth-*.png.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createServer } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth, discoverAuthorizationServerMetadata, startAuthorization, exchangeAuthorization, refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { connectSdk } from '../lib/sdk.mjs';
import { chromium } from 'playwright-core';
import { loadStack, skipUnlessStack, eventually, E2E_DIR, PROJECT, CHROMIUM_NEED, CHROMIUM } from '../lib/env.mjs';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SHOTS = resolve(process.env.ARTIFACTS || resolve(E2E_DIR, 'artifacts'), 'screenshots');
const AXE = resolve(E2E_DIR, 'node_modules/axe-core/axe.min.js');
const PHONE = { width: 390, height: 844 };
let CALLBACK; // the connector's callback: a listener on loopback, started before the tests

const { stack, skipReason } = await loadStack(CHROMIUM_NEED);

/** An in-memory OAuthClientProvider, as a web connector keeps it. */
function memoryProvider() {
  const p = {
    saved: {}, authorizationUrl: null,
    get redirectUrl() { return CALLBACK; },
    get clientMetadata() {
      return { client_name: 'Prickle e2e connector', redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'], token_endpoint_auth_method: 'none' };
    },
    state: () => 'e2e-state-0123456789',
    clientInformation: () => p.saved.client,
    saveClientInformation: (c) => { p.saved.client = c; },
    tokens: () => p.saved.tokens,
    saveTokens: (t) => { p.saved.tokens = t; },
    redirectToAuthorization: (u) => { p.authorizationUrl = new URL(u); },
    saveCodeVerifier: (v) => { p.saved.verifier = v; },
    codeVerifier: () => p.saved.verifier,
  };
  return p;
}

describe('connect from the web: OAuth through the TypeScript SDK and Chromium', { skip: skipUnlessStack(skipReason) }, () => {
  const base = stack?.url.replace(/\/mcp$/, '');
  let browser;
  let context;
  let page;
  let callback;
  const provider = memoryProvider();
  let documentTokens; // the metadata-document client's tokens, ended by Sign out everywhere

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    context = await browser.newContext({ viewport: PHONE });
    page = await context.newPage();
    // The connector's callback: Chromium is sent there with the code.
    // It also serves the client ID metadata document of the second client (the stack fetches
    // loopback documents under PRICKLE_OAUTH_LOOPBACK_DOCUMENTS=1, which run.sh sets).
    callback = createServer((req, res) => {
      if (req.url === '/client.json') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ client_id: `http://127.0.0.1:${callback.address().port}/client.json`, client_name: 'Document connector',
          redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('connected');
    });
    await new Promise((ok) => callback.listen(0, '127.0.0.1', ok));
    CALLBACK = `http://127.0.0.1:${callback.address().port}/oauth-callback`;
  });
  after(async () => { await browser?.close(); callback?.close(); });

  test('the 401 of /mcp names the protected-resource metadata, served at both well-known paths', async () => {
    const r = await fetch(stack.url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) });
    assert.equal(r.status, 401);
    const challenge = r.headers.get('www-authenticate');
    assert.match(challenge, new RegExp(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`));
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const m = await (await fetch(base + path)).json();
      assert.equal(m.resource, stack.url);
      assert.deepEqual(m.authorization_servers, [base]);
    }
    const as = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json();
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(as.token_endpoint_auth_methods_supported, ['none']);
  });

  test('auth() discovers, registers and sends the owner to authorize with PKCE S256 and the resource', async () => {
    assert.equal(await auth(provider, { serverUrl: stack.url }), 'REDIRECT');
    assert.ok(provider.saved.client?.client_id?.startsWith('prk_cl_'), `registered ${JSON.stringify(provider.saved.client)}`);
    const u = provider.authorizationUrl;
    assert.equal(u.origin + u.pathname, `${base}/oauth/authorize`);
    assert.equal(u.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(u.searchParams.get('resource'), stack.url);
  });

  test('alice signs in with the link from the outbox, consents as alice/writer on a phone, and the code comes back', async () => {
    const signin = await page.goto(provider.authorizationUrl.href);
    assert.match(await page.locator('h1').innerText(), /Sign in to connect Prickle e2e connector/);
    assert.equal(signin.headers()['x-content-type-options'], 'nosniff', 'the OAuth sign-in page is nosniff');
    await page.screenshot({ path: resolve(SHOTS, 'oauth-signin.png'), fullPage: true });
    const before = (await (await fetch(`${base}/dev/outbox.json`)).json()).length;
    await page.locator('#owner').fill('alice');
    await page.locator('#send-link').click();
    await page.waitForLoadState();
    // notify sends the link off the event bus, after the form's answer: wait for it.
    let mails = [];
    const link = await eventually(async () => {
      mails = (await (await fetch(`${base}/dev/outbox.json`)).json()).slice(before);
      return mails.find((m) => m.channel === 'email' && m.to === 'alice@example.com')?.links?.find((l) => l.includes('/signin/'));
    });
    assert.ok(link, `no sign-in link to alice in ${JSON.stringify(mails)}`);
    await page.goto(link);
    await Promise.all([page.waitForURL(/\/oauth\/consent\//), page.locator('#signin-button').click()]);
    assert.equal(await page.locator('h1').innerText(), 'Connect Prickle e2e connector?');
    assert.equal(await page.locator('#redirect-host').innerText(), new URL(CALLBACK).host);
    assert.match(await page.locator('#registration').innerText(), /dynamic client registration/);
    await page.screenshot({ path: resolve(SHOTS, 'oauth-consent.png'), fullPage: true });
    await page.locator('input[name="agent"][value="alice/writer"]').check();
    await Promise.all([page.waitForURL((u) => u.href.startsWith(CALLBACK)), page.locator('#allow').click()]);
    const back = new URL(page.url());
    assert.equal(back.searchParams.get('state'), 'e2e-state-0123456789');
    provider.code = back.searchParams.get('code');
    assert.ok(provider.code, `no code in ${back}`);
  });

  test('auth() exchanges the code; the SDK client lists tools and reads the room as alice/writer', async () => {
    assert.equal(await auth(provider, { serverUrl: stack.url, authorizationCode: provider.code }), 'AUTHORIZED');
    assert.ok(provider.saved.tokens?.access_token?.startsWith('prk_o_'));
    assert.ok(provider.saved.tokens?.refresh_token);
    const client = new Client({ name: 'prickle-e2e-oauth', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.url), { authProvider: provider }));
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'read_room'));
      // The suites share one stack: the entry keeps alice/writer's seeded task, which the pages suite links.
      const pulse = await client.callTool({ name: 'update_pulse', arguments: { project: PROJECT, doing: 'connected from the web', task_id: 'example-task-id' } });
      assert.equal(pulse.structuredContent?.pulse?.agent_id, 'alice/writer');
      const room = await client.callTool({ name: 'read_room', arguments: { project: PROJECT } });
      assert.ok(!room.isError, JSON.stringify(room.content));
      assert.ok(room.structuredContent.pulse.some((e) => e.agent_id === 'alice/writer' && e.doing === 'connected from the web'),
        `the room's pulse: ${JSON.stringify(room.structuredContent.pulse)}`);
    } finally {
      await client.close();
    }
  });

  test('connected applications lists it; axe-core finds no serious violation on the OAuth pages', async () => {
    const clients = await page.goto(`${base}/oauth/clients`);
    assert.match(await page.locator('#grants').innerText(), /Prickle e2e connector acts as alice\/writer/);
    assert.equal(clients.headers()['x-content-type-options'], 'nosniff', 'the connected-applications page is nosniff');
    const metadata = await fetch(`${base}/.well-known/oauth-authorization-server`);
    assert.equal(metadata.headers.get('x-content-type-options'), 'nosniff', 'so is the metadata JSON');
    await page.screenshot({ path: resolve(SHOTS, 'oauth-clients.png'), fullPage: true });
    // A fresh authorization for the consent page's audit (the first one was used).
    const second = memoryProvider();
    assert.equal(await auth(second, { serverUrl: stack.url }), 'REDIRECT');
    const axeContext = await browser.newContext({ viewport: PHONE, bypassCSP: true, storageState: await context.storageState() });
    const problems = [];
    for (const url of [second.authorizationUrl.href, `${base}/oauth/clients`]) {
      const p = await axeContext.newPage();
      await p.goto(url);
      await p.addScriptTag({ path: AXE });
      const result = await p.evaluate(() => window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } }));
      for (const v of result.violations) {
        if (v.impact === 'serious' || v.impact === 'critical') problems.push(`${url}: ${v.id} (${v.impact}) ${v.help}`);
      }
      await p.close();
    }
    await axeContext.close();
    assert.deepEqual(problems, [], problems.join('\n'));
  });

  test('Disconnect ends the token at once: /mcp answers 401', async () => {
    await page.goto(`${base}/oauth/clients`);
    await Promise.all([page.waitForURL(`${base}/oauth/clients`), page.locator('#grants button').first().click()]);
    const r = await fetch(stack.url, { method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${provider.saved.tokens.access_token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) });
    assert.equal(r.status, 401);
  });

  test('a client ID metadata document client (served on loopback) connects without registering, as alice/writer', async () => {
    const clientId = `http://127.0.0.1:${callback.address().port}/client.json`;
    const metadata = await discoverAuthorizationServerMetadata(base);
    assert.equal(metadata.client_id_metadata_document_supported, true);
    const clientInformation = { client_id: clientId };
    const { authorizationUrl, codeVerifier } = await startAuthorization(base, { metadata, clientInformation, redirectUrl: CALLBACK,
      scope: 'prickle', state: 'e2e-doc-state-0123456', resource: new URL(stack.url) });
    await page.goto(authorizationUrl.href);
    assert.equal(await page.locator('h1').innerText(), 'Connect Document connector?');
    assert.match(await page.locator('#registration').innerText(), /client ID metadata document at http:\/\/127\.0\.0\.1/);
    await page.locator('input[name="agent"][value="alice/writer"]').check();
    await Promise.all([page.waitForURL((u) => u.href.startsWith(CALLBACK)), page.locator('#allow').click()]);
    const code = new URL(page.url()).searchParams.get('code');
    const tokens = await exchangeAuthorization(base, { metadata, clientInformation, authorizationCode: code, codeVerifier, redirectUri: CALLBACK, resource: new URL(stack.url) });
    assert.ok(tokens.access_token.startsWith('prk_o_'));
    const { client } = await connectSdk(stack.url, tokens.access_token, 'prickle-e2e-oauth-doc');
    try {
      const pulse = await client.callTool({ name: 'update_pulse', arguments: { project: PROJECT, doing: 'connected by document', task_id: 'example-task-id' } });
      assert.equal(pulse.structuredContent?.pulse?.agent_id, 'alice/writer');
    } finally {
      await client.close();
    }
    documentTokens = tokens;
  });

  test('Sign out everywhere disconnects what the sessions connected: the refresh token is refused, /mcp answers 401', async () => {
    // Whoever holds a session of alice's (a stranger who signed in as her, say) connects a client as alice/writer.
    const held = memoryProvider();
    assert.equal(await auth(held, { serverUrl: stack.url }), 'REDIRECT');
    await page.goto(held.authorizationUrl.href);
    await page.locator('input[name="agent"][value="alice/writer"]').check();
    await Promise.all([page.waitForURL((u) => u.href.startsWith(CALLBACK)), page.locator('#allow').click()]);
    assert.equal(await auth(held, { serverUrl: stack.url, authorizationCode: new URL(page.url()).searchParams.get('code') }), 'AUTHORIZED');
    const metadata = await discoverAuthorizationServerMetadata(base);
    const refresh = (refreshToken) => refreshAuthorization(base, { metadata, clientInformation: held.saved.client, refreshToken, resource: new URL(stack.url) });
    const rotated = await refresh(held.saved.tokens.refresh_token);
    assert.ok(rotated.access_token.startsWith('prk_o_'), 'the refresh token rotates before alice signs out');
    const mcp = (token) => fetch(stack.url, { method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) });
    assert.equal((await mcp(rotated.access_token)).status, 200);

    // alice signs out everywhere: the client's tokens end with her sessions.
    await page.goto(`${base}/`);
    await Promise.all([page.waitForURL(/\/(signout-everywhere|signin)$/), page.getByRole('button', { name: 'Sign out everywhere' }).click()]);
    assert.equal((await context.cookies()).filter((c) => c.name === 'prickle_session').length, 0, 'the session cookie is gone');
    await assert.rejects(refresh(rotated.refresh_token), (e) => /invalid_grant|inactive|revoked/i.test(`${e.constructor?.name} ${e.errorCode ?? ''} ${e.message}`),
      'the refresh token after sign out everywhere');
    assert.equal((await mcp(rotated.access_token)).status, 401, 'the access token after sign out everywhere');
    assert.equal((await mcp(documentTokens.access_token)).status, 401, "the document client's access token after sign out everywhere");

    // The page says what it ended.
    assert.equal(await page.locator('h1').innerText(), 'Signed out everywhere');
    const ended = await page.locator('#disconnected').innerText();
    assert.match(ended, /Prickle e2e connector acts as alice\/writer/);
    assert.match(ended, /Document connector acts as alice\/writer/);
    await page.screenshot({ path: resolve(SHOTS, 'oauth-signed-out-everywhere.png'), fullPage: true });
  });
});
