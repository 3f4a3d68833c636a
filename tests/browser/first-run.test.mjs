// The first run against a real `cairn daemon` on a fake home holding Claude Code, Codex and
// Gemini CLI sessions: Cairn shows what it found before anything is captured, then each
// agent's conversations and dates as capture reads them; Connect registers Cairn with one
// agent (and only that one, only on the click); Done puts the first run away for good.
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/first-run.test.mjs
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cairnBin, cleanUp, fakeAgentHome, openPage, outDir, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 15_000;

it("CAIRN_BIN names the cairn binary to test against", () => {
  assert.ok(cairnBin());
});

describe("The first run against cairn daemon", { timeout: 180_000 }, () => {
  let fake;
  let daemon;
  let browser;
  let page;
  let pageErrors;
  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);
  const agent = (framework) => page.locator(`[data-testid="first-run-agent"][data-framework="${framework}"]`);
  const installed = async () => (await api("integrations_list")).integrations.filter((i) => i.installed).map((i) => i.framework);

  before(async () => {
    fake = fakeAgentHome();
    // No capture pass before the window opens: a first run.
    daemon = await startDaemon({
      env: { ...fake.env, CAIRN__CAPTURE__STARTUP_DELAY_SECONDS: "3600" },
      logName: "browser-first-run-daemon.log",
    });
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 1000 }, timeoutMs: STEP_TIMEOUT }));
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop(), () => fake?.remove()]));

  it("shows the agents found before anything is captured, and changes nothing", async () => {
    await page.goto(`${daemon.base}/#/conversations?token=${encodeURIComponent(daemon.token)}`);
    await page.getByTestId("first-run").waitFor();
    for (const f of ["claude-code", "codex", "gemini-cli"]) {
      await agent(f).waitFor();
      assert.match(await agent(f).getByTestId("first-run-history").innerText(), /nothing captured yet/);
    }
    assert.equal(await page.getByTestId("first-run-capture").getAttribute("data-done"), null);
    assert.deepEqual(await installed(), [], "nothing registered without a click");
  });

  it("shows each agent's conversations and dates as capture reads them", async () => {
    await api("capture_run");
    await page.waitForSelector('[data-testid="first-run-capture"][data-done="true"]');
    await page.waitForFunction(
      () => [...document.querySelectorAll('[data-testid="first-run-agent"][data-framework="claude-code"] [data-testid="first-run-history"]')].some((e) => /\d+ conversations?/.test(e.textContent)),
      undefined,
      { timeout: STEP_TIMEOUT },
    );
    const found = await api("agents_found");
    const claude = found.agents.find((a) => a.framework === "claude-code");
    assert.ok(claude.conversations > 0 && claude.stores > 0, JSON.stringify(claude));
    assert.match(await agent("claude-code").getByTestId("first-run-history").innerText(), new RegExp(`^${claude.conversations} conversations?`));
    await page.screenshot({ path: join(outDir(), "browser-first-run.png") });
  });

  it("Connect registers Cairn with that agent only; Done puts the first run away for good", async () => {
    assert.equal(await agent("claude-code").getAttribute("data-state"), "not_connected");
    await agent("claude-code").getByTestId("first-run-connect").click();
    await page.waitForSelector('[data-testid="first-run-agent"][data-framework="claude-code"][data-state="connected"]');
    assert.deepEqual(await installed(), ["claude-code"]);
    await page.getByTestId("first-run-done").click();
    await page.getByTestId("first-run").waitFor({ state: "detached" });
    await page.reload();
    await page.getByTestId("view-conversations").waitFor();
    await page.waitForTimeout(500);
    assert.equal(await page.getByTestId("first-run").count(), 0);
    assert.deepEqual(pageErrors, []);
  });
});
