import { describe, expect, it } from "vitest";
import { applyTheme, loadTheme, saveTheme, THEME_KEY, ThemeStore, type ThemeStorage } from "./theme.svelte";

function memoryStorage(initial: Record<string, string> = {}): ThemeStorage & { data: Map<string, string> } {
  const data = new Map(Object.entries(initial));
  return {
    data,
    getItem: (k) => data.get(k) ?? null,
    setItem: (k, v) => void data.set(k, v),
    removeItem: (k) => void data.delete(k),
  };
}

function fakeRoot() {
  const attrs = new Map<string, string>();
  return {
    attrs,
    root: {
      setAttribute: (k: string, v: string) => void attrs.set(k, v),
      removeAttribute: (k: string) => void attrs.delete(k),
    } as unknown as HTMLElement,
  };
}

describe("theme", () => {
  it("defaults to the system, and ignores unknown stored values and broken storage", () => {
    expect(loadTheme(null)).toBe("system");
    expect(loadTheme(memoryStorage())).toBe("system");
    expect(loadTheme(memoryStorage({ [THEME_KEY]: "purple" }))).toBe("system");
    expect(loadTheme(memoryStorage({ [THEME_KEY]: "dark" }))).toBe("dark");
    const broken = { getItem: () => { throw new Error("denied"); }, setItem: () => { throw new Error("denied"); }, removeItem: () => {} };
    expect(loadTheme(broken)).toBe("system");
    expect(() => saveTheme(broken, "light")).not.toThrow();
  });

  it("stores light and dark, and removes the key for system", () => {
    const s = memoryStorage();
    saveTheme(s, "light");
    expect(s.data.get(THEME_KEY)).toBe("light");
    saveTheme(s, "system");
    expect(s.data.has(THEME_KEY)).toBe(false);
  });

  it("sets data-theme on the root only for a pinned theme", () => {
    const { root, attrs } = fakeRoot();
    applyTheme(root, "dark");
    expect(attrs.get("data-theme")).toBe("dark");
    applyTheme(root, "system");
    expect(attrs.has("data-theme")).toBe(false);
  });

  it("the store applies the stored choice at once and keeps a new one", () => {
    const s = memoryStorage({ [THEME_KEY]: "light" });
    const { root, attrs } = fakeRoot();
    const store = new ThemeStore(s, root);
    expect(store.choice).toBe("light");
    expect(attrs.get("data-theme")).toBe("light");
    store.set("dark");
    expect(store.choice).toBe("dark");
    expect(attrs.get("data-theme")).toBe("dark");
    expect(new ThemeStore(s, null).choice).toBe("dark");
  });
});
