//! GitHub Copilot CLI: `${COPILOT_HOME:-~/.copilot}/session-state/<id>/events.jsonl` (≥ 1.0.11,
//! with `workspace.yaml` beside it) and the legacy flat `session-state/<id>.jsonl`
//! (FRAMEWORKS.md §14).
//!
//! Events `{type, data, id, parentId, timestamp}`. A turn opens at `user.message` (its event id
//! is the message id) and ends when a round (`assistant.turn_end`) closes after a reply that
//! requested no tool, at `abort` (interrupted), at `session.shutdown`, or at the next request.
//! `assistant.message` gives text and `toolRequests`; `tool.execution_complete` gives outputs
//! (`success:false` is an error). The model comes from `session.model_change` (or a `model`
//! field on events); the working directory from `session.start` `context.cwd`, else
//! `workspace.yaml` (`cwd:`), else the folder-trust notice.
use std::path::{Path, PathBuf};

use cairn_core::{Outcome, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{self, Obj, Who, ne, os, parse_ts, raise, s};
use crate::spec::{Env, FrameworkSpec, LineParser, Reader};
use crate::turn::{Step, Turn};

/// The table entry for GitHub Copilot CLI.
pub fn spec() -> FrameworkSpec {
    FrameworkSpec {
        name: "copilot-cli",
        display: "GitHub Copilot CLI",
        env_vars: &["COPILOT_HOME"],
        roots,
        matches,
        reader: Reader::Lines(new_parser),
    }
}

/// `${COPILOT_HOME:-~/.copilot}/session-state`.
fn roots(env: &Env) -> Vec<PathBuf> {
    vec![
        env.dir_from("COPILOT_HOME", ".copilot")
            .join("session-state"),
    ]
}

/// `<id>/events.jsonl` and legacy `<id>.jsonl`.
fn matches(rel: &Path) -> bool {
    match common::parts(rel).as_slice() {
        [file] => file.ends_with(".jsonl"),
        [_, file] => file == "events.jsonl",
        _ => false,
    }
}

fn new_parser(path: &Path, saved: Option<Value>) -> Box<dyn LineParser> {
    Box::new(common::restore(saved, || {
        let events = path.file_name().is_some_and(|n| n == "events.jsonl");
        let session_id = if events {
            common::parent_name(path).unwrap_or_default()
        } else {
            common::stem(path)
        };
        let workspace_cwd = if events {
            path.parent()
                .and_then(|d| common::read_small(&d.join("workspace.yaml")))
                .and_then(|y| yaml_cwd(&y))
        } else {
            None
        };
        State {
            who: Who {
                session_id,
                parent: None,
            },
            cwd: workspace_cwd,
            ..State::default()
        }
    }))
}

/// The top-level `cwd:` value of a small YAML file.
fn yaml_cwd(yaml: &str) -> Option<String> {
    yaml.lines().find_map(|l| {
        let v = l.strip_prefix("cwd:")?.trim();
        let v = v.trim_matches(|c| c == '"' || c == '\'');
        (!v.is_empty()).then(|| v.to_owned())
    })
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    who: Who,
    line: u64,
    cwd: Option<String>,
    model: Option<String>,
    current: Option<Turn>,
    pending: Vec<Step>,
    /// Whether the last `assistant.message` of the open turn requested tools.
    last_requested_tools: Option<bool>,
}

impl LineParser for State {
    fn feed(&mut self, line: &str, out: &mut Vec<Turn>) -> Result<(), String> {
        self.line += 1;
        let Some(o) = common::parse_object(line, self.line)? else {
            return Ok(());
        };
        let Some(ty) = os(&o, "type").map(str::to_owned) else {
            return Err(format!("line {}: event without a type", self.line));
        };
        let empty = Value::Object(Obj::new());
        let data = o.get("data").filter(|d| d.is_object()).unwrap_or(&empty);
        let at = parse_ts(o.get("timestamp"));
        if let Some(model) = ne(data, "model") {
            self.set_model(model);
        }
        match ty.as_str() {
            "session.start" | "session.resume" => self.start(data),
            "session.model_change" => {
                if let Some(model) = ne(data, "newModel") {
                    self.set_model(model);
                }
            }
            "session.info" => self.info(data),
            "user.message" => self.user(&o, data, at, out),
            "assistant.message" => self.assistant(data, at),
            "tool.execution_start" => self.tool_start(data, at),
            "tool.execution_complete" => self.tool_complete(data, at),
            "assistant.turn_end" if self.last_requested_tools == Some(false) => {
                self.end(Outcome::Success, at, out);
            }
            "abort" => self.end(Outcome::Interrupted, at, out),
            "session.error" => {
                if let Some(turn) = self.current.as_mut() {
                    raise(&mut turn.outcome, Outcome::Error);
                    turn.ended_at = common::later(turn.ended_at, at);
                }
            }
            "session.shutdown" => {
                // A reply that requested no tool was the answer.
                let outcome = if self.last_requested_tools == Some(false) {
                    Outcome::Success
                } else {
                    Outcome::Unknown
                };
                self.end(outcome, at, out);
            }
            // hook.*, session.usage_checkpoint, assistant.turn_start, … carry no conversation.
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
    fn set_model(&mut self, model: &str) {
        self.model = Some(model.to_owned());
        if let Some(turn) = self.current.as_mut() {
            turn.model = Some(model.to_owned());
        }
    }

    fn start(&mut self, data: &Value) {
        if let Some(id) = ne(data, "sessionId")
            && self.who.session_id.is_empty()
        {
            self.who.session_id = id.to_owned();
        }
        if let Some(cwd) = data.get("context").and_then(|c| ne(c, "cwd")) {
            self.cwd = Some(cwd.to_owned());
        }
        if let Some(model) = ne(data, "selectedModel") {
            self.set_model(model);
        }
    }

    /// `Folder <path> has been added to trusted folders.` names the folder when nothing better
    /// did.
    fn info(&mut self, data: &Value) {
        if self.cwd.is_some() || s(data, "infoType") != Some("folder_trust") {
            return;
        }
        if let Some(path) = s(data, "message")
            .and_then(|m| m.strip_prefix("Folder "))
            .and_then(|m| m.split(" has been added").next())
            .filter(|p| !p.is_empty())
        {
            self.cwd = Some(path.to_owned());
        }
    }

    fn end(&mut self, outcome: Outcome, at: Option<Timestamp>, out: &mut Vec<Turn>) {
        if let Some(mut turn) = self.current.take() {
            raise(&mut turn.outcome, outcome);
            turn.ended_at = common::later(turn.ended_at, at);
            out.push(common::completed(turn));
        }
        self.last_requested_tools = None;
    }

    fn user(&mut self, o: &Obj, data: &Value, at: Option<Timestamp>, out: &mut Vec<Turn>) {
        let text = s(data, "content").unwrap_or_default();
        let (words, notes) = crate::turn::split_injected(text);
        if words.is_empty() {
            let steps = match self.current.as_mut() {
                Some(turn) => &mut turn.steps,
                None => &mut self.pending,
            };
            for note in notes.into_iter().filter(|n| !n.is_empty()) {
                steps.push(Step::Injected {
                    source: "cairn".to_owned(),
                    text: note,
                });
            }
            return;
        }
        self.end(Outcome::Unknown, None, out);
        let id = common::ons(o, "id").unwrap_or_else(|| format!("line:{}", self.line));
        let mut turn = common::new_turn(&self.who, id, self.cwd.clone(), self.model.clone(), at);
        turn.steps.append(&mut self.pending);
        common::set_request(&mut turn, text);
        self.current = Some(turn);
    }

    fn assistant(&mut self, data: &Value, at: Option<Timestamp>) {
        let Some(turn) = self.current.as_mut() else {
            return;
        };
        common::push_text(
            &mut turn.steps,
            s(data, "content").unwrap_or_default(),
            false,
        );
        let requests = data.get("toolRequests").and_then(Value::as_array);
        for r in requests.into_iter().flatten() {
            common::push_tool(
                &mut turn.steps,
                s(r, "toolCallId").map(str::to_owned),
                s(r, "name").unwrap_or("unknown"),
                r.get("arguments").cloned().unwrap_or(Value::Null),
            );
        }
        turn.ended_at = common::later(turn.ended_at, at);
        self.last_requested_tools = Some(requests.is_some_and(|r| !r.is_empty()));
    }

    fn tool_start(&mut self, data: &Value, at: Option<Timestamp>) {
        let Some(turn) = self.current.as_mut() else {
            return;
        };
        common::push_tool(
            &mut turn.steps,
            s(data, "toolCallId").map(str::to_owned),
            s(data, "toolName").unwrap_or("unknown"),
            data.get("arguments").cloned().unwrap_or(Value::Null),
        );
        turn.ended_at = common::later(turn.ended_at, at);
    }

    fn tool_complete(&mut self, data: &Value, at: Option<Timestamp>) {
        let Some(turn) = self.current.as_mut() else {
            return;
        };
        let failed = data.get("success") == Some(&Value::Bool(false));
        let result = data.get("result");
        let mut text = result
            .and_then(|r| r.get("content").or_else(|| r.get("detailedContent")))
            .map(common::value_text)
            .unwrap_or_default();
        if text.is_empty()
            && let Some(err) = data.get("error").filter(|e| !e.is_null())
        {
            text = common::value_text(err.get("message").unwrap_or(err));
        }
        common::attach_or_keep(&mut turn.steps, s(data, "toolCallId"), text, failed);
        turn.ended_at = common::later(turn.ended_at, at);
    }
}
