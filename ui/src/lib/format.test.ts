import { describe, expect, it } from "vitest";
import { formatBytes, formatDuration, formatRelative, formatShortTime, plural, progressPercent } from "./format";

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

  it("gives compact times for lists", () => {
    const now = new Date("2025-06-15T12:00:00Z");
    expect(formatShortTime("2025-06-15T11:59:30Z", now)).toBe("just now");
    expect(formatShortTime("2025-06-15T11:55:00Z", now)).toMatch(/5/);
    expect(formatShortTime("2025-06-12T12:00:00Z", now)).toMatch(/3/);
    expect(formatShortTime("2025-03-02T12:00:00Z", now)).not.toMatch(/2025/);
    expect(formatShortTime("2024-03-02T12:00:00Z", now)).toMatch(/2024/);
    expect(formatShortTime("2025-07-01T12:00:00Z", now)).not.toMatch(/ago/);
    expect(formatShortTime("nope", now)).toBe("nope");
  });

  it("formats durations", () => {
    expect(formatDuration(49)).toBe("49 ms");
    expect(formatDuration(1234)).toBe("1.2 s");
    expect(formatDuration(42_000)).toBe("42 s");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
    expect(formatDuration(120_000)).toBe("2 min");
    expect(formatDuration(-1)).toBe("—");
  });
});

describe("formatBytes", () => {
  it("uses bytes under 1 KB, then one decimal below 10 of a unit", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1024)).toBe("1.0 KB");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(20 * 1024)).toBe("20 KB");
    expect(formatBytes(3.4 * 1024 * 1024)).toBe("3.4 MB");
    expect(formatBytes(-1)).toBe("—");
  });
});
