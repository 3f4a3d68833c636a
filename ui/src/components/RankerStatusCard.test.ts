import { render } from "svelte/server";
import { describe, expect, it } from "vitest";
import type { RankerStatus } from "../generated";
import { figuresLine, modelLabel, share } from "../lib/ranker";
import type { Backend } from "../platform";
import RankerStatusCard from "./RankerStatusCard.svelte";

const backend = { call: async () => ({}) } as unknown as Backend;

const SHIPPED: RankerStatus = {
  model: "shipped",
  bar: 0.45,
  figures: { bar: 0.45, auc: 0.812, precision: 0.7, hit_rate: 0.55, silence: 0.9, requests: 120 },
  source: null,
  trained_at: null,
  shipped: null,
  path: "/home/dev/.local/share/cairn/ranker/model.txt",
  problem: null,
  nightly:
    "Sleep trains a personal model each night once 200 turn-note entries are labelled (at least 20 needed and 20 not), and again when 50 more are; it is kept only when it beats the shipped one.",
};

const PERSONAL: RankerStatus = {
  ...SHIPPED,
  model: "personal",
  bar: 0.6,
  figures: { bar: 0.6, auc: 0.9, precision: 0.8, hit_rate: 0.6, silence: 0.95, requests: 40 },
  source: "store",
  trained_at: "2026-12-04T18:00:00Z",
  shipped: { bar: 0.45, auc: 0.7, precision: 0.6, hit_rate: 0.5, silence: 0.9, requests: 40 },
};

function html(initial: RankerStatus): string {
  return render(RankerStatusCard, { props: { backend, connected: true, initial } }).body.replace(/<!--[^>]*-->/g, "");
}

describe("ranker figures", () => {
  it("reads shares and figures", () => {
    expect(share(0.704)).toBe("70%");
    expect(share(null)).toBe("—");
    expect(figuresLine(SHIPPED.figures!)).toBe("At bar 0.45: precision 70%, hit rate 55%, silence 90%, AUC 0.812, 120 requests");
    expect(figuresLine({ bar: 0.5, auc: null, precision: null, hit_rate: null, silence: null, requests: null })).toBe(
      "At bar 0.50: precision —, hit rate —, silence —, AUC —",
    );
    expect(modelLabel(SHIPPED)).toBe("Shipped model");
    expect(modelLabel(PERSONAL)).toMatch(/^Personal model \(trained on your turn notes\)/);
  });
});

describe("RankerStatusCard", () => {
  it("shows the shipped model with no reset button", () => {
    const out = html(SHIPPED);
    expect(out).toContain('data-model="shipped"');
    expect(out).toContain("Shipped model");
    expect(out).toContain("0.45");
    expect(out).not.toContain('data-testid="ranker-reset"');
    expect(out).not.toContain('data-testid="ranker-shipped"');
    expect(out).toContain('data-testid="ranker-nightly"');
    expect(out).toContain("Sleep trains a personal model each night once 200");
  });

  it("shows a personal model, the shipped model's figures beside it, and the reset button", () => {
    const out = html(PERSONAL);
    expect(out).toContain('data-model="personal"');
    expect(out).toContain("At bar 0.60: precision 80%");
    expect(out).toMatch(/The shipped model on the same turns: At bar 0.45: precision 60%/);
    expect(out).toContain('data-testid="ranker-reset"');
    expect(out).toContain("Use the shipped model");
  });
});
