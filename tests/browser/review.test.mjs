// Review (the review inbox) against a real `cairn daemon`: memory items stored as
// distillation would store them — a near-duplicate pair, a contradiction ("port 6543"
// against "port 5432") and junk — are listed with their counts; merge, supersede, archive
// and keep act on them (checked through the API), Undo from the status line and from Recent
// actions puts them back, an undo refused because the item changed since is explained, one
// entry is handled by keyboard alone, and the view passes axe in light and dark.
// (Stale items need records with a working folder on this machine: the Rust test covers them.)
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/review.test.mjs
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { assertAccessible, cairnBin, cleanUp, eventually, openPage, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 15_000;
const PROJECT = "github.com/acme/heron";

it("CAIRN_BIN names the cairn binary to test against", () => {
  assert.ok(cairnBin());
});

function item(id, title, summary, body, said, importance = 3, over = {}) {
  return {
    id, kind: "fact", title, summary, body, cues: [], concepts: [], importance, certainty: "stated", project: PROJECT,
    sources: [], happened_at: said, said_at: said, ended_at: null, superseded_by: null, archived: false, ...over,
  };
}

const ITEMS = [
  item("i_dup1", "Release builds need --locked", "Release builds need cargo --locked so the lock file is honoured.", "Seen when CI rebuilt the release job.", "2026-08-20T09:00:00Z", 4),
  item("i_dup2", "Release builds need --locked", "Release builds need cargo --locked so the lock file is honoured.", "The release job failed without it last week.", "2026-08-10T09:00:00Z", 3),
  item("i_port_old", "Staging Postgres port", "Staging Postgres listens on port 5432", "From the old staging runbook.", "2026-07-01T09:00:00Z"),
  item("i_port_new", "Staging Postgres port", "Staging Postgres listens on port 6543", "Changed when pgbouncer was put in front of it.", "2026-09-01T09:00:00Z"),
  item("i_junk", "ok", "ok", "", "2026-08-25T09:00:00Z", 1),
];

/** Appends item events straight into the daemon's store (SQLite allows it), as distillation writes them. */
function putEvents(home, events) {
  const script = `
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1], timeout=10)
for kind, state in json.loads(sys.argv[2]):
    con.execute("INSERT INTO item_events (item_id, kind, at, state, reason) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?, 'test')",
                (state["id"], kind, json.dumps(state)))
con.commit()
`;
  execFileSync("python3", ["-c", script, join(home, "data", "cairn.db"), JSON.stringify(events)]);
}

describe("Review inbox against cairn daemon", { timeout: 240_000 }, () => {
  let daemon;
  let browser;
  let page;
  let pageErrors;
  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);
  const byTestId = (id) => page.getByTestId(id);
  const entry = (category) => page.locator(`[data-testid="review-entry"][data-category="${category}"]`);
  const chipCount = async (filter) => Number(await byTestId(`review-chip-${filter}`).getAttribute("data-count"));
  const focused = () => page.evaluate(() => {
    const el = document.activeElement;
    return el ? { id: el.id, testid: el.getAttribute("data-testid"), text: (el.textContent ?? "").trim(), name: el.getAttribute("name"), value: el.getAttribute("value") } : null;
  });
  const itemState = async (id) => {
    const { items } = await api("items_list", { all: true, limit: 100 });
    const found = items.find((i) => i.id === id);
    assert.ok(found, `${id} is in items_list`);
    return found;
  };
  const counts = async () => {
    const out = {};
    for (const f of ["all", "contradiction", "duplicate", "stale", "junk"]) out[f] = await chipCount(f);
    return out;
  };
  /** Waits until the chips show these counts (the inbox is read again after each action). */
  async function waitForCounts(expected) {
    const got = await eventually(async () => {
      const c = await counts();
      return JSON.stringify(c) === JSON.stringify(expected) ? c : null;
    });
    assert.deepEqual(got ?? (await counts()), expected);
  }

  before(async () => {
    daemon = await startDaemon({ logName: "browser-review-daemon.log" });
    putEvents(daemon.home, ITEMS.map((i) => ["created", i]));
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 1000 }, timeoutMs: STEP_TIMEOUT }));
    await page.goto(`${daemon.base}/#/review?token=${encodeURIComponent(daemon.token)}`);
    await byTestId("view-review").waitFor();
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop()]));

  it("lists the contradiction, the duplicate and the junk with their counts; passes axe in light and dark", async () => {
    await entry("junk").waitFor();
    assert.deepEqual(await counts(), { all: 3, contradiction: 1, duplicate: 1, stale: 0, junk: 1 });
    assert.deepEqual(
      await page.locator('[data-testid="review-entry"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-category"))),
      ["contradiction", "duplicate", "junk"],
      "contradictions first, then duplicates, then junk",
    );
    assert.equal((await byTestId("nav-review-count").innerText()).replace(/\D/g, ""), "3", "the sidebar shows the open entries");
    assert.equal(await page.getByRole("link", { name: /^Review\s*,\s*3 open$/ }).count(), 1, "and says so in the link's name");

    // The contradiction: its reason, both subjects side by side, the newer suggested to stay.
    const conflict = entry("contradiction");
    assert.match(await conflict.getByTestId("review-reason").innerText(), /6543/);
    const subjects = conflict.getByTestId("review-subject");
    assert.deepEqual(await subjects.evaluateAll((els) => els.map((e) => e.getAttribute("data-id"))), ["i_port_new", "i_port_old"]);
    const text = await conflict.innerText();
    assert.match(text, /Staging Postgres listens on port 6543/);
    assert.match(text, /Staging Postgres listens on port 5432/);
    assert.match(text, /2026-09-01/);
    assert.match(text, /github\.com\/acme\/heron/);
    assert.equal(await subjects.first().getByTestId("review-subject-link").getAttribute("href"), "#/item?id=i_port_new");
    assert.equal(await subjects.first().getByTestId("review-keep").isChecked(), true, "the first subject stays by default");
    assert.deepEqual(
      await conflict.locator("button[data-testid^=review-action-]").allInnerTexts().then((t) => t.map((s) => s.trim())),
      ["Supersede", "Archive", "Keep both"],
    );
    assert.deepEqual(
      await entry("junk").locator("button[data-testid^=review-action-]").allInnerTexts().then((t) => t.map((s) => s.trim())),
      ["Archive", "Keep"],
    );

    // A chip shows one category, and the address says which.
    await byTestId("review-chip-duplicate").click();
    assert.equal(await page.locator('[data-testid="review-entry"]').count(), 1);
    assert.equal(await entry("duplicate").count(), 1);
    assert.equal(new URL(page.url()).hash, "#/review?category=duplicate");
    assert.equal(await byTestId("review-chip-duplicate").getAttribute("aria-pressed"), "true");
    await byTestId("review-chip-all").click();
    assert.equal(await page.locator('[data-testid="review-entry"]').count(), 3);

    await page.evaluate(() => document.activeElement instanceof HTMLElement && document.activeElement.blur());
    await assertAccessible(page, "review");
  });

  it("Merge folds the second duplicate into the first; Undo in the status line puts it back", async () => {
    const dup = entry("duplicate");
    assert.deepEqual(await dup.getByTestId("review-subject").evaluateAll((els) => els.map((e) => e.getAttribute("data-id"))), ["i_dup1", "i_dup2"]);
    await dup.getByTestId("review-action-merge").click();
    await dup.waitFor({ state: "detached" });
    assert.match(await byTestId("review-done").innerText(), /Merged “Release builds need --locked” into “Release builds need --locked”/);
    assert.equal((await itemState("i_dup2")).superseded_by, "i_dup1", "the second is superseded by the first");
    assert.equal((await itemState("i_dup1")).superseded_by, null);
    assert.match((await itemState("i_dup1")).body, /The release job failed without it/, "the merged body keeps both");
    await waitForCounts({ all: 2, contradiction: 1, duplicate: 0, stale: 0, junk: 1 });
    // Focus moved to the entry that took its place.
    assert.match((await focused())?.id ?? "", /^review-entry-junk/, JSON.stringify(await focused()));
    const row = page.locator('[data-testid="review-recent-row"]').first();
    assert.match(await row.innerText(), /Merged/);
    assert.equal(await row.getAttribute("data-undone"), "false");

    await byTestId("review-done-undo").click();
    await entry("duplicate").waitFor();
    await page.waitForSelector('[data-testid="review-done"][data-undone="true"]');
    assert.match(await byTestId("review-done").innerText(), /^Undone: Merged/);
    assert.equal((await itemState("i_dup2")).superseded_by, null, "the second is back");
    assert.equal(await row.getAttribute("data-undone"), "true");
    assert.equal(await row.getByTestId("review-recent-undone").innerText(), "undone");
    assert.equal(await row.getByTestId("review-recent-undo").count(), 0, "no Undo on an undone action");
    assert.match((await focused())?.id ?? "", /^review-entry-duplicate/, "focus is on the entry that came back");
    await waitForCounts({ all: 3, contradiction: 1, duplicate: 1, stale: 0, junk: 1 });
  });

  it("by keyboard alone: choose which one stays with the arrows, then Supersede with Tab and Enter", async () => {
    const conflict = entry("contradiction");
    await byTestId("review-chip-all").focus();
    let reached = null;
    const path = [];
    for (let i = 0; i < 20 && reached === null; i++) {
      await page.keyboard.press("Tab");
      const f = await focused();
      path.push(f?.testid ?? f?.id);
      if (f?.testid === "review-keep" && f.value === "i_port_new") {
        // The group's checked radio: the arrows move the choice, and back.
        await page.keyboard.press("ArrowRight");
        assert.equal(await conflict.locator('input[value="i_port_old"]').isChecked(), true);
        assert.match(await conflict.getByTestId("review-action-supersede").getAttribute("title"), /replaced by/);
        await page.keyboard.press("ArrowLeft");
        assert.equal(await conflict.locator('input[value="i_port_new"]').isChecked(), true, "the newer stays");
      }
      if (f?.testid === "review-action-supersede") reached = f;
    }
    assert.ok(reached, `Tab reaches Supersede: ${path.join(" → ")}`);
    assert.ok(path.includes("review-keep"), `Tab passes the choice of which stays: ${path.join(" → ")}`);
    await page.keyboard.press("Enter");
    await conflict.waitFor({ state: "detached" });
    assert.match(await byTestId("review-done").innerText(), /Marked “Staging Postgres port” as replaced by “Staging Postgres port”/);
    assert.equal((await itemState("i_port_old")).superseded_by, "i_port_new");
    assert.equal((await itemState("i_port_new")).superseded_by, null);
    assert.match((await focused())?.id ?? "", /^review-entry-duplicate/, "focus moves on to the next entry");
    await waitForCounts({ all: 2, contradiction: 0, duplicate: 1, stale: 0, junk: 1 });
  });

  it("Archive the junk; Keep the duplicate (both stay, the entry hides); Undo the keep from Recent actions", async () => {
    await entry("junk").getByTestId("review-action-archive").click();
    await entry("junk").waitFor({ state: "detached" });
    assert.equal((await itemState("i_junk")).archived, true);
    assert.match(await byTestId("review-done").innerText(), /Archived “ok”/);

    await entry("duplicate").getByTestId("review-action-keep").click();
    await byTestId("review-empty").waitFor();
    assert.match(await byTestId("review-done").innerText(), /^Kept/);
    assert.equal((await itemState("i_dup1")).superseded_by, null);
    assert.equal((await itemState("i_dup2")).superseded_by, null);
    assert.equal((await itemState("i_dup2")).archived, false);
    await waitForCounts({ all: 0, contradiction: 0, duplicate: 0, stale: 0, junk: 0 });
    assert.equal(await byTestId("nav-review-count").count(), 0, "no badge with nothing open");
    assert.equal((await focused())?.testid, "review-done-undo", "with nothing left, focus is on Undo");

    const rows = page.locator('[data-testid="review-recent-row"]');
    const actions = await rows.evaluateAll((els) => els.map((e) => [e.querySelector(".recent-action")?.textContent, e.getAttribute("data-undone")]));
    assert.deepEqual(actions.slice(0, 4), [["Kept", "false"], ["Archived", "false"], ["Superseded", "false"], ["Merged", "true"]]);
    const keepRow = rows.first();
    assert.match(await keepRow.getByTestId("review-recent-undo").getAttribute("aria-label"), /^Undo: Kept/);
    await keepRow.getByTestId("review-recent-undo").click();
    await entry("duplicate").waitFor();
    await page.waitForSelector('[data-testid="review-recent-row"]:first-child[data-undone="true"]');
    await waitForCounts({ all: 1, contradiction: 0, duplicate: 1, stale: 0, junk: 0 });
    assert.match((await focused())?.id ?? "", /^review-entry-duplicate/);
    const inbox = await api("review_list", {});
    assert.equal(inbox.recent[0].action, "keep");
    assert.ok(inbox.recent[0].undone_at, "the API logs the undo");
  });

  it("an undo refused because the item changed since is explained in plain words", async () => {
    // The archived junk item is changed again after the archive (as a distillation would).
    // (The API names an item's unchecked provenance "unchecked"; the log stores it as absent.)
    const { provenance, ...now } = await itemState("i_junk");
    assert.equal(provenance, "unchecked");
    putEvents(daemon.home, [["updated", { ...now, title: "ok then", archived: true }]]);
    const row = page.locator('[data-testid="review-recent-row"]', { has: page.locator(".recent-action", { hasText: "Archived" }) });
    await row.getByTestId("review-recent-undo").click();
    const problem = byTestId("review-problem");
    await problem.waitFor();
    const text = await problem.innerText();
    assert.match(text, /Cannot undo this: something it changed has been changed again since/);
    assert.doesNotMatch(text, /conflict/i);
    assert.equal(await problem.getByRole("link", { name: "Open the item to see its history." }).getAttribute("href"), "#/item?id=i_junk");
    assert.equal(await row.getAttribute("data-undone"), "false");
    assert.equal((await itemState("i_junk")).archived, true, "nothing was undone");
    await page.evaluate(() => document.activeElement instanceof HTMLElement && document.activeElement.blur());
    await assertAccessible(page, "review-actions");
    assert.deepEqual(pageErrors, []);
  });

  it("the palette goes to one category of the inbox", async () => {
    await page.keyboard.press("Control+k");
    await byTestId("palette").waitFor();
    await page.keyboard.type("review dupl");
    await page.waitForSelector('[data-testid="palette-opt-review-duplicate"][aria-selected="true"]');
    await page.keyboard.press("Enter");
    await byTestId("palette").waitFor({ state: "detached" });
    assert.equal(new URL(page.url()).hash, "#/review?category=duplicate");
    await page.waitForSelector('[data-testid="review-chip-duplicate"][aria-pressed="true"]');
    assert.equal(await page.locator('[data-testid="review-entry"]').count(), 1);
    assert.deepEqual(pageErrors, []);
  });
});
