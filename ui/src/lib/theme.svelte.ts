/**
 * Light and dark themes. By default the page follows the system (`prefers-color-scheme`);
 * the user may pin light or dark, kept in localStorage under `cairn.theme` and applied as
 * `data-theme` on the root element (app.css holds both palettes).
 */

/** The user's choice: follow the system, or always light or dark. */
export const THEME_CHOICES = [
  { value: "system", label: "System" },
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
] as const;

export type ThemeChoice = (typeof THEME_CHOICES)[number]["value"];

export const THEME_KEY = "cairn.theme";

/** What storage the theme needs (localStorage, or a stand-in in tests). */
export type ThemeStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

export function isThemeChoice(value: unknown): value is ThemeChoice {
  return value === "system" || value === "light" || value === "dark";
}

/** The stored choice; "system" when none is stored, it is unknown, or storage is unavailable. */
export function loadTheme(storage: ThemeStorage | null): ThemeChoice {
  try {
    const value = storage?.getItem(THEME_KEY) ?? null;
    return isThemeChoice(value) ? value : "system";
  } catch {
    return "system";
  }
}

/** Stores the choice ("system" removes the key). Storage failures are ignored: the choice still applies to this page. */
export function saveTheme(storage: ThemeStorage | null, choice: ThemeChoice): void {
  try {
    if (choice === "system") storage?.removeItem(THEME_KEY);
    else storage?.setItem(THEME_KEY, choice);
  } catch {
    // Private mode or storage disabled.
  }
}

/** Sets or removes `data-theme` on `root`. */
export function applyTheme(root: HTMLElement, choice: ThemeChoice): void {
  if (choice === "system") root.removeAttribute("data-theme");
  else root.setAttribute("data-theme", choice);
}

function browserStorage(): ThemeStorage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null;
  }
}

/** The theme choice of this page, shared by Settings and the command palette. */
export class ThemeStore {
  choice = $state<ThemeChoice>("system");
  #storage: ThemeStorage | null;
  #root: HTMLElement | null;

  constructor(storage: ThemeStorage | null = browserStorage(), root: HTMLElement | null = typeof document === "undefined" ? null : document.documentElement) {
    this.#storage = storage;
    this.#root = root;
    this.choice = loadTheme(storage);
    if (root !== null) applyTheme(root, this.choice);
  }

  /** Applies and stores a choice. */
  set(choice: ThemeChoice): void {
    this.choice = choice;
    saveTheme(this.#storage, choice);
    if (this.#root !== null) applyTheme(this.#root, choice);
  }
}

export const theme = new ThemeStore();
