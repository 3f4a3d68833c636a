import { render } from "svelte/server";
import { describe, expect, it } from "vitest";
import type { InjectionEntry, InjectionView } from "../generated";
import TurnNoteWhy from "./TurnNoteWhy.svelte";

const entry = (id: string, over: Partial<InjectionEntry> = {}): InjectionEntry => ({
  id,
  kind: "item",
  item_kind: "fact",
  title: `Title ${id}`,
  probability: 0.62,
  shown: true,
  features: [
    { name: "dense", value: 0.8125 },
    { name: "cross_encoder", value: null },
  ],
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
  project: null,
  prompt: "Which port?",
  shown: true,
  bar: 0.4,
  judged_by: ["cross-encoder"],
  silent_because: null,
  latency_ms: 41,
  entries,
  ...over,
});

const noop = () => {};

function html(v: InjectionView, extra: Record<string, unknown> = {}): string {
  return render(TurnNoteWhy, { props: { view: v, onlabel: noop, onopenrecord: noop, ...extra } }).body;
}

describe("TurnNoteWhy", () => {
  it("shows each candidate against the bar, the shown ones marked, judges and ranker inputs", () => {
    const out = html(
      view([entry("i_a"), entry("r_b", { kind: "record", item_kind: null, title: "Which port does relay use?", probability: 0.21, shown: false })]),
    );
    expect(out).toContain("The note showed 1 of 2 candidates");
    expect(out).toContain("Judged by the cross-encoder.");
    expect(out).toMatch(/data-id="i_a"[^>]*data-shown="true"/);
    expect(out).toMatch(/data-id="r_b"[^>]*data-shown="false"/);
    expect(out).toContain("0.62");
    expect(out).toContain("≥ 0.40");
    expect(out).toContain("&lt; 0.40");
    expect(out).toContain('href="#/item?id=i_a"');
    expect(out).toContain('data-testid="why-entry-open"');
    expect(out).toContain("dense");
    expect(out).toContain("0.813");
    // A "Not useful" button on the shown entry only.
    expect(out.match(/data-testid="why-entry-not-useful"/g)?.length).toBe(1);
  });

  it("says what became of each shown entry: used (and why), ignored, or not yet known", () => {
    const out = html(
      view([
        entry("i_a", { outcome: "used", outcome_because: "the answer reused port:6543" }),
        entry("i_b", { outcome: "ignored" }),
        entry("i_c"),
        entry("r_d", { kind: "record", item_kind: null, shown: false }),
      ]),
    );
    expect(out).toMatch(/data-testid="why-entry-use"[^>]*data-outcome="used"[^>]*>Used</);
    expect(out).toContain('title="the answer reused port:6543"');
    expect(out).toMatch(/data-outcome="ignored"[^>]*>Ignored</);
    expect(out).toMatch(/data-outcome=""[^>]*>Not yet known</);
    // Only shown entries have one.
    expect(out.match(/data-testid="why-entry-use"/g)?.length).toBe(3);
  });

  it("shows a marked entry with its undo, and a save error", () => {
    const out = html(view([entry("i_a", { label: "not_useful" })]), { errors: { i_a: "Not saved: the service is down" } });
    expect(out).toContain('data-testid="why-entry-undo"');
    expect(out).toContain('aria-pressed="true"');
    expect(out).toContain("Marked not useful");
    expect(out).not.toContain('data-testid="why-entry-not-useful"');
    expect(out).toContain("Not saved: the service is down");
  });

  it("says why a silent turn had no note, and renders titles as text", () => {
    const out = html(
      view([entry("i_a", { shown: false, probability: 0.1, title: "<img src=x onerror=alert(1)>" })], {
        shown: false,
        judged_by: [],
        silent_because: "nothing above the bar",
      }),
    );
    expect(out).toContain("No note: nothing above the bar");
    expect(out).toContain("local ranker decided alone");
    expect(out).not.toContain("<img");
    expect(out).toContain("&lt;img");
    expect(out).not.toContain("why-entry-not-useful");
  });
});
