import { describe, expect, it } from "vitest";
import type { DistillRebuildReport, SleepReport } from "../generated";
import {
  certaintyLabel,
  describeRebuild,
  describeSleep,
  isItemId,
  itemDates,
  itemHref,
  itemState,
  kindLabel,
  profileTitle,
  relationFrom,
  turnHref,
  validSince,
} from "./items";
import { parseLocation } from "./router";

const run = {
  windows: 2,
  calls: 2,
  items_kept: 3,
  items_dropped: 1,
  cost_usd: 0.0123,
  stopped: null,
  details: [],
} as unknown as DistillRebuildReport["run"];

describe("item links", () => {
  it("opens the item page and a source's conversation at its turn", () => {
    expect(parseLocation(itemHref("i_1a2b"))).toEqual({ name: "item", params: { id: "i_1a2b" } });
    expect(parseLocation(turnHref("claude-code", "s/1?", "r_9"))).toEqual({
      name: "conversations",
      params: { framework: "claude-code", session: "s/1?", turn: "r_9" },
    });
  });

  it("knows an item id from a record's or a note's", () => {
    expect(isItemId("i_0f3a")).toBe(true);
    expect(isItemId("r_0f3a")).toBe(false);
    expect(isItemId("n_0f3a")).toBe(false);
    expect(isItemId("i_")).toBe(false);
    expect(isItemId(undefined)).toBe(false);
  });
});

describe("item labels", () => {
  it("names every kind and keeps an unknown one readable", () => {
    expect(kindLabel("pitfall")).toBe("Pitfall");
    expect(kindLabel("architecture")).toBe("Architecture");
    expect(kindLabel("hunch")).toBe("Hunch");
    expect(kindLabel(undefined)).toBe("Item");
    expect(certaintyLabel("inferred")).toBe("Inferred");
    expect(certaintyLabel("")).toBe("—");
  });

  it("lists only the known dates, in order", () => {
    expect(itemDates({ happened_at: null, said_at: "2026-03-02T10:00:00Z", ended_at: "2026-04-01T00:00:00Z" })).toEqual([
      { label: "Said", at: "2026-03-02T10:00:00Z" },
      { label: "Ended", at: "2026-04-01T00:00:00Z" },
    ]);
    expect(itemDates({ happened_at: null, said_at: null, ended_at: null })).toEqual([]);
  });

  it("says when an item no longer holds", () => {
    expect(itemState({ superseded_by: "i_2", archived: false })).toBe("Superseded");
    expect(itemState({ superseded_by: null, archived: true })).toBe("Archived");
    expect(itemState({ superseded_by: null, archived: false })).toBeNull();
  });

  it("reads a relation from either end", () => {
    expect(relationFrom("i_new", { from: "i_new", to: "i_old", kind: "supersedes" })).toEqual({ other: "i_old", label: "Replaces" });
    expect(relationFrom("i_old", { from: "i_new", to: "i_old", kind: "supersedes" })).toEqual({ other: "i_new", label: "Replaced by" });
    expect(relationFrom("i_a", { from: "i_b", to: "i_a", kind: "related" })).toEqual({ other: "i_b", label: "Related to" });
  });

  it("titles a profile by its project's short name, or the machine", () => {
    expect(profileTitle({ kind: "project", subject: "github.com/acme/relay" })).toBe("github.com/acme/relay");
    expect(profileTitle({ kind: "project", subject: "/home/ada/src/relay" })).toBe("relay");
    expect(profileTitle({ kind: "machine", subject: "machine" })).toBe("This machine");
  });
});

describe("rebuild and tidy-up reports", () => {
  it("accepts an empty or a YYYY-MM-DD since-date only", () => {
    expect(validSince("")).toBeNull();
    expect(validSince(" 2026-03-01 ")).toBe("2026-03-01");
    expect(validSince("March")).toBeNull();
  });

  it("sums up a rebuild's diff", () => {
    const r: DistillRebuildReport = {
      run,
      added: [{ id: "i_1", kind: "fact", title: "Port 7421" }],
      changed: [],
      dropped: [
        { id: "i_2", kind: "pitfall", title: "Old" },
        { id: "i_3", kind: "fact", title: "Older" },
      ],
      unchanged: 4,
    };
    expect(describeRebuild(r)).toBe("1 added, 0 changed, 2 dropped, 4 unchanged; 2 model calls, $0.01.");
    expect(describeRebuild({ ...r, run: { ...run, calls: 1, stopped: "the budget is spent" } })).toBe(
      "1 added, 0 changed, 2 dropped, 4 unchanged; 1 model call, $0.01. Stopped: the budget is spent.",
    );
  });

  it("sums up a tidy-up", () => {
    const s: SleepReport = {
      active: 1,
      related: 0,
      rescored: 1,
      archived: [],
      profiles: ["github.com/acme/relay"],
      profiles_unchanged: 0,
      profiles_left: 2,
      calls: 1,
      cost_usd: 0,
      stopped: null,
      took_ms: 12,
      ranker: null,
    };
    expect(describeSleep(s)).toBe(
      "Tidied up: 1 active item, 0 related, 1 re-scored, 0 archived, 1 profile rewritten (2 left for next time); 1 model call, $0.00.",
    );
    expect(describeSleep({ ...s, ranker: "personal ranker: trained, and in use" })).toBe(
      "Tidied up: 1 active item, 0 related, 1 re-scored, 0 archived, 1 profile rewritten (2 left for next time); 1 model call, $0.00. Turn note: personal ranker: trained, and in use.",
    );
  });
});
