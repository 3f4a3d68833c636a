import { render } from "svelte/server";
import { describe, expect, it } from "vitest";
import type { ItemView, OpenedItem, OpenedRecord } from "../generated";
import ItemDetail from "./ItemDetail.svelte";

const item = (id: string, over: Partial<ItemView> = {}): ItemView => ({
  id,
  kind: "decision",
  title: "Relay listens on port 7420",
  summary: "The relay listens on TCP port 7420.",
  body: "Set in config/relay.toml.",
  cues: ["which port does relay use?"],
  concepts: ["relay", "port"],
  importance: 4,
  certainty: "stated",
  project: "github.com/acme/relay",
  sources: ["r_1"],
  happened_at: "2026-03-01T09:00:00Z",
  said_at: "2026-03-02T09:00:00Z",
  ended_at: null,
  superseded_by: null,
  archived: false,
  provenance: "user",
  ...over,
});

const source = (id: string, position: number): OpenedRecord => ({
  framework: "claude-code",
  session_id: "s/1",
  project: "github.com/acme/relay",
  cwd: "/src/relay",
  turn: {
    id,
    request: `Request ${id}: which port?`,
    started_at: "2026-03-02T09:00:00Z",
    ended_at: null,
    outcome: "success",
    model: null,
    steps: [],
    complete: true,
  },
  position,
  session_turns: 3,
  neighbours: [],
});

const old = item("i_old", { superseded_by: "i_new", ended_at: "2026-04-01T00:00:00Z" });
const opened: OpenedItem = {
  item: old,
  history: [
    { seq: 1, at: "2026-03-02T09:00:00Z", kind: "created", reason: "distilled (distill-1)", item: item("i_old") },
    { seq: 7, at: "2026-04-01T00:00:00Z", kind: "superseded", reason: "the port moved to 7421", item: old },
  ],
  relations: [
    { from: "i_new", to: "i_old", kind: "supersedes", weight: 1, other_title: "Relay listens on port 7421" },
    { from: "i_old", to: "i_cfg", kind: "related", weight: 0.83, other_title: "Relay config lives in config/relay.toml" },
  ],
  chain: ["i_old", "i_new"],
  sources: [source("r_1", 1), source("r_2", 3)],
};

function html(o: OpenedItem): string {
  return render(ItemDetail, { props: { opened: o } }).body.replace(/<!--[^>]*-->/g, "");
}

describe("the item page", () => {
  it("shows a superseded item's banner, every event with its reason, its relations and chain as links", () => {
    const h = html(opened);
    expect(h).toContain('data-testid="item-state">Superseded<');
    expect(h).toMatch(/data-testid="item-superseded"[^>]*>\s*Superseded by <a href="#\/item\?id=i_new">Relay listens on port 7421<\/a>/);
    const events = [...h.matchAll(/data-testid="item-event" data-kind="([a-z]+)"/g)].map((m) => m[1]);
    expect(events).toEqual(["created", "superseded"]);
    expect(h).toContain("— the port moved to 7421");
    expect(h).toContain("— distilled (distill-1)");
    expect(h).toMatch(/Replaced by<\/span>\s*<a href="#\/item\?id=i_new">Relay listens on port 7421<\/a>/);
    expect(h).toMatch(/Related to<\/span>\s*<a href="#\/item\?id=i_cfg">Relay config lives in config\/relay.toml<\/a>\s*<span class="muted[^"]*">83%/);
    expect(h).toMatch(/data-testid="item-chain"[\s\S]*this item[\s\S]*href="#\/item\?id=i_new"/);
    expect(h).toContain("Happened");
    expect(h).toContain("Ended");
    expect(h).toContain("4/5");
  });

  it("lists every source request collapsed when there are several, each linked to its conversation turn", () => {
    const h = html(opened);
    expect([...h.matchAll(/data-testid="item-source" data-id="(r_\d)"/g)].map((m) => m[1])).toEqual(["r_1", "r_2"]);
    expect(h).not.toMatch(/<details[^>]*open/);
    expect(h).toContain('href="#/conversations?framework=claude-code&amp;session=s%2F1&amp;turn=r_2"');
    expect(h).toContain("request 3 of 3");
  });

  it("opens a lone source, and leaves out what an active item does not have", () => {
    const h = html({ ...opened, item: item("i_old"), relations: [], chain: ["i_old"], sources: [source("r_1", 1)] });
    expect(h).toMatch(/<details[^>]*open/);
    expect(h).not.toContain('data-testid="item-superseded"');
    expect(h).not.toContain('data-testid="item-state"');
    expect(h).not.toContain('data-testid="item-relations"');
    expect(h).not.toContain('data-testid="item-chain"');
    expect(h).not.toContain('data-testid="item-provenance"');
  });

  it("marks an item that only outside text stated", () => {
    const h = html({ ...opened, item: item("i_old", { provenance: "outside" }) });
    expect(h).toMatch(/data-testid="item-provenance" data-provenance="outside"[^>]*>From outside text</);
    const u = html({ ...opened, item: item("i_old", { provenance: "unchecked" }) });
    expect(u).toContain(">Source unchecked<");
  });
});
