//! Claude Code: `${CLAUDE_CONFIG_DIR:-~/.claude}/projects/<encoded cwd>/<sessionId>.jsonl`, and
//! sub-agent transcripts `<sessionId>/subagents/agent-<agentId>.jsonl` (FRAMEWORKS.md §3).
//!
//! One turn per real user request. Assistant lines (one content block each, sharing
//! `message.id`) are folded into the open turn; `tool_use` blocks are paired with the
//! `tool_result` blocks of the following user lines by `tool_use_id`. A turn ends on
//! `stop_reason:"end_turn"`, a `system`/`turn_duration` line, an interruption marker, or the next
//! real request. Content that arrives after a turn ended and before the next request (a Stop hook
//! that made the agent continue) re-opens that turn, which is then emitted again.
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use cairn_core::{Outcome, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{self, Obj, Who, ne, ons, os, parse_ts, raise, s, truthy};
use crate::spec::{Env, FrameworkSpec, LineParser, Reader};
use crate::turn::{Step, Turn, split_injected};

/// The table entry for Claude Code.
pub fn spec() -> FrameworkSpec {
    FrameworkSpec {
        name: "claude-code",
        display: "Claude Code",
        env_vars: &["CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME"],
        roots,
        matches,
        reader: Reader::Lines(new_parser),
    }
}

/// `${CLAUDE_CONFIG_DIR:-~/.claude}/projects` (the variable may list several folders, separated
/// by commas) and `${XDG_CONFIG_HOME:-~/.config}/claude/projects`.
fn roots(env: &Env) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    match env.var("CLAUDE_CONFIG_DIR") {
        Some(list) => {
            for dir in list.split(',').map(str::trim).filter(|d| !d.is_empty()) {
                out.push(PathBuf::from(dir).join("projects"));
            }
        }
        None => out.push(env.home.join(".claude").join("projects")),
    }
    out.push(
        env.dir_from("XDG_CONFIG_HOME", ".config")
            .join("claude")
            .join("projects"),
    );
    let mut unique = Vec::new();
    for p in out {
        if !unique.contains(&p) {
            unique.push(p);
        }
    }
    unique
}

/// `<project>/<id>.jsonl` and `<project>/<sessionId>/subagents/agent-<id>.jsonl`.
fn matches(rel: &Path) -> bool {
    match common::parts(rel).as_slice() {
        [_, file] => file.ends_with(".jsonl"),
        [_, _, sub, file] => {
            sub == "subagents" && file.starts_with("agent-") && file.ends_with(".jsonl")
        }
        _ => false,
    }
}

fn new_parser(path: &Path, saved: Option<Value>) -> Box<dyn LineParser> {
    Box::new(common::restore(saved, || State {
        who: who(path),
        ..State::default()
    }))
}

/// The session (file stem) or, for a sub-agent transcript, the agent id and its parent session.
fn who(path: &Path) -> Who {
    let stem = common::stem(path);
    if let Some(agent) = stem.strip_prefix("agent-")
        && common::parent_name(path).as_deref() == Some("subagents")
    {
        let parent = path
            .parent()
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned());
        return Who {
            session_id: agent.to_owned(),
            parent,
        };
    }
    Who {
        session_id: stem,
        parent: None,
    }
}

/// User texts that are not requests: local command output, caveats, shell-mode echoes.
const NOT_REQUESTS: &[&str] = &[
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "Caveat: The messages below",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
];

/// How many recent line uuids are remembered to drop repeated lines.
const SEEN: usize = 256;

/// A slash command typed by the user: it becomes a turn only if the model answers it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Command {
    uuid: String,
    text: String,
    at: Option<Timestamp>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    who: Who,
    line: u64,
    cwd: Option<String>,
    current: Option<Turn>,
    /// The last turn emitted, re-opened if content for it arrives before the next request.
    last_closed: Option<Turn>,
    /// Context injected before the next request.
    pending: Vec<Step>,
    command: Option<Command>,
    /// `message.id` of the last text step, to join text blocks of one response.
    text_msg: Option<String>,
    seen: VecDeque<String>,
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
        if let Some(uuid) = os(&o, "uuid") {
            if self.seen.iter().any(|u| u == uuid) {
                return Ok(());
            }
            self.seen.push_back(uuid.to_owned());
            if self.seen.len() > SEEN {
                self.seen.pop_front();
            }
        }
        if self.who.session_id.is_empty()
            && let Some(id) = ons(&o, "sessionId")
        {
            self.who.session_id = id;
        }
        if let Some(cwd) = ons(&o, "cwd") {
            self.cwd = Some(cwd);
        }
        match ty.as_str() {
            "user" => self.user(&o, out),
            "assistant" => self.assistant(&o, out),
            "system" => {
                self.system(&o, out);
                Ok(())
            }
            "attachment" => {
                self.attachment(&o);
                Ok(())
            }
            // summary, ai-title, last-prompt, file-history-snapshot, permission-mode, progress,
            // queue-operation and the other metadata lines carry no conversation.
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
        if let Some(turn) = self.current.take() {
            let turn = common::completed(turn);
            out.push(turn.clone());
            self.last_closed = Some(turn);
        }
        self.text_msg = None;
    }

    fn start(&mut self, message_id: String, at: Option<Timestamp>) -> &mut Turn {
        let mut turn = common::new_turn(&self.who, message_id, self.cwd.clone(), None, at);
        turn.steps.append(&mut self.pending);
        self.last_closed = None;
        self.command = None;
        self.text_msg = None;
        self.current.insert(turn)
    }

    /// The turn content belongs to: the open one, a slash command the model is answering, or
    /// the last one (continued after its end).
    fn active(&mut self) -> Option<&mut Turn> {
        if self.current.is_none() {
            if let Some(cmd) = self.command.take() {
                let turn = self.start(cmd.uuid, cmd.at);
                turn.request = cmd.text;
            } else if let Some(mut turn) = self.last_closed.take() {
                turn.complete = false;
                self.current = Some(turn);
            }
        }
        self.current.as_mut()
    }

    fn line_id(&self, o: &Obj) -> String {
        ons(o, "uuid").unwrap_or_else(|| format!("line:{}", self.line))
    }

    fn user(&mut self, o: &Obj, out: &mut Vec<Turn>) -> Result<(), String> {
        if truthy(o.get("isMeta"))
            || truthy(o.get("isCompactSummary"))
            || truthy(o.get("isVisibleInTranscriptOnly"))
        {
            return Ok(());
        }
        let at = parse_ts(o.get("timestamp"));
        let Some(content) = o.get("message").and_then(|m| m.get("content")) else {
            return Err(format!(
                "line {}: user record without message content",
                self.line
            ));
        };
        let mut texts = Vec::new();
        let mut had_result = false;
        let mut had_image = false;
        match content {
            Value::String(t) => texts.push(t.clone()),
            Value::Array(blocks) => {
                for b in blocks {
                    match s(b, "type") {
                        Some("tool_result") => {
                            had_result = true;
                            self.tool_result(b, at);
                        }
                        Some("text") => {
                            if let Some(t) = s(b, "text") {
                                texts.push(t.to_owned());
                            }
                        }
                        Some("image" | "document") => had_image = true,
                        _ => {}
                    }
                }
            }
            _ => {
                return Err(format!(
                    "line {}: user content is neither text nor blocks",
                    self.line
                ));
            }
        }
        if had_result {
            return Ok(());
        }
        let mut text = texts.join("\n");
        if text.trim().is_empty() {
            if !had_image {
                return Ok(());
            }
            text = "[image]".to_owned();
        }
        self.user_text(o, &text, at, out);
        Ok(())
    }

    fn tool_result(&mut self, b: &Value, at: Option<Timestamp>) {
        let id = s(b, "tool_use_id").map(str::to_owned);
        let output = b.get("content").map(common::value_text).unwrap_or_default();
        let error = truthy(b.get("is_error"));
        if let Some(turn) = self.active() {
            common::attach_or_keep(&mut turn.steps, id.as_deref(), output, error);
            turn.ended_at = common::later(turn.ended_at, at);
        }
    }

    fn user_text(&mut self, o: &Obj, text: &str, at: Option<Timestamp>, out: &mut Vec<Turn>) {
        let t = text.trim_start();
        if t.starts_with("[Request interrupted by user") {
            if let Some(turn) = self.current.as_mut() {
                raise(&mut turn.outcome, Outcome::Interrupted);
                turn.ended_at = common::later(turn.ended_at, at);
            }
            self.close(out);
            return;
        }
        if t.starts_with("<command-name>") || t.starts_with("<command-message>") {
            self.close(out);
            self.command = Some(Command {
                uuid: self.line_id(o),
                text: command_text(t),
                at,
            });
            return;
        }
        if NOT_REQUESTS.iter().any(|p| t.starts_with(p)) {
            return;
        }
        let (kept, reminders) = common::split_tag(text, "<system-reminder>", "</system-reminder>");
        let (words, notes) = split_injected(&kept);
        if words.is_empty() {
            // Only injected context: it belongs to the open turn or the next one.
            let steps = match self.current.as_mut() {
                Some(turn) => &mut turn.steps,
                None => &mut self.pending,
            };
            for note in notes.iter().filter(|n| !n.is_empty()) {
                steps.push(Step::Injected {
                    source: "cairn".to_owned(),
                    text: note.clone(),
                });
            }
            for r in &reminders {
                common::push_injected(steps, "system", r);
            }
            return;
        }
        self.close(out);
        let id = self.line_id(o);
        let turn = self.start(id, at);
        common::set_request(turn, &kept);
        for r in &reminders {
            common::push_injected(&mut turn.steps, "system", r);
        }
    }

    fn assistant(&mut self, o: &Obj, out: &mut Vec<Turn>) -> Result<(), String> {
        let at = parse_ts(o.get("timestamp"));
        let Some(msg) = o.get("message").filter(|m| m.is_object()) else {
            return Err(format!(
                "line {}: assistant record without message",
                self.line
            ));
        };
        let msg_id = s(msg, "id").map(str::to_owned);
        let model = ne(msg, "model")
            .filter(|m| *m != "<synthetic>")
            .map(str::to_owned);
        let stop = s(msg, "stop_reason").map(str::to_owned);
        let api_error = truthy(o.get("isApiErrorMessage"));
        let aborted = truthy(o.get("isAbortedMidStream"));
        let mut text_msg = self.text_msg.clone();
        let Some(turn) = self.active() else {
            return Ok(());
        };
        if model.is_some() {
            turn.model = model;
        }
        let mut add_text = |steps: &mut Vec<Step>, t: &str| {
            let merge = msg_id.is_some() && text_msg == msg_id;
            common::push_text(steps, t, merge);
            if !t.trim().is_empty() {
                text_msg.clone_from(&msg_id);
            }
        };
        match msg.get("content") {
            Some(Value::String(t)) => add_text(&mut turn.steps, t),
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    match s(b, "type") {
                        Some("text") => add_text(&mut turn.steps, s(b, "text").unwrap_or_default()),
                        Some("tool_use" | "server_tool_use") => common::push_tool(
                            &mut turn.steps,
                            s(b, "id").map(str::to_owned),
                            s(b, "name").unwrap_or("unknown"),
                            b.get("input").cloned().unwrap_or(Value::Null),
                        ),
                        // thinking blocks are mostly signature-only; nothing to keep.
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        if api_error {
            raise(&mut turn.outcome, Outcome::Error);
        }
        if aborted {
            raise(&mut turn.outcome, Outcome::Interrupted);
        }
        if stop.as_deref() == Some("refusal") {
            raise(&mut turn.outcome, Outcome::Error);
        }
        turn.ended_at = common::later(turn.ended_at, at);
        let ended = stop.as_deref() == Some("end_turn");
        if ended {
            raise(&mut turn.outcome, Outcome::Success);
        }
        self.text_msg = text_msg;
        if ended {
            self.close(out);
        }
        Ok(())
    }

    fn system(&mut self, o: &Obj, out: &mut Vec<Turn>) {
        let at = parse_ts(o.get("timestamp"));
        match os(o, "subtype") {
            Some("turn_duration") => {
                if let Some(turn) = self.current.as_mut() {
                    raise(&mut turn.outcome, Outcome::Success);
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

    fn attachment(&mut self, o: &Obj) {
        let Some(a) = o.get("attachment") else { return };
        if s(a, "type") != Some("hook_additional_context") {
            return;
        }
        let text = a.get("content").map(common::value_text).unwrap_or_default();
        if text.trim().is_empty() {
            return;
        }
        let steps = match self.current.as_mut() {
            Some(turn) => &mut turn.steps,
            None => &mut self.pending,
        };
        common::push_injected(steps, "hook", &text);
    }
}

/// `/name args` out of `<command-name>/name</command-name><command-args>args</command-args>`.
fn command_text(text: &str) -> String {
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&close)? + start;
        Some(text[start..end].trim().to_owned())
    };
    let name = tag("command-name").unwrap_or_default();
    let args = tag("command-args").unwrap_or_default();
    format!("{name} {args}").trim().to_owned()
}
