/**
 * The platform boundary: the only place in the UI that may import `@tauri-apps/*`
 * (enforced by `src/platform-boundary.test.ts`). Everything else talks to a `Backend`.
 */
import { takeToken } from "../lib/token";
import type { Backend } from "./backend";
import { createTauriBackend, tauriGetAutostart, tauriOnClearRequested, tauriSetAutostart } from "./tauri";
import { createWebBackend } from "./web";

export type { Backend } from "./backend";
export { createWebBackend } from "./web";
export type { WebBackendOptions } from "./web";

declare global {
  interface Window {
    __TAURI_INTERNALS__?: unknown;
  }
}

/** True inside the Tauri desktop app, false in a browser. */
export function isDesktop(): boolean {
  return typeof window !== "undefined" && window.__TAURI_INTERNALS__ !== undefined;
}

export type BackendInfo = {
  backend: Backend;
  /** Web only: whether an access token was found (in the address or this tab's storage). */
  hasToken: boolean;
};

/** The Tauri backend inside the desktop app, else the HTTP backend for the same origin. */
export function createBackend(): Backend {
  return connect().backend;
}

/** Like createBackend, and also says whether the web backend found a token. */
export function connect(): BackendInfo {
  if (isDesktop()) return { backend: createTauriBackend(), hasToken: true };
  const token = takeToken({ location: window.location, history: window.history, storage: sessionStorageOrMemory() });
  return { backend: createWebBackend({ token }), hasToken: token !== null };
}

const DESKTOP_ONLY = "Launch at login is only available in the Cairn desktop app.";

/** Whether the OS launches Cairn at login. Desktop only; throws in the browser. */
export async function getAutostart(): Promise<boolean> {
  if (!isDesktop()) throw new Error(DESKTOP_ONLY);
  return tauriGetAutostart();
}

/** Registers or unregisters Cairn to launch at login. Desktop only; throws in the browser. */
export async function setAutostart(on: boolean): Promise<void> {
  if (!isDesktop()) throw new Error(DESKTOP_ONLY);
  await tauriSetAutostart(on);
}

/**
 * Calls `handler` when the desktop tray asks to clear memory (the page then asks the user
 * to confirm). In the browser there is no tray, and this does nothing.
 */
export function onClearRequested(handler: () => void): () => void {
  if (!isDesktop()) return () => {};
  return tauriOnClearRequested(handler);
}

/** sessionStorage, or an in-memory stand-in where the browser refuses access to it. */
function sessionStorageOrMemory(): Pick<Storage, "getItem" | "setItem"> {
  try {
    return window.sessionStorage;
  } catch {
    const items = new Map<string, string>();
    return {
      getItem: (key) => items.get(key) ?? null,
      setItem: (key, value) => void items.set(key, value),
    };
  }
}
