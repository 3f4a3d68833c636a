//! Continue (continuedev/continue): `${CONTINUE_GLOBAL_DIR:-~/.continue}/sessions/<id>.json`,
//! one JSON document per session, rewritten on change (`sessions.json` is only an index and
//! is skipped).
//!
//! A session is `{sessionId, title, workspaceDirectory, history[], chatModelTitle}`; each
//! history item is `{message: {role, content, toolCalls?, toolCallId?, id?},
//! toolCallStates?: [{toolCallId, toolCall, status, parsedArgs, output: [{content}]}]}`.
//! Items carry no timestamps and no turn-end record, so outcomes are inferred; the model is
//! the session's `chatModelTitle` (the title the user gave the model, not always its id).
//! Context items attached by the user (`contextItems`) are not kept.
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::common::{
    TurnBuilder, at, components, content_text, infer_outcomes, input_value, output_text,
    parse_json, str_at, str_of, string_of, uri_to_path,
};
use crate::spec::{Env, FrameworkSpec, Reader};
use crate::turn::Turn;

/// The Continue entry.
pub(crate) fn specs() -> Vec<FrameworkSpec> {
    vec![FrameworkSpec {
        name: "continue",
        display: "Continue",
        env_vars: &["CONTINUE_GLOBAL_DIR"],
        roots,
        matches,
        reader: Reader::WholeFile(read),
    }]
}

fn roots(env: &Env) -> Vec<PathBuf> {
    vec![
        env.dir_from("CONTINUE_GLOBAL_DIR", ".continue")
            .join("sessions"),
    ]
}

fn matches(rel: &Path) -> bool {
    matches!(components(rel).as_slice(), [f] if f.ends_with(".json") && f != "sessions.json")
}

fn read(path: &Path, bytes: &[u8]) -> Result<Vec<Turn>, String> {
    let session = parse_json(bytes)?;
    let history = session
        .get("history")
        .and_then(Value::as_array)
        .ok_or("not a Continue session (no `history` array)")?;
    let sid = string_of(&session, "sessionId")
        .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let cwd = string_of(&session, "workspaceDirectory").map(|w| uri_to_path(&w));
    let model = string_of(&session, "chatModelTitle");
    let mut b = TurnBuilder::new(&sid, None, cwd);
    for (i, item) in history.iter().enumerate() {
        let m = item.get("message").unwrap_or(&Value::Null);
        match str_of(m, "role") {
            Some("user") => {
                let text = content_text(m.get("content").unwrap_or(&Value::Null));
                if text.trim().is_empty() {
                    continue;
                }
                let id = string_of(m, "id").unwrap_or_else(|| i.to_string());
                b.start(&id, &text, None);
                b.model(model.clone());
            }
            Some("assistant") => {
                b.text(&content_text(m.get("content").unwrap_or(&Value::Null)));
                let states: Vec<&Value> = match item.get("toolCallStates") {
                    Some(Value::Array(s)) => s.iter().collect(),
                    _ => item
                        .get("toolCallState")
                        .filter(|s| s.is_object())
                        .into_iter()
                        .collect(),
                };
                if states.is_empty() {
                    for call in m
                        .get("toolCalls")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        b.tool(
                            string_of(call, "id"),
                            &str_at(call, &["function", "name"])
                                .unwrap_or_else(|| "unknown".to_owned()),
                            input_value(at(call, &["function", "arguments"])),
                        );
                    }
                }
                for s in states {
                    let call = s.get("toolCall").unwrap_or(&Value::Null);
                    let status = str_of(s, "status").unwrap_or_default();
                    let input = match s.get("parsedArgs").filter(|a| !a.is_null()) {
                        Some(a) => a.clone(),
                        None => input_value(at(call, &["function", "arguments"])),
                    };
                    let output = s.get("output").and_then(output_text);
                    let finished = matches!(status, "done" | "errored" | "canceled");
                    b.tool_done(
                        string_of(s, "toolCallId").or_else(|| string_of(call, "id")),
                        &str_at(call, &["function", "name"])
                            .unwrap_or_else(|| "unknown".to_owned()),
                        input,
                        if finished {
                            Some(output.unwrap_or_default())
                        } else {
                            output
                        },
                        matches!(status, "errored" | "canceled"),
                    );
                }
            }
            Some("tool") => {
                let out = content_text(m.get("content").unwrap_or(&Value::Null));
                b.tool_result(str_of(m, "toolCallId"), None, Some(out), false);
            }
            _ => {}
        }
    }
    let mut turns = b.finish();
    infer_outcomes(&mut turns, true);
    Ok(turns)
}
