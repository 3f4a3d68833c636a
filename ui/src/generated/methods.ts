// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { AgentsFound } from "./AgentsFound";
import type { CaptureReport } from "./CaptureReport";
import type { ClearReport } from "./ClearReport";
import type { ClearReq } from "./ClearReq";
import type { ConfigView } from "./ConfigView";
import type { Conversation } from "./Conversation";
import type { ConversationList } from "./ConversationList";
import type { ConversationReq } from "./ConversationReq";
import type { ConversationsReq } from "./ConversationsReq";
import type { DistillRebuildReport } from "./DistillRebuildReport";
import type { DistillRebuildReq } from "./DistillRebuildReq";
import type { DistillReport } from "./DistillReport";
import type { DistillReq } from "./DistillReq";
import type { Empty } from "./Empty";
import type { ExploreReq } from "./ExploreReq";
import type { ExploreRes } from "./ExploreRes";
import type { ExportReport } from "./ExportReport";
import type { ExportReq } from "./ExportReq";
import type { HookTiming } from "./HookTiming";
import type { HookTimingReq } from "./HookTimingReq";
import type { ImportReport } from "./ImportReport";
import type { ImportReq } from "./ImportReq";
import type { IndexMigrateReport } from "./IndexMigrateReport";
import type { IndexMigrateReq } from "./IndexMigrateReq";
import type { IndexReport } from "./IndexReport";
import type { InjectionEntry } from "./InjectionEntry";
import type { InjectionList } from "./InjectionList";
import type { InjectionView } from "./InjectionView";
import type { InjectionsReq } from "./InjectionsReq";
import type { IntegrationChange } from "./IntegrationChange";
import type { IntegrationList } from "./IntegrationList";
import type { IntegrationSetReq } from "./IntegrationSetReq";
import type { ItemList } from "./ItemList";
import type { ItemsReq } from "./ItemsReq";
import type { LlmDownloadReq } from "./LlmDownloadReq";
import type { LlmDownloadRes } from "./LlmDownloadRes";
import type { LlmKeySetReq } from "./LlmKeySetReq";
import type { LlmKeyState } from "./LlmKeyState";
import type { LlmOffer } from "./LlmOffer";
import type { LlmSettingsReq } from "./LlmSettingsReq";
import type { LlmStatus } from "./LlmStatus";
import type { LlmStatusReq } from "./LlmStatusReq";
import type { LlmTestReq } from "./LlmTestReq";
import type { LlmTestRes } from "./LlmTestRes";
import type { MemoryPauseReq } from "./MemoryPauseReq";
import type { MemorySetReq } from "./MemorySetReq";
import type { MemoryState } from "./MemoryState";
import type { NoteCommandReq } from "./NoteCommandReq";
import type { NoteCommandRes } from "./NoteCommandRes";
import type { NoteDeleteReq } from "./NoteDeleteReq";
import type { NoteDoc } from "./NoteDoc";
import type { NoteFeedbackReq } from "./NoteFeedbackReq";
import type { NoteList } from "./NoteList";
import type { NoteRef } from "./NoteRef";
import type { NoteRenameReq } from "./NoteRenameReq";
import type { NoteSaveReq } from "./NoteSaveReq";
import type { NoteSummary } from "./NoteSummary";
import type { NoteTitles } from "./NoteTitles";
import type { NoteVersion } from "./NoteVersion";
import type { NoteVersionDoc } from "./NoteVersionDoc";
import type { NoteVersionList } from "./NoteVersionList";
import type { NoteVersionReq } from "./NoteVersionReq";
import type { NotesListReq } from "./NotesListReq";
import type { NotesTitlesReq } from "./NotesTitlesReq";
import type { OpenReq } from "./OpenReq";
import type { OpenRes } from "./OpenRes";
import type { Preferences } from "./Preferences";
import type { ProfileList } from "./ProfileList";
import type { ProfilesReq } from "./ProfilesReq";
import type { RankerStatus } from "./RankerStatus";
import type { ReplayLatest } from "./ReplayLatest";
import type { ReplayReport } from "./ReplayReport";
import type { ReplayReq } from "./ReplayReq";
import type { ReviewActReq } from "./ReviewActReq";
import type { ReviewActionView } from "./ReviewActionView";
import type { ReviewInbox } from "./ReviewInbox";
import type { ReviewReq } from "./ReviewReq";
import type { ReviewUndoReq } from "./ReviewUndoReq";
import type { SearchReq } from "./SearchReq";
import type { SearchRes } from "./SearchRes";
import type { SkillsPreview } from "./SkillsPreview";
import type { SkillsReq } from "./SkillsReq";
import type { SleepReport } from "./SleepReport";
import type { SleepReq } from "./SleepReq";
import type { Status } from "./Status";
import type { TurnNote } from "./TurnNote";
import type { TurnNoteReq } from "./TurnNoteReq";
import type { WhyReq } from "./WhyReq";

/** Every API method with its request and response types. */
export type Methods = {
  /** The service's status: memory switch, counts, workers, warnings. */
  status: { req: Empty; res: Status };
  /** Whether memory is on (cheap: for hooks that must answer within milliseconds). */
  memory_get: { req: Empty; res: MemoryState };
  /** Switch memory on or off. Off stops capture and the search service. */
  memory_set: { req: MemorySetReq; res: MemoryState };
  /** Pause memory for a while (15m, 1h, tomorrow, until resumed): off until then, and what happens meanwhile is never captured. */
  memory_pause: { req: MemoryPauseReq; res: MemoryState };
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
  /** Copy the vector index to a remote Qdrant server or cluster from the store's vectors (no model call), check it, and name it in the config file: in use from the next start. */
  index_migrate: { req: IndexMigrateReq; res: IndexMigrateReport };
  /** One record or note whole, by its id. */
  open: { req: OpenReq; res: OpenRes };
  /** From an id or a concept to related records, notes and concepts, depth-limited. */
  explore: { req: ExploreReq; res: ExploreRes };
  /** Notes by scope and path. */
  notes_list: { req: NotesListReq; res: NoteList };
  /** One note whole. */
  note_get: { req: NoteRef; res: NoteDoc };
  /** Write a note whole; a stale expected sha256 is a conflict and writes nothing. */
  note_save: { req: NoteSaveReq; res: NoteDoc };
  /** Rename or move a note inside its scope. */
  note_rename: { req: NoteRenameReq; res: NoteSummary };
  /** Delete a note (its versions stay until redacted or cleared). */
  note_delete: { req: NoteDeleteReq; res: NoteVersion };
  /** A note's versions, newest first. */
  note_versions: { req: NoteRef; res: NoteVersionList };
  /** One version of a note. */
  note_version: { req: NoteVersionReq; res: NoteVersionDoc };
  /** Make an old version current again (kept as a new version). */
  note_restore: { req: NoteVersionReq; res: NoteDoc };
  /** Strip one version's content, keeping who and when. */
  note_redact: { req: NoteVersionReq; res: NoteVersion };
  /** One memory-tool command (view, create, str_replace, insert, delete, rename). */
  note_command: { req: NoteCommandReq; res: NoteCommandRes };
  /** Note titles for an agent's instructions, most relevant first, within 1,500 characters. */
  notes_titles: { req: NotesTitlesReq; res: NoteTitles };
  /** Where Cairn's MCP server is registered, per agent framework. */
  integrations_list: { req: Empty; res: IntegrationList };
  /** Register or unregister Cairn's MCP server with one framework (backs up the file). */
  integration_set: { req: IntegrationSetReq; res: IntegrationChange };
  /** How long agents' hooks wait for the turn note (hook.deadline_ms), its default and range. */
  hook_timing_get: { req: Empty; res: HookTiming };
  /** Set how long agents' hooks wait for the turn note: saved in the config file's [hook] table and in effect at the next hook. */
  hook_timing_set: { req: HookTimingReq; res: HookTiming };
  /** The model provider: which is set, today's calls and cost against the daily budget, the latest calls. */
  llm_status: { req: LlmStatusReq; res: LlmStatus };
  /** Send one tiny request to the model provider (the configured one, or the one named) and say what came back and how long it took. */
  llm_test: { req: LlmTestReq; res: LlmTestRes };
  /** Store an API key (anthropic, openai) in the OS keyring, or remove it. */
  llm_key_set: { req: LlmKeySetReq; res: LlmKeyState };
  /** Choose the model provider and the daily budget: saved in the config file's [llm] table and in effect at once. */
  llm_settings_set: { req: LlmSettingsReq; res: LlmStatus };
  /** The local model Cairn offers to download: name, licence, size, the memory it needs, its pace here once measured, and whether it is downloaded. */
  llm_offer: { req: Empty; res: LlmOffer };
  /** Download the offered local model (only this call does), checked against its pinned sha256, progress on the worker board; with use_it, make it the model provider. */
  llm_download: { req: LlmDownloadReq; res: LlmDownloadRes };
  /** Typed memory items, newest first: all, one project's, or those distilled from one conversation. */
  items_list: { req: ItemsReq; res: ItemList };
  /** Distil every settled conversation window now, within the day's model budget. */
  distill_now: { req: DistillReq; res: DistillReport };
  /** The nightly tidy-up now: relate neighbouring items, re-score, archive the old unused ones, rewrite changed profiles. */
  sleep_now: { req: SleepReq; res: SleepReport };
  /** Distil again over the log with the current provider and prompts; items found again keep their ids; the diff. */
  distill_rebuild: { req: DistillRebuildReq; res: DistillRebuildReport };
  /** Every subject's profile (each project, and the machine): a summary and a dated timeline, written by the nightly tidy-up. */
  profiles_list: { req: ProfilesReq; res: ProfileList };
  /** The note for an agent turn: at most three earlier things this turn needs, or nothing (logged, with why). */
  turn_note: { req: TurnNoteReq; res: TurnNote };
  /** The injection log: every turn note, newest first, its totals and the latest evaluation figures. */
  note_log: { req: InjectionsReq; res: InjectionList };
  /** Why a turn's note said what it said: each candidate's probability and the ranker's inputs. */
  note_why: { req: WhyReq; res: InjectionView };
  /** Mark an entry of a note not useful (or useful): a label for the next ranker training. */
  note_feedback: { req: NoteFeedbackReq; res: InjectionEntry };
  /** Replay the captured requests: each asked for its turn note as its hook would have asked then, labelled by what its answer reused of earlier sessions; the note's hit rate, precision and silence against plain search's top 3. Kept as the latest replay. */
  replay_run: { req: ReplayReq; res: ReplayReport };
  /** The latest replay's figures, if one has run. */
  replay_latest: { req: Empty; res: ReplayLatest };
  /** Which model the turn note's ranker uses (shipped or personal), its bar and figures, when it was trained, and for a personal model the shipped model's figures on the same turns. */
  ranker_status: { req: Empty; res: RankerStatus };
  /** Remove the personal ranker model and its figures so the turn note uses the shipped model again. */
  ranker_reset: { req: Empty; res: RankerStatus };
  /** Write everything remembered (or one project's, or since a date) to a folder: Markdown notes and items, JSONL records and item events, a manifest with a sha256 per file. */
  export_run: { req: ExportReq; res: ExportReport };
  /** The agent frameworks on this machine: session stores found, and the conversations captured from each with their dates. */
  agents_found: { req: Empty; res: AgentsFound };
  /** A project's procedures and pitfalls as the section Cairn would write into a framework's instruction file, and what the file holds now. */
  skills_preview: { req: SkillsReq; res: SkillsPreview };
  /** Write (or with remove, take out) Cairn's marked section of a framework's instruction file; everything else in the file is kept byte for byte. */
  skills_write: { req: SkillsReq; res: SkillsPreview };
  /** Read an export back: everything checked first (a malformed file refuses the whole import), ids kept, what is stored already skipped. */
  import_run: { req: ImportReq; res: ImportReport };
  /** The review inbox: likely duplicates, contradictions, stale items (citing files or symbols gone from the project's working tree) and junk, with the latest actions. */
  review_list: { req: ReviewReq; res: ReviewInbox };
  /** Act on an inbox entry: merge, supersede, archive or keep. Logged, and undoable with review_undo. */
  review_act: { req: ReviewActReq; res: ReviewActionView };
  /** Undo an inbox action: every item and note it changed goes back to its state before (refused when one changed since). */
  review_undo: { req: ReviewUndoReq; res: ReviewActionView };
};

/** The method names, in the order the service declares them. */
export const METHOD_NAMES = ["status", "memory_get", "memory_set", "memory_pause", "clear", "preferences_get", "preferences_set", "config_show", "search", "capture_run", "conversations", "conversation", "index_rebuild", "index_migrate", "open", "explore", "notes_list", "note_get", "note_save", "note_rename", "note_delete", "note_versions", "note_version", "note_restore", "note_redact", "note_command", "notes_titles", "integrations_list", "integration_set", "hook_timing_get", "hook_timing_set", "llm_status", "llm_test", "llm_key_set", "llm_settings_set", "llm_offer", "llm_download", "items_list", "distill_now", "sleep_now", "distill_rebuild", "profiles_list", "turn_note", "note_log", "note_why", "note_feedback", "replay_run", "replay_latest", "ranker_status", "ranker_reset", "export_run", "agents_found", "skills_preview", "skills_write", "import_run", "review_list", "review_act", "review_undo"] as const;
