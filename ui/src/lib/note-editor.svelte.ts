/**
 * The note editor's state: the note as it was loaded, the user's draft, and what happens when
 * a save finds that someone else (an agent, another window) changed the note first.
 *
 * Every save sends `expected_sha256` = the sha256 of the version the editor loaded. When the
 * service answers `conflict`, nothing was written: the editor keeps the user's text, reads the
 * note as it is now ("theirs"), and waits for the user to choose —
 *   - `reloadTheirs()`: show their version; the user's text is set aside (not thrown away)
 *     until they dismiss it or put it back;
 *   - `keepMine()`: keep editing the user's text on top of their version, so the next save
 *     replaces it (or recreates the note, if it was deleted) — a deliberate overwrite.
 * The editor never writes over a version it has not seen.
 */
import type { NoteDoc, NoteRef, NoteSummary } from "../generated";
import type { Backend } from "../platform";
import { toApiError, type ApiError } from "./api-error";
import { refOf, USER_SCOPE, type NoteScope } from "./notes";

export type SaveOutcome = "saved" | "unchanged" | "conflict" | "failed" | "busy";

/** A save refused because the note changed since the editor loaded it. */
export type Conflict = {
  /** The note as it is now; null while it is read, or when it is gone or could not be read. */
  theirs: NoteDoc | null;
  /** The note no longer exists at this path (deleted, or renamed away). */
  gone: boolean;
  /** Their version is being read. */
  loading: boolean;
  /** Reading their version failed (for a reason other than the note being gone). */
  error: ApiError | null;
};

export class NoteEditor {
  /** The note as the editor loaded (or last saved) it: its sha256 is what a save expects. */
  doc = $state<NoteDoc | null>(null);
  /** The text in the editor. */
  draft = $state("");
  /** The note being opened, while `note_get` runs or after it failed. */
  opening = $state<NoteRef | null>(null);
  loading = $state(false);
  loadError = $state<ApiError | null>(null);
  saving = $state(false);
  /** The latest save's failure, other than a conflict. */
  saveError = $state<ApiError | null>(null);
  conflict = $state<Conflict | null>(null);
  /** The user's text that "Reload theirs" took out of the editor, kept until dismissed. */
  setAside = $state<string | null>(null);
  /** When the latest save succeeded (ISO 8601). */
  savedAt = $state<string | null>(null);
  /** The next save recreates the note: it was deleted, and the user chose to keep their text. */
  recreate = $state(false);

  /** The draft differs from the note as loaded (or the note must be recreated). */
  dirty = $derived(this.doc !== null && (this.recreate || this.draft !== this.doc.content));
  /** Anything that leaving this note would lose: the draft, or text set aside in a conflict. */
  unsaved = $derived(this.dirty || this.setAside !== null);
  ref = $derived(this.doc === null ? null : refOf(this.doc.note));

  #openSeq = 0;

  /** Reads a note and shows it; resolves to false when it failed or another open superseded it. */
  async open(backend: Backend, ref: NoteRef): Promise<boolean> {
    const seq = ++this.#openSeq;
    this.opening = ref;
    this.loading = true;
    this.loadError = null;
    try {
      const doc = await backend.call("note_get", ref);
      if (seq !== this.#openSeq) return false;
      this.load(doc);
      this.opening = null;
      return true;
    } catch (err) {
      if (seq !== this.#openSeq) return false;
      this.close();
      this.opening = ref;
      this.loadError = toApiError(err);
      return false;
    } finally {
      if (seq === this.#openSeq) this.loading = false;
    }
  }

  /** Shows a note the service just returned (opened, created or restored), dropping any draft. */
  load(doc: NoteDoc): void {
    this.#openSeq++;
    this.loading = false;
    this.loadError = null;
    this.opening = null;
    this.doc = doc;
    this.draft = doc.content;
    this.conflict = null;
    this.saveError = null;
    this.setAside = null;
    this.savedAt = null;
    this.recreate = false;
  }

  /** Shows nothing. */
  close(): void {
    this.#openSeq++;
    this.doc = null;
    this.draft = "";
    this.opening = null;
    this.loading = false;
    this.loadError = null;
    this.conflict = null;
    this.saveError = null;
    this.setAside = null;
    this.savedAt = null;
    this.recreate = false;
  }

  edit(text: string): void {
    this.draft = text;
  }

  /** Puts the loaded text back, dropping the draft and anything set aside. */
  discard(): void {
    if (this.doc !== null) this.draft = this.doc.content;
    this.conflict = null;
    this.setAside = null;
    this.recreate = false;
    this.saveError = null;
  }

  /** The note's metadata changed without its content (a rename). */
  applySummary(note: NoteSummary): void {
    if (this.doc !== null) this.doc = { ...this.doc, note };
  }

  /** Saves the draft, expecting the note to be as it was loaded. */
  async save(backend: Backend): Promise<SaveOutcome> {
    const base = this.doc;
    if (base === null || this.saving) return "busy";
    if (!this.dirty) return "unchanged";
    const content = this.draft;
    const recreate = this.recreate;
    this.saving = true;
    this.saveError = null;
    try {
      const saved = await backend.call("note_save", {
        note: refOf(base.note),
        content,
        expected_sha256: recreate ? null : base.note.sha256,
        create_only: recreate,
      });
      if (this.doc !== base) return "saved";
      this.doc = saved;
      // Typing during the save stays in the draft (and keeps it dirty).
      if (this.draft === content) this.draft = saved.content;
      this.conflict = null;
      this.recreate = false;
      this.savedAt = new Date().toISOString();
      return "saved";
    } catch (err) {
      const e = toApiError(err);
      if (this.doc !== base) return "failed";
      if (e.code === "conflict") {
        this.conflict = { theirs: null, gone: false, loading: true, error: null };
        await this.refreshTheirs(backend);
        return "conflict";
      }
      this.saveError = e;
      return "failed";
    } finally {
      this.saving = false;
    }
  }

  /** Reads the note as it is now, for the open conflict. */
  async refreshTheirs(backend: Backend): Promise<void> {
    const base = this.doc;
    if (base === null || this.conflict === null) return;
    this.conflict = { ...this.conflict, loading: true, error: null };
    let next: Conflict;
    try {
      const theirs = await backend.call("note_get", refOf(base.note));
      next = { theirs, gone: false, loading: false, error: null };
    } catch (err) {
      const e = toApiError(err);
      next = e.code === "not_found" ? { theirs: null, gone: true, loading: false, error: null } : { theirs: null, gone: false, loading: false, error: e };
    }
    if (this.doc === base && this.conflict !== null) this.conflict = next;
  }

  /** Shows their version in the editor; the user's text is set aside, not lost. */
  reloadTheirs(): boolean {
    const theirs = this.conflict?.theirs;
    if (!theirs) return false;
    const mine = this.draft;
    this.doc = theirs;
    this.draft = theirs.content;
    this.setAside = mine === theirs.content ? null : mine;
    this.conflict = null;
    this.recreate = false;
    this.saveError = null;
    return true;
  }

  /**
   * Keeps the user's text in the editor on top of their version: the next save replaces
   * theirs (or recreates the note when it was deleted).
   */
  keepMine(): boolean {
    const c = this.conflict;
    if (c === null || this.doc === null) return false;
    if (c.theirs !== null) {
      this.doc = c.theirs;
      this.recreate = false;
    } else if (c.gone) {
      this.recreate = true;
    } else {
      return false;
    }
    this.conflict = null;
    this.saveError = null;
    return true;
  }

  /** Puts the text set aside back into the editor (on top of the version now loaded). */
  restoreSetAside(): void {
    if (this.setAside === null) return;
    this.draft = this.setAside;
    this.setAside = null;
  }

  dismissSetAside(): void {
    this.setAside = null;
  }
}

/**
 * The Notes view's state outlives the view (switching to Settings and back keeps the open
 * note and its unsaved text), so it lives here rather than in the component.
 */
export const noteEditor = new NoteEditor();

export const notesSession = $state<{ scope: NoteScope; addedProjects: string[] }>({
  scope: USER_SCOPE,
  addedProjects: [],
});
