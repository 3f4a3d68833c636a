import { describe, expect, it } from "vitest";
import { formatRelative, plural, progressPercent } from "./format";

describe("format", () => {
  it("pluralises counts", () => {
    expect(plural(1, "note")).toBe("1 note");
    expect(plural(0, "note")).toBe("0 notes");
    expect(plural(2, "entry", "entries")).toBe("2 entries");
  });

  it("reads progress as a fraction or a percentage and clamps it", () => {
    expect(progressPercent(0.25)).toBe(25);
    expect(progressPercent(1)).toBe(100);
    expect(progressPercent(42)).toBe(42);
    expect(progressPercent(250)).toBe(100);
    expect(progressPercent(-1)).toBe(0);
  });

  it("describes recent times relatively", () => {
    const now = new Date("2025-01-01T12:00:00Z");
    expect(formatRelative("2025-01-01T11:59:50Z", now)).toBe("just now");
    expect(formatRelative("2025-01-01T11:55:00Z", now)).toMatch(/5 minutes ago/);
    expect(formatRelative("not a date", now)).toBe("not a date");
  });
});
