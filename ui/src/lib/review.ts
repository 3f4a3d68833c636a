/**
 * Pure helpers for the review inbox (Review): categories and their labels, which entries a
 * filter shows, what an action does in words, the request an action sends, and errors in
 * plain words.
 */
import type { ReviewActReq, ReviewCounts, ReviewEntry, ReviewInbox, ReviewSubject } from "../generated";
import { toApiError } from "./api-error";
import { shortProject } from "./conversations";
import { itemHref, kindLabel } from "./items";
import { routeHref } from "./router";

/** The categories, in the order the inbox lists them. */
export const REVIEW_CATEGORIES = ["contradiction", "duplicate", "stale", "junk"] as const;

export type ReviewCategory = (typeof REVIEW_CATEGORIES)[number];

/** A filter of the inbox: one category, or all. */
export type ReviewFilter = ReviewCategory | "all";

/** The actions, in the order their buttons show. */
export const REVIEW_ACTIONS = ["merge", "supersede", "archive", "keep"] as const;

export type ReviewAction = (typeof REVIEW_ACTIONS)[number];

const CATEGORY_LABELS: Record<ReviewCategory, { one: string; many: string }> = {
  contradiction: { one: "Contradiction", many: "Contradictions" },
  duplicate: { one: "Duplicate", many: "Duplicates" },
  stale: { one: "Stale", many: "Stale" },
  junk: { one: "Junk", many: "Junk" },
};

export function isReviewCategory(value: string | null | undefined): value is ReviewCategory {
  return typeof value === "string" && (REVIEW_CATEGORIES as readonly string[]).includes(value);
}

/** The filter an address names (`#/review?category=duplicate`); anything else is all. */
export function filterFromParam(value: string | null | undefined): ReviewFilter {
  return isReviewCategory(value) ? value : "all";
}

/** "Contradiction" for one entry's badge; an unknown category is shown as it came, capitalised. */
export function categoryLabel(category: string): string {
  if (isReviewCategory(category)) return CATEGORY_LABELS[category].one;
  return category ? category.charAt(0).toUpperCase() + category.slice(1) : "Entry";
}

/** The label of a filter chip: "All", "Contradictions", "Duplicates", "Stale", "Junk". */
export function filterLabel(filter: ReviewFilter): string {
  return filter === "all" ? "All" : CATEGORY_LABELS[filter].many;
}

/** The number of open entries, in all or in one category. */
export function countFor(counts: ReviewCounts, filter: ReviewFilter): number {
  if (filter === "all") return REVIEW_CATEGORIES.reduce((n, c) => n + counts[c], 0);
  return counts[filter];
}

/** The chips to show: All, then each category, with its count. */
export function filterChips(counts: ReviewCounts): { filter: ReviewFilter; label: string; count: number }[] {
  return (["all", ...REVIEW_CATEGORIES] as ReviewFilter[]).map((filter) => ({
    filter,
    label: filterLabel(filter),
    count: countFor(counts, filter),
  }));
}

/** The entries a filter shows, in the inbox's order. */
export function visibleEntries(entries: readonly ReviewEntry[], filter: ReviewFilter): ReviewEntry[] {
  return filter === "all" ? [...entries] : entries.filter((e) => e.category === filter);
}

/**
 * True when the inbox as loaded (all categories, up to its limit) lacks entries of `filter`
 * that exist, so that they must be asked for by category.
 */
export function needsCategoryLoad(inbox: Pick<ReviewInbox, "entries" | "counts">, filter: ReviewFilter): boolean {
  if (filter === "all") return false;
  return visibleEntries(inbox.entries, filter).length < inbox.counts[filter];
}

/** The inbox without one entry (after an action on it), its count lowered. */
export function withoutEntry<T extends Pick<ReviewInbox, "entries" | "counts">>(inbox: T, key: string): T {
  const gone = inbox.entries.find((e) => e.key === key);
  if (gone === undefined) return inbox;
  const counts = { ...inbox.counts };
  if (isReviewCategory(gone.category)) counts[gone.category] = Math.max(0, counts[gone.category] - 1);
  return { ...inbox, entries: inbox.entries.filter((e) => e.key !== key), counts };
}

/** True for an entry about two subjects (a duplicate or contradiction), where one stays. */
export function isPair(entry: Pick<ReviewEntry, "subjects">): boolean {
  return entry.subjects.length > 1;
}

/** The subject that stays for a pair: `keep` when it is one of them, else the suggested (first). */
export function keptSubject(entry: Pick<ReviewEntry, "subjects">, keep: string | null | undefined): ReviewSubject | null {
  if (!isPair(entry)) return null;
  return entry.subjects.find((s) => s.id === keep) ?? entry.subjects[0] ?? null;
}

/** The subjects an action changes: for a pair, those that do not stay; else the one subject. */
export function otherSubjects(entry: Pick<ReviewEntry, "subjects">, keep: string | null | undefined): ReviewSubject[] {
  const kept = keptSubject(entry, keep);
  return kept === null ? [...entry.subjects] : entry.subjects.filter((s) => s.id !== kept.id);
}

/** The request for an action: the entry's key, the action, and for a pair the subject that stays. */
export function actRequest(entry: Pick<ReviewEntry, "key" | "subjects">, action: string, keep: string | null | undefined): ReviewActReq {
  const kept = keptSubject(entry, keep);
  return { entry: entry.key, action, keep: kept === null ? null : kept.id };
}

/** The label of an action's button; Keep on a pair keeps both. */
export function actionLabel(action: string, pair: boolean): string {
  switch (action) {
    case "merge":
      return "Merge";
    case "supersede":
      return "Supersede";
    case "archive":
      return "Archive";
    case "keep":
      return pair ? "Keep both" : "Keep";
    default:
      return action ? action.charAt(0).toUpperCase() + action.slice(1) : "Act";
  }
}

/** “Title”, quoted (a note's path when it has no title). */
export function quoted(s: Pick<ReviewSubject, "title" | "id">): string {
  return `“${s.title.trim() || s.id}”`;
}

function joinQuoted(list: readonly ReviewSubject[]): string {
  const q = list.map(quoted);
  return q.length <= 1 ? (q[0] ?? "") : `${q.slice(0, -1).join(", ")} and ${q.at(-1)}`;
}

/** What an action would do, in a sentence (a button's description). */
export function describeAction(entry: Pick<ReviewEntry, "subjects">, action: string, keep: string | null | undefined): string {
  const kept = keptSubject(entry, keep);
  const others = joinQuoted(otherSubjects(entry, keep));
  switch (action) {
    case "merge":
      return kept ? `Fold ${others} into ${quoted(kept)}, keeping every source and fact of both.` : `Merge ${others}.`;
    case "supersede":
      return kept ? `Mark ${others} as replaced by ${quoted(kept)}.` : `Mark ${others} as replaced.`;
    case "archive":
      return kept ? `Archive ${others}; ${quoted(kept)} stays.` : `Archive ${others}: agents no longer see it.`;
    case "keep":
      return entry.subjects.length > 1
        ? "Nothing is wrong here: keep both as they are and hide this entry."
        : "Nothing is wrong here: keep it as it is and hide this entry.";
    default:
      return action;
  }
}

/** What was done, in a sentence, for the status line after an action. */
export function describeDone(entry: Pick<ReviewEntry, "subjects">, action: string, keep: string | null | undefined): string {
  const kept = keptSubject(entry, keep);
  const others = joinQuoted(otherSubjects(entry, keep));
  switch (action) {
    case "merge":
      return kept ? `Merged ${others} into ${quoted(kept)}.` : `Merged ${others}.`;
    case "supersede":
      return kept ? `Marked ${others} as replaced by ${quoted(kept)}.` : `Marked ${others} as replaced.`;
    case "archive":
      return `Archived ${others}.`;
    case "keep":
      return `Kept ${joinQuoted(entry.subjects)}; the entry is hidden.`;
    default:
      return "Done.";
  }
}

/** "Similar 87%" for a pair (its similarity), "Sure 90%" for one subject. */
export function scoreLabel(entry: Pick<ReviewEntry, "score" | "subjects">): string {
  const pct = Math.round(Math.max(0, Math.min(1, entry.score)) * 100);
  return isPair(entry) ? `${pct}% alike` : `${pct}% sure`;
}

/** A subject's kind in words: "Fact", "Decision", …; a note: "Note (project)"; a record: "Turn". */
export function subjectKind(s: Pick<ReviewSubject, "kind" | "subkind">): string {
  if (s.kind === "note") return s.subkind ? `Note (${s.subkind})` : "Note";
  if (s.kind === "record") return "Turn";
  return kindLabel(s.subkind);
}

/** Where a subject opens: an item's page, the note in Notes, or a record's turn in its conversation. */
export function subjectHref(s: Pick<ReviewSubject, "kind" | "id"> & Partial<Pick<ReviewSubject, "subkind" | "session">>): string {
  if (s.kind === "note") return routeHref("notes", { id: s.id });
  if (s.kind === "record") {
    return s.session && s.subkind
      ? routeHref("conversations", { framework: s.subkind, session: s.session, turn: s.id })
      : routeHref("conversations");
  }
  return itemHref(s.id);
}

/** A subject's project, short ("github.com/acme/heron" stays, a path shows its last folder). */
export function subjectProject(s: Pick<ReviewSubject, "project">): string {
  return shortProject(s.project);
}

/** The id of an entry's heading (focus moves to it after an action or an undo). */
export function headingId(key: string): string {
  return `review-entry-${key.replace(/[^A-Za-z0-9_-]/g, "-")}`;
}

/** The date part (YYYY-MM-DD) of an RFC 3339 time, for a subject; "" when unknown. */
export function subjectDate(at: string | null | undefined): string {
  if (!at) return "";
  const m = /^(\d{4}-\d{2}-\d{2})/.exec(at);
  return m?.[1] ?? at;
}

/** An action's name in the past tense, for Recent actions: "Merged", "Archived", … */
export function actionPast(action: string): string {
  switch (action) {
    case "merge":
      return "Merged";
    case "supersede":
      return "Superseded";
    case "archive":
      return "Archived";
    case "keep":
      return "Kept";
    default:
      return action;
  }
}

/** An error from `review_undo`, in plain words; `item` names the item that changed, to open and see its history. */
export function undoErrorText(err: unknown): { text: string; item: string | null } {
  const e = toApiError(err);
  if (e.code === "conflict") {
    if (/already undone/i.test(e.message)) return { text: "This action was already undone.", item: null };
    const item = /\bitem (i_[A-Za-z0-9_-]+)/.exec(e.message)?.[1] ?? null;
    return {
      text: "Cannot undo this: something it changed has been changed again since, and undoing now would lose that later change.",
      item,
    };
  }
  if (e.code === "not_found") return { text: "Cannot undo this: the action is no longer in the log.", item: null };
  return { text: `Could not undo: ${e.message || e.code}`, item: null };
}

/** An error from `review_act`, in plain words; `stale` when the inbox should be read again. */
export function actErrorText(err: unknown): { text: string; stale: boolean } {
  const e = toApiError(err);
  if (e.code === "conflict" || e.code === "not_found") {
    return {
      text: "This entry is out of date: something in it was changed, archived or replaced since the list was read. The list has been read again.",
      stale: true,
    };
  }
  return { text: `Could not do that: ${e.message || e.code}`, stale: false };
}

/**
 * The inbox with the entries of one category replaced by `entries` (read for that category
 * alone, when the whole inbox was cut at its limit), keeping the inbox's category order.
 */
export function withCategoryEntries<T extends Pick<ReviewInbox, "entries">>(inbox: T, category: ReviewCategory, entries: readonly ReviewEntry[]): T {
  const known = new Set<string>(REVIEW_CATEGORIES);
  const merged = REVIEW_CATEGORIES.flatMap((c) => (c === category ? [...entries] : inbox.entries.filter((e) => e.category === c)));
  const others = inbox.entries.filter((e) => !known.has(e.category));
  return { ...inbox, entries: [...merged, ...others] };
}

/** A piece of a reason or an action's summary: plain text, `code`, or an item's id (a link). */
export type TextPart = { kind: "text" | "code" | "item"; text: string };

/**
 * Splits a reason or summary from the service into parts to show: backticked words as code,
 * item ids (`i_…`) outside them as links to the item; everything else as it came.
 */
export function textParts(text: string): TextPart[] {
  const parts: TextPart[] = [];
  const push = (kind: TextPart["kind"], t: string) => {
    if (t === "") return;
    const last = parts.at(-1);
    if (kind === "text" && last?.kind === "text") last.text += t;
    else parts.push({ kind, text: t });
  };
  const chunks = text.split("`");
  // An odd number of backticks leaves the last one as text.
  const closed = chunks.length % 2 === 1 ? chunks.length : chunks.length - 1;
  chunks.forEach((chunk, i) => {
    if (i % 2 === 1 && i < closed) {
      push("code", chunk);
      return;
    }
    const plain = i % 2 === 1 ? `\`${chunk}` : chunk;
    let at = 0;
    for (const m of plain.matchAll(/\bi_[A-Za-z0-9_-]*[A-Za-z0-9]/g)) {
      push("text", plain.slice(at, m.index));
      push("item", m[0]);
      at = m.index + m[0].length;
    }
    push("text", plain.slice(at));
  });
  return parts;
}
