//! Crush (charmbracelet/crush): one SQLite store per project, `<project>/.crush/crush.db`,
//! found through the registry `${XDG_DATA_HOME:-~/.local/share}/crush/projects.json`.
//!
//! `messages.parts` is a JSON array of `{"type", "data"}` with types `text`, `reasoning`,
//! `binary`, `image_url`, `tool_call`, `tool_result`, `finish`; tool results come in `tool`
//! messages. An assistant message's `finish` part says how the call ended (`end_turn`,
//! `tool_use`, `canceled`, `error`, …). Timestamps are written in seconds by some versions
//! and in milliseconds by others (the update triggers use seconds), so they are normalised to
//! milliseconds; because they tick in seconds, the mark also keeps fingerprints of the
//! sessions updated in the newest second ([`BoundaryMark`]). Newer Crush versions may store
//! `parts` zstd-compressed: those rows are skipped with a warning (no zstd decoder here).
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use cairn_core::Outcome;
use serde_json::Value;

use super::common::{
    BoundaryMark, TurnBuilder, col, components, epoch_to_ms, fnv_hex, input_value, new_batch,
    parse_json, snapshot, str_of, string_of, table_columns, ts_auto, value_bytes, value_i64,
    value_text, xdg_data_home,
};
use crate::spec::{Env, FrameworkSpec, Os, Reader, SqliteBatch};
use crate::turn::Turn;

/// The Crush entry.
pub(crate) fn specs() -> Vec<FrameworkSpec> {
    vec![FrameworkSpec {
        name: "crush",
        display: "Crush",
        env_vars: &["CRUSH_GLOBAL_DATA", "XDG_DATA_HOME"],
        roots,
        matches: |rel| matches!(components(rel).as_slice(), [f] if f == "crush.db"),
        reader: Reader::Sqlite(read),
    }]
}

/// The data folder of every project in Crush's registry.
fn roots(env: &Env) -> Vec<PathBuf> {
    let global = match env.var("CRUSH_GLOBAL_DATA") {
        Some(d) => PathBuf::from(d),
        None if env.os == Os::Windows => {
            env.dir_from("LOCALAPPDATA", "AppData/Local").join("crush")
        }
        None => xdg_data_home(env).join("crush"),
    };
    let Ok(bytes) = fs_err::read(global.join("projects.json")) else {
        return Vec::new();
    };
    let Ok(registry) = parse_json(&bytes) else {
        return Vec::new();
    };
    let list = registry
        .get("projects")
        .and_then(Value::as_array)
        .or_else(|| registry.as_array())
        .cloned()
        .unwrap_or_default();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in list {
        let project = string_of(&p, "path").map(PathBuf::from);
        let data_dir = string_of(&p, "data_dir").map(PathBuf::from);
        let root = match (project, data_dir) {
            (_, Some(d)) if d.is_absolute() => d,
            (Some(p), Some(d)) => p.join(d),
            (Some(p), None) => p.join(".crush"),
            (None, _) => continue,
        };
        if !out.contains(&root) {
            out.push(root);
        }
    }
    out
}

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

struct SessionRow {
    id: String,
    parent: Option<String>,
    cwd: Option<String>,
    updated_ms: i64,
    fp: String,
}

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
            "{where_}: no `sessions` table (not a Crush store?)"
        ));
        return Ok(batch);
    };
    let Some(mcols) = table_columns(conn, "messages")? else {
        batch
            .warnings
            .push(format!("{where_}: no `messages` table"));
        return Ok(batch);
    };
    let prev = match since.map(BoundaryMark::parse) {
        Some(Some(m)) => Some(m),
        Some(None) => {
            batch.warnings.push(format!(
                "{where_}: unreadable high-water mark, reading everything"
            ));
            None
        }
        None => None,
    };

    let sql = format!(
        "SELECT s.id, {}, {}, {}, m.mu, m.mf, m.n, m.len FROM sessions s LEFT JOIN \
         (SELECT session_id, max({}) AS mu, max(coalesce({}, 0)) AS mf, count(*) AS n, \
         total(length(parts)) AS len FROM messages GROUP BY session_id) m ON m.session_id = s.id",
        col(&scols, "parent_session_id"),
        col(&scols, "updated_at"),
        col(&scols, "workspace_cwd"),
        col(&mcols, "updated_at"),
        col(&mcols, "finished_at"),
    );
    let default_cwd = project_dir(path);
    let sessions: Vec<SessionRow> = {
        let mut stmt = conn
            .prepare(&sql)
            .map_err(|e| format!("{where_}: reading sessions: {e}"))?;
        let rows = stmt
            .query_map([], |r| {
                let su = value_i64(r.get_ref(2)?).unwrap_or(0);
                let mu = value_i64(r.get_ref(4)?).unwrap_or(0);
                let mf = value_i64(r.get_ref(5)?).unwrap_or(0);
                let n = value_i64(r.get_ref(6)?).unwrap_or(0);
                let len = value_text(r.get_ref(7)?).unwrap_or_default();
                Ok(SessionRow {
                    id: value_text(r.get_ref(0)?).unwrap_or_default(),
                    parent: value_text(r.get_ref(1)?).filter(|p| !p.is_empty()),
                    cwd: value_text(r.get_ref(3)?).filter(|c| !c.is_empty()),
                    updated_ms: epoch_to_ms(su).max(epoch_to_ms(mu)).max(epoch_to_ms(mf)),
                    fp: fnv_hex(&[format!("{su}:{mu}:{mf}:{n}:{len}").as_bytes()])[..12].to_owned(),
                })
            })
            .map_err(|e| format!("{where_}: reading sessions: {e}"))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| format!("{where_}: reading sessions: {e}"))?
    };

    let Some(top) = sessions.iter().map(|s| s.updated_ms).max() else {
        return Ok(batch);
    };
    let mark = BoundaryMark {
        t: top,
        fps: sessions
            .iter()
            .filter(|s| s.updated_ms == top)
            .map(|s| (s.id.clone(), s.fp.clone()))
            .collect(),
    };
    for s in &sessions {
        let changed = match &prev {
            None => true,
            Some(p) => {
                s.updated_ms > p.t || (s.updated_ms == p.t && p.fps.get(&s.id) != Some(&s.fp))
            }
        };
        if !changed {
            continue;
        }
        let cwd = s.cwd.clone().or_else(|| default_cwd.clone());
        match session_turns(conn, s, cwd, &mcols, &mut batch.warnings, &where_) {
            Ok(turns) => batch.turns.extend(turns),
            Err(e) => batch
                .warnings
                .push(format!("{where_}: session {}: {e}", s.id)),
        }
    }
    batch.high_water = Some(mark.render());
    Ok(batch)
}

/// The project of a store kept in the default `<project>/.crush/` folder.
fn project_dir(db: &Path) -> Option<String> {
    let data = db.parent()?;
    if data.file_name()? != ".crush" {
        return None;
    }
    Some(data.parent()?.display().to_string())
}

fn session_turns(
    conn: &rusqlite::Connection,
    s: &SessionRow,
    cwd: Option<String>,
    mcols: &HashSet<String>,
    warnings: &mut Vec<String>,
    where_: &dyn std::fmt::Display,
) -> rusqlite::Result<Vec<Turn>> {
    let sql = format!(
        "SELECT id, role, parts, {}, {}, {}, {} FROM messages WHERE session_id = ?1 \
         ORDER BY {}, rowid",
        col(mcols, "model"),
        col(mcols, "created_at"),
        col(mcols, "finished_at"),
        col(mcols, "is_summary_message"),
        col(mcols, "created_at"),
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([&s.id], |r| {
        Ok((
            value_text(r.get_ref(0)?).unwrap_or_default(),
            value_text(r.get_ref(1)?).unwrap_or_default(),
            value_bytes(r.get_ref(2)?),
            value_text(r.get_ref(3)?),
            value_i64(r.get_ref(4)?),
            value_i64(r.get_ref(5)?),
            value_i64(r.get_ref(6)?).unwrap_or(0),
        ))
    })?;
    let mut b = TurnBuilder::new(&s.id, s.parent.clone(), cwd);
    let mut zstd_warned = false;
    for row in rows {
        let (id, role, parts, model, created, finished, summary) = row?;
        let parts = match parts {
            Some(p) if p.starts_with(&ZSTD_MAGIC) => {
                if !zstd_warned {
                    warnings.push(format!(
                        "{where_}: session {}: zstd-compressed message parts cannot be read yet",
                        s.id
                    ));
                    zstd_warned = true;
                }
                continue;
            }
            Some(p) => match parse_json(&p) {
                Ok(Value::Array(a)) => a,
                Ok(_) => {
                    warnings.push(format!("{where_}: message {id}: parts is not an array"));
                    continue;
                }
                Err(e) => {
                    warnings.push(format!("{where_}: message {id}: {e}"));
                    continue;
                }
            },
            None => Vec::new(),
        };
        if summary != 0 {
            continue;
        }
        let created = created.and_then(ts_auto);
        match role.as_str() {
            "user" => user(&mut b, &id, &parts, created),
            "assistant" => {
                b.model(model);
                b.touch(created);
                assistant(&mut b, &parts);
                b.touch(finished.and_then(ts_auto));
            }
            "tool" => {
                for p in &parts {
                    if str_of(p, "type") == Some("tool_result") {
                        let d = p.get("data").unwrap_or(&Value::Null);
                        b.tool_result(
                            str_of(d, "tool_call_id"),
                            str_of(d, "name"),
                            Some(str_of(d, "content").unwrap_or_default().to_owned()),
                            d.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                        );
                    }
                }
                b.touch(created);
            }
            _ => {}
        }
    }
    Ok(b.finish())
}

fn user(b: &mut TurnBuilder, id: &str, parts: &[Value], at: Option<cairn_core::Timestamp>) {
    let mut request = Vec::new();
    let mut hidden = Vec::new();
    for p in parts {
        if str_of(p, "type") != Some("text") {
            continue;
        }
        let d = p.get("data").unwrap_or(&Value::Null);
        let text = str_of(d, "text").unwrap_or_default().to_owned();
        if d.get("hidden").and_then(Value::as_bool).unwrap_or(false) {
            hidden.push(text);
        } else {
            request.push(text);
        }
    }
    let request = request.join("\n");
    if request.trim().is_empty() {
        // A generated continuation kept in the model's history, not the user's words.
        for text in hidden {
            b.inject("crush", &text);
        }
        return;
    }
    b.start(id, &request, at);
    for text in hidden {
        b.inject("crush", &text);
    }
}

fn assistant(b: &mut TurnBuilder, parts: &[Value]) {
    let mut finish = None;
    for p in parts {
        let d = p.get("data").unwrap_or(&Value::Null);
        match str_of(p, "type") {
            Some("text") => b.text(str_of(d, "text").unwrap_or_default()),
            Some("tool_call") => b.tool(
                string_of(d, "id"),
                str_of(d, "name").unwrap_or("unknown"),
                input_value(d.get("input")),
            ),
            Some("finish") => finish = Some(str_of(d, "reason").unwrap_or("unknown").to_owned()),
            _ => {}
        }
    }
    match finish.as_deref() {
        None | Some("tool_use") => b.end(Outcome::Unknown, false),
        Some("end_turn" | "stop") => b.end(Outcome::Success, true),
        Some("canceled" | "cancelled") => b.end(Outcome::Interrupted, true),
        Some("error" | "max_tokens" | "content_filter") => b.end(Outcome::Error, true),
        Some(_) => b.end(Outcome::Unknown, true),
    }
}
