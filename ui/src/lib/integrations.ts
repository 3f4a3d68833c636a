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
  if (view.installed) return view.current && hooksUpToDate(view) ? "installed" : "stale";
  return view.detected ? "available" : "missing";
}

/** Whether the framework's hooks are all there and current (or it takes none). */
function hooksUpToDate(view: IntegrationView): boolean {
  return view.hooks === undefined || view.hooks === null || view.hooks === "installed";
}

const HOOK_LABELS: Record<string, string> = {
  installed: "installed",
  outdated: "out of date",
  partial: "partly installed",
  not_installed: "not installed",
};

/** One line about the framework's hooks (the turn note), or null when it takes none. */
export function hooksLine(view: IntegrationView): string | null {
  if (view.hooks === undefined || view.hooks === null) return null;
  return `Hooks (the turn note): ${HOOK_LABELS[view.hooks] ?? view.hooks}`;
}

/** What a change did to the hooks, or null when the framework takes none. */
export function hooksChangeLine(change: IntegrationChange): string | null {
  if (change.hooks === undefined || change.hooks === null || !change.hooks_path) return null;
  const where = change.hooks_path;
  switch (change.hooks) {
    case "installed":
      return `Hooks installed in ${where}.`;
    case "updated":
      return `Hooks updated in ${where}.`;
    case "already_installed":
      return `Hooks already in ${where}.`;
    case "removed":
      return `Hooks removed from ${where}.`;
    default:
      return `No hooks in ${where}.`;
  }
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
      return view.current
        ? `Registered, but Cairn's hooks are missing or out of date. Install again to add them.`
        : `Registered, but it points at another Cairn program (moved or reinstalled). Install again to update it.`;
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
