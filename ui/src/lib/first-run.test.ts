import { describe, expect, it } from "vitest";
import type { AgentFound, IntegrationView } from "../generated";
import { firstRunRows, historyLine } from "./first-run";

const agent = (framework: string, conversations: number, stores = 1): AgentFound => ({
  framework,
  name: framework,
  stores,
  place: "/home/me/.x",
  conversations,
  requests: conversations * 3,
  first_at: conversations ? "2026-03-03T10:00:00Z" : null,
  last_at: conversations ? "2026-08-20T10:00:00Z" : null,
});

const integration = (framework: string, over: Partial<IntegrationView> = {}): IntegrationView =>
  ({
    framework,
    path: "/home/me/.x/config",
    detected: true,
    exists: true,
    installed: false,
    current: false,
    backups: [],
    hooks: "not_installed",
    hooks_path: undefined,
    ...over,
  }) as IntegrationView;

describe("first run", () => {
  it("says whether each agent is connected, partly, not at all, or capture only", () => {
    const rows = firstRunRows(
      [agent("claude-code", 4), agent("codex", 2), agent("gemini-cli", 1), agent("aider", 1)],
      [
        integration("claude-code", { installed: true, current: true, hooks: "installed" }),
        integration("codex", { installed: true, current: true, hooks: "not_installed" }),
        integration("gemini-cli"),
      ],
    );
    expect(rows.map((r) => r.state)).toEqual(["connected", "partly", "not_connected", "capture_only"]);
  });

  it("describes the history found", () => {
    const day = (iso: string) => iso.slice(0, 10);
    expect(historyLine(agent("x", 3), day)).toBe("3 conversations, 2026-03-03 – 2026-08-20");
    expect(historyLine(agent("x", 0), day)).toBe("nothing captured yet");
    expect(historyLine(agent("x", 0, 0), day)).toBe("no sessions found");
  });
});
