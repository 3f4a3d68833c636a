// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { CaptureReport } from "./CaptureReport";
import type { ClearReport } from "./ClearReport";
import type { ClearReq } from "./ClearReq";
import type { ConfigView } from "./ConfigView";
import type { Conversation } from "./Conversation";
import type { ConversationList } from "./ConversationList";
import type { ConversationReq } from "./ConversationReq";
import type { ConversationsReq } from "./ConversationsReq";
import type { Empty } from "./Empty";
import type { IndexReport } from "./IndexReport";
import type { MemorySetReq } from "./MemorySetReq";
import type { MemoryState } from "./MemoryState";
import type { Preferences } from "./Preferences";
import type { SearchReq } from "./SearchReq";
import type { SearchRes } from "./SearchRes";
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
  /** Search everything remembered by its words (BM25), one hit per record with its passage. */
  search: { req: SearchReq; res: SearchRes };
  /** Read every agent's session stores now (one capture pass). */
  capture_run: { req: Empty; res: CaptureReport };
  /** Captured conversations, newest first, by framework and project. */
  conversations: { req: ConversationsReq; res: ConversationList };
  /** One conversation whole: every request with its replies and tool steps. */
  conversation: { req: ConversationReq; res: Conversation };
  /** Rebuild the search indexes from the logs alone (no model call). */
  index_rebuild: { req: Empty; res: IndexReport };
};

/** The method names, in the order the service declares them. */
export const METHOD_NAMES = ["status", "memory_set", "clear", "preferences_get", "preferences_set", "config_show", "search", "capture_run", "conversations", "conversation", "index_rebuild"] as const;
