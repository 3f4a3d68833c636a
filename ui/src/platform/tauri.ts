import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import { disable, enable, isEnabled } from "@tauri-apps/plugin-autostart";
import type { Methods } from "../generated";
import { toApiError } from "../lib/api-error";
import type { Backend } from "./backend";

/** Talks to the service in-process through the single Tauri command `rpc`. */
export function createTauriBackend(): Backend {
  return {
    async call<M extends keyof Methods>(method: M, req: Methods[M]["req"]): Promise<Methods[M]["res"]> {
      try {
        return await invoke<Methods[M]["res"]>("rpc", { method, params: req });
      } catch (err) {
        // Errors arrive as `{code, message}` objects.
        throw toApiError(err);
      }
    },
  };
}

export async function tauriGetAutostart(): Promise<boolean> {
  return isEnabled();
}

export async function tauriSetAutostart(on: boolean): Promise<void> {
  if (on) await enable();
  else await disable();
}

/** Calls `handler` when the tray menu's "Clear memory…" is chosen. Returns an unsubscribe. */
export function tauriOnClearRequested(handler: () => void): () => void {
  const unlisten = listen("cairn://clear-requested", () => handler());
  return () => void unlisten.then((stop) => stop());
}
