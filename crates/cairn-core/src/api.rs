//! The API contract: every request and response type that crosses a transport (Tauri, the
//! loopback HTTP API, the CLI, later MCP), and the one list of methods.
//!
//! The TypeScript for the UI is generated from these types into `ui/src/generated/` (see the
//! `bindings` test of this crate); never write a TypeScript type that mirrors one by hand.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::ErrorCode;

mod distill;
mod export;
mod firstrun;
mod items;
mod llm;
mod notes;
mod ranker;
mod recall;
mod replay;
mod review;
mod skills;
mod tools;
mod wire;

pub use distill::*;
pub use export::*;
pub use firstrun::*;
pub use items::*;
pub use llm::*;
pub use notes::*;
pub use ranker::*;
pub use recall::*;
pub use replay::*;
pub use review::*;
pub use skills::*;
pub use tools::*;
pub use wire::{name_of, parse_date, timestamp};

/// The one list of API methods: `name(Request) -> Response, "what it does"`.
///
/// Call it with the name of a macro that takes the list; that is how `cairn-api` builds its
/// dispatch table and how the TypeScript method map is generated, so a method added here
/// and not handled by the service does not compile.
#[macro_export]
macro_rules! for_each_method {
    ($m:ident) => {
        $m! {
            status($crate::api::Empty) -> $crate::api::Status,
                "The service's status: memory switch, counts, workers, warnings.";
            memory_get($crate::api::Empty) -> $crate::api::MemoryState,
                "Whether memory is on (cheap: for hooks that must answer within milliseconds).";
            memory_set($crate::api::MemorySetReq) -> $crate::api::MemoryState,
                "Switch memory on or off. Off stops capture and the search service.";
            memory_pause($crate::api::MemoryPauseReq) -> $crate::api::MemoryState,
                "Pause memory for a while (15m, 1h, tomorrow, until resumed): off until then, and what happens meanwhile is never captured.";
            clear($crate::api::ClearReq) -> $crate::api::ClearReport,
                "Wipe everything remembered (logs, index, cursors; notes only when asked).";
            preferences_get($crate::api::Empty) -> $crate::api::Preferences,
                "The desktop preferences (launch at login).";
            preferences_set($crate::api::Preferences) -> $crate::api::Preferences,
                "Change the desktop preferences.";
            config_show($crate::api::Empty) -> $crate::api::ConfigView,
                "The config file's path and the effective settings.";
            search($crate::api::SearchReq) -> $crate::api::SearchRes,
                "Search everything remembered by its words (BM25), one hit per record with its passage.";
            capture_run($crate::api::Empty) -> $crate::api::CaptureReport,
                "Read every agent's session stores now (one capture pass).";
            conversations($crate::api::ConversationsReq) -> $crate::api::ConversationList,
                "Captured conversations, newest first, by framework and project.";
            conversation($crate::api::ConversationReq) -> $crate::api::Conversation,
                "One conversation whole: every request with its replies and tool steps.";
            index_rebuild($crate::api::Empty) -> $crate::api::IndexReport,
                "Rebuild the search indexes from the logs alone (no model call).";
            index_migrate($crate::api::IndexMigrateReq) -> $crate::api::IndexMigrateReport,
                "Copy the vector index to a remote Qdrant server or cluster from the store's vectors (no model call), check it, and name it in the config file: in use from the next start.";
            open($crate::api::OpenReq) -> $crate::api::OpenRes,
                "One record or note whole, by its id.";
            explore($crate::api::ExploreReq) -> $crate::api::ExploreRes,
                "From an id or a concept to related records, notes and concepts, depth-limited.";
            notes_list($crate::api::NotesListReq) -> $crate::api::NoteList,
                "Notes by scope and path.";
            note_get($crate::api::NoteRef) -> $crate::api::NoteDoc,
                "One note whole.";
            note_save($crate::api::NoteSaveReq) -> $crate::api::NoteDoc,
                "Write a note whole; a stale expected sha256 is a conflict and writes nothing.";
            note_rename($crate::api::NoteRenameReq) -> $crate::api::NoteSummary,
                "Rename or move a note inside its scope.";
            note_delete($crate::api::NoteDeleteReq) -> $crate::api::NoteVersion,
                "Delete a note (its versions stay until redacted or cleared).";
            note_versions($crate::api::NoteRef) -> $crate::api::NoteVersionList,
                "A note's versions, newest first.";
            note_version($crate::api::NoteVersionReq) -> $crate::api::NoteVersionDoc,
                "One version of a note.";
            note_restore($crate::api::NoteVersionReq) -> $crate::api::NoteDoc,
                "Make an old version current again (kept as a new version).";
            note_redact($crate::api::NoteVersionReq) -> $crate::api::NoteVersion,
                "Strip one version's content, keeping who and when.";
            note_command($crate::api::NoteCommandReq) -> $crate::api::NoteCommandRes,
                "One memory-tool command (view, create, str_replace, insert, delete, rename).";
            notes_titles($crate::api::NotesTitlesReq) -> $crate::api::NoteTitles,
                "Note titles for an agent's instructions, most relevant first, within 1,500 characters.";
            integrations_list($crate::api::Empty) -> $crate::api::IntegrationList,
                "Where Cairn's MCP server is registered, per agent framework.";
            integration_set($crate::api::IntegrationSetReq) -> $crate::api::IntegrationChange,
                "Register or unregister Cairn's MCP server with one framework (backs up the file).";
            hook_timing_get($crate::api::Empty) -> $crate::api::HookTiming,
                "How long agents' hooks wait for the turn note (hook.deadline_ms), its default and range.";
            hook_timing_set($crate::api::HookTimingReq) -> $crate::api::HookTiming,
                "Set how long agents' hooks wait for the turn note: saved in the config file's [hook] table and in effect at the next hook.";
            llm_status($crate::api::LlmStatusReq) -> $crate::api::LlmStatus,
                "The model provider: which is set, today's calls and cost against the daily budget, the latest calls.";
            llm_test($crate::api::LlmTestReq) -> $crate::api::LlmTestRes,
                "Send one tiny request to the model provider (the configured one, or the one named) and say what came back and how long it took.";
            llm_key_set($crate::api::LlmKeySetReq) -> $crate::api::LlmKeyState,
                "Store an API key (anthropic, openai) in the OS keyring, or remove it.";
            llm_settings_set($crate::api::LlmSettingsReq) -> $crate::api::LlmStatus,
                "Choose the model provider and the daily budget: saved in the config file's [llm] table and in effect at once.";
            llm_offer($crate::api::Empty) -> $crate::api::LlmOffer,
                "The local model Cairn offers to download: name, licence, size, the memory it needs, its pace here once measured, and whether it is downloaded.";
            llm_download($crate::api::LlmDownloadReq) -> $crate::api::LlmDownloadRes,
                "Download the offered local model (only this call does), checked against its pinned sha256, progress on the worker board; with use_it, make it the model provider.";
            items_list($crate::api::ItemsReq) -> $crate::api::ItemList,
                "Typed memory items, newest first: all, one project's, or those distilled from one conversation.";
            distill_now($crate::api::DistillReq) -> $crate::api::DistillReport,
                "Distil every settled conversation window now, within the day's model budget.";
            sleep_now($crate::api::SleepReq) -> $crate::api::SleepReport,
                "The nightly tidy-up now: relate neighbouring items, re-score, archive the old unused ones, rewrite changed profiles.";
            distill_rebuild($crate::api::DistillRebuildReq) -> $crate::api::DistillRebuildReport,
                "Distil again over the log with the current provider and prompts; items found again keep their ids; the diff.";
            profiles_list($crate::api::ProfilesReq) -> $crate::api::ProfileList,
                "Every subject's profile (each project, and the machine): a summary and a dated timeline, written by the nightly tidy-up.";
            turn_note($crate::api::TurnNoteReq) -> $crate::api::TurnNote,
                "The note for an agent turn: at most three earlier things this turn needs, or nothing (logged, with why).";
            note_log($crate::api::InjectionsReq) -> $crate::api::InjectionList,
                "The injection log: every turn note, newest first, its totals and the latest evaluation figures.";
            note_why($crate::api::WhyReq) -> $crate::api::InjectionView,
                "Why a turn's note said what it said: each candidate's probability and the ranker's inputs.";
            note_feedback($crate::api::NoteFeedbackReq) -> $crate::api::InjectionEntry,
                "Mark an entry of a note not useful (or useful): a label for the next ranker training.";
            replay_run($crate::api::ReplayReq) -> $crate::api::ReplayReport,
                "Replay the captured requests: each asked for its turn note as its hook would have asked then, labelled by what its answer reused of earlier sessions; the note's hit rate, precision and silence against plain search's top 3. Kept as the latest replay.";
            replay_latest($crate::api::Empty) -> $crate::api::ReplayLatest,
                "The latest replay's figures, if one has run.";
            ranker_status($crate::api::Empty) -> $crate::api::RankerStatus,
                "Which model the turn note's ranker uses (shipped or personal), its bar and figures, when it was trained, and for a personal model the shipped model's figures on the same turns.";
            ranker_reset($crate::api::Empty) -> $crate::api::RankerStatus,
                "Remove the personal ranker model and its figures so the turn note uses the shipped model again.";
            export_run($crate::api::ExportReq) -> $crate::api::ExportReport,
                "Write everything remembered (or one project's, or since a date) to a folder: Markdown notes and items, JSONL records and item events, a manifest with a sha256 per file.";
            agents_found($crate::api::Empty) -> $crate::api::AgentsFound,
                "The agent frameworks on this machine: session stores found, and the conversations captured from each with their dates.";
            skills_preview($crate::api::SkillsReq) -> $crate::api::SkillsPreview,
                "A project's procedures and pitfalls as the section Cairn would write into a framework's instruction file, and what the file holds now.";
            skills_write($crate::api::SkillsReq) -> $crate::api::SkillsPreview,
                "Write (or with remove, take out) Cairn's marked section of a framework's instruction file; everything else in the file is kept byte for byte.";
            import_run($crate::api::ImportReq) -> $crate::api::ImportReport,
                "Read an export back: everything checked first (a malformed file refuses the whole import), ids kept, what is stored already skipped.";
            review_list($crate::api::ReviewReq) -> $crate::api::ReviewInbox,
                "The review inbox: likely duplicates, contradictions, stale items (citing files or symbols gone from the project's working tree) and junk, with the latest actions.";
            review_act($crate::api::ReviewActReq) -> $crate::api::ReviewActionView,
                "Act on an inbox entry: merge, supersede, archive or keep. Logged, and undoable with review_undo.";
            review_undo($crate::api::ReviewUndoReq) -> $crate::api::ReviewActionView,
                "Undo an inbox action: every item and note it changed goes back to its state before (refused when one changed since).";
        }
    };
}

/// The body of every failed call, on every transport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ApiErrorBody {
    /// The kind of failure, to branch on.
    pub code: ErrorCode,
    /// A sentence for people.
    pub message: String,
}

/// A request with no parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(type = "Record<string, never>")]
pub struct Empty {}

/// The memory switch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct MemoryState {
    /// On by default. Off stops capture and the search service.
    pub enabled: bool,
    /// When it was last switched (RFC 3339), if ever.
    pub changed_at: Option<String>,
    /// Memory is paused (`enabled` is false): it comes back on by itself at `paused_until`,
    /// or when resumed (`memory_set` on) when `paused_until` is null.
    #[serde(default)]
    pub paused: bool,
    /// When a pause ends by itself (RFC 3339, UTC); null when not paused or paused until
    /// resumed.
    #[serde(default)]
    pub paused_until: Option<String>,
}

/// How much is remembered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct Counts {
    /// Records in the short-term log.
    #[ts(type = "number")]
    pub records: u64,
    /// Search chunks of those records.
    #[ts(type = "number")]
    pub chunks: u64,
    /// Typed items (current state).
    #[ts(type = "number")]
    pub items: u64,
    /// Notes.
    #[ts(type = "number")]
    pub notes: u64,
}

/// Which process hosts the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ServiceHost {
    /// The headless `cairn daemon`.
    Daemon,
    /// The desktop app.
    Desktop,
    /// No service runs; the CLI opened the store itself.
    Direct,
}

/// The process that owns the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ServiceInfo {
    /// Its process id.
    pub pid: u32,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// The loopback address of its HTTP API, when it serves one.
    pub address: Option<String>,
    /// Which kind of process it is.
    pub host: ServiceHost,
}

/// What a background worker is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum WorkerState {
    /// Waiting for its next turn.
    Idle,
    /// Working now.
    Running,
    /// Stopped because memory is off.
    Paused,
    /// Its last run failed (see `detail`).
    Failed,
}

/// One background worker, for the Activity view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct WorkerStatus {
    /// Its name.
    pub name: String,
    /// What it is doing.
    pub state: WorkerState,
    /// A sentence about its last run or its failure.
    pub detail: Option<String>,
    /// Progress of the current run, 0 to 1, when it is known.
    pub progress: Option<f32>,
    /// When it last ran (RFC 3339).
    pub last_run: Option<String>,
}

/// The whole status, as `cairn status` and the UI show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Status {
    /// Cairn's version.
    pub version: String,
    /// The memory switch.
    pub memory: MemoryState,
    /// Where the data lives.
    pub data_dir: String,
    /// The config file in use.
    pub config_file: String,
    /// How much is remembered.
    pub counts: Counts,
    /// When memory was last cleared (RFC 3339), if ever.
    pub last_clear: Option<String>,
    /// The process that owns the store.
    pub service: ServiceInfo,
    /// Background workers.
    pub workers: Vec<WorkerStatus>,
    /// Problems the user should know about (each a sentence).
    pub warnings: Vec<String>,
    /// The last capture pass, if one ran since the service started.
    pub capture: Option<CaptureReport>,
}

/// Search everything remembered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct SearchReq {
    /// Words; quotes for phrases.
    pub query: String,
    /// Only this project.
    #[serde(default)]
    pub project: Option<String>,
    /// Only this framework.
    #[serde(default)]
    pub framework: Option<String>,
    /// Results from this date or time on come first (RFC 3339 or YYYY-MM-DD); the rest follow.
    #[serde(default)]
    pub since: Option<String>,
    /// Results up to this date or time come first; the rest follow.
    #[serde(default)]
    pub until: Option<String>,
    /// At most this many (20 by default, 200 at most).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Leave out this session (the conversation asking).
    #[serde(default)]
    pub exclude_session: Option<String>,
    /// `bm25`, `dense` or `hybrid` (the default).
    #[serde(default)]
    pub mode: Option<String>,
    /// Re-rank the top 30 with the cross-encoder (default: the `models.rerank` setting).
    #[serde(default)]
    pub rerank: Option<bool>,
    /// Only these kinds: `record`, `note` (items later). All when absent.
    #[serde(default)]
    pub kinds: Option<Vec<String>>,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SearchHit {
    /// The record's, item's or note's id.
    pub id: String,
    /// What it is: `record`, `item` or `note`.
    pub source: String,
    /// A note's or an item's title (absent for records).
    #[serde(default)]
    pub title: Option<String>,
    /// An item's kind (fact, decision, …); absent for records and notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub item_kind: Option<String>,
    /// Whose text states an item (`user`, `agent`, `outside`, `unchecked`, as
    /// [`ItemView::provenance`]); absent for records and notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub item_provenance: Option<String>,
    /// Framework.
    pub framework: String,
    /// Project identity.
    pub project: Option<String>,
    /// Session id.
    pub session_id: String,
    /// When (RFC 3339).
    pub timestamp: String,
    /// How the turn ended.
    pub outcome: String,
    /// The best matching passage.
    pub passage: String,
    /// Relevance.
    pub score: f32,
    /// Inside the requested date range (true when none was given).
    pub in_range: bool,
}

/// Search results, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SearchRes {
    /// The hits.
    pub hits: Vec<SearchHit>,
    /// The mode actually used (`hybrid` falls back to `bm25` without an embedding model).
    pub mode: String,
    /// Whether the cross-encoder re-ranked the top results.
    pub reranked: bool,
    /// Sentences about what was not available.
    pub notes: Vec<String>,
}

/// What one capture pass did for one framework.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct FrameworkCapture {
    /// The framework (`claude-code`, …).
    pub framework: String,
    /// Session files or stores read (changed since the last pass).
    #[ts(type = "number")]
    pub sessions: u64,
    /// Records added.
    #[ts(type = "number")]
    pub added: u64,
    /// Records stored again because the turn went on.
    #[ts(type = "number")]
    pub revised: u64,
    /// Files or stores skipped, lines or rows skipped: each with its reason.
    pub skipped: Vec<SkipCount>,
}

/// Things skipped for one reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SkipCount {
    /// The reason, as a short phrase.
    pub reason: String,
    /// How many.
    #[ts(type = "number")]
    pub count: u64,
}

/// What one capture pass did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct CaptureReport {
    /// When it started (RFC 3339).
    pub started_at: String,
    /// How long it took, in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// Per framework, for every framework that has a store on this machine.
    pub frameworks: Vec<FrameworkCapture>,
    /// Sentences about what went wrong (a few examples; counts are in `skipped`).
    pub warnings: Vec<String>,
    /// Secrets replaced by the scrubber before storage.
    #[ts(type = "number")]
    pub secrets_redacted: u64,
    /// History files found inside projects that came with cloned repositories (committed by
    /// someone else, unchanged here) and were not captured, by path. The user lists a folder
    /// in `capture.trusted_history_folders` to capture them anyway.
    #[serde(default)]
    pub cloned_histories: Vec<String>,
}

/// What an index rebuild did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct IndexReport {
    /// Records put back in the keyword index.
    #[ts(type = "number")]
    pub records: u64,
    /// Vectors put back in the vector index (from the store; no model call).
    #[ts(type = "number")]
    pub vectors: u64,
    /// How long it took, in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
}

/// Move the vector index to another backend (`index_migrate`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct IndexMigrateReq {
    /// Where to: `remote` (a Qdrant server or cluster).
    pub to: String,
    /// Its gRPC URL (`https://qdrant.example.com:6334`); the config's `index.url` by default.
    #[serde(default)]
    pub url: Option<String>,
}

/// What a migration did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct IndexMigrateReport {
    /// The backend the vectors went to.
    pub to: String,
    /// Its URL.
    pub url: String,
    /// Points written there (from the store's vectors; no model call).
    #[ts(type = "number")]
    pub points: u64,
    /// Points the collection holds afterwards.
    #[ts(type = "number")]
    pub collection_points: u64,
    /// The config file that now names the new backend.
    pub config_file: String,
    /// How long it took, in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
}

/// Which conversations to list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ConversationsReq {
    /// Only this framework.
    #[serde(default)]
    pub framework: Option<String>,
    /// Only this project.
    #[serde(default)]
    pub project: Option<String>,
    /// At most this many (50 by default).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Skip this many.
    #[serde(default)]
    pub offset: Option<u32>,
}

/// One captured conversation, in a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ConversationSummary {
    /// Framework.
    pub framework: String,
    /// Session id.
    pub session_id: String,
    /// Project identity.
    pub project: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// First request (RFC 3339).
    pub first_at: String,
    /// Last activity (RFC 3339).
    pub last_at: String,
    /// Requests.
    #[ts(type = "number")]
    pub turns: u64,
    /// Requests that ended in an error.
    #[ts(type = "number")]
    pub errors: u64,
    /// The first request, shortened.
    pub title: String,
}

/// A (framework, project) pair with its number of conversations, for filters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ConversationFacet {
    /// Framework.
    pub framework: String,
    /// Project identity.
    pub project: Option<String>,
    /// Conversations.
    #[ts(type = "number")]
    pub count: u64,
}

/// Conversations, newest first, with the filters available.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ConversationList {
    /// The page.
    pub conversations: Vec<ConversationSummary>,
    /// Every (framework, project) pair.
    pub facets: Vec<ConversationFacet>,
}

/// One conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ConversationReq {
    /// Framework.
    pub framework: String,
    /// Session id.
    pub session_id: String,
}

/// A request with its replies and tool steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct TurnView {
    /// Record id.
    pub id: String,
    /// The user's request.
    pub request: String,
    /// When (RFC 3339).
    pub started_at: String,
    /// Last activity (RFC 3339).
    pub ended_at: Option<String>,
    /// How it ended.
    pub outcome: String,
    /// The model.
    pub model: Option<String>,
    /// Replies and tool steps, in order: objects with `type` = `text` (`text`), `tool`
    /// (`name`, `input`, `output`, `is_error`) or `injected` (`source`, `text`).
    #[ts(type = "Array<Record<string, unknown>>")]
    pub steps: Vec<serde_json::Value>,
    /// Whether the end of the turn was seen.
    pub complete: bool,
}

/// A conversation whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Conversation {
    /// Framework.
    pub framework: String,
    /// Session id.
    pub session_id: String,
    /// Project identity.
    pub project: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Every request, oldest first.
    pub turns: Vec<TurnView>,
}

/// Switch memory on or off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct MemorySetReq {
    /// The new state.
    pub enabled: bool,
}

/// Pause memory: off now, back on by itself at the end of the pause (or when resumed with
/// `memory_set` on). Give exactly one of `for` and `until`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct MemoryPauseReq {
    /// How long: `15m`, `1h`, `<N>m`, `<N>h` (at most 30 days), `tomorrow` (the next
    /// midnight in the service's local time zone) or `until_resumed`.
    #[serde(rename = "for", default)]
    pub duration: Option<String>,
    /// Or an explicit end (RFC 3339, in the future, at most 30 days ahead).
    #[serde(default)]
    pub until: Option<String>,
}

/// Wipe memory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ClearReq {
    /// Also delete notes.
    #[serde(default)]
    pub notes: bool,
}

/// What a clear removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ClearReport {
    /// When (RFC 3339).
    pub cleared_at: String,
    /// How much was removed.
    pub removed: Counts,
    /// Whether notes were kept.
    pub notes_kept: bool,
}

/// Desktop preferences, changed from the UI.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct Preferences {
    /// Launch Cairn at login (off by default).
    pub autostart: bool,
}

/// The config file and the settings in effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ConfigView {
    /// The config file's path.
    pub path: String,
    /// The effective settings as TOML.
    pub effective: String,
}

/// Every type the UI needs, for the generator: (name, declaration with its imports).
pub fn typescript_files() -> Vec<(String, String)> {
    fn file<T: TS + 'static>() -> (String, String) {
        let mut imports: Vec<String> = T::dependencies()
            .into_iter()
            .map(|d| format!("import type {{ {} }} from \"./{}\";", d.ts_name, d.ts_name))
            .collect();
        imports.sort();
        imports.dedup();
        let mut out = String::from(HEADER);
        for line in &imports {
            out.push_str(line);
            out.push('\n');
        }
        if !imports.is_empty() {
            out.push('\n');
        }
        out.push_str("export ");
        out.push_str(&T::decl());
        out.push('\n');
        (T::ident(), out)
    }
    let mut files = vec![
        file::<ErrorCode>(),
        file::<ApiErrorBody>(),
        file::<Empty>(),
        file::<MemoryState>(),
        file::<Counts>(),
        file::<ServiceHost>(),
        file::<ServiceInfo>(),
        file::<WorkerState>(),
        file::<WorkerStatus>(),
        file::<Status>(),
        file::<MemorySetReq>(),
        file::<MemoryPauseReq>(),
        file::<ClearReq>(),
        file::<ClearReport>(),
        file::<Preferences>(),
        file::<ConfigView>(),
        file::<SearchReq>(),
        file::<SearchHit>(),
        file::<SearchRes>(),
        file::<FrameworkCapture>(),
        file::<SkipCount>(),
        file::<CaptureReport>(),
        file::<ConversationsReq>(),
        file::<ConversationSummary>(),
        file::<ConversationFacet>(),
        file::<ConversationList>(),
        file::<ConversationReq>(),
        file::<TurnView>(),
        file::<Conversation>(),
        file::<IndexReport>(),
        file::<IndexMigrateReq>(),
        file::<IndexMigrateReport>(),
        file::<NoteScopeKind>(),
        file::<NoteAccess>(),
        file::<NoteRef>(),
        file::<NoteSummary>(),
        file::<NotesListReq>(),
        file::<NoteList>(),
        file::<NoteDoc>(),
        file::<NoteSaveReq>(),
        file::<NoteRenameReq>(),
        file::<NoteDeleteReq>(),
        file::<NoteVersion>(),
        file::<NoteVersionList>(),
        file::<NoteVersionReq>(),
        file::<NoteVersionDoc>(),
        file::<AgentFound>(),
        file::<AgentsFound>(),
        file::<SkillsReq>(),
        file::<SkillEntry>(),
        file::<SkillsPreview>(),
        file::<ReviewReq>(),
        file::<ReviewSubject>(),
        file::<ReviewEntry>(),
        file::<ReviewCounts>(),
        file::<ReviewActionView>(),
        file::<ReviewInbox>(),
        file::<ReviewActReq>(),
        file::<ReviewUndoReq>(),
        file::<NoteMount>(),
        file::<NotePrecondition>(),
        file::<NoteCommandReq>(),
        file::<NoteCommandRes>(),
        file::<NotesTitlesReq>(),
        file::<NoteTitle>(),
        file::<NoteTitles>(),
        file::<OpenReq>(),
        file::<OpenedRecord>(),
        file::<OpenRes>(),
        file::<ExploreReq>(),
        file::<ExploreNode>(),
        file::<ExploreEdge>(),
        file::<ExploreRes>(),
        file::<IntegrationView>(),
        file::<IntegrationBackup>(),
        file::<IntegrationList>(),
        file::<IntegrationSetReq>(),
        file::<HookTiming>(),
        file::<HookTimingReq>(),
        file::<IntegrationChange>(),
        file::<LlmStatusReq>(),
        file::<LlmBudget>(),
        file::<LlmTotals>(),
        file::<LlmCall>(),
        file::<LlmStatus>(),
        file::<LlmTestReq>(),
        file::<LlmTestRes>(),
        file::<LlmKeySetReq>(),
        file::<LlmKeyState>(),
        file::<LlmSettingsReq>(),
        file::<LlmOffer>(),
        file::<LlmDownloadReq>(),
        file::<LlmDownloadRes>(),
        file::<ItemView>(),
        file::<ItemEventView>(),
        file::<ItemRelationView>(),
        file::<OpenedItem>(),
        file::<ItemsReq>(),
        file::<ItemList>(),
        file::<DistillReq>(),
        file::<DistillKept>(),
        file::<DistillDropped>(),
        file::<DistillWindow>(),
        file::<DistillReport>(),
        file::<SleepReq>(),
        file::<SleepReport>(),
        file::<DistillRebuildReq>(),
        file::<DistillDiffItem>(),
        file::<DistillRebuildReport>(),
        file::<ProfilesReq>(),
        file::<ProfileTimelineEntry>(),
        file::<ProfileView>(),
        file::<ProfileList>(),
        file::<TurnNoteReq>(),
        file::<NoteEntry>(),
        file::<TurnNote>(),
        file::<InjectionsReq>(),
        file::<FeatureValue>(),
        file::<InjectionEntry>(),
        file::<InjectionView>(),
        file::<NoteEvalFigures>(),
        file::<InjectionList>(),
        file::<WhyReq>(),
        file::<NoteFeedbackReq>(),
        file::<ReplayReq>(),
        file::<ReplayFigures>(),
        file::<ReplayRow>(),
        file::<ReplayReport>(),
        file::<ReplayLatest>(),
        file::<RankerFigures>(),
        file::<RankerStatus>(),
        file::<ExportReq>(),
        file::<ExportReport>(),
        file::<ImportReq>(),
        file::<ImportCounts>(),
        file::<ImportReport>(),
    ];
    files.sort();
    let mut index = String::from(HEADER);
    for (name, _) in &files {
        index.push_str(&format!("export type {{ {name} }} from \"./{name}\";\n"));
    }
    index.push_str("export type { Methods } from \"./methods\";\nexport { METHOD_NAMES } from \"./methods\";\n");
    files.push(("methods".into(), methods_ts()));
    files.push(("index".into(), index));
    files
}

const HEADER: &str = "// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.\n";

fn methods_ts() -> String {
    let mut imports = Vec::new();
    let mut map = String::new();
    let mut names = Vec::new();
    macro_rules! emit {
        ($($name:ident($req:ty) -> $res:ty, $doc:literal;)*) => {
            $(
                imports.push(<$req as TS>::ident());
                imports.push(<$res as TS>::ident());
                map.push_str(&format!(
                    "  /** {} */\n  {}: {{ req: {}; res: {} }};\n",
                    $doc,
                    stringify!($name),
                    <$req as TS>::ident(),
                    <$res as TS>::ident()
                ));
                names.push(format!("\"{}\"", stringify!($name)));
            )*
        };
    }
    for_each_method!(emit);
    imports.sort();
    imports.dedup();
    let mut out = String::from(HEADER);
    for i in &imports {
        out.push_str(&format!("import type {{ {i} }} from \"./{i}\";\n"));
    }
    out.push_str(
        "\n/** Every API method with its request and response types. */\nexport type Methods = {\n",
    );
    out.push_str(&map);
    out.push_str("};\n\n/** The method names, in the order the service declares them. */\n");
    out.push_str(&format!(
        "export const METHOD_NAMES = [{}] as const;\n",
        names.join(", ")
    ));
    out
}
