import { afterEach, describe, expect, it, vi } from "vitest";
import { getAutostart, isDesktop, setAutostart } from "./index";

describe("platform detection", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("is not desktop without window.__TAURI_INTERNALS__", () => {
    vi.stubGlobal("window", {});
    expect(isDesktop()).toBe(false);
  });

  it("is desktop when window.__TAURI_INTERNALS__ exists", () => {
    vi.stubGlobal("window", { __TAURI_INTERNALS__: {} });
    expect(isDesktop()).toBe(true);
  });

  it("autostart throws a clear error in the browser", async () => {
    vi.stubGlobal("window", {});
    await expect(getAutostart()).rejects.toThrow(/desktop app/);
    await expect(setAutostart(true)).rejects.toThrow(/desktop app/);
  });
});
