// Export and import from Settings: everything captured and noted is exported to a folder
// (keyboard only), memory is cleared, the folder is imported back and every count returns;
// importing it again adds nothing; a damaged copy is refused, naming the file, and imports
// nothing. Every step is checked against the API as well.
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/transfer.test.mjs
import assert from "node:assert/strict";
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cairnBin, cleanUp, fakeAgentHome, openPage, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 10_000;

// Not a skip: without the binary this suite fails, and says why.
it("CAIRN_BIN names the cairn binary to test against", () => {
  assert.ok(cairnBin());
});

describe("Export and import in the browser against cairn daemon", { timeout: 180_000 }, () => {
  let daemon;
  let browser;
  let page;
  let pageErrors;
  let fake;
  let out;
  let exported;
  let before_;

  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);
  const byTestId = (id) => page.getByTestId(id);
  const counts = async () => (await api("status")).counts;

  before(async () => {
    fake = fakeAgentHome();
    out = mkdtempSync(join(tmpdir(), "cairn-transfer-"));
    daemon = await startDaemon({ env: fake.env, logName: "browser-transfer-daemon.log" });
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1280, height: 1000 }, timeoutMs: STEP_TIMEOUT }));
    const report = await api("capture_run");
    assert.ok(report.frameworks.some((f) => f.added > 0), JSON.stringify(report));
    const user = { scope: "user", project: null, path: "conventions.md" };
    await api("note_save", { note: user, content: "# Conventions\nTabs.\n", expected_sha256: null, create_only: true });
    const saved = await api("note_get", user);
    await api("note_save", { note: user, content: "# Conventions\nSpaces.\n", expected_sha256: saved.note.sha256, create_only: false });
    const project = { scope: "project", project: "/tmp/heron", path: "design/index.md" };
    await api("note_save", { note: project, content: "# Index\nRebuilt nightly.\n", expected_sha256: null, create_only: true });
    before_ = await counts();
    assert.ok(before_.records > 0 && before_.notes === 2, JSON.stringify(before_));
    await page.goto(`${daemon.base}/#/settings?token=${encodeURIComponent(daemon.token)}`);
    await page.waitForSelector('[data-testid="status-indicator"][data-state="on"]');
    await byTestId("view-settings").waitFor();
  });

  after(() =>
    cleanUp([() => browser?.close(), () => daemon?.stop(), () => fake?.remove(), () => out && rmSync(out, { recursive: true, force: true })]),
  );

  it("exports everything to a new folder by keyboard, and the report counts what was written", async () => {
    exported = join(out, "export");
    await byTestId("export-dir").focus();
    await page.keyboard.type(exported);
    await page.keyboard.press("Enter");
    const result = byTestId("export-result");
    await result.waitFor({ timeout: 60_000 });
    const text = await result.innerText();
    assert.match(text, new RegExp(`${before_.records} records?`), text);
    assert.match(text, /2 notes \(3 versions\)/, text);
    const manifest = JSON.parse(readFileSync(join(exported, "manifest.json"), "utf8"));
    assert.equal(manifest.format, "cairn-export");
    assert.equal(manifest.counts.records, before_.records);
    assert.ok(existsSync(join(exported, "notes", "user", "conventions.md")));
    assert.match(readFileSync(join(exported, "notes", "user", "conventions.md"), "utf8"), /---\n# Conventions\nSpaces\.\n$/);
    // A second export into the same folder is refused: it is not empty.
    await byTestId("export-run").click();
    await byTestId("export-error").waitFor({ timeout: STEP_TIMEOUT });
    assert.match(await byTestId("export-error").innerText(), /not empty/);
  });

  it("after Clear, Import brings every record and note back; importing again adds nothing", async () => {
    await api("clear", { notes: true });
    assert.equal((await counts()).records, 0);
    assert.equal((await counts()).notes, 0);

    await byTestId("import-dir").fill(exported);
    await byTestId("import-run").click();
    await byTestId("import-result").waitFor({ timeout: 60_000 });
    assert.match(await byTestId("import-records").innerText(), new RegExp(`^${before_.records.toLocaleString("en-US")} added · 0 already there · 0 conflicting`));
    assert.match(await byTestId("import-notes").innerText(), /^2 added · 0 already there · 0 conflicting/);
    const restored = await counts();
    assert.equal(restored.records, before_.records);
    assert.equal(restored.chunks, before_.chunks);
    assert.equal(restored.notes, before_.notes);
    const doc = await api("note_get", { scope: "user", project: null, path: "conventions.md" });
    assert.equal(doc.content, "# Conventions\nSpaces.\n");
    assert.equal((await api("note_versions", { scope: "user", project: null, path: "conventions.md" })).versions.length, 2);

    await byTestId("import-run").click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="import-notes"]')?.textContent?.startsWith("0 added · 2 already there"),
      null,
      { timeout: 60_000 },
    );
    assert.match(await byTestId("import-records").innerText(), new RegExp(`^0 added · ${before_.records.toLocaleString("en-US")} already there`));
    assert.deepEqual(await counts(), restored);
  });

  it("refuses a damaged export, naming the file, and imports nothing from it", async () => {
    await api("clear", { notes: true });
    const bad = join(out, "bad");
    cpSync(exported, bad, { recursive: true });
    appendFileSync(join(bad, "notes.jsonl"), "{not json\n");
    await byTestId("import-dir").fill(bad);
    await byTestId("import-run").click();
    await byTestId("import-error").waitFor({ timeout: STEP_TIMEOUT });
    const text = await byTestId("import-error").innerText();
    // A file that grew is refused by its size before its hash is read.
    assert.match(text, /Nothing was imported: notes\.jsonl: (its sha256 does not match|it is larger than the [\d,]+ bytes the manifest says)/, text);
    const now = await counts();
    assert.equal(now.records, 0);
    assert.equal(now.notes, 0);
    assert.deepEqual(pageErrors, []);
  });
});
