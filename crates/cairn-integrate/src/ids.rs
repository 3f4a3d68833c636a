//! The frameworks' ids on their own, so an error can name them without reaching into the
//! framework table (which reads the environment, whose errors are these).

/// The ids of [`crate::framework::FRAMEWORKS`], in order.
pub(crate) static IDS: [&str; 9] = [
    "claude-code",
    "codex",
    "gemini-cli",
    "opencode",
    "cursor",
    "qwen-code",
    "crush",
    "copilot-cli",
    "goose",
];

pub(crate) fn ids() -> Vec<&'static str> {
    IDS.to_vec()
}
