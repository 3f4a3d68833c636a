/** Pure helpers for memory items: where they lead, how their kinds, dates and reports read. */
import type { DistillRebuildReport, ItemView, SleepReport } from "../generated";
import { shortProject } from "./conversations";
import { formatUsd } from "./providers";
import { routeHref } from "./router";

/** The kinds of memory item, in the order the distiller's prompt gives them. */
export const ITEM_KINDS = ["fact", "decision", "procedure", "pitfall", "architecture", "preference", "observation", "episode"] as const;

const KIND_LABELS: Record<string, string> = {
  fact: "Fact",
  decision: "Decision",
  procedure: "Procedure",
  pitfall: "Pitfall",
  architecture: "Architecture",
  preference: "Preference",
  observation: "Observation",
  episode: "Episode",
};

/** "Decision" for `decision`; an unknown kind is shown as it came, capitalised. */
export function kindLabel(kind: string | null | undefined): string {
  if (!kind) return "Item";
  return KIND_LABELS[kind] ?? kind.charAt(0).toUpperCase() + kind.slice(1);
}

/** An item id (`i_…`). */
export function isItemId(id: string | null | undefined): boolean {
  return typeof id === "string" && /^i_[A-Za-z0-9_-]+$/.test(id);
}

/** The item page. */
export function itemHref(id: string): string {
  return routeHref("item", { id });
}

/** A conversation turn's place in Conversations. */
export function turnHref(framework: string, session: string, turn?: string): string {
  return routeHref("conversations", { framework, session, turn });
}

/** How sure the item is, in words. */
export function certaintyLabel(c: string): string {
  switch (c) {
    case "stated":
      return "Stated";
    case "inferred":
      return "Inferred";
    case "contested":
      return "Contested";
    case "ambiguous":
      return "Ambiguous";
    default:
      return c || "—";
  }
}

/** The item's dates that are known, in display order: happened, said, ended. */
export function itemDates(i: Pick<ItemView, "happened_at" | "said_at" | "ended_at">): { label: string; at: string }[] {
  const out: { label: string; at: string }[] = [];
  if (i.happened_at) out.push({ label: "Happened", at: i.happened_at });
  if (i.said_at) out.push({ label: "Said", at: i.said_at });
  if (i.ended_at) out.push({ label: "Ended", at: i.ended_at });
  return out;
}

/** One event of an item's history, in words: "Created", "Superseded", … */
export function eventLabel(kind: string): string {
  return kind ? kind.charAt(0).toUpperCase() + kind.slice(1) : "Event";
}

/** A relation seen from `self`: which way it points, in words, and the other item. */
export function relationFrom(
  self: string,
  r: { from: string; to: string; kind: string },
): { other: string; label: string } {
  const outgoing = r.from === self;
  const other = outgoing ? r.to : r.from;
  switch (r.kind) {
    case "supersedes":
      return { other, label: outgoing ? "Replaces" : "Replaced by" };
    case "contradicts":
      return { other, label: "Contradicts" };
    case "related":
      return { other, label: "Related to" };
    default:
      return { other, label: r.kind };
  }
}

/** A state label for an item that is no longer active; null when it is. */
export function itemState(i: Pick<ItemView, "superseded_by" | "archived">): string | null {
  if (i.superseded_by) return "Superseded";
  if (i.archived) return "Archived";
  return null;
}

/** `YYYY-MM-DD` or empty; anything else is not a date the rebuild accepts. */
export function validSince(s: string): string | null {
  const t = s.trim();
  if (t === "") return null;
  return /^\d{4}-\d{2}-\d{2}$/.test(t) ? t : null;
}

/** A rebuild's diff in one line. */
export function describeRebuild(r: DistillRebuildReport): string {
  const calls = `${r.run.calls} model ${r.run.calls === 1 ? "call" : "calls"}`;
  const base =
    `${r.added.length} added, ${r.changed.length} changed, ${r.dropped.length} dropped, ${r.unchanged} unchanged; ` +
    `${calls}, ${formatUsd(r.run.cost_usd)}.`;
  return r.run.stopped ? `${base} Stopped: ${r.run.stopped}.` : base;
}

/** A tidy-up's report in one line. */
export function describeSleep(r: SleepReport): string {
  const parts = [
    `${r.active} active ${r.active === 1 ? "item" : "items"}`,
    `${r.related} related`,
    `${r.rescored} re-scored`,
    `${r.archived.length} archived`,
    `${r.profiles.length} ${r.profiles.length === 1 ? "profile" : "profiles"} rewritten`,
  ];
  let s = `Tidied up: ${parts.join(", ")}`;
  if (r.profiles_left > 0) s += ` (${r.profiles_left} left for next time)`;
  s += `; ${r.calls} model ${r.calls === 1 ? "call" : "calls"}, ${formatUsd(r.cost_usd)}.`;
  if (r.stopped) s += ` Stopped: ${r.stopped}.`;
  if (r.ranker) s += ` Turn note: ${r.ranker}.`;
  return s;
}

/** A profile's subject for display: the machine, or the project's short name. */
export function profileTitle(p: { kind: string; subject: string }): string {
  if (p.kind === "machine") return "This machine";
  return shortProject(p.subject) || p.subject;
}
