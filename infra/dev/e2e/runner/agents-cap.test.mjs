// A model-spend cap reached and raised, with the real CLIs of every template of agents.mjs's CLIS and Codex, all
// at once on agents of their own (pull mode, the local stack). Of these only opencode reports a cost (from
// its user's config's prices of the model, here 8,000 USD per million tokens in and out): the runner keeps
// it. The others report tokens: the runner prices each run's tokens at its config's model_prices (here
// 10,000 USD per million tokens in and out, so the stand-in's 10 + 10 tokens a reply cost 0.2 USD).
// alice, signed in, caps each agent's daily spend on the owners page below one run's cost:
//   a run's spend is its reported tokens × the price table (opencode: its own cost, the table unused),
//   and reaches Prickle with the run's end: the task page lists the run with its cost and its tokens;
//   over the cap, the next hand-off starts no run (its wake-up waits in Prickle) and alice is asked
//   once, by email; she raises the cap from the email's link and the waiting run goes on at once.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { skipUnlessStack, eventually, sleep, PROJECT } from '../lib/env.mjs';
import { TEMPLATES, storyPrereqs, story } from './stories.mjs';

// Every template of the stories, and codex (which reports tokens, no cost, too).
const CAPPED = [...TEMPLATES, 'codex'];
// What each reported cost is priced at, USD per million tokens in and out: opencode's own (its user's config).
const OPENCODE_USD_PER_MTOK = 8_000;
const opencodePrices = (cfg) => {
  for (const m of Object.values(cfg.provider.standin.models)) m.cost = { input: OPENCODE_USD_PER_MTOK, output: OPENCODE_USD_PER_MTOK };
  return cfg;
};

const { stack, skipReason } = await storyPrereqs();
const USD_PER_MTOK = 10_000;
const CAP = '0.1';

describe('agent stories: a model-spend cap reached and raised (every template at once)', { skip: skipUnlessStack(skipReason), timeout: 600_000, concurrency: true }, () => {
  const s = story('cap');
  before(async () => {
    await s.setup(stack);
    await s.signInAlice();
  });
  after(() => s.teardown());

  const capEmails = async (agent) => (await s.outbox()).filter((m) => m.channel === 'email' && m.to === 'alice@example.com'
    && (m.subject || '').startsWith(`${agent} reached `));

  for (const name of CAPPED) {
    test(`${name}: the run's cost (${name === 'opencode' ? 'its own' : 'its tokens at model_prices'}) reaches the cap; the owner raises it and the run goes on`, async () => {
      const agent = s.newAgent(`cap-${name}`);
      const page = await s.alice.newPage();
      assert.equal((await page.goto(`${s.base}/p/${PROJECT}/owners`)).status(), 200);
      await page.locator(`[id="cap-${agent.id}"]`).fill(CAP);
      await Promise.all([page.waitForURL(/owners\?done=cap$/), page.locator(`[id="cap-save-${agent.id}"]`).click()]);
      await page.close();
      const r = await s.runner(name, 'cap', agent, { config: { model_prices: { default: { input_usd_per_mtok: USD_PER_MTOK, output_usd_per_mtok: USD_PER_MTOK } } },
        settings: name === 'opencode' ? opencodePrices : undefined });

      // 1. A run: its cost is its tokens at the price table's.
      const first = await s.handOff(`${name} spend`, agent, { shell: false });
      const ended = await r.runEnded(first, 'task_routed');
      assert.equal(ended.exit_code, 0);
      const usage = s.runLog(r, ended.run).find((l) => /^(agent|codex)-run usage$/.test(l.msg))?.usage;
      assert.ok(usage?.input_tokens > 0 && usage?.output_tokens > 0, `the run reports its tokens: ${JSON.stringify(usage)}`);
      const price = name === 'opencode' ? OPENCODE_USD_PER_MTOK : USD_PER_MTOK;
      const want = (usage.input_tokens + usage.output_tokens) * price / 1e6;
      assert.ok(Math.abs(ended.cost_usd - want) < 1e-6, `the run cost ${ended.cost_usd} USD, want ${want} (its tokens at ${name === 'opencode' ? "opencode's own prices" : 'model_prices'})`);
      if (name === 'opencode') assert.ok(Math.abs(usage.cost_usd - want) < 1e-6, `opencode reported the cost: ${JSON.stringify(usage)}`);
      assert.ok(ended.cost_usd > Number(CAP), 'over the cap');
      // The task page lists the run with its cost and its tokens, as the runner reported them.
      const taskPage = await s.alice.newPage();
      const row = await eventually(async () => {
        await taskPage.goto(`${s.base}/t/${first}`);
        return (await taskPage.locator(`[data-run="${ended.run}"]`).count()) ? taskPage.locator(`[data-run="${ended.run}"]`) : null;
      }, { timeoutMs: 20000 });
      assert.ok(row, `the task page lists ${name}'s run`);
      assert.equal((await row.locator('.cost').innerText()).trim(), String(Math.round(ended.cost_usd * 1e6) / 1e6), 'its cost, as Prickle writes an amount');
      assert.match(await row.innerText(), new RegExp(`\\b${usage.input_tokens} / ${usage.output_tokens}\\b`), 'its tokens in / out');
      await taskPage.close();

      // 2. Over the cap: alice is asked once.
      const asked = await eventually(async () => { const m = await capEmails(agent.id); return m.length ? m : null; }, { timeoutMs: 30000 });
      assert.ok(asked, `alice was asked about ${agent.id}'s cap`);
      assert.equal(asked[0].subject, `${agent.id} reached ${CAP} USD of model spend today`);

      // 3. The next hand-off starts no run: its wake-up waits in Prickle.
      const second = await s.handOff(`${name} held`, agent, { shell: false });
      await sleep(6000);
      assert.equal(r.linesFor('wake-up', (l) => l.task === second).length, 0, 'no wake-up was handed out over the cap');
      assert.equal((await capEmails(agent.id)).length, 1, 'alice is asked once');

      // 4. alice raises the cap from the email's link: the waiting run goes on at once.
      const link = asked[0].links.find((l) => l.startsWith(`${s.base}/c/`));
      assert.ok(link, `the email links the cap page: ${asked[0].links}`);
      const decide = await s.browser.newPage();
      assert.equal((await decide.goto(link)).status(), 200);
      await Promise.all([decide.waitForURL(/\?done=1$/), decide.locator('#raise').click()]);
      assert.equal((await decide.locator('h1').innerText()).trim(), 'Your decision is recorded');
      await decide.close();
      const resumed = await r.runEnded(second, 'task_routed');
      assert.equal(resumed.exit_code, 0, JSON.stringify(resumed));
      assert.ok(resumed.cost_usd > 0, 'its spend is counted too');
      assert.equal((await capEmails(agent.id)).length, 1, 'still asked once');
      await r.stop();
    });
  }
});
