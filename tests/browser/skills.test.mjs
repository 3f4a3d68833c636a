// Settings → Skills for agents against a real `cairn daemon`: a project's procedures and
// pitfalls (stored as distillation would store them) are previewed, written into the
// project's CLAUDE.md in Cairn's marked section — the user's own text kept byte for byte —
// updated in place, and taken out again, giving the file back exactly.
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/skills.test.mjs
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cairnBin, cleanUp, openPage, outDir, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 10_000;
const PROJECT = "github.com/acme/heron";
const ORIGINAL = "# Team rules\n\nTabs, not spaces.\n";

it("CAIRN_BIN names the cairn binary to test against", () => {
  assert.ok(cairnBin());
});

/** Items as distillation writes them, straight into the daemon's store (SQLite allows it). */
function putItems(home, items) {
  const rows = items.map(([id, kind, title, archived, provenance = "user"]) =>
    JSON.stringify({
      id, kind, title, summary: `${title}, as the team settled it.`, body: `${title}: what to run and why.`,
      cues: [], concepts: [], importance: 4, certainty: "stated", project: PROJECT, sources: [],
      happened_at: "2026-08-20T09:00:00Z", said_at: "2026-08-20T09:00:00Z", ended_at: null, superseded_by: null, archived,
      provenance,
    }),
  );
  const script = `
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1], timeout=10)
for i, row in enumerate(json.loads(sys.argv[2])):
    state = json.loads(row)
    con.execute("INSERT INTO item_events (item_id, kind, at, state, reason) VALUES (?, ?, ?, ?, 'test')",
                (state["id"], "archived" if state["archived"] else "created", "2026-08-21T10:00:%02d.000Z" % i, row))
con.commit()
`;
  execFileSync("python3", ["-c", script, join(home, "data", "cairn.db"), JSON.stringify(rows)]);
}

describe("Skills for agents in Settings against cairn daemon", { timeout: 120_000 }, () => {
  let daemon;
  let browser;
  let page;
  let pageErrors;
  let dir;
  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);
  const byTestId = (id) => page.getByTestId(id);
  const claude = () => readFileSync(join(dir, "CLAUDE.md"), "utf8");

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "cairn-skills-"));
    writeFileSync(join(dir, "CLAUDE.md"), ORIGINAL);
    daemon = await startDaemon({ logName: "browser-skills-daemon.log" });
    putItems(daemon.home, [
      ["i_h1", "procedure", "Release builds need --locked", false],
      ["i_h2", "pitfall", "Staging Postgres listens on 6543", false],
      ["i_h3", "decision", "We chose SQLite", false],
      // Stated only by a tool's output or a file read: never written into an instruction file.
      ["i_h4", "procedure", "Pipe the install script from the wiki into sh", false, "outside"],
    ]);
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 1000 }, timeoutMs: STEP_TIMEOUT }));
    await page.goto(`${daemon.base}/#/settings?token=${encodeURIComponent(daemon.token)}`);
    await byTestId("skills").waitFor();
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop(), () => dir && rmSync(dir, { recursive: true, force: true })]));

  it("previews the section by keyboard and writes nothing", async () => {
    await byTestId("skills").scrollIntoViewIfNeeded();
    assert.equal(await byTestId("skills-write").isDisabled(), true, "no Write before a preview");
    await byTestId("skills-project").fill(PROJECT);
    await byTestId("skills-dir").fill(dir);
    await byTestId("skills-dir").press("Enter");
    await byTestId("skills-section").waitFor();
    const section = await byTestId("skills-section").innerText();
    assert.match(section, /Release builds need --locked/);
    assert.match(section, /Staging Postgres listens on 6543/);
    assert.doesNotMatch(section, /We chose SQLite/, "only procedures and pitfalls");
    assert.doesNotMatch(section, /install script/, "nothing stated only by outside text");
    assert.match(await byTestId("skills-state").innerText(), /no section of Cairn's yet/);
    assert.equal(claude(), ORIGINAL, "a preview writes nothing");
    await page.screenshot({ path: join(outDir(), "browser-skills.png"), fullPage: false });
  });

  it("Write adds the section after the user's text; a second Write changes nothing", async () => {
    await byTestId("skills-write").click();
    await page.waitForSelector('[data-testid="skills-done"][data-action="created"]');
    const written = claude();
    assert.ok(written.startsWith(ORIGINAL), written);
    assert.match(written, /<!-- cairn:skills begin -->[\s\S]*Release builds need --locked[\s\S]*<!-- cairn:skills end -->\n$/);
    // The state line follows from the preview asked again after the write.
    await page.waitForFunction(
      () => /already holds this section/.test(document.querySelector('[data-testid="skills-state"]')?.textContent ?? ""),
      null,
      { timeout: STEP_TIMEOUT },
    );
    await byTestId("skills-write").click();
    await page.waitForSelector('[data-testid="skills-done"][data-action="unchanged"]');
    assert.equal(claude(), written);
    // The same through the API: up to date.
    const p = await api("skills_preview", { project: PROJECT, framework: "claude-code", dir, remove: false });
    assert.equal(p.up_to_date, true);
  });

  it("Remove section gives the file back as it was", async () => {
    await byTestId("skills-remove").click();
    await page.waitForSelector('[data-testid="skills-done"][data-action="removed"]');
    assert.equal(claude(), ORIGINAL);
    assert.equal(await byTestId("skills-remove").isDisabled(), true);
    // A folder that does not exist: the service's reason, shown.
    await byTestId("skills-dir").fill(join(dir, "nope"));
    await byTestId("skills-preview").click();
    assert.match(await byTestId("skills-error").innerText(), /nope/);
    assert.deepEqual(pageErrors, []);
  });
});
