/**
 * Pure helpers for Activity → Notes: the turn notes agents' hooks asked for, how their figures
 * read, where an entry leads, and the "not useful" labels that train the next ranker.
 */
import type { InjectionEntry, InjectionList, InjectionView } from "../generated";
import { formatDuration } from "./format";
import { itemHref } from "./items";
import { routeHref } from "./router";

/** The label a person puts on an entry that did not help (stored for `cairn ranker train`). */
export const NOT_USEFUL = "not_useful";

/** How many turns the log shows at once (newest first). */
export const LOG_LIMIT = 50;

/** The command that produces the evaluation figures. */
export const EVAL_COMMAND = "cairn eval note FILE";

/** "37%" for 0.37, "37.5%" with one digit; "—" when there is no figure. */
export function formatShare(share: number | null | undefined, digits = 0): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return "—";
  return `${(share * 100).toFixed(digits)}%`;
}

/** The share of logged turns that showed a note; null before any turn is logged. */
export function noteRate(list: Pick<InjectionList, "turns" | "shown">): number | null {
  return list.turns > 0 ? list.shown / list.turns : null;
}

/** Milliseconds as "42 ms" / "1.2 s"; "—" when there is no figure. */
export function formatMs(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? "—" : formatDuration(ms);
}

/** A probability or bar with two decimals: "0.62". */
export function formatProbability(p: number): string {
  return Number.isFinite(p) ? p.toFixed(2) : "—";
}

/** A probability as a 0–100 width for its gauge. */
export function probabilityPercent(p: number): number {
  if (!Number.isFinite(p)) return 0;
  return Math.max(0, Math.min(100, p * 100));
}

/** One ranker input for display: "—" when the signal was missing, whole numbers as they are, others to 3 decimals. */
export function formatFeature(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return "—";
  if (Number.isInteger(value)) return String(value);
  return Number(value.toFixed(3)).toString();
}

/**
 * Where an entry's id leads: an item opens its page, a note opens in Notes, a record opens its
 * conversation (which needs the record's session first, so it has no address of its own here).
 */
export function entryTarget(id: string): { kind: "item" | "note" | "record" | "none"; href: string | null } {
  if (/^i_[A-Za-z0-9_-]+$/.test(id)) return { kind: "item", href: itemHref(id) };
  if (/^n_[A-Za-z0-9_-]+$/.test(id)) return { kind: "note", href: routeHref("notes", { id }) };
  if (/^r_[A-Za-z0-9_-]+$/.test(id)) return { kind: "record", href: null };
  return { kind: "none", href: null };
}

/** The kind of an entry in words: an item's kind, "Request" for a record, "Note" for a note. */
export function entryKindLabel(e: Pick<InjectionEntry, "kind" | "item_kind">): string {
  if (e.kind === "item") {
    const k = e.item_kind ?? "";
    return k ? k.charAt(0).toUpperCase() + k.slice(1) : "Item";
  }
  if (e.kind === "record") return "Request";
  if (e.kind === "note") return "Note";
  return e.kind ? e.kind.charAt(0).toUpperCase() + e.kind.slice(1) : "Entry";
}

const JUDGE_NAMES: Record<string, string> = {
  "cross-encoder": "the cross-encoder",
  llm: "the LLM judge",
};

/** Which judges answered, in words; without one, the local ranker decided alone. */
export function judgesLabel(judged: string[]): string {
  if (judged.length === 0) return "No judge answered: the local ranker decided alone, with the stricter bar.";
  const names = judged.map((j) => JUDGE_NAMES[j] ?? j);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
  return `Judged by ${list}.`;
}

/** Why a turn was silent, or a count of what it showed. */
export function outcomeLabel(v: Pick<InjectionView, "shown" | "silent_because" | "entries">): string {
  if (v.shown) {
    const n = v.entries.filter((e) => e.shown).length;
    return n === 0 ? "Note shown" : `Note: ${n} ${n === 1 ? "entry" : "entries"}`;
  }
  return v.silent_because ? `Silent: ${v.silent_because}` : "Silent";
}

/**
 * What became of a shown entry once the agent's answer was captured: "Used" (the answer reused a
 * rare name from it, or the agent opened it), "Ignored", or "Not yet known" while the answer is not
 * in; null for an entry the note did not show.
 */
export function useLabel(e: Pick<InjectionEntry, "shown" | "outcome">): string | null {
  if (!e.shown) return null;
  if (e.outcome === "used") return "Used";
  if (e.outcome === "ignored") return "Ignored";
  return "Not yet known";
}

/** How many of a turn's entries a person marked not useful. */
export function notUsefulCount(v: Pick<InjectionView, "entries">): number {
  return v.entries.filter((e) => e.label === NOT_USEFUL).length;
}

/** The view with one entry's label set (or removed with null); the same view when the id is not there. */
export function withLabel(view: InjectionView, id: string, label: string | null): InjectionView {
  if (!view.entries.some((e) => e.id === id)) return view;
  return { ...view, entries: view.entries.map((e) => (e.id === id ? { ...e, label } : e)) };
}

/** The view with one entry replaced by the service's answer (matched by id). */
export function withEntry(view: InjectionView, entry: InjectionEntry): InjectionView {
  if (!view.entries.some((e) => e.id === entry.id)) return view;
  return { ...view, entries: view.entries.map((e) => (e.id === entry.id ? entry : e)) };
}
