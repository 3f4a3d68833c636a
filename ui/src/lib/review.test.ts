import { describe, expect, it } from "vitest";
import type { ReviewCounts, ReviewEntry, ReviewInbox, ReviewSubject } from "../generated";
import { ApiError } from "./api-error";
import {
  actErrorText,
  actionLabel,
  actionPast,
  actRequest,
  categoryLabel,
  countFor,
  describeAction,
  describeDone,
  filterChips,
  filterFromParam,
  isPair,
  keptSubject,
  needsCategoryLoad,
  otherSubjects,
  scoreLabel,
  subjectDate,
  subjectHref,
  subjectKind,
  textParts,
  undoErrorText,
  visibleEntries,
  withCategoryEntries,
  withoutEntry,
} from "./review";
import { parseLocation } from "./router";

function subject(id: string, title: string, over: Partial<ReviewSubject> = {}): ReviewSubject {
  return {
    id,
    kind: "item",
    subkind: "fact",
    title,
    text: `${title}, in a sentence.`,
    project: "github.com/acme/heron",
    at: "2026-08-20T09:00:00Z",
    importance: 3,
    session: null,
    ...over,
  };
}

function entry(category: string, subjects: ReviewSubject[], over: Partial<ReviewEntry> = {}): ReviewEntry {
  const ids = subjects.map((s) => s.id);
  return {
    key: `${category}:${ids.join("+")}`,
    category,
    reason: "Why.",
    score: 0.9,
    subjects,
    actions: category === "duplicate" ? ["merge", "archive", "keep"] : category === "contradiction" ? ["supersede", "archive", "keep"] : ["archive", "keep"],
    ...over,
  };
}

const newer = subject("i_new", "Staging Postgres port", { at: "2026-09-01T10:00:00Z" });
const older = subject("i_old", "Staging Postgres port", { at: "2026-08-01T10:00:00Z" });
const conflict = entry("contradiction", [newer, older]);
const dupe = entry("duplicate", [subject("i_a", "Release builds need --locked"), subject("i_b", "Release builds need --locked")]);
const junk = entry("junk", [subject("i_j", "ok", { text: "ok" })]);
const counts: ReviewCounts = { contradiction: 1, duplicate: 1, stale: 0, junk: 1 };
const inbox: ReviewInbox = { entries: [conflict, dupe, junk], counts, recent: [], unchecked_projects: [] };

describe("categories and filters", () => {
  it("labels categories, and chips with their counts in the inbox's order", () => {
    expect(categoryLabel("contradiction")).toBe("Contradiction");
    expect(categoryLabel("odd")).toBe("Odd");
    expect(filterChips(counts)).toEqual([
      { filter: "all", label: "All", count: 3 },
      { filter: "contradiction", label: "Contradictions", count: 1 },
      { filter: "duplicate", label: "Duplicates", count: 1 },
      { filter: "stale", label: "Stale", count: 0 },
      { filter: "junk", label: "Junk", count: 1 },
    ]);
    expect(countFor(counts, "junk")).toBe(1);
  });

  it("reads the filter from the address; anything unknown shows all", () => {
    expect(filterFromParam(parseLocation("#/review?category=duplicate")?.params.category)).toBe("duplicate");
    expect(filterFromParam("bogus")).toBe("all");
    expect(filterFromParam(undefined)).toBe("all");
  });

  it("shows a category's entries, and knows when the inbox was cut short of them", () => {
    expect(visibleEntries(inbox.entries, "all").map((e) => e.key)).toEqual([conflict.key, dupe.key, junk.key]);
    expect(visibleEntries(inbox.entries, "duplicate")).toEqual([dupe]);
    expect(needsCategoryLoad(inbox, "duplicate")).toBe(false);
    expect(needsCategoryLoad(inbox, "all")).toBe(false);
    const cut = { entries: [conflict], counts };
    expect(needsCategoryLoad(cut, "junk")).toBe(true);
    const more = withCategoryEntries(cut, "junk", [junk]);
    expect(more.entries).toEqual([conflict, junk]);
  });

  it("drops an entry after an action and lowers its count", () => {
    const after = withoutEntry(inbox, dupe.key);
    expect(after.entries.map((e) => e.key)).toEqual([conflict.key, junk.key]);
    expect(after.counts).toEqual({ ...counts, duplicate: 0 });
    expect(withoutEntry(inbox, "junk:i_nope")).toBe(inbox);
    expect(inbox.entries).toHaveLength(3);
  });
});

describe("acting on an entry", () => {
  it("keeps the first subject of a pair unless another is chosen", () => {
    expect(isPair(conflict)).toBe(true);
    expect(isPair(junk)).toBe(false);
    expect(keptSubject(conflict, undefined)?.id).toBe("i_new");
    expect(keptSubject(conflict, "i_old")?.id).toBe("i_old");
    expect(keptSubject(conflict, "i_elsewhere")?.id).toBe("i_new");
    expect(otherSubjects(conflict, "i_old").map((s) => s.id)).toEqual(["i_new"]);
    expect(keptSubject(junk, "i_j")).toBeNull();
    expect(otherSubjects(junk, null).map((s) => s.id)).toEqual(["i_j"]);
  });

  it("builds the request: the key, the action, and the subject that stays for a pair", () => {
    expect(actRequest(conflict, "supersede", undefined)).toEqual({ entry: "contradiction:i_new+i_old", action: "supersede", keep: "i_new" });
    expect(actRequest(dupe, "merge", "i_b")).toEqual({ entry: dupe.key, action: "merge", keep: "i_b" });
    expect(actRequest(junk, "archive", "i_j")).toEqual({ entry: "junk:i_j", action: "archive", keep: null });
  });

  it("says what an action does and what it did", () => {
    expect(actionLabel("keep", true)).toBe("Keep both");
    expect(actionLabel("keep", false)).toBe("Keep");
    expect(actionLabel("merge", true)).toBe("Merge");
    expect(describeAction(dupe, "merge", "i_b")).toMatch(/^Fold “Release builds need --locked” into “Release builds need --locked”/);
    expect(describeAction(junk, "archive", null)).toBe("Archive “ok”: agents no longer see it.");
    expect(describeAction(conflict, "keep", null)).toMatch(/keep both/);
    expect(describeDone(conflict, "supersede", undefined)).toBe("Marked “Staging Postgres port” as replaced by “Staging Postgres port”.");
    expect(describeDone(junk, "archive", null)).toBe("Archived “ok”.");
    expect(describeDone(dupe, "keep", null)).toBe("Kept “Release builds need --locked” and “Release builds need --locked”; the entry is hidden.");
    expect(actionPast("supersede")).toBe("Superseded");
  });
});

describe("subjects", () => {
  it("shows kinds, dates, scores and where each opens", () => {
    expect(subjectKind({ kind: "item", subkind: "decision" })).toBe("Decision");
    expect(subjectKind({ kind: "note", subkind: "project" })).toBe("Note (project)");
    expect(subjectHref({ kind: "item", id: "i_a" })).toBe("#/item?id=i_a");
    expect(parseLocation(subjectHref({ kind: "note", id: "n_1" }))).toEqual({ name: "notes", params: { id: "n_1" } });
    expect(subjectKind({ kind: "record", subkind: "codex" })).toBe("Turn");
    expect(parseLocation(subjectHref({ kind: "record", id: "r_1", subkind: "codex", session: "s 1" }))).toEqual({
      name: "conversations",
      params: { framework: "codex", session: "s 1", turn: "r_1" },
    });
    expect(subjectDate("2026-08-20T09:00:00Z")).toBe("2026-08-20");
    expect(subjectDate(null)).toBe("");
    expect(scoreLabel(conflict)).toBe("90% alike");
    expect(scoreLabel({ ...junk, score: 1.4 })).toBe("100% sure");
  });
});

describe("errors in plain words", () => {
  it("explains an undo refused because an item changed since, naming the item", () => {
    const e = new ApiError("conflict", "item i_b changed after this action; undoing it would lose that change (open the item to see its history)");
    const t = undoErrorText(e);
    expect(t.item).toBe("i_b");
    expect(t.text).toMatch(/^Cannot undo this: something it changed has been changed again since/);
    expect(t.text).not.toMatch(/i_b/);
    expect(undoErrorText(new ApiError("conflict", "review action rv_1 was already undone"))).toEqual({ text: "This action was already undone.", item: null });
    expect(undoErrorText(new ApiError("not_found", "no review action"))).toEqual({ text: "Cannot undo this: the action is no longer in the log.", item: null });
    expect(undoErrorText(new Error("boom")).text).toBe("Could not undo: boom");
  });

  it("explains an action on an entry that went out of date", () => {
    expect(actErrorText(new ApiError("conflict", "item i_b is no longer active")).stale).toBe(true);
    expect(actErrorText(new ApiError("bad_request", "keep is not one of this entry's subjects"))).toEqual({
      text: "Could not do that: keep is not one of this entry's subjects",
      stale: false,
    });
  });
});

describe("textParts", () => {
  it("shows backticked words as code and item ids as links", () => {
    expect(textParts("About the same thing (`6543` against `5432`).")).toEqual([
      { kind: "text", text: "About the same thing (" },
      { kind: "code", text: "6543" },
      { kind: "text", text: " against " },
      { kind: "code", text: "5432" },
      { kind: "text", text: ")." },
    ]);
    expect(textParts("Merged i_dup2 into i_dup1.")).toEqual([
      { kind: "text", text: "Merged " },
      { kind: "item", text: "i_dup2" },
      { kind: "text", text: " into " },
      { kind: "item", text: "i_dup1" },
      { kind: "text", text: "." },
    ]);
    expect(textParts("Cites `src/i_x.rs`, gone; hi_there stays text")).toEqual([
      { kind: "text", text: "Cites " },
      { kind: "code", text: "src/i_x.rs" },
      { kind: "text", text: ", gone; hi_there stays text" },
    ]);
    expect(textParts("an odd ` backtick")).toEqual([{ kind: "text", text: "an odd ` backtick" }]);
    expect(textParts("")).toEqual([]);
  });
});
