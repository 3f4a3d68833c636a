/**
 * The service hands the browser its access token in the URL fragment:
 * `http://127.0.0.1:PORT/#token=TOKEN`. The fragment never reaches the server and is not
 * sent as a Referer. On load we move the token into sessionStorage and rewrite the
 * fragment to a route, so the token does not linger in the address bar or history.
 */

export const TOKEN_STORAGE_KEY = "cairn.token";

export type HashToken = {
  /** The token found in the fragment, if any. */
  token: string | null;
  /** The fragment to show instead (always a route such as `#/settings`), or null to keep it. */
  cleanHash: string | null;
};

/**
 * Reads `token` out of a location hash. Accepted shapes:
 * `#token=T`, `#token=T&route=/settings`, `#/settings?token=T`, `#/settings&token=T`.
 */
export function parseHashToken(hash: string, defaultRoute = "/search"): HashToken {
  const raw = hash.startsWith("#") ? hash.slice(1) : hash;
  let path = "";
  let query = raw;
  if (raw.startsWith("/")) {
    const cut = raw.search(/[?&]/);
    if (cut === -1) return { token: null, cleanHash: null };
    path = raw.slice(0, cut);
    query = raw.slice(cut + 1);
  }
  const params = new URLSearchParams(query);
  const token = params.get("token");
  if (token === null || token.trim() === "") return { token: null, cleanHash: null };
  params.delete("token");
  const route = path || params.get("route") || defaultRoute;
  params.delete("route");
  const rest = params.toString();
  const normalized = route.startsWith("/") ? route : `/${route}`;
  return { token: token.trim(), cleanHash: `#${normalized}${rest ? `?${rest}` : ""}` };
}

type Env = {
  location: Pick<Location, "hash" | "pathname" | "search">;
  history: Pick<History, "replaceState" | "state">;
  storage: Pick<Storage, "getItem" | "setItem">;
};

/**
 * Takes the token from the fragment (if present), stores it, cleans the address bar, and
 * returns the token to use: the fresh one, else the one stored earlier in this tab, else null.
 */
export function takeToken(env: Env): string | null {
  const { token, cleanHash } = parseHashToken(env.location.hash);
  if (token !== null) {
    try {
      env.storage.setItem(TOKEN_STORAGE_KEY, token);
    } catch {
      // Storage may be unavailable (private mode); the token still works for this page load.
    }
    if (cleanHash !== null) {
      env.history.replaceState(
        env.history.state,
        "",
        `${env.location.pathname}${env.location.search}${cleanHash}`,
      );
    }
    return token;
  }
  try {
    return env.storage.getItem(TOKEN_STORAGE_KEY);
  } catch {
    return null;
  }
}
