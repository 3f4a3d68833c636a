// End-to-end: Settings → Providers and the Activity view's model meter against a real
// `cairn daemon` whose PATH starts with a folder holding a fake `claude` (Claude Code's JSON
// output; it fails unless CAIRN_INTERNAL_CALL=1 is set and it runs in <CAIRN_HOME>/data/model-calls, with a cleared environment and its own config home).
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cleanUp, eventually, fakeHome, openPage, outDir, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 20_000;

/** What Claude Code prints for `-p --output-format json` (as in crates/cairn-cli/tests/cli.rs). */
const CLAUDE_OUTPUT = JSON.stringify({
  type: "result",
  subtype: "success",
  is_error: false,
  duration_ms: 2113,
  num_turns: 1,
  result: '{"ok": true}',
  session_id: "5b0c2a4e-4d5c-4f0e-9a57-1f2b3c4d5e6f",
  total_cost_usd: 0.0021,
  usage: { input_tokens: 812, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 64 },
  modelUsage: { "claude-haiku-4-5-20251001": { inputTokens: 812, outputTokens: 64 } },
});

/** A folder holding an executable `claude` that answers like Claude Code, and records that it ran. */
function fakeClaude() {
  const bin = mkdtempSync(join(tmpdir(), "cairn-fake-claude-"));
  const ran = join(bin, "claude.ran");
  const script = `#!/bin/sh
if [ "$CAIRN_INTERNAL_CALL" != "1" ]; then echo "recursion guard not set" >&2; exit 3; fi
case "$(pwd -P)" in */data/model-calls) ;; *) echo "wrong folder $(pwd)" >&2; exit 4 ;; esac
if [ -n "$CAIRN_HOME" ]; then echo "the environment was not cleared" >&2; exit 5; fi
if [ "$CLAUDE_CONFIG_DIR" != "$(pwd)/claude-home" ]; then echo "not its own config home: $CLAUDE_CONFIG_DIR" >&2; exit 6; fi
cat > /dev/null
echo ran >> '${ran}'
cat <<'CAIRN_EOF'
${CLAUDE_OUTPUT}
CAIRN_EOF
`;
  writeFileSync(join(bin, "claude"), script);
  chmodSync(join(bin, "claude"), 0o755);
  return { bin, ran, remove: () => rmSync(bin, { recursive: true, force: true }) };
}

describe("Settings → Providers and the model meter against cairn daemon with a fake claude", { timeout: 240_000 }, () => {
  let home;
  let claude;
  let daemon;
  let browser;
  let page;
  let pageErrors;

  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);
  const choice = (id) => page.locator(`[data-testid="providers"] [data-provider="${id}"]`);

  before(async () => {
    home = fakeHome();
    claude = fakeClaude();
    daemon = await startDaemon({
      env: {
        ...home.env,
        PATH: `${claude.bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
        // The provider in effect at start: the view must show it.
        CAIRN__LLM__PROVIDER: "gemini-cli",
        CAIRN__LLM__MODEL: "gemini-2.5-flash-lite",
        CAIRN__LLM__BASE_URL: undefined,
        CAIRN__LLM__MODEL_PATH: undefined,
        CAIRN__LLM__DAILY_CALLS: undefined,
        CAIRN__LLM__DAILY_USD: undefined,
        ANTHROPIC_API_KEY: undefined,
        OPENAI_API_KEY: undefined,
      },
      logName: "browser-providers-daemon.log",
    });
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 1000 }, timeoutMs: STEP_TIMEOUT }));
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop(), () => claude?.remove(), () => home?.remove()]));

  it("shows the configured provider, its model and the budget", async () => {
    await page.goto(`${daemon.base}/#/settings?token=${encodeURIComponent(daemon.token)}`);
    await page.waitForSelector('[data-testid="status-indicator"][data-state="on"]');
    await page.getByTestId("providers").waitFor();
    await choice("gemini-cli").getByTestId("provider-current").waitFor();
    assert.equal(await page.getByTestId("provider-current").count(), 1, "one provider is marked in use");
    assert.equal(await choice("gemini-cli").locator("input").isChecked(), true);
    assert.equal(await page.getByTestId("provider-model").inputValue(), "gemini-2.5-flash-lite");
    assert.equal(await page.getByTestId("budget-calls").inputValue(), "200");
    assert.equal(await page.getByTestId("provider-save").isDisabled(), true, "nothing to save yet");
    const status = await api("llm_status");
    assert.equal(status.provider, "gemini-cli");
  });

  it("tests an unsaved choice of the Claude Code CLI and shows its answer, time, tokens and cost", async () => {
    await choice("claude-cli").locator("input").check();
    await page.getByTestId("provider-model").fill("");
    assert.equal(await page.getByTestId("provider-base-url").count(), 0, "a CLI takes no base URL");
    assert.equal(await page.getByTestId("provider-key").count(), 0, "a CLI takes no key");
    await page.getByTestId("provider-test").click();
    const result = page.getByTestId("provider-test-result");
    await result.waitFor({ timeout: 110_000 });
    const text = await result.innerText();
    assert.equal(await result.getAttribute("data-ok"), "true", text);
    assert.match(await page.getByTestId("provider-test-answer").innerText(), /claude-cli .*answered \{"ok":true\}/);
    assert.match(text, /812 in · 64 out tokens/);
    assert.match(text, /\$0\.0021/);
    assert.match(text, /\d+(\.\d)? (ms|s)/);
    assert.ok(existsSync(claude.ran), "the fake claude ran (in Cairn's folder, with the guard set)");
    // Testing saves nothing.
    assert.equal((await api("llm_status")).provider, "gemini-cli");
    await page.screenshot({ path: join(outDir(), "browser-providers.png"), fullPage: true });
  });

  it("the Activity meter counts the test call, and lists it without its content", async () => {
    await page.goto(`${daemon.base}/#/activity`);
    const meter = page.getByTestId("model-meter");
    await meter.waitFor();
    await page.waitForSelector('[data-testid="model-meter"][data-calls="1"]');
    assert.match(await page.getByTestId("meter-calls").innerText(), /^1 of 200$/);
    assert.match(await page.getByTestId("meter-cost").innerText(), /^\$0\.0021 of \$1\.00$/);
    const row = page.locator('[data-testid="model-calls"] tbody tr').first();
    await row.waitFor();
    const cells = await row.locator("td").allInnerTexts();
    assert.equal(cells[1], "claude-cli");
    assert.equal(cells[3], "test");
    assert.match(cells[4], /OK/);
    assert.match(cells[5], /812 in · 64 out/);
    const table = await page.getByTestId("model-calls").innerText();
    assert.doesNotMatch(table, /ok": ?true|connection works/, "no prompt or answer is shown");
    const today = (await api("llm_status")).today;
    assert.equal(today.calls, 1);
  });

  it("an invalid base URL shows an error naming it; an unreachable endpoint shows the provider's error", async () => {
    await page.goto(`${daemon.base}/#/settings`);
    await page.getByTestId("providers").waitFor();
    await choice("openai").locator("input").check();
    await page.getByTestId("provider-model").fill("qwen2.5:3b");
    await page.getByTestId("provider-base-url").fill("localhost:11434/v1");
    await page.getByTestId("provider-test").click();
    const error = page.getByTestId("provider-test-error");
    await error.waitFor();
    assert.match(await error.innerText(), /base URL "localhost:11434\/v1" is not a web address.*http:\/\//);
    await page.getByTestId("provider-save").click();
    assert.match(await page.getByTestId("provider-save-error").innerText(), /base URL "localhost:11434\/v1"/);
    assert.equal((await api("llm_status")).provider, "gemini-cli", "nothing was saved");

    // A well-formed address where nothing listens: the service's own error, as it is.
    await page.getByTestId("provider-base-url").fill("http://127.0.0.1:9/v1");
    await page.getByTestId("provider-test").click();
    const result = page.getByTestId("provider-test-result");
    await result.waitFor({ timeout: 110_000 });
    assert.equal(await result.getAttribute("data-ok"), "false");
    assert.match(await result.innerText(), /The test failed\./);
    assert.ok((await page.getByTestId("provider-test-answer").innerText()).trim().length > 10, "the error is spelled out");
    // The key field shows the keyring state, never a key.
    assert.equal(await page.getByTestId("provider-key").inputValue(), "");
  });

  it("Save keeps the choice and the budget in the config file, in effect at once", async () => {
    await choice("claude-cli").locator("input").check();
    await page.getByTestId("budget-calls").fill("50");
    await page.getByTestId("budget-usd").fill("0.5");
    await page.getByTestId("provider-save").click();
    await page.getByTestId("provider-saved").waitFor();
    await choice("claude-cli").getByTestId("provider-current").waitFor();
    const status = await api("llm_status");
    assert.equal(status.provider, "claude-cli");
    assert.deepEqual(status.budget, { calls: 50, usd: 0.5 });
    const config = readFileSync((await api("config_show")).path, "utf8");
    assert.match(config, /^provider = "claude-cli"$/m);
    assert.match(config, /^daily_calls = 50$/m);
    // A bad budget is refused with the field named.
    await page.getByTestId("budget-calls").fill("lots");
    await page.getByTestId("provider-save").click();
    assert.match(await page.getByTestId("provider-save-error").innerText(), /daily call limit.*"lots"/);
  });

  it("The turn-note judge is switched on with its time limit, in the config file and in effect", async () => {
    const until = async (pred) => {
      for (let i = 0; i < 100; i++) {
        const s = await api("llm_status");
        if (pred(s)) return s;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error("the judge setting did not take effect");
    };
    await page.getByTestId("budget-calls").fill("50");
    await page.getByTestId("judge-on").check();
    await page.getByTestId("judge-ms").fill("99");
    await page.getByTestId("provider-save").click();
    assert.match(await page.getByTestId("provider-save-error").innerText(), /judge's time limit.*"99"/);
    assert.equal((await api("llm_status")).judge, false, "nothing was saved");
    await page.getByTestId("judge-ms").fill("1200");
    await page.getByTestId("provider-save").click();
    const on = await until((s) => s.judge === true);
    assert.equal(on.judge_ms, 1200);
    const config = readFileSync((await api("config_show")).path, "utf8");
    assert.match(config, /^judge = true$/m);
    assert.match(config, /^judge_ms = 1200$/m);
    await page.getByTestId("judge-on").uncheck();
    assert.equal(await page.getByTestId("judge-ms").isDisabled(), true);
    await page.getByTestId("provider-save").click();
    await until((s) => s.judge === false);
  });

  it("the offered local model shows its size, memory, speed and licence, and nothing is downloaded before Download", async () => {
    await page.goto(`${daemon.base}/#/settings?token=${encodeURIComponent(daemon.token)}`);
    const offer = page.getByTestId("local-offer");
    await offer.getByTestId("local-offer-name").waitFor();
    const api_ = await api("llm_offer");
    assert.equal(api_.downloaded, false, JSON.stringify(api_));
    assert.match(await offer.getByTestId("local-offer-name").innerText(), /Qwen2\.5-1\.5B-Instruct/);
    assert.match(await offer.getByTestId("local-offer-size").innerText(), /^1\.1 GB$/);
    assert.match(await offer.getByTestId("local-offer-memory").innerText(), /^about \d+(\.\d)? GB$/);
    assert.match(await offer.getByTestId("local-offer-speed").innerText(), /measured after the first call/);
    assert.equal((await offer.getByTestId("local-offer-licence").innerText()).trim(), api_.licence);
    assert.equal(await offer.getByTestId("local-offer-download").isEnabled(), true);
    // Showing the offer downloads nothing: no model file anywhere in Cairn's data folder.
    const files = readdirSync(join(daemon.home, "data"), { recursive: true }).map(String);
    assert.deepEqual(files.filter((f) => f.endsWith(".gguf") || f.includes(".part")), [], files.join(", "));
    assert.equal((await api("llm_offer")).downloaded, false);
    assert.deepEqual(pageErrors, []);
  });

  it("Distil now reports that nothing has settled, and the meter follows the new budget", async () => {
    await page.goto(`${daemon.base}/#/activity`);
    await page.waitForSelector('[data-testid="model-meter"][data-calls="2"]');
    assert.match(await page.getByTestId("meter-calls").innerText(), /^2 of 50$/);
    await page.getByTestId("distill-now").click();
    const result = page.getByTestId("distill-result");
    await result.waitFor({ timeout: 60_000 });
    assert.match(await result.innerText(), /Nothing settled/);
    const worker = await eventually(async () => {
      const w = (await api("status")).workers.find((x) => x.name === "distillation");
      return w && w.state !== "running" ? w : null;
    });
    assert.ok(worker, "the distillation worker is on the status board");
    await page.screenshot({ path: join(outDir(), "browser-activity-model.png"), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });
});
