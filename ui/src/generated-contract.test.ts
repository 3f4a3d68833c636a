import { describe, expect, it } from "vitest";
import { METHOD_NAMES, type Methods } from "./generated";

// Compile-time: METHOD_NAMES and the Methods map name exactly the same methods.
type Listed = (typeof METHOD_NAMES)[number];
const everyMethodListed: [Exclude<keyof Methods, Listed>] extends [never] ? true : false = true;
const everyListedMethodTyped: [Exclude<Listed, keyof Methods>] extends [never] ? true : false = true;

describe("generated contract", () => {
  it("lists each RPC method once", () => {
    expect(everyMethodListed && everyListedMethodTyped).toBe(true);
    expect(new Set(METHOD_NAMES).size).toBe(METHOD_NAMES.length);
    for (const name of ["status", "memory_set", "clear", "preferences_get", "preferences_set", "config_show"]) {
      expect(METHOD_NAMES).toContain(name);
    }
  });
});
