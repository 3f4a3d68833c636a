//! Gemini CLI: `${GEMINI_CLI_HOME:-~}/.gemini/tmp/<project>/chats/session-*.jsonl` (≥ 0.40, a
//! JSONL log) and the legacy whole-file `session-*.json` (≤ 0.39) (FRAMEWORKS.md §6).
//!
//! The log is append-only but not append-means-new: a message whose `id` is appended again
//! replaces the earlier version, `{"$set": …}` updates metadata (or replaces every message),
//! and `{"$rewindTo": id}` removes that message and everything after it. So a turn (a `user`
//! message and the `gemini` messages after it) is emitted only when the next user message
//! starts; until then it is the open turn. Rewound turns are never emitted. Updates to messages
//! of an emitted turn are ignored.
use std::path::{Path, PathBuf};

use cairn_core::Outcome;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{self, Who, ne, parse_ts, raise, s};
use crate::spec::{Env, FrameworkSpec, LineParser, Reader};
use crate::turn::{Step, Turn};

/// The table entries for Gemini CLI: the JSONL log, then the legacy whole-file JSON (one
/// framework name, two formats).
pub fn specs() -> Vec<FrameworkSpec> {
    vec![
        FrameworkSpec {
            name: "gemini-cli",
            display: "Gemini CLI",
            env_vars: &["GEMINI_CLI_HOME"],
            roots,
            matches,
            reader: Reader::Lines(new_parser),
        },
        FrameworkSpec {
            name: "gemini-cli",
            display: "Gemini CLI",
            env_vars: &["GEMINI_CLI_HOME"],
            roots,
            matches: matches_legacy,
            reader: Reader::WholeFile(read_legacy),
        },
    ]
}

/// `${GEMINI_CLI_HOME:-~}/.gemini/tmp`.
fn roots(env: &Env) -> Vec<PathBuf> {
    let home = env
        .var("GEMINI_CLI_HOME")
        .map_or_else(|| env.home.clone(), PathBuf::from);
    vec![home.join(".gemini").join("tmp")]
}

/// `<project>/chats/session-*.jsonl`, and sub-agent logs `<project>/chats/<parent>/<id>.jsonl`.
fn matches(rel: &Path) -> bool {
    match common::parts(rel).as_slice() {
        [_, chats, file] => {
            chats == "chats" && file.starts_with("session-") && file.ends_with(".jsonl")
        }
        [_, chats, _, file] => chats == "chats" && file.ends_with(".jsonl"),
        _ => false,
    }
}

/// Legacy `<project hash>/chats/session-*.json`.
fn matches_legacy(rel: &Path) -> bool {
    match common::parts(rel).as_slice() {
        [_, chats, file] => {
            chats == "chats" && file.starts_with("session-") && file.ends_with(".json")
        }
        _ => false,
    }
}

fn new_parser(path: &Path, saved: Option<Value>) -> Box<dyn LineParser> {
    Box::new(common::restore(saved, || {
        let (who, cwd) = locate(path);
        State {
            who,
            cwd,
            ..State::default()
        }
    }))
}

/// The session (file stem until the metadata line names it; for a sub-agent log, the parent
/// from its folder) and the project folder, from `.project_root` or `projects.json`.
fn locate(path: &Path) -> (Who, Option<String>) {
    let stem = common::stem(path);
    let mut chats = path.parent();
    let mut parent = None;
    if let Some(dir) = chats
        && dir.file_name().is_some_and(|n| n != "chats")
    {
        parent = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        chats = dir.parent();
    }
    let project_dir = chats
        .filter(|c| c.file_name().is_some_and(|n| n == "chats"))
        .and_then(Path::parent);
    let cwd = project_dir.and_then(project_root);
    (
        Who {
            session_id: stem,
            parent,
        },
        cwd,
    )
}

/// The project folder a `tmp/<slug>` directory stands for: its `.project_root` marker, or the
/// reverse of `~/.gemini/projects.json` (`{"projects": {"<path>": "<slug>"}}`).
fn project_root(dir: &Path) -> Option<String> {
    if let Some(text) = common::read_small(&dir.join(".project_root")) {
        let t = text.trim();
        if !t.is_empty() {
            return Some(t.to_owned());
        }
    }
    let slug = dir.file_name()?.to_string_lossy().into_owned();
    let gemini = dir.parent()?.parent()?;
    let registry: Value =
        serde_json::from_str(&common::read_small(&gemini.join("projects.json"))?).ok()?;
    registry
        .get("projects")?
        .as_object()?
        .iter()
        .find_map(|(path, v)| (v.as_str() == Some(slug.as_str())).then(|| path.clone()))
}

/// How many ids of emitted messages are remembered (to ignore their late updates and to
/// recognise a rewind into an emitted turn); older ones are forgotten.
const DONE_KEPT: usize = 4096;

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    who: Who,
    meta_seen: bool,
    line: u64,
    cwd: Option<String>,
    /// Messages not yet emitted, last version per id, in first-seen order.
    msgs: Vec<Value>,
    /// Ids of messages already emitted in a turn.
    done: Vec<String>,
}

impl LineParser for State {
    fn feed(&mut self, line: &str, out: &mut Vec<Turn>) -> Result<(), String> {
        self.line += 1;
        let Some(o) = common::parse_object(line, self.line)? else {
            return Ok(());
        };
        let v = Value::Object(o);
        if let Some(target) = v.get("$rewindTo") {
            let Some(id) = target.as_str() else {
                return Err(format!(
                    "line {}: `$rewindTo` without a message id",
                    self.line
                ));
            };
            self.rewind(id);
            return Ok(());
        }
        if let Some(set) = v.get("$set") {
            self.set(set);
            return Ok(());
        }
        if let Some(id) = ne(&v, "id") {
            if s(&v, "type").is_none() {
                return Err(format!("line {}: message without a type", self.line));
            }
            let id = id.to_owned();
            self.upsert(id, v, out);
            return Ok(());
        }
        if v.get("sessionId").is_some() {
            self.metadata(&v);
            return Ok(());
        }
        Err(format!("line {}: unknown record", self.line))
    }

    fn open_turn(&self) -> Option<Turn> {
        build_turn(&self.who, self.cwd.as_deref(), &self.msgs, false)
    }

    fn save(&self) -> Value {
        common::save(self)
    }
}

impl State {
    fn metadata(&mut self, v: &Value) {
        if !self.meta_seen {
            self.meta_seen = true;
            if let Some(id) = ne(v, "sessionId") {
                self.who.session_id = id.to_owned();
            }
        }
        self.directories(v);
    }

    fn directories(&mut self, v: &Value) {
        if let Some(dir) = v
            .get("directories")
            .and_then(Value::as_array)
            .and_then(|d| d.first())
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
        {
            self.cwd = Some(dir.to_owned());
        }
    }

    fn set(&mut self, set: &Value) {
        self.directories(set);
        if let Some(all) = set.get("messages").and_then(Value::as_array) {
            // A checkpoint: the whole conversation, replacing what was there.
            self.msgs = all
                .iter()
                .filter(|m| ne(m, "id").is_some_and(|id| !self.done.iter().any(|d| d == id)))
                .cloned()
                .collect();
        }
    }

    fn rewind(&mut self, id: &str) {
        if let Some(pos) = self.msgs.iter().position(|m| s(m, "id") == Some(id)) {
            self.msgs.truncate(pos);
        } else if self.done.iter().any(|d| d == id) {
            // Back into a turn already emitted: everything still open is after it.
            self.msgs.clear();
        }
    }

    fn upsert(&mut self, id: String, v: Value, out: &mut Vec<Turn>) {
        if self.done.contains(&id) {
            return;
        }
        if let Some(slot) = self
            .msgs
            .iter_mut()
            .find(|m| s(m, "id") == Some(id.as_str()))
        {
            *slot = v;
            return;
        }
        if s(&v, "type") == Some("user") && self.msgs.iter().any(|m| s(m, "type") == Some("user")) {
            if let Some(turn) = build_turn(&self.who, self.cwd.as_deref(), &self.msgs, true) {
                out.push(turn);
            }
            for m in self.msgs.drain(..) {
                if let Some(done) = ne(&m, "id") {
                    self.done.push(done.to_owned());
                }
            }
            if self.done.len() > DONE_KEPT {
                let excess = self.done.len() - DONE_KEPT;
                self.done.drain(..excess);
            }
        }
        self.msgs.push(v);
    }
}

/// Text of a Gemini `PartListUnion`: a string, a part `{text}`, or a list of them (thought
/// parts skipped).
fn parts_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|p| match p {
                Value::String(t) => Some(t.clone()),
                Value::Object(_) if p.get("thought") != Some(&Value::Bool(true)) => {
                    s(p, "text").map(str::to_owned)
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(p @ Value::Object(_)) => s(p, "text").unwrap_or_default().to_owned(),
        _ => String::new(),
    }
}

/// The output text of a tool call's `result` parts (`functionResponse.response.output` or
/// `.error`), falling back to `resultDisplay`.
fn tool_result(call: &Value) -> String {
    let mut texts = Vec::new();
    if let Some(parts) = call.get("result").and_then(Value::as_array) {
        for part in parts {
            if let Some(resp) = part.get("functionResponse").and_then(|f| f.get("response")) {
                let t = match (resp.get("output"), resp.get("error")) {
                    (Some(o), _) if !o.is_null() => common::value_text(o),
                    (_, Some(e)) if !e.is_null() => common::value_text(e),
                    _ => resp.to_string(),
                };
                texts.push(t);
            } else if let Some(t) = s(part, "text") {
                texts.push(t.to_owned());
            }
        }
    }
    if texts.is_empty()
        && let Some(display) = call.get("resultDisplay").filter(|d| !d.is_null())
    {
        texts.push(common::value_text(display));
    }
    texts.join("\n")
}

/// One turn from a user message and the messages after it (messages before the first user
/// message are dropped).
fn build_turn(who: &Who, cwd: Option<&str>, msgs: &[Value], complete: bool) -> Option<Turn> {
    let start = msgs.iter().position(|m| s(m, "type") == Some("user"))?;
    let user = &msgs[start];
    let at = parse_ts(user.get("timestamp"));
    let id = ne(user, "id").unwrap_or_default().to_owned();
    let mut turn = common::new_turn(who, id, cwd.map(str::to_owned), None, at);
    let content = parts_text(user.get("content"));
    let display = user.get("displayContent").map(|d| parts_text(Some(d)));
    match display.filter(|d| !d.trim().is_empty()) {
        Some(display) => {
            common::set_request(&mut turn, &display);
            // What was sent beyond what the user typed is injected context (hooks).
            let extra = content.replacen(display.as_str(), "", 1);
            if !extra.trim().is_empty() {
                common::push_injected(&mut turn.steps, "hook", &extra);
            }
        }
        None => {
            common::set_request(&mut turn, &content);
        }
    }
    let mut last_done = false;
    for m in &msgs[start + 1..] {
        turn.ended_at = common::later(turn.ended_at, parse_ts(m.get("timestamp")));
        match s(m, "type") {
            Some("gemini") => {
                if let Some(model) = ne(m, "model") {
                    turn.model = Some(model.to_owned());
                }
                common::push_text(&mut turn.steps, &parts_text(m.get("content")), false);
                let mut all_terminal = true;
                for call in m
                    .get("toolCalls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let status = s(call, "status").unwrap_or_default();
                    let terminal = matches!(status, "success" | "error" | "cancelled");
                    all_terminal &= terminal;
                    turn.ended_at = common::later(turn.ended_at, parse_ts(call.get("timestamp")));
                    turn.steps.push(Step::Tool {
                        id: s(call, "id").map(str::to_owned),
                        name: s(call, "name").unwrap_or("unknown").to_owned(),
                        input: call.get("args").cloned().unwrap_or(Value::Null),
                        output: terminal.then(|| tool_result(call)),
                        is_error: matches!(status, "error" | "cancelled"),
                    });
                    if status == "cancelled" {
                        raise(&mut turn.outcome, Outcome::Interrupted);
                    }
                }
                last_done = all_terminal;
            }
            Some("error") => raise(&mut turn.outcome, Outcome::Error),
            // info and warning messages are the CLI's own notices.
            _ => {}
        }
    }
    if complete && last_done {
        raise(&mut turn.outcome, Outcome::Success);
    }
    turn.complete = complete;
    common::tidy(&mut turn);
    Some(turn)
}

/// Reads a legacy single-JSON session (`ConversationRecord`): every turn, the last one marked
/// complete only if its last reply has no tool call still running.
fn read_legacy(path: &Path, bytes: &[u8]) -> Result<Vec<Turn>, String> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("{}: malformed session JSON ({e})", path.display()))?;
    let msgs = v
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{}: no messages array", path.display()))?;
    let (mut who, mut cwd) = locate(path);
    if let Some(id) = ne(&v, "sessionId") {
        who.session_id = id.to_owned();
    }
    if let Some(dir) = v
        .get("directories")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .and_then(Value::as_str)
    {
        cwd = Some(dir.to_owned());
    }
    let starts: Vec<usize> = msgs
        .iter()
        .enumerate()
        .filter(|(_, m)| s(m, "type") == Some("user"))
        .map(|(i, _)| i)
        .collect();
    let mut turns = Vec::new();
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(msgs.len());
        let last = k + 1 == starts.len();
        let slice = &msgs[start..end];
        let finished = !last || last_reply_settled(slice);
        if let Some(turn) = build_turn(&who, cwd.as_deref(), slice, finished) {
            turns.push(turn);
        }
    }
    Ok(turns)
}

/// Whether the last message is a reply whose tool calls have all finished.
fn last_reply_settled(msgs: &[Value]) -> bool {
    let Some(last) = msgs.last() else {
        return false;
    };
    s(last, "type") == Some("gemini")
        && last
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .all(|c| matches!(s(c, "status"), Some("success" | "error" | "cancelled")))
}
