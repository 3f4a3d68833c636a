import { describe, expect, it } from "vitest";
import type { Methods, NoteDoc, NoteRef } from "../generated";
import type { Backend } from "../platform/backend";
import { ApiError } from "./api-error";
import { NoteEditor } from "./note-editor.svelte";

const REF: NoteRef = { scope: "user", project: null, path: "conventions.md" };

function doc(content: string, sha256: string, path = REF.path): NoteDoc {
  return {
    note: {
      id: "n_1",
      scope: "user",
      project: null,
      path,
      title: content.split("\n")[0] ?? path,
      sha256,
      bytes: content.length,
      updated_at: "2026-03-01T10:00:00Z",
      versions: 1,
    },
    content,
  };
}

type Call = { method: keyof Methods; req: unknown };
type Handler = (req: never) => unknown;

/** A backend that answers from `handlers` (a thrown value is the call's failure) and records calls. */
function fakeBackend(handlers: Partial<Record<keyof Methods, Handler>>): Backend & { calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    async call<M extends keyof Methods>(method: M, req: Methods[M]["req"]): Promise<Methods[M]["res"]> {
      calls.push({ method, req: structuredClone(req) });
      const handler = handlers[method];
      if (!handler) throw new ApiError("not_found", `no handler for ${method}`);
      return (await handler(req as never)) as Methods[M]["res"];
    },
  };
}

const conflictError = () => new ApiError("conflict", "the note changed since it was read", { status: 409 });

describe("NoteEditor", () => {
  it("opens a note clean, becomes dirty on edit, and saves with the loaded sha256", async () => {
    const backend = fakeBackend({
      note_get: () => doc("# Old", "sha-1"),
      note_save: (req: Methods["note_save"]["req"]) => doc(req.content, "sha-2"),
    });
    const editor = new NoteEditor();
    expect(await editor.open(backend, REF)).toBe(true);
    expect(editor.draft).toBe("# Old");
    expect(editor.dirty).toBe(false);
    expect(await editor.save(backend)).toBe("unchanged");

    editor.edit("# New");
    expect(editor.dirty).toBe(true);
    expect(await editor.save(backend)).toBe("saved");
    expect(backend.calls.at(-1)).toEqual({
      method: "note_save",
      req: { note: REF, content: "# New", expected_sha256: "sha-1", create_only: false },
    });
    expect(editor.dirty).toBe(false);
    expect(editor.doc?.note.sha256).toBe("sha-2");
    expect(editor.savedAt).not.toBeNull();

    // The next save expects what the last save wrote.
    editor.edit("# Newer");
    await editor.save(backend);
    expect((backend.calls.at(-1)?.req as Methods["note_save"]["req"]).expected_sha256).toBe("sha-2");
  });

  it("on a conflict keeps the user's text, writes nothing more, and reads their version", async () => {
    const backend = fakeBackend({
      note_get: () => doc("# Theirs", "sha-theirs"),
      note_save: () => {
        throw conflictError();
      },
    });
    const editor = new NoteEditor();
    editor.load(doc("# Base", "sha-base"));
    editor.edit("# Mine");

    expect(await editor.save(backend)).toBe("conflict");
    expect(backend.calls.map((c) => c.method)).toEqual(["note_save", "note_get"]);
    expect(editor.draft).toBe("# Mine");
    expect(editor.dirty).toBe(true);
    expect(editor.saveError).toBeNull();
    expect(editor.conflict).toEqual({ theirs: doc("# Theirs", "sha-theirs"), gone: false, loading: false, error: null });
    // The base is still the version the user saw: saving again conflicts again instead of overwriting.
    expect(editor.doc?.note.sha256).toBe("sha-base");
    await editor.save(backend);
    expect((backend.calls.at(-2)?.req as Methods["note_save"]["req"]).expected_sha256).toBe("sha-base");
  });

  it("reload theirs shows their version and sets the user's text aside until dismissed", async () => {
    const backend = fakeBackend({
      note_get: () => doc("# Theirs", "sha-theirs"),
      note_save: () => {
        throw conflictError();
      },
    });
    const editor = new NoteEditor();
    editor.load(doc("# Base", "sha-base"));
    editor.edit("# Mine");
    await editor.save(backend);

    expect(editor.reloadTheirs()).toBe(true);
    expect(editor.conflict).toBeNull();
    expect(editor.draft).toBe("# Theirs");
    expect(editor.doc?.note.sha256).toBe("sha-theirs");
    expect(editor.dirty).toBe(false);
    expect(editor.setAside).toBe("# Mine");
    expect(editor.unsaved).toBe(true);

    editor.restoreSetAside();
    expect(editor.draft).toBe("# Mine");
    expect(editor.setAside).toBeNull();
    expect(editor.dirty).toBe(true);
  });

  it("keep mine rebases the draft on their version, so the next save replaces it deliberately", async () => {
    let saves = 0;
    const backend = fakeBackend({
      note_get: () => doc("# Theirs", "sha-theirs"),
      note_save: (req: Methods["note_save"]["req"]) => {
        if (saves++ === 0) throw conflictError();
        return doc(req.content, "sha-mine");
      },
    });
    const editor = new NoteEditor();
    editor.load(doc("# Base", "sha-base"));
    editor.edit("# Mine");
    await editor.save(backend);

    expect(editor.keepMine()).toBe(true);
    expect(editor.conflict).toBeNull();
    expect(editor.draft).toBe("# Mine");
    expect(editor.dirty).toBe(true);
    expect(await editor.save(backend)).toBe("saved");
    expect(backend.calls.at(-1)?.req).toEqual({ note: REF, content: "# Mine", expected_sha256: "sha-theirs", create_only: false });
    expect(editor.dirty).toBe(false);
  });

  it("when the note was deleted meanwhile, keep mine recreates it (create_only)", async () => {
    let saves = 0;
    const backend = fakeBackend({
      note_get: () => {
        throw new ApiError("not_found", "no such note");
      },
      note_save: (req: Methods["note_save"]["req"]) => {
        if (saves++ === 0) throw conflictError();
        return doc(req.content, "sha-new");
      },
    });
    const editor = new NoteEditor();
    editor.load(doc("# Base", "sha-base"));
    editor.edit("# Mine");
    await editor.save(backend);
    expect(editor.conflict).toMatchObject({ theirs: null, gone: true });
    expect(editor.reloadTheirs()).toBe(false);
    expect(editor.draft).toBe("# Mine");

    expect(editor.keepMine()).toBe(true);
    expect(editor.recreate).toBe(true);
    await editor.save(backend);
    expect(backend.calls.at(-1)?.req).toEqual({ note: REF, content: "# Mine", expected_sha256: null, create_only: true });
    expect(editor.recreate).toBe(false);
    expect(editor.dirty).toBe(false);
  });

  it("another failure is an error, not a conflict, and the draft stays", async () => {
    const backend = fakeBackend({
      note_save: () => {
        throw new ApiError("forbidden", "notes are read-only");
      },
    });
    const editor = new NoteEditor();
    editor.load(doc("a", "sha-a"));
    editor.edit("b");
    expect(await editor.save(backend)).toBe("failed");
    expect(editor.saveError?.code).toBe("forbidden");
    expect(editor.conflict).toBeNull();
    expect(editor.draft).toBe("b");
    expect(editor.dirty).toBe(true);
  });

  it("keeps text typed while a save was in flight", async () => {
    let finish: (d: NoteDoc) => void = () => {};
    const backend = fakeBackend({ note_save: () => new Promise<NoteDoc>((r) => (finish = r)) });
    const editor = new NoteEditor();
    editor.load(doc("a", "sha-a"));
    editor.edit("ab");
    const saving = editor.save(backend);
    expect(editor.saving).toBe(true);
    expect(await editor.save(backend)).toBe("busy");
    editor.edit("abc");
    finish(doc("ab", "sha-ab"));
    expect(await saving).toBe("saved");
    expect(editor.draft).toBe("abc");
    expect(editor.doc?.note.sha256).toBe("sha-ab");
    expect(editor.dirty).toBe(true);
  });

  it("a later open wins over an earlier one still loading; a failed open says why", async () => {
    const answers = new Map<string, () => Promise<NoteDoc>>();
    const backend = fakeBackend({ note_get: (ref: NoteRef) => answers.get(ref.path)!() });
    let slow: (d: NoteDoc) => void = () => {};
    answers.set("a.md", () => new Promise((r) => (slow = r)));
    answers.set("b.md", async () => doc("B", "sha-b", "b.md"));
    const editor = new NoteEditor();
    const first = editor.open(backend, { ...REF, path: "a.md" });
    expect(await editor.open(backend, { ...REF, path: "b.md" })).toBe(true);
    slow(doc("A", "sha-a", "a.md"));
    expect(await first).toBe(false);
    expect(editor.doc?.note.path).toBe("b.md");

    answers.set("gone.md", async () => {
      throw new ApiError("not_found", "no such note");
    });
    expect(await editor.open(backend, { ...REF, path: "gone.md" })).toBe(false);
    expect(editor.doc).toBeNull();
    expect(editor.loadError?.code).toBe("not_found");
    expect(editor.opening?.path).toBe("gone.md");
  });

  it("discard puts the loaded text back; a rename keeps the draft", () => {
    const editor = new NoteEditor();
    editor.load(doc("a", "sha-a"));
    editor.edit("changed");
    editor.applySummary({ ...doc("a", "sha-a").note, path: "renamed.md" });
    expect(editor.ref?.path).toBe("renamed.md");
    expect(editor.draft).toBe("changed");
    editor.discard();
    expect(editor.draft).toBe("a");
    expect(editor.unsaved).toBe(false);
  });
});
