// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ClearReport } from "./ClearReport";
import type { ClearReq } from "./ClearReq";
import type { ConfigView } from "./ConfigView";
import type { Empty } from "./Empty";
import type { MemorySetReq } from "./MemorySetReq";
import type { MemoryState } from "./MemoryState";
import type { Preferences } from "./Preferences";
import type { Status } from "./Status";

/** Every API method with its request and response types. */
export type Methods = {
  /** The service's status: memory switch, counts, workers, warnings. */
  status: { req: Empty; res: Status };
  /** Switch memory on or off. Off stops capture and the search service. */
  memory_set: { req: MemorySetReq; res: MemoryState };
  /** Wipe everything remembered (logs, index, cursors; notes only when asked). */
  clear: { req: ClearReq; res: ClearReport };
  /** The desktop preferences (launch at login). */
  preferences_get: { req: Empty; res: Preferences };
  /** Change the desktop preferences. */
  preferences_set: { req: Preferences; res: Preferences };
  /** The config file's path and the effective settings. */
  config_show: { req: Empty; res: ConfigView };
};

/** The method names, in the order the service declares them. */
export const METHOD_NAMES = ["status", "memory_set", "clear", "preferences_get", "preferences_set", "config_show"] as const;
