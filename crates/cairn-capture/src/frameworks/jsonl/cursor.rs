//! Cursor agent transcripts (IDE agent window and the `cursor-agent` CLI):
//! `~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl`, sub-agents in
//! `<id>/subagents/<child>.jsonl` (FRAMEWORKS.md §7). Cursor's SQLite stores are read elsewhere
//! under the same framework name.
//!
//! Lines `{role, message:{content:[…]}}` with `text`, `tool_use` (drift: `tool_call`,
//! `tool-result`, `thinking`) blocks, and a role-less `{"type":"turn_ended","status":…}` line
//! closing each turn. There are no timestamps, ids or cwd: the message id is the request's line
//! number (stable: the file is append-only), `started_at` stays empty, and the working
//! directory is recovered from the project folder name when that name maps back to an existing
//! folder. The user's words are inside `<user_query>`; other user text (`<user_info>` …) is
//! injected environment context.
use std::path::{Path, PathBuf};

use cairn_core::Outcome;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{self, Obj, Who, ons, os, raise, s};
use crate::spec::{Env, FrameworkSpec, LineParser, Reader};
use crate::turn::{Step, Turn};

/// The table entry for Cursor's agent transcripts.
pub fn spec() -> FrameworkSpec {
    FrameworkSpec {
        name: "cursor",
        display: "Cursor",
        env_vars: &[],
        roots,
        matches,
        reader: Reader::Lines(new_parser),
    }
}

/// `~/.cursor/projects`.
fn roots(env: &Env) -> Vec<PathBuf> {
    vec![env.home.join(".cursor").join("projects")]
}

/// `<project>/agent-transcripts/<id>/<id>.jsonl`, `…/<id>/subagents/<child>.jsonl`, and a flat
/// `<project>/agent-transcripts/<id>.jsonl`.
fn matches(rel: &Path) -> bool {
    match common::parts(rel).as_slice() {
        [_, at, file] => at == "agent-transcripts" && file.ends_with(".jsonl"),
        [_, at, dir, file] => {
            at == "agent-transcripts" && file.strip_suffix(".jsonl").is_some_and(|stem| stem == dir)
        }
        [_, at, _, sub, file] => {
            at == "agent-transcripts" && sub == "subagents" && file.ends_with(".jsonl")
        }
        _ => false,
    }
}

fn new_parser(path: &Path, saved: Option<Value>) -> Box<dyn LineParser> {
    Box::new(common::restore(saved, || {
        let parent = if common::parent_name(path).as_deref() == Some("subagents") {
            path.parent()
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
        } else {
            None
        };
        let project = path
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "agent-transcripts"))
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned());
        State {
            who: Who {
                session_id: common::stem(path),
                parent,
            },
            cwd: project.and_then(|p| decode_project(&p, Path::new("/"))),
            ..State::default()
        }
    }))
}

/// The folder a `~/.cursor/projects/<name>` entry stands for, when it can be found: the name is
/// the path with its separators (and other punctuation) turned into `-`, so the folders under
/// `root` whose names normalise the same way are followed down. `None` when nothing matches.
pub(crate) fn decode_project(name: &str, root: &Path) -> Option<String> {
    let tokens: Vec<String> = tokens(name);
    if tokens.is_empty() {
        return None;
    }
    let mut budget = 5_000_u32;
    walk(root, &tokens, &mut budget).map(|p| p.display().to_string())
}

/// A name cut at every character that is not a letter or digit.
fn tokens(name: &str) -> Vec<String> {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn walk(dir: &Path, rest: &[String], budget: &mut u32) -> Option<PathBuf> {
    if rest.is_empty() {
        return Some(dir.to_path_buf());
    }
    let entries = fs_err::read_dir(dir).ok()?;
    let mut candidates: Vec<(usize, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        let name = entry.file_name().to_string_lossy().into_owned();
        let t = tokens(&name);
        if !t.is_empty() && rest.starts_with(&t) && entry.file_type().is_ok_and(|f| f.is_dir()) {
            candidates.push((t.len(), entry.path()));
        }
    }
    // Longer names first: `demo-app` before `demo`.
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    candidates
        .into_iter()
        .find_map(|(n, path)| walk(&path, &rest[n..], budget))
}

/// User-text openings that are environment context, not the user's words.
const ENVIRONMENT: &[&str] = &[
    "<user_info>",
    "<system_reminder>",
    "<system-reminder>",
    "<additional_data>",
    "<attached_files>",
];

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    who: Who,
    line: u64,
    cwd: Option<String>,
    model: Option<String>,
    current: Option<Turn>,
    pending: Vec<Step>,
}

impl LineParser for State {
    fn feed(&mut self, line: &str, out: &mut Vec<Turn>) -> Result<(), String> {
        self.line += 1;
        let Some(o) = common::parse_object(line, self.line)? else {
            return Ok(());
        };
        if let Some(model) = ons(&o, "model") {
            self.model = Some(model.clone());
            if let Some(turn) = self.current.as_mut() {
                turn.model = Some(model);
            }
        }
        if os(&o, "type") == Some("turn_ended") {
            let outcome = match os(&o, "status").unwrap_or_default() {
                "success" | "completed" | "done" => Outcome::Success,
                "error" | "failed" => Outcome::Error,
                "aborted" | "cancelled" | "canceled" | "interrupted" => Outcome::Interrupted,
                _ => Outcome::Unknown,
            };
            if let Some(mut turn) = self.current.take() {
                raise(&mut turn.outcome, outcome);
                out.push(common::completed(turn));
            }
            return Ok(());
        }
        match os(&o, "role") {
            Some("user") => self.user(&o, out),
            Some("assistant") => {
                self.assistant(&o);
                Ok(())
            }
            Some(_) => Ok(()),
            None if o.contains_key("type") => Ok(()),
            None => Err(format!(
                "line {}: neither a message nor a typed record",
                self.line
            )),
        }
    }

    fn open_turn(&self) -> Option<Turn> {
        self.current.as_ref().map(common::opened)
    }

    fn save(&self) -> Value {
        common::save(self)
    }
}

/// The content blocks of a line (`message.content`, or `content`), a plain string as one text
/// block.
fn blocks(o: &Obj) -> Vec<Value> {
    let content = o
        .get("message")
        .and_then(|m| m.get("content"))
        .or_else(|| o.get("content"));
    match content {
        Some(Value::Array(b)) => b.clone(),
        Some(Value::String(t)) => vec![serde_json::json!({"type": "text", "text": t})],
        _ => Vec::new(),
    }
}

/// Pairs a `tool_result` block with its call.
fn attach(steps: &mut Vec<Step>, b: &Value) {
    let id = s(b, "tool_use_id").or_else(|| s(b, "id"));
    let output = b
        .get("content")
        .or_else(|| b.get("output"))
        .map(common::value_text)
        .unwrap_or_default();
    common::attach_or_keep(
        steps,
        id,
        output,
        b.get("is_error") == Some(&Value::Bool(true)),
    );
}

impl State {
    fn user(&mut self, o: &Obj, out: &mut Vec<Turn>) -> Result<(), String> {
        if o.get("message").is_none() && o.get("content").is_none() {
            return Err(format!("line {}: user message without content", self.line));
        }
        let mut texts = Vec::new();
        for b in blocks(o) {
            match s(&b, "type") {
                Some("text") => texts.extend(s(&b, "text").map(str::to_owned)),
                Some("tool_result" | "tool-result") => {
                    if let Some(turn) = self.current.as_mut() {
                        attach(&mut turn.steps, &b);
                    }
                }
                _ => {}
            }
        }
        let text = texts.join("\n");
        let (rest, queries) = common::split_tag(&text, "<user_query>", "</user_query>");
        let (request, context) = if queries.is_empty() {
            if ENVIRONMENT.iter().any(|p| rest.starts_with(p)) {
                (String::new(), rest)
            } else {
                (rest, String::new())
            }
        } else {
            (queries.join("\n"), rest)
        };
        let (words, _) = crate::turn::split_injected(&request);
        if words.is_empty() {
            let steps = match self.current.as_mut() {
                Some(turn) => &mut turn.steps,
                None => &mut self.pending,
            };
            if !request.is_empty() {
                common::push_injected(steps, "cairn", &request);
            }
            if !context.is_empty() {
                common::push_injected(steps, "environment", &context);
            }
            return Ok(());
        }
        if let Some(turn) = self.current.take() {
            out.push(common::completed(turn));
        }
        let mut turn = common::new_turn(
            &self.who,
            self.line.to_string(),
            self.cwd.clone(),
            self.model.clone(),
            None,
        );
        turn.steps.append(&mut self.pending);
        if !context.is_empty() {
            common::push_injected(&mut turn.steps, "environment", &context);
        }
        common::set_request(&mut turn, &request);
        self.current = Some(turn);
        Ok(())
    }

    fn assistant(&mut self, o: &Obj) {
        let Some(turn) = self.current.as_mut() else {
            return;
        };
        for b in blocks(o) {
            match s(&b, "type") {
                Some("text") => {
                    common::push_text(&mut turn.steps, s(&b, "text").unwrap_or_default(), false)
                }
                Some("tool_use" | "tool_call") => common::push_tool(
                    &mut turn.steps,
                    s(&b, "id").map(str::to_owned),
                    s(&b, "name").unwrap_or("unknown"),
                    b.get("input")
                        .or_else(|| b.get("args"))
                        .cloned()
                        .unwrap_or(Value::Null),
                ),
                Some("tool_result" | "tool-result") => attach(&mut turn.steps, &b),
                _ => {}
            }
        }
    }
}
