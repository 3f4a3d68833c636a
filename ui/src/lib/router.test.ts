import { describe, expect, it } from "vitest";
import { DEFAULT_ROUTE, parseRoute, ROUTES, routeHref } from "./router";

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
  it("lists the six views in sidebar order", () => {
    expect([...ROUTES]).toEqual(["search", "conversations", "notes", "profiles", "activity", "settings"]);
    expect(routeHref("activity")).toBe("#/activity");
  });
});
