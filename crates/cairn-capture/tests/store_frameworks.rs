//! The SQLite and whole-file store readers, run on synthetic stores
//! (`tests/fixtures/stores/`): sessions, cwd, models, requests, replies, tool pairs, outcomes,
//! high-water marks, and tolerance of old schemas, corrupt rows and truncated files.
#![cfg(test)]
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn_capture::frameworks::stores;
use cairn_capture::spec::SqliteReadFn;
use cairn_capture::{Env, FrameworkSpec, Os, Reader, SqliteBatch, Step, Turn};
use cairn_core::Outcome;
use rusqlite::{Connection, OpenFlags};

/// SpecStory's Markdown histories and cloned-repository provenance (a module of this binary).
mod specstory;

// ---------------------------------------------------------------------------------------------
// Helpers

/// Cairn's marks in the fixtures carry nonces made under `fixtures/mark.key`, a key written
/// for these tests; loading it lets capture recognise those blocks as Cairn's.
fn fixture_key() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mark.key");
    cairn_text::marks::key_at(&path).unwrap();
}

fn fixtures() -> PathBuf {
    fixture_key();
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stores")
}

fn fixture_text(rel: &str) -> String {
    fs_err::read_to_string(fixtures().join(rel)).unwrap()
}

/// A scratch folder removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "cairn-stores-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        if dir.exists() {
            fs_err::remove_dir_all(&dir).unwrap();
        }
        fs_err::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn path(&self, rel: &str) -> PathBuf {
        let p = self.0.join(rel);
        if let Some(parent) = p.parent() {
            fs_err::create_dir_all(parent).unwrap();
        }
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if fs_err::remove_dir_all(&self.0).is_err() {
            eprintln!("could not remove {}", self.0.display());
        }
    }
}

/// Builds a database from a script.
fn build_db(path: &Path, sql: &str) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(sql).unwrap();
}

/// Runs statements against a database (the agent writing).
fn write_db(path: &Path, sql: &str) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(sql).unwrap();
}

/// Opens a store the way capture does: read-only, no mutex, with a busy timeout.
fn open_ro(path: &Path) -> Connection {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    conn
}

/// The spec of `name` whose `matches` accepts `rel`.
fn spec(name: &str, rel: &str) -> FrameworkSpec {
    stores::specs()
        .into_iter()
        .find(|s| s.name == name && (s.matches)(Path::new(rel)))
        .unwrap_or_else(|| panic!("no {name} spec matches {rel}"))
}

fn sqlite_reader(name: &str, rel: &str) -> SqliteReadFn {
    match spec(name, rel).reader {
        Reader::Sqlite(f) => f,
        _ => panic!("{name}/{rel} is not an SQLite store"),
    }
}

type WholeFn = fn(&Path, &[u8]) -> Result<Vec<Turn>, String>;

fn whole_reader(name: &str, rel: &str) -> WholeFn {
    match spec(name, rel).reader {
        Reader::WholeFile(f) => f,
        _ => panic!("{name}/{rel} is not a whole-file store"),
    }
}

fn read_db(name: &str, rel: &str, db: &Path, since: Option<&str>) -> SqliteBatch {
    fixture_key();
    let conn = open_ro(db);
    sqlite_reader(name, rel)(&conn, db, since).unwrap()
}

fn read_file(name: &str, rel: &str, path: &Path) -> Vec<Turn> {
    let bytes = fs_err::read(path).unwrap();
    whole_reader(name, rel)(path, &bytes).unwrap()
}

fn texts(t: &Turn) -> Vec<&str> {
    t.steps
        .iter()
        .filter_map(|s| match s {
            Step::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn tools(t: &Turn) -> Vec<(&str, Option<&str>, bool)> {
    t.steps
        .iter()
        .filter_map(|s| match s {
            Step::Tool {
                name,
                output,
                is_error,
                ..
            } => Some((name.as_str(), output.as_deref(), *is_error)),
            _ => None,
        })
        .collect()
}

fn tool_ids(t: &Turn) -> Vec<Option<&str>> {
    t.steps
        .iter()
        .filter_map(|s| match s {
            Step::Tool { id, .. } => Some(id.as_deref()),
            _ => None,
        })
        .collect()
}

fn injected(t: &Turn) -> Vec<(&str, &str)> {
    t.steps
        .iter()
        .filter_map(|s| match s {
            Step::Injected { source, text } => Some((source.as_str(), text.as_str())),
            _ => None,
        })
        .collect()
}

fn ms(t: &Option<cairn_core::Timestamp>) -> Option<i64> {
    t.map(|t| t.timestamp_millis())
}

fn by_session<'a>(turns: &'a [Turn], sid: &str) -> Vec<&'a Turn> {
    turns.iter().filter(|t| t.session_id == sid).collect()
}

// ---------------------------------------------------------------------------------------------
// The table

#[test]
fn specs_come_in_the_documented_order() {
    let names: Vec<&str> = stores::specs().iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "opencode",
            "opencode",
            "kilo",
            "cursor",
            "cursor",
            "crush",
            "goose",
            "cline",
            "roo-code",
            "kilo",
            "amp",
            "continue",
            "specstory"
        ]
    );
    assert!(
        cairn_capture::frameworks::all()
            .iter()
            .any(|s| s.name == "crush")
    );
}

#[test]
fn roots_follow_the_environment() {
    let home = Path::new("/home/dev");
    let env = Env::fake(home, &[]);
    let roots = |name: &str, rel: &str| (spec(name, rel).roots)(&env);
    assert_eq!(
        roots("opencode", "opencode.db"),
        [home.join(".local/share/opencode")]
    );
    assert_eq!(roots("kilo", "kilo.db"), [home.join(".local/share/kilo")]);
    assert_eq!(
        roots("opencode", "session/p/ses_1.json"),
        [home.join(".local/share/opencode/storage")]
    );
    assert_eq!(
        roots("cursor", "h/id/store.db"),
        [home.join(".cursor/chats")]
    );
    assert_eq!(
        roots("cursor", "state.vscdb"),
        [home.join(".config/Cursor/User/globalStorage")]
    );
    assert_eq!(
        roots("amp", "T-1.json"),
        [home.join(".local/share/amp/threads")]
    );
    assert_eq!(
        roots("continue", "x.json"),
        [home.join(".continue/sessions")]
    );
    let cline = roots("cline", "t/api_conversation_history.json");
    assert_eq!(cline[0], home.join(".cline/data/sessions"));
    assert_eq!(cline[1], home.join(".cline/data/tasks"));
    assert!(
        cline.contains(&home.join(".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks"))
    );
    let roo = (spec("roo-code", "t/api_conversation_history.json").roots)(&env);
    assert!(
        roo.contains(
            &home.join(".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks")
        )
    );
    let goose = roots("goose", "sessions.db");
    assert_eq!(goose[0], home.join(".local/share/goose/sessions"));

    let env = Env::fake(
        home,
        &[
            ("OPENCODE_DB", "/data/oc.db"),
            ("XDG_DATA_HOME", "/xdg"),
            ("CONTINUE_GLOBAL_DIR", "/cont"),
            ("CLINE_DIR", "/cl"),
            ("GOOSE_PATH_ROOT", "/g"),
        ],
    );
    let roots = |name: &str, rel: &str| (spec(name, rel).roots)(&env);
    assert_eq!(
        roots("opencode", "opencode.db"),
        [PathBuf::from("/data/oc.db")]
    );
    assert_eq!(roots("kilo", "kilo.db"), [PathBuf::from("/xdg/kilo")]);
    assert_eq!(
        roots("amp", "T-1.json")[0],
        PathBuf::from("/xdg/amp/threads")
    );
    assert_eq!(
        roots("continue", "x.json"),
        [PathBuf::from("/cont/sessions")]
    );
    assert_eq!(
        roots("cline", "t/api_conversation_history.json")[1],
        PathBuf::from("/cl/data/tasks")
    );
    assert_eq!(
        roots("goose", "sessions.db"),
        [PathBuf::from("/g/data/sessions")]
    );

    // OpenCode on macOS keeps the XDG path; the platform folder is probed too.
    let mac = Env {
        os: Os::MacOs,
        ..Env::fake(home, &[])
    };
    let oc = (spec("opencode", "opencode.db").roots)(&mac);
    assert_eq!(oc[0], home.join(".local/share/opencode"));
    assert!(oc.contains(&home.join("Library/Application Support/opencode")));
}

#[test]
fn matches_pick_only_session_stores() {
    let m = |name: &str, rel: &str| {
        stores::specs()
            .iter()
            .any(|s| s.name == name && (s.matches)(Path::new(rel)))
    };
    assert!(m("opencode", "opencode.db"));
    assert!(m("opencode", "opencode-beta.db"));
    assert!(m("opencode", ""), "a root that is the database itself");
    assert!(!m("opencode", "opencode.db-wal"));
    assert!(!m("opencode", "storage/session/p/s.json"));
    assert!(m("opencode", "session/p/ses_1.json"));
    assert!(!m("opencode", "message/ses_1/msg_1.json"));
    assert!(m("kilo", "kilo.db"));
    assert!(m("cursor", "4d82/b3e1/store.db"));
    assert!(!m("cursor", "b3e1/store.db"));
    assert!(m("cursor", "state.vscdb"));
    assert!(!m("cursor", "state.vscdb.backup"));
    assert!(m("crush", "crush.db"));
    assert!(m("goose", "sessions.db"));
    assert!(!m("goose", "20250101_1.jsonl"));
    assert!(m("cline", "1755/api_conversation_history.json"));
    assert!(m("cline", "sess_1/sess_1.messages.json"));
    assert!(!m("cline", "1755/ui_messages.json"));
    assert!(m("roo-code", "1755/api_conversation_history.json"));
    assert!(m("kilo", "1755/api_conversation_history.json"));
    assert!(m("amp", "T-7f3c.json"));
    assert!(!m("amp", "index.json"));
    assert!(m("continue", "3f1e.json"));
    assert!(!m("continue", "sessions.json"));
}

// ---------------------------------------------------------------------------------------------
// OpenCode

const OC_SESSION: &str = "ses_3a1f0c9e2ffeK7mQ1xDemo01";
const DEMO: &str = "/home/dev/projects/demo-app";

fn opencode_db(s: &Scratch) -> PathBuf {
    let db = s.path("opencode/opencode.db");
    build_db(&db, &fixture_text("opencode/opencode-db.sql"));
    db
}

fn assert_opencode_turn1(t: &Turn) {
    assert_eq!(t.message_id, "msg_3a1f0c9e3001aDemoUser01");
    assert_eq!(t.session_id, OC_SESSION);
    assert_eq!(t.parent_session, None);
    assert_eq!(t.cwd.as_deref(), Some(DEMO));
    assert_eq!(t.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(t.request, "Where is the retry limit configured?");
    assert_eq!(
        texts(t),
        [
            "Let me search for it.",
            "It is the constant `RETRY_LIMIT` (3) in src/net.rs line 12."
        ]
    );
    assert_eq!(
        tools(t),
        [(
            "grep",
            Some("Found 1 match\nsrc/net.rs:\n  Line 12: const RETRY_LIMIT: u32 = 3;"),
            false
        )]
    );
    assert_eq!(tool_ids(t), [Some("toolu_01OcDemoGrep")]);
    assert_eq!(t.outcome, Outcome::Success);
    assert!(t.complete);
    assert_eq!(ms(&t.started_at), Some(1_787_221_201_000));
    assert_eq!(ms(&t.ended_at), Some(1_787_221_207_300));
}

#[test]
fn opencode_reads_turns_tools_and_outcomes() {
    let s = Scratch::new("oc");
    let db = opencode_db(&s);
    let batch = read_db("opencode", "opencode.db", &db, None);
    assert!(batch.warnings.is_empty(), "{:?}", batch.warnings);
    assert_eq!(batch.turns.len(), 2);
    assert_opencode_turn1(&batch.turns[0]);
    let t = &batch.turns[1];
    assert_eq!(t.message_id, "msg_3a1f0c9e3004aDemoUser02");
    assert_eq!(t.request, "Make it configurable via an env var");
    assert_eq!(tools(t), [("edit", Some("Tool execution aborted"), true)]);
    assert!(texts(t).is_empty());
    assert_eq!(t.outcome, Outcome::Interrupted);
    assert!(t.complete);
    assert_eq!(batch.high_water.as_deref(), Some("1787221261500"));
}

#[test]
fn opencode_high_water_skips_unchanged_and_returns_changed_sessions() {
    let s = Scratch::new("oc-hw");
    let db = opencode_db(&s);
    let first = read_db("opencode", "opencode.db", &db, None);
    let mark = first.high_water.clone().unwrap();

    let again = read_db("opencode", "opencode.db", &db, Some(&mark));
    assert!(again.turns.is_empty());
    assert_eq!(again.high_water.as_deref(), Some(mark.as_str()));

    // A new request in the same session, answered by a model call still streaming.
    write_db(
        &db,
        r#"
        INSERT INTO message VALUES ('msg_3a1f0c9e3006aDemoUser03', 'ses_3a1f0c9e2ffeK7mQ1xDemo01', 1787221300000, 1787221300000, '{"role":"user","time":{"created":1787221300000},"model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}');
        INSERT INTO part VALUES ('prt_3a1f0c9e4012aDemo', 'msg_3a1f0c9e3006aDemoUser03', 'ses_3a1f0c9e2ffeK7mQ1xDemo01', 1787221300000, 1787221300000, '{"type":"text","text":"<cairn-memory id=\"43523d6e746720958d1eeb028ba80f16\">\nRETRY_LIMIT lives in src/net.rs\n</cairn-memory id=\"43523d6e746720958d1eeb028ba80f16\">\nTry again, read it from RETRY_LIMIT"}');
        INSERT INTO part VALUES ('prt_3a1f0c9e4013aDemo', 'msg_3a1f0c9e3006aDemoUser03', 'ses_3a1f0c9e2ffeK7mQ1xDemo01', 1787221300000, 1787221300000, '{"type":"text","text":"Called the Read tool with src/net.rs","synthetic":true}');
        INSERT INTO part VALUES ('prt_3a1f0c9e4015aDemo', 'msg_3a1f0c9e3006aDemoUser03', 'ses_3a1f0c9e2ffeK7mQ1xDemo01', 1787221300000, 1787221300000, '{"type":"text","text":"<cairn-memory id=\"7f9b720b677a25734ea65ff39d6e6c3a\">\nNote from the plugin\n</cairn-memory id=\"7f9b720b677a25734ea65ff39d6e6c3a\">","synthetic":true}');
        INSERT INTO message VALUES ('msg_3a1f0c9e3007aDemoAsst04', 'ses_3a1f0c9e2ffeK7mQ1xDemo01', 1787221300100, 1787221301000, '{"role":"assistant","time":{"created":1787221300100},"parentID":"msg_3a1f0c9e3006aDemoUser03","modelID":"claude-opus-4-1","providerID":"anthropic"}');
        INSERT INTO part VALUES ('prt_3a1f0c9e4014aDemo', 'msg_3a1f0c9e3007aDemoAsst04', 'ses_3a1f0c9e2ffeK7mQ1xDemo01', 1787221300200, 1787221301000, '{"type":"tool","callID":"toolu_01OcDemoBash","tool":"bash","state":{"status":"running","input":{"command":"cargo test"}}}');
        UPDATE session SET time_updated = 1787221301000 WHERE id = 'ses_3a1f0c9e2ffeK7mQ1xDemo01';
        "#,
    );
    let changed = read_db("opencode", "opencode.db", &db, Some(&mark));
    assert_eq!(
        changed.turns.len(),
        3,
        "every turn of the changed session comes back"
    );
    let t = &changed.turns[2];
    assert_eq!(t.message_id, "msg_3a1f0c9e3006aDemoUser03");
    assert_eq!(t.request, "Try again, read it from RETRY_LIMIT");
    assert_eq!(
        injected(t),
        [
            ("cairn", "RETRY_LIMIT lives in src/net.rs"),
            ("opencode", "Called the Read tool with src/net.rs"),
            ("cairn", "Note from the plugin"),
        ]
    );
    assert_eq!(tools(t), [("bash", None, false)]);
    assert_eq!(t.model.as_deref(), Some("claude-opus-4-1"));
    assert!(!t.complete);
    assert_eq!(t.outcome, Outcome::Unknown);
    assert_eq!(changed.high_water.as_deref(), Some("1787221301000"));
    let after = read_db(
        "opencode",
        "opencode.db",
        &db,
        changed.high_water.as_deref(),
    );
    assert!(after.turns.is_empty());
}

#[test]
fn opencode_tolerates_missing_tables_and_columns() {
    let s = Scratch::new("oc-old");
    let empty = s.path("empty/opencode.db");
    build_db(&empty, "CREATE TABLE unrelated (x INTEGER);");
    let batch = read_db("opencode", "opencode.db", &empty, None);
    assert!(batch.turns.is_empty());
    assert_eq!(batch.warnings.len(), 1);
    assert!(
        batch.warnings[0].contains("session"),
        "{:?}",
        batch.warnings
    );

    // An older schema: no part table, no time_updated, no project table.
    let old = s.path("old/opencode.db");
    build_db(
        &old,
        r#"
        CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, data TEXT);
        INSERT INTO session VALUES ('ses_old', '/old');
        INSERT INTO message VALUES ('msg_1', 'ses_old', '{"role":"assistant","modelID":"m","time":{"created":1},"finish":"stop"}');
        "#,
    );
    let batch = read_db("opencode", "opencode.db", &old, None);
    assert!(
        batch.warnings.iter().any(|w| w.contains("part")),
        "{:?}",
        batch.warnings
    );
    assert!(
        batch.warnings.iter().any(|w| w.contains("time_updated")),
        "{:?}",
        batch.warnings
    );
    assert_eq!(batch.turns.len(), 1);
    assert_eq!(batch.turns[0].cwd.as_deref(), Some("/old"));
}

#[test]
fn opencode_corrupt_rows_warn_and_other_sessions_still_read() {
    let s = Scratch::new("oc-bad");
    let db = opencode_db(&s);
    write_db(
        &db,
        r#"
        INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_broken', '4b825dc642cb6eb9a060e54bf8d69288fbee4904', 's', '', 't', '1', 1787221400000, 1787221400000);
        INSERT INTO message VALUES ('msg_bad', 'ses_broken', 1787221400000, 1787221400000, '{"role":"user", "time": {');
        INSERT INTO message VALUES ('msg_ok', 'ses_broken', 1787221400001, 1787221400001, '{"role":"user","time":{"created":1787221400001}}');
        INSERT INTO part VALUES ('prt_bad', 'msg_ok', 'ses_broken', 1, 1, 'not json');
        INSERT INTO part VALUES ('prt_ok', 'msg_ok', 'ses_broken', 2, 2, '{"type":"text","text":"still here"}');
        "#,
    );
    let batch = read_db("opencode", "opencode.db", &db, None);
    assert!(
        batch.warnings.iter().any(|w| w.contains("msg_bad")),
        "{:?}",
        batch.warnings
    );
    assert!(
        batch.warnings.iter().any(|w| w.contains("prt_bad")),
        "{:?}",
        batch.warnings
    );
    assert_eq!(by_session(&batch.turns, OC_SESSION).len(), 2);
    let broken = by_session(&batch.turns, "ses_broken");
    assert_eq!(broken.len(), 1);
    assert_eq!(broken[0].request, "still here");
    // The empty directory falls back to the project's worktree.
    assert_eq!(broken[0].cwd.as_deref(), Some(DEMO));
}

#[test]
fn opencode_legacy_json_tree() {
    let s = Scratch::new("oc-legacy");
    let storage = s.path("opencode/storage/x").parent().unwrap().to_path_buf();
    copy_tree(&fixtures().join("opencode/legacy-storage"), &storage);
    let rel = format!("session/4b825dc642cb6eb9a060e54bf8d69288fbee4904/{OC_SESSION}.json");
    let file = storage.join(&rel);
    let turns = read_file("opencode", &rel, &file);
    assert_eq!(turns.len(), 1);
    assert_opencode_turn1(&turns[0]);

    let bytes = fs_err::read(&file).unwrap();
    let cut = whole_reader("opencode", &rel)(&file, &bytes[..bytes.len() / 2]);
    assert!(cut.is_err());
}

fn copy_tree(from: &Path, to: &Path) {
    fs_err::create_dir_all(to).unwrap();
    for entry in fs_err::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs_err::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn kilo_reads_the_opencode_schema() {
    let s = Scratch::new("kilo");
    let db = s.path("kilo/kilo.db");
    build_db(&db, &fixture_text("opencode/opencode-db.sql"));
    let batch = read_db("kilo", "kilo.db", &db, None);
    assert_eq!(batch.turns.len(), 2);
    assert_opencode_turn1(&batch.turns[0]);
}

// ---------------------------------------------------------------------------------------------
// Cursor

const CURSOR_AGENT: &str = "b3e1c7d2-8f4a-4c6b-9e0d-2a1f3c5e7b90";

#[test]
fn cursor_agent_store_db() {
    let s = Scratch::new("cursor-agent");
    let db = s.path(&format!(
        "chats/4d8241b85cd2b0650440fd134314f60a/{CURSOR_AGENT}/store.db"
    ));
    build_db(&db, &fixture_text("cursor/store-db.sql"));
    let rel = "h/id/store.db";
    let batch = read_db("cursor", rel, &db, None);
    assert!(batch.warnings.is_empty(), "{:?}", batch.warnings);
    assert_eq!(batch.turns.len(), 1);
    let t = &batch.turns[0];
    assert_eq!(t.session_id, CURSOR_AGENT);
    assert_eq!(
        t.message_id,
        "839c36489a545cf36f22fd111e537988c268b4bc7a20fd300972986f6e9cd5fc"
    );
    assert_eq!(t.cwd.as_deref(), Some(DEMO));
    assert_eq!(t.model.as_deref(), Some("claude-4.5-sonnet"));
    assert_eq!(
        t.request,
        "Rename the `config` flag to `settings` everywhere"
    );
    let inj = injected(t);
    assert_eq!(inj.len(), 1);
    assert_eq!(inj[0].0, "instructions");
    assert!(inj[0].1.starts_with("<user_info>"));
    assert_eq!(texts(t), ["I'll find all uses of the flag first."]);
    assert_eq!(ms(&t.started_at), Some(1_787_224_800_000));
    // No turn-end record: a turn that ends with the agent's text is taken as done.
    assert!(t.complete);
    assert_eq!(t.outcome, Outcome::Success);

    let mark = batch.high_water.clone().unwrap();
    let again = read_db("cursor", rel, &db, Some(&mark));
    assert!(again.turns.is_empty());
    assert_eq!(again.high_water.as_deref(), Some(mark.as_str()));

    // More blobs: a protobuf DAG node (skipped), an AI-SDK tool call and result, a reply.
    write_db(
        &db,
        r#"
        INSERT INTO blobs VALUES ('aa01', X'0a20c0ffee000000000000000000000000000000000000000000000000000000ab1202');
        INSERT INTO blobs VALUES ('aa02', CAST('{"role":"assistant","content":[{"type":"tool-call","toolCallId":"tc1","toolName":"Grep","args":{"pattern":"config"}}]}' AS BLOB));
        INSERT INTO blobs VALUES ('aa03', CAST('{"role":"tool","content":[{"type":"tool-result","toolCallId":"tc1","toolName":"Grep","result":"src/cli.rs:3: pub config"}]}' AS BLOB));
        INSERT INTO blobs VALUES ('aa04', CAST('{"role":"assistant","content":[{"type":"text","text":"Renamed in src/cli.rs."}]}' AS BLOB));
        INSERT INTO blobs VALUES ('aa05', CAST('{"role":"user","content":[{"type":"text","text":"<rules>\nUse tabs\n</rules>"}]}' AS BLOB));
        INSERT INTO blobs VALUES ('aa06', CAST('{"role":"user","content":[{"type":"text","text":"<user_query>\nNow the docs\n</user_query>"}]}' AS BLOB));
        "#,
    );
    let changed = read_db("cursor", rel, &db, Some(&mark));
    assert!(changed.warnings.is_empty(), "{:?}", changed.warnings);
    assert_eq!(changed.turns.len(), 2);
    let t = &changed.turns[0];
    assert!(t.complete);
    assert_eq!(
        tools(t),
        [("Grep", Some("src/cli.rs:3: pub config"), false)]
    );
    assert_eq!(
        texts(t),
        [
            "I'll find all uses of the flag first.",
            "Renamed in src/cli.rs."
        ]
    );
    let t = &changed.turns[1];
    assert_eq!(t.message_id, "aa06");
    assert_eq!(t.request, "Now the docs");
    assert_eq!(injected(t), [("context", "<rules>\nUse tabs\n</rules>")]);
    assert!(!t.complete, "a request with no reply yet is open");
    assert_ne!(changed.high_water, Some(mark));
}

#[test]
fn cursor_agent_store_without_tables_warns() {
    let s = Scratch::new("cursor-empty");
    let db = s.path("chats/h/id/store.db");
    build_db(&db, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);");
    let batch = read_db("cursor", "h/id/store.db", &db, None);
    assert!(batch.turns.is_empty());
    assert!(batch.warnings[0].contains("blobs"));
}

const COMPOSER: &str = "5d2c8e1a-7b3f-4e9d-a0c1-6f4e2b8d9a31";

#[test]
fn cursor_ide_state_vscdb() {
    let s = Scratch::new("cursor-ide");
    let db = s.path("globalStorage/state.vscdb");
    build_db(&db, &fixture_text("cursor/state-vscdb.sql"));
    // A second composer, unchanged later on.
    write_db(
        &db,
        r#"
        INSERT INTO cursorDiskKV VALUES ('composerData:c2', '{"composerId":"c2","fullConversationHeadersOnly":[{"bubbleId":"b1","type":1}],"modelConfig":{"modelName":"o3"}}');
        INSERT INTO cursorDiskKV VALUES ('bubbleId:c2:b1', '{"bubbleId":"b1","type":1,"text":"hello","createdAt":1787221000000}');
        INSERT INTO ItemTable VALUES ('composer.composerData', '{}');
        "#,
    );
    let batch = read_db("cursor", "state.vscdb", &db, None);
    assert!(batch.warnings.is_empty(), "{:?}", batch.warnings);
    let main = by_session(&batch.turns, COMPOSER);
    assert_eq!(main.len(), 1);
    let t = main[0];
    assert_eq!(t.message_id, "e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a51");
    assert_eq!(t.cwd.as_deref(), Some(DEMO));
    assert_eq!(t.model.as_deref(), Some("gpt-5.4"));
    assert_eq!(t.request, "How does the retry logic in src/net.rs work?");
    assert_eq!(
        texts(t),
        ["It retries up to RETRY_LIMIT (3) times with exponential backoff."]
    );
    assert_eq!(ms(&t.started_at), Some(1_787_221_501_000));
    assert_eq!(ms(&t.ended_at), Some(1_787_221_558_000));
    assert!(t.complete);
    assert_eq!(t.outcome, Outcome::Success);
    let other = by_session(&batch.turns, "c2");
    assert_eq!(other.len(), 1);
    assert!(
        !other[0].complete,
        "a request without a reply is still open"
    );

    let mark = batch.high_water.clone().unwrap();
    assert!(
        read_db("cursor", "state.vscdb", &db, Some(&mark))
            .turns
            .is_empty()
    );

    // The user asks again; the agent runs a tool that fails, then one that is rejected.
    write_db(
        &db,
        r#"
        INSERT INTO cursorDiskKV VALUES ('bubbleId:5d2c8e1a-7b3f-4e9d-a0c1-6f4e2b8d9a31:b3', '{"bubbleId":"b3","type":1,"text":"Make the limit configurable","createdAt":"2026-08-20T10:30:00.000Z"}');
        INSERT INTO cursorDiskKV VALUES ('bubbleId:5d2c8e1a-7b3f-4e9d-a0c1-6f4e2b8d9a31:b4', '{"bubbleId":"b4","type":2,"text":"","capabilityType":15,"toolFormerData":{"toolCallId":"tool_9","name":"edit_file","rawArgs":"{\"target_file\":\"src/net.rs\"}","status":"error","result":"{\"error\":\"conflict\"}"},"createdAt":"2026-08-20T10:30:05.000Z"}');
        INSERT INTO cursorDiskKV VALUES ('bubbleId:5d2c8e1a-7b3f-4e9d-a0c1-6f4e2b8d9a31:b5', 'not json');
        INSERT INTO cursorDiskKV VALUES ('composerData:5d2c8e1a-7b3f-4e9d-a0c1-6f4e2b8d9a31', '{"_v":10,"composerId":"5d2c8e1a-7b3f-4e9d-a0c1-6f4e2b8d9a31","lastUpdatedAt":1787221805000,"fullConversationHeadersOnly":[{"bubbleId":"e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a51","type":1},{"bubbleId":"f2a3b4c5-d6e7-4f8a-9b0c-1d2e3f4a5b62","type":2},{"bubbleId":"b3","type":1},{"bubbleId":"b4","type":2},{"bubbleId":"b5","type":2}],"modelConfig":{"modelName":"gpt-5.4"},"workspaceIdentifier":{"id":"8f3b","uri":{"fsPath":"/home/dev/projects/demo-app"}}}');
        "#,
    );
    let changed = read_db("cursor", "state.vscdb", &db, Some(&mark));
    assert!(
        changed.warnings.iter().any(|w| w.contains("b5")),
        "{:?}",
        changed.warnings
    );
    assert!(
        by_session(&changed.turns, "c2").is_empty(),
        "unchanged composers are skipped"
    );
    let main = by_session(&changed.turns, COMPOSER);
    assert_eq!(main.len(), 2);
    let t = main[1];
    assert_eq!(t.message_id, "b3");
    assert_eq!(t.request, "Make the limit configurable");
    assert_eq!(
        tools(t),
        [("edit_file", Some("{\"error\":\"conflict\"}"), true)]
    );
    assert_eq!(tool_ids(t), [Some("tool_9")]);
    assert!(
        !t.complete,
        "the last turn ends on a failed tool: not known to be over"
    );
    let again = read_db("cursor", "state.vscdb", &db, changed.high_water.as_deref());
    assert!(again.turns.is_empty());
}

#[test]
fn cursor_ide_without_kv_table_warns() {
    let s = Scratch::new("cursor-ide-empty");
    let db = s.path("state.vscdb");
    build_db(&db, "CREATE TABLE ItemTable (key TEXT, value BLOB);");
    let batch = read_db("cursor", "state.vscdb", &db, None);
    assert!(batch.turns.is_empty());
    assert_eq!(batch.warnings.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Crush

fn crush_db(s: &Scratch) -> PathBuf {
    let db = s.path("demo-app/.crush/crush.db");
    build_db(&db, &fixture_text("crush/crush.sql"));
    db
}

#[test]
fn crush_reads_sessions_tools_and_finish_reasons() {
    let s = Scratch::new("crush");
    let db = crush_db(&s);
    let project = s.0.join("demo-app").display().to_string();
    let batch = read_db("crush", "crush.db", &db, None);
    assert!(batch.warnings.is_empty(), "{:?}", batch.warnings);

    let main = by_session(&batch.turns, "sess-crush-1");
    assert_eq!(main.len(), 2);
    let t = main[0];
    assert_eq!(t.message_id, "m1");
    assert_eq!(t.cwd.as_deref(), Some(project.as_str()));
    assert_eq!(t.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(t.request, "Why does test_retry fail on CI?");
    assert_eq!(
        texts(t),
        [
            "Let me look at the test.",
            "It depends on wall-clock timing; use a mock clock."
        ]
    );
    assert_eq!(
        tools(t),
        [("view", Some("fn test_retry() { sleep(ms(10)); }"), false)]
    );
    assert_eq!(tool_ids(t), [Some("call_1")]);
    assert_eq!(t.outcome, Outcome::Success);
    assert!(t.complete);
    assert_eq!(ms(&t.started_at), Some(1_787_230_000_000));
    assert_eq!(ms(&t.ended_at), Some(1_787_230_010_000));

    let t = main[1];
    assert_eq!(t.request, "Apply the fix");
    assert_eq!(tools(t), [("edit", Some("Permission denied"), true)]);
    assert_eq!(t.outcome, Outcome::Interrupted);
    assert!(t.complete);

    let sub = by_session(&batch.turns, "sess-crush-2");
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0].parent_session.as_deref(), Some("sess-crush-1"));
    assert_eq!(
        sub[0].cwd.as_deref(),
        Some("/home/dev/projects/demo-app/crates/net")
    );
    assert_eq!(sub[0].model.as_deref(), Some("gpt-5.4-mini"));
    assert_eq!(sub[0].outcome, Outcome::Error);
    assert_eq!(texts(sub[0]), ["Running clippy."]);
}

#[test]
fn crush_high_water_sees_changes_within_the_same_second() {
    let s = Scratch::new("crush-hw");
    let db = crush_db(&s);
    let first = read_db("crush", "crush.db", &db, None);
    let mark = first.high_water.clone().unwrap();
    assert!(mark.starts_with("1787230040000|"), "{mark}");
    assert!(
        read_db("crush", "crush.db", &db, Some(&mark))
            .turns
            .is_empty()
    );

    // The sub-agent session gets a new message in the very second of the mark.
    write_db(
        &db,
        r#"INSERT INTO messages VALUES ('n3', 'sess-crush-2', 'user', '[{"type":"text","data":{"text":"Retry it"}}]', NULL, 1787230040, 1787230040, NULL, NULL, 0);"#,
    );
    let changed = read_db("crush", "crush.db", &db, Some(&mark));
    assert!(by_session(&changed.turns, "sess-crush-1").is_empty());
    let sub = by_session(&changed.turns, "sess-crush-2");
    assert_eq!(sub.len(), 2);
    assert_eq!(sub[1].request, "Retry it");
    assert!(!sub[1].complete);
    // The finished turn before it stays complete.
    assert!(sub[0].complete);

    // An in-place update a second later (a streamed reply) is seen too.
    let mark2 = changed.high_water.clone().unwrap();
    assert!(
        read_db("crush", "crush.db", &db, Some(&mark2))
            .turns
            .is_empty()
    );
    write_db(
        &db,
        r#"INSERT INTO messages VALUES ('m9', 'sess-crush-1', 'user', '[{"type":"text","data":{"text":"Try once more"}}]', NULL, 1787230050, 1787230050, NULL, NULL, 0);
           INSERT INTO messages VALUES ('m10', 'sess-crush-1', 'assistant', '[{"type":"text","data":{"text":"Wor"}}]', 'claude-sonnet-4-5', 1787230051, 1787230051, NULL, NULL, 0);"#,
    );
    let c2 = read_db("crush", "crush.db", &db, Some(&mark2));
    let mark3 = c2.high_water.clone().unwrap();
    write_db(
        &db,
        r#"UPDATE messages SET parts = '[{"type":"text","data":{"text":"Worked."}},{"type":"finish","data":{"reason":"end_turn","time":1787230052}}]', updated_at = 1787230052, finished_at = 1787230052 WHERE id = 'm10';"#,
    );
    let c3 = read_db("crush", "crush.db", &db, Some(&mark3));
    let last = by_session(&c3.turns, "sess-crush-1")
        .into_iter()
        .last()
        .unwrap();
    assert_eq!(texts(last), ["Worked."]);
    assert!(last.complete);
    assert_eq!(last.outcome, Outcome::Success);
}

#[test]
fn crush_corrupt_and_compressed_parts_warn() {
    let s = Scratch::new("crush-bad");
    let db = crush_db(&s);
    write_db(
        &db,
        r#"
        INSERT INTO messages VALUES ('z1', 'sess-crush-2', 'assistant', X'28b52ffd0058610000', NULL, 1787230041, 1787230041, NULL, NULL, 0);
        INSERT INTO messages VALUES ('bad1', 'sess-crush-1', 'assistant', '[{"type":"text",', NULL, 1787230031, 1787230031, NULL, NULL, 0);
        "#,
    );
    let batch = read_db("crush", "crush.db", &db, None);
    assert!(
        batch.warnings.iter().any(|w| w.contains("zstd")),
        "{:?}",
        batch.warnings
    );
    assert!(
        batch.warnings.iter().any(|w| w.contains("bad1")),
        "{:?}",
        batch.warnings
    );
    assert_eq!(by_session(&batch.turns, "sess-crush-1").len(), 2);
    assert_eq!(by_session(&batch.turns, "sess-crush-2").len(), 1);
}

#[test]
fn crush_missing_tables_warn() {
    let s = Scratch::new("crush-empty");
    let db = s.path("p/.crush/crush.db");
    build_db(
        &db,
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT);",
    );
    let batch = read_db("crush", "crush.db", &db, None);
    assert!(batch.turns.is_empty());
    assert!(batch.warnings[0].contains("messages"));
}

#[test]
fn crush_roots_come_from_the_project_registry() {
    let s = Scratch::new("crush-reg");
    let home = s.0.join("home");
    let registry = s.path("home/.local/share/crush/projects.json");
    fs_err::write(
        &registry,
        r#"{"projects":[
            {"path":"/p/a","data_dir":"/p/a/.crush","last_accessed":"2026-08-20T10:00:00Z"},
            {"path":"/p/b","data_dir":".crush-data","last_accessed":"2026-08-19T10:00:00Z"},
            {"path":"/p/c","last_accessed":"2026-08-18T10:00:00Z"},
            {"path":"/p/a","data_dir":"/p/a/.crush"}]}"#,
    )
    .unwrap();
    let env = Env::fake(&home, &[]);
    let roots = (spec("crush", "crush.db").roots)(&env);
    assert_eq!(
        roots,
        [
            PathBuf::from("/p/a/.crush"),
            PathBuf::from("/p/b/.crush-data"),
            PathBuf::from("/p/c/.crush")
        ]
    );
    let nothing = (spec("crush", "crush.db").roots)(&Env::fake(&s.0.join("nobody"), &[]));
    assert!(nothing.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Goose

fn goose_db(s: &Scratch) -> PathBuf {
    let db = s.path("goose/sessions/sessions.db");
    build_db(&db, &fixture_text("goose/goose.sql"));
    db
}

#[test]
fn goose_reads_sessions_and_tool_pairs() {
    let s = Scratch::new("goose");
    let db = goose_db(&s);
    let batch = read_db("goose", "sessions.db", &db, None);
    assert!(batch.warnings.is_empty(), "{:?}", batch.warnings);
    let main = by_session(&batch.turns, "20260820_1");
    assert_eq!(main.len(), 2);
    let t = main[0];
    assert_eq!(t.message_id, "1787220000");
    assert_eq!(t.cwd.as_deref(), Some(DEMO));
    assert_eq!(t.model.as_deref(), Some("gpt-5.4"));
    assert_eq!(t.request, "List the failing tests");
    assert_eq!(
        texts(t),
        ["I'll run the test suite.", "One test fails: net::retry."]
    );
    assert_eq!(
        tools(t),
        [(
            "developer__shell",
            Some("test net::retry ... FAILED"),
            false
        )]
    );
    assert_eq!(tool_ids(t), [Some("tool_1")]);
    assert_eq!(
        injected(t),
        [(
            "goose",
            "Persistent instructions: run clippy before finishing."
        )]
    );
    assert_eq!(t.outcome, Outcome::Success);
    assert!(t.complete);
    assert_eq!(ms(&t.started_at), Some(1_787_220_000_000));

    let t = main[1];
    assert_eq!(t.request, "Fix it");
    assert_eq!(
        tools(t),
        [(
            "developer__text_editor",
            Some("-32603: file not found"),
            true
        )]
    );
    assert!(!t.complete);
    assert_eq!(t.outcome, Outcome::Unknown);

    let old = by_session(&batch.turns, "20260819_3");
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].model, None);
    assert_eq!(
        tools(old[0]),
        [("developer__shell", Some("# Legacy"), false)]
    );
    assert_eq!(texts(old[0]), ["It only has a title."]);
    assert!(old[0].complete);
}

#[test]
fn goose_high_water_uses_time_and_message_ids() {
    let s = Scratch::new("goose-hw");
    let db = goose_db(&s);
    let mark = read_db("goose", "sessions.db", &db, None)
        .high_water
        .unwrap();
    assert_eq!(mark, "1787220090000|12");
    assert!(
        read_db("goose", "sessions.db", &db, Some(&mark))
            .turns
            .is_empty()
    );

    // A new message within the same second as the session's updated_at.
    write_db(
        &db,
        r#"INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json)
           VALUES ('20260819_3', 'user', '[{"type":"text","text":"And the LICENSE?"}]', 1787126500, NULL);"#,
    );
    let changed = read_db("goose", "sessions.db", &db, Some(&mark));
    assert!(by_session(&changed.turns, "20260820_1").is_empty());
    let old = by_session(&changed.turns, "20260819_3");
    assert_eq!(old.len(), 2);
    assert_eq!(old[1].request, "And the LICENSE?");
    assert_eq!(changed.high_water.as_deref(), Some("1787220090000|13"));
}

#[test]
fn goose_tolerates_old_schemas_and_corrupt_content() {
    let s = Scratch::new("goose-bad");
    let db = goose_db(&s);
    write_db(
        &db,
        r#"INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('20260819_3', 'assistant', '[{"type":', 1787126405);"#,
    );
    let batch = read_db("goose", "sessions.db", &db, None);
    assert_eq!(batch.warnings.len(), 1, "{:?}", batch.warnings);
    assert_eq!(by_session(&batch.turns, "20260820_1").len(), 2);

    let empty = s.path("other/sessions.db");
    build_db(
        &empty,
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, working_dir TEXT);",
    );
    let batch = read_db("goose", "sessions.db", &empty, None);
    assert!(batch.turns.is_empty());
    assert!(batch.warnings[0].contains("messages"));
}

// ---------------------------------------------------------------------------------------------
// Cline, Roo Code, Kilo (extension)

#[test]
fn cline_task_history_with_xml_tools() {
    let file = fixtures().join("cline/tasks/1787223000000/api_conversation_history.json");
    let turns = read_file(
        "cline",
        "1787223000000/api_conversation_history.json",
        &file,
    );
    assert_eq!(turns.len(), 3);

    let t = &turns[0];
    assert_eq!(t.session_id, "1787223000000");
    assert_eq!(t.message_id, "0");
    assert_eq!(t.cwd.as_deref(), Some(DEMO));
    assert_eq!(t.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(t.request, "Add a --verbose flag to the CLI");
    assert_eq!(
        texts(t),
        [
            "Let me read the CLI definition.",
            "Added a --verbose flag to Cli."
        ]
    );
    assert_eq!(
        tools(t),
        [
            (
                "read_file",
                Some("pub struct Cli {\n    pub config: PathBuf,\n}"),
                false
            ),
            (
                "replace_in_file",
                Some("The content was successfully saved to src/cli.rs."),
                false
            ),
        ]
    );
    match &t.steps[1] {
        Step::Tool { input, .. } => assert_eq!(input["path"], "src/cli.rs"),
        other => panic!("{other:?}"),
    }
    assert_eq!(t.outcome, Outcome::Success);
    assert!(t.complete);

    let t = &turns[1];
    assert_eq!(t.message_id, "6");
    assert_eq!(t.request, "Also document it in the README");
    assert_eq!(
        tools(t),
        [(
            "execute_command",
            Some("The user denied this operation."),
            true
        )]
    );
    assert_eq!(t.outcome, Outcome::Interrupted);
    assert!(t.complete);

    let t = &turns[2];
    assert_eq!(t.message_id, "9");
    assert_eq!(t.request, "Just append a section to README.md instead");
    assert_eq!(texts(t), ["Appending the section."]);
    assert_eq!(tools(t), [("write_to_file", None, false)]);
    assert!(!t.complete);
    assert_eq!(t.outcome, Outcome::Unknown);
}

#[test]
fn cline_sdk_messages_file_and_subagent() {
    let dir = fixtures().join("cline/sessions/sess_01K2DEMO");
    let turns = read_file(
        "cline",
        "sess_01K2DEMO/sess_01K2DEMO.messages.json",
        &dir.join("sess_01K2DEMO.messages.json"),
    );
    assert_eq!(turns.len(), 1);
    let t = &turns[0];
    assert_eq!(t.session_id, "sess_01K2DEMO");
    assert_eq!(t.parent_session, None);
    assert_eq!(t.message_id, "1787227200000");
    assert_eq!(t.cwd.as_deref(), Some(DEMO));
    assert_eq!(t.model.as_deref(), Some("claude-opus-4-1"));
    assert_eq!(t.request, "Rename Config to Settings");
    assert_eq!(
        texts(t),
        [
            "Searching for usages.",
            "Renamed Config to Settings in src/main.rs."
        ]
    );
    assert_eq!(
        tools(t),
        [("search_files", Some("src/main.rs:3: struct Config;"), false)]
    );
    assert_eq!(t.outcome, Outcome::Success);
    assert!(t.complete);
    assert_eq!(ms(&t.started_at), Some(1_787_227_200_000));
    assert_eq!(ms(&t.ended_at), Some(1_787_227_209_000));

    let sub = read_file(
        "cline",
        "sess_01K2DEMO/agent_scout.messages.json",
        &dir.join("agent_scout.messages.json"),
    );
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0].session_id, "agent_scout");
    assert_eq!(sub[0].parent_session.as_deref(), Some("sess_01K2DEMO"));
    assert_eq!(sub[0].request, "Find where Config is defined");
    assert_eq!(texts(&sub[0]), ["In src/main.rs line 3."]);
}

#[test]
fn roo_code_and_legacy_kilo_tasks() {
    let s = Scratch::new("roo");
    let task = "01K2ROO7TASK";
    for ext in ["rooveterinaryinc.roo-cline", "kilocode.kilo-code"] {
        copy_tree(
            &fixtures().join("roo/tasks").join(task),
            &s.0.join(format!(
                "home/.config/Code/User/globalStorage/{ext}/tasks/{task}"
            )),
        );
    }
    let env = Env::fake(&s.0.join("home"), &[]);
    for name in ["roo-code", "kilo"] {
        let rel = format!("{task}/api_conversation_history.json");
        let spec = stores::specs()
            .into_iter()
            .find(|sp| sp.name == name && matches!(sp.reader, Reader::WholeFile(_)))
            .unwrap();
        let root = (spec.roots)(&env)
            .into_iter()
            .find(|r| r.join(&rel).exists())
            .unwrap();
        let turns = read_file(name, &rel, &root.join(&rel));
        assert_eq!(turns.len(), 1, "{name}");
        let t = &turns[0];
        assert_eq!(t.session_id, task);
        assert_eq!(t.message_id, "1787230000000");
        assert_eq!(
            t.cwd.as_deref(),
            Some("/home/dev/projects/roo-app"),
            "history_item.json wins"
        );
        assert_eq!(t.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(t.request, "Explain the retry logic");
        assert_eq!(
            texts(t),
            [
                "Reading the file.",
                "It retries up to RETRY_LIMIT (3) times."
            ]
        );
        assert_eq!(
            tools(t),
            [("read_file", Some("const RETRY_LIMIT: u32 = 3;"), false)]
        );
        assert_eq!(tool_ids(t), [Some("tool_a")]);
        assert_eq!(t.outcome, Outcome::Success);
        assert!(t.complete);
    }
}

// ---------------------------------------------------------------------------------------------
// Amp

#[test]
fn amp_thread() {
    let rel = "T-7f3c2a10-5b6d-4e8f-9a01-23456789abcd.json";
    let turns = read_file("amp", rel, &fixtures().join("amp/threads").join(rel));
    assert_eq!(turns.len(), 2);
    let t = &turns[0];
    assert_eq!(t.session_id, "T-7f3c2a10-5b6d-4e8f-9a01-23456789abcd");
    assert_eq!(t.message_id, "0");
    assert_eq!(t.cwd.as_deref(), Some(DEMO));
    assert_eq!(t.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(t.request, "Cap the backoff at 30s");
    assert_eq!(
        texts(t),
        ["Looking at the backoff code.", "Capped it with .min(30s)."]
    );
    assert_eq!(
        tools(t),
        [(
            "Read",
            Some("fn backoff(n: u32) -> Duration { 2u64.pow(n) }"),
            false
        )]
    );
    assert_eq!(t.outcome, Outcome::Success);
    assert!(t.complete);
    assert_eq!(ms(&t.started_at), Some(1_787_223_601_000));
    assert_eq!(ms(&t.ended_at), Some(1_787_223_609_000));

    let t = &turns[1];
    assert_eq!(t.message_id, "4");
    assert_eq!(t.request, "Now add a test");
    assert_eq!(
        injected(t),
        [("cairn", "Earlier: backoff lives in src/net.rs")]
    );
    assert_eq!(tools(t), [("edit_file", None, true)]);
    assert_eq!(t.model.as_deref(), Some("gpt-5.4"));
    assert_eq!(t.outcome, Outcome::Interrupted);
    assert!(t.complete);
}

// ---------------------------------------------------------------------------------------------
// Continue

#[test]
fn continue_session() {
    let rel = "3f1e9a2c-0b7d-4c55-8e21-6a9d0c4b7e10.json";
    let turns = read_file(
        "continue",
        rel,
        &fixtures().join("continue/sessions").join(rel),
    );
    assert_eq!(turns.len(), 2);
    let t = &turns[0];
    assert_eq!(t.session_id, "3f1e9a2c-0b7d-4c55-8e21-6a9d0c4b7e10");
    assert_eq!(t.message_id, "u-1");
    assert_eq!(t.cwd.as_deref(), Some(DEMO));
    assert_eq!(t.model.as_deref(), Some("Claude Sonnet 4.5"));
    assert_eq!(t.request, "Where is RETRY_LIMIT documented?");
    assert_eq!(
        tools(t),
        [("grep_search", Some("docs/net.md:4: RETRY_LIMIT"), false)]
    );
    match &t.steps[0] {
        Step::Tool { input, id, .. } => {
            assert_eq!(input["query"], "RETRY_LIMIT");
            assert_eq!(id.as_deref(), Some("call_c1"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(texts(t), ["In docs/net.md, line 4."]);
    assert_eq!(t.outcome, Outcome::Success);
    assert!(t.complete);

    let t = &turns[1];
    assert_eq!(t.message_id, "u-2");
    assert_eq!(t.request, "Delete that doc");
    assert_eq!(tools(t), [("run_terminal_command", Some(""), true)]);
    assert!(!t.complete);
}

// ---------------------------------------------------------------------------------------------
// Whole files that are cut short

#[test]
fn truncated_whole_files_are_errors_not_panics() {
    let cases = [
        (
            "cline",
            "1787223000000/api_conversation_history.json",
            "cline/tasks/1787223000000/api_conversation_history.json",
        ),
        (
            "cline",
            "sess_01K2DEMO/sess_01K2DEMO.messages.json",
            "cline/sessions/sess_01K2DEMO/sess_01K2DEMO.messages.json",
        ),
        (
            "roo-code",
            "01K2ROO7TASK/api_conversation_history.json",
            "roo/tasks/01K2ROO7TASK/api_conversation_history.json",
        ),
        (
            "amp",
            "T-7f3c2a10-5b6d-4e8f-9a01-23456789abcd.json",
            "amp/threads/T-7f3c2a10-5b6d-4e8f-9a01-23456789abcd.json",
        ),
        (
            "continue",
            "3f1e9a2c-0b7d-4c55-8e21-6a9d0c4b7e10.json",
            "continue/sessions/3f1e9a2c-0b7d-4c55-8e21-6a9d0c4b7e10.json",
        ),
    ];
    for (name, rel, fixture) in cases {
        let path = fixtures().join(fixture);
        let bytes = fs_err::read(&path).unwrap();
        let read = whole_reader(name, rel);
        for cut in [1, bytes.len() / 3, bytes.len() / 2, bytes.len() - 2] {
            assert!(read(&path, &bytes[..cut]).is_err(), "{name} cut at {cut}");
        }
        assert!(read(&path, b"").is_err(), "{name} empty");
        // Valid JSON of an unknown shape does not panic either.
        assert!(
            read(&path, b"{\"what\": 1}").map_or(true, |t| t.is_empty()),
            "{name}"
        );
        assert!(read(&path, b"42").is_err(), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Property-based fuzzing (issue 9, part 11): every SQLite reader gets 10,000 generated
// hostile databases — its fixture with cells replaced by hostile values (mutated real cell
// text, random bytes, deep JSON, huge numbers, wrong types) and a hostile high-water mark.
// None may panic or take over a second on one input.

#[path = "hostile/mod.rs"]
mod hostile;

mod fuzz {
    use proptest::prelude::*;
    use rusqlite::types::Value as Sql;

    use super::*;

    /// A database built from a fixture script, and every (table, rowid, column) cell in it.
    struct Target {
        name: &'static str,
        read: SqliteReadFn,
        db: PathBuf,
        conn: Connection,
        cells: Vec<(String, i64, String)>,
    }

    fn cells(conn: &Connection) -> Vec<(String, i64, String)> {
        let mut out = Vec::new();
        let tables: Vec<String> = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for t in tables {
            let cols: Vec<String> = conn
                .prepare(&format!("SELECT name FROM pragma_table_info('{t}')"))
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let Ok(mut stmt) = conn.prepare(&format!("SELECT rowid FROM \"{t}\"")) else {
                continue; // WITHOUT ROWID tables are left alone
            };
            let rows: Vec<i64> = stmt
                .query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            for row in rows {
                for c in &cols {
                    out.push((t.clone(), row, c.clone()));
                }
            }
        }
        out
    }

    fn targets(scratch: &Scratch) -> Vec<Target> {
        let list: [(&str, &str, &str); 6] = [
            ("opencode", "opencode.db", "opencode/opencode-db.sql"),
            ("kilo", "kilo.db", "opencode/opencode-db.sql"),
            ("cursor", "h/id/store.db", "cursor/store-db.sql"),
            ("cursor", "state.vscdb", "cursor/state-vscdb.sql"),
            ("crush", "crush.db", "crush/crush.sql"),
            ("goose", "sessions.db", "goose/goose.sql"),
        ];
        list.iter()
            .map(|(name, rel, sql)| {
                let db = scratch.path(&format!("{name}/{rel}"));
                build_db(&db, &fixture_text(sql));
                let conn = Connection::open(&db).unwrap();
                // Every case is rolled back: nothing needs to reach the disk.
                conn.execute_batch("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF;")
                    .unwrap();
                let cells = cells(&conn);
                assert!(!cells.is_empty(), "{name}: no cells");
                Target {
                    name,
                    read: sqlite_reader(name, rel),
                    db,
                    conn,
                    cells,
                }
            })
            .collect()
    }

    /// The text of every cell of every fixture: real values to mutate.
    fn corpus(targets: &[Target]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for t in targets {
            for (table, row, col) in &t.cells {
                let v: Sql = t
                    .conn
                    .query_row(
                        &format!("SELECT \"{col}\" FROM \"{table}\" WHERE rowid = ?1"),
                        [row],
                        |r| r.get(0),
                    )
                    .unwrap();
                match v {
                    Sql::Text(s) => out.push(s.into_bytes()),
                    Sql::Blob(b) => out.push(b),
                    _ => {}
                }
            }
        }
        out
    }

    fn sql_value(corpus: Vec<Vec<u8>>) -> impl Strategy<Value = Sql> {
        prop_oneof![
            4 => hostile::bytes_from(corpus.clone()).prop_map(|b| Sql::Text(hostile::text(&b))),
            2 => hostile::bytes_from(corpus).prop_map(Sql::Blob),
            1 => Just(Sql::Null),
            1 => any::<i64>().prop_map(Sql::Integer),
            1 => any::<f64>().prop_map(Sql::Real),
        ]
    }

    /// Fuzzes the reader at `which` in [`targets`], its cells mutated from every fixture's
    /// values. One test per reader, so the test runner spreads them over the cores.
    fn fuzz_reader(which: usize) {
        let scratch = Scratch::new("fuzz");
        let mut targets = targets(&scratch);
        let corpus = corpus(&targets);
        let targets = vec![targets.swap_remove(which)];
        let edits = prop::collection::vec((any::<prop::sample::Index>(), sql_value(corpus)), 1..5);
        let since = prop_oneof![
            2 => Just(None),
            1 => any::<i64>().prop_map(|n| Some(n.to_string())),
            1 => hostile::bytes_from(vec![b"1787223000000".to_vec(), b"2026-08-20T09:15:02Z".to_vec()])
                .prop_map(|b| Some(hostile::text(&b))),
        ];
        let mut runner = proptest::test_runner::TestRunner::new(hostile::config());
        let started = std::time::Instant::now();
        runner
            .run(&(edits, since), |(edits, since)| {
                for t in &targets {
                    t.conn.execute_batch("SAVEPOINT fuzz").unwrap();
                    for (at, value) in &edits {
                        let (table, row, col) = &t.cells[at.index(t.cells.len())];
                        // A constraint may refuse the value: then the row stays as it was.
                        let _refused = t.conn.execute(
                            &format!("UPDATE \"{table}\" SET \"{col}\" = ?1 WHERE rowid = ?2"),
                            rusqlite::params![value, row],
                        );
                    }
                    let result =
                        hostile::timed(t.name, || (t.read)(&t.conn, &t.db, since.as_deref()));
                    t.conn
                        .execute_batch("ROLLBACK TO fuzz; RELEASE fuzz")
                        .unwrap();
                    let _batch = result?;
                }
                Ok(())
            })
            .unwrap();
        eprintln!(
            "{} cases × {} SQLite readers in {:?}",
            hostile::CASES,
            targets.len(),
            started.elapsed()
        );
    }

    #[test]
    fn sqlite_reader_opencode_survives_hostile_rows_and_marks() {
        fuzz_reader(0);
    }

    #[test]
    fn sqlite_reader_kilo_survives_hostile_rows_and_marks() {
        fuzz_reader(1);
    }

    #[test]
    fn sqlite_reader_cursor_store_db_survives_hostile_rows_and_marks() {
        fuzz_reader(2);
    }

    #[test]
    fn sqlite_reader_cursor_state_vscdb_survives_hostile_rows_and_marks() {
        fuzz_reader(3);
    }

    #[test]
    fn sqlite_reader_crush_survives_hostile_rows_and_marks() {
        fuzz_reader(4);
    }

    #[test]
    fn sqlite_reader_goose_survives_hostile_rows_and_marks() {
        fuzz_reader(5);
    }
}
