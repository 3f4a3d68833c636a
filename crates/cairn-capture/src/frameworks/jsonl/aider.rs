//! Aider: `<git root>/.aider.chat.history.md`, append-only Markdown (FRAMEWORKS.md §11).
//!
//! The file is per project, not under the home, so [`spec`] has no roots: the caller finds the
//! files with [`history_files_under`] in project folders it already knows. Each run starts with
//! `# aider chat started at <YYYY-MM-DD HH:MM:SS>` (local time); that header starts a session
//! (id = file path + header time) and is the time of each of its turns (Aider writes no other). `#### ` lines are the user's input (consecutive ones form one
//! multi-line request); `> ` lines outside code fences are Aider's own output (confirmations,
//! edits applied, command output) and become steps of a tool named `aider`; other lines are the
//! assistant's reply.
//! Slash commands (`#### /add …`, `#### /run …`) are kept as tool steps (their output follows as
//! `> ` lines), except `/ask`, `/code`, `/architect` and `/context`, which are requests. There is no turn-end marker: a turn ends
//! at the next request or run header; the message id is the request's line number. The model
//! comes from the start-up banner (`> Main model: …` / `> Model: …`); the working directory is
//! the folder holding the file.
use std::path::{Path, PathBuf};

use cairn_core::{Outcome, Timestamp};
use chrono::{Local, NaiveDateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{self, Who, raise};
use crate::spec::{Env, FrameworkSpec, LineParser, Reader};
use crate::turn::{Step, Turn};

/// The name of Aider's chat history file.
pub const HISTORY_FILE: &str = ".aider.chat.history.md";

/// The table entry for Aider.
pub fn spec() -> FrameworkSpec {
    FrameworkSpec {
        name: "aider",
        display: "Aider",
        env_vars: &[],
        roots,
        matches,
        reader: Reader::Lines(new_parser),
    }
}

/// None: Aider keeps its history inside each project. See [`history_files_under`].
fn roots(_env: &Env) -> Vec<PathBuf> {
    Vec::new()
}

/// A file named `.aider.chat.history.md`.
fn matches(rel: &Path) -> bool {
    rel.file_name().is_some_and(|n| n == HISTORY_FILE)
}

/// The Aider chat history files in `dir` and its sub-folders (up to three levels down; hidden
/// folders and dependency/build folders such as `node_modules` and `target` are skipped).
/// Unreadable folders are skipped. Give it the project folders Cairn already knows (for
/// example the working directories of captured sessions); read each file found with [`spec`]'s
/// reader. [`find_histories`] does the same and says what it skipped.
pub fn history_files_under(dir: &Path) -> Vec<PathBuf> {
    find_histories(dir, &mut Vec::new())
}

/// [`history_files_under`], with a sentence in `warnings` for each folder that could not be
/// read and each history file that is a symbolic link (links are never followed: no loops,
/// no escaping the folder).
pub fn find_histories(dir: &Path, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    crate::frameworks::search_projects(
        dir,
        |d, w| history_file_in(d, w).into_iter().collect(),
        warnings,
    )
}

/// The history file directly in `dir` (not below), if there is one; a symbolic link is not
/// followed (a warning says so).
pub fn history_file_in(dir: &Path, warnings: &mut Vec<String>) -> Option<PathBuf> {
    let file = dir.join(HISTORY_FILE);
    match std::fs::symlink_metadata(&file) {
        Ok(m) if m.file_type().is_symlink() => {
            warnings.push(format!("{}: a symbolic link; not followed", file.display()));
            None
        }
        Ok(m) if m.is_file() => Some(file),
        _ => None,
    }
}

fn new_parser(path: &Path, saved: Option<Value>) -> Box<dyn LineParser> {
    Box::new(common::restore(saved, || State {
        path: path.display().to_string(),
        cwd: path.parent().map(|p| p.display().to_string()),
        who: Who {
            session_id: path.display().to_string(),
            parent: None,
        },
        ..State::default()
    }))
}

/// Slash commands that send a request to the model.
const REQUEST_COMMANDS: &[&str] = &["/ask", "/code", "/architect", "/context"];

/// What the previous line was.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Last {
    #[default]
    Other,
    Request,
    Quote,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    path: String,
    who: Who,
    line: u64,
    cwd: Option<String>,
    model: Option<String>,
    /// When the current run started: the time of each of its turns (Aider writes no other).
    run_started: Option<Timestamp>,
    current: Option<Turn>,
    /// Command steps seen before the first request of a run.
    pending: Vec<Step>,
    last: Last,
    /// Inside a fenced code block of a reply (where `> ` is not Aider's output).
    fence: bool,
}

impl LineParser for State {
    fn feed(&mut self, line: &str, out: &mut Vec<Turn>) -> Result<(), String> {
        self.line += 1;
        let line = line.trim_end_matches(['\r', '\n']);
        if let Some(rest) = line.strip_prefix("# aider chat started at ") {
            self.close(out);
            let stamp = rest.trim();
            self.who.session_id = format!("{}#{stamp}", self.path);
            self.run_started = local_time(stamp);
            self.pending.clear();
            self.last = Last::Other;
            self.fence = false;
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix("####") {
            let text = rest.strip_prefix(' ').unwrap_or(rest).trim_end();
            let text = if text == "<blank>" { "" } else { text };
            self.fence = false;
            self.input(text, out);
            return Ok(());
        }
        if !self.fence
            && let Some(rest) = line
                .strip_prefix("> ")
                .or((line.trim_end() == ">").then_some(""))
        {
            self.quote(rest.trim_end());
            self.last = Last::Quote;
            return Ok(());
        }
        if line.trim().is_empty() {
            // A blank line separates blocks; inside a reply it is kept.
            if self.last != Last::Quote
                && let Some(Step::Text { text }) =
                    self.current.as_mut().and_then(|t| t.steps.last_mut())
            {
                text.push('\n');
            }
            if self.last == Last::Request {
                self.last = Last::Other;
            }
            return Ok(());
        }
        self.last = Last::Other;
        if line.trim_start().starts_with("```") {
            self.fence = !self.fence;
        }
        if let Some(turn) = self.current.as_mut() {
            match turn.steps.last_mut() {
                Some(Step::Text { text }) => {
                    text.push('\n');
                    text.push_str(line.trim_end());
                }
                _ => turn.steps.push(Step::Text {
                    text: line.trim_end().to_owned(),
                }),
            }
        }
        Ok(())
    }

    fn open_turn(&self) -> Option<Turn> {
        self.current.as_ref().map(common::opened)
    }

    fn save(&self) -> Value {
        common::save(self)
    }
}

/// A header time (`YYYY-MM-DD HH:MM:SS`, local time of the machine that wrote it) as UTC.
fn local_time(stamp: &str) -> Option<Timestamp> {
    let naive = NaiveDateTime::parse_from_str(stamp, "%Y-%m-%d %H:%M:%S").ok()?;
    Local
        .from_local_datetime(&naive)
        .earliest()
        .map(|t| t.with_timezone(&Utc))
}

impl State {
    fn close(&mut self, out: &mut Vec<Turn>) {
        if let Some(turn) = self.current.take() {
            out.push(common::completed(turn));
        }
    }

    fn input(&mut self, text: &str, out: &mut Vec<Turn>) {
        // A second `####` line right after the first continues a multi-line request.
        if self.last == Last::Request
            && let Some(turn) = self.current.as_mut()
        {
            if !turn.request.is_empty() {
                turn.request.push('\n');
            }
            turn.request.push_str(text);
            return;
        }
        if let Some(cmd) = text.strip_prefix('/') {
            let (name, args) = cmd.split_once(char::is_whitespace).unwrap_or((cmd, ""));
            let slash = format!("/{name}");
            if !REQUEST_COMMANDS.contains(&slash.as_str()) {
                let args = args.trim().to_owned();
                let step = Step::Tool {
                    id: None,
                    name: slash,
                    input: Value::String(args),
                    output: None,
                    is_error: false,
                };
                match self.current.as_mut() {
                    Some(turn) => turn.steps.push(step),
                    None => self.pending.push(step),
                }
                self.last = Last::Other;
                return;
            }
        }
        self.close(out);
        // Aider writes a time only at a run's start. Every turn of the run gets it: the file's
        // modification time would date each run of a history read for the first time at the
        // file's last write, after requests that came later in other sessions.
        let started = self.run_started;
        let mut turn = common::new_turn(
            &self.who,
            self.line.to_string(),
            self.cwd.clone(),
            self.model.clone(),
            started,
        );
        turn.steps.append(&mut self.pending);
        common::set_request(&mut turn, text);
        self.current = Some(turn);
        self.last = Last::Request;
    }

    /// A `> ` line: the banner before the first request, Aider's output after it.
    fn quote(&mut self, text: &str) {
        if let Some(model) = text
            .strip_prefix("Main model: ")
            .or_else(|| text.strip_prefix("Model: "))
            .and_then(|m| m.split(" with ").next())
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            self.model = Some(model.to_owned());
            if let Some(turn) = self.current.as_mut() {
                turn.model = Some(model.to_owned());
            }
        }
        let continuing = self.last == Last::Quote;
        let Some(turn) = self.current.as_mut() else {
            // Banner lines, or the output of a command run before any request.
            if let Some(Step::Tool { output, .. }) = self.pending.last_mut() {
                append(output, text);
            }
            return;
        };
        if text.contains("KeyboardInterrupt") {
            raise(&mut turn.outcome, Outcome::Interrupted);
        }
        match turn.steps.last_mut() {
            Some(Step::Tool { output, .. }) if continuing || output.is_none() => {
                append(output, text)
            }
            _ => turn.steps.push(Step::Tool {
                id: None,
                name: "aider".to_owned(),
                input: Value::Null,
                output: Some(text.to_owned()),
                is_error: false,
            }),
        }
    }
}

fn append(output: &mut Option<String>, text: &str) {
    match output {
        Some(o) => {
            o.push('\n');
            o.push_str(text);
        }
        None => *output = Some(text.to_owned()),
    }
}
