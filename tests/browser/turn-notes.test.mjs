// End-to-end: Activity → Notes against a real `cairn daemon`. The synthetic Claude Code, Codex
// and Gemini CLI sessions are captured from a fake home; then turns ask for their note through
// the service's own HTTP API (`turn_note`, as `cairn hook` does): two prompts about those
// conversations and one about nothing Cairn has seen. Notes shows the totals and the turns
// newest first (shown or silent), the "Shown only" filter, why a turn's note said what it said
// (each candidate against the bar, its ranker inputs), and "Not useful" / Undo on a shown entry,
// whose label is checked through `note_why` and survives a reload; the entry's id opens it.
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/turn-notes.test.mjs
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { REPO_ROOT, cleanUp, eventually, fakeAgentHome, openPage, outDir, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 30_000;
/** The session the asking agent is in: none of the captured ones, so none is left out. */
const ASKING_SESSION = "turn-notes-asking-session";
const PROMPTS = [
  { framework: "claude-code", prompt: "How did we add the --verbose flag to the CLI argument parser in src/cli.rs?" },
  { framework: "codex", prompt: "Why does cargo test fail in tests/cli.rs again?" },
  { framework: "claude-code", prompt: "What is a good recipe for banana bread with walnuts and honey?", foreign: true },
];

describe("Activity → Notes: the turn note log, why, and Not useful against cairn daemon", { timeout: 300_000 }, () => {
  let fake;
  let daemon;
  let browser;
  let page;
  let pageErrors;
  let project = null;
  /** The service's answers, in the order asked: { req, note }. */
  const turns = [];

  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);
  const row = (turn) => page.locator(`[data-testid="turn-note-row"][data-turn="${turn}"]`);
  const shownTurn = () => turns.find((t) => t.note.entries.length > 0);

  before(async () => {
    fake = fakeAgentHome();
    daemon = await startDaemon({ env: fake.env, logName: "browser-turn-notes-daemon.log" });
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 1000 }, timeoutMs: STEP_TIMEOUT }));
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop(), () => fake?.remove()]));

  it("before any turn, Notes says agents' hooks ask for notes and points to Settings → Integrations", async () => {
    await page.goto(`${daemon.base}/#/activity?token=${encodeURIComponent(daemon.token)}`);
    await page.waitForSelector('[data-testid="status-indicator"][data-state="on"]');
    const empty = page.getByTestId("turn-notes-empty");
    await empty.waitFor();
    assert.match(await empty.innerText(), /hook/);
    assert.equal(await page.getByTestId("turn-notes-integrations").getAttribute("href"), "#/settings");
    assert.equal((await page.getByTestId("turn-notes-turns").innerText()).trim(), "0");
    assert.match(await page.getByTestId("turn-notes-eval-none").innerText(), /cairn eval note FILE/);
    const log = await api("note_log", { limit: null, shown_only: false });
    assert.equal(log.turns, 0, JSON.stringify(log));
    assert.deepEqual(log.injections, []);
    assert.equal(log.eval, null);
  });

  it("turns ask for their note over the API: the captured conversations are found, the foreign question is not", async () => {
    // This view's log, why and marks are what is tested, not the shipped model's calibration:
    // the home gets a model of its own (the shipped model's text) whose bar is pinned at 0.3,
    // where this small fixture's notes show, so the shipped bar can move with retraining.
    const { path: modelPath } = await api("ranker_status");
    mkdirSync(dirname(modelPath), { recursive: true });
    copyFileSync(join(REPO_ROOT, "crates", "cairn-turn", "ranker", "model.txt"), modelPath);
    writeFileSync(modelPath.replace(/\.txt$/, ".json"), JSON.stringify({ source: "test", cross_fit: { chosen: { bar: 0.3 } } }));
    const report = await api("capture_run");
    assert.ok(JSON.stringify(report).includes("claude-code"), JSON.stringify(report));
    const { conversations } = await api("conversations", { framework: null, project: null, limit: null, offset: null });
    project = conversations.find((c) => c.project)?.project ?? null;
    assert.ok(project, `a captured conversation has a project: ${JSON.stringify(conversations)}`);
    // The index follows the log: wait until the request the first prompt is about can be searched.
    const found = await eventually(
      async () => {
        const res = await api("search", { query: "verbose flag CLI argument parser", project: null, framework: null, since: null, until: null, limit: 5, exclude_session: null, mode: null, rerank: null, kinds: null });
        return res.hits.length > 0 ? res : null;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    assert.ok(found, "the captured requests are searchable");
    // The daemon loads the embedder and embeds the captured requests in the background: wait
    // (dry runs, logged nowhere) until the first prompt's note sees them.
    const ready = await eventually(
      async () => {
        const p = PROMPTS[0];
        const dry = await api("turn_note", { framework: p.framework, project, session_id: ASKING_SESSION, turn_id: null, prompt: p.prompt, context: [], dry_run: true });
        return dry.entries.length > 0 ? dry : null;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    assert.ok(ready, "the turn note sees the captured requests");

    for (const p of PROMPTS) {
      const req = { framework: p.framework, project, session_id: ASKING_SESSION, turn_id: null, prompt: p.prompt, context: [], dry_run: false };
      const note = await api("turn_note", req);
      assert.match(note.turn, /^t_/, JSON.stringify(note));
      assert.ok(note.entries.length <= 3, `at most three entries: ${JSON.stringify(note)}`);
      assert.equal(note.note !== null, note.entries.length > 0, `a note exactly when it has entries: ${JSON.stringify(note)}`);
      if (note.note === null) assert.ok(note.silent_because, `a silent turn says why: ${JSON.stringify(note)}`);
      for (const e of note.entries) assert.ok(e.probability >= note.bar, `an entry shown is above the bar: ${JSON.stringify(note)}`);
      assert.ok(Number.isFinite(note.latency_ms), JSON.stringify(note));
      turns.push({ req, note, foreign: p.foreign === true });
    }
    const shown = shownTurn();
    assert.ok(shown && !shown.foreign, `a prompt about a captured conversation gets a note: ${JSON.stringify(turns.map((t) => t.note))}`);
    const foreign = turns.find((t) => t.foreign);
    assert.equal(foreign.note.note, null, `the foreign question gets no note: ${JSON.stringify(foreign.note)}`);

    const log = await api("note_log", { limit: null, shown_only: false });
    assert.equal(log.turns, PROMPTS.length, JSON.stringify(log));
    assert.deepEqual(
      log.injections.map((i) => i.turn),
      turns.map((t) => t.note.turn).reverse(),
      "newest first",
    );
    assert.equal(log.shown, turns.filter((t) => t.note.note !== null).length);
  });

  it("Notes shows the totals and the turns newest first, shown or silent, and filters to the shown ones", async () => {
    await page.reload();
    const rows = page.getByTestId("turn-note-row");
    await eventually(async () => (await rows.count()) === PROMPTS.length, { timeoutMs: STEP_TIMEOUT });
    assert.deepEqual(
      await rows.evaluateAll((els) => els.map((el) => el.getAttribute("data-turn"))),
      turns.map((t) => t.note.turn).reverse(),
    );
    const log = await api("note_log", { limit: null, shown_only: false });
    for (const t of turns) {
      const r = row(t.note.turn);
      assert.equal((await r.getByTestId("turn-note-prompt").innerText()).trim(), t.req.prompt);
      assert.equal(await r.getAttribute("data-shown"), t.note.note !== null ? "true" : "false");
      const outcome = await r.getByTestId("turn-note-outcome").innerText();
      if (t.note.note === null) assert.match(outcome, new RegExp(`Silent: ${t.note.silent_because.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
      else assert.match(outcome, new RegExp(`Note: ${t.note.entries.length} entr`));
    }
    assert.equal((await page.getByTestId("turn-notes-turns").innerText()).trim(), String(PROMPTS.length));
    const shownCount = turns.filter((t) => t.note.note !== null).length;
    const rate = `${Math.round((shownCount / PROMPTS.length) * 100)}%`;
    assert.match(await page.getByTestId("turn-notes-shown").innerText(), new RegExp(`^${shownCount} \\(${rate}\\)`));
    assert.equal((await page.getByTestId("turn-notes-not-useful").innerText()).trim(), "0");
    assert.ok(log.p50_ms !== null && log.p95_ms !== null, JSON.stringify(log));
    assert.match(await page.getByTestId("turn-notes-latency").innerText(), /\d+(\.\d)? m?s \/ \d+(\.\d)? m?s/);

    await page.getByTestId("turn-notes-shown-only").check();
    await eventually(async () => (await rows.count()) === shownCount, { timeoutMs: STEP_TIMEOUT });
    assert.deepEqual(
      await rows.evaluateAll((els) => els.map((el) => el.getAttribute("data-shown"))),
      Array(shownCount).fill("true"),
    );
    await page.getByTestId("turn-notes-shown-only").uncheck();
    await eventually(async () => (await rows.count()) === PROMPTS.length, { timeoutMs: STEP_TIMEOUT });
  });

  it("the keyboard opens why: each candidate against the bar, the shown ones marked, judges and ranker inputs", async () => {
    const rows = page.getByTestId("turn-note-toggle");
    await rows.first().focus();
    await page.keyboard.press("ArrowDown");
    assert.equal(
      await page.evaluate(() => document.activeElement?.closest("[data-turn]")?.getAttribute("data-turn")),
      await page.getByTestId("turn-note-row").nth(1).getAttribute("data-turn"),
      "↓ moves to the next turn",
    );

    const t = shownTurn();
    const toggle = row(t.note.turn).getByTestId("turn-note-toggle");
    await toggle.focus();
    await page.keyboard.press("Enter");
    assert.equal(await toggle.getAttribute("aria-expanded"), "true");
    const why = row(t.note.turn).getByTestId("turn-note-why");
    await why.waitFor();

    const view = await api("note_why", { turn: t.note.turn });
    assert.equal(view.turn, t.note.turn);
    assert.equal(view.prompt, t.req.prompt);
    assert.ok(view.entries.length >= t.note.entries.length, JSON.stringify(view));
    assert.deepEqual(
      view.entries.filter((e) => e.shown).map((e) => e.id).sort(),
      t.note.entries.map((e) => e.id).sort(),
      "the shown candidates are the note's entries",
    );
    assert.equal((await why.getByTestId("why-bar").innerText()).trim(), view.bar.toFixed(2));
    const judges = await why.getByTestId("why-judges").innerText();
    if (view.judged_by.length === 0) assert.match(judges, /local ranker decided alone/);
    else assert.match(judges, /Judged by/);

    const entries = why.getByTestId("why-entry");
    assert.deepEqual(
      await entries.evaluateAll((els) => els.map((el) => el.getAttribute("data-id"))),
      view.entries.map((e) => e.id),
    );
    for (const e of view.entries) {
      const el = why.locator(`[data-testid="why-entry"][data-id="${e.id}"]`);
      assert.equal(await el.getAttribute("data-shown"), e.shown ? "true" : "false");
      assert.match(await el.getByTestId("why-entry-probability").innerText(), new RegExp(`^${e.probability.toFixed(2)}\\s+${e.probability >= view.bar ? "≥" : "<"}`));
      assert.equal(await el.getByTestId("why-entry-shown").count(), e.shown ? 1 : 0);
      assert.equal(await el.getByTestId("why-entry-not-useful").count(), e.shown ? 1 : 0);
      if (e.id.startsWith("i_")) assert.equal(await el.getByTestId("why-entry-link").getAttribute("href"), `#/item?id=${e.id}`);
      if (e.features.length > 0) {
        await el.locator("summary").click();
        const table = el.getByTestId("why-entry-features");
        await table.waitFor();
        const text = await table.innerText();
        for (const f of e.features) assert.ok(text.includes(f.name), `ranker input ${f.name} listed: ${text}`);
      }
    }
  });

  it("Not useful shows at once, is stored as a label (note_why), survives a reload, and Undo removes it", async () => {
    const t = shownTurn();
    const target = t.note.entries[0];
    const entry = () => row(t.note.turn).locator(`[data-testid="why-entry"][data-id="${target.id}"]`);

    await entry().getByTestId("why-entry-not-useful").click();
    assert.equal(await entry().getAttribute("data-label"), "not_useful", "shown at once");
    await entry().getByTestId("why-entry-undo").waitFor();
    const stored = await eventually(async () => {
      const v = await api("note_why", { turn: t.note.turn });
      return v.entries.find((e) => e.id === target.id)?.label === "not_useful" ? v : null;
    });
    assert.ok(stored, "note_why holds the label");
    assert.equal(stored.entries.filter((e) => e.label !== null).length, 1, "only that entry is labelled");
    await eventually(async () => (await page.getByTestId("turn-notes-not-useful").innerText()).trim() === "1", { timeoutMs: STEP_TIMEOUT });
    assert.equal((await api("note_log", { limit: null, shown_only: false })).not_useful, 1);
    assert.match(await row(t.note.turn).getByTestId("turn-note-marked").innerText(), /1 marked not useful/);

    // Undo: the label is removed (label: null), in the page and in the service.
    await entry().getByTestId("why-entry-undo").click();
    await entry().getByTestId("why-entry-not-useful").waitFor();
    assert.equal(await entry().getAttribute("data-label"), "");
    const cleared = await eventually(async () => {
      const v = await api("note_why", { turn: t.note.turn });
      return v.entries.every((e) => e.label === null) ? v : null;
    });
    assert.ok(cleared, "Undo removed the label");
    await eventually(async () => (await page.getByTestId("turn-notes-not-useful").innerText()).trim() === "0", { timeoutMs: STEP_TIMEOUT });

    // Marked again, the label is the service's, not the page's: a reload still shows it.
    await entry().getByTestId("why-entry-not-useful").click();
    await entry().getByTestId("why-entry-undo").waitFor();
    await eventually(async () => (await api("note_log", { limit: null, shown_only: false })).not_useful === 1);
    await page.reload();
    await row(t.note.turn).waitFor();
    await row(t.note.turn).getByTestId("turn-note-toggle").click();
    await entry().waitFor();
    assert.equal(await entry().getAttribute("data-label"), "not_useful");
    assert.equal(await entry().getByTestId("why-entry-undo").getAttribute("aria-pressed"), "true");
    assert.equal((await page.getByTestId("turn-notes-not-useful").innerText()).trim(), "1");
    await page.getByTestId("turn-notes").screenshot({ path: join(outDir(), "browser-activity-notes.png") });
  });

  it("an entry's id opens what it names: a request in its conversation, an item on its page", async () => {
    const t = shownTurn();
    const target = t.note.entries[0];
    const entry = row(t.note.turn).locator(`[data-testid="why-entry"][data-id="${target.id}"]`);
    if (target.id.startsWith("r_")) {
      await entry.getByTestId("why-entry-open").click();
      await page.getByTestId("conversation-view").waitFor();
      const params = new URLSearchParams(new URL(page.url()).hash.replace(/^#\/[a-z]+\??/, ""));
      assert.equal(params.get("turn"), target.id);
      const opened = await api("open", { id: target.id });
      assert.equal(params.get("session"), opened.record.session_id);
      assert.equal(params.get("framework"), opened.record.framework);
    } else if (target.id.startsWith("i_")) {
      await entry.getByTestId("why-entry-link").click();
      await page.getByTestId("item-page").waitFor();
      assert.equal(await page.getByTestId("item-page").getAttribute("data-id"), target.id);
    } else {
      assert.equal(await entry.getByTestId("why-entry-link").getAttribute("href"), `#/notes?id=${target.id}`);
    }
    assert.deepEqual(pageErrors, []);
  });

  it("Run replay asks every captured request for its note again and shows the figures, kept across a reload", async () => {
    await page.goto(`${daemon.base}/#/activity?token=${encodeURIComponent(daemon.token)}`);
    const card = page.getByTestId("replay");
    await card.getByTestId("replay-none").waitFor();
    assert.equal((await api("replay_latest")).report, null);
    await card.getByTestId("replay-run").click();
    await card.getByTestId("replay-figures").waitFor({ timeout: 120_000 });
    const { report } = await api("replay_latest");
    assert.ok(report && report.requests > 0, `the captured requests were replayed: ${JSON.stringify(report)}`);
    assert.equal((await card.getByTestId("replay-requests").innerText()).trim(), String(report.requests));
    // The figures are kept before the worker board says the replay ended: the button comes
    // back with the board's next poll.
    assert.equal(
      await eventually(() => card.getByTestId("replay-run").isEnabled(), { timeoutMs: 15_000 }),
      true,
      "the button is back once the replay ends",
    );
    await page.reload();
    await card.getByTestId("replay-figures").waitFor();
    assert.equal((await card.getByTestId("replay-requests").innerText()).trim(), String(report.requests));
    assert.deepEqual(pageErrors, []);
  });
});
