/**
 * What the Notes view shows around the open note: the New note form, the rename form and a
 * conflict's panel, and the note's history. The view keeps this state and hands it to the
 * components that show it (NoteCreate, NoteEditor, NoteHistory): they come and go (the New note
 * form takes the editor's place for a while) and the state stays as it was.
 */
import type { NoteDoc, NoteVersion, NoteVersionDoc } from "../generated";
import type { Backend } from "../platform";
import { describeError, toApiError } from "./api-error";
import type { NoteEditor } from "./note-editor.svelte";
import { notePathProblem, refIn, refOf, scopeName, type NoteScope } from "./notes";

/** The New note form. */
export class NewNoteForm {
  path = $state("");
  content = $state("");
  busy = $state(false);
  error = $state<string | null>(null);

  /** Empties the form for a new note. */
  reset(): void {
    this.path = "";
    this.content = "";
    this.error = null;
  }

  /** The path typed, trimmed; null (and the reason shown) when it cannot name a note. */
  checkedPath(): string | null {
    const path = this.path.trim();
    const problem = notePathProblem(path);
    if (problem !== null) {
      this.error = problem;
      return null;
    }
    return path;
  }

  /** Creates the note at `path` in `scope`; null when it was not created (the reason shown). */
  async create(backend: Backend, scope: NoteScope, path: string): Promise<NoteDoc | null> {
    this.busy = true;
    this.error = null;
    try {
      return await backend.call("note_save", {
        note: refIn(scope, path),
        content: this.content,
        expected_sha256: null,
        create_only: true,
      });
    } catch (err) {
      const e = toApiError(err);
      this.error =
        e.code === "conflict"
          ? `A note already exists at ${path} in ${scopeName(scope.scope, scope.project)}.`
          : `Could not create the note: ${describeError(e)}`;
      return null;
    } finally {
      this.busy = false;
    }
  }
}

/** The open note's rename form, and what a conflict's panel shows. */
export class EditorPanels {
  renaming = $state(false);
  renamePath = $state("");
  renameBusy = $state(false);
  renameError = $state<string | null>(null);
  /** The conflict panel shows their version. */
  showTheirs = $state(false);
  /** What the latest copy to the clipboard did. */
  copied = $state<string | null>(null);

  /** Closes everything, for another note. */
  reset(): void {
    this.renaming = false;
    this.renameError = null;
    this.showTheirs = false;
    this.copied = null;
  }

  openRename(doc: NoteDoc | null): void {
    if (doc === null) return;
    this.renaming = true;
    this.renamePath = doc.note.path;
    this.renameError = null;
  }

  /** Renames the editor's note to the path typed; true when it was renamed. */
  async rename(backend: Backend, editor: NoteEditor): Promise<boolean> {
    const doc = editor.doc;
    if (doc === null || this.renameBusy) return false;
    const path = this.renamePath.trim();
    if (path === doc.note.path) {
      this.renaming = false;
      return false;
    }
    const problem = notePathProblem(path);
    if (problem !== null) {
      this.renameError = problem;
      return false;
    }
    this.renameBusy = true;
    this.renameError = null;
    try {
      const summary = await backend.call("note_rename", {
        note: refOf(doc.note),
        new_path: path,
        expected_sha256: doc.note.sha256,
      });
      editor.applySummary(summary);
      this.renaming = false;
      return true;
    } catch (err) {
      this.renameError = `Could not rename: ${describeError(err)}`;
      return false;
    } finally {
      this.renameBusy = false;
    }
  }

  async copyText(text: string, what: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(text);
      this.copied = `${what} copied to the clipboard.`;
    } catch {
      this.copied = "The clipboard is not available here: select the text and copy it yourself.";
    }
  }
}

/** The open note's history: its versions, the one being read, and the one to redact. */
export class VersionHistory {
  open = $state(false);
  versions = $state<NoteVersion[] | null>(null);
  loading = $state(false);
  error = $state<string | null>(null);
  /** The version being read or restored. */
  busy = $state<number | null>(null);
  viewing = $state<NoteVersionDoc | null>(null);
  viewingError = $state<string | null>(null);
  redactTarget = $state<NoteVersion | null>(null);
  redactBusy = $state(false);
  redactError = $state<string | null>(null);

  #editor: NoteEditor;
  #seq = 0;

  constructor(editor: NoteEditor) {
    this.#editor = editor;
  }

  toggle(): void {
    this.open = !this.open;
    if (!this.open) {
      this.viewing = null;
      this.viewingError = null;
    }
  }

  /** Forgets what was shown of the previous note's history. */
  clear(): void {
    this.viewing = null;
    this.viewingError = null;
    this.error = null;
    this.versions = null;
  }

  /** Reads the versions of the editor's note. */
  async load(backend: Backend): Promise<void> {
    const doc = this.#editor.doc;
    if (doc === null) return;
    const seq = ++this.#seq;
    this.loading = true;
    try {
      const res = await backend.call("note_versions", refOf(doc.note));
      if (seq !== this.#seq) return;
      this.versions = res.versions;
      this.error = null;
    } catch (err) {
      if (seq !== this.#seq) return;
      this.error = `Could not load the history: ${describeError(err)}`;
    } finally {
      if (seq === this.#seq) this.loading = false;
    }
  }

  async view(backend: Backend, v: NoteVersion): Promise<void> {
    const doc = this.#editor.doc;
    if (doc === null) return;
    this.busy = v.version;
    this.viewingError = null;
    try {
      this.viewing = await backend.call("note_version", { note: refOf(doc.note), version: v.version, expected_sha256: null });
    } catch (err) {
      this.viewing = null;
      this.viewingError = `Could not read version ${v.version}: ${describeError(err)}`;
    } finally {
      this.busy = null;
    }
  }

  /** Restores version `v` into the editor's note (and the editor); true when it was restored. */
  async restore(backend: Backend, v: NoteVersion): Promise<boolean> {
    const doc = this.#editor.doc;
    if (doc === null) return false;
    this.busy = v.version;
    this.error = null;
    try {
      const restored = await backend.call("note_restore", {
        note: refOf(doc.note),
        version: v.version,
        expected_sha256: doc.note.sha256,
      });
      this.#editor.load(restored);
      this.viewing = null;
      return true;
    } catch (err) {
      const e = toApiError(err);
      this.error =
        e.code === "conflict"
          ? "This note changed since you opened it, so nothing was restored. Open it again, then restore."
          : `Could not restore version ${v.version}: ${describeError(e)}`;
      return false;
    } finally {
      this.busy = null;
    }
  }

  /** Asks to redact `v` (the view confirms first). */
  askRedact(v: NoteVersion): void {
    this.redactError = null;
    this.redactTarget = v;
  }

  /** Redacts the version asked for. */
  async redact(backend: Backend): Promise<void> {
    const doc = this.#editor.doc;
    const target = this.redactTarget;
    if (doc === null || target === null) return;
    this.redactBusy = true;
    this.redactError = null;
    try {
      const updated = await backend.call("note_redact", { note: refOf(doc.note), version: target.version, expected_sha256: null });
      this.versions = (this.versions ?? []).map((v) => (v.version === updated.version ? updated : v));
      if (this.viewing?.version.version === updated.version) this.viewing = { version: updated, content: null };
      this.redactTarget = null;
      void this.load(backend);
    } catch (err) {
      this.redactError = `Nothing was redacted: ${describeError(err)}`;
    } finally {
      this.redactBusy = false;
    }
  }
}
