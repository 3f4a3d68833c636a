//! Helpers shared by the line parsers: JSON access, timestamps, turn building, tool pairing,
//! injected-context splitting and the saved-state round trip.
use std::path::{Component, Path};

use cairn_core::{Outcome, Timestamp};
use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::turn::{Step, Turn, split_injected};

/// A JSON object line.
pub(crate) type Obj = Map<String, Value>;

/// Parses one line as a JSON object. A blank line is `Ok(None)` (skipped silently); anything
/// that is not a JSON object is a warning.
pub(crate) fn parse_object(line: &str, line_no: u64) -> Result<Option<Obj>, String> {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(_) => Err(format!("line {line_no}: not a JSON object")),
        Err(e) => Err(format!("line {line_no}: malformed JSON ({e})")),
    }
}

/// A string field.
pub(crate) fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A non-empty string field.
pub(crate) fn ne<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    s(v, key).filter(|x| !x.trim().is_empty())
}

/// A string field of an object line.
pub(crate) fn os<'a>(o: &'a Obj, key: &str) -> Option<&'a str> {
    o.get(key).and_then(Value::as_str)
}

/// A non-empty string field of an object line, owned.
pub(crate) fn ons(o: &Obj, key: &str) -> Option<String> {
    os(o, key)
        .filter(|x| !x.trim().is_empty())
        .map(str::to_owned)
}

/// Whether a boolean field is true.
pub(crate) fn truthy(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Bool(true)))
}

/// An ISO-8601 string (with or without an offset) or an epoch number (seconds, milliseconds
/// or microseconds, told apart by magnitude) as UTC.
pub(crate) fn parse_ts(v: Option<&Value>) -> Option<Timestamp> {
    match v? {
        Value::String(text) => parse_ts_str(text),
        Value::Number(n) => {
            let x = n.as_f64()?;
            let ms = if x > 1e14 {
                x / 1000.0
            } else if x > 1e11 {
                x
            } else {
                x * 1000.0
            };
            // Epoch milliseconds as an integer; the range check keeps the cast exact enough.
            if !ms.is_finite() || ms.abs() > 1e16 {
                return None;
            }
            DateTime::from_timestamp_millis(ms as i64)
        }
        _ => None,
    }
}

/// An ISO-8601 text as UTC; a text without an offset is taken as UTC.
pub(crate) fn parse_ts_str(text: &str) -> Option<Timestamp> {
    let t = text.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Some(d.with_timezone(&Utc));
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if let Ok(n) = NaiveDateTime::parse_from_str(t, fmt) {
            return Some(n.and_utc());
        }
    }
    None
}

/// The later of two optional times.
pub(crate) fn later(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// Raises a turn's outcome: an error or an interruption is never replaced by success, and
/// `Unknown` never replaces anything.
pub(crate) fn raise(current: &mut Outcome, new: Outcome) {
    fn rank(o: Outcome) -> u8 {
        match o {
            Outcome::Unknown => 0,
            Outcome::Success => 1,
            Outcome::Error | Outcome::Interrupted => 2,
        }
    }
    if new != Outcome::Unknown && rank(new) >= rank(*current) {
        *current = new;
    }
}

/// The identity of a session, fixed for the whole file.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Who {
    /// The session id.
    pub session_id: String,
    /// The parent session, for sub-agents.
    pub parent: Option<String>,
}

/// A new open turn.
pub(crate) fn new_turn(
    who: &Who,
    message_id: String,
    cwd: Option<String>,
    model: Option<String>,
    started_at: Option<Timestamp>,
) -> Turn {
    Turn {
        message_id,
        session_id: who.session_id.clone(),
        parent_session: who.parent.clone(),
        cwd,
        model,
        started_at,
        ended_at: started_at,
        outcome: Outcome::Unknown,
        request: String::new(),
        steps: Vec::new(),
        complete: false,
    }
}

/// Sets the turn's request from the user's text: Cairn's notes become injected steps (source
/// `cairn`), the rest is the request. Returns whether any of the user's own words remain.
pub(crate) fn set_request(turn: &mut Turn, text: &str) -> bool {
    let (kept, notes) = split_injected(text);
    for note in notes {
        if !note.is_empty() {
            turn.steps.push(Step::Injected {
                source: "cairn".to_owned(),
                text: note,
            });
        }
    }
    turn.request = kept;
    !turn.request.is_empty()
}

/// Pushes injected context: Cairn's own notes inside it are marked `cairn`, the rest keeps
/// `source`.
pub(crate) fn push_injected(steps: &mut Vec<Step>, source: &str, text: &str) {
    let (kept, notes) = split_injected(text);
    for note in notes {
        if !note.is_empty() {
            steps.push(Step::Injected {
                source: "cairn".to_owned(),
                text: note,
            });
        }
    }
    if !kept.is_empty() {
        steps.push(Step::Injected {
            source: source.to_owned(),
            text: kept,
        });
    }
}

/// Removes every `open … close` block from a text. Returns the rest (trimmed) and the blocks'
/// contents (trimmed). An unclosed block runs to the end.
pub(crate) fn split_tag(text: &str, open: &str, close: &str) -> (String, Vec<String>) {
    let mut rest = text;
    let mut kept = String::new();
    let mut found = Vec::new();
    while let Some(start) = rest.find(open) {
        kept.push_str(&rest[..start]);
        let after = &rest[start + open.len()..];
        if let Some(end) = after.find(close) {
            found.push(after[..end].trim().to_owned());
            rest = &after[end + close.len()..];
        } else {
            found.push(after.trim().to_owned());
            rest = "";
        }
    }
    kept.push_str(rest);
    (kept.trim().to_owned(), found)
}

/// Appends assistant text. With `merge`, text continuing the previous text step is joined to it.
pub(crate) fn push_text(steps: &mut Vec<Step>, text: &str, merge: bool) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    if merge && let Some(Step::Text { text: prev }) = steps.last_mut() {
        prev.push_str("\n\n");
        prev.push_str(text);
        return;
    }
    steps.push(Step::Text {
        text: text.to_owned(),
    });
}

/// Appends a tool call unless one with the same id is already there.
pub(crate) fn push_tool(steps: &mut Vec<Step>, id: Option<String>, name: &str, input: Value) {
    if let Some(id) = &id
        && steps
            .iter()
            .any(|s| matches!(s, Step::Tool { id: Some(x), .. } if x == id))
    {
        return;
    }
    steps.push(Step::Tool {
        id,
        name: name.to_owned(),
        input,
        output: None,
        is_error: false,
    });
}

/// Pairs a result with its call by id (or, without an id, with the last call still waiting).
/// Returns false when no call matched.
pub(crate) fn attach_output(
    steps: &mut [Step],
    id: Option<&str>,
    output: String,
    error: bool,
) -> bool {
    let found = steps.iter_mut().rev().find(|s| match (s, id) {
        (Step::Tool { id: Some(x), .. }, Some(want)) => x == want,
        (Step::Tool { output: None, .. }, None) => true,
        _ => false,
    });
    if let Some(Step::Tool {
        output: slot,
        is_error,
        ..
    }) = found
    {
        *slot = Some(output);
        *is_error = *is_error || error;
        true
    } else {
        false
    }
}

/// Pairs a result with its call, or keeps it as a call of unknown name when its call was not
/// seen (so no output is lost).
pub(crate) fn attach_or_keep(steps: &mut Vec<Step>, id: Option<&str>, output: String, error: bool) {
    if !attach_output(steps, id, output.clone(), error) {
        steps.push(Step::Tool {
            id: id.map(str::to_owned),
            name: "unknown".to_owned(),
            input: Value::Null,
            output: Some(output),
            is_error: error,
        });
    }
}

/// Text out of a content value: a string; an array of strings or `{type:"text", text}` blocks;
/// an object with `text`, `content` or `output`; otherwise its JSON.
pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(x) => x.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|item| match item {
                    Value::String(x) => x.clone(),
                    Value::Object(o) => {
                        if let Some(t) = o.get("text").and_then(Value::as_str) {
                            t.to_owned()
                        } else if o.get("type").and_then(Value::as_str) == Some("image") {
                            "[image]".to_owned()
                        } else {
                            value_text(item)
                        }
                    }
                    other => other.to_string(),
                })
                .filter(|x| !x.is_empty())
                .collect();
            parts.join("\n")
        }
        Value::Object(o) => {
            for key in ["text", "content", "output"] {
                if let Some(inner) = o.get(key)
                    && !inner.is_null()
                {
                    return value_text(inner);
                }
            }
            v.to_string()
        }
        other => other.to_string(),
    }
}

/// Drops empty text steps and trims the others (before a turn leaves the parser).
pub(crate) fn tidy(turn: &mut Turn) {
    for step in &mut turn.steps {
        if let Step::Text { text } = step {
            let t = text.trim();
            if t.len() != text.len() {
                *text = t.to_owned();
            }
        }
    }
    turn.steps
        .retain(|s| !matches!(s, Step::Text { text } if text.is_empty()));
}

/// A finished copy of a turn.
pub(crate) fn completed(mut turn: Turn) -> Turn {
    turn.complete = true;
    tidy(&mut turn);
    turn
}

/// An open copy of a turn.
pub(crate) fn opened(turn: &Turn) -> Turn {
    let mut t = turn.clone();
    t.complete = false;
    tidy(&mut t);
    t
}

/// The saved state of a parser.
pub(crate) fn save<T: Serialize>(state: &T) -> Value {
    serde_json::to_value(state).unwrap_or(Value::Null)
}

/// The state to resume from: the saved one when it can be read, otherwise a fresh one.
pub(crate) fn restore<T: DeserializeOwned>(saved: Option<Value>, fresh: impl FnOnce() -> T) -> T {
    saved
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_else(fresh)
}

/// A path's components as text.
pub(crate) fn parts(rel: &Path) -> Vec<String> {
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(x) => Some(x.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}

/// A file's name without its extension.
pub(crate) fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The name of a file's parent folder.
pub(crate) fn parent_name(path: &Path) -> Option<String> {
    path.parent()?
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
}

/// A small text file's content, if it can be read.
pub(crate) fn read_small(path: &Path) -> Option<String> {
    let meta = fs_err::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 4 * 1024 * 1024 {
        return None;
    }
    fs_err::read_to_string(path).ok()
}

/// Parses a tool's arguments given as a JSON string; keeps the string when it is not JSON.
pub(crate) fn json_or_string(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(text)) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
        Some(other) => other.clone(),
        None => Value::Null,
    }
}
