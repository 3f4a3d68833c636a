import { describe, expect, it, vi } from "vitest";
import { parseHashToken, takeToken, TOKEN_STORAGE_KEY } from "./token";

describe("parseHashToken", () => {
  it("reads a bare #token= fragment and defaults the route to search", () => {
    expect(parseHashToken("#token=abc123")).toEqual({ token: "abc123", cleanHash: "#/search" });
  });

  it("keeps a route given before the token", () => {
    expect(parseHashToken("#/settings?token=abc")).toEqual({ token: "abc", cleanHash: "#/settings" });
    expect(parseHashToken("#/activity&token=abc")).toEqual({ token: "abc", cleanHash: "#/activity" });
  });

  it("accepts a route parameter next to the token", () => {
    expect(parseHashToken("#token=abc&route=/notes")).toEqual({ token: "abc", cleanHash: "#/notes" });
    expect(parseHashToken("#token=abc&route=notes")).toEqual({ token: "abc", cleanHash: "#/notes" });
  });

  it("keeps other query parameters but drops the token", () => {
    expect(parseHashToken("#/search?q=rust&token=abc")).toEqual({ token: "abc", cleanHash: "#/search?q=rust" });
  });

  it("decodes URL-encoded tokens", () => {
    expect(parseHashToken("#token=a%2Bb%3D").token).toBe("a+b=");
  });

  it("returns no token for plain routes, empty or blank tokens", () => {
    expect(parseHashToken("")).toEqual({ token: null, cleanHash: null });
    expect(parseHashToken("#/settings")).toEqual({ token: null, cleanHash: null });
    expect(parseHashToken("#token=")).toEqual({ token: null, cleanHash: null });
    expect(parseHashToken("#/search?q=token")).toEqual({ token: null, cleanHash: null });
  });
});

function fakeEnv(hash: string, stored: string | null = null) {
  const items = new Map<string, string>();
  if (stored !== null) items.set(TOKEN_STORAGE_KEY, stored);
  const replaceState = vi.fn();
  return {
    items,
    replaceState,
    env: {
      location: { hash, pathname: "/", search: "" },
      history: { replaceState, state: { keep: 1 } },
      storage: {
        getItem: (k: string) => items.get(k) ?? null,
        setItem: (k: string, v: string) => void items.set(k, v),
      },
    },
  };
}

describe("takeToken", () => {
  it("stores the token from the fragment and removes it from the address", () => {
    const { env, items, replaceState } = fakeEnv("#token=secret-1");
    expect(takeToken(env)).toBe("secret-1");
    expect(items.get(TOKEN_STORAGE_KEY)).toBe("secret-1");
    expect(replaceState).toHaveBeenCalledTimes(1);
    expect(replaceState).toHaveBeenCalledWith({ keep: 1 }, "", "/#/search");
    expect(String(replaceState.mock.calls[0]?.[2])).not.toContain("secret-1");
  });

  it("keeps the route when cleaning the address", () => {
    const { env, replaceState } = fakeEnv("#/settings?token=s2");
    expect(takeToken(env)).toBe("s2");
    expect(replaceState).toHaveBeenCalledWith({ keep: 1 }, "", "/#/settings");
  });

  it("a new token in the fragment replaces the stored one", () => {
    const { env, items } = fakeEnv("#token=new", "old");
    expect(takeToken(env)).toBe("new");
    expect(items.get(TOKEN_STORAGE_KEY)).toBe("new");
  });

  it("falls back to the token stored earlier in this tab without touching the address", () => {
    const { env, replaceState } = fakeEnv("#/activity", "stored");
    expect(takeToken(env)).toBe("stored");
    expect(replaceState).not.toHaveBeenCalled();
  });

  it("returns null when there is no token anywhere", () => {
    const { env } = fakeEnv("");
    expect(takeToken(env)).toBeNull();
  });

  it("still returns the fragment token when storage throws", () => {
    const { env } = fakeEnv("#token=t");
    env.storage.setItem = () => {
      throw new Error("denied");
    };
    expect(takeToken(env)).toBe("t");
  });
});
