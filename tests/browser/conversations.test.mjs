// End-to-end: capture from a fake home holding synthetic agent session stores, then read and
// search the conversations in the UI.
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/
import assert from "node:assert/strict";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cleanUp, eventually, fakeAgentHome, openPage, outDir, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 10_000;
const CLAUDE_SESSION = "5b0c7e0e-3f6a-4c1e-9a51-2d7f0c9e8b11";
const CODEX_SESSION = "0198c4a2-7b3e-7d21-9f00-3c5e8a1b2d4f";
const HOSTILE_SESSION = "c0ffee00-0000-4000-8000-00000000beef";

/** A Claude Code session whose words look like HTML: the page must show them as text. */
function writeHostileSession(home) {
  const base = {
    isSidechain: false,
    userType: "external",
    cwd: "/home/dev/projects/demo-app",
    sessionId: HOSTILE_SESSION,
    version: "2.1.220",
    gitBranch: "main",
    entrypoint: "cli",
  };
  const lines = [
    {
      ...base,
      parentUuid: null,
      type: "user",
      uuid: "u-hostile-1",
      timestamp: "2026-08-21T10:00:00.000Z",
      message: { role: "user", content: 'Why does <img src=x onerror="window.__xss=1"> show as <b>markup</b>?' },
    },
    {
      ...base,
      parentUuid: "u-hostile-1",
      type: "assistant",
      uuid: "a-hostile-1",
      timestamp: "2026-08-21T10:00:03.000Z",
      requestId: "req_hostile",
      message: {
        id: "msg_hostile",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5-20250929",
        content: [{ type: "text", text: "It is text: <script>window.__xss=2</script> stays literal markup." }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    },
    { ...base, parentUuid: "a-hostile-1", type: "system", subtype: "turn_duration", uuid: "s-hostile-1", timestamp: "2026-08-21T10:00:03.100Z", durationMs: 3100 },
  ];
  const file = join(home, ".claude", "projects", "-home-dev-projects-demo-app", `${HOSTILE_SESSION}.jsonl`);
  writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
}

describe("Conversations, Search and Activity against captured synthetic sessions", { timeout: 180_000 }, () => {
  let fake;
  let daemon;
  let browser;
  let page;
  let pageErrors;

  const byTestId = (id) => page.getByTestId(id);
  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);
  const hashParams = () => new URLSearchParams(new URL(page.url()).hash.replace(/^#\/[a-z]+\??/, ""));

  before(async () => {
    fake = fakeAgentHome();
    writeHostileSession(fake.home);
    daemon = await startDaemon({ env: fake.env, logName: "browser-conversations-daemon.log" });
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 860 }, timeoutMs: STEP_TIMEOUT }));
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop(), () => fake?.remove()]));

  it("before any capture, Conversations says so and offers Capture now", async () => {
    await page.goto(`${daemon.base}/#/conversations?token=${encodeURIComponent(daemon.token)}`);
    await page.waitForSelector('[data-testid="status-indicator"][data-state="on"]');
    // The service's first pass runs 30 s after it starts; this page is quicker than that.
    if ((await api("status")).capture === null) {
      const empty = byTestId("conversations-empty");
      await empty.waitFor();
      assert.match(await empty.innerText(), /has not captured any conversations yet[\s\S]*cairn capture --once/);
      assert.equal(await empty.getByTestId("capture-now").isEnabled(), true);
    }
  });

  it("Activity: Capture now reads the fake home's stores and reports per agent", async () => {
    await byTestId("nav-activity").click();
    await byTestId("view-activity").waitFor();
    const button = byTestId("capture-now");
    await eventually(() => button.isEnabled());
    await button.click();
    const report = byTestId("capture-report");
    await report.waitFor();
    await eventually(() => button.isEnabled());
    const text = await report.innerText();
    for (const label of ["Claude Code", "Codex", "Gemini CLI"]) assert.match(text, new RegExp(label));
    assert.match(text, /Last pass/);

    const status = await api("status");
    assert.ok(status.capture, "status.capture is set after a pass");
    const added = status.capture.frameworks.reduce((n, f) => n + f.added + f.revised, 0);
    assert.ok(status.counts.records >= 3, `records stored: ${status.counts.records} (added ${added})`);
  });

  it("lists the captured conversations across agents, newest first", async () => {
    await byTestId("nav-conversations").click();
    const rows = byTestId("conversation-row");
    await eventually(async () => (await rows.count()) >= 3);
    const count = await rows.count();
    assert.ok(count >= 3, `at least 3 conversations, got ${count}`);
    const frameworks = new Set();
    for (let i = 0; i < count; i++) frameworks.add(await rows.nth(i).getAttribute("data-framework"));
    assert.ok(frameworks.size >= 2, `conversations from at least 2 agents: ${[...frameworks]}`);

    const list = await api("conversations", { framework: null, project: null, limit: null, offset: null });
    const sessions = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-session")));
    assert.deepEqual(sessions, list.conversations.map((c) => c.session_id), "the page shows the service's order");

    // The framework filter narrows the list.
    await byTestId("filter-framework").selectOption("codex");
    await eventually(async () => (await rows.count()) === 1);
    assert.equal(await rows.first().getAttribute("data-session"), CODEX_SESSION);
    await byTestId("filter-framework").selectOption("");
    await eventually(async () => (await rows.count()) === count);
  });

  it("opens the Claude Code conversation whole, with tool steps folded", async () => {
    await page.locator(`[data-testid="conversation-row"][data-session="${CLAUDE_SESSION}"]`).click();
    const view = byTestId("conversation-view");
    await page.waitForSelector(`[data-testid="conversation-view"][data-session="${CLAUDE_SESSION}"]`);
    assert.equal(hashParams().get("session"), CLAUDE_SESSION);
    assert.equal(hashParams().get("framework"), "claude-code");

    const expected = await api("conversation", { framework: "claude-code", session_id: CLAUDE_SESSION });
    const turns = view.getByTestId("turn");
    assert.equal(await turns.count(), expected.turns.length);
    assert.deepEqual(
      await turns.evaluateAll((els) => els.map((e) => e.getAttribute("data-id"))),
      expected.turns.map((t) => t.id),
    );
    const first = turns.first();
    assert.match(await first.innerText(), /Add a --verbose flag to the CLI argument parser/);
    assert.match(await first.innerText(), /I'll look at the current parser first\./);
    assert.match(await first.innerText(), /Success/);
    assert.match(await turns.nth(1).innerText(), /Interrupted/);
    // The example's memory block carries no key of this Cairn's marks: capture cannot tell
    // it from any other hook's text, so it is shown as a hook's, never as Cairn's own.
    assert.match(await first.innerText(), /Injected context \(hook\)/);

    const tool = first.getByTestId("tool-step").first();
    assert.equal(await tool.getAttribute("aria-expanded"), "false");
    assert.match(await tool.innerText(), /Bash\s*—\s*grep -n 'struct Cli'/);
    assert.equal(await first.getByText("pub config: Option<PathBuf>,").count(), 0, "tool output is folded");
    await tool.click();
    assert.equal(await tool.getAttribute("aria-expanded"), "true");
    await first.getByText("14:pub struct Cli {", { exact: false }).waitFor();
    assert.match(await first.innerText(), /"description": "Show the Cli struct"/, "input is shown as pretty JSON");

    // The rejected `cargo test --all` call is marked as an error.
    const rejected = turns.nth(1).getByTestId("tool-step").first();
    assert.match(await rejected.innerText(), /Bash\s*—\s*cargo test --all/);
    assert.match(await rejected.innerText(), /error/i);

    await page.evaluate(() => window.scrollTo(0, 0));
    const file = join(outDir(), "browser-conversations.png");
    await page.screenshot({ path: file, fullPage: true });
    assert.ok(statSync(file).size > 10_000, `${file} looks empty`);
  });

  it("searching within Conversations opens the matching conversation at its turn", async () => {
    const box = byTestId("conversation-search");
    await box.fill("cargo test");
    await box.press("Enter");
    const results = byTestId("search-result");
    await eventually(async () => (await results.count()) >= 2);
    assert.equal(await byTestId("conversation-list").count(), 0, "results replace the list");
    const marks = await results.first().locator("mark").allInnerTexts();
    assert.ok(marks.length > 0 && marks.every((m) => /^(cargo|test)$/i.test(m)), `highlighted: ${marks}`);

    const hits = (await api("search", { query: "cargo test", framework: null, project: null, since: null, until: null, limit: 50, exclude_session: null })).hits;
    const codexHit = hits.find((h) => h.session_id === CODEX_SESSION);
    assert.ok(codexHit, "the Codex session matches `cargo test`");
    await page.locator(`[data-testid="search-result"][data-session="${CODEX_SESSION}"]`).first().click();
    await page.waitForSelector(`[data-testid="conversation-view"][data-session="${CODEX_SESSION}"]`);
    assert.equal(hashParams().get("turn"), codexHit.id);
    const turn = page.locator(`[data-testid="turn"][data-id="${codexHit.id}"]`);
    await turn.waitFor();
    assert.match(await turn.innerText(), /cargo test/);

    // Clearing the search brings the list back.
    await box.fill("");
    await box.press("Enter");
    await byTestId("conversation-list").waitFor();
  });

  it("Search page: results carry their details and open the conversation at that turn", async () => {
    await byTestId("nav-search").click();
    await byTestId("view-search").waitFor();
    assert.match(await byTestId("view-search").innerText(), /by words and by meaning/);
    await byTestId("search-input").fill("cargo test");
    await byTestId("search-input").press("Enter");
    const results = byTestId("search-result");
    await eventually(async () => (await results.count()) >= 2);
    assert.equal(new URLSearchParams(new URL(page.url()).hash.split("?")[1]).get("q"), "cargo test", "the address names the search");

    const claude = page.locator(`[data-testid="search-result"][data-session="${CLAUDE_SESSION}"]`).first();
    const text = await claude.innerText();
    assert.match(text, /Claude Code/);
    assert.match(text, /demo-app/);
    assert.match(text, /Interrupted/);
    assert.equal(await claude.getByTestId("outside-range").count(), 0);

    // A date range that excludes every hit still lists them, marked as outside it.
    await byTestId("search-since").fill("2020-01-01");
    await byTestId("search-until").fill("2020-01-02");
    await byTestId("search-until").dispatchEvent("change");
    await eventually(async () => (await byTestId("outside-range").count()) >= 2);
    const shot = join(outDir(), "browser-search.png");
    await page.screenshot({ path: shot, fullPage: true });

    await claude.click();
    await page.waitForSelector(`[data-testid="conversation-view"][data-session="${CLAUDE_SESSION}"]`);
    const turnId = hashParams().get("turn");
    assert.ok(turnId, "the address names the turn");
    const turn = page.locator(`[data-testid="turn"][data-id="${turnId}"]`);
    await turn.waitFor();
    const box = await turn.boundingBox();
    assert.ok(box && box.y >= 0 && box.y < 860, `the turn is scrolled into view (y = ${box?.y})`);

    // Back returns to the same search.
    await page.goBack();
    await byTestId("view-search").waitFor();
    await eventually(async () => (await byTestId("search-result").count()) >= 2);
    assert.equal(await byTestId("search-input").inputValue(), "cargo test");
  });

  it("text that looks like HTML is shown as text, in results and in the conversation", async () => {
    await page.goto(`${daemon.base}/#/search?q=markup`);
    const result = page.locator(`[data-testid="search-result"][data-session="${HOSTILE_SESSION}"]`).first();
    await result.waitFor();
    assert.match(await result.innerText(), /<img src=x onerror="window.__xss=1"> show as <b>markup<\/b>/);
    assert.equal(await result.locator("img, b, script").count(), 0, "no element was made from the passage");
    const marks = await result.locator("mark").allInnerTexts();
    assert.ok(marks.length >= 1 && marks.every((m) => m === "markup"), `highlighted: ${marks}`);

    await result.click();
    const view = page.locator(`[data-testid="conversation-view"][data-session="${HOSTILE_SESSION}"]`);
    await view.waitFor();
    const turn = view.getByTestId("turn").first();
    assert.match(await turn.innerText(), /<script>window.__xss=2<\/script> stays literal markup\./);
    assert.equal(await view.locator("img, b, script").count(), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
  });

  it("with memory off, search says so and links to Settings", async () => {
    await api("memory_set", { enabled: false });
    try {
      await page.goto(`${daemon.base}/#/search?q=verbose`);
      await page.waitForSelector('[data-testid="status-indicator"][data-state="off"]');
      const notice = byTestId("memory-off");
      await notice.waitFor();
      assert.match(await notice.innerText(), /Memory is off/);
      assert.equal(await notice.locator('a[href="#/settings"]').count(), 1);

      await byTestId("nav-activity").click();
      await byTestId("capture-now").click();
      await byTestId("memory-off").waitFor();
    } finally {
      await api("memory_set", { enabled: true });
    }
    assert.deepEqual(pageErrors, []);
  });
});
