//! OpenCode 1.x (`opencode.db`), its legacy JSON tree (`storage/…`), and Kilo ≥ 1.0 (an
//! OpenCode fork with the same schema in `kilo.db`).
//!
//! A turn is a user message with the assistant messages that answer it; each assistant
//! message is one model call whose parts are text, reasoning (ignored) and tool calls. The
//! turn is complete when its last assistant message has `time.completed` and a `finish` other
//! than `tool-calls`, or an `error`.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cairn_core::Outcome;
use serde_json::Value;

use super::common::{
    TurnBuilder, at, col, components, data_homes, parse_json, snapshot, str_at, str_of, string_of,
    table_columns, ts_json, value_i64, value_text,
};
use crate::spec::{Env, FrameworkSpec, Reader, SqliteBatch};
use crate::turn::{Turn, split_injected};

/// The OpenCode and Kilo entries: OpenCode SQLite, OpenCode legacy JSON, Kilo SQLite.
pub(crate) fn specs() -> Vec<FrameworkSpec> {
    vec![
        FrameworkSpec {
            name: "opencode",
            display: "OpenCode",
            env_vars: &["OPENCODE_DB", "XDG_DATA_HOME"],
            roots: opencode_roots,
            matches: opencode_db_matches,
            reader: Reader::Sqlite(read_sqlite),
        },
        FrameworkSpec {
            name: "opencode",
            display: "OpenCode (legacy JSON storage)",
            env_vars: &["XDG_DATA_HOME"],
            roots: legacy_roots,
            matches: legacy_matches,
            reader: Reader::WholeFile(read_legacy),
        },
        FrameworkSpec {
            name: "kilo",
            display: "Kilo Code",
            env_vars: &["XDG_DATA_HOME"],
            roots: kilo_roots,
            matches: kilo_db_matches,
            reader: Reader::Sqlite(read_sqlite),
        },
    ]
}

/// `$OPENCODE_DB` when set (absolute, or relative to the data dir; `:memory:` keeps nothing),
/// else `${XDG_DATA_HOME:-~/.local/share}/opencode` (plus the platform data dir on macOS and
/// Windows, where forks differ).
fn opencode_roots(env: &Env) -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = data_homes(env)
        .into_iter()
        .map(|d| d.join("opencode"))
        .collect();
    match env.var("OPENCODE_DB") {
        Some(":memory:") => Vec::new(),
        Some(db) => {
            let p = PathBuf::from(db);
            match dirs.first() {
                Some(dir) if p.is_relative() => vec![dir.join(p)],
                _ => vec![p],
            }
        }
        None => dirs,
    }
}

/// `opencode.db` or a channel database `opencode-<channel>.db` directly under the data dir;
/// an empty `rel` is the root itself (when `$OPENCODE_DB` names the file).
fn opencode_db_matches(rel: &Path) -> bool {
    db_name_matches(rel, "opencode")
}

fn kilo_roots(env: &Env) -> Vec<PathBuf> {
    data_homes(env)
        .into_iter()
        .map(|d| d.join("kilo"))
        .collect()
}

fn kilo_db_matches(rel: &Path) -> bool {
    db_name_matches(rel, "kilo")
}

fn db_name_matches(rel: &Path, stem: &str) -> bool {
    let parts = components(rel);
    match parts.as_slice() {
        [] => true,
        [name] => {
            name == &format!("{stem}.db")
                || (name.starts_with(&format!("{stem}-")) && name.ends_with(".db"))
        }
        _ => false,
    }
}

fn legacy_roots(env: &Env) -> Vec<PathBuf> {
    data_homes(env)
        .into_iter()
        .map(|d| d.join("opencode").join("storage"))
        .collect()
}

/// `session/<projectID>/<sessionID>.json` under `storage/`.
fn legacy_matches(rel: &Path) -> bool {
    let parts = components(rel);
    matches!(parts.as_slice(), [s, _, f] if s == "session" && f.ends_with(".json"))
}

/// One stored message with its parts, in order.
struct Msg {
    data: Value,
    parts: Vec<Value>,
}

/// Reads the sessions updated after `since` (epoch ms of `session.time_updated`).
fn read_sqlite(
    conn: &rusqlite::Connection,
    path: &Path,
    since: Option<&str>,
) -> Result<SqliteBatch, String> {
    let _snap = snapshot(conn);
    let mut batch = SqliteBatch {
        high_water: since.map(str::to_owned),
        ..SqliteBatch::default()
    };
    let where_ = path.display();
    let since_ms = match since.map(|s| s.trim().parse::<i64>()) {
        Some(Ok(v)) => v,
        Some(Err(_)) => {
            batch.warnings.push(format!(
                "{where_}: unreadable high-water mark, reading everything"
            ));
            i64::MIN
        }
        None => i64::MIN,
    };
    let Some(scols) = table_columns(conn, "session")? else {
        batch.warnings.push(format!(
            "{where_}: no `session` table (not an OpenCode 1.x store?)"
        ));
        return Ok(batch);
    };
    let Some(mcols) = table_columns(conn, "message")? else {
        batch.warnings.push(format!("{where_}: no `message` table"));
        return Ok(batch);
    };
    let pcols = table_columns(conn, "part")?;
    if pcols.is_none() {
        batch.warnings.push(format!(
            "{where_}: no `part` table; messages are read without parts"
        ));
    }
    if !scols.contains("time_updated") {
        batch.warnings.push(format!(
            "{where_}: `session.time_updated` is missing; every session is re-read on each pass"
        ));
    }
    let projects = read_projects(conn).unwrap_or_default();

    let sql = format!(
        "SELECT id, {}, {}, {}, {} FROM session WHERE coalesce({}, 0) > ?1 ORDER BY {}",
        col(&scols, "project_id"),
        col(&scols, "parent_id"),
        col(&scols, "directory"),
        col(&scols, "time_updated"),
        col(&scols, "time_updated"),
        col(&scols, "time_updated"),
    );
    let sessions = query_rows(conn, &sql, [since_ms], |row| {
        Ok((
            value_text(row.get_ref(0)?).unwrap_or_default(),
            value_text(row.get_ref(1)?),
            value_text(row.get_ref(2)?),
            value_text(row.get_ref(3)?),
            value_i64(row.get_ref(4)?),
        ))
    })
    .map_err(|e| format!("{where_}: reading sessions: {e}"))?;

    let mut high = None::<i64>;
    for (sid, project, parent, directory, updated) in sessions {
        if let Some(u) = updated {
            high = Some(high.map_or(u, |h| h.max(u)));
        }
        let cwd = directory
            .filter(|d| !d.is_empty())
            .or_else(|| project.as_ref().and_then(|p| projects.get(p).cloned()));
        match read_session(
            conn,
            &sid,
            &mcols,
            pcols.as_ref(),
            &mut batch.warnings,
            &where_,
        ) {
            Ok(msgs) => batch.turns.extend(build(&sid, parent, cwd, &msgs)),
            Err(e) => batch.warnings.push(format!("{where_}: session {sid}: {e}")),
        }
    }
    if let Some(h) = high {
        batch.high_water = Some(h.to_string());
    }
    Ok(batch)
}

fn query_rows<T, P: rusqlite::Params>(
    conn: &rusqlite::Connection,
    sql: &str,
    params: P,
    f: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map(params, f)?;
    rows.collect()
}

fn read_projects(conn: &rusqlite::Connection) -> Option<HashMap<String, String>> {
    let cols = table_columns(conn, "project").ok()??;
    if !cols.contains("worktree") {
        return None;
    }
    query_rows(conn, "SELECT id, worktree FROM project", [], |row| {
        Ok((value_text(row.get_ref(0)?), value_text(row.get_ref(1)?)))
    })
    .ok()
    .map(|rows| {
        rows.into_iter()
            .filter_map(|(a, b)| Some((a?, b?)))
            .collect()
    })
}

fn read_session(
    conn: &rusqlite::Connection,
    sid: &str,
    mcols: &std::collections::HashSet<String>,
    pcols: Option<&std::collections::HashSet<String>>,
    warnings: &mut Vec<String>,
    where_: &dyn std::fmt::Display,
) -> rusqlite::Result<Vec<Msg>> {
    let sql = format!(
        "SELECT id, {} FROM message WHERE session_id = ?1 ORDER BY {}, id",
        col(mcols, "data"),
        col(mcols, "time_created"),
    );
    let rows = query_rows(conn, &sql, [sid], |row| {
        Ok((
            value_text(row.get_ref(0)?).unwrap_or_default(),
            value_text(row.get_ref(1)?),
        ))
    })?;

    let mut parts: HashMap<String, Vec<Value>> = HashMap::new();
    if let Some(pcols) = pcols {
        let sql = if pcols.contains("session_id") {
            format!(
                "SELECT id, message_id, {} FROM part WHERE session_id = ?1 ORDER BY message_id, id",
                col(pcols, "data")
            )
        } else {
            format!(
                "SELECT id, message_id, {} FROM part WHERE message_id IN \
                 (SELECT id FROM message WHERE session_id = ?1) ORDER BY message_id, id",
                col(pcols, "data")
            )
        };
        let prows = query_rows(conn, &sql, [sid], |row| {
            Ok((
                value_text(row.get_ref(0)?).unwrap_or_default(),
                value_text(row.get_ref(1)?).unwrap_or_default(),
                value_text(row.get_ref(2)?),
            ))
        })?;
        for (pid, mid, data) in prows {
            match data.as_deref().map(|d| parse_json(d.as_bytes())) {
                Some(Ok(v)) => parts.entry(mid).or_default().push(v),
                Some(Err(e)) => {
                    warnings.push(format!("{where_}: part {pid} of session {sid}: {e}"))
                }
                None => {}
            }
        }
    }

    let mut msgs = Vec::new();
    for (mid, data) in rows {
        match data.as_deref().map(|d| parse_json(d.as_bytes())) {
            Some(Ok(mut v)) => {
                if v.get("id").is_none()
                    && let Some(o) = v.as_object_mut()
                {
                    o.insert("id".to_owned(), Value::String(mid.clone()));
                }
                msgs.push(Msg {
                    data: v,
                    parts: parts.remove(&mid).unwrap_or_default(),
                });
            }
            Some(Err(e)) => warnings.push(format!("{where_}: message {mid} of session {sid}: {e}")),
            None => warnings.push(format!("{where_}: message {mid} of session {sid}: no data")),
        }
    }
    Ok(msgs)
}

/// Builds the turns of one session from its messages (shared by the SQLite and JSON stores).
fn build(sid: &str, parent: Option<String>, cwd: Option<String>, msgs: &[Msg]) -> Vec<Turn> {
    let mut b = TurnBuilder::new(sid, parent.filter(|p| !p.is_empty()), cwd);
    for m in msgs {
        match str_of(&m.data, "role") {
            Some("user") => user(&mut b, m),
            Some("assistant") => assistant(&mut b, m),
            _ => {}
        }
    }
    b.finish()
}

fn user(b: &mut TurnBuilder, m: &Msg) {
    let mut request = Vec::new();
    let mut injected = Vec::new();
    for p in &m.parts {
        if str_of(p, "type") != Some("text") {
            continue;
        }
        let text = str_of(p, "text").unwrap_or_default();
        let flag = |k: &str| p.get(k).and_then(Value::as_bool).unwrap_or(false);
        if flag("synthetic") || flag("ignored") {
            injected.push(text.to_owned());
        } else {
            request.push(text.to_owned());
        }
    }
    if request.is_empty() && injected.is_empty() {
        // Compaction requests and bare file attachments are not the user's words.
        return;
    }
    let id = string_of(&m.data, "id").unwrap_or_default();
    b.start(
        &id,
        &request.join("\n"),
        ts_json(at(&m.data, &["time", "created"])),
    );
    for text in injected {
        // A plugin (Cairn's own among them) adds its context as synthetic text.
        let (rest, notes) = split_injected(&text);
        for note in notes {
            b.inject("cairn", &note);
        }
        b.inject("opencode", &rest);
    }
    b.model(str_at(&m.data, &["model", "modelID"]));
}

fn assistant(b: &mut TurnBuilder, m: &Msg) {
    let d = &m.data;
    if d.get("summary").and_then(Value::as_bool).unwrap_or(false) && b.has_turn() {
        // A compaction summary, not an answer.
        return;
    }
    b.model(string_of(d, "modelID"));
    b.touch(ts_json(at(d, &["time", "created"])));
    for p in &m.parts {
        match str_of(p, "type") {
            Some("text") if !p.get("synthetic").and_then(Value::as_bool).unwrap_or(false) => {
                b.text(str_of(p, "text").unwrap_or_default());
            }
            Some("tool") => {
                let state = p.get("state").cloned().unwrap_or(Value::Null);
                let status = str_of(&state, "status").unwrap_or_default();
                let output = match status {
                    "completed" => state.get("output").and_then(super::common::output_text),
                    "error" => state.get("error").and_then(super::common::output_text),
                    _ => None,
                };
                b.tool_done(
                    string_of(p, "callID"),
                    str_of(p, "tool").unwrap_or("unknown"),
                    state.get("input").cloned().unwrap_or(Value::Null),
                    output,
                    status == "error",
                );
                b.touch(ts_json(at(&state, &["time", "end"])));
            }
            _ => {}
        }
    }
    let completed = ts_json(at(d, &["time", "completed"]));
    b.touch(completed);
    if let Some(err) = d.get("error").filter(|e| !e.is_null()) {
        let outcome = if str_of(err, "name") == Some("MessageAbortedError") {
            Outcome::Interrupted
        } else {
            Outcome::Error
        };
        b.end(outcome, true);
        return;
    }
    match (completed, str_of(d, "finish")) {
        (Some(_), Some("tool-calls" | "tool_calls" | "tool-use")) | (None, _) => {
            b.end(Outcome::Unknown, false);
        }
        (Some(_), Some("stop" | "end_turn" | "end-turn")) => b.end(Outcome::Success, true),
        (Some(_), Some("length" | "content-filter" | "error")) => b.end(Outcome::Error, true),
        (Some(_), _) => b.end(Outcome::Unknown, true),
    }
}

/// Reads a legacy session file (`storage/session/<projectID>/<sessionID>.json`) with its
/// messages (`storage/message/<sessionID>/*.json`) and parts (`storage/part/<messageID>/*.json`).
fn read_legacy(path: &Path, bytes: &[u8]) -> Result<Vec<Turn>, String> {
    let session = parse_json(bytes)?;
    if !session.is_object() {
        return Err("not a session object".to_owned());
    }
    let sid = string_of(&session, "id")
        .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .ok_or("no session id")?;
    let Some(storage) = path.parent().and_then(Path::parent).and_then(Path::parent) else {
        return Ok(Vec::new());
    };
    let mut msgs: Vec<(i64, String, Value)> = json_files(&storage.join("message").join(&sid))
        .into_iter()
        .map(|(name, v)| {
            let created = at(&v, &["time", "created"])
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let id = string_of(&v, "id").unwrap_or(name);
            (created, id, v)
        })
        .collect();
    msgs.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let msgs: Vec<Msg> = msgs
        .into_iter()
        .map(|(_, id, data)| {
            let parts = json_files(&storage.join("part").join(&id))
                .into_iter()
                .map(|(_, v)| v)
                .collect();
            Msg { data, parts }
        })
        .collect();
    let cwd = string_of(&session, "directory");
    Ok(build(&sid, string_of(&session, "parentID"), cwd, &msgs))
}

/// The JSON files of a folder, sorted by name (unreadable or malformed files are skipped: a
/// sibling being rewritten must not fail the session).
fn json_files(dir: &Path) -> Vec<(String, Value)> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|p| {
            let bytes = fs_err::read(&p).ok()?;
            let v = parse_json(&bytes).ok()?;
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            Some((stem, v))
        })
        .collect()
}
