//! Codex CLI (also Codex Desktop and the VS Code extension):
//! `${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl` and
//! `archived_sessions/` (FRAMEWORKS.md §4).
//!
//! Lines are `{timestamp, type, payload}`. A turn opens at `event_msg`/`user_message` (the
//! user's words; the duplicate `response_item` user message is ignored) and ends at
//! `task_complete` (success, or error when it carries one), `turn_aborted` (interrupted), a new
//! task, or the next request. Injected user messages (`# AGENTS.md instructions`,
//! `<environment_context>`, `<user_instructions>`) and `developer` messages become injected
//! steps. Assistant text comes from `response_item` messages (not the duplicate
//! `agent_message` events); tool calls (`function_call`, `custom_tool_call`, `local_shell_call`)
//! are paired with their outputs by `call_id`. The model comes from `turn_context`.
use std::path::{Path, PathBuf};

use cairn_core::{Outcome, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{self, Obj, Who, ne, os, parse_ts, raise, s};
use crate::spec::{Env, FrameworkSpec, LineParser, Reader};
use crate::turn::{Step, Turn};

/// The table entry for Codex.
pub fn spec() -> FrameworkSpec {
    FrameworkSpec {
        name: "codex",
        display: "Codex CLI",
        env_vars: &["CODEX_HOME"],
        roots,
        matches,
        reader: Reader::Lines(new_parser),
    }
}

/// `${CODEX_HOME:-~/.codex}/sessions` and `…/archived_sessions`.
fn roots(env: &Env) -> Vec<PathBuf> {
    let home = env.dir_from("CODEX_HOME", ".codex");
    vec![home.join("sessions"), home.join("archived_sessions")]
}

/// `**/rollout-*.jsonl`.
fn matches(rel: &Path) -> bool {
    rel.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

fn new_parser(path: &Path, saved: Option<Value>) -> Box<dyn LineParser> {
    Box::new(common::restore(saved, || State {
        who: Who {
            session_id: id_from_name(path),
            parent: None,
        },
        ..State::default()
    }))
}

/// The thread id at the end of `rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl` (used until the
/// `session_meta` line names it).
fn id_from_name(path: &Path) -> String {
    let stem = common::stem(path);
    let tail = stem.len().saturating_sub(36);
    match stem.get(tail..) {
        Some(id) if stem.len() >= 36 + "rollout-".len() && id.matches('-').count() == 4 => {
            id.to_owned()
        }
        _ => stem,
    }
}

/// User-message prefixes that are context Codex injected, not the user's words.
const INJECTED: &[&str] = &[
    "# AGENTS.md instructions",
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
];

/// User-message prefixes that are bookkeeping, not words or context.
const IGNORED: &[&str] = &["<turn_aborted>", "<user_shell_command>"];

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    who: Who,
    meta_seen: bool,
    line: u64,
    cwd: Option<String>,
    model: Option<String>,
    /// The task (turn) id announced by the latest `turn_context`/`task_started`.
    turn_id: Option<String>,
    /// The task id the open turn belongs to.
    current_turn_id: Option<String>,
    /// The last task id used as a message id (a task can hold several requests).
    used_turn_id: Option<String>,
    current: Option<Turn>,
    pending: Vec<Step>,
}

impl LineParser for State {
    fn feed(&mut self, line: &str, out: &mut Vec<Turn>) -> Result<(), String> {
        self.line += 1;
        let Some(o) = common::parse_object(line, self.line)? else {
            return Ok(());
        };
        let Some(ty) = os(&o, "type") else {
            return Err(format!("line {}: record without a type", self.line));
        };
        let Some(p) = o.get("payload").filter(|p| p.is_object()) else {
            return Err(format!(
                "line {}: `{ty}` record without a payload",
                self.line
            ));
        };
        let at = parse_ts(o.get("timestamp"));
        match ty {
            "session_meta" => self.session_meta(p),
            "turn_context" => self.turn_context(p, out),
            "event_msg" => self.event(&o, p, at, out),
            "response_item" => self.item(p, at),
            // compacted, world_state and newer kinds carry no new conversation.
            _ => {}
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

impl State {
    fn close(&mut self, out: &mut Vec<Turn>) {
        if let Some(turn) = self.current.take() {
            out.push(common::completed(turn));
        }
        self.current_turn_id = None;
    }

    fn session_meta(&mut self, p: &Value) {
        if !self.meta_seen {
            self.meta_seen = true;
            if let Some(id) = ne(p, "id").or_else(|| ne(p, "session_id")) {
                self.who.session_id = id.to_owned();
            }
            let parent = ne(p, "parent_thread_id").map(str::to_owned).or_else(|| {
                p.get("source")
                    .and_then(|src| find_key(src, "parent_thread_id", 4))
            });
            self.who.parent = parent;
        }
        if let Some(cwd) = ne(p, "cwd") {
            self.cwd = Some(cwd.to_owned());
        }
    }

    /// A new task id: the open turn belongs to an earlier task and is over.
    fn task(&mut self, id: Option<&str>, out: &mut Vec<Turn>) {
        let Some(id) = id else { return };
        if self.current.is_some() && self.current_turn_id.as_deref().is_some_and(|cur| cur != id) {
            self.close(out);
        }
        self.turn_id = Some(id.to_owned());
    }

    fn turn_context(&mut self, p: &Value, out: &mut Vec<Turn>) {
        self.task(ne(p, "turn_id"), out);
        if let Some(cwd) = ne(p, "cwd") {
            self.cwd = Some(cwd.to_owned());
        }
        if let Some(model) = ne(p, "model") {
            self.model = Some(model.to_owned());
            if let Some(turn) = self.current.as_mut() {
                turn.model = Some(model.to_owned());
            }
        }
    }

    fn event(&mut self, o: &Obj, p: &Value, at: Option<Timestamp>, out: &mut Vec<Turn>) {
        match s(p, "type") {
            Some("task_started") => self.task(ne(p, "turn_id"), out),
            Some("user_message") => self.user_message(o, p, at, out),
            Some("task_complete") => {
                if let Some(turn) = self.current.as_mut() {
                    let failed = p.get("error").is_some_and(|e| !e.is_null());
                    raise(
                        &mut turn.outcome,
                        if failed {
                            Outcome::Error
                        } else {
                            Outcome::Success
                        },
                    );
                    turn.ended_at = common::later(turn.ended_at, at);
                }
                self.close(out);
            }
            Some("turn_aborted") => {
                if let Some(turn) = self.current.as_mut() {
                    raise(&mut turn.outcome, Outcome::Interrupted);
                    turn.ended_at = common::later(turn.ended_at, at);
                }
                self.close(out);
            }
            Some("error") => {
                if let Some(turn) = self.current.as_mut() {
                    raise(&mut turn.outcome, Outcome::Error);
                    turn.ended_at = common::later(turn.ended_at, at);
                }
            }
            _ => {}
        }
    }

    fn user_message(&mut self, o: &Obj, p: &Value, at: Option<Timestamp>, out: &mut Vec<Turn>) {
        let mut text = s(p, "message").unwrap_or_default().to_owned();
        let has_images = ["images", "local_images"].iter().any(|k| {
            p.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
        });
        if text.trim().is_empty() {
            if !has_images {
                return;
            }
            text = "[image]".to_owned();
        }
        let t = text.trim_start();
        if INJECTED.iter().any(|x| t.starts_with(x)) {
            self.inject("instructions", &text);
            return;
        }
        if IGNORED.iter().any(|x| t.starts_with(x)) {
            return;
        }
        let (words, notes) = crate::turn::split_injected(&text);
        if words.is_empty() {
            for note in notes {
                self.inject("cairn", &note);
            }
            return;
        }
        self.close(out);
        let message_id = match &self.turn_id {
            Some(id) if self.used_turn_id.as_ref() != Some(id) => {
                self.used_turn_id = Some(id.clone());
                id.clone()
            }
            Some(id) => format!("{id}:{}", self.line),
            None => format!(
                "{}:{}",
                common::os(o, "timestamp").unwrap_or_default(),
                self.line
            ),
        };
        let mut turn = common::new_turn(
            &self.who,
            message_id,
            self.cwd.clone(),
            self.model.clone(),
            at,
        );
        turn.steps.append(&mut self.pending);
        common::set_request(&mut turn, &text);
        self.current_turn_id.clone_from(&self.turn_id);
        self.current = Some(turn);
    }

    /// Injected context goes to the open turn, or waits for the next one.
    fn inject(&mut self, source: &str, text: &str) {
        let steps = match self.current.as_mut() {
            Some(turn) => &mut turn.steps,
            None => &mut self.pending,
        };
        common::push_injected(steps, source, text);
    }

    fn item(&mut self, p: &Value, at: Option<Timestamp>) {
        match s(p, "type") {
            Some("message") => {
                let text = message_text(p);
                match s(p, "role") {
                    Some("user") => {
                        let t = text.trim_start();
                        if INJECTED.iter().any(|x| t.starts_with(x)) {
                            self.inject("instructions", &text);
                        }
                        // Otherwise the user's words, recorded again by `user_message`.
                    }
                    Some("developer") if !text.trim().is_empty() => {
                        self.inject("developer", &text);
                    }
                    Some("assistant") => {
                        if let Some(turn) = self.current.as_mut() {
                            common::push_text(&mut turn.steps, &text, false);
                            turn.ended_at = common::later(turn.ended_at, at);
                        }
                    }
                    _ => {}
                }
            }
            Some("function_call") => {
                self.call(
                    p,
                    s(p, "name").unwrap_or("unknown"),
                    common::json_or_string(p.get("arguments")),
                    at,
                );
            }
            Some("custom_tool_call") => {
                self.call(
                    p,
                    s(p, "name").unwrap_or("unknown"),
                    p.get("input").cloned().unwrap_or(Value::Null),
                    at,
                );
            }
            Some("local_shell_call") => {
                self.call(
                    p,
                    "local_shell",
                    p.get("action").cloned().unwrap_or(Value::Null),
                    at,
                );
            }
            Some("web_search_call") => {
                self.call(
                    p,
                    "web_search",
                    p.get("action").cloned().unwrap_or(Value::Null),
                    at,
                );
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                let Some(turn) = self.current.as_mut() else {
                    return;
                };
                let (output, error) = tool_output(p.get("output").unwrap_or(&Value::Null));
                common::attach_or_keep(&mut turn.steps, s(p, "call_id"), output, error);
                turn.ended_at = common::later(turn.ended_at, at);
            }
            // reasoning is sealed (encrypted); other items are bookkeeping.
            _ => {}
        }
    }

    fn call(&mut self, p: &Value, name: &str, input: Value, at: Option<Timestamp>) {
        let Some(turn) = self.current.as_mut() else {
            return;
        };
        let id = s(p, "call_id").or_else(|| s(p, "id")).map(str::to_owned);
        common::push_tool(&mut turn.steps, id, name, input);
        turn.ended_at = common::later(turn.ended_at, at);
    }
}

/// The text of a `message` item's `input_text`/`output_text` parts.
fn message_text(p: &Value) -> String {
    match p.get("content") {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| s(part, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => common::value_text(other),
        None => String::new(),
    }
}

/// A tool output as text, and whether it reports an error. The output is a string (sometimes
/// itself JSON `{output, metadata:{exit_code}}`, sometimes `Exit code: N …` text) or an object
/// (`{content, success}`).
fn tool_output(v: &Value) -> (String, bool) {
    match v {
        Value::String(text) => {
            if let Ok(inner @ Value::Object(_)) = serde_json::from_str::<Value>(text)
                && inner.get("output").is_some()
            {
                return tool_output(&inner);
            }
            let error = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("Exit code: "))
                .and_then(|c| c.trim().parse::<i64>().ok())
                .is_some_and(|c| c != 0);
            (text.clone(), error)
        }
        Value::Object(o) => {
            let text = ["output", "content", "text"]
                .iter()
                .find_map(|k| o.get(*k).filter(|x| !x.is_null()))
                .map_or_else(|| v.to_string(), common::value_text);
            let exit = o
                .get("metadata")
                .and_then(|m| m.get("exit_code"))
                .or_else(|| o.get("exit_code"))
                .and_then(Value::as_i64);
            let error = exit.is_some_and(|c| c != 0)
                || o.get("success") == Some(&Value::Bool(false))
                || o.get("isError") == Some(&Value::Bool(true))
                || o.get("is_error") == Some(&Value::Bool(true));
            (text, error)
        }
        Value::Null => (String::new(), false),
        other => (common::value_text(other), false),
    }
}

/// A key anywhere in a small JSON tree.
fn find_key(v: &Value, key: &str, depth: u8) -> Option<String> {
    if depth == 0 {
        return None;
    }
    match v {
        Value::Object(o) => {
            if let Some(found) = o.get(key).and_then(Value::as_str).filter(|x| !x.is_empty()) {
                return Some(found.to_owned());
            }
            o.values().find_map(|inner| find_key(inner, key, depth - 1))
        }
        _ => None,
    }
}
