import { describe, expect, it } from "vitest";
import type { Methods, NoteDoc, NoteVersion } from "../generated";
import type { Backend } from "../platform/backend";
import { ApiError } from "./api-error";
import { NoteEditor } from "./note-editor.svelte";
import { EditorPanels, NewNoteForm, VersionHistory } from "./note-panels.svelte";
import { projectScope, USER_SCOPE } from "./notes";

function doc(path: string, sha256: string, content = "# Note"): NoteDoc {
  return {
    note: { id: "n_1", scope: "user", project: null, path, title: "Note", sha256, bytes: content.length, updated_at: "2026-03-01T10:00:00Z", versions: 2 },
    content,
  };
}

function version(n: number, over: Partial<NoteVersion> = {}): NoteVersion {
  return { version: n, action: "edit", path: "a.md", sha256: `sha-${n}`, author: "user", at: "2026-03-01T10:00:00Z", bytes: 6, redacted_at: null, redacted_by: null, ...over };
}

type Answer = (req: never) => unknown;

/** Answers each method from `answers` (a thrown value is the call's failure); records the requests. */
function backendOf(answers: Partial<Record<keyof Methods, Answer>>): Backend & { sent: [keyof Methods, unknown][] } {
  const sent: [keyof Methods, unknown][] = [];
  return {
    sent,
    async call<M extends keyof Methods>(method: M, req: Methods[M]["req"]): Promise<Methods[M]["res"]> {
      sent.push([method, req]);
      const answer = answers[method];
      if (!answer) throw new ApiError("not_found", `no answer for ${method}`);
      return (await answer(req as never)) as Methods[M]["res"];
    },
  };
}

const conflict = () => new ApiError("conflict", "changed", { status: 409 });

describe("NewNoteForm", () => {
  it("refuses a path that cannot name a note, with the reason", () => {
    const form = new NewNoteForm();
    form.path = " /abs.md ";
    expect(form.checkedPath()).toBeNull();
    expect(form.error).toMatch(/relative to the scope/);
    form.path = " notes/a.md ";
    expect(form.checkedPath()).toBe("notes/a.md");
  });

  it("creates only a new note, and says where one already exists", async () => {
    const form = new NewNoteForm();
    form.content = "# A";
    const ok = backendOf({ note_save: () => doc("a.md", "sha-1") });
    expect(await form.create(ok, projectScope("github.com/acme/app"), "a.md")).toEqual(doc("a.md", "sha-1"));
    expect(ok.sent).toEqual([
      ["note_save", { note: { scope: "project", project: "github.com/acme/app", path: "a.md" }, content: "# A", expected_sha256: null, create_only: true }],
    ]);
    expect(form.busy).toBe(false);

    const taken = backendOf({ note_save: () => Promise.reject(conflict()) });
    expect(await form.create(taken, USER_SCOPE, "a.md")).toBeNull();
    expect(form.error).toBe("A note already exists at a.md in You.");

    form.reset();
    expect([form.path, form.content, form.error]).toEqual(["", "", null]);
  });
});

describe("EditorPanels", () => {
  it("renames the editor's note, expecting the version it shows", async () => {
    const editor = new NoteEditor();
    editor.load(doc("a.md", "sha-1"));
    const panels = new EditorPanels();
    panels.openRename(editor.doc);
    expect([panels.renaming, panels.renamePath]).toEqual([true, "a.md"]);

    // The same path closes the form without asking the service.
    const none = backendOf({});
    expect(await panels.rename(none, editor)).toBe(false);
    expect([panels.renaming, none.sent]).toEqual([false, []]);

    panels.openRename(editor.doc);
    panels.renamePath = "b.md";
    const ok = backendOf({ note_rename: () => doc("b.md", "sha-1").note });
    expect(await panels.rename(ok, editor)).toBe(true);
    expect(ok.sent).toEqual([["note_rename", { note: { scope: "user", project: null, path: "a.md" }, new_path: "b.md", expected_sha256: "sha-1" }]]);
    expect(editor.doc?.note.path).toBe("b.md");
    expect(panels.renaming).toBe(false);
  });

  it("keeps the form open with the reason when the rename fails", async () => {
    const editor = new NoteEditor();
    editor.load(doc("a.md", "sha-1"));
    const panels = new EditorPanels();
    panels.openRename(editor.doc);
    panels.renamePath = "b.md";
    expect(await panels.rename(backendOf({ note_rename: () => Promise.reject(conflict()) }), editor)).toBe(false);
    expect(panels.renaming).toBe(true);
    expect(panels.renameError).toMatch(/^Could not rename: /);
    expect(panels.renameBusy).toBe(false);

    panels.showTheirs = true;
    panels.reset();
    expect([panels.renaming, panels.renameError, panels.showTheirs, panels.copied]).toEqual([false, null, false, null]);
  });
});

describe("VersionHistory", () => {
  it("reads the versions of the note the editor shows now; an earlier answer never replaces a later one", async () => {
    const editor = new NoteEditor();
    editor.load(doc("a.md", "sha-1"));
    const history = new VersionHistory(editor);
    let release: (v: unknown) => void = () => {};
    let calls = 0;
    const backend = backendOf({
      note_versions: () => (calls++ === 0 ? new Promise((r) => (release = () => r({ versions: [version(1)] }))) : { versions: [version(1), version(2)] }),
    });
    const slow = history.load(backend);
    editor.load(doc("b.md", "sha-2"));
    await history.load(backend);
    release(undefined);
    await slow;
    expect(history.versions?.map((v) => v.version)).toEqual([1, 2]);
    expect(backend.sent.map(([, req]) => (req as { path: string }).path)).toEqual(["a.md", "b.md"]);
    expect(history.loading).toBe(false);
  });

  it("restores a version into the editor, and explains a conflict", async () => {
    const editor = new NoteEditor();
    editor.load(doc("a.md", "sha-2"));
    const history = new VersionHistory(editor);
    history.viewing = { version: version(1), content: "# Old" };
    const ok = backendOf({ note_restore: () => doc("a.md", "sha-3", "# Old") });
    expect(await history.restore(ok, version(1))).toBe(true);
    expect(ok.sent).toEqual([["note_restore", { note: { scope: "user", project: null, path: "a.md" }, version: 1, expected_sha256: "sha-2" }]]);
    expect([editor.draft, history.viewing, history.busy]).toEqual(["# Old", null, null]);

    expect(await history.restore(backendOf({ note_restore: () => Promise.reject(conflict()) }), version(1))).toBe(false);
    expect(history.error).toMatch(/^This note changed since you opened it, so nothing was restored/);
  });

  it("redacts the version asked for, and empties the viewer that showed it", async () => {
    const editor = new NoteEditor();
    editor.load(doc("a.md", "sha-2"));
    const history = new VersionHistory(editor);
    history.versions = [version(1), version(2)];
    history.viewing = { version: version(1), content: "# Old" };
    const redacted = version(1, { redacted_at: "2026-03-02T10:00:00Z", redacted_by: "user" });
    const backend = backendOf({ note_redact: () => redacted, note_versions: () => ({ versions: [redacted, version(2)] }) });
    history.askRedact(version(1));
    await history.redact(backend);
    expect(history.redactTarget).toBeNull();
    expect(history.versions?.[0]).toEqual(redacted);
    expect(history.viewing).toEqual({ version: redacted, content: null });
    expect(backend.sent.map(([m]) => m)).toEqual(["note_redact", "note_versions"]);

    history.open = true;
    history.toggle();
    expect([history.open, history.viewing]).toEqual([false, null]);
  });
});
