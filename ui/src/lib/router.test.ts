import { describe, expect, it } from "vitest";
import { DEFAULT_ROUTE, parseLocation, parseRoute, ROUTES, routeHref } from "./router";

describe("parseRoute", () => {
  it("maps every route's href back to the route", () => {
    for (const name of ROUTES) expect(parseRoute(routeHref(name))).toBe(name);
  });

  it("accepts loose spellings of a route", () => {
    expect(parseRoute("#settings")).toBe("settings");
    expect(parseRoute("#/settings/")).toBe("settings");
    expect(parseRoute("#/Settings")).toBe("settings");
    expect(parseRoute("#/search?q=x")).toBe("search");
  });

  it("uses the default route for an empty hash", () => {
    expect(DEFAULT_ROUTE).toBe("search");
    expect(parseRoute("")).toBe("search");
    expect(parseRoute("#")).toBe("search");
    expect(parseRoute("#/")).toBe("search");
  });

  it("returns null for unknown routes", () => {
    expect(parseRoute("#/nope")).toBeNull();
    expect(parseRoute("#/settings/privacy")).toBeNull();
  });
});

describe("routes", () => {
  it("knows the item page, which is not in the sidebar", () => {
    expect(parseLocation("#/item?id=i_1")).toEqual({ name: "item", params: { id: "i_1" } });
    expect([...ROUTES]).not.toContain("item");
  });

  it("lists the seven views in sidebar order", () => {
    expect([...ROUTES]).toEqual(["search", "conversations", "notes", "profiles", "review", "activity", "settings"]);
    expect(routeHref("activity")).toBe("#/activity");
  });
});

describe("parseLocation and routeHref with parameters", () => {
  it("round-trips parameters, including ones that need escaping", () => {
    const href = routeHref("conversations", {
      framework: "claude-code",
      session: "5b0c/7e0e?&=#",
      turn: "r_1 2",
    });
    expect(href).toBe("#/conversations?framework=claude-code&session=5b0c%2F7e0e%3F%26%3D%23&turn=r_1%202");
    expect(parseLocation(href)).toEqual({
      name: "conversations",
      params: { framework: "claude-code", session: "5b0c/7e0e?&=#", turn: "r_1 2" },
    });
  });

  it("carries the id of the note to open in Notes", () => {
    expect(routeHref("notes", { id: "n_cecab0ffdd75" })).toBe("#/notes?id=n_cecab0ffdd75");
    expect(parseLocation("#/notes?id=n_cecab0ffdd75")).toEqual({ name: "notes", params: { id: "n_cecab0ffdd75" } });
    expect(parseLocation("#/notes?id=")).toEqual({ name: "notes", params: {} });
    expect(routeHref("notes", { id: null })).toBe("#/notes");
  });

  it("leaves out empty and missing parameters", () => {
    expect(routeHref("search", { q: "", framework: null, project: undefined })).toBe("#/search");
    expect(routeHref("search", { q: "cargo test", since: null })).toBe("#/search?q=cargo%20test");
  });

  it("is tolerant of odd addresses", () => {
    expect(parseLocation("#/conversations")).toEqual({ name: "conversations", params: {} });
    expect(parseLocation("")).toEqual({ name: "search", params: {} });
    expect(parseLocation("#/search?q=a+b&&q=second&bad=%E0%A4%A&flag&=x")).toEqual({
      name: "search",
      params: { q: "a b" },
    });
    expect(parseLocation("#/conversations&session=s1?turn=t1")).toEqual({
      name: "conversations",
      params: { session: "s1", turn: "t1" },
    });
    expect(parseLocation("#/nope?x=1")).toBeNull();
  });

  it("does not let a parameter named like an Object property misbehave", () => {
    const loc = parseLocation("#/search?constructor=x&__proto__=y&toString=z");
    expect(loc?.params.constructor).toBe("x");
    expect(loc?.params.toString).toBe("z");
    expect(Object.getOwnPropertyNames(loc?.params)).toEqual(["constructor", "__proto__", "toString"]);
    expect(Object.getPrototypeOf(loc?.params)).toBe(Object.prototype);
  });
});
