//! Cursor's SQLite stores: the agent's per-session `~/.cursor/chats/<md5>/<id>/store.db`
//! (`meta` row `'0'` = hex-encoded JSON, `blobs` = JSON messages mixed with protobuf DAG
//! nodes) and the IDE's `globalStorage/state.vscdb` (`cursorDiskKV` rows
//! `composerData:<id>` and `bubbleId:<composer>:<bubble>`). The agent's JSONL transcripts are
//! read by the JSONL family under the same name.
//!
//! Neither store has timestamps per row that move on every change, so the high-water mark
//! is a content fingerprint: unchanged stores (and, in `state.vscdb`, unchanged composers)
//! are skipped. Neither writes a turn-end record, so outcomes are inferred
//! ([`super::common::infer_outcomes`]).
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::common::{
    Block, TurnBuilder, at, between, blocks, components, fnv_hex, hex_digit, infer_outcomes,
    input_value, new_batch, output_text, parse_json, snapshot, str_at, str_of, string_of,
    strip_sections, table_columns, ts_json, value_bytes, value_i64, value_text,
};
use crate::spec::{Env, FrameworkSpec, Reader, SqliteBatch};
use crate::turn::Turn;

/// The two Cursor SQLite entries (both named `cursor`).
pub(crate) fn specs() -> Vec<FrameworkSpec> {
    vec![
        FrameworkSpec {
            name: "cursor",
            display: "Cursor (agent chats)",
            env_vars: &[],
            roots: chats_roots,
            matches: chats_matches,
            reader: Reader::Sqlite(read_store_db),
        },
        FrameworkSpec {
            name: "cursor",
            display: "Cursor (IDE chats)",
            env_vars: &["XDG_CONFIG_HOME"],
            roots: ide_roots,
            matches: ide_matches,
            reader: Reader::Sqlite(read_vscdb),
        },
    ]
}

fn chats_roots(env: &Env) -> Vec<PathBuf> {
    vec![env.home.join(".cursor").join("chats")]
}

/// `<md5 of the project path>/<session id>/store.db`.
fn chats_matches(rel: &Path) -> bool {
    matches!(components(rel).as_slice(), [_, _, f] if f == "store.db")
}

fn ide_roots(env: &Env) -> Vec<PathBuf> {
    vec![
        env.config_home()
            .join("Cursor")
            .join("User")
            .join("globalStorage"),
    ]
}

fn ide_matches(rel: &Path) -> bool {
    matches!(components(rel).as_slice(), [f] if f == "state.vscdb")
}

// ---------------------------------------------------------------------------------------------
// Agent store.db

/// The meta value: hex-encoded JSON (plain JSON is accepted too).
fn decode_meta(raw: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(raw).ok()?.trim();
    if text.starts_with('{') {
        return parse_json(text.as_bytes()).ok();
    }
    let bytes: Option<Vec<u8>> = text
        .as_bytes()
        .chunks(2)
        .map(|pair| match pair {
            [hi, lo] => Some(hex_digit(*hi)? * 16 + hex_digit(*lo)?),
            _ => None,
        })
        .collect();
    parse_json(&bytes?).ok()
}

/// A blob that is a JSON message (protobuf DAG nodes and other binary blobs give `None`).
fn json_blob(data: &[u8]) -> Option<Value> {
    let start = data.iter().position(|b| !b.is_ascii_whitespace())?;
    if data[start] != b'{' {
        return None;
    }
    parse_json(&data[start..])
        .ok()
        .filter(|v| v.get("role").is_some())
}

fn read_store_db(
    conn: &rusqlite::Connection,
    path: &Path,
    since: Option<&str>,
) -> Result<SqliteBatch, String> {
    let _snap = snapshot(conn);
    let where_ = path.display();
    let mut batch = new_batch(since);
    if table_columns(conn, "blobs")?.is_none() {
        batch.warnings.push(format!(
            "{where_}: no `blobs` table (not a cursor-agent store?)"
        ));
        return Ok(batch);
    }
    let meta_raw: Option<Vec<u8>> = if table_columns(conn, "meta")?.is_some() {
        conn.query_row("SELECT value FROM meta WHERE key = '0'", [], |r| {
            Ok(value_bytes(r.get_ref(0)?))
        })
        .ok()
        .flatten()
    } else {
        batch.warnings.push(format!(
            "{where_}: no `meta` table; session details unknown"
        ));
        None
    };
    let meta = meta_raw.as_deref().and_then(decode_meta);
    if meta_raw.is_some() && meta.is_none() {
        batch
            .warnings
            .push(format!("{where_}: the `meta` row is not hex-encoded JSON"));
    }

    let (count, max_rowid, total): (i64, i64, i64) = conn
        .query_row(
            "SELECT count(*), coalesce(max(rowid), 0), coalesce(sum(length(data)), 0) FROM blobs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(|e| format!("{where_}: reading blobs: {e}"))?;
    let fingerprint = format!(
        "{count}:{max_rowid}:{total}:{}",
        fnv_hex(&[meta_raw.as_deref().unwrap_or_default()])
    );
    if since == Some(fingerprint.as_str()) {
        return Ok(batch);
    }
    batch.high_water = Some(fingerprint);

    let mut stmt = conn
        .prepare("SELECT id, data FROM blobs ORDER BY rowid")
        .map_err(|e| format!("{where_}: reading blobs: {e}"))?;
    let rows = stmt
        .query_map([], |r| {
            Ok((value_text(r.get_ref(0)?), value_bytes(r.get_ref(1)?)))
        })
        .map_err(|e| format!("{where_}: reading blobs: {e}"))?;
    let mut messages = Vec::new();
    for row in rows {
        match row {
            Ok((id, Some(data))) => {
                if let Some(v) = json_blob(&data) {
                    messages.push((id.unwrap_or_default(), v));
                }
            }
            Ok(_) => {}
            Err(e) => batch.warnings.push(format!("{where_}: a blob row: {e}")),
        }
    }

    let meta = meta.unwrap_or(Value::Null);
    let sid = string_of(&meta, "agentId")
        .or_else(|| {
            path.parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    batch.turns = store_db_turns(&sid, &meta, &messages);
    Ok(batch)
}

fn store_db_turns(sid: &str, meta: &Value, messages: &[(String, Value)]) -> Vec<Turn> {
    let mut b = TurnBuilder::new(sid, None, None);
    let model = string_of(meta, "lastUsedModel");
    let created = ts_json(meta.get("createdAt"));
    let mut first = true;
    for (id, m) in messages {
        let role = str_of(m, "role").unwrap_or_default();
        for block in blocks(m.get("content")) {
            match (role, block) {
                ("user", Block::Text(text)) => {
                    if text.trim_start().starts_with("<user_info>") {
                        if let Some(cwd) = workspace_path(&text) {
                            b.set_cwd(Some(cwd));
                        }
                        b.inject_pending("instructions", &text);
                    } else if text.contains("<user_query>") {
                        let query = between(&text, "<user_query>", "</user_query>").unwrap_or("");
                        let (rest, _) = strip_sections(&text, "<user_query>", "</user_query>");
                        b.start(id, query, if first { created } else { None });
                        first = false;
                        b.inject("context", &rest);
                        b.model(model.clone());
                    } else if text.trim_start().starts_with('<') {
                        // Other tagged blocks (`<rules>`, `<project_layout>`, …) are context
                        // Cursor adds; the user's own words always come in `<user_query>`.
                        b.inject_pending("context", &text);
                    } else if !text.trim().is_empty() {
                        b.start(id, &text, if first { created } else { None });
                        first = false;
                        b.model(model.clone());
                    }
                }
                ("assistant", Block::Text(text)) => b.text(&text),
                (_, Block::ToolUse { id, name, input }) => b.tool(id, &name, input),
                (
                    _,
                    Block::ToolResult {
                        id,
                        output,
                        is_error,
                    },
                ) => {
                    b.tool_result(id.as_deref(), None, output, is_error);
                }
                _ => {}
            }
        }
    }
    let mut turns = b.finish();
    infer_outcomes(&mut turns, true);
    turns
}

/// `Workspace Path: /x` in the injected `<user_info>` block.
fn workspace_path(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Workspace Path:"))
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
}

// ---------------------------------------------------------------------------------------------
// IDE state.vscdb

const COMPOSER: &str = "composerData:";
const BUBBLE: &str = "bubbleId:";

fn read_vscdb(
    conn: &rusqlite::Connection,
    path: &Path,
    since: Option<&str>,
) -> Result<SqliteBatch, String> {
    let _snap = snapshot(conn);
    let where_ = path.display();
    let mut batch = new_batch(since);
    if table_columns(conn, "cursorDiskKV")?.is_none() {
        batch.warnings.push(format!(
            "{where_}: no `cursorDiskKV` table (no composer chats)"
        ));
        return Ok(batch);
    }
    let prev: BTreeMap<String, String> = match since.map(serde_json::from_str) {
        Some(Ok(m)) => m,
        Some(Err(_)) => {
            batch.warnings.push(format!(
                "{where_}: unreadable high-water mark, reading everything"
            ));
            BTreeMap::new()
        }
        None => BTreeMap::new(),
    };

    // Fingerprints from keys, row ids and lengths only (index scans, no JSON parsing).
    let composers = kv_rows(
        conn,
        "SELECT key, rowid, length(value) FROM cursorDiskKV WHERE key >= ?1 AND key < ?2",
        COMPOSER,
    )
    .map_err(|e| format!("{where_}: reading composers: {e}"))?;
    let bubbles = kv_rows(
        conn,
        "SELECT key, rowid, 0 FROM cursorDiskKV WHERE key >= ?1 AND key < ?2",
        BUBBLE,
    )
    .map_err(|e| format!("{where_}: reading bubbles: {e}"))?;
    let mut agg: HashMap<&str, (i64, i64, i64)> = HashMap::new();
    for (key, rowid, _) in &bubbles {
        let Some(cid) = key.strip_prefix(BUBBLE).and_then(|k| k.split(':').next()) else {
            continue;
        };
        let e = agg.entry(cid).or_default();
        e.0 += 1;
        e.1 = e.1.wrapping_add(*rowid);
        e.2 = e.2.max(*rowid);
    }
    let mut marks = BTreeMap::new();
    let mut changed = Vec::new();
    for (key, rowid, len) in &composers {
        let Some(cid) = key.strip_prefix(COMPOSER) else {
            continue;
        };
        let (n, sum, max) = agg.get(cid).copied().unwrap_or_default();
        let fp = fnv_hex(&[format!("{rowid}:{len}:{n}:{sum}:{max}").as_bytes()]);
        let fp = fp[..12].to_owned();
        if prev.get(cid) != Some(&fp) {
            changed.push(cid.to_owned());
        }
        marks.insert(cid.to_owned(), fp);
    }
    batch.high_water = Some(serde_json::to_string(&marks).unwrap_or_default());

    for cid in changed {
        match read_composer(conn, &cid, &mut batch.warnings, &where_) {
            Ok(turns) => batch.turns.extend(turns),
            Err(e) => batch
                .warnings
                .push(format!("{where_}: composer {cid}: {e}")),
        }
    }
    Ok(batch)
}

fn kv_rows(
    conn: &rusqlite::Connection,
    sql: &str,
    prefix: &str,
) -> rusqlite::Result<Vec<(String, i64, i64)>> {
    let upper = format!("{};", &prefix[..prefix.len() - 1]);
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map([prefix, upper.as_str()], |r| {
        Ok((
            value_text(r.get_ref(0)?).unwrap_or_default(),
            value_i64(r.get_ref(1)?).unwrap_or(0),
            value_i64(r.get_ref(2)?).unwrap_or(0),
        ))
    })?;
    rows.collect()
}

fn read_composer(
    conn: &rusqlite::Connection,
    cid: &str,
    warnings: &mut Vec<String>,
    where_: &dyn std::fmt::Display,
) -> Result<Vec<Turn>, String> {
    let raw: Option<Vec<u8>> = conn
        .query_row(
            "SELECT value FROM cursorDiskKV WHERE key = ?1",
            [format!("{COMPOSER}{cid}")],
            |r| Ok(value_bytes(r.get_ref(0)?)),
        )
        .map_err(|e| e.to_string())?;
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    let composer = parse_json(&raw)?;

    let lo = format!("{BUBBLE}{cid}:");
    let hi = format!("{BUBBLE}{cid};");
    let mut stmt = conn
        .prepare("SELECT key, value FROM cursorDiskKV WHERE key >= ?1 AND key < ?2 ORDER BY rowid")
        .map_err(|e| e.to_string())?;
    let rows = stmt
        .query_map([lo.as_str(), hi.as_str()], |r| {
            Ok((
                value_text(r.get_ref(0)?).unwrap_or_default(),
                value_bytes(r.get_ref(1)?),
            ))
        })
        .map_err(|e| e.to_string())?;
    let mut by_id: Vec<(String, Value)> = Vec::new();
    for row in rows {
        let (key, value) = row.map_err(|e| e.to_string())?;
        let Some(bid) = key.strip_prefix(lo.as_str()).map(str::to_owned) else {
            continue;
        };
        match value.as_deref().map(parse_json) {
            Some(Ok(v)) => by_id.push((bid, v)),
            Some(Err(e)) => warnings.push(format!("{where_}: bubble {bid} of composer {cid}: {e}")),
            None => {}
        }
    }

    // Conversation order: the composer's header list, then bubbles it does not list; very old
    // composers keep the conversation inline.
    let mut ordered: Vec<Value> = Vec::new();
    if let Some(headers) = composer
        .get("fullConversationHeadersOnly")
        .and_then(Value::as_array)
    {
        let mut map: HashMap<String, Value> = by_id.iter().cloned().collect();
        for h in headers {
            if let Some(v) = str_of(h, "bubbleId").and_then(|id| map.remove(id)) {
                ordered.push(v);
            }
        }
        let mut rest: Vec<(String, Value)> = by_id
            .into_iter()
            .filter(|(id, _)| map.contains_key(id))
            .collect();
        rest.sort_by_key(|(_, v)| ts_json(v.get("createdAt")));
        ordered.extend(rest.into_iter().map(|(_, v)| v));
    } else if let Some(conv) = composer.get("conversation").and_then(Value::as_array) {
        ordered = conv.clone();
    } else {
        ordered = by_id.into_iter().map(|(_, v)| v).collect();
    }
    Ok(composer_turns(cid, &composer, &ordered))
}

fn composer_turns(cid: &str, composer: &Value, bubbles: &[Value]) -> Vec<Turn> {
    let cwd = str_at(composer, &["workspaceIdentifier", "uri", "fsPath"])
        .or_else(|| str_at(composer, &["workspaceIdentifier", "uri", "path"]));
    let default_model = str_at(composer, &["modelConfig", "modelName"]);
    let mut b = TurnBuilder::new(cid, None, cwd);
    for (i, bubble) in bubbles.iter().enumerate() {
        let created = ts_json(bubble.get("createdAt"));
        let bid = string_of(bubble, "bubbleId").unwrap_or_else(|| format!("#{i}"));
        match bubble.get("type").and_then(Value::as_i64) {
            Some(1) => {
                let text = str_of(bubble, "text").unwrap_or_default();
                if !text.trim().is_empty() {
                    b.start(&bid, text, created);
                    b.model(default_model.clone());
                }
            }
            Some(2) => {
                b.touch(created);
                b.text(str_of(bubble, "text").unwrap_or_default());
                if let Some(tool) = bubble.get("toolFormerData").filter(|t| t.is_object()) {
                    let name = string_of(tool, "name").unwrap_or_else(|| "unknown".to_owned());
                    let input = match tool.get("params").filter(|p| !p.is_null()) {
                        Some(p) => input_value(Some(p)),
                        None => input_value(tool.get("rawArgs")),
                    };
                    let status = str_of(tool, "status").unwrap_or_default();
                    let output = tool.get("result").and_then(output_text).or_else(|| {
                        tool.get("error")
                            .filter(|e| !e.is_null())
                            .and_then(output_text)
                    });
                    let is_error = status == "error"
                        || tool.get("error").is_some_and(|e| !e.is_null() && e != "")
                        || str_of(tool, "userDecision") == Some("rejected");
                    let done = output.is_some() || matches!(status, "completed" | "error");
                    b.tool_done(
                        string_of(tool, "toolCallId"),
                        &name,
                        input,
                        if done {
                            Some(output.unwrap_or_default())
                        } else {
                            None
                        },
                        is_error,
                    );
                }
                b.model(
                    str_at(bubble, &["modelInfo", "modelName"]).or_else(|| default_model.clone()),
                );
                b.touch(ts_json(at(bubble, &["timingInfo", "clientEndTime"])));
            }
            _ => {}
        }
    }
    let mut turns = b.finish();
    infer_outcomes(&mut turns, true);
    turns
}
