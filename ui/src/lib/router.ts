/** Hash routes of the app shell, in sidebar order. */
export const ROUTES = ["search", "conversations", "notes", "profiles", "activity", "settings"] as const;

export type RouteName = (typeof ROUTES)[number];

export const DEFAULT_ROUTE: RouteName = "search";

export const ROUTE_TITLES: Record<RouteName, string> = {
  search: "Search",
  conversations: "Conversations",
  notes: "Notes",
  profiles: "Profiles",
  activity: "Activity",
  settings: "Settings",
};

export function isRouteName(value: string): value is RouteName {
  return (ROUTES as readonly string[]).includes(value);
}

/**
 * Maps a location hash to a route. `#/settings`, `#settings`, `#/settings/`, `#/settings?x=1`
 * all map to "settings"; an empty hash maps to the default route; anything unknown is null.
 */
export function parseRoute(hash: string): RouteName | null {
  let raw = hash.startsWith("#") ? hash.slice(1) : hash;
  const cut = raw.search(/[?&]/);
  if (cut !== -1) raw = raw.slice(0, cut);
  const name = raw.replace(/^\/+/, "").replace(/\/+$/, "").toLowerCase();
  if (name === "") return DEFAULT_ROUTE;
  return isRouteName(name) ? name : null;
}

export function routeHref(name: RouteName): string {
  return `#/${name}`;
}
