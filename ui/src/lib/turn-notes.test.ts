import { describe, expect, it } from "vitest";
import type { InjectionEntry, InjectionView } from "../generated";
import { parseLocation } from "./router";
import {
  entryKindLabel,
  entryTarget,
  formatFeature,
  formatMs,
  formatProbability,
  formatShare,
  judgesLabel,
  noteRate,
  NOT_USEFUL,
  notUsefulCount,
  outcomeLabel,
  probabilityPercent,
  useLabel,
  withEntry,
  withLabel,
} from "./turn-notes";

const entry = (id: string, over: Partial<InjectionEntry> = {}): InjectionEntry => ({
  id,
  kind: "item",
  item_kind: "fact",
  title: `Title ${id}`,
  probability: 0.5,
  shown: true,
  features: [{ name: "dense", value: 0.81 }],
  label: null,
  outcome: null,
  outcome_because: null,
  ...over,
});

const view = (entries: InjectionEntry[], over: Partial<InjectionView> = {}): InjectionView => ({
  turn: "t_1",
  at: "2026-12-02T03:00:00Z",
  framework: "claude-code",
  session_id: "s1",
  project: "github.com/acme/relay",
  prompt: "Which port does relay listen on?",
  shown: true,
  bar: 0.4,
  judged_by: [],
  silent_because: null,
  latency_ms: 41,
  entries,
  ...over,
});

describe("turn note figures", () => {
  it("reads shares, rates and times", () => {
    expect(formatShare(0.375)).toBe("38%");
    expect(formatShare(0.375, 1)).toBe("37.5%");
    expect(formatShare(null)).toBe("—");
    expect(formatShare(Number.NaN)).toBe("—");
    expect(noteRate({ turns: 0, shown: 0 })).toBeNull();
    expect(noteRate({ turns: 8, shown: 2 })).toBe(0.25);
    expect(formatMs(null)).toBe("—");
    expect(formatMs(41.6)).toBe("42 ms");
    expect(formatMs(1250)).toBe("1.3 s");
  });

  it("reads probabilities and ranker inputs", () => {
    expect(formatProbability(0.4)).toBe("0.40");
    expect(formatProbability(0.6249)).toBe("0.62");
    expect(probabilityPercent(0.62)).toBeCloseTo(62);
    expect(probabilityPercent(1.7)).toBe(100);
    expect(probabilityPercent(-1)).toBe(0);
    expect(formatFeature(null)).toBe("—");
    expect(formatFeature(3)).toBe("3");
    expect(formatFeature(0.123456)).toBe("0.123");
    expect(formatFeature(0.5)).toBe("0.5");
  });
});

describe("turn note entries", () => {
  it("leads an item to its page, a note to Notes, and a record to its conversation", () => {
    const item = entryTarget("i_0f3a");
    expect(item.kind).toBe("item");
    expect(parseLocation(item.href ?? "")).toEqual({ name: "item", params: { id: "i_0f3a" } });
    const note = entryTarget("n_77aa");
    expect(note.kind).toBe("note");
    expect(parseLocation(note.href ?? "")).toEqual({ name: "notes", params: { id: "n_77aa" } });
    expect(entryTarget("r_12ab")).toEqual({ kind: "record", href: null });
    expect(entryTarget("note:user/ports.md")).toEqual({ kind: "none", href: null });
    expect(entryTarget("i_<script>")).toEqual({ kind: "none", href: null });
  });

  it("names kinds and judges", () => {
    expect(entryKindLabel({ kind: "item", item_kind: "pitfall" })).toBe("Pitfall");
    expect(entryKindLabel({ kind: "item", item_kind: null })).toBe("Item");
    expect(entryKindLabel({ kind: "record", item_kind: null })).toBe("Request");
    expect(entryKindLabel({ kind: "note", item_kind: null })).toBe("Note");
    expect(judgesLabel([])).toMatch(/local ranker decided alone/);
    expect(judgesLabel(["cross-encoder"])).toBe("Judged by the cross-encoder.");
    expect(judgesLabel(["cross-encoder", "llm"])).toBe("Judged by the cross-encoder and the LLM judge.");
  });

  it("says what a turn showed, or why it was silent", () => {
    expect(outcomeLabel(view([entry("i_1"), entry("i_2"), entry("r_3", { shown: false })]))).toBe("Note: 2 entries");
    expect(outcomeLabel(view([entry("i_1")]))).toBe("Note: 1 entry");
    expect(outcomeLabel(view([], { shown: false, silent_because: "nothing above the bar" }))).toBe("Silent: nothing above the bar");
    expect(outcomeLabel(view([], { shown: false }))).toBe("Silent");
  });

  it("says what became of a shown entry: used, ignored, or not yet known", () => {
    expect(useLabel(entry("i_1", { outcome: "used" }))).toBe("Used");
    expect(useLabel(entry("i_1", { outcome: "ignored" }))).toBe("Ignored");
    expect(useLabel(entry("i_1"))).toBe("Not yet known");
    expect(useLabel(entry("i_1", { shown: false }))).toBeNull();
  });

  it("sets, replaces and counts labels without touching the others", () => {
    const v = view([entry("i_1"), entry("i_2")]);
    const marked = withLabel(v, "i_2", NOT_USEFUL);
    expect(marked.entries.map((e) => e.label)).toEqual([null, NOT_USEFUL]);
    expect(v.entries[1]?.label).toBeNull();
    expect(notUsefulCount(marked)).toBe(1);
    expect(withLabel(v, "i_9", NOT_USEFUL)).toBe(v);
    const undone = withEntry(marked, entry("i_2", { label: null, probability: 0.7 }));
    expect(undone.entries[1]).toMatchObject({ label: null, probability: 0.7 });
    expect(notUsefulCount(undone)).toBe(0);
    expect(withEntry(v, entry("i_9"))).toBe(v);
  });
});
