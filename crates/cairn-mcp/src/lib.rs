//! # cairn-mcp
//!
//! `cairn mcp`: Cairn's tools for agents over MCP (stdio). A thin client of the running
//! service: every tool call goes to the service's loopback API (found through its
//! `service.json`, read again on each call so a service started later is found), and when no
//! service runs the tool answers with a sentence saying how to start one. The server itself
//! never stops on a failed call.
//!
//! Tools: `search`, `open`, `explore` and `notes` (the memory-tool contract: `view`,
//! `create`, `str_replace`, `insert`, `delete`, `rename`, over the notes of the project the
//! agent works in, or the user's own). A read-only server (`cairn mcp --read-only`) offers
//! `notes` with `view` only, and the service refuses its writes too. `note_feedback` marks
//! an entry of Cairn's turn note (the `<cairn-memory>` block a hook added to the agent's
//! context) not useful, or useful, or removes the mark: a label for the next ranker.
#![deny(missing_docs)]

use std::path::PathBuf;
use std::sync::Arc;

use cairn_core::api::{
    ExploreRes, InjectionEntry, NoteAccess, NoteCommandRes, NoteScopeKind, OpenRes, SearchRes,
    TurnView,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// How `cairn mcp` runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The running service's `service.json`.
    pub service_file: PathBuf,
    /// The project the agent works in (from its working directory), if any.
    pub project: Option<String>,
    /// Notes access for this client.
    pub access: NoteAccess,
    /// More stores mounted under `/memories/<name>/` for this client.
    pub mounts: Vec<cairn_core::api::NoteMount>,
}

/// The most a tool answer holds (agents pay for every character).
const MAX_ANSWER: usize = 60_000;

/// The MCP server.
#[derive(Debug, Clone)]
pub struct CairnMcp {
    opts: Arc<Options>,
}

/// Serves MCP on stdin/stdout until the client goes away.
pub async fn serve_stdio(opts: Options) -> Result<(), String> {
    let server = CairnMcp {
        opts: Arc::new(opts),
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("cannot start the MCP session: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| format!("the MCP session ended abnormally: {e}"))?;
    Ok(())
}

fn schema(v: Value) -> Arc<serde_json::Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(serde_json::Map::new()),
    }
}

impl CairnMcp {
    /// A server with these options (for embedding and tests).
    pub fn new(opts: Options) -> Self {
        Self {
            opts: Arc::new(opts),
        }
    }

    /// The tools, with descriptions written for agents.
    pub fn tools(&self) -> Vec<Tool> {
        let read_only = self.opts.access == NoteAccess::ReadOnly;
        let scope_note = match &self.opts.project {
            Some(p) => format!(
                "Notes live in two scopes: `project` (this project, {p}; the default) and `user` \
                 (yours, visible in every project)."
            ),
            None => "Notes live in the `user` scope (no project was found for this working \
                     directory)."
                .to_owned(),
        };
        let mounts_note = if self.opts.mounts.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = self
                .opts
                .mounts
                .iter()
                .map(|m| {
                    let what = match &m.project {
                        Some(p) => format!("project {p}"),
                        None => "the user's notes".to_owned(),
                    };
                    let access = if m.access == NoteAccess::ReadOnly || read_only {
                        "read-only"
                    } else {
                        "read-write"
                    };
                    format!("/memories/{} ({what}, {access})", m.name)
                })
                .collect();
            format!(" Also mounted: {}.", list.join(", "))
        };
        let notes_desc = if read_only {
            format!(
                "Read Cairn's titled Markdown notes (read-only for this client), the memory \
                 tool's /memories directory. `view` with path \"/memories\" lists the notes; \
                 `view` with a file's path shows it with line numbers (view_range [first, last] \
                 for part of it). `versions` lists a note's kept versions, `version` shows one. \
                 {scope_note}{mounts_note}"
            )
        } else {
            format!(
                "Keep titled Markdown notes that outlast this session, in the memory tool's \
                 /memories directory: conventions, decisions, pitfalls, how-tos worth \
                 remembering. One topic per file, a `# Title` first line. Commands: `view` \
                 (path \"/memories\" lists the notes; a file shows with line numbers; \
                 view_range), `create` (path, file_text; refused if the file exists, unless \
                 expected_sha256 is its current hash: then it overwrites), `str_replace` \
                 (path, old_str that occurs exactly once, new_str), `insert` (path, \
                 insert_line: 0 = top, insert_text), `delete` (path; a directory with all its \
                 notes), `rename` (old_path, new_path). Paths: `/memories/conventions.md` or \
                 relative (`conventions.md`). Writes accept expected_sha256 (from a previous \
                 answer): if the note changed since, the write fails with a conflict and \
                 nothing is changed. Every change is kept as a version: `versions` (path) \
                 lists them, `version` (path, version) shows one, `redact` (path, version) \
                 strips one's content for good. Never store secrets; they are redacted. \
                 {scope_note}{mounts_note}"
            )
        };
        let mut commands = vec!["view", "versions", "version"];
        if !read_only {
            commands.extend([
                "create",
                "str_replace",
                "insert",
                "delete",
                "rename",
                "redact",
            ]);
        }
        vec![
            Tool::new(
                "search",
                "Search everything Cairn remembers from your past sessions with every coding \
                 agent (Claude Code, Codex, Gemini CLI, Cursor, …): what was learned (memory \
                 items: facts, decisions, procedures, pitfalls, …), the conversations \
                 themselves, and the user's notes; by meaning and by keywords. Use it before \
                 re-solving something that may have come up before (an error message, a \
                 decision, how a build or deploy works). Returns the best matches first, each \
                 with its id, where and when it happened, and the matching passage; pass an id \
                 to `open` for the whole item or conversation turn.",
                schema(json!({
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to look for: words, an error message, a question."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": "How many results (20 by default, at most 200)."},
                        "since": {"type": "string", "description": "Prefer results from this date on (YYYY-MM-DD or RFC 3339); the rest still follow."},
                        "until": {"type": "string", "description": "Prefer results up to this date; the rest still follow."},
                        "project": {"type": "string", "description": "Only this project (a project identity as search results show it)."},
                        "kinds": {"type": "array", "items": {"type": "string", "enum": ["item", "record", "note"]}, "description": "Only these kinds: `item` (what was learned), `record` (conversation turns), `note`."}
                    },
                    "required": ["query"]
                })),
            ),
            Tool::new(
                "open",
                "Open one search result whole by its id: a memory item (`i_…`) with its body, \
                 history, related items and the requests it came from; a conversation turn \
                 (`r_…`) with the request, every reply and tool step, and its neighbours' ids; \
                 or a note (`n_…`) with its full Markdown.",
                schema(json!({
                    "type": "object",
                    "properties": {"id": {"type": "string", "description": "An id from search or explore."}},
                    "required": ["id"]
                })),
            ),
            Tool::new(
                "explore",
                "Walk from an id or a concept to what relates to it: related, superseding and \
                 contradicting items, the turns around it in its conversation, the concepts it \
                 is about, and other items, turns and notes about those concepts. Use it to gather context around a result, or to see what is known \
                 about a topic. Give `id` or `concept`.",
                schema(json!({
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "Start from this item, record or note id."},
                        "concept": {"type": "string", "description": "Or start from this word or short phrase."},
                        "depth": {"type": "integer", "minimum": 1, "maximum": 3, "description": "Steps out (1 by default)."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "At most this many related things (20 by default)."}
                    }
                })),
            ),
            Tool::new(
                "notes",
                notes_desc,
                schema(json!({
                    "type": "object",
                    "properties": {
                        "command": {"type": "string", "enum": commands},
                        "path": {"type": "string", "description": "The note or directory: `/memories/conventions.md`, `/memories/db/migrations.md` (or relative: `conventions.md`); `/memories` for the list."},
                        "scope": {"type": "string", "enum": ["project", "user"], "description": "Which notes (project by default when there is a project)."},
                        "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2, "description": "view: first and last line (1-based; -1 = to the end)."},
                        "file_text": {"type": "string"},
                        "old_str": {"type": "string"},
                        "new_str": {"type": "string"},
                        "insert_line": {"type": "integer", "minimum": 0},
                        "insert_text": {"type": "string"},
                        "old_path": {"type": "string", "description": "rename: the note or directory to move."},
                        "new_path": {"type": "string", "description": "rename: where it goes (must not exist)."},
                        "version": {"type": "integer", "minimum": 1, "description": "version, redact: which version (from `versions`)."},
                        "expected_sha256": {"type": "string", "description": "Write only if the note still has this content hash."}
                    },
                    "required": ["command"]
                })),
            ),
            Tool::new(
                "note_feedback",
                "Mark an entry of Cairn's turn note (the <cairn-memory> block added to your \
                 context at the start of a turn) as not useful, when it was irrelevant or \
                 misleading for the request; or as useful; or remove the mark (label null). \
                 Give the entry's id as the block shows it (`r_…`, `i_…`, or `note:…`) and the \
                 turn (`t_…` from the block, or `last` for the latest note). The marks teach \
                 Cairn which earlier things to bring up; they change nothing in memory.",
                schema(json!({
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "The entry's id, as the <cairn-memory> block shows it."},
                        "turn": {"type": "string", "description": "The turn (`t_…`), or `last` (the default) for the latest note."},
                        "label": {"type": ["string", "null"], "enum": ["not_useful", "useful", null], "description": "`not_useful` (the default), `useful`, or null to remove the mark."}
                    },
                    "required": ["id"]
                })),
            ),
        ]
    }

    /// Runs one tool; a failure is an answer with `is_error`, never a crash.
    pub async fn call(
        &self,
        name: &str,
        args: serde_json::Map<String, Value>,
        client: &str,
    ) -> CallToolResult {
        match self.run(name, args, client).await {
            Ok((text, structured)) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(clip(text))]);
                r.structured_content = structured;
                r
            }
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        }
    }

    async fn rpc(&self, method: &str, params: Value) -> Result<Value, String> {
        self.rpc_with(method, params, true).await
    }

    /// Calls the service. `with_code`: a refusal reads `<code>: <message>`; without it, only
    /// the message (the memory-tool contract's tool errors are bare messages).
    async fn rpc_with(
        &self,
        method: &str,
        params: Value,
        with_code: bool,
    ) -> Result<Value, String> {
        let file = self.opts.service_file.clone();
        let method = method.to_owned();
        tokio::task::spawn_blocking(move || {
            let client = match cairn_api::Client::discover_checked(&file) {
                Ok(Some(client)) => client,
                Ok(None) => return Err(NOT_RUNNING.to_owned()),
                Err(e) => return Err(e.message),
            };
            client.call(&method, &params).map_err(|e| {
                if e.code == cairn_core::ErrorCode::Unavailable {
                    format!("{NOT_RUNNING} ({})", e.message)
                } else if with_code {
                    format!("{}: {}", e.code, e.message)
                } else {
                    e.message
                }
            })
        })
        .await
        .map_err(|e| format!("internal error: {e}"))?
    }

    async fn run(
        &self,
        name: &str,
        mut args: serde_json::Map<String, Value>,
        client: &str,
    ) -> Result<(String, Option<Value>), String> {
        match name {
            "search" => {
                let query = args
                    .get("query")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim();
                if query.is_empty() {
                    return Err("search needs a `query`".into());
                }
                let mut params = serde_json::Map::new();
                for key in ["query", "limit", "since", "until", "project", "kinds"] {
                    if let Some(v) = args.remove(key) {
                        params.insert(key.into(), v);
                    }
                }
                params.insert("rerank".into(), Value::Bool(true));
                let v = self.rpc("search", Value::Object(params)).await?;
                let res: SearchRes =
                    serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
                Ok((format_search(&res), Some(v)))
            }
            "open" => {
                let id = args.get("id").and_then(Value::as_str).unwrap_or("").trim();
                if id.is_empty() {
                    return Err("open needs an `id` (from search or explore)".into());
                }
                let v = self.rpc("open", json!({"id": id})).await?;
                let res: OpenRes = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
                Ok((format_open(&res), Some(v)))
            }
            "explore" => {
                let mut params = serde_json::Map::new();
                for key in ["id", "concept", "depth", "limit"] {
                    if let Some(v) = args.remove(key) {
                        params.insert(key.into(), v);
                    }
                }
                let v = self.rpc("explore", Value::Object(params)).await?;
                let res: ExploreRes =
                    serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
                Ok((format_explore(&res), Some(v)))
            }
            "notes" => {
                let command = args
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                if command.is_empty() {
                    return Err("notes needs a `command`: view, create, str_replace, insert, delete or rename".into());
                }
                if self.opts.access == NoteAccess::ReadOnly
                    && !["view", "versions", "version"].contains(&command.as_str())
                {
                    return Err(format!(
                        "forbidden: this client has read-only access to notes; `{command}` is a write"
                    ));
                }
                let scope = match args.remove("scope").as_ref().and_then(Value::as_str) {
                    Some("user") => NoteScopeKind::User,
                    Some("project") | None if self.opts.project.is_some() => NoteScopeKind::Project,
                    None => NoteScopeKind::User,
                    Some("project") => {
                        return Err("there is no project here (the working directory is not in one): use scope `user`".into());
                    }
                    Some(other) => {
                        return Err(format!("unknown scope {other:?}: use project or user"));
                    }
                };
                let mut params = serde_json::Map::new();
                for key in [
                    "command",
                    "path",
                    "view_range",
                    "file_text",
                    "old_str",
                    "new_str",
                    "insert_line",
                    "insert_text",
                    "old_path",
                    "new_path",
                    "version",
                    "expected_sha256",
                    "precondition",
                ] {
                    if let Some(v) = args.remove(key) {
                        params.insert(key.into(), v);
                    }
                }
                if !args.is_empty() {
                    let keys: Vec<&String> = args.keys().collect();
                    return Err(format!("unknown arguments for notes: {keys:?}"));
                }
                params.insert(
                    "scope".into(),
                    serde_json::to_value(scope).map_err(|e| e.to_string())?,
                );
                if scope == NoteScopeKind::Project {
                    params.insert("project".into(), json!(self.opts.project));
                }
                params.insert(
                    "access".into(),
                    serde_json::to_value(self.opts.access).map_err(|e| e.to_string())?,
                );
                params.insert("author".into(), json!(format!("agent:{client}")));
                if !self.opts.mounts.is_empty() {
                    params.insert("mounts".into(), json!(self.opts.mounts));
                }
                let v = self
                    .rpc_with("note_command", Value::Object(params), false)
                    .await?;
                let res: NoteCommandRes =
                    serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
                let mut text = res.output.clone();
                if let Some(sha) = &res.sha256 {
                    text.push_str(&format!("\n(sha256 {sha})"));
                }
                Ok((text, Some(v)))
            }
            "note_feedback" => {
                let id = args.get("id").and_then(Value::as_str).unwrap_or("").trim();
                if id.is_empty() {
                    return Err("note_feedback needs the `id` of an entry of the <cairn-memory> block (r_…, i_… or note:…)".into());
                }
                let turn = match args.get("turn") {
                    None | Some(Value::Null) => "last",
                    Some(Value::String(t)) if !t.trim().is_empty() => t.trim(),
                    Some(other) => {
                        return Err(format!(
                            "`turn` must be a turn id (t_…) or `last`, not {other}"
                        ));
                    }
                };
                let label = match args.get("label") {
                    None => Some("not_useful"),
                    Some(Value::Null) => None,
                    Some(Value::String(l)) if l == "not_useful" || l == "useful" => {
                        Some(l.as_str())
                    }
                    Some(other) => {
                        return Err(format!(
                            "`label` must be \"not_useful\", \"useful\" or null (to remove the mark), not {other}"
                        ));
                    }
                };
                let unknown: Vec<&String> = args
                    .keys()
                    .filter(|k| !["id", "turn", "label"].contains(&k.as_str()))
                    .collect();
                if !unknown.is_empty() {
                    return Err(format!("unknown arguments for note_feedback: {unknown:?}"));
                }
                let v = self
                    .rpc(
                        "note_feedback",
                        json!({"turn": turn, "id": id, "label": label}),
                    )
                    .await?;
                let entry: InjectionEntry =
                    serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
                let text = match entry.label.as_deref() {
                    Some("not_useful") => format!(
                        "Marked [{}] \"{}\" not useful (turn {turn}).",
                        entry.id, entry.title
                    ),
                    Some(l) => format!(
                        "Marked [{}] \"{}\" {} (turn {turn}).",
                        entry.id,
                        entry.title,
                        l.replace('_', " ")
                    ),
                    None => format!(
                        "Removed the mark of [{}] \"{}\" (turn {turn}).",
                        entry.id, entry.title
                    ),
                };
                Ok((text, Some(v)))
            }
            other => Err(format!(
                "unknown tool {other:?}: use search, open, explore, notes or note_feedback"
            )),
        }
    }
}

/// What every tool says when no service runs.
pub const NOT_RUNNING: &str = "Cairn's service is not running. Start the Cairn desktop app, or run \
     `cairn daemon` in a terminal, then call this tool again.";

fn clip(mut text: String) -> String {
    if text.len() > MAX_ANSWER {
        let mut cut = MAX_ANSWER;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n… (cut: the answer was too long; open a single id for the rest)");
    }
    text
}

fn day(ts: &str) -> &str {
    ts.get(..10).unwrap_or(ts)
}

fn format_search(res: &SearchRes) -> String {
    if res.hits.is_empty() {
        return "Nothing found.".into();
    }
    let mut out = String::new();
    for (i, h) in res.hits.iter().enumerate() {
        let place = match (&h.title, &h.project) {
            (Some(t), _) if h.source == "item" => format!(
                "{} \"{t}\"{}{}",
                h.item_kind.as_deref().unwrap_or("item"),
                h.project
                    .as_deref()
                    .map(|p| format!(" · {p}"))
                    .unwrap_or_default(),
                // What only outside text stated (or was never checked) says so.
                match h.item_provenance.as_deref() {
                    Some("outside") => " · (from tool output or files read)",
                    Some("unchecked") => " · (source unchecked)",
                    _ => "",
                }
            ),
            (Some(t), _) => format!("note \"{t}\""),
            (None, Some(p)) => format!("{} · {p}", h.framework),
            (None, None) => h.framework.clone(),
        };
        out.push_str(&format!(
            "{}. [{}] {place} · {}{}\n   {}\n",
            i + 1,
            h.id,
            day(&h.timestamp),
            if h.in_range {
                ""
            } else {
                " (outside the dates asked)"
            },
            h.passage.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    for n in &res.notes {
        out.push_str(&format!("({n})\n"));
    }
    out
}

fn format_turn(t: &TurnView) -> String {
    let mut out = format!("Request ({}): {}\n", t.started_at, t.request);
    for s in &t.steps {
        match s.get("type").and_then(Value::as_str) {
            Some("text") => out.push_str(&format!(
                "Reply: {}\n",
                s.get("text").and_then(Value::as_str).unwrap_or("")
            )),
            Some("tool") => out.push_str(&format!(
                "Tool {}: {}\n  → {}\n",
                s.get("name").and_then(Value::as_str).unwrap_or("?"),
                s.get("input").map(Value::to_string).unwrap_or_default(),
                s.get("output")
                    .map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_owned))
                    .unwrap_or_default()
            )),
            _ => {}
        }
    }
    out.push_str(&format!("Outcome: {}\n", t.outcome));
    out
}

fn format_open(res: &OpenRes) -> String {
    if let Some(it) = &res.item {
        let i = &it.item;
        let mut out = format!(
            "[{}] {} \"{}\" · {} · importance {} · {}\n{}\n\n{}\n",
            i.id,
            i.kind,
            i.title,
            i.project.as_deref().unwrap_or("no project"),
            i.importance,
            i.said_at.as_deref().map(day).unwrap_or("undated"),
            i.summary,
            i.body
        );
        if let Some(by) = &i.superseded_by {
            out.push_str(&format!(
                "Superseded by {by}: prefer that item; this one is kept as history.\n"
            ));
        }
        for r in &it.relations {
            let other = if r.from == i.id { &r.to } else { &r.from };
            out.push_str(&format!(
                "{} {other}{}\n",
                r.kind,
                r.other_title
                    .as_deref()
                    .map(|t| format!(" \"{t}\""))
                    .unwrap_or_default()
            ));
        }
        for s in &it.sources {
            out.push_str(&format!(
                "\nFrom {} session {} (turn {} of {}):\n",
                s.framework, s.session_id, s.position, s.session_turns
            ));
            out.push_str(&format_turn(&s.turn));
        }
        return out;
    }
    if let Some(r) = &res.record {
        let mut out = format!(
            "[{}] {} · {} · turn {} of {} in session {}\n",
            r.turn.id,
            r.framework,
            r.project.as_deref().unwrap_or("no project"),
            r.position,
            r.session_turns,
            r.session_id
        );
        out.push_str(&format_turn(&r.turn));
        if !r.neighbours.is_empty() {
            out.push_str(&format!(
                "Neighbouring turns: {}\n",
                r.neighbours.join(", ")
            ));
        }
        return out;
    }
    if let Some(n) = &res.note {
        return format!(
            "[{}] note {} ({} scope{}) · updated {} · sha256 {}\n\n{}",
            n.note.id,
            n.note.path,
            match n.note.scope {
                NoteScopeKind::User => "user",
                NoteScopeKind::Project => "project",
            },
            n.note
                .project
                .as_deref()
                .map(|p| format!(", {p}"))
                .unwrap_or_default(),
            n.note.updated_at,
            n.note.sha256,
            n.content
        );
    }
    "Nothing to show.".into()
}

fn format_explore(res: &ExploreRes) -> String {
    let mut out = format!(
        "From {} ({}): {}\n",
        res.start.id, res.start.kind, res.start.label
    );
    if res.nodes.is_empty() {
        out.push_str("Nothing related found.\n");
    }
    for n in &res.nodes {
        let how: Vec<&str> = res
            .edges
            .iter()
            .filter(|e| e.to == n.id)
            .map(|e| e.relation.as_str())
            .collect();
        out.push_str(&format!(
            "{}- [{}] {} {}{}\n",
            "  ".repeat(n.depth.saturating_sub(1) as usize),
            n.id,
            n.kind,
            n.label,
            if how.is_empty() {
                String::new()
            } else {
                format!(" ({})", how.join(", "))
            }
        ));
    }
    out
}

impl ServerHandler for CairnMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Cairn is the user's memory across coding-agent sessions. Use `search` before \
                 re-solving a problem that may have come up before, `open` to read a result \
                 whole, `explore` for related context, and `notes` to keep what should be \
                 remembered. When a <cairn-memory> block in your context was not useful, mark \
                 its entry with `note_feedback`.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let client = context
            .peer
            .peer_info()
            .map(|i| i.client_info.name.clone())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "mcp".into());
        let args = request.arguments.unwrap_or_default();
        Ok(self.call(&request.name, args, &client).await.into())
    }
}
