//! What agents reach through tools besides search and notes: open one thing whole, explore
//! what relates to it; and the integrations that register those tools with each agent.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{NoteDoc, TurnView};

/// Open one thing by its id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct OpenReq {
    /// A record id (`r_…`), an item id (`i_…`) or a note id (`n_…`), as search returns them.
    pub id: String,
}

/// A record whole, with where it sits in its conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct OpenedRecord {
    /// Framework.
    pub framework: String,
    /// Session id.
    pub session_id: String,
    /// Project identity.
    pub project: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// The request with every reply and tool step, whole.
    pub turn: TurnView,
    /// Its position in the conversation (1-based).
    #[ts(type = "number")]
    pub position: u64,
    /// Requests in the conversation.
    #[ts(type = "number")]
    pub session_turns: u64,
    /// The requests just before and after it, by id, for context.
    pub neighbours: Vec<String>,
}

/// What `open` found: exactly one of `record` and `note`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct OpenRes {
    /// `record`, `item` or `note`.
    pub kind: String,
    /// The record, when the id is a record's.
    pub record: Option<OpenedRecord>,
    /// The item with its history, relations and source requests, when the id is an item's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub item: Option<super::OpenedItem>,
    /// The note, when the id is a note's.
    pub note: Option<NoteDoc>,
}

/// Walk from an id or a concept to what relates to it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ExploreReq {
    /// Start from this record, item or note.
    #[serde(default)]
    pub id: Option<String>,
    /// Or start from this concept (a word or short phrase).
    #[serde(default)]
    pub concept: Option<String>,
    /// How many steps out (1 by default, 3 at most).
    #[serde(default)]
    pub depth: Option<u32>,
    /// At most this many related things in total (20 by default, 100 at most).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// A thing reached while exploring.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ExploreNode {
    /// Its id (a record, item or note id), or `concept:<term>`.
    pub id: String,
    /// `record`, `item`, `note` or `concept`.
    pub kind: String,
    /// A short label: the request, the note's title, or the concept.
    pub label: String,
    /// Steps from the start (0 for the start itself).
    #[ts(type = "number")]
    pub depth: u32,
    /// For records: framework, project, when.
    pub framework: Option<String>,
    /// Project identity.
    pub project: Option<String>,
    /// When (RFC 3339).
    pub timestamp: Option<String>,
}

/// How two things relate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ExploreEdge {
    /// From this id.
    pub from: String,
    /// To this id.
    pub to: String,
    /// `same_session`, `same_project`, `mentions` (a record, item or note and a concept it
    /// is about), `source` (an item and a request it came from), or an item relation:
    /// `related`, `supersedes`, `contradicts`.
    pub relation: String,
}

/// What relates to the start, nearest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ExploreRes {
    /// The start.
    pub start: ExploreNode,
    /// Everything reached, by depth.
    pub nodes: Vec<ExploreNode>,
    /// How they connect.
    pub edges: Vec<ExploreEdge>,
}

/// Cairn's MCP registration with one agent framework.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct IntegrationView {
    /// The framework (`claude-code`, `codex`, …).
    pub framework: String,
    /// Its config file.
    pub path: String,
    /// Whether the framework seems installed (its home exists).
    pub detected: bool,
    /// Whether the config file exists.
    pub exists: bool,
    /// Whether Cairn is registered there.
    pub installed: bool,
    /// Whether the registration runs this Cairn binary (false: stale path).
    pub current: bool,
    /// The copies of the config file Cairn made before changing it, newest first (only the
    /// newest few are kept; each is readable by the owner only).
    pub backups: Vec<IntegrationBackup>,
    /// Cairn's hooks there (the turn note, the note titles at session start): `installed`,
    /// `outdated` (all there, some run another Cairn binary), `partial`, `not_installed`;
    /// absent when the framework takes no hook (see `hooks_note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hooks: Option<String>,
    /// The hook file (or OpenCode plugin file) Cairn edits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hooks_path: Option<String>,
    /// Why the framework takes no hook, or why its hook file cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hooks_note: Option<String>,
    /// What the user must do by hand once Cairn is installed (Codex: trust the hooks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub manual: Option<String>,
}

/// A copy of an agent's config file, made before Cairn changed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct IntegrationBackup {
    /// Where the copy is.
    pub path: String,
    /// The name of the file it copies.
    pub file_name: String,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
    /// Its size in bytes.
    #[ts(type = "number")]
    pub size: u64,
}

/// Every framework Cairn can register with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct IntegrationList {
    /// One per framework.
    pub integrations: Vec<IntegrationView>,
}

/// Install or remove Cairn's registration with one framework.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct IntegrationSetReq {
    /// The framework.
    pub framework: String,
    /// Install (true) or remove (false).
    pub installed: bool,
}

/// What an install or remove did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct IntegrationChange {
    /// The framework.
    pub framework: String,
    /// The file edited (or that would have been).
    pub path: String,
    /// `installed`, `updated`, `already_installed`, `removed` or `not_installed`.
    pub action: String,
    /// The backup made before editing, if the file existed.
    pub backup: Option<String>,
    /// Anything worth knowing (a symlinked config edited at its target, …).
    pub notes: Vec<String>,
    /// What was done to Cairn's hooks (same words as `action`); absent when the framework
    /// takes no hook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hooks: Option<String>,
    /// The hook file (or OpenCode plugin file) edited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hooks_path: Option<String>,
    /// The backup of the hook file made before editing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hooks_backup: Option<String>,
    /// What the user must still do by hand (Codex: open `codex` once and trust the hooks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub manual: Option<String>,
}

/// How long agents' hooks wait for the turn note (`[hook]` in the config file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct HookTiming {
    /// Milliseconds from the hook's start within which the note must arrive
    /// (`hook.deadline_ms`); a later note is dropped and the turn goes on without it.
    pub deadline_ms: u32,
    /// The built-in default.
    pub default_ms: u32,
    /// The least allowed.
    pub min_ms: u32,
    /// The most allowed.
    pub max_ms: u32,
    /// How much longer hooks wait while the LLM judge is on (`llm.judge_ms` and a margin);
    /// none while it is off.
    pub judge_wait_ms: Option<u32>,
    /// The config file it is saved in.
    pub config_file: String,
}

/// Change the hooks' deadline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct HookTimingReq {
    /// Milliseconds (50 to 1,500).
    pub deadline_ms: u32,
}
