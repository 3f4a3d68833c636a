/**
 * Captured conversations are untrusted text (anything an agent read or wrote). The UI shows
 * them as text only: no component may render HTML from data.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL(".", import.meta.url));
// Spelled in pieces so this file does not match itself.
const HTML_SINKS = ["{@" + "html", ".inner" + "HTML", ".outer" + "HTML", "insertAdjacent" + "HTML", "document." + "write"];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path);
    return /\.(ts|svelte)$/.test(entry.name) ? [path] : [];
  });
}

describe("no HTML from data", () => {
  it("no source file renders raw HTML", () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(20);
    const offenders = files.flatMap((f) => {
      const text = readFileSync(f, "utf8");
      return HTML_SINKS.filter((sink) => text.includes(sink)).map((sink) => `${relative(SRC, f)}: ${sink}`);
    });
    expect(offenders).toEqual([]);
  });
});
