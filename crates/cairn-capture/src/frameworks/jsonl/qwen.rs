//! Qwen Code: `${QWEN_HOME:-~/.qwen}/projects/<encoded cwd>/chats/<sessionId>.jsonl` (and
//! `chats/archive/`; older builds under `~/.qwen/tmp/<project>/chats/`) (FRAMEWORKS.md §15).
//!
//! Claude-like records (`uuid`, `parentUuid`, `sessionId`, `timestamp`, `type` ∈ `user` |
//! `assistant` | `tool_result` | `system`, `cwd`) whose `message` is Gemini-style
//! `{role, parts[]}` (`text`, `functionCall`, `functionResponse`; `thought` parts skipped).
//! Repeated records with one `uuid` are fragments of one response and are folded together.
//! Hook context arrives as a final user part wrapped in `<qwen:user-prompt-submit-context>`
//! (with `systemPayload.displayText` keeping the typed text): it becomes an injected step.
//! No turn-end record is known, so a turn ends at the next request (its outcome is success when
//! the last reply called no tool); until then it is the open turn. An API error reported by a
//! `ui_telemetry` record marks the turn as failed.
use std::path::{Path, PathBuf};

use cairn_core::{Outcome, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{self, Obj, Who, ons, os, parse_ts, raise, s};
use crate::spec::{Env, FrameworkSpec, LineParser, Reader};
use crate::turn::{Step, Turn};

/// The table entry for Qwen Code.
pub fn spec() -> FrameworkSpec {
    FrameworkSpec {
        name: "qwen-code",
        display: "Qwen Code",
        env_vars: &["QWEN_HOME"],
        roots,
        matches,
        reader: Reader::Lines(new_parser),
    }
}

/// `${QWEN_HOME:-~/.qwen}/projects` and the older `…/tmp`.
fn roots(env: &Env) -> Vec<PathBuf> {
    let home = env.dir_from("QWEN_HOME", ".qwen");
    vec![home.join("projects"), home.join("tmp")]
}

/// `<project>/chats/<id>.jsonl` and `<project>/chats/archive/<id>.jsonl`.
fn matches(rel: &Path) -> bool {
    match common::parts(rel).as_slice() {
        [_, chats, file] => chats == "chats" && file.ends_with(".jsonl"),
        [_, chats, archive, file] => {
            chats == "chats" && archive == "archive" && file.ends_with(".jsonl")
        }
        _ => false,
    }
}

fn new_parser(path: &Path, saved: Option<Value>) -> Box<dyn LineParser> {
    Box::new(common::restore(saved, || State {
        who: Who {
            session_id: common::stem(path),
            parent: None,
        },
        ..State::default()
    }))
}

/// The wrapper Qwen puts around hook context appended to a user message.
const HOOK_OPEN: &str = "<qwen:user-prompt-submit-context>";
const HOOK_CLOSE: &str = "</qwen:user-prompt-submit-context>";

/// User-record subtypes written by the runtime, not typed by the user.
const RUNTIME: &[&str] = &["goal_runtime", "cron", "notification"];

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    who: Who,
    line: u64,
    cwd: Option<String>,
    current: Option<Turn>,
    pending: Vec<Step>,
    /// The uuid of the response last folded in, and whether it called a tool.
    reply_uuid: Option<String>,
    reply_called: bool,
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
        if let Some(cwd) = ons(&o, "cwd") {
            self.cwd = Some(cwd);
        }
        let at = parse_ts(o.get("timestamp"));
        match ty.as_str() {
            "user" => self.user(&o, at, out),
            "assistant" => self.assistant(&o, at),
            "tool_result" => {
                self.tool_result(&o, at);
                Ok(())
            }
            "system" => {
                self.system(&o);
                Ok(())
            }
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

/// A record's `message.parts`.
fn parts(o: &Obj) -> &[Value] {
    o.get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The text of a part that is not a thought.
fn part_text(p: &Value) -> Option<&str> {
    if p.get("thought") == Some(&Value::Bool(true)) {
        return None;
    }
    s(p, "text")
}

impl State {
    fn close(&mut self, out: &mut Vec<Turn>) {
        if let Some(mut turn) = self.current.take() {
            if self.settled {
                raise(&mut turn.outcome, Outcome::Success);
            }
            out.push(common::completed(turn));
        }
        self.reply_uuid = None;
        self.reply_called = false;
        self.settled = false;
    }

    fn steps(&mut self) -> &mut Vec<Step> {
        match self.current.as_mut() {
            Some(turn) => &mut turn.steps,
            None => &mut self.pending,
        }
    }

    fn user(&mut self, o: &Obj, at: Option<Timestamp>, out: &mut Vec<Turn>) -> Result<(), String> {
        let parts = parts(o);
        let subtype = os(o, "subtype").unwrap_or_default();
        if parts.iter().any(|p| p.get("functionResponse").is_some()) {
            self.responses(o, parts, at);
            return Ok(());
        }
        let mut typed = Vec::new();
        let mut hooks = Vec::new();
        for p in parts {
            let Some(t) = part_text(p) else { continue };
            let (rest, found) = common::split_tag(t, HOOK_OPEN, HOOK_CLOSE);
            hooks.extend(found);
            if !rest.is_empty() {
                typed.push(rest);
            }
        }
        let display = o
            .get("systemPayload")
            .and_then(|sp| sp.get("displayText"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let text = display.unwrap_or_else(|| typed.join("\n"));
        if RUNTIME.contains(&subtype) {
            if !text.trim().is_empty() {
                common::push_injected(self.steps(), subtype, &text);
            }
            return Ok(());
        }
        if text.trim().is_empty() {
            if o.get("message").is_none() {
                return Err(format!("line {}: user record without a message", self.line));
            }
            for h in &hooks {
                common::push_injected(self.steps(), "hook", h);
            }
            return Ok(());
        }
        self.close(out);
        let id = ons(o, "uuid").unwrap_or_else(|| format!("line:{}", self.line));
        let mut turn = common::new_turn(&self.who, id, self.cwd.clone(), None, at);
        turn.steps.append(&mut self.pending);
        common::set_request(&mut turn, &text);
        for h in &hooks {
            common::push_injected(&mut turn.steps, "hook", h);
        }
        self.current = Some(turn);
        Ok(())
    }

    fn assistant(&mut self, o: &Obj, at: Option<Timestamp>) -> Result<(), String> {
        let uuid = ons(o, "uuid");
        let model = ons(o, "model");
        let parts = parts(o);
        if o.get("message").is_none() {
            return Err(format!(
                "line {}: assistant record without a message",
                self.line
            ));
        }
        let same_reply = uuid.is_some() && uuid == self.reply_uuid;
        if !same_reply {
            self.reply_called = false;
        }
        let Some(turn) = self.current.as_mut() else {
            return Ok(());
        };
        if model.is_some() {
            turn.model = model;
        }
        let mut first = true;
        for p in parts {
            if let Some(t) = part_text(p) {
                // Text fragments of one response continue each other.
                common::push_text(&mut turn.steps, t, same_reply || !first);
                first = false;
            }
            if let Some(call) = p.get("functionCall") {
                self.reply_called = true;
                common::push_tool(
                    &mut turn.steps,
                    s(call, "id").map(str::to_owned),
                    s(call, "name").unwrap_or("unknown"),
                    call.get("args").cloned().unwrap_or(Value::Null),
                );
                first = true;
            }
        }
        turn.ended_at = common::later(turn.ended_at, at);
        self.reply_uuid = uuid;
        self.settled = !self.reply_called;
        Ok(())
    }

    fn tool_result(&mut self, o: &Obj, at: Option<Timestamp>) {
        let parts = parts(o).to_vec();
        self.responses(o, &parts, at);
    }

    /// `functionResponse` parts (or, without them, the `toolCallResult` summary) paired with
    /// their calls.
    fn responses(&mut self, o: &Obj, parts: &[Value], at: Option<Timestamp>) {
        let result = o.get("toolCallResult").filter(|r| r.is_object());
        let failed = result.is_some_and(|r| {
            r.get("error").is_some_and(|e| !e.is_null()) || s(r, "status") == Some("error")
        });
        let Some(turn) = self.current.as_mut() else {
            return;
        };
        let mut any = false;
        for p in parts {
            let Some(resp) = p.get("functionResponse") else {
                continue;
            };
            any = true;
            let body = resp.get("response").unwrap_or(&Value::Null);
            let (text, error) = match (body.get("output"), body.get("error")) {
                (Some(out), _) if !out.is_null() => (common::value_text(out), false),
                (_, Some(err)) if !err.is_null() => (common::value_text(err), true),
                _ => (common::value_text(body), false),
            };
            common::attach_or_keep(&mut turn.steps, s(resp, "id"), text, error || failed);
        }
        if !any && let Some(r) = result {
            let text = r
                .get("resultDisplay")
                .map(common::value_text)
                .unwrap_or_default();
            common::attach_or_keep(&mut turn.steps, s(r, "callId"), text, failed);
        }
        turn.ended_at = common::later(turn.ended_at, at);
        self.settled = false;
    }

    fn system(&mut self, o: &Obj) {
        if os(o, "subtype") != Some("ui_telemetry") {
            return;
        }
        let name = o
            .get("systemPayload")
            .and_then(|p| p.get("uiEvent"))
            .and_then(|e| e.get("event.name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if name.ends_with("api_error")
            && let Some(turn) = self.current.as_mut()
        {
            raise(&mut turn.outcome, Outcome::Error);
        }
    }
}
