//! What a framework module produces: turns, each one user request with everything the agent
//! did for it, before scrubbing, chunking and storage.
use cairn_core::{Outcome, Timestamp};
use serde::{Deserialize, Serialize};

/// One request with the assistant's replies and tool steps, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// Stable within the session: the framework's id of the message that opened the turn
    /// (or, where the store has no ids, a position that never changes, such as the line
    /// number of the request). With the framework and session id it makes the record id.
    pub message_id: String,
    /// The framework's session id (for sub-agent transcripts, the sub-agent's own id).
    pub session_id: String,
    /// The parent session, for sub-agent transcripts.
    pub parent_session: Option<String>,
    /// The working directory of the session at this turn.
    pub cwd: Option<String>,
    /// The model that answered (the last one seen in the turn).
    pub model: Option<String>,
    /// When the request was made (stores without timestamps leave it empty; the reader
    /// then uses the file's modification time).
    pub started_at: Option<Timestamp>,
    /// When the last reply or tool step was seen.
    pub ended_at: Option<Timestamp>,
    /// How the turn ended.
    pub outcome: Outcome,
    /// The user's request, as they wrote it (injected context removed).
    pub request: String,
    /// The replies and tool steps, in order.
    pub steps: Vec<Step>,
    /// Whether the end of the turn was seen. An open turn may be stored when its file goes
    /// quiet, and stored again (as a newer revision) if it continues.
    pub complete: bool,
}

/// One step of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Step {
    /// Text the assistant wrote.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call paired with its result.
    Tool {
        /// The framework's call id, when it has one.
        id: Option<String>,
        /// The tool's name.
        name: String,
        /// Its input, as the framework recorded it.
        input: serde_json::Value,
        /// Its output as text, once it arrived.
        output: Option<String>,
        /// Whether the tool reported an error (or the call was rejected).
        is_error: bool,
    },
    /// Context injected into the conversation by a hook or by Cairn itself (never the
    /// user's words, never distilled back into memory).
    Injected {
        /// Where it came from (`cairn`, `hook`, `instructions`, …).
        source: String,
        /// The text.
        text: String,
    },
}

/// The mark Cairn puts around every note it injects, so transcripts can tell Cairn's words
/// from the user's. A framework module turns text inside it into [`Step::Injected`] with
/// source `cairn` and removes it from the request.
pub const CAIRN_NOTE_OPEN: &str = "<cairn-memory>";
/// The closing mark of an injected note.
pub const CAIRN_NOTE_CLOSE: &str = "</cairn-memory>";

/// Removes Cairn's injected notes from a user text. Returns the text without them and the
/// notes found.
pub fn split_injected(text: &str) -> (String, Vec<String>) {
    let mut rest = text;
    let mut kept = String::new();
    let mut notes = Vec::new();
    while let Some(start) = rest.find(CAIRN_NOTE_OPEN) {
        kept.push_str(&rest[..start]);
        let after = &rest[start + CAIRN_NOTE_OPEN.len()..];
        match after.find(CAIRN_NOTE_CLOSE) {
            Some(end) => {
                notes.push(after[..end].trim().to_owned());
                rest = &after[end + CAIRN_NOTE_CLOSE.len()..];
            }
            None => {
                notes.push(after.trim().to_owned());
                rest = "";
            }
        }
    }
    kept.push_str(rest);
    (kept.trim().to_owned(), notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injected_notes_are_split_from_the_users_words() {
        let (kept, notes) = split_injected(
            "<cairn-memory>\nEarlier: we pinned serde to 1.0.200\n</cairn-memory>\nfix the build",
        );
        assert_eq!(kept, "fix the build");
        assert_eq!(
            notes,
            vec!["Earlier: we pinned serde to 1.0.200".to_owned()]
        );
        let (kept, notes) = split_injected("plain request");
        assert_eq!((kept.as_str(), notes.len()), ("plain request", 0));
    }
}
