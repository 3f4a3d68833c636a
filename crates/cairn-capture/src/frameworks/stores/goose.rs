//! Goose (block/goose): `sessions/sessions.db` under Goose's data dir, tables `sessions` and
//! `messages(content_json)`. Content items are `text`, `toolRequest` (`toolCall` =
//! `{status, value: {name, arguments}}`), `toolResponse` (`toolResult` = `{status, value}`),
//! `thinking` and a few UI-only kinds. Goose writes no turn-end record, so outcomes are
//! inferred. Messages can be rewritten wholesale (`replace_conversation`, with new row ids),
//! so a turn's id is the request's creation time, not its row id.
//!
//! Not read: the per-session JSONL files of Goose before ~1.10 (Goose imports them into
//! `sessions.db` itself on first run).
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::common::{
    TurnBuilder, col, components, infer_outcomes, input_value, new_batch, output_text, parse_json,
    snapshot, str_of, string_of, table_columns, ts_auto, ts_text, value_i64, value_text,
    xdg_data_home,
};
use crate::spec::{Env, FrameworkSpec, Os, Reader, SqliteBatch};
use crate::turn::Turn;

/// The Goose entry.
pub(crate) fn specs() -> Vec<FrameworkSpec> {
    vec![FrameworkSpec {
        name: "goose",
        display: "Goose",
        env_vars: &["GOOSE_PATH_ROOT", "XDG_DATA_HOME"],
        roots,
        matches: |rel| matches!(components(rel).as_slice(), [f] if f == "sessions.db"),
        reader: Reader::Sqlite(read),
    }]
}

fn roots(env: &Env) -> Vec<PathBuf> {
    if let Some(root) = env.var("GOOSE_PATH_ROOT") {
        return vec![PathBuf::from(root).join("data").join("sessions")];
    }
    let mut v = vec![xdg_data_home(env).join("goose").join("sessions")];
    match env.os {
        Os::MacOs => {
            v.push(env.data_home().join("goose").join("sessions"));
            v.push(env.data_home().join("Block").join("goose").join("sessions"));
        }
        Os::Windows => v.push(env.data_home().join("Block/goose/data/sessions")),
        Os::Linux => v.push(
            xdg_data_home(env)
                .join("Block")
                .join("goose")
                .join("sessions"),
        ),
    }
    v
}

/// One row of `sessions` with what the mark needs.
struct SessionRow {
    id: String,
    cwd: Option<String>,
    updated_ms: i64,
    model_json: Option<String>,
    max_id: i64,
}

/// Reads the sessions changed since the mark `<updated ms>|<max message row id>`.
fn read(
    conn: &rusqlite::Connection,
    path: &Path,
    since: Option<&str>,
) -> Result<SqliteBatch, String> {
    let _snap = snapshot(conn);
    let where_ = path.display();
    let mut batch = new_batch(since);
    let Some(scols) = table_columns(conn, "sessions")? else {
        batch.warnings.push(format!(
            "{where_}: no `sessions` table (not a Goose store?)"
        ));
        return Ok(batch);
    };
    let Some(mcols) = table_columns(conn, "messages")? else {
        batch
            .warnings
            .push(format!("{where_}: no `messages` table"));
        return Ok(batch);
    };
    let prev: Option<(i64, i64)> = match since {
        None => None,
        Some(s) => {
            let parsed = s
                .split_once('|')
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
            if parsed.is_none() {
                batch.warnings.push(format!(
                    "{where_}: unreadable high-water mark, reading everything"
                ));
            }
            parsed
        }
    };

    let sql = format!(
        "SELECT s.id, {}, {}, {}, (SELECT max(m.id) FROM messages m WHERE m.session_id = s.id) \
         FROM sessions s",
        col(&scols, "working_dir"),
        col(&scols, "updated_at"),
        col(&scols, "model_config_json"),
    );
    let rows: Vec<SessionRow> = {
        let mut stmt = conn
            .prepare(&sql)
            .map_err(|e| format!("{where_}: reading sessions: {e}"))?;
        let it = stmt
            .query_map([], |r| {
                Ok(SessionRow {
                    id: value_text(r.get_ref(0)?).unwrap_or_default(),
                    cwd: value_text(r.get_ref(1)?),
                    updated_ms: value_text(r.get_ref(2)?)
                        .and_then(|t| ts_text(&t))
                        .map_or(0, |t| t.timestamp_millis()),
                    model_json: value_text(r.get_ref(3)?),
                    max_id: value_i64(r.get_ref(4)?).unwrap_or(0),
                })
            })
            .map_err(|e| format!("{where_}: reading sessions: {e}"))?;
        it.collect::<Result<_, _>>()
            .map_err(|e| format!("{where_}: reading sessions: {e}"))?
    };
    let top_t = rows
        .iter()
        .map(|r| r.updated_ms)
        .max()
        .unwrap_or(0)
        .max(prev.map_or(0, |p| p.0));
    let top_id = rows
        .iter()
        .map(|r| r.max_id)
        .max()
        .unwrap_or(0)
        .max(prev.map_or(0, |p| p.1));

    for row in rows {
        if let Some((t, id)) = prev
            && row.updated_ms <= t
            && row.max_id <= id
        {
            continue;
        }
        let model = row.model_json.and_then(|j| {
            let v = parse_json(j.as_bytes()).ok()?;
            string_of(&v, "model_name").or_else(|| string_of(&v, "model"))
        });
        let sid = row.id;
        match session_turns(
            conn,
            &sid,
            row.cwd,
            model,
            &mcols,
            &mut batch.warnings,
            &where_,
        ) {
            Ok(turns) => batch.turns.extend(turns),
            Err(e) => batch.warnings.push(format!("{where_}: session {sid}: {e}")),
        }
    }
    batch.high_water = Some(format!("{top_t}|{top_id}"));
    Ok(batch)
}

fn session_turns(
    conn: &rusqlite::Connection,
    sid: &str,
    cwd: Option<String>,
    model: Option<String>,
    mcols: &std::collections::HashSet<String>,
    warnings: &mut Vec<String>,
    where_: &dyn std::fmt::Display,
) -> rusqlite::Result<Vec<Turn>> {
    let sql = format!(
        "SELECT id, role, content_json, {}, {}, {} FROM messages WHERE session_id = ?1 ORDER BY id",
        col(mcols, "created_timestamp"),
        col(mcols, "metadata_json"),
        col(mcols, "message_id"),
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([sid], |r| {
        Ok((
            value_i64(r.get_ref(0)?).unwrap_or(0),
            value_text(r.get_ref(1)?).unwrap_or_default(),
            value_text(r.get_ref(2)?),
            value_i64(r.get_ref(3)?),
            value_text(r.get_ref(4)?),
            value_text(r.get_ref(5)?),
        ))
    })?;
    let mut b = TurnBuilder::new(sid, None, cwd.filter(|c| !c.is_empty()));
    let mut seen: HashMap<i64, usize> = HashMap::new();
    for row in rows {
        let (rowid, role, content, created, metadata, message_id) = row?;
        let content = match content.as_deref().map(|c| parse_json(c.as_bytes())) {
            Some(Ok(Value::Array(items))) => items,
            Some(Ok(_)) | None => {
                warnings.push(format!(
                    "{where_}: message {rowid} of session {sid}: no content"
                ));
                continue;
            }
            Some(Err(e)) => {
                warnings.push(format!("{where_}: message {rowid} of session {sid}: {e}"));
                continue;
            }
        };
        let meta = metadata
            .and_then(|m| parse_json(m.as_bytes()).ok())
            .unwrap_or(Value::Null);
        let user_visible = meta
            .get("userVisible")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let at = created.and_then(ts_auto);
        match role.as_str() {
            "user" => {
                let mut texts = Vec::new();
                for item in &content {
                    match str_of(item, "type") {
                        Some("text") => texts.push(str_of(item, "text").unwrap_or_default()),
                        Some("toolResponse") => tool_response(&mut b, item),
                        _ => {}
                    }
                }
                let text = texts.join("\n");
                if text.trim().is_empty() {
                    b.touch(at);
                    continue;
                }
                if !user_visible {
                    b.inject("goose", &text);
                    continue;
                }
                let id = message_id.unwrap_or_else(|| {
                    let c = created.unwrap_or(rowid);
                    let n = seen.entry(c).or_default();
                    *n += 1;
                    if *n == 1 {
                        c.to_string()
                    } else {
                        format!("{c}-{n}")
                    }
                });
                b.start(&id, &text, at);
                b.model(model.clone());
            }
            "assistant" => {
                b.touch(at);
                for item in &content {
                    match str_of(item, "type") {
                        Some("text") if user_visible => {
                            b.text(str_of(item, "text").unwrap_or_default())
                        }
                        Some("toolRequest" | "frontendToolRequest") => tool_request(&mut b, item),
                        Some("toolResponse") => tool_response(&mut b, item),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let mut turns = b.finish();
    infer_outcomes(&mut turns, true);
    Ok(turns)
}

fn tool_request(b: &mut TurnBuilder, item: &Value) {
    let call = item.get("toolCall").unwrap_or(&Value::Null);
    let id = string_of(item, "id");
    if str_of(call, "status") == Some("error") {
        let err = call.get("error").and_then(output_text);
        b.tool_done(id, "unknown", Value::Null, err, true);
        return;
    }
    let value = call.get("value").unwrap_or(call);
    b.tool(
        id,
        str_of(value, "name").unwrap_or("unknown"),
        input_value(value.get("arguments")),
    );
}

fn tool_response(b: &mut TurnBuilder, item: &Value) {
    let result = item.get("toolResult").unwrap_or(&Value::Null);
    let id = str_of(item, "id");
    if str_of(result, "status") == Some("error") {
        b.tool_result(id, None, result.get("error").and_then(output_text), true);
        return;
    }
    let value = result.get("value").unwrap_or(&Value::Null);
    let (content, is_error) = match value {
        Value::Object(_) => (
            value.get("content").unwrap_or(&Value::Null),
            value
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
        other => (other, false),
    };
    let output = output_text(content).or_else(|| {
        value
            .get("structuredContent")
            .filter(|v| !v.is_null())
            .map(Value::to_string)
    });
    b.tool_result(id, None, Some(output.unwrap_or_default()), is_error);
}
