// The first run: which agents Cairn found, what it captured of each, and whether each is
// connected (its MCP server and hooks registered). Pure helpers; FirstRun.svelte shows them.
import type { AgentFound, IntegrationView } from "../generated";

/** Where the "first run is done" mark is kept in this browser. */
export const FIRST_RUN_KEY = "cairn.firstRun.done";

/** One row of the first run: an agent, its history and its connection. */
export type FirstRunRow = {
  agent: AgentFound;
  /** Its integration, when Cairn can register with it (null: capture only). */
  integration: IntegrationView | null;
  /** "connected", "partly" (MCP without hooks, or a stale path), "not_connected" or "capture_only". */
  state: "connected" | "partly" | "not_connected" | "capture_only";
};

/** The rows, most history first; agents Cairn can connect but did not find are left out. */
export function firstRunRows(agents: AgentFound[], integrations: IntegrationView[]): FirstRunRow[] {
  return agents.map((agent) => {
    const integration = integrations.find((i) => i.framework === agent.framework) ?? null;
    let state: FirstRunRow["state"] = "capture_only";
    if (integration) {
      const hooksOk = integration.hooks === null || integration.hooks === undefined || integration.hooks === "installed";
      if (integration.installed && integration.current && hooksOk) state = "connected";
      else if (integration.installed) state = "partly";
      else state = "not_connected";
    }
    return { agent, integration, state };
  });
}

/** "12 conversations, 3 Mar 2026 – 20 Aug 2026" (or that nothing is captured yet). */
export function historyLine(a: AgentFound, format: (iso: string) => string): string {
  if (a.conversations === 0) {
    return a.stores > 0 ? "nothing captured yet" : "no sessions found";
  }
  const n = `${a.conversations} conversation${a.conversations === 1 ? "" : "s"}`;
  if (!a.first_at || !a.last_at) return n;
  const first = format(a.first_at);
  const last = format(a.last_at);
  return first === last ? `${n}, ${first}` : `${n}, ${first} – ${last}`;
}
