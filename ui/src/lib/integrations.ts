/** Pure helpers for Settings → Integrations: where Cairn's MCP server is registered. */
import type { IntegrationChange, IntegrationView } from "../generated";
import { frameworkLabel } from "./conversations";

/**
 * - `installed`: registered, and it runs this Cairn binary;
 * - `stale`: registered, but pointing at another binary (Cairn moved or was reinstalled);
 * - `available`: the framework is here and Cairn is not registered with it;
 * - `missing`: the framework does not seem to be installed.
 */
export type IntegrationState = "installed" | "stale" | "available" | "missing";

export function integrationState(view: IntegrationView): IntegrationState {
  if (view.installed) return view.current ? "installed" : "stale";
  return view.detected ? "available" : "missing";
}

export const STATE_LABELS: Record<IntegrationState, string> = {
  installed: "Installed",
  stale: "Out of date",
  available: "Not installed",
  missing: "Not detected",
};

export function stateDescription(view: IntegrationView): string {
  const name = frameworkLabel(view.framework);
  switch (integrationState(view)) {
    case "installed":
      return `${name} can use Cairn's memory tools.`;
    case "stale":
      return `Registered, but it points at another Cairn program (moved or reinstalled). Install again to update it.`;
    case "available":
      return `${name} is on this machine; Cairn is not registered with it.`;
    case "missing":
      return view.exists
        ? `${name}'s folder was not found, but its config file exists.`
        : `${name} does not seem to be installed here. Installing creates its config file.`;
  }
}

/** The buttons a row offers. */
export function integrationActions(view: IntegrationView): { install: string | null; remove: boolean } {
  const state = integrationState(view);
  return {
    install: state === "installed" ? null : state === "stale" ? "Update" : "Install",
    remove: view.installed,
  };
}

/** Detected frameworks first, then by name. */
export function sortIntegrations(list: readonly IntegrationView[]): IntegrationView[] {
  return [...list].sort(
    (a, b) => Number(b.detected || b.installed) - Number(a.detected || a.installed) || frameworkLabel(a.framework).localeCompare(frameworkLabel(b.framework)),
  );
}

const CHANGE_LABELS: Record<string, string> = {
  installed: "Installed",
  updated: "Updated",
  already_installed: "Already installed",
  removed: "Removed",
  not_installed: "Was not installed",
};

export function changeLabel(action: string): string {
  return Object.hasOwn(CHANGE_LABELS, action) ? CHANGE_LABELS[action]! : action;
}

/** "Codex: installed in ~/.codex/config.toml." */
export function changeSummary(change: IntegrationChange): string {
  const name = frameworkLabel(change.framework);
  switch (change.action) {
    case "installed":
      return `${name}: installed in ${change.path}.`;
    case "updated":
      return `${name}: updated in ${change.path}.`;
    case "already_installed":
      return `${name}: already installed in ${change.path}; nothing changed.`;
    case "removed":
      return `${name}: removed from ${change.path}.`;
    case "not_installed":
      return `${name}: was not installed in ${change.path}; nothing changed.`;
    default:
      return `${name}: ${change.action} (${change.path}).`;
  }
}
