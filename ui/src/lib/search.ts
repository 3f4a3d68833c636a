/** Pure helpers for the Search view: which kinds to ask for, and where a hit leads. */
import type { SearchHit } from "../generated";
import { routeHref } from "./router";

/**
 * The kinds a search asks for: everything (records and notes) unless an agent is chosen —
 * notes belong to no agent, so a framework filter means conversation records only.
 */
export function searchKinds(framework: string | null | undefined): string[] | null {
  return framework ? ["record"] : null;
}

/** A hit on one of the user's notes (rather than a conversation turn). */
export function isNoteHit(hit: Pick<SearchHit, "source">): boolean {
  return hit.source === "note";
}

/** A hit on a memory item distilled from conversations. */
export function isItemHit(hit: Pick<SearchHit, "source">): boolean {
  return hit.source === "item";
}

/**
 * A note hit opens the note in Notes, an item hit the item's page; any other hit opens its
 * conversation at the turn.
 */
export function hitHref(hit: Pick<SearchHit, "id" | "source" | "framework" | "session_id">): string {
  if (isNoteHit(hit)) return routeHref("notes", { id: hit.id });
  if (isItemHit(hit)) return routeHref("item", { id: hit.id });
  return routeHref("conversations", { framework: hit.framework, session: hit.session_id, turn: hit.id });
}
