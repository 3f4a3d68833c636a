import { describe, expect, it } from "vitest";
import type { SearchHit } from "../generated";
import { parseLocation } from "./router";
import { hitHref, isItemHit, isNoteHit, searchKinds } from "./search";

const record: SearchHit = {
  id: "r_1",
  source: "record",
  title: null,
  framework: "codex",
  project: "github.com/acme/app",
  session_id: "s/1",
  timestamp: "2026-03-01T10:00:00Z",
  outcome: "ok",
  passage: "cargo test",
  score: 1,
  in_range: true,
};

const note: SearchHit = {
  ...record,
  id: "n_cecab0ffdd75",
  source: "note",
  title: "Heron runbook",
  framework: "note",
  project: null,
  session_id: "",
  outcome: "",
};

describe("searchKinds", () => {
  it("asks for every kind unless an agent is chosen", () => {
    expect(searchKinds("")).toBeNull();
    expect(searchKinds(null)).toBeNull();
    expect(searchKinds(undefined)).toBeNull();
    expect(searchKinds("codex")).toEqual(["record"]);
  });
});

const item: SearchHit = {
  ...record,
  id: "i_5e1f",
  source: "item",
  title: "The relay listens on port 7421",
  item_kind: "decision",
  framework: "decision",
  session_id: "i_5e1f",
  outcome: "",
};

describe("hitHref", () => {
  it("opens an item hit on its item page", () => {
    expect(isItemHit(item)).toBe(true);
    expect(isItemHit(record)).toBe(false);
    expect(isNoteHit(item)).toBe(false);
    expect(hitHref(item)).toBe("#/item?id=i_5e1f");
    expect(parseLocation(hitHref(item))).toEqual({ name: "item", params: { id: "i_5e1f" } });
  });

  it("opens a note hit in Notes by its id", () => {
    expect(isNoteHit(note)).toBe(true);
    expect(hitHref(note)).toBe("#/notes?id=n_cecab0ffdd75");
    expect(parseLocation(hitHref(note))).toEqual({ name: "notes", params: { id: "n_cecab0ffdd75" } });
  });

  it("opens a record hit at its conversation turn", () => {
    expect(isNoteHit(record)).toBe(false);
    expect(hitHref(record)).toBe("#/conversations?framework=codex&session=s%2F1&turn=r_1");
  });

  it("treats an unknown source like a record", () => {
    expect(hitHref({ ...record, source: "episode" })).toBe("#/conversations?framework=codex&session=s%2F1&turn=r_1");
  });
});
