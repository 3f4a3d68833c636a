import type { ComponentProps } from "svelte";
import { render } from "svelte/server";
import { describe, expect, it } from "vitest";
import type { IntegrationChange, IntegrationView } from "../generated";
import { changeSummary, integrationActions, integrationState, sortIntegrations } from "../lib/integrations";
import IntegrationsList from "./IntegrationsList.svelte";

const view = (framework: string, over: Partial<IntegrationView> = {}): IntegrationView => ({
  framework,
  path: `/home/dev/.${framework}/config`,
  detected: true,
  exists: true,
  installed: false,
  current: false,
  backups: [],
  ...over,
});

const LIST: IntegrationView[] = [
  view("gemini-cli", { detected: false, exists: false }),
  view("codex", { path: "/home/dev/.codex/config.toml" }),
  view("claude-code", { installed: true, current: true }),
  view("cursor", { installed: true, current: false }),
];

/** One `<li>` per row, by its data-framework. */
function rows(html: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of html.matchAll(/<li class="integration[^"]*"[^>]*data-framework="([^"]+)"[^>]*>([\s\S]*?)<\/li>/g)) out.set(m[1]!, m[0]);
  return out;
}

function html(props: Partial<ComponentProps<typeof IntegrationsList>> = {}): string {
  return render(IntegrationsList, { props: { integrations: LIST, onset: () => {}, ...props } }).body.replace(/<!--[^>]*-->/g, "");
}

describe("integration states", () => {
  it("classifies rows and offers the right buttons", () => {
    expect(LIST.map(integrationState)).toEqual(["missing", "available", "installed", "stale"]);
    expect(integrationActions(LIST[1]!)).toEqual({ install: "Install", remove: false });
    expect(integrationActions(LIST[2]!)).toEqual({ install: null, remove: true });
    expect(integrationActions(LIST[3]!)).toEqual({ install: "Update", remove: true });
  });

  it("lists detected frameworks first, by name", () => {
    expect(sortIntegrations(LIST).map((v) => v.framework)).toEqual(["claude-code", "codex", "cursor", "gemini-cli"]);
  });

  it("summarises a change", () => {
    const change: IntegrationChange = { framework: "codex", path: "/h/.codex/config.toml", action: "installed", backup: null, notes: [] };
    expect(changeSummary(change)).toBe("Codex: installed in /h/.codex/config.toml.");
    expect(changeSummary({ ...change, action: "removed" })).toBe("Codex: removed from /h/.codex/config.toml.");
    expect(changeSummary({ ...change, action: "already_installed" })).toMatch(/nothing changed/);
  });
});

describe("IntegrationsList", () => {
  it("renders one row per framework with its path, state and buttons", () => {
    const out = html();
    const byFramework = rows(out);
    expect([...byFramework.keys()]).toEqual(["claude-code", "codex", "cursor", "gemini-cli"]);

    const codex = byFramework.get("codex")!;
    expect(codex).toContain('data-state="available"');
    expect(codex).toContain('data-detected="true"');
    expect(codex).toContain("/home/dev/.codex/config.toml");
    expect(codex).toContain("Not installed");
    expect(codex).toMatch(/data-testid="integration-install"[^>]*>\s*Install\s*</);
    expect(codex).not.toContain('data-testid="integration-remove"');

    const claude = byFramework.get("claude-code")!;
    expect(claude).toContain("Installed");
    expect(claude).toContain('data-testid="integration-remove"');
    expect(claude).not.toContain('data-testid="integration-install"');

    const cursor = byFramework.get("cursor")!;
    expect(cursor).toContain("Out of date");
    expect(cursor).toMatch(/data-testid="integration-install"[^>]*>\s*Update\s*</);

    const gemini = byFramework.get("gemini-cli")!;
    expect(gemini).toContain("Not detected");
    expect(gemini).toContain("does not exist yet");
  });

  it("shows a change's result with its backup under its row, and an error under its row", () => {
    const out = html({
      result: { framework: "codex", path: "/home/dev/.codex/config.toml", action: "installed", backup: "/home/dev/.codex/config.toml.cairn-bak", notes: ["edited through a symlink"] },
      error: { framework: "cursor", message: "Could not update Cursor: permission denied" },
    });
    const byFramework = rows(out);
    const codex = byFramework.get("codex")!;
    expect(codex).toContain('data-testid="integration-result"');
    expect(codex).toContain('data-action="installed"');
    expect(codex).toContain("/home/dev/.codex/config.toml.cairn-bak");
    expect(codex).toContain("edited through a symlink");
    expect(byFramework.get("cursor")).toContain("permission denied");
    expect(byFramework.get("claude-code")).not.toContain("integration-result");
  });

  it("lists each file's backups under its row, and nothing for a row without any", () => {
    const backups = [
      { path: "/data/backups/integrations/codex/20260102T030405.000002Z-config.toml", file_name: "config.toml", created_at: "2026-01-02T03:04:05.000002Z", size: 2048 },
      { path: "/data/backups/integrations/codex/20260101T030405.000001Z-config.toml", file_name: "config.toml", created_at: "2026-01-01T03:04:05.000001Z", size: 12 },
    ];
    const byFramework = rows(html({ integrations: [view("codex", { backups }), view("cursor")] }));
    const codex = byFramework.get("codex")!;
    expect(codex).toContain('data-testid="integration-backups"');
    expect(codex).toMatch(/<summary[^>]*>\s*2 backups of this file/);
    expect([...codex.matchAll(/data-testid="integration-backup-item"/g)].length).toBe(2);
    expect(codex.indexOf("20260102T030405.000002Z")).toBeLessThan(codex.indexOf("20260101T030405.000001Z"));
    expect(codex).toContain("2.0 KB");
    expect(byFramework.get("cursor")).not.toContain("integration-backups");
  });

  it("disables every button while a change runs", () => {
    const out = html({ busy: "codex" });
    const buttons = [...out.matchAll(/<button[^>]*data-testid="integration-(?:install|remove)"[^>]*>/g)].map((m) => m[0]);
    expect(buttons.length).toBe(5);
    for (const b of buttons) expect(b).toContain("disabled");
  });

  it("escapes what the service reports", () => {
    const out = html({ integrations: [view("codex", { path: "<script>x</script>" })] });
    expect(out).not.toContain("<script>");
  });
});

describe("hooks", () => {
  it("shows the hooks' state and asks for an update when they are missing", () => {
    const withHooks = view("claude-code", { installed: true, current: true, hooks: "installed", hooks_path: "/h/.claude/settings.json" });
    const partial = view("codex", { installed: true, current: true, hooks: "partial", hooks_path: "/h/.codex/hooks.json", manual: "Open codex once, /hooks, Trust." });
    const none = view("copilot-cli", { installed: true, current: true, hooks_note: "Copilot CLI ignores what its hooks print" });
    expect([withHooks, partial, none].map(integrationState)).toEqual(["installed", "stale", "installed"]);
    expect(integrationActions(partial)).toEqual({ install: "Update", remove: true });
    const byFramework = rows(html({ integrations: [withHooks, partial, none] }));
    expect(byFramework.get("claude-code")).toContain("Hooks (the turn note): installed");
    expect(byFramework.get("claude-code")).toContain("/h/.claude/settings.json");
    expect(byFramework.get("codex")).toContain("partly installed");
    expect(byFramework.get("codex")).toContain("To do by hand: Open codex once, /hooks, Trust.");
    expect(byFramework.get("copilot-cli")).not.toContain("integration-hooks");
  });

  it("says what a change did to the hooks and what is left to do", () => {
    const change: IntegrationChange = {
      framework: "codex",
      path: "/h/.codex/config.toml",
      action: "installed",
      backup: null,
      notes: [],
      hooks: "installed",
      hooks_path: "/h/.codex/hooks.json",
      manual: "Open codex once, /hooks, Trust.",
    };
    const out = rows(html({ integrations: [view("codex", { installed: true, current: true, hooks: "installed" })], result: change })).get("codex")!;
    expect(out).toContain("Hooks installed in /h/.codex/hooks.json.");
    expect(out).toContain("To do by hand: Open codex once, /hooks, Trust.");
    const removed = rows(html({ integrations: [view("codex")], result: { ...change, action: "removed", hooks: "removed" } })).get("codex")!;
    expect(removed).toContain("Hooks removed from /h/.codex/hooks.json.");
    expect(removed).not.toContain("To do by hand");
  });
});
