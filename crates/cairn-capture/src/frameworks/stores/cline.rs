//! Cline, and the parser shared by its forks (Roo Code, Kilo Code before 1.0).
//!
//! Stores (whole files, rewritten on every change):
//! - SDK era: `~/.cline/data/sessions/<id>/<id>.messages.json` — `{version, sessionId,
//!   messages: [...]}` with Anthropic-style messages; a sibling `<id>.json` manifest gives the
//!   cwd and model; sub-agents write `<agentId>.messages.json` in the root session's folder.
//! - Task folders: `~/.cline/data/tasks/<taskId>/api_conversation_history.json` and the VS
//!   Code extension's `globalStorage/saoudrizwan.claude-dev/tasks/<taskId>/…` — a JSON array
//!   of Anthropic-style messages (the model-facing history).
//!
//! The history is model-facing, so the user's words are recovered from Cline's wrappers:
//! `<task>` opens the task, `<feedback>` after `attempt_completion` and `<user_message>` (task
//! resumption, plan mode) are new requests; `<environment_details>` is dropped (the cwd is
//! read from it). Older models call tools as XML in the assistant's text (`<read_file>…`) and
//! get results as `[read_file for 'x'] Result:` text; newer ones use `tool_use`/`tool_result`
//! blocks. `attempt_completion` ends a turn successfully (its `result` is kept as the
//! assistant's text); `[TASK RESUMPTION]` marks an unfinished turn as interrupted.
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use cairn_core::Outcome;
use serde_json::{Map, Value};

use super::common::{
    Block, TurnBuilder, at, between, blocks, components, id_of, infer_outcomes, parse_json, str_at,
    str_of, string_of, strip_sections, ts_json,
};
use crate::spec::{Env, FrameworkSpec, Reader};
use crate::turn::Turn;

/// The Cline entry.
pub(crate) fn specs() -> Vec<FrameworkSpec> {
    vec![FrameworkSpec {
        name: "cline",
        display: "Cline",
        env_vars: &["CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR"],
        roots,
        matches: task_or_session_matches,
        reader: Reader::WholeFile(read_task),
    }]
}

fn roots(env: &Env) -> Vec<PathBuf> {
    let data = match env.var("CLINE_DATA_DIR") {
        Some(d) => PathBuf::from(d),
        None => env.dir_from("CLINE_DIR", ".cline").join("data"),
    };
    let sessions = match env.var("CLINE_SESSION_DATA_DIR") {
        Some(d) => PathBuf::from(d),
        None => data.join("sessions"),
    };
    let mut v = vec![sessions, data.join("tasks")];
    v.extend(
        env.vscode_global_storage("saoudrizwan.claude-dev")
            .into_iter()
            .map(|d| d.join("tasks")),
    );
    v
}

/// `<taskId>/api_conversation_history.json` or `<sessionId>/<id>.messages.json` under a root.
pub(crate) fn task_or_session_matches(rel: &Path) -> bool {
    matches!(components(rel).as_slice(),
        [_, f] if f == "api_conversation_history.json" || f.ends_with(".messages.json"))
}

/// `<taskId>/api_conversation_history.json` under a `tasks` root.
pub(crate) fn task_matches(rel: &Path) -> bool {
    matches!(components(rel).as_slice(), [_, f] if f == "api_conversation_history.json")
}

/// Tools older Cline-family models call as XML in their text.
const XML_TOOLS: &[&str] = &[
    "execute_command",
    "read_file",
    "write_to_file",
    "replace_in_file",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "ask_followup_question",
    "attempt_completion",
    "plan_mode_respond",
    "new_task",
    "load_mcp_documentation",
    "web_fetch",
    "web_search",
    "condense",
    "summarize_task",
    "report_bug",
    "new_rule",
    "apply_diff",
    "insert_content",
    "search_and_replace",
    "switch_mode",
    "codebase_search",
    "fetch_instructions",
    "update_todo_list",
    "run_slash_command",
    "generate_image",
    "apply_patch",
];

/// Reads a Cline-family conversation file (task history array or SDK messages file).
pub(crate) fn read_task(path: &Path, bytes: &[u8]) -> Result<Vec<Turn>, String> {
    let doc = parse_json(bytes)?;
    let dir = path.parent();
    let dir_name = dir
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned());
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();

    let (messages, session_id, parent, side) = match &doc {
        Value::Array(items) => {
            let side = dir.map(task_sidecar).unwrap_or_default();
            (items.clone(), dir_name.unwrap_or_default(), None, side)
        }
        Value::Object(_) => {
            let items = doc
                .get("messages")
                .and_then(Value::as_array)
                .cloned()
                .ok_or("no `messages` array")?;
            let stem = file_name
                .strip_suffix(".messages.json")
                .unwrap_or(&file_name)
                .to_owned();
            let root = string_of(&doc, "sessionId").or(dir_name);
            let parent = root.filter(|r| r != &stem);
            let side = dir.map(|d| manifest_sidecar(d, &stem)).unwrap_or_default();
            (items, stem, parent, side)
        }
        _ => return Err("neither a message array nor a messages file".to_owned()),
    };
    Ok(parse_messages(&session_id, parent, side, &messages))
}

/// What sibling files say about a session.
#[derive(Debug, Default)]
struct Sidecar {
    cwd: Option<String>,
    model: Option<String>,
}

/// `history_item.json` (Roo: `workspace`) and `task_metadata.json` (`model_usage`, and a
/// workspace where present).
fn task_sidecar(dir: &Path) -> Sidecar {
    let read = |name: &str| {
        fs_err::read(dir.join(name))
            .ok()
            .and_then(|b| parse_json(&b).ok())
            .unwrap_or(Value::Null)
    };
    let history = read("history_item.json");
    let meta = read("task_metadata.json");
    let cwd = string_of(&history, "workspace")
        .or_else(|| string_of(&meta, "workspace"))
        .or_else(|| string_of(&meta, "cwd"))
        .or_else(|| string_of(&meta, "cwdOnTaskInitialization"));
    let model = meta
        .get("model_usage")
        .and_then(Value::as_array)
        .and_then(|u| u.iter().rev().find_map(|e| string_of(e, "model_id")))
        .or_else(|| string_of(&history, "apiModelId"));
    Sidecar { cwd, model }
}

/// The SDK manifest `<id>.json` next to `<id>.messages.json`.
fn manifest_sidecar(dir: &Path, stem: &str) -> Sidecar {
    let Some(m) = fs_err::read(dir.join(format!("{stem}.json")))
        .ok()
        .and_then(|b| parse_json(&b).ok())
    else {
        return Sidecar::default();
    };
    Sidecar {
        cwd: ["cwd", "workspace_root", "workspaceRoot"]
            .iter()
            .find_map(|k| string_of(&m, k)),
        model: ["model", "modelId", "model_id"]
            .iter()
            .find_map(|k| string_of(&m, k)),
    }
}

fn parse_messages(
    sid: &str,
    parent: Option<String>,
    side: Sidecar,
    messages: &[Value],
) -> Vec<Turn> {
    let mut b = TurnBuilder::new(sid, parent, side.cwd.clone());
    let mut completion_ids: HashSet<String> = HashSet::new();
    let mut cwd_known = side.cwd.is_some();
    for (i, m) in messages.iter().enumerate() {
        if m.get("isSummary").and_then(Value::as_bool).unwrap_or(false) {
            // A condensed summary of earlier turns (Roo), not part of the conversation.
            continue;
        }
        let ts = ts_json(m.get("ts")).or_else(|| ts_json(at(m, &["metadata", "ts"])));
        let id = id_of(m, "id")
            .or_else(|| id_of(m, "ts"))
            .unwrap_or_else(|| i.to_string());
        match str_of(m, "role") {
            Some("user") => {
                user(&mut b, &id, m, ts, &mut completion_ids, &mut cwd_known);
                if b.has_turn() && b.cur().model.is_none() {
                    b.model(side.model.clone());
                }
            }
            Some("assistant") => {
                b.touch(ts);
                b.model(
                    str_at(m, &["modelInfo", "id"])
                        .or_else(|| string_of(m, "model"))
                        .or_else(|| str_at(m, &["metadata", "model"]))
                        .or_else(|| str_at(m, &["metadata", "modelInfo", "id"])),
                );
                assistant(&mut b, m, &mut completion_ids);
            }
            _ => {}
        }
    }
    let mut turns = b.finish();
    infer_outcomes(&mut turns, false);
    turns
}

fn user(
    b: &mut TurnBuilder,
    id: &str,
    m: &Value,
    ts: Option<cairn_core::Timestamp>,
    completion_ids: &mut HashSet<String>,
    cwd_known: &mut bool,
) {
    let mut request: Option<String> = None;
    let mut resumption = false;
    let mut had_results = false;
    let mut results: Vec<(String, String)> = Vec::new();
    let mut free: Vec<String> = Vec::new();

    for block in blocks(m.get("content")) {
        match block {
            Block::ToolResult {
                id: rid,
                output,
                is_error,
            } => {
                had_results = true;
                let text = output.unwrap_or_default();
                if rid.as_deref().is_some_and(|r| completion_ids.contains(r)) {
                    if let Some(f) = between(&text, "<feedback>", "</feedback>") {
                        request = Some(f.to_owned());
                    }
                    continue;
                }
                let denied = is_error || text.contains("The user denied this operation");
                b.tool_result(rid.as_deref(), None, Some(text), denied);
            }
            Block::Text(t) => {
                let (t, envs) =
                    strip_sections(&t, "<environment_details>", "</environment_details>");
                if !*cwd_known && let Some(cwd) = envs.iter().find_map(|e| env_cwd(e)) {
                    b.set_cwd(Some(cwd));
                    *cwd_known = true;
                }
                if t.is_empty() {
                    continue;
                }
                if let Some(name) = result_marker(&t) {
                    had_results = true;
                    let body = t
                        .split_once('\n')
                        .map_or("", |(_, rest)| rest)
                        .trim()
                        .to_owned();
                    results.push((name, body));
                } else if !results.is_empty() && !is_special(&t) {
                    if let Some(last) = results.last_mut() {
                        if !last.1.is_empty() {
                            last.1.push('\n');
                        }
                        last.1.push_str(&t);
                    }
                } else {
                    free.push(t);
                }
            }
            _ => {}
        }
    }

    for (name, body) in results {
        match name.as_str() {
            "attempt_completion" | "plan_mode_respond" => {
                if let Some(r) = between(&body, "<feedback>", "</feedback>")
                    .or_else(|| between(&body, "<user_message>", "</user_message>"))
                {
                    request = Some(r.to_owned());
                }
            }
            _ => {
                let failed = body.contains("The user denied this operation")
                    || body.starts_with("Error")
                    || body.contains("<error>");
                b.tool_result_by_name(&name, Some(body), failed);
            }
        }
    }
    for t in free {
        if t.starts_with("[TASK RESUMPTION]") {
            resumption = true;
            if let Some(r) = between(&t, "<user_message>", "</user_message>") {
                request = Some(r.to_owned());
            }
        } else if let Some(task) = between(&t, "<task>", "</task>") {
            request = Some(task.to_owned());
        } else if let Some(r) = between(&t, "<user_message>", "</user_message>") {
            request = Some(r.to_owned());
        } else if let Some(r) = between(&t, "<feedback>", "</feedback>") {
            request = Some(r.to_owned());
        } else if t.starts_with("[ERROR]") || had_results || request.is_some() {
            b.inject("cline", &t);
        } else {
            request = Some(t);
        }
    }

    if resumption && b.has_turn() && !b.cur().complete {
        b.end(Outcome::Interrupted, true);
    }
    match request {
        Some(r) => b.start(id, &r, ts),
        None => b.touch(ts),
    }
}

/// Text blocks that are never part of a tool result.
fn is_special(t: &str) -> bool {
    t.starts_with("[TASK RESUMPTION]")
        || t.starts_with("[ERROR]")
        || t.contains("<task>")
        || t.contains("<user_message>")
}

/// `[read_file for 'x'] Result:` → `read_file`.
fn result_marker(t: &str) -> Option<String> {
    let first = t.lines().next()?.trim();
    let inner = first.strip_prefix('[')?;
    if !first.ends_with("Result:") {
        return None;
    }
    let name: String = inner
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// `# Current Working Directory (/x) Files` (Cline) or `# Current Workspace Directory (/x) Files`.
fn env_cwd(env: &str) -> Option<String> {
    env.lines().find_map(|l| {
        let l = l.trim();
        if !(l.starts_with("# Current Working Directory")
            || l.starts_with("# Current Workspace Directory"))
        {
            return None;
        }
        let start = l.find('(')? + 1;
        let end = l.rfind(')')?;
        (end > start).then(|| l[start..end].trim().to_owned())
    })
}

fn assistant(b: &mut TurnBuilder, m: &Value, completion_ids: &mut HashSet<String>) {
    for block in blocks(m.get("content")) {
        match block {
            Block::Text(t) => {
                let (t, _thinking) = strip_sections(&t, "<thinking>", "</thinking>");
                for seg in xml_segments(&t) {
                    match seg {
                        Seg::Text(s) => b.text(&s),
                        Seg::Tool(name, params) => tool(b, None, &name, Value::Object(params)),
                    }
                }
            }
            Block::ToolUse { id, name, input } => {
                if name == "attempt_completion"
                    && let Some(id) = &id
                {
                    completion_ids.insert(id.clone());
                }
                tool(b, id, &name, input);
            }
            _ => {}
        }
    }
}

fn tool(b: &mut TurnBuilder, id: Option<String>, name: &str, input: Value) {
    match name {
        "attempt_completion" => {
            b.text(str_of(&input, "result").unwrap_or_default());
            b.end(Outcome::Success, true);
        }
        "plan_mode_respond" => b.text(str_of(&input, "response").unwrap_or_default()),
        _ => b.tool(id, name, input),
    }
}

enum Seg {
    Text(String),
    Tool(String, Map<String, Value>),
}

/// Splits assistant text into plain text and XML tool calls of known tools.
fn xml_segments(text: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let next = XML_TOOLS
            .iter()
            .filter_map(|t| rest.find(&format!("<{t}>")).map(|p| (p, *t)))
            .min_by_key(|(p, _)| *p);
        let Some((pos, name)) = next else {
            out.push(Seg::Text(rest.to_owned()));
            break;
        };
        out.push(Seg::Text(rest[..pos].to_owned()));
        let after = &rest[pos + name.len() + 2..];
        let close = format!("</{name}>");
        let (inner, next_rest) = match after.find(&close) {
            Some(e) => (&after[..e], &after[e + close.len()..]),
            None => (after, ""),
        };
        out.push(Seg::Tool(name.to_owned(), xml_params(inner)));
        rest = next_rest;
    }
    out
}

/// `<path>a</path><content>b</content>` → `{"path": "a", "content": "b"}`.
fn xml_params(inner: &str) -> Map<String, Value> {
    let mut params = Map::new();
    let mut rest = inner;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let Some(gt) = after.find('>') else { break };
        let tag = &after[..gt];
        if tag.is_empty() || !tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            rest = &after[gt + 1..];
            continue;
        }
        let body = &after[gt + 1..];
        let close = format!("</{tag}>");
        let (value, next) = match body.find(&close) {
            Some(e) => (&body[..e], &body[e + close.len()..]),
            None => (body, ""),
        };
        let value = value.strip_prefix('\n').unwrap_or(value);
        let value = value.strip_suffix('\n').unwrap_or(value);
        params.insert(tag.to_owned(), Value::String(value.to_owned()));
        rest = next;
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_tool_calls_are_split_from_text() {
        let segs = xml_segments(
            "Plan:\n<write_to_file>\n<path>a.rs</path>\n<content>\nif a < b {}\n</content>\n</write_to_file>\nafter é",
        );
        assert_eq!(segs.len(), 3);
        assert!(matches!(&segs[0], Seg::Text(t) if t == "Plan:\n"));
        match &segs[1] {
            Seg::Tool(name, params) => {
                assert_eq!(name, "write_to_file");
                assert_eq!(params["path"], "a.rs");
                assert_eq!(params["content"], "if a < b {}");
            }
            Seg::Text(t) => panic!("{t}"),
        }
        assert!(matches!(&segs[2], Seg::Text(t) if t == "\nafter é"));
        // A call cut off mid-stream keeps what was written.
        let segs = xml_segments("<read_file>\n<path>src/ma");
        assert!(matches!(&segs[1], Seg::Tool(_, p) if p["path"] == "src/ma"));
    }

    #[test]
    fn result_markers_and_env_cwd() {
        assert_eq!(
            result_marker("[read_file for 'a b'] Result:\nx").as_deref(),
            Some("read_file")
        );
        assert_eq!(
            result_marker("[attempt_completion] Result:").as_deref(),
            Some("attempt_completion")
        );
        assert_eq!(result_marker("[ERROR] You did not use a tool"), None);
        assert_eq!(
            env_cwd("# Current Working Directory (/home/dev/a (copy)) Files\nx").as_deref(),
            Some("/home/dev/a (copy)")
        );
        assert_eq!(env_cwd("# Current Mode\nACT"), None);
    }
}
