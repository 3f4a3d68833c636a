import { describe, expect, it } from "vitest";
import { highlight, queryTerms } from "./highlight";

const joined = (segments: { text: string }[]) => segments.map((s) => s.text).join("");

describe("queryTerms", () => {
  it("splits on punctuation, folds case and accents, drops operators and excluded words", () => {
    expect(queryTerms('"cargo test" +Flags')).toEqual(["cargo", "test", "flags"]);
    expect(queryTerms("verbose AND parser OR cli NOT x -skipped")).toEqual(["verbose", "parser", "cli", "x"]);
    expect(queryTerms("Café src/cli.rs")).toEqual(["cafe", "src", "cli", "rs"]);
    expect(queryTerms("  ")).toEqual([]);
    expect(queryTerms("and or")).toEqual(["and", "or"]);
  });
});

describe("highlight", () => {
  it("marks whole words only, case-insensitively", () => {
    expect(highlight("Run cargo test; tests pass. CARGO!", "cargo test")).toEqual([
      { text: "Run ", hit: false },
      { text: "cargo", hit: true },
      { text: " ", hit: false },
      { text: "test", hit: true },
      { text: "; tests pass. ", hit: false },
      { text: "CARGO", hit: true },
      { text: "!", hit: false },
    ]);
  });

  it("returns the text unchanged as one segment when nothing matches", () => {
    expect(highlight("nothing here", "cargo")).toEqual([{ text: "nothing here", hit: false }]);
    expect(highlight("nothing here", "")).toEqual([{ text: "nothing here", hit: false }]);
    expect(highlight("", "cargo")).toEqual([]);
  });

  it("keeps markup in the passage as literal text, never HTML", () => {
    const passage = '<img src=x onerror="alert(1)"> run <b>cargo</b> &amp; <script>test()</script>';
    const segments = highlight(passage, "cargo test img");
    expect(joined(segments)).toBe(passage);
    expect(segments.filter((s) => s.hit).map((s) => s.text)).toEqual(["img", "cargo", "test"]);
    // Segments are plain strings: nothing was escaped, decoded or wrapped in tags.
    for (const s of segments) expect(Object.keys(s).sort()).toEqual(["hit", "text"]);
    expect(segments.some((s) => s.text.includes("<mark"))).toBe(false);
  });

  it("does not treat the query as markup or as a regular expression", () => {
    expect(joined(highlight("a.b (c) [d]", ".* ( [d] <mark>"))).toBe("a.b (c) [d]");
    expect(highlight("a.b (c) [d] mark", ".* ( [d] <mark>").filter((s) => s.hit).map((s) => s.text)).toEqual(["d", "mark"]);
  });

  it("matches accented words like the index does, and accepts a word list", () => {
    expect(highlight("un café noir", ["CAFE"]).filter((s) => s.hit).map((s) => s.text)).toEqual(["café"]);
  });
});
