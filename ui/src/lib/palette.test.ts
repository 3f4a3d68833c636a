import { describe, expect, it } from "vitest";
import { filterCommands, isPaletteKey, moveActive, normalize, paletteShortcut, scoreCommand } from "./palette";

const cmds = [
  { title: "Go to Search" },
  { title: "Go to Conversations" },
  { title: "Go to Notes" },
  { title: "Go to Settings: Privacy", keywords: ["memory switch", "clear"] },
  { title: "Pause memory for 15 minutes", keywords: ["stop"] },
  { title: "New note" },
  { title: "Theme: dark", keywords: ["appearance", "colour"] },
];
const titles = (q: string) => filterCommands(cmds, q).map((c) => c.title);

describe("scoreCommand", () => {
  it("ranks a title prefix above a word start, a substring, a keyword and a subsequence", () => {
    expect(scoreCommand({ title: "New note" }, "new")).toBe(0);
    expect(scoreCommand({ title: "Go to Notes" }, "not")).toBe(1);
    expect(scoreCommand({ title: "Go to Notes" }, "otes")).toBe(2);
    expect(scoreCommand({ title: "Theme: dark", keywords: ["appearance"] }, "appear")).toBe(3);
    expect(scoreCommand({ title: "Go to Notes" }, "gtn")).toBe(4);
    expect(scoreCommand({ title: "Go to Notes" }, "xyz")).toBeNull();
  });

  it("ignores case, accents and extra spaces; an empty query matches", () => {
    expect(scoreCommand({ title: "Café notes" }, "  CAFE  ")).toBe(0);
    expect(scoreCommand({ title: "anything" }, "   ")).toBe(0);
    expect(normalize("  Élan  Vital ")).toBe("elan vital");
  });

  it("needs every word to match", () => {
    expect(scoreCommand({ title: "Pause memory for 15 minutes" }, "pause 15")).toBe(1);
    expect(scoreCommand({ title: "Pause memory for 15 minutes" }, "pause hour")).toBeNull();
  });
});

describe("filterCommands", () => {
  it("keeps the given order for an empty query", () => {
    expect(titles("")).toEqual(cmds.map((c) => c.title));
  });

  it("puts better matches first and keeps ties in order", () => {
    expect(titles("note")).toEqual(["Go to Notes", "New note"]);
    expect(titles("new")).toEqual(["New note"]);
    expect(titles("n")).toEqual(["New note", "Go to Notes", "Go to Conversations", "Go to Settings: Privacy", "Pause memory for 15 minutes", "Theme: dark"]);
    expect(titles("go to")).toEqual(["Go to Search", "Go to Conversations", "Go to Notes", "Go to Settings: Privacy"]);
  });

  it("finds commands by keyword", () => {
    expect(titles("clear")).toEqual(["Go to Settings: Privacy"]);
    expect(titles("colour")).toEqual(["Theme: dark"]);
    expect(titles("nothing like this")).toEqual([]);
  });
});

describe("moveActive", () => {
  it("wraps round both ends and starts from the right end", () => {
    expect(moveActive(0, 1, 3)).toBe(1);
    expect(moveActive(2, 1, 3)).toBe(0);
    expect(moveActive(0, -1, 3)).toBe(2);
    expect(moveActive(-1, 1, 3)).toBe(0);
    expect(moveActive(-1, -1, 3)).toBe(2);
    expect(moveActive(0, 1, 0)).toBe(-1);
  });
});

describe("shortcut", () => {
  it("is Ctrl+K, or ⌘K on Apple platforms", () => {
    expect(paletteShortcut("Linux x86_64")).toBe("Ctrl+K");
    expect(paletteShortcut("MacIntel")).toBe("⌘K");
    const key = { key: "k", ctrlKey: false, metaKey: false, altKey: false, shiftKey: false };
    expect(isPaletteKey({ ...key, ctrlKey: true })).toBe(true);
    expect(isPaletteKey({ ...key, metaKey: true, key: "K" })).toBe(true);
    expect(isPaletteKey(key)).toBe(false);
    expect(isPaletteKey({ ...key, ctrlKey: true, shiftKey: true })).toBe(false);
  });
});
