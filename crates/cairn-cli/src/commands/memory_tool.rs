//! `cairn memory-tool`: Cairn's notes as the storage of the memory tool (`memory_20250818`)
//! for any application that calls a model with it. The application hands over the command
//! the model sent (JSON, on stdin) and returns what this prints to the model.
//!
//! One JSON command on stdin gives one result; several (or `--stream`, which answers each
//! line as it arrives, for an application that keeps one process open) give one JSON
//! result per line. A result is the tool result: its text, and whether it is an error.
use std::io::{BufRead, Write};

use anyhow::{Context, bail};
use cairn_api::{ApiError, Backend};
use cairn_core::ErrorCode;
use cairn_core::api::{NoteAccess, NoteCommandReq, NoteCommandRes, NoteMount, NoteScopeKind};
use serde_json::{Value, json};

use super::{Ctx, Failure};
use crate::cli::MemoryToolArgs;

/// The fields a memory-tool command may carry: the contract's, then Cairn's additions.
const FIELDS: &[&str] = &[
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
    "expected_sha256",
    "precondition",
    "version",
];

/// Who the caller is and what it may reach, from the command line.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    /// The caller's own store: this project's notes, else the user's.
    pub(crate) project: Option<String>,
    /// Whether every write is refused.
    pub(crate) read_only: bool,
    /// More stores under `/memories/<name>/`.
    pub(crate) mounts: Vec<NoteMount>,
    /// Kept in the versions as `agent:<client>`.
    pub(crate) client: String,
}

/// Parses `--mount NAME=user[:rw|:ro]` or `NAME=project:<identity>[:rw|:ro]` (read-only
/// unless `:rw`).
pub(crate) fn parse_mount(spec: &str) -> anyhow::Result<NoteMount> {
    let Some((name, rest)) = spec.split_once('=') else {
        bail!(
            "--mount {spec:?}: write NAME=user or NAME=project:<identity>, optionally ending in :rw (read-write) or :ro"
        );
    };
    let (rest, access) = if let Some(r) = rest.strip_suffix(":rw") {
        (r, NoteAccess::ReadWrite)
    } else if let Some(r) = rest.strip_suffix(":ro") {
        (r, NoteAccess::ReadOnly)
    } else {
        (rest, NoteAccess::ReadOnly)
    };
    let (scope, project) = if rest == "user" {
        (NoteScopeKind::User, None)
    } else if let Some(p) = rest.strip_prefix("project:") {
        if p.trim().is_empty() {
            bail!("--mount {spec:?}: the project identity after `project:` is empty");
        }
        (NoteScopeKind::Project, Some(p.to_owned()))
    } else {
        bail!("--mount {spec:?}: the store is `user` or `project:<identity>`, not {rest:?}");
    };
    if name.trim().is_empty() {
        bail!("--mount {spec:?}: the name before `=` is empty");
    }
    Ok(NoteMount {
        name: name.to_owned(),
        scope,
        project,
        access,
    })
}

/// The request for one command the model sent, or the tool error to give back.
fn request(caller: &Caller, input: Value) -> Result<NoteCommandReq, String> {
    let Value::Object(mut map) = input else {
        return Err(format!(
            "a memory-tool command is a JSON object with a `command`, not {}",
            short(&input)
        ));
    };
    let unknown: Vec<&String> = map
        .keys()
        .filter(|k| !FIELDS.contains(&k.as_str()))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "unknown field(s) {unknown:?}; a memory-tool command has {}",
            FIELDS.join(", ")
        ));
    }
    if !map.get("command").is_some_and(Value::is_string) {
        return Err(
            "the command needs `command`: view, create, str_replace, insert, delete or rename"
                .to_owned(),
        );
    }
    map.insert(
        "scope".into(),
        json!(if caller.project.is_some() {
            "project"
        } else {
            "user"
        }),
    );
    if let Some(p) = &caller.project {
        map.insert("project".into(), json!(p));
    }
    map.insert(
        "access".into(),
        json!(if caller.read_only {
            "read-only"
        } else {
            "read-write"
        }),
    );
    map.insert("author".into(), json!(format!("agent:{}", caller.client)));
    map.insert("mounts".into(), json!(caller.mounts));
    serde_json::from_value(Value::Object(map)).map_err(|e| format!("malformed command: {e}"))
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

/// One tool result.
struct Outcome {
    content: String,
    is_error: bool,
    sha256: Option<String>,
}

impl Outcome {
    fn json(&self) -> Value {
        json!({"content": self.content, "is_error": self.is_error, "sha256": self.sha256})
    }
}

/// Runs one command. A refused command is a tool result (`is_error`); a service that cannot
/// be reached is the caller's failure.
async fn run_one(backend: &Backend, caller: &Caller, input: Value) -> Result<Outcome, ApiError> {
    let req = match request(caller, input) {
        Ok(r) => r,
        Err(content) => {
            return Ok(Outcome {
                content,
                is_error: true,
                sha256: None,
            });
        }
    };
    let res: Result<NoteCommandRes, ApiError> = backend.call_typed("note_command", &req).await;
    match res {
        Ok(r) => Ok(Outcome {
            content: r.output,
            is_error: false,
            sha256: r.sha256,
        }),
        Err(e) if matches!(e.code, ErrorCode::Unavailable | ErrorCode::Internal) => Err(e),
        Err(e) => Ok(Outcome {
            content: e.message,
            is_error: true,
            sha256: None,
        }),
    }
}

/// `cairn memory-tool`: answers the commands on standard input; exits 5 when the one
/// command was refused (text mode; its message, printed, is the tool result).
pub async fn run(ctx: &Ctx, args: MemoryToolArgs) -> Result<(), Failure> {
    let MemoryToolArgs {
        project,
        read_only,
        mounts,
        json,
        stream,
        client,
    } = args;
    let mounts = mounts
        .iter()
        .map(|m| parse_mount(m))
        .collect::<anyhow::Result<Vec<_>>>()
        .map_err(|e| Failure { code: 2, error: e })?;
    let caller = Caller {
        project,
        read_only,
        mounts,
        client,
    };
    let backend = ctx.backend().await?;
    let res = answer(&backend, &caller, json, stream).await;
    backend.close().await;
    match res? {
        0 => Ok(()),
        code => Err(Failure {
            code,
            error: anyhow::anyhow!(""),
        }),
    }
}

/// What `cairn memory-tool` ends with: 0, or 5 when the one command was refused (text
/// mode; its message is the tool result).
async fn answer(
    backend: &Backend,
    caller: &Caller,
    json_out: bool,
    stream: bool,
) -> anyhow::Result<u8> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    if stream {
        for (n, line) in stdin.lock().lines().enumerate() {
            let line = line.context("cannot read stdin")?;
            if line.trim().is_empty() {
                continue;
            }
            let outcome = match serde_json::from_str::<Value>(&line) {
                Ok(v) => run_one(backend, caller, v).await?,
                Err(e) => Outcome {
                    content: format!("line {} is not JSON: {e}", n + 1),
                    is_error: true,
                    sha256: None,
                },
            };
            writeln!(out, "{}", outcome.json())?;
            out.flush()?;
        }
        return Ok(0);
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut stdin.lock(), &mut text).context("cannot read stdin")?;
    let mut values = Vec::new();
    for v in serde_json::Deserializer::from_str(&text).into_iter::<Value>() {
        match v {
            Ok(v) => values.push(v),
            Err(e) => bail!("stdin is not a JSON memory-tool command (or JSON lines of them): {e}"),
        }
    }
    match values.len() {
        0 => bail!(
            "stdin holds no command; send one JSON memory-tool command, e.g. {{\"command\": \"view\", \"path\": \"/memories\"}}"
        ),
        1 => {
            let outcome = run_one(backend, caller, values.remove(0)).await?;
            if json_out {
                writeln!(out, "{}", outcome.json())?;
                return Ok(0);
            }
            writeln!(out, "{}", outcome.content)?;
            Ok(if outcome.is_error { 5 } else { 0 })
        }
        _ => {
            for v in values {
                let outcome = run_one(backend, caller, v).await?;
                writeln!(out, "{}", outcome.json())?;
            }
            Ok(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_parse_with_their_access() {
        let m = parse_mount("team=project:git:example.org/team:rw").unwrap();
        assert_eq!(m.name, "team");
        assert_eq!(m.project.as_deref(), Some("git:example.org/team"));
        assert_eq!(m.access, NoteAccess::ReadWrite);
        let m = parse_mount("mine=user").unwrap();
        assert_eq!(
            (m.scope, m.access),
            (NoteScopeKind::User, NoteAccess::ReadOnly)
        );
        assert!(parse_mount("nope").is_err());
        assert!(parse_mount("x=elsewhere").is_err());
        assert!(parse_mount("x=project:").is_err());
    }

    #[test]
    fn commands_carry_the_callers_scope_and_refuse_unknown_fields() {
        let caller = Caller {
            project: Some("p".into()),
            read_only: true,
            mounts: vec![],
            client: "app".into(),
        };
        let req = request(
            &caller,
            json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"}),
        )
        .unwrap();
        assert_eq!(req.old_path.as_deref(), Some("/memories/a.md"));
        assert_eq!(req.access, Some(NoteAccess::ReadOnly));
        assert_eq!(req.project.as_deref(), Some("p"));
        let err = request(&caller, json!({"command": "view", "scope": "user"})).unwrap_err();
        assert!(err.contains("unknown field"), "{err}");
        assert!(request(&caller, json!(["view"])).is_err());
        assert!(request(&caller, json!({"path": "/memories"})).is_err());
    }
}
