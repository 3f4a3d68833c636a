//! Amp (Sourcegraph): the client's local copies of its threads,
//! `${XDG_DATA_HOME:-~/.local/share}/amp/threads/T-<uuid>.json`, one JSON document per thread,
//! rewritten on change.
//!
//! Inferred from third-party readers (not Amp's own source): a thread is `{id, created,
//! title, env.initial.trees[{uri}], messages[]}`; a message is `{role: user|assistant|info,
//! messageId, content[], state: {type, stopReason}, usage: {model}, meta: {sentAt}}` with
//! Anthropic-style blocks, and tool results are `{type: "tool_result", toolUseID, run: {status,
//! result}}` in user messages. The last assistant message's `state` says how a turn ended
//! (`complete` + `end_turn`, `cancelled`, `error`).
use std::path::{Path, PathBuf};

use cairn_core::Outcome;
use serde_json::Value;

use super::common::{
    Block, TurnBuilder, at, blocks, components, data_homes, id_of, parse_json, str_at, str_of,
    string_of, ts_json, uri_to_path,
};
use crate::spec::{Env, FrameworkSpec, Reader};
use crate::turn::Turn;

/// The Amp entry.
pub(crate) fn specs() -> Vec<FrameworkSpec> {
    vec![FrameworkSpec {
        name: "amp",
        display: "Amp",
        env_vars: &["XDG_DATA_HOME"],
        roots,
        matches,
        reader: Reader::WholeFile(read),
    }]
}

fn roots(env: &Env) -> Vec<PathBuf> {
    data_homes(env)
        .into_iter()
        .map(|d| d.join("amp").join("threads"))
        .collect()
}

fn matches(rel: &Path) -> bool {
    matches!(components(rel).as_slice(), [f] if f.starts_with("T-") && f.ends_with(".json"))
}

fn read(path: &Path, bytes: &[u8]) -> Result<Vec<Turn>, String> {
    let thread = parse_json(bytes)?;
    if !thread.is_object() {
        return Err("not a thread object".to_owned());
    }
    let sid = string_of(&thread, "id")
        .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let cwd = str_at(&thread, &["env", "initial", "cwd"]).or_else(|| {
        at(&thread, &["env", "initial", "trees"])
            .and_then(Value::as_array)
            .and_then(|t| t.iter().find_map(|tree| string_of(tree, "uri")))
            .map(|u| uri_to_path(&u))
    });
    let messages = thread
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut b = TurnBuilder::new(&sid, None, cwd);
    for (i, m) in messages.iter().enumerate() {
        let ts =
            ts_json(at(m, &["meta", "sentAt"])).or_else(|| ts_json(at(m, &["usage", "timestamp"])));
        match str_of(m, "role") {
            Some("user") => {
                let mut texts = Vec::new();
                for block in blocks(m.get("content")) {
                    match block {
                        Block::Text(t) => texts.push(t),
                        Block::ToolResult {
                            id,
                            output,
                            is_error,
                        } => {
                            b.tool_result(id.as_deref(), None, output, is_error);
                        }
                        _ => {}
                    }
                }
                let text = texts.join("\n");
                if text.trim().is_empty() {
                    b.touch(ts);
                } else {
                    let id = id_of(m, "messageId").unwrap_or_else(|| i.to_string());
                    b.start(
                        &id,
                        &text,
                        ts.or_else(|| {
                            if i == 0 {
                                ts_json(thread.get("created"))
                            } else {
                                None
                            }
                        }),
                    );
                }
            }
            Some("assistant") => {
                b.touch(ts);
                b.model(str_at(m, &["usage", "model"]).or_else(|| string_of(m, "model")));
                for block in blocks(m.get("content")) {
                    match block {
                        Block::Text(t) => b.text(&t),
                        Block::ToolUse { id, name, input } => b.tool(id, &name, input),
                        Block::ToolResult {
                            id,
                            output,
                            is_error,
                        } => {
                            b.tool_result(id.as_deref(), None, output, is_error);
                        }
                        Block::Other => {}
                    }
                }
                let state = m.get("state").unwrap_or(&Value::Null);
                match (str_of(state, "type"), str_of(state, "stopReason")) {
                    (Some("complete"), Some("tool_use")) => b.end(Outcome::Unknown, false),
                    (Some("complete"), Some("max_tokens")) => b.end(Outcome::Error, true),
                    (Some("complete"), _) => b.end(Outcome::Success, true),
                    (Some("cancelled" | "canceled" | "aborted"), _) => {
                        b.end(Outcome::Interrupted, true);
                    }
                    (Some("error"), _) => b.end(Outcome::Error, true),
                    _ => b.end(Outcome::Unknown, false),
                }
            }
            _ => {}
        }
    }
    Ok(b.finish())
}
