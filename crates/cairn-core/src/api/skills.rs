//! Skills export: a project's procedures and pitfalls as the instruction file each agent
//! framework reads (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, `QWEN.md`, a Cursor rule), in a
//! section Cairn marks so it can later update or remove it — previewed first, written only
//! when asked.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which project's skills, for which framework, in which folder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct SkillsReq {
    /// The project identity (as capture computes it).
    pub project: String,
    /// `claude-code`, `codex`, `opencode`, `gemini-cli`, `qwen-code` or `cursor`.
    pub framework: String,
    /// The project's working folder (absolute), where the instruction file lives.
    pub dir: String,
    /// For `skills_write`: remove Cairn's section instead of writing it.
    #[serde(default)]
    pub remove: bool,
}

/// One item the section holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SkillEntry {
    /// The item's id.
    pub id: String,
    /// `procedure` or `pitfall`.
    pub kind: String,
    /// Its title.
    pub title: String,
}

/// What Cairn would write (or wrote), and what the file holds now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SkillsPreview {
    /// The framework.
    pub framework: String,
    /// The instruction file (absolute).
    pub file: String,
    /// Whether the file exists.
    pub exists: bool,
    /// The section Cairn writes, markers included (empty when the project has no procedure
    /// or pitfall: writing then removes the section).
    pub section: String,
    /// The items in it, procedures first.
    pub entries: Vec<SkillEntry>,
    /// The project's procedures and pitfalls kept out of it: those stated only by outside
    /// text (tool output, fetched pages, files read) or not yet checked. Text from outside
    /// never becomes an instruction to an agent.
    #[serde(default)]
    pub withheld: Vec<SkillEntry>,
    /// Cairn's section as the file holds it now, if it has one.
    pub current: Option<String>,
    /// True when the file already holds exactly this section.
    pub up_to_date: bool,
    /// After `skills_write`: `created`, `updated`, `unchanged`, `removed` or `absent`
    /// (nothing to remove); `None` for a preview.
    pub action: Option<String>,
}
