//! The first run: which agents are on this machine, what history each has, and what Cairn
//! has captured of it — so the app can show it and offer to connect each agent.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One agent framework found on this machine, or with captured history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct AgentFound {
    /// The framework (`claude-code`, `codex`, …).
    pub framework: String,
    /// Its name for people.
    pub name: String,
    /// Session stores (files or databases) found on this machine now.
    #[ts(type = "number")]
    pub stores: u64,
    /// Where the first of them was found.
    pub place: Option<String>,
    /// Conversations Cairn has captured from it.
    #[ts(type = "number")]
    pub conversations: u64,
    /// Requests captured.
    #[ts(type = "number")]
    pub requests: u64,
    /// The first captured request's time (RFC 3339).
    pub first_at: Option<String>,
    /// The last captured request's time (RFC 3339).
    pub last_at: Option<String>,
}

/// Every agent found, most history first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct AgentsFound {
    /// The agents.
    pub agents: Vec<AgentFound>,
    /// History files found inside projects that came with cloned repositories and are not
    /// captured (committed by someone else, unchanged here), by path.
    #[serde(default)]
    pub cloned_histories: Vec<String>,
}
