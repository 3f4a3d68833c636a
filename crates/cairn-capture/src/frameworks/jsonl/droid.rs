//! Factory droid: `~/.factory/sessions/**/<sessionId>.jsonl`, with `<sessionId>.settings.json`
//! beside it (FRAMEWORKS.md §17; confidence medium — only the interactive store's shape is known).
//!
//! A `session_start` line (`id`, `title`, `cwd`) then `message` lines (`id`, `parentId`,
//! `timestamp`, `message:{role, content[]}`) with Claude-style `text` / `tool_use` /
//! `tool_result` blocks. Leading `<system-reminder>` blocks in user text are injected context.
//! No turn-end record is known: a turn ends at the next request (success when the last reply
//! called no tool) and is the open turn until then. The model comes from the settings file
//! (`model` or `sessionDefaultSettings.model`) or a `model` field on messages.
use std::path::{Path, PathBuf};

use cairn_core::{Outcome, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{self, Obj, Who, ne, ons, os, parse_ts, raise, s};
use crate::spec::{Env, FrameworkSpec, LineParser, Reader};
use crate::turn::{Step, Turn};

/// The table entry for Factory droid.
pub fn spec() -> FrameworkSpec {
    FrameworkSpec {
        name: "factory-droid",
        display: "Factory droid",
        env_vars: &[],
        roots,
        matches,
        reader: Reader::Lines(new_parser),
    }
}

/// `~/.factory/sessions`.
fn roots(env: &Env) -> Vec<PathBuf> {
    vec![env.home.join(".factory").join("sessions")]
}

/// Any `*.jsonl` below the root.
fn matches(rel: &Path) -> bool {
    rel.extension().is_some_and(|e| e == "jsonl")
}

fn new_parser(path: &Path, saved: Option<Value>) -> Box<dyn LineParser> {
    Box::new(common::restore(saved, || State {
        who: Who {
            session_id: common::stem(path),
            parent: None,
        },
        model: settings_model(path),
        ..State::default()
    }))
}

/// The model in the `<id>.settings.json` beside a session.
fn settings_model(path: &Path) -> Option<String> {
    let settings = path.with_extension("settings.json");
    let v: Value = serde_json::from_str(&common::read_small(&settings)?).ok()?;
    ne(&v, "model")
        .or_else(|| v.get("sessionDefaultSettings").and_then(|d| ne(d, "model")))
        .map(str::to_owned)
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    who: Who,
    meta_seen: bool,
    line: u64,
    cwd: Option<String>,
    model: Option<String>,
    current: Option<Turn>,
    pending: Vec<Step>,
    /// Whether the last thing in the turn is a reply that called no tool.
    settled: bool,
}

impl LineParser for State {
    fn feed(&mut self, line: &str, out: &mut Vec<Turn>) -> Result<(), String> {
        self.line += 1;
        let Some(o) = common::parse_object(line, self.line)? else {
            return Ok(());
        };
        let Some(ty) = os(&o, "type").map(str::to_owned) else {
            return Err(format!("line {}: record without a type", self.line));
        };
        match ty.as_str() {
            "session_start" => {
                if !self.meta_seen {
                    self.meta_seen = true;
                    if let Some(id) = ons(&o, "id") {
                        self.who.session_id = id;
                    }
                }
                if let Some(cwd) = ons(&o, "cwd") {
                    self.cwd = Some(cwd);
                }
                Ok(())
            }
            "message" => self.message(&o, out),
            _ => Ok(()),
        }
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
        if let Some(mut turn) = self.current.take() {
            if self.settled {
                raise(&mut turn.outcome, Outcome::Success);
            }
            out.push(common::completed(turn));
        }
        self.settled = false;
    }

    fn message(&mut self, o: &Obj, out: &mut Vec<Turn>) -> Result<(), String> {
        let Some(msg) = o.get("message").filter(|m| m.is_object()) else {
            return Err(format!(
                "line {}: message record without a message",
                self.line
            ));
        };
        let at = parse_ts(o.get("timestamp"));
        let blocks = match msg.get("content") {
            Some(Value::Array(b)) => b.clone(),
            Some(Value::String(t)) => vec![serde_json::json!({"type": "text", "text": t})],
            _ => Vec::new(),
        };
        match s(msg, "role") {
            Some("user") => {
                self.user(o, &blocks, at, out);
                Ok(())
            }
            Some("assistant") => {
                self.assistant(msg, &blocks, at);
                Ok(())
            }
            Some(_) => Ok(()),
            None => Err(format!("line {}: message without a role", self.line)),
        }
    }

    fn user(&mut self, o: &Obj, blocks: &[Value], at: Option<Timestamp>, out: &mut Vec<Turn>) {
        let mut texts = Vec::new();
        for b in blocks {
            match s(b, "type") {
                Some("tool_result") => {
                    if let Some(turn) = self.current.as_mut() {
                        let output = b.get("content").map(common::value_text).unwrap_or_default();
                        let error = b.get("is_error") == Some(&Value::Bool(true));
                        common::attach_or_keep(&mut turn.steps, s(b, "tool_use_id"), output, error);
                        turn.ended_at = common::later(turn.ended_at, at);
                    }
                    self.settled = false;
                }
                Some("text") => texts.extend(s(b, "text").map(str::to_owned)),
                _ => {}
            }
        }
        let text = texts.join("\n");
        if text.trim().is_empty() {
            return;
        }
        if text
            .trim_start()
            .starts_with("[Request interrupted by user")
        {
            if let Some(turn) = self.current.as_mut() {
                raise(&mut turn.outcome, Outcome::Interrupted);
            }
            self.close(out);
            return;
        }
        let (kept, reminders) = common::split_tag(&text, "<system-reminder>", "</system-reminder>");
        let (words, _) = crate::turn::split_injected(&kept);
        if words.is_empty() {
            let steps = match self.current.as_mut() {
                Some(turn) => &mut turn.steps,
                None => &mut self.pending,
            };
            common::push_injected(steps, "cairn", &kept);
            for r in &reminders {
                common::push_injected(steps, "system", r);
            }
            return;
        }
        self.close(out);
        let id = ons(o, "id").unwrap_or_else(|| format!("line:{}", self.line));
        let mut turn = common::new_turn(&self.who, id, self.cwd.clone(), self.model.clone(), at);
        turn.steps.append(&mut self.pending);
        for r in &reminders {
            common::push_injected(&mut turn.steps, "system", r);
        }
        common::set_request(&mut turn, &kept);
        self.current = Some(turn);
    }

    fn assistant(&mut self, msg: &Value, blocks: &[Value], at: Option<Timestamp>) {
        let Some(turn) = self.current.as_mut() else {
            return;
        };
        if let Some(model) = ne(msg, "model") {
            turn.model = Some(model.to_owned());
        }
        let mut called = false;
        for b in blocks {
            match s(b, "type") {
                Some("text") => {
                    common::push_text(&mut turn.steps, s(b, "text").unwrap_or_default(), false)
                }
                Some("tool_use") => {
                    called = true;
                    common::push_tool(
                        &mut turn.steps,
                        s(b, "id").map(str::to_owned),
                        s(b, "name").unwrap_or("unknown"),
                        b.get("input").cloned().unwrap_or(Value::Null),
                    );
                }
                _ => {}
            }
        }
        turn.ended_at = common::later(turn.ended_at, at);
        self.settled = !called;
    }
}
