/** Hash routes of the app shell, in sidebar order. */
export const ROUTES = ["search", "conversations", "notes", "profiles", "review", "activity", "settings"] as const;

/** Pages reached through links only (not in the sidebar): `item` is one memory item (`id`). */
export const PAGES = ["item"] as const;

export type SidebarRoute = (typeof ROUTES)[number];
export type RouteName = SidebarRoute | (typeof PAGES)[number];

export const DEFAULT_ROUTE: RouteName = "search";

export const ROUTE_TITLES: Record<RouteName, string> = {
  search: "Search",
  conversations: "Conversations",
  notes: "Notes",
  profiles: "Profiles",
  review: "Review",
  item: "Memory item",
  activity: "Activity",
  settings: "Settings",
};

/**
 * Parameters carried after the route, e.g. `#/conversations?framework=codex&session=…`:
 * - search: `q`, `framework`, `project`, `since`, `until` (the search shown);
 * - conversations: `framework`, `session`, `turn` (the conversation open, and its turn);
 * - notes: `id` (a note id, `n_…`, to open — as Search links its note hits);
 * - review: `category` (`contradiction`, `duplicate`, `stale` or `junk`: the entries shown);
 * - item: `id` (an item id, `i_…`).
 */
export type RouteParams = Record<string, string>;

/** A parsed location hash: the route and its parameters. */
export type RouteLocation = { name: RouteName; params: RouteParams };

export function isRouteName(value: string): value is RouteName {
  return (ROUTES as readonly string[]).includes(value) || (PAGES as readonly string[]).includes(value);
}

/** Splits a hash into its path part and its query part (after the first `?` or `&`). */
function splitHash(hash: string): { path: string; query: string } {
  const raw = hash.startsWith("#") ? hash.slice(1) : hash;
  const cut = raw.search(/[?&]/);
  return cut === -1 ? { path: raw, query: "" } : { path: raw.slice(0, cut), query: raw.slice(cut + 1) };
}

/**
 * Maps a location hash to a route. `#/settings`, `#settings`, `#/settings/`, `#/settings?x=1`
 * all map to "settings"; an empty hash maps to the default route; anything unknown is null.
 */
export function parseRoute(hash: string): RouteName | null {
  const name = splitHash(hash).path.replace(/^\/+/, "").replace(/\/+$/, "").toLowerCase();
  if (name === "") return DEFAULT_ROUTE;
  return isRouteName(name) ? name : null;
}

/**
 * Maps a location hash to a route and its parameters; null for an unknown route. Parameters
 * that cannot be decoded are dropped, empty values are dropped, and the first of repeated
 * names wins, so a hand-edited address never throws.
 */
export function parseLocation(hash: string): RouteLocation | null {
  const name = parseRoute(hash);
  if (name === null) return null;
  const found = new Map<string, string>();
  for (const part of splitHash(hash).query.split(/[&?]/)) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const key = safeDecode(eq === -1 ? part : part.slice(0, eq));
    const value = safeDecode(eq === -1 ? "" : part.slice(eq + 1));
    if (key === null || value === null || key === "" || value === "") continue;
    if (!found.has(key)) found.set(key, value);
  }
  // fromEntries defines own properties, so even `__proto__` stays a plain parameter.
  return { name, params: Object.fromEntries(found) };
}

function safeDecode(s: string): string | null {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return null;
  }
}

/** `#/name`, or `#/name?k=v&…` with the non-empty parameters, in the order given. */
export function routeHref(name: RouteName, params: Partial<Record<string, string | null | undefined>> = {}): string {
  const query = Object.entries(params)
    .filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== "")
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
  return query === "" ? `#/${name}` : `#/${name}?${query}`;
}
