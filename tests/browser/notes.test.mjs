// End-to-end: the Notes view against a real `cairn daemon` — create, edit, preview, scopes,
// the unsaved-changes guard, a conflicting save, version history (restore, redact), rename,
// delete, and opening a note from a Search hit. What the page shows is checked against what
// the API says.
//   CAIRN_BIN=target/debug/cairn node --test tests/browser/
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cleanUp, eventually, openPage, outDir, rpc, rpcOk, startDaemon } from "./harness.mjs";

const STEP_TIMEOUT = 10_000;
const PROJECT = "github.com/acme/notes-demo";
const USER_NOTE = { scope: "user", project: null, path: "conventions.md" };
const PROJECT_NOTE = { scope: "project", project: PROJECT, path: "design.md" };
const FIRST = "# Conventions\n\nFirst draft.";
const EDITED = "# House rules\n\nUse **tabs**.\n\n- one\n- two\n\n```sh\nmake test\n```\n\n<script>window.__xss = 1</script> [bad](javascript:window.__xss=2)";

/** The service may end a note with a newline; compare texts without trailing whitespace. */
const norm = (s) => (s ?? "").replace(/\s+$/, "");

describe("Notes in a browser against cairn daemon", { timeout: 240_000 }, () => {
  let daemon;
  let browser;
  let page;
  let pageErrors;

  const byTestId = (id) => page.getByTestId(id);
  const api = (method, params = {}) => rpcOk(daemon.base, method, params, daemon.token);
  const row = (path) => page.locator(`[data-testid="note-row"][data-path="${path}"]`);
  const openNote = (path) => page.locator(`[data-testid="note-open"][data-path="${path}"]`);
  const saveState = (state) => page.locator(`[data-testid="note-status"][data-state="${state}"]`);
  const version = (n) => page.locator(`[data-testid="note-version"][data-version="${n}"]`);

  async function createNote(path, content) {
    await byTestId("note-new").click();
    await byTestId("note-create-form").waitFor();
    await byTestId("note-new-path").fill(path);
    await byTestId("note-new-content").fill(content);
    await byTestId("note-create").click();
    await openNote(path).waitFor();
    await row(path).waitFor();
  }

  before(async () => {
    daemon = await startDaemon({ logName: "browser-notes-daemon.log" });
    ({ browser, page, pageErrors } = await openPage({ viewport: { width: 1400, height: 900 }, timeoutMs: STEP_TIMEOUT }));
  });

  after(() => cleanUp([() => browser?.close(), () => daemon?.stop()]));

  it("opens Notes on your own (user) scope, with no notes yet", async () => {
    await page.goto(`${daemon.base}/#/notes?token=${encodeURIComponent(daemon.token)}`);
    await page.waitForSelector('[data-testid="status-indicator"][data-state="on"]');
    await byTestId("view-notes").waitFor();
    assert.equal(await byTestId("notes-scope").inputValue(), "user");
    await byTestId("notes-empty").waitFor();
    await byTestId("notes-placeholder").waitFor();
    assert.deepEqual((await api("notes_list", { scope: "user", project: null })).notes, []);
  });

  it("creates a user note, edits it, saves with Ctrl+S, and the preview renders it safely", async () => {
    await createNote(USER_NOTE.path, FIRST);
    assert.equal(await byTestId("note-editor").inputValue(), FIRST);
    assert.equal(norm((await api("note_get", USER_NOTE)).content), FIRST);
    assert.equal(await byTestId("note-preview").locator("h1").innerText(), "Conventions");

    await byTestId("note-editor").fill(EDITED);
    await saveState("dirty").waitFor();
    await byTestId("note-editor").press("Control+s");
    await saveState("saved").waitFor();

    const preview = byTestId("note-preview");
    assert.equal(await preview.locator("h1").innerText(), "House rules");
    assert.equal(await preview.locator("strong").innerText(), "tabs");
    assert.equal(await preview.locator("li").count(), 2);
    assert.equal(await preview.locator("pre code").innerText(), "make test");
    // Markup in a note is text: no script element, no javascript: link, nothing ran.
    assert.equal(await preview.locator("script").count(), 0);
    assert.equal(await preview.locator('a[href^="javascript:" i]').count(), 0);
    assert.match(await preview.innerText(), /<script>window\.__xss = 1<\/script>/);
    assert.equal(await page.evaluate(() => window.__xss), undefined);

    const doc = await api("note_get", USER_NOTE);
    assert.equal(norm(doc.content), EDITED);
    assert.equal(doc.note.title, "House rules");
    await page.waitForSelector(`[data-testid="note-row"][data-path="${USER_NOTE.path}"]:has-text("House rules")`);
  });

  it("a project note is listed under its project and not under You", async () => {
    await byTestId("notes-add-project").click();
    await byTestId("notes-project-input").fill(PROJECT);
    await byTestId("notes-project-go").click();
    assert.equal(await byTestId("notes-scope").inputValue(), `project:${PROJECT}`);
    await byTestId("notes-empty").waitFor();

    await createNote(PROJECT_NOTE.path, "# Design\n\nOnly for this project.");
    assert.equal(await openNote(PROJECT_NOTE.path).getAttribute("data-scope"), "project");
    const inProject = await api("notes_list", { scope: "project", project: PROJECT });
    assert.deepEqual(
      inProject.notes.map((n) => n.path),
      [PROJECT_NOTE.path],
    );
    assert.ok(inProject.projects.includes(PROJECT), `notes_list.projects includes ${PROJECT}: ${JSON.stringify(inProject.projects)}`);

    await byTestId("notes-scope").selectOption("user");
    await page.waitForSelector(`[data-testid="note-list"][data-scope="user"] [data-testid="note-row"][data-path="${USER_NOTE.path}"]`);
    assert.equal(await row(PROJECT_NOTE.path).count(), 0, "the project note is not listed under You");
    const mine = await api("notes_list", { scope: "user", project: null });
    assert.deepEqual(
      mine.notes.map((n) => n.path),
      [USER_NOTE.path],
    );
    // The project is offered in the picker from now on.
    assert.equal(await byTestId("notes-scope").locator(`option[value="project:${PROJECT}"]`).count(), 1);
  });

  it("switching notes with unsaved text asks first, and Keep editing keeps it", async () => {
    await api("note_save", { note: { ...USER_NOTE, path: "second.md" }, content: "# Second\n", expected_sha256: null, create_only: true });
    await byTestId("notes-refresh").click();
    await row("second.md").waitFor();

    await row(USER_NOTE.path).click();
    await openNote(USER_NOTE.path).waitFor();
    await byTestId("note-editor").fill(`${EDITED}\n\nnot saved yet`);
    await saveState("dirty").waitFor();

    await row("second.md").click();
    const dialog = byTestId("unsaved-dialog");
    await dialog.waitFor();
    await dialog.getByTestId("confirm-cancel").click();
    await dialog.waitFor({ state: "detached" });
    await openNote(USER_NOTE.path).waitFor();
    assert.equal(await byTestId("note-editor").inputValue(), `${EDITED}\n\nnot saved yet`);

    await row("second.md").click();
    await dialog.waitFor();
    await dialog.getByTestId("confirm-ok").click();
    await openNote("second.md").waitFor();
    assert.equal(norm((await api("note_get", USER_NOTE)).content), EDITED, "discarding wrote nothing");
  });

  it("a save over another writer's change shows the conflict panel and writes nothing", async () => {
    await row(USER_NOTE.path).click();
    await openNote(USER_NOTE.path).waitFor();
    const loaded = await api("note_get", USER_NOTE);
    const mine = `${norm(loaded.content)}\n\nMine: keep tabs.`;
    await byTestId("note-editor").fill(mine);
    await saveState("dirty").waitFor();

    // Someone else (an agent) writes the note while the editor holds unsaved text.
    const theirs = "# House rules\n\nTheirs: use spaces.";
    await api("note_save", { note: USER_NOTE, content: theirs, expected_sha256: loaded.note.sha256, create_only: false });

    await byTestId("note-save").click();
    const conflict = byTestId("note-conflict");
    await conflict.waitFor();
    assert.match(await conflict.innerText(), /This note changed since you opened it/);
    await saveState("conflict").waitFor();
    assert.equal(await byTestId("note-editor").inputValue(), mine, "the user's text stays in the editor");
    assert.equal(norm((await api("note_get", USER_NOTE)).content), theirs, "the other writer's version is kept");

    await byTestId("conflict-view-theirs").click();
    assert.match(await byTestId("conflict-theirs").innerText(), /Theirs: use spaces\./);
    await byTestId("conflict-copy-mine").click();
    await byTestId("copy-notice").waitFor();

    // Reload theirs: their version in the editor, the user's text set aside (not lost).
    await byTestId("conflict-reload-theirs").click();
    await conflict.waitFor({ state: "detached" });
    assert.equal(norm(await byTestId("note-editor").inputValue()), theirs);
    assert.match(await byTestId("note-set-aside-text").innerText(), /Mine: keep tabs\./);
    assert.equal(norm((await api("note_get", USER_NOTE)).content), theirs);

    // Putting it back and saving now replaces their version deliberately.
    await byTestId("set-aside-restore").click();
    assert.equal(await byTestId("note-editor").inputValue(), mine);
    await byTestId("note-save").click();
    await saveState("saved").waitFor();
    assert.equal(norm((await api("note_get", USER_NOTE)).content), norm(mine));
  });

  it("history: views an old version and restores it as a new version", async () => {
    await byTestId("note-history-toggle").click();
    await byTestId("note-history").waitFor();
    const before = (await api("note_versions", USER_NOTE)).versions;
    assert.ok(before.length >= 4, `versions so far: ${JSON.stringify(before.map((v) => v.action))}`);
    const created = before.find((v) => v.action === "create");
    assert.ok(created, "the first version is a create");
    await version(created.version).waitFor();
    assert.match(await version(created.version).innerText(), /Created/);

    await version(created.version).getByTestId("note-version-view").click();
    assert.match(await byTestId("note-version-content").innerText(), /First draft\./);

    await version(created.version).getByTestId("note-version-restore").click();
    await eventually(async () => norm(await byTestId("note-editor").inputValue()) === FIRST);
    assert.equal(norm(await byTestId("note-editor").inputValue()), FIRST);
    // A clean editor shows no status text, so the element is there but empty.
    await saveState("clean").waitFor({ state: "attached" });
    assert.equal(norm((await api("note_get", USER_NOTE)).content), FIRST);

    const afterRestore = (await api("note_versions", USER_NOTE)).versions;
    assert.equal(afterRestore.length, before.length + 1);
    assert.equal(afterRestore[0].action, "restore", "newest first, and the restore is a new version");
    await page.waitForSelector(`[data-testid="note-version"][data-version="${afterRestore[0].version}"][data-action="restore"]`);
  });

  it("history: redacting a version asks first, then shows who redacted it and when", async () => {
    const versions = (await api("note_versions", USER_NOTE)).versions;
    // The oldest edit: the first save from the editor.
    const target = versions.filter((v) => v.action === "edit").at(-1);
    assert.ok(target, "there is an edit to redact");
    const line = version(target.version);

    await line.getByTestId("note-version-redact").click();
    const dialog = byTestId("redact-dialog");
    await dialog.waitFor();
    await dialog.getByTestId("confirm-cancel").click();
    await dialog.waitFor({ state: "detached" });
    assert.equal((await api("note_versions", USER_NOTE)).versions.find((v) => v.version === target.version).redacted_at, null);

    await line.getByTestId("note-version-redact").click();
    await dialog.waitFor();
    await dialog.getByTestId("confirm-ok").click();
    await dialog.waitFor({ state: "detached" });
    await page.waitForSelector(`[data-testid="note-version"][data-version="${target.version}"][data-redacted="true"]`);
    assert.match(await line.getByTestId("note-version-redacted").innerText(), /^redacted by .+ at .+/);
    assert.equal(await line.getByTestId("note-version-view").isDisabled(), true);

    const redacted = (await api("note_versions", USER_NOTE)).versions.find((v) => v.version === target.version);
    assert.ok(redacted.redacted_at, "redacted_at is set");
    assert.ok(redacted.redacted_by, "redacted_by is set");
    const doc = await api("note_version", { note: USER_NOTE, version: target.version, expected_sha256: null });
    assert.equal(doc.content, null, "a redacted version has no content");
    assert.equal(norm((await api("note_get", USER_NOTE)).content), FIRST, "redacting an old version leaves the note as it is");
  });

  it("renames the note, then deletes it after confirming", async () => {
    await byTestId("note-rename").click();
    await byTestId("note-rename-path").fill("rules/house.md");
    await byTestId("note-rename-confirm").click();
    await openNote("rules/house.md").waitFor();
    await row("rules/house.md").waitFor();
    await eventually(async () => (await row(USER_NOTE.path).count()) === 0);
    assert.equal(await row(USER_NOTE.path).count(), 0);
    const renamed = { ...USER_NOTE, path: "rules/house.md" };
    assert.equal(norm((await api("note_get", renamed)).content), FIRST);
    assert.equal((await rpc(daemon.base, "note_get", USER_NOTE, daemon.token)).status, 404);

    await byTestId("note-delete").click();
    const dialog = byTestId("delete-dialog");
    await dialog.waitFor();
    await dialog.getByTestId("confirm-cancel").click();
    await dialog.waitFor({ state: "detached" });
    assert.equal(norm((await api("note_get", renamed)).content), FIRST, "cancel deletes nothing");

    await byTestId("note-delete").click();
    await dialog.waitFor();
    await dialog.getByTestId("confirm-ok").click();
    await dialog.waitFor({ state: "detached" });
    await byTestId("notes-placeholder").waitFor();
    await eventually(async () => (await row("rules/house.md").count()) === 0);
    assert.equal(await row("rules/house.md").count(), 0);
    const gone = await rpc(daemon.base, "note_get", renamed, daemon.token);
    assert.equal(gone.status, 404);
    assert.equal(gone.body?.code, "not_found");
  });

  it("a note found in Search opens in Notes, in its scope", async () => {
    const note = { scope: "user", project: null, path: "search-me.md" };
    const content = "# Heron runbook\nRestart the heron queue with care.\n";
    const saved = await api("note_save", { note, content, expected_sha256: null, create_only: true });
    const query = { query: "heron queue", framework: null, project: null, since: null, until: null, limit: 50, exclude_session: null, mode: null, rerank: null, kinds: null };
    const found = await eventually(async () => (await api("search", query)).hits.find((h) => h.id === saved.note.id));
    assert.ok(found, "the service finds the note");
    assert.equal(found.source, "note");
    assert.equal(found.title, "Heron runbook");

    // Start from another scope, so that opening the note has to switch back to You.
    await byTestId("notes-scope").selectOption(`project:${PROJECT}`);
    await page.waitForSelector(`[data-testid="note-list"][data-scope="project:${PROJECT}"]`);

    await byTestId("nav-search").click();
    await byTestId("view-search").waitFor();
    await byTestId("search-input").fill("heron queue");
    await byTestId("search-input").press("Enter");
    const hit = page.locator(`[data-testid="search-hit"][data-source="note"][data-id="${saved.note.id}"]`);
    await hit.waitFor();
    assert.equal(await hit.getByTestId("search-hit-title").innerText(), "Heron runbook");
    assert.match(await hit.innerText(), /Note/);
    assert.match(await hit.innerText(), /You/);
    assert.match(await hit.innerText(), /Restart the heron queue/);
    assert.equal(await hit.getByTestId("search-result").count(), 0, "a note hit is not a conversation turn");

    await hit.click();
    await byTestId("view-notes").waitFor();
    await openNote(note.path).waitFor();
    assert.equal(await openNote(note.path).getAttribute("data-scope"), "user");
    assert.equal(await byTestId("note-title").innerText(), "Heron runbook");
    assert.equal(norm(await byTestId("note-editor").inputValue()), norm(content));
    assert.equal(await byTestId("notes-scope").inputValue(), "user");
    await page.waitForSelector(`[data-testid="note-list"][data-scope="user"] [data-testid="note-row"][data-path="${note.path}"][aria-current="true"]`);
    assert.equal(new URL(page.url()).hash, `#/notes?id=${saved.note.id}`);

    // An id that names no note says so, and leaves the open note as it is.
    await page.evaluate(() => (window.location.hash = "#/notes?id=n_nosuchnote"));
    const problem = byTestId("note-open-error");
    await problem.waitFor();
    assert.match(await problem.innerText(), /No note has the id n_nosuchnote/);
    await openNote(note.path).waitFor();
  });

  it("screenshots Notes, with no page errors", async () => {
    await row("second.md").click();
    await openNote("second.md").waitFor();
    await byTestId("note-editor").fill("# Second\n\n## A list\n\n- [x] done\n- [ ] to do\n\n> A quote with `code`.\n\n| a | b |\n|---|--:|\n| 1 | 2 |");
    const file = join(outDir(), "browser-notes.png");
    await page.screenshot({ path: file, fullPage: true });
    assert.ok(statSync(file).size > 10_000, `${file} looks empty`);
    assert.deepEqual(pageErrors, []);
  });
});
