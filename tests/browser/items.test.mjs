// End-to-end: memory items in the UI against a real `cairn daemon` that distils for real.
// A Claude Code session (old timestamps, so it has settled) is captured from a fake home; a
// fake `claude` first on PATH answers like Claude Code (`-p --output-format json`): a
// consolidation request gets one stated fact (and one inferred preference, which the rules
// drop), a profile request gets a timeline and a summary. It fails unless CAIRN_INTERNAL_CALL=1
// is set, it runs in <CAIRN_HOME>/data/model-calls with a cleared environment and its own config home. Then: Distil now (Activity) → the item
// in Search with its kind → its page (summary, history "created", its source request, a link
// to the conversation) → the conversation lists it → Profiles is empty → Tidy up now writes
// the project's profile → Profiles shows it → Rebuild… shows the diff.
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/items.test.mjs
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { assertAccessible, cleanUp, fakeHome, openPage, outDir, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 30_000;
const SESSION = "sess-relay-items";
const REQUEST = "Which port does relay listen on?";
const FACT = "Relay listens on port 7420";
const SUMMARY = "The relay service listens on TCP port 7420, set in config/relay.toml.";
const PROFILE_SUMMARY = "Relay is a small TCP relay service; it listens on port 7420.";

/** A settled Claude Code session (as crates/cairn-cli/tests/capture.rs `claude_session`). */
function claudeSession(id, turns) {
  let body = "";
  turns.forEach(([request, reply], i) => {
    const u = {
      type: "user",
      uuid: `${id}-u${i}`,
      parentUuid: null,
      sessionId: id,
      timestamp: `2026-08-2${i}T09:00:00Z`,
      cwd: "/tmp/relay",
      message: { role: "user", content: request },
    };
    const a = {
      type: "assistant",
      uuid: `${id}-a${i}`,
      parentUuid: `${id}-u${i}`,
      sessionId: id,
      timestamp: `2026-08-2${i}T09:00:05Z`,
      cwd: "/tmp/relay",
      message: {
        id: `${id}-m${i}`,
        role: "assistant",
        model: "claude-test",
        content: [{ type: "text", text: reply }],
        stop_reason: "end_turn",
      },
    };
    body += `${JSON.stringify(u)}\n${JSON.stringify(a)}\n`;
  });
  return body;
}

/** Claude Code's JSON output around an answer. */
function claudeOutput(answer) {
  return JSON.stringify({
    type: "result",
    subtype: "success",
    is_error: false,
    duration_ms: 5120,
    num_turns: 1,
    result: JSON.stringify(answer),
    session_id: "0f4c1f0e-6a5b-4d8e-9c1a-2b3c4d5e6f70",
    total_cost_usd: 0.0042,
    usage: { input_tokens: 1650, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 310 },
    modelUsage: { "claude-haiku-4-5-20251001": { inputTokens: 1650, outputTokens: 310 } },
  });
}

const CONSOLIDATE = claudeOutput({
  items: [
    {
      kind: "fact",
      title: FACT,
      summary: SUMMARY,
      body: "Relay listens on port 7420; the port is set in config/relay.toml.",
      cues: ["which port does relay use?", "relay port config", "relay connection refused", "change relay port"],
      concepts: ["relay", "port", "config"],
      importance: 3,
      certainty: "stated",
      sources: [1],
      stated_by: "user",
    },
    {
      kind: "preference",
      title: "Likes short answers",
      summary: "The user may like short answers.",
      body: "Probably likes short answers.",
      cues: ["answer length", "be brief", "style of answers", "verbosity"],
      concepts: ["style", "answers", "brevity"],
      importance: 2,
      certainty: "inferred",
      sources: [2],
      stated_by: "user",
    },
  ],
});

const PROFILE = claudeOutput({
  timeline: [{ date: "2026-08-20", text: "Relay listens on TCP port 7420 (config/relay.toml)." }],
  summary: PROFILE_SUMMARY,
});

/** A folder holding an executable `claude` that answers consolidation and profile requests. */
function fakeClaude() {
  const bin = mkdtempSync(join(tmpdir(), "cairn-fake-claude-"));
  const log = join(bin, "claude.log");
  const script = `#!/bin/sh
if [ "$CAIRN_INTERNAL_CALL" != "1" ]; then echo "recursion guard not set" >&2; exit 3; fi
case "$(pwd -P)" in */data/model-calls) ;; *) echo "wrong folder $(pwd)" >&2; exit 4 ;; esac
if [ -n "$CAIRN_HOME" ]; then echo "the environment was not cleared" >&2; exit 5; fi
if [ "$CLAUDE_CONFIG_DIR" != "$(pwd)/claude-home" ]; then echo "not its own config home: $CLAUDE_CONFIG_DIR" >&2; exit 6; fi
input=$(cat)
if printf '%s' "$input" | grep -q "timeline and summary"; then
  echo profile >> '${log}'
  cat <<'CAIRN_EOF'
${PROFILE}
CAIRN_EOF
else
  printf '%s\\n' "$input" | grep -q '${REQUEST}' && echo consolidate-saw-request >> '${log}'
  echo consolidate >> '${log}'
  cat <<'CAIRN_EOF'
${CONSOLIDATE}
CAIRN_EOF
fi
`;
  writeFileSync(join(bin, "claude"), script);
  chmodSync(join(bin, "claude"), 0o755);
  const calls = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);
  return { bin, calls, remove: () => rmSync(bin, { recursive: true, force: true }) };
}

describe("Memory items: Search, the item page, Conversations, Profiles and Rebuild against cairn daemon", { timeout: 420_000 }, () => {
  let home;
  let claude;
  let daemon;
  let browser;
  let page;
  let pageErrors;
  let itemId;

  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);

  before(async () => {
    home = fakeHome({
      files: {
        [`.claude/projects/-tmp-relay/${SESSION}.jsonl`]: claudeSession(SESSION, [
          [REQUEST, "Relay listens on port 7420 (config/relay.toml)."],
          ["Keep answers short from now on.", "Sure."],
        ]),
      },
    });
    claude = fakeClaude();
    daemon = await startDaemon({
      env: {
        ...home.env,
        PATH: `${claude.bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
        CAIRN__LLM__PROVIDER: "claude-cli",
        CAIRN__LLM__MODEL: undefined,
        CAIRN__LLM__BASE_URL: undefined,
        CAIRN__LLM__MODEL_PATH: undefined,
        CAIRN__LLM__DAILY_CALLS: undefined,
        CAIRN__LLM__DAILY_USD: undefined,
        ANTHROPIC_API_KEY: undefined,
        OPENAI_API_KEY: undefined,
      },
      logName: "browser-items-daemon.log",
    });
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 1000 }, timeoutMs: STEP_TIMEOUT }));
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop(), () => claude?.remove(), () => home?.remove()]));

  it("before any item: Profiles says the nightly tidy-up writes them once items exist", async () => {
    await page.goto(`${daemon.base}/#/profiles?token=${encodeURIComponent(daemon.token)}`);
    await page.waitForSelector('[data-testid="status-indicator"][data-state="on"]');
    await page.getByTestId("profiles-empty").waitFor();
    assert.match(await page.getByTestId("view-profiles").innerText(), /nightly tidy-up once memory items exist/);
    assert.deepEqual(await api("profiles_list"), { profiles: [] });
  });

  it("captures the session and Distil now (Activity) turns it into one item", async () => {
    const report = await api("capture_run");
    assert.ok(JSON.stringify(report).includes("claude-code"), JSON.stringify(report));
    await page.goto(`${daemon.base}/#/activity`);
    const distil = page.getByTestId("distill-now");
    await page.waitForSelector('[data-testid="distill-now"]:not([disabled])');
    await distil.click();
    const result = page.getByTestId("distill-result");
    await result.waitFor({ timeout: 240_000 });
    const text = await result.innerText();
    assert.match(text, /1 window distilled: 1 item kept, 1 dropped; 1 model call/, text);
    assert.ok(claude.calls().includes("consolidate-saw-request"), `the conversation reached the model: ${claude.calls()}`);
    const items = (await api("items_list", { framework: "claude-code", session_id: SESSION })).items;
    assert.equal(items.length, 1, JSON.stringify(items));
    assert.equal(items[0].title, FACT);
    itemId = items[0].id;
    assert.match(itemId, /^i_/);
  });

  it("Search shows the item with its kind, and opens its page", async () => {
    await page.goto(`${daemon.base}/#/search?q=${encodeURIComponent("relay port")}`);
    const hit = page.locator(`[data-testid="search-hit"][data-source="item"][data-id="${itemId}"]`);
    await hit.waitFor();
    assert.equal(await hit.getByTestId("item-kind").getAttribute("data-kind"), "fact");
    assert.match(await hit.getByTestId("item-kind").innerText(), /Fact/);
    assert.equal((await hit.getByTestId("search-hit-title").innerText()).trim(), FACT);
    assert.match(await hit.getByTestId("search-item-summary").innerText(), /TCP port 7420/);
    // Records of the conversation are still found beside it, and look different.
    await page.locator('[data-testid="search-hit"][data-source="record"]').first().waitFor();
    assert.equal(await page.locator('[data-testid="search-result"] [data-testid="item-kind"]').count(), 0);
    await page.screenshot({ path: join(outDir(), "browser-items-search.png"), fullPage: true });

    await hit.getByTestId("search-item-hit").click();
    await page.getByTestId("item-page").waitFor();
    assert.equal(new URL(page.url()).hash, `#/item?id=${itemId}`);
  });

  it("the item page shows its summary, facts, history, and its source request whole", async () => {
    const itemPage = page.getByTestId("item-page");
    assert.equal(await itemPage.getAttribute("data-id"), itemId);
    assert.equal((await page.getByTestId("item-title").innerText()).trim(), FACT);
    assert.equal((await page.getByTestId("item-summary").innerText()).trim(), SUMMARY);
    assert.match(await page.getByTestId("item-certainty").innerText(), /Stated/);
    assert.match(await page.getByTestId("item-importance").innerText(), /3\/5/);
    assert.match(await page.getByTestId("item-cues").innerText(), /relay port config/);
    assert.match(await page.getByTestId("item-concepts").innerText(), /config/);
    const events = page.getByTestId("item-event");
    assert.ok((await events.count()) >= 1);
    assert.equal(await events.first().getAttribute("data-kind"), "created");
    assert.match(await events.first().innerText(), /Created/);
    assert.equal(await page.getByTestId("item-superseded").count(), 0, "nothing replaced it");

    const sources = page.getByTestId("item-source");
    assert.equal(await sources.count(), 1);
    assert.match(await sources.first().innerText(), new RegExp(REQUEST.replace(/[?]/g, "\\?")));
    assert.match(await page.getByTestId("item-source-position").innerText(), /request 1 of 2/);
    // One source: shown open, the request and its reply whole.
    assert.match(await sources.first().locator('[data-testid="turn"]').innerText(), /config\/relay\.toml/);
    await page.screenshot({ path: join(outDir(), "browser-item.png"), fullPage: true });
    await assertAccessible(page, "a11y-item");

    await page.getByTestId("item-source-conversation").click();
    await page.getByTestId("conversation-view").waitFor();
    const loc = new URL(page.url());
    assert.match(loc.hash, /^#\/conversations\?/);
    assert.match(decodeURIComponent(loc.hash), new RegExp(`session=${SESSION}`));
  });

  it("the conversation lists the items that came from it, and each opens its page", async () => {
    const row = page.locator(`[data-testid="conversation-item"][data-id="${itemId}"]`);
    await row.waitFor();
    assert.match(await page.getByTestId("conversation-items").innerText(), /Items from this conversation[\s\S]*Relay listens on port 7420/i);
    assert.equal(await page.getByTestId("conversation-item").count(), 1, "the dropped preference is not an item");
    await row.click();
    await page.getByTestId("item-page").waitFor();
    assert.equal(await page.getByTestId("item-page").getAttribute("data-id"), itemId);
  });

  it("Tidy up now writes the project's profile, and Profiles shows its summary and timeline", async () => {
    await page.goto(`${daemon.base}/#/profiles`);
    await page.getByTestId("profiles-empty").waitFor();

    await page.goto(`${daemon.base}/#/activity`);
    await page.waitForSelector('[data-testid="sleep-now"]:not([disabled])');
    await page.getByTestId("sleep-now").click();
    const result = page.getByTestId("sleep-result");
    await result.waitFor({ timeout: 120_000 });
    const text = await result.innerText();
    assert.match(text, /1 active item, .*1 profile rewritten/, text);
    assert.ok(claude.calls().includes("profile"), `a profile request reached the model: ${claude.calls()}`);

    const { profiles } = await api("profiles_list");
    assert.equal(profiles.length, 1, JSON.stringify(profiles));
    assert.equal(profiles[0].summary, PROFILE_SUMMARY);

    await page.getByTestId("nav-profiles").click();
    const profile = page.getByTestId("profile");
    await profile.waitFor();
    assert.equal(await profile.getAttribute("data-subject"), profiles[0].subject);
    assert.equal((await profile.getByTestId("profile-summary").innerText()).trim(), PROFILE_SUMMARY);
    assert.match(await profile.getByTestId("profile-timeline").innerText(), /2026-08-20\s+Relay listens on TCP port 7420/);
    assert.equal(await page.getByTestId("profiles-empty").count(), 0);
    await page.screenshot({ path: join(outDir(), "browser-profiles.png"), fullPage: true });
    await assertAccessible(page, "a11y-profiles-with-profile");
  });

  it("Rebuild… distils the log again and shows the diff", async () => {
    await page.goto(`${daemon.base}/#/activity`);
    await page.waitForSelector('[data-testid="rebuild-open"]:not([disabled])');
    await page.getByTestId("rebuild-open").click();
    await page.getByTestId("rebuild-since").fill("2026-08-01");
    await page.getByTestId("rebuild-run").click();
    const result = page.getByTestId("rebuild-result");
    await result.waitFor({ timeout: 240_000 });
    // The model is asked again; the same answer finds the item again, and it keeps its id.
    assert.match(await page.getByTestId("rebuild-summary").innerText(), /^0 added, 0 changed, 0 dropped, 1 unchanged;/);
    assert.equal(claude.calls().filter((c) => c === "consolidate").length, 2, `consolidation asked again: ${claude.calls()}`);
    const items = (await api("items_list", { framework: "claude-code", session_id: SESSION })).items;
    assert.deepEqual(
      items.map((i) => i.id),
      [itemId],
    );
    await page.screenshot({ path: join(outDir(), "browser-activity-rebuild.png"), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });
});
