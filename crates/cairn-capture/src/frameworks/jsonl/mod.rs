//! Append-only line stores (FRAMEWORKS.md §2.1 family a): one module per framework, each a
//! resumable [`LineParser`](crate::LineParser) whose whole state is saved with the file offset.
//!
//! | framework | store | module |
//! |---|---|---|
//! | `claude-code` | `~/.claude/projects/*/<id>.jsonl`, sub-agents | [`claude`] |
//! | `codex` | `~/.codex/sessions/**/rollout-*.jsonl` | [`codex`] |
//! | `gemini-cli` | `~/.gemini/tmp/*/chats/session-*.jsonl` (+ legacy whole-file `.json`) | [`gemini`] |
//! | `qwen-code` | `~/.qwen/projects/*/chats/*.jsonl` | [`qwen`] |
//! | `copilot-cli` | `~/.copilot/session-state/<id>/events.jsonl` | [`copilot`] |
//! | `cursor` | `~/.cursor/projects/*/agent-transcripts/<id>/<id>.jsonl` | [`cursor`] |
//! | `factory-droid` | `~/.factory/sessions/**/<id>.jsonl` | [`droid`] |
//! | `aider` | `<project>/.aider.chat.history.md` (no roots; see [`aider::history_files_under`]) | [`aider`] |

pub mod aider;
pub mod claude;
pub mod codex;
mod common;
pub mod copilot;
pub mod cursor;
pub mod droid;
pub mod gemini;
pub mod qwen;

use crate::FrameworkSpec;

/// The frameworks of this family, in a stable order. Gemini CLI has two entries under one name:
/// its JSONL log and its legacy whole-file JSON.
pub fn specs() -> Vec<FrameworkSpec> {
    let mut v = vec![claude::spec(), codex::spec()];
    v.extend(gemini::specs());
    v.extend([
        qwen::spec(),
        copilot::spec(),
        cursor::spec(),
        droid::spec(),
        aider::spec(),
    ]);
    v
}
