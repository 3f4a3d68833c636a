import { describe, expect, it } from "vitest";
import {
  frameworkHue,
  frameworkLabel,
  frameworkOptions,
  prettyJson,
  projectOptions,
  shortProject,
  toOutcome,
  toolSummary,
  toStep,
  compactPassage,
} from "./conversations";

describe("shortProject", () => {
  it("keeps a git remote identity (host/owner/repo)", () => {
    expect(shortProject("github.com/acme/app")).toBe("github.com/acme/app");
    expect(shortProject("gitlab.example.org/group/sub/repo/")).toBe("gitlab.example.org/group/sub/repo");
  });

  it("shortens a path to its last segment", () => {
    expect(shortProject("/home/dev/projects/demo-app")).toBe("demo-app");
    expect(shortProject("/home/dev/projects/demo-app/")).toBe("demo-app");
    expect(shortProject("~/work/app")).toBe("app");
    expect(shortProject("C:\\Users\\dev\\source\\repos\\App")).toBe("App");
    expect(shortProject("C:/work/app")).toBe("app");
    expect(shortProject("\\\\server\\share\\proj")).toBe("proj");
  });

  it("handles roots, null and empty", () => {
    expect(shortProject("/")).toBe("/");
    expect(shortProject("C:\\")).toBe("C:\\");
    expect(shortProject(null)).toBe("");
    expect(shortProject(undefined)).toBe("");
    expect(shortProject("  ")).toBe("");
  });
});

describe("frameworks", () => {
  it("labels known frameworks and passes unknown ones through", () => {
    expect(frameworkLabel("claude-code")).toBe("Claude Code");
    expect(frameworkLabel("gemini-cli")).toBe("Gemini CLI");
    expect(frameworkLabel("something-new")).toBe("something-new");
    expect(frameworkLabel("constructor")).toBe("constructor");
  });

  it("gives each framework a stable hue", () => {
    expect(frameworkHue("something-new")).toBe(frameworkHue("something-new"));
    for (const f of ["claude-code", "x", "toString"]) {
      expect(frameworkHue(f)).toBeGreaterThanOrEqual(0);
      expect(frameworkHue(f)).toBeLessThan(360);
    }
  });
});

describe("facet options", () => {
  const facets = [
    { framework: "codex", project: "/home/dev/a/app", count: 2 },
    { framework: "claude-code", project: "/home/dev/a/app", count: 3 },
    { framework: "claude-code", project: "/home/dev/b/app", count: 1 },
    { framework: "claude-code", project: "github.com/acme/site", count: 4 },
    { framework: "gemini-cli", project: null, count: 5 },
  ];

  it("sums conversations per framework, sorted by label", () => {
    expect(frameworkOptions(facets)).toEqual([
      { value: "claude-code", label: "Claude Code", count: 8 },
      { value: "codex", label: "Codex", count: 2 },
      { value: "gemini-cli", label: "Gemini CLI", count: 5 },
    ]);
  });

  it("lists projects (of one framework when asked), telling same-named ones apart", () => {
    expect(projectOptions(facets)).toEqual([
      { value: "/home/dev/a/app", label: "/home/dev/a/app", count: 5 },
      { value: "/home/dev/b/app", label: "/home/dev/b/app", count: 1 },
      { value: "github.com/acme/site", label: "github.com/acme/site", count: 4 },
    ]);
    expect(projectOptions(facets, "codex")).toEqual([{ value: "/home/dev/a/app", label: "app", count: 2 }]);
    expect(projectOptions(facets, "gemini-cli")).toEqual([]);
  });
});

describe("steps", () => {
  it("reads text, tool and injected steps defensively", () => {
    expect(toStep({ type: "text", text: "hi" })).toEqual({ type: "text", text: "hi" });
    expect(toStep({ type: "text" })).toEqual({ type: "text", text: "" });
    expect(toStep({ type: "tool", name: "Bash", input: { command: "ls" }, output: "a\nb", is_error: true })).toEqual({
      type: "tool",
      name: "Bash",
      input: { command: "ls" },
      output: "a\nb",
      isError: true,
    });
    expect(toStep({ type: "tool", name: "x", input: null, output: null, is_error: "yes" })).toMatchObject({
      output: null,
      isError: false,
    });
    expect(toStep({ type: "tool", name: "x", output: { ok: 1 } })).toMatchObject({ output: '{\n  "ok": 1\n}' });
    expect(toStep({ type: "injected", source: "hook", text: "ctx" })).toEqual({ type: "injected", source: "hook", text: "ctx" });
    expect(toStep({ type: "thinking", text: "?" })).toEqual({ type: "other", raw: { type: "thinking", text: "?" } });
  });

  it("maps outcomes, defaulting to unknown", () => {
    expect(toOutcome("success")).toBe("success");
    expect(toOutcome("interrupted")).toBe("interrupted");
    expect(toOutcome("error")).toBe("error");
    expect(toOutcome("cancelled")).toBe("unknown");
  });

  it("pretty-prints JSON, and shows strings as they are", () => {
    expect(prettyJson({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
    expect(prettyJson("*** Begin Patch")).toBe("*** Begin Patch");
    expect(prettyJson(null)).toBe("null");
  });
});

describe("toolSummary", () => {
  it("shows the command, file, pattern or query of a call", () => {
    expect(toolSummary({ command: "cargo test --all", description: "Run all tests" })).toBe("cargo test --all");
    expect(toolSummary({ command: ["bash", "-lc", "cargo test --test cli 2>&1 | tail -n 20"], workdir: "/x" })).toBe(
      "cargo test --test cli 2>&1 | tail -n 20",
    );
    expect(toolSummary({ command: ["git", "status", "--short"] })).toBe("git status --short");
    expect(toolSummary({ file_path: "/home/dev/src/cli.rs", old_string: "a", new_string: "b" })).toBe("/home/dev/src/cli.rs");
    expect(toolSummary({ pattern: "struct Cli", path: "src" })).toBe("struct Cli");
    expect(toolSummary({ other: 1, note: "first string" })).toBe("first string");
  });

  it("uses the first line of a text input, marking that there is more", () => {
    expect(toolSummary("*** Begin Patch\n*** Update File: src/cli.rs\n")).toBe("*** Begin Patch …");
    expect(toolSummary("\n\n  one line  \n")).toBe("one line");
  });

  it("collapses whitespace and cuts long inputs", () => {
    expect(toolSummary({ command: "a   b\tc" })).toBe("a b c");
    const long = toolSummary({ command: "x".repeat(500) }, 40);
    expect(long).toHaveLength(40);
    expect(long.endsWith("…")).toBe(true);
  });

  it("is empty for inputs with nothing to show", () => {
    expect(toolSummary(null)).toBe("");
    expect(toolSummary({})).toBe("");
    expect(toolSummary({ n: 1 })).toBe("");
  });
});

describe("compactPassage", () => {
  it("collapses blank lines and trims, keeping the words", () => {
    expect(compactPassage("Why?\n\n[tool shell] x\r\n\r\n  \nout\n")).toBe("Why?\n[tool shell] x\nout");
    expect(compactPassage("  one line ")).toBe("one line");
    expect(compactPassage("<b>kept</b>\n\n&amp;")).toBe("<b>kept</b>\n&amp;");
  });
});
