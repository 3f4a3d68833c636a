/**
 * Only ui/src/platform/ may use Tauri modules (the `@tauri-apps` packages); everything else goes through the
 * Backend interface so the UI also runs in a plain browser against `cairn daemon`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL(".", import.meta.url));
const PLATFORM = join(SRC, "platform") + sep;
const SOURCE_EXT = /\.(ts|js|mjs|cjs|svelte|tsx|jsx)$/;
// Static imports/exports (`from "…"`, `import "…"`), dynamic `import("…")` and `require("…")`.
const TAURI = "@tauri" + "-apps/";
const IMPORT_RE = new RegExp(String.raw`(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["'\`]` + TAURI.replace("/", "\\/"));

export function importsTauri(source: string): boolean {
  return IMPORT_RE.test(source);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path);
    return SOURCE_EXT.test(entry.name) ? [path] : [];
  });
}

describe("platform boundary", () => {
  it("recognises every way of importing a Tauri module", () => {
    expect(importsTauri(`import { invoke } from "${TAURI}api/core";`)).toBe(true);
    expect(importsTauri(`import {\n  invoke,\n} from '${TAURI}api/core'`)).toBe(true);
    expect(importsTauri(`export { enable } from "${TAURI}plugin-autostart";`)).toBe(true);
    expect(importsTauri(`import "${TAURI}api";`)).toBe(true);
    expect(importsTauri(`const m = await import("${TAURI}api/core");`)).toBe(true);
    expect(importsTauri(`const m = require('${TAURI}api');`)).toBe(true);
    expect(importsTauri(`import { x } from "./platform";`)).toBe(false);
    expect(importsTauri(`// talk to Tauri through the platform module`)).toBe(false);
  });

  it("finds the Tauri imports that the platform module does have", () => {
    const inside = sourceFiles(PLATFORM).filter((f) => importsTauri(readFileSync(f, "utf8")));
    expect(inside.length).toBeGreaterThan(0);
  });

  it("no file outside src/platform imports @tauri-apps", () => {
    const files = sourceFiles(SRC).filter((f) => !f.startsWith(PLATFORM));
    expect(files.length).toBeGreaterThan(10);
    const offenders = files
      .filter((f) => importsTauri(readFileSync(f, "utf8")))
      .map((f) => relative(SRC, f));
    expect(offenders, `only src/platform/ may import ${TAURI}*`).toEqual([]);
  });
});
