//! Turns → records: scrubbed, rendered to searchable text, chunked. Nothing leaves this
//! module unscrubbed.
use cairn_core::{Chunk, NewRecord, RecordId, Timestamp};
use cairn_text::scrub::Scrubber;

use crate::turn::{Step, Turn};

/// Tool inputs and outputs longer than this are kept whole in the record's content but cut
/// in its searchable text, so one huge tool output does not drown the request.
const TOOL_TEXT_MAX: usize = 8_000;

/// Builds the record (and its search chunks) for one turn. `project` is the project
/// identity of the turn's working directory; `fallback_time` stands in for stores without
/// timestamps. Returns the record and the number of secrets redacted.
pub fn to_record(
    framework: &str,
    turn: &Turn,
    project: Option<String>,
    source: &str,
    fallback_time: Timestamp,
    scrubber: &Scrubber,
) -> ((NewRecord, Vec<Chunk>), u64) {
    let redacted = std::cell::Cell::new(0u64);
    let clean = |s: &str| -> String {
        let (out, findings) = scrubber.scrub(s);
        redacted.set(redacted.get() + findings.len() as u64);
        out.into_owned()
    };
    let request = clean(&turn.request);
    let mut steps_json = Vec::with_capacity(turn.steps.len());
    let mut text = request.clone();
    for step in &turn.steps {
        match step {
            Step::Text { text: t } => {
                let t = clean(t);
                text.push_str("\n\n");
                text.push_str(&t);
                steps_json.push(serde_json::json!({ "type": "text", "text": t }));
            }
            Step::Tool {
                id,
                name,
                input,
                output,
                is_error,
            } => {
                let mut input = input.clone();
                let mut output = output.as_deref().map(clean);
                redacted.set(redacted.get() + scrubber.scrub_json(&mut input) as u64);
                let input_text = match &input {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                text.push_str("\n\n[tool ");
                text.push_str(name);
                text.push_str("] ");
                text.push_str(cut(&input_text, TOOL_TEXT_MAX));
                if let Some(out) = &output {
                    text.push('\n');
                    text.push_str(cut(out, TOOL_TEXT_MAX));
                }
                if output.as_deref() == Some("") {
                    output = None;
                }
                steps_json.push(serde_json::json!({
                    "type": "tool", "id": id, "name": name, "input": input,
                    "output": output, "is_error": is_error,
                }));
            }
            // Injected context is kept for display but never searched as the user's words.
            Step::Injected { source, text: t } => {
                steps_json.push(
                    serde_json::json!({ "type": "injected", "source": source, "text": clean(t) }),
                );
            }
        }
    }
    let id = RecordId::derive(framework, &turn.session_id, &turn.message_id);
    let chunks = if text.len() > cairn_text::chunk::SINGLE_CHUNK_MAX {
        cairn_text::chunk::split(&text)
            .into_iter()
            .enumerate()
            .map(|(i, (start, piece))| Chunk {
                record_id: id.clone(),
                ord: u32::try_from(i).unwrap_or(u32::MAX),
                start: u32::try_from(start).unwrap_or(u32::MAX),
                text: piece.to_owned(),
            })
            .collect()
    } else {
        Vec::new()
    };
    let record = NewRecord {
        id,
        framework: framework.to_owned(),
        session_id: turn.session_id.clone(),
        project,
        cwd: turn.cwd.clone(),
        model: turn.model.clone(),
        outcome: turn.outcome,
        started_at: turn.started_at.unwrap_or(fallback_time),
        ended_at: turn.ended_at,
        request,
        author: None,
        text,
        content: serde_json::json!({
            "steps": steps_json,
            "complete": turn.complete,
            "parent_session": turn.parent_session,
        }),
        source: Some(source.to_owned()),
    };
    ((record, chunks), redacted.get())
}

fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}
