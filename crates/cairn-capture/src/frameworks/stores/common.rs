//! Helpers shared by the store readers: lenient JSON access, timestamps, SQLite schema probing,
//! content-block parsing and a turn builder.
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use cairn_core::{Outcome, Timestamp};
use chrono::{DateTime, NaiveDateTime, Utc};
use rusqlite::types::ValueRef;
use serde_json::Value;

use crate::spec::Env;
use crate::turn::{Step, Turn, split_injected};

// ---------------------------------------------------------------------------------------------
// Paths

/// `$XDG_DATA_HOME` or `~/.local/share` on every OS: the convention of tools built on the
/// `xdg-basedir` package (OpenCode, Kilo, Amp), which does not switch to `~/Library` or
/// `%APPDATA%`.
pub(crate) fn xdg_data_home(env: &Env) -> PathBuf {
    env.dir_from("XDG_DATA_HOME", ".local/share")
}

/// The XDG data home and, where it differs, the platform data home (both are probed).
pub(crate) fn data_homes(env: &Env) -> Vec<PathBuf> {
    let mut v = vec![xdg_data_home(env)];
    let platform = env.data_home();
    if !v.contains(&platform) {
        v.push(platform);
    }
    v
}

/// The path's components as strings (lossy).
pub(crate) fn components(rel: &Path) -> Vec<String> {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect()
}

/// A `file://` URI (or a plain path) as a path string.
pub(crate) fn uri_to_path(s: &str) -> String {
    let Some(rest) = s.strip_prefix("file://") else {
        return s.to_owned();
    };
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let decoded = percent_decode(rest);
    // `file:///C:/x` on Windows.
    let b = decoded.as_bytes();
    if b.len() > 3 && b[0] == b'/' && b[2] == b':' && b[1].is_ascii_alphabetic() {
        return decoded[1..].to_owned();
    }
    decoded
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(hi), Some(lo)) = (hex_digit(b[i + 1]), hex_digit(b[i + 2]))
        {
            out.push(hi * 16 + lo);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of one ASCII hex digit.
pub(crate) fn hex_digit(b: u8) -> Option<u8> {
    (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

// ---------------------------------------------------------------------------------------------
// JSON

/// Parses bytes as JSON, tolerating a UTF-8 byte-order mark and surrounding whitespace.
pub(crate) fn parse_json(bytes: &[u8]) -> Result<Value, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"))
}

/// A string field.
pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A non-empty string field, owned.
pub(crate) fn string_of(v: &Value, key: &str) -> Option<String> {
    str_of(v, key)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A value at a path of keys.
pub(crate) fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for k in path {
        cur = cur.get(*k)?;
    }
    Some(cur)
}

/// A non-empty string at a path of keys.
pub(crate) fn str_at(v: &Value, path: &[&str]) -> Option<String> {
    at(v, path)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// An id that may be stored as a string or a number.
pub(crate) fn id_of(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The text of a message `content`: a string, or the `text` of an array of blocks.
pub(crate) fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|b| match b {
                Value::String(s) => Some(s.as_str()),
                _ if matches!(
                    str_of(b, "type"),
                    None | Some("text" | "input_text" | "output_text")
                ) =>
                {
                    str_of(b, "text")
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A tool output as text: strings stay, arrays of text blocks are joined, objects with an
/// `output`/`content`/`text` field use it, anything else is rendered as JSON.
pub(crate) fn output_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let texts: Vec<String> = items
                .iter()
                .filter_map(|b| match b {
                    Value::String(s) => Some(s.clone()),
                    Value::Object(_) => str_of(b, "text")
                        .or_else(|| str_of(b, "content"))
                        .map(str::to_owned)
                        .or_else(|| output_text(b.get("content")?)),
                    _ => None,
                })
                .collect();
            if texts.is_empty() && !items.is_empty() {
                Some(v.to_string())
            } else {
                Some(texts.join("\n"))
            }
        }
        Value::Object(_) => {
            for key in ["output", "content", "text", "result"] {
                if let Some(t) = v.get(key).and_then(output_text) {
                    return Some(t);
                }
            }
            Some(v.to_string())
        }
        other => Some(other.to_string()),
    }
}

/// A tool input that may be stored as a JSON string: parsed when it is JSON, kept as a string
/// otherwise.
pub(crate) fn input_value(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => {
            let t = s.trim();
            if t.starts_with('{') || t.starts_with('[') {
                serde_json::from_str(t).unwrap_or_else(|_| Value::String(s.clone()))
            } else if t.is_empty() {
                Value::Null
            } else {
                Value::String(s.clone())
            }
        }
        Some(v) => v.clone(),
        None => Value::Null,
    }
}

/// A short stable hash (FNV-1a, 64 bits) as hex, for content fingerprints.
pub(crate) fn fnv_hex(parts: &[&[u8]]) -> String {
    let mut h = cairn_text::hash::Fnv1a::default();
    for p in parts {
        h.write(p).write(&[0xff]);
    }
    h.hex()
}

// ---------------------------------------------------------------------------------------------
// Time

/// Epoch milliseconds.
pub(crate) fn ts_ms(ms: i64) -> Option<Timestamp> {
    DateTime::<Utc>::from_timestamp_millis(ms)
}

/// Epoch seconds or milliseconds, told apart by magnitude (some stores mix them).
pub(crate) fn epoch_to_ms(n: i64) -> i64 {
    if n.unsigned_abs() < 100_000_000_000 {
        n.saturating_mul(1000)
    } else {
        n
    }
}

/// Epoch seconds or milliseconds.
pub(crate) fn ts_auto(n: i64) -> Option<Timestamp> {
    if n <= 0 {
        return None;
    }
    ts_ms(epoch_to_ms(n))
}

/// A timestamp from text: RFC 3339, or SQLite's `YYYY-MM-DD HH:MM:SS[.fff]` (UTC), or digits.
pub(crate) fn ts_text(s: &str) -> Option<Timestamp> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    for fmt in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, fmt) {
            return Some(t.and_utc());
        }
    }
    s.parse::<i64>().ok().and_then(ts_auto)
}

/// A timestamp from JSON: a number (seconds or milliseconds) or text.
pub(crate) fn ts_json(v: Option<&Value>) -> Option<Timestamp> {
    match v? {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .and_then(ts_auto),
        Value::String(s) => ts_text(s),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// SQLite

/// The columns of a table, or `None` when the table does not exist.
pub(crate) fn table_columns(
    conn: &rusqlite::Connection,
    table: &str,
) -> Result<Option<HashSet<String>>, String> {
    let sql = format!("PRAGMA table_info(\"{}\")", table.replace('"', "\"\""));
    let mut stmt = conn
        .prepare(&sql)
        .map_err(|e| format!("reading the schema of {table}: {e}"))?;
    let names = stmt
        .query_map([], |row| row.get::<_, String>(1))
        .map_err(|e| format!("reading the schema of {table}: {e}"))?
        .collect::<Result<HashSet<String>, _>>()
        .map_err(|e| format!("reading the schema of {table}: {e}"))?;
    Ok(if names.is_empty() { None } else { Some(names) })
}

/// `name` when the table has that column, `NULL` otherwise (for building tolerant selects).
pub(crate) fn col(cols: &HashSet<String>, name: &str) -> String {
    if cols.contains(name) {
        format!("\"{name}\"")
    } else {
        "NULL".to_owned()
    }
}

/// A column value as text (text as is, blobs as lossy UTF-8, numbers formatted).
pub(crate) fn value_text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}

/// A column value as raw bytes.
pub(crate) fn value_bytes(v: ValueRef<'_>) -> Option<Vec<u8>> {
    match v {
        ValueRef::Null => None,
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(t.to_vec()),
        ValueRef::Integer(i) => Some(i.to_string().into_bytes()),
        ValueRef::Real(f) => Some(f.to_string().into_bytes()),
    }
}

/// A column value as an integer (numeric text is parsed).
pub(crate) fn value_i64(v: ValueRef<'_>) -> Option<i64> {
    match v {
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(f) => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// Starts a read transaction so every query of one pass sees the same snapshot (WAL). When the
/// connection is already inside a transaction, reading goes on without one.
/// An empty batch that keeps the previous high-water mark until the reader moves it.
pub(crate) fn new_batch(since: Option<&str>) -> crate::spec::SqliteBatch {
    crate::spec::SqliteBatch {
        high_water: since.map(str::to_owned),
        ..Default::default()
    }
}

pub(crate) fn snapshot(conn: &rusqlite::Connection) -> Option<rusqlite::Transaction<'_>> {
    conn.unchecked_transaction().ok()
}

/// A mark made of a high-water time and the fingerprints of the sessions updated exactly at
/// that time, for stores whose clocks tick in whole seconds (an update within the same second
/// as the last read would otherwise be missed). Text form: `<ms>|<id>=<fp>,<id>=<fp>`.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct BoundaryMark {
    /// The high-water time (epoch ms).
    pub(crate) t: i64,
    /// Fingerprints of the sessions whose update time equals `t`.
    pub(crate) fps: BTreeMap<String, String>,
}

impl BoundaryMark {
    /// Parses a saved mark (a bare number is accepted too).
    pub(crate) fn parse(s: &str) -> Option<Self> {
        let (t, rest) = s.split_once('|').unwrap_or((s, ""));
        let t = t.trim().parse().ok()?;
        let fps = rest
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Some(Self { t, fps })
    }

    /// The text form.
    pub(crate) fn render(&self) -> String {
        let fps: Vec<String> = self.fps.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}|{}", self.t, fps.join(","))
    }
}

// ---------------------------------------------------------------------------------------------
// Content blocks (Anthropic-style and AI-SDK-style)

/// One understood content block.
#[derive(Debug, Clone)]
pub(crate) enum Block {
    /// Text.
    Text(String),
    /// A tool call.
    ToolUse {
        /// Call id.
        id: Option<String>,
        /// Tool name.
        name: String,
        /// Input.
        input: Value,
    },
    /// A tool result.
    ToolResult {
        /// Call id it answers.
        id: Option<String>,
        /// Output text.
        output: Option<String>,
        /// Whether it failed.
        is_error: bool,
    },
    /// Reasoning, images and anything else (ignored).
    Other,
}

/// Splits a message `content` into blocks (a plain string is one text block).
pub(crate) fn blocks(content: Option<&Value>) -> Vec<Block> {
    match content {
        Some(Value::String(s)) => vec![Block::Text(s.clone())],
        Some(Value::Array(items)) => items.iter().map(block).collect(),
        _ => Vec::new(),
    }
}

fn block(b: &Value) -> Block {
    if let Value::String(s) = b {
        return Block::Text(s.clone());
    }
    match str_of(b, "type").unwrap_or("text") {
        "text" | "input_text" | "output_text" => {
            Block::Text(str_of(b, "text").unwrap_or_default().to_owned())
        }
        "tool_use" | "tool-call" | "tool_call" | "function_call" | "toolCall" => Block::ToolUse {
            id: id_of(b, "id")
                .or_else(|| id_of(b, "toolCallId"))
                .or_else(|| id_of(b, "call_id")),
            name: string_of(b, "name")
                .or_else(|| string_of(b, "toolName"))
                .unwrap_or_else(|| "unknown".to_owned()),
            input: input_value(
                b.get("input")
                    .or_else(|| b.get("args"))
                    .or_else(|| b.get("arguments")),
            ),
        },
        "tool_result" | "tool-result" | "function_call_output" | "toolResult" => {
            let status = str_at(b, &["run", "status"]).unwrap_or_default();
            let output = b
                .get("content")
                .or_else(|| b.get("result"))
                .or_else(|| b.get("output"))
                .or_else(|| at(b, &["run", "result"]))
                .or_else(|| at(b, &["run", "progress"]))
                .or_else(|| at(b, &["run", "error"]))
                .and_then(output_text);
            Block::ToolResult {
                id: id_of(b, "tool_use_id")
                    .or_else(|| id_of(b, "toolUseID"))
                    .or_else(|| id_of(b, "toolCallId"))
                    .or_else(|| id_of(b, "call_id"))
                    .or_else(|| id_of(b, "id")),
                output,
                is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false)
                    || b.get("isError").and_then(Value::as_bool).unwrap_or(false)
                    || matches!(
                        status.as_str(),
                        "error" | "cancelled" | "canceled" | "rejected-by-user" | "rejected"
                    ),
            }
        }
        _ => Block::Other,
    }
}

// ---------------------------------------------------------------------------------------------
// Turn builder

/// Builds the turns of one session from its messages in order.
#[derive(Debug)]
pub(crate) struct TurnBuilder {
    session_id: String,
    parent: Option<String>,
    cwd: Option<String>,
    turns: Vec<Turn>,
    pending: Vec<Step>,
}

impl TurnBuilder {
    /// A builder for one session.
    pub(crate) fn new(session_id: &str, parent: Option<String>, cwd: Option<String>) -> Self {
        Self {
            session_id: session_id.to_owned(),
            parent,
            cwd,
            turns: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Changes the working directory for the turns that follow.
    pub(crate) fn set_cwd(&mut self, cwd: Option<String>) {
        if cwd.is_some() {
            self.cwd = cwd;
        }
    }

    /// Starts a turn with the user's request. Cairn's own notes are moved out of the request
    /// into injected steps. The previous turn, if any, is over.
    pub(crate) fn start(&mut self, message_id: &str, request: &str, at: Option<Timestamp>) {
        if let Some(prev) = self.turns.last_mut() {
            prev.complete = true;
        }
        let (request, notes) = split_injected(request);
        let mut steps = std::mem::take(&mut self.pending);
        steps.extend(notes.into_iter().map(|text| Step::Injected {
            source: "cairn".to_owned(),
            text,
        }));
        self.turns.push(Turn {
            message_id: message_id.to_owned(),
            session_id: self.session_id.clone(),
            parent_session: self.parent.clone(),
            cwd: self.cwd.clone(),
            model: None,
            started_at: at,
            ended_at: at,
            outcome: Outcome::Unknown,
            request,
            steps,
            complete: false,
        });
    }

    /// Whether a turn has been started.
    pub(crate) fn has_turn(&self) -> bool {
        !self.turns.is_empty()
    }

    /// The current turn (one with an empty request is started for replies seen before any
    /// request, so nothing is lost).
    pub(crate) fn cur(&mut self) -> &mut Turn {
        if self.turns.is_empty() {
            self.start("start", "", None);
        }
        let n = self.turns.len();
        &mut self.turns[n - 1]
    }

    /// Context injected before the next request (kept for the next turn).
    pub(crate) fn inject_pending(&mut self, source: &str, text: &str) {
        let text = text.trim();
        if !text.is_empty() {
            self.pending.push(Step::Injected {
                source: source.to_owned(),
                text: text.to_owned(),
            });
        }
    }

    /// Context injected into the current turn.
    pub(crate) fn inject(&mut self, source: &str, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let step = Step::Injected {
            source: source.to_owned(),
            text: text.to_owned(),
        };
        self.cur().steps.push(step);
    }

    /// Assistant text.
    pub(crate) fn text(&mut self, text: &str) {
        let text = text.trim();
        if !text.is_empty() {
            self.cur().steps.push(Step::Text {
                text: text.to_owned(),
            });
        }
    }

    /// A tool call (its result may follow).
    pub(crate) fn tool(&mut self, id: Option<String>, name: &str, input: Value) {
        self.cur().steps.push(Step::Tool {
            id,
            name: name.to_owned(),
            input,
            output: None,
            is_error: false,
        });
    }

    /// A complete tool step.
    pub(crate) fn tool_done(
        &mut self,
        id: Option<String>,
        name: &str,
        input: Value,
        output: Option<String>,
        is_error: bool,
    ) {
        self.cur().steps.push(Step::Tool {
            id,
            name: name.to_owned(),
            input,
            output,
            is_error,
        });
    }

    /// A tool result, paired with its call by id (searched from the newest turn back). A
    /// result whose call is unknown becomes a tool step of its own.
    pub(crate) fn tool_result(
        &mut self,
        id: Option<&str>,
        name: Option<&str>,
        output: Option<String>,
        is_error: bool,
    ) {
        if let Some(id) = id {
            for turn in self.turns.iter_mut().rev() {
                for step in turn.steps.iter_mut().rev() {
                    if let Step::Tool {
                        id: Some(sid),
                        output: out,
                        is_error: err,
                        ..
                    } = step
                        && sid == id
                    {
                        if output.is_some() {
                            *out = output;
                        }
                        *err |= is_error;
                        return;
                    }
                }
            }
        }
        let step = Step::Tool {
            id: id.map(str::to_owned),
            name: name.unwrap_or("unknown").to_owned(),
            input: Value::Null,
            output,
            is_error,
        };
        self.cur().steps.push(step);
    }

    /// A tool result paired with the oldest unanswered call of that name in the current turn
    /// (for stores whose tool calls carry no id).
    pub(crate) fn tool_result_by_name(
        &mut self,
        name: &str,
        output: Option<String>,
        is_error: bool,
    ) {
        let turn = self.cur();
        for step in turn.steps.iter_mut() {
            if let Step::Tool {
                name: n,
                output: out @ None,
                is_error: err,
                ..
            } = step
                && n == name
            {
                *out = output.or_else(|| Some(String::new()));
                *err |= is_error;
                return;
            }
        }
        turn.steps.push(Step::Tool {
            id: None,
            name: name.to_owned(),
            input: Value::Null,
            output,
            is_error,
        });
    }

    /// Records the model (the last one seen wins).
    pub(crate) fn model(&mut self, model: Option<String>) {
        if let Some(m) = model.filter(|m| !m.trim().is_empty()) {
            self.cur().model = Some(m);
        }
    }

    /// Records activity at a time (moves `ended_at`).
    pub(crate) fn touch(&mut self, at: Option<Timestamp>) {
        if let Some(at) = at {
            let turn = self.cur();
            if turn.started_at.is_none() {
                turn.started_at = Some(at);
            }
            if turn.ended_at.is_none_or(|e| e < at) {
                turn.ended_at = Some(at);
            }
        }
    }

    /// Sets how the current turn ended.
    pub(crate) fn end(&mut self, outcome: Outcome, complete: bool) {
        let turn = self.cur();
        turn.outcome = outcome;
        turn.complete = complete;
    }

    /// The turns built.
    pub(crate) fn finish(self) -> Vec<Turn> {
        self.turns
    }
}

/// For stores that write no turn-end record: a turn followed by another request is over; it
/// succeeded when the agent's last step was text, failed when its last step was a failed tool,
/// was interrupted when its last tool never answered. The last turn is complete when it ends
/// with text and every tool answered (`infer_last`). Turns whose outcome is already known keep
/// it.
pub(crate) fn infer_outcomes(turns: &mut [Turn], infer_last: bool) {
    let n = turns.len();
    for (i, turn) in turns.iter_mut().enumerate() {
        let last = i + 1 == n;
        if turn.outcome != Outcome::Unknown {
            continue;
        }
        let all_answered = turn.steps.iter().all(|s| {
            !matches!(
                s,
                Step::Tool {
                    output: None,
                    is_error: false,
                    ..
                }
            )
        });
        let last_step = turn
            .steps
            .iter()
            .rev()
            .find(|s| !matches!(s, Step::Injected { .. }));
        if last {
            if !infer_last {
                continue;
            }
            if matches!(last_step, Some(Step::Text { .. })) && all_answered {
                turn.complete = true;
                turn.outcome = Outcome::Success;
            }
            continue;
        }
        turn.complete = true;
        turn.outcome = match last_step {
            Some(Step::Text { .. }) => Outcome::Success,
            Some(Step::Tool { is_error: true, .. }) => Outcome::Error,
            Some(Step::Tool { output: None, .. }) => Outcome::Interrupted,
            _ => Outcome::Unknown,
        };
    }
}

/// Pulls the text between `<tag>` and `</tag>` (the first occurrence), trimmed.
pub(crate) fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close).map_or(text.len(), |e| start + e);
    Some(text[start..end].trim())
}

/// Removes every `<tag>…</tag>` section (an unclosed one runs to the end) and returns the rest
/// and the removed inner texts.
pub(crate) fn strip_sections(text: &str, open: &str, close: &str) -> (String, Vec<String>) {
    let mut rest = text;
    let mut kept = String::new();
    let mut removed = Vec::new();
    while let Some(s) = rest.find(open) {
        kept.push_str(&rest[..s]);
        let after = &rest[s + open.len()..];
        match after.find(close) {
            Some(e) => {
                removed.push(after[..e].trim().to_owned());
                rest = &after[e + close.len()..];
            }
            None => {
                removed.push(after.trim().to_owned());
                rest = "";
            }
        }
    }
    kept.push_str(rest);
    (kept.trim().to_owned(), removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_keep_their_stored_values() {
        // Fingerprints are stored with cursors: each part, then a 0xff byte, FNV-1a.
        assert_eq!(fnv_hex(&[b"ab", b"c"]), "20ba9b3025a8b421");
        assert_eq!(fnv_hex(&[]), "cbf29ce484222325");
    }

    #[test]
    fn uris_and_percent_escapes_never_split_characters() {
        assert_eq!(uri_to_path("file:///home/dev/my%20app"), "/home/dev/my app");
        assert_eq!(uri_to_path("file:///C:/work/x"), "C:/work/x");
        assert_eq!(uri_to_path("/plain/path"), "/plain/path");
        assert_eq!(uri_to_path("file:///a/%aé/%zz/%"), "/a/%aé/%zz/%");
        assert_eq!(uri_to_path("file:///caf%C3%A9"), "/café");
    }

    #[test]
    fn sections_and_marks() {
        assert_eq!(between("x <t>\n a \n</t> y", "<t>", "</t>"), Some("a"));
        assert_eq!(between("x <t> open", "<t>", "</t>"), Some("open"));
        let (kept, removed) = strip_sections("a<e>1</e>b<e>2", "<e>", "</e>");
        assert_eq!(
            (kept.as_str(), removed),
            ("ab", vec!["1".to_owned(), "2".to_owned()])
        );
        let m = BoundaryMark {
            t: 5,
            fps: [("s1".to_owned(), "ab".to_owned())].into(),
        };
        assert_eq!(BoundaryMark::parse(&m.render()), Some(m));
        assert_eq!(BoundaryMark::parse("17").map(|m| m.t), Some(17));
        assert_eq!(BoundaryMark::parse("x|y"), None);
    }

    #[test]
    fn timestamps_in_every_shape() {
        let ms = |t: Option<Timestamp>| t.map(|t| t.timestamp_millis());
        assert_eq!(ms(ts_text("2026-08-20 10:00:00")), Some(1_787_220_000_000));
        assert_eq!(
            ms(ts_text("2026-08-20T10:00:00.500Z")),
            Some(1_787_220_000_500)
        );
        assert_eq!(ms(ts_text("1787220000")), Some(1_787_220_000_000));
        assert_eq!(ms(ts_auto(1_787_220_000_123)), Some(1_787_220_000_123));
        assert_eq!(
            ms(ts_json(Some(&serde_json::json!(1_787_220_000.5)))),
            Some(1_787_220_000_000)
        );
        assert_eq!(ts_text("yesterday"), None);
        assert_eq!(ts_auto(0), None);
    }

    #[test]
    fn outcomes_are_inferred_only_where_unknown() {
        let mut b = TurnBuilder::new("s", None, None);
        b.start("1", "a", None);
        b.text("done");
        b.start("2", "b", None);
        b.tool(Some("t".to_owned()), "x", Value::Null);
        b.start("3", "c", None);
        b.tool_done(None, "y", Value::Null, Some("boom".to_owned()), true);
        b.start("4", "d", None);
        b.text("working");
        let mut turns = b.finish();
        infer_outcomes(&mut turns, true);
        let got: Vec<(Outcome, bool)> = turns.iter().map(|t| (t.outcome, t.complete)).collect();
        assert_eq!(
            got,
            [
                (Outcome::Success, true),
                (Outcome::Interrupted, true),
                (Outcome::Error, true),
                (Outcome::Success, true)
            ]
        );
    }

    #[test]
    fn tool_results_pair_by_id_across_turns_or_stand_alone() {
        let mut b = TurnBuilder::new("s", None, None);
        b.start("1", "a", None);
        b.tool(Some("t1".to_owned()), "read", Value::Null);
        b.start("2", "b", None);
        b.tool_result(Some("t1"), None, Some("late".to_owned()), false);
        b.tool_result(Some("t9"), Some("grep"), Some("orphan".to_owned()), true);
        let turns = b.finish();
        assert!(matches!(&turns[0].steps[0], Step::Tool { output: Some(o), .. } if o == "late"));
        assert!(matches!(&turns[1].steps[0],
            Step::Tool { name, is_error: true, .. } if name == "grep"));
    }
}
