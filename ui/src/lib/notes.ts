/** Pure helpers for the Notes view: scopes, note references, paths and version labels. */
import type { NoteRef, NoteSummary, NoteVersion } from "../generated";
import { describeError, type ApiError } from "./api-error";
import { frameworkLabel, shortProject } from "./conversations";
import { formatDateTime } from "./format";

/** A scope of notes: the user's own ("You"), or one project's. */
export type NoteScope = Pick<NoteRef, "scope" | "project">;

export const USER_SCOPE: NoteScope = { scope: "user", project: null };

/** A string naming a scope, for `<select>` values: `user` or `project:<identity>`. */
export function scopeKey(scope: NoteScope): string {
  return scope.scope === "user" ? "user" : `project:${scope.project ?? ""}`;
}

export function parseScopeKey(key: string): NoteScope | null {
  if (key === "user") return USER_SCOPE;
  if (key.startsWith("project:") && key.length > "project:".length) return { scope: "project", project: key.slice(8) };
  return null;
}

export function projectScope(project: string): NoteScope {
  return { scope: "project", project };
}

/** A scope's name for people: "You", or the project's short name. */
export function scopeName(scope: NoteScope["scope"], project: string | null): string {
  return scope === "user" ? "You" : shortProject(project) || "Project";
}

/** The scope a note lives in. */
export function scopeOf(note: Pick<NoteSummary, "scope" | "project">): NoteScope {
  return note.scope === "project" && note.project ? projectScope(note.project) : USER_SCOPE;
}

/** Why a note named by its id (`#/notes?id=…`) could not be opened, for people. */
export function openByIdProblem(id: string, error: ApiError | null): string {
  if (error === null) return `The id ${id} names a conversation turn, not a note.`;
  if (error.code === "not_found") return `No note has the id ${id}: it may have been deleted.`;
  if (error.code === "bad_request") return `${id} is not a note id (note ids start with n_).`;
  return `Could not open the note ${id}: ${describeError(error)}`;
}

export function sameScope(a: NoteScope, b: NoteScope): boolean {
  return scopeKey(a) === scopeKey(b);
}

/** The reference the service takes for a note it listed (project only for project notes). */
export function refOf(note: Pick<NoteSummary, "scope" | "project" | "path">): NoteRef {
  return { scope: note.scope, project: note.scope === "project" ? note.project : null, path: note.path };
}

export function refIn(scope: NoteScope, path: string): NoteRef {
  return { scope: scope.scope, project: scope.scope === "project" ? scope.project : null, path };
}

export function sameRef(a: NoteRef, b: NoteRef): boolean {
  return a.scope === b.scope && (a.scope === "user" || a.project === b.project) && a.path === b.path;
}

export type ScopeOption = { key: string; label: string; title: string };

/** "You", then every project (the service's and any the user added), by identity. */
export function scopeOptions(projects: readonly string[], added: readonly string[] = []): ScopeOption[] {
  const all = [...new Set([...projects, ...added].map((p) => p.trim()).filter((p) => p !== ""))].sort((a, b) =>
    a.localeCompare(b),
  );
  // Two projects with the same last path segment keep their whole identity, so they differ.
  const shorts = new Map<string, number>();
  for (const p of all) shorts.set(shortProject(p), (shorts.get(shortProject(p)) ?? 0) + 1);
  return [
    { key: "user", label: "You", title: "Your notes, visible in every project" },
    ...all.map((p) => ({ key: `project:${p}`, label: shorts.get(shortProject(p))! > 1 ? p : shortProject(p), title: p })),
  ];
}

/** Why a path cannot name a note, or null when it can. */
export function notePathProblem(path: string): string | null {
  const p = path.trim();
  if (p === "") return "Give the note a path, e.g. conventions.md.";
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return "The path is relative to the scope: leave out the leading /.";
  if (p.includes("\\")) return "Use / to separate folders.";
  if (/[\u0000-\u001f\u007f]/.test(p)) return "The path contains a control character.";
  if (p.endsWith("/")) return "The path names a folder; add a file name.";
  const parts = p.split("/");
  if (parts.some((s) => s === "")) return "The path has an empty folder name (//).";
  if (parts.some((s) => s === "." || s === "..")) return "The path cannot contain . or .. segments.";
  return null;
}

/** What a version's change was, for people. */
export function actionLabel(action: string): string {
  const labels: Record<string, string> = {
    create: "Created",
    edit: "Edited",
    rename: "Renamed",
    delete: "Deleted",
    restore: "Restored",
  };
  return Object.hasOwn(labels, action) ? labels[action]! : action;
}

/** `user` → "you"; `agent:codex` → "Codex (agent)"; anything else as it is. */
export function authorLabel(author: string): string {
  if (author === "user") return "you";
  if (author.startsWith("agent:")) return `${frameworkLabel(author.slice(6))} (agent)`;
  return author;
}

/** "redacted by you at 3 Mar 2026, 10:02", or null for a version that still has its content. */
export function redactionLabel(version: Pick<NoteVersion, "redacted_at" | "redacted_by">): string | null {
  if (version.redacted_at === null) return null;
  return `redacted by ${authorLabel(version.redacted_by ?? "unknown")} at ${formatDateTime(version.redacted_at)}`;
}
