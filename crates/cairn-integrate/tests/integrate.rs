//! Install → install again → remove against fixture config files that look like real users'
//! files, plus updates, edits in between, and every kind of bad input.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::path::{Path, PathBuf};

use cairn_integrate::{Action, Env, Error, HooksState, Integrations};
use serde_json::Value;

const CAIRN: &str = "/opt/Cairn/bin/cairn";

/// A temporary home, Cairn's backup dir beside it, and an environment pointing at both.
struct Sandbox {
    _root: tempfile::TempDir,
    home: PathBuf,
    backups: PathBuf,
    env: Env,
}

impl Sandbox {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let backups = root.path().join("cairn-backups");
        fs_err::create_dir_all(&home).unwrap();
        let env = Env::for_home(&home)
            .with_var("CODEX_HOME", home.join("codex-home").to_str().unwrap())
            .with_var("GEMINI_CLI_HOME", home.join("gem").to_str().unwrap());
        Self {
            _root: root,
            home,
            backups,
            env,
        }
    }

    fn cairn(&self) -> Integrations {
        self.cairn_at(CAIRN)
    }

    /// The MCP registration alone: the tests above are about it; hooks have their own below.
    fn cairn_at(&self, command: &str) -> Integrations {
        Integrations::new(self.env.clone(), command, &self.backups).with_hooks(false)
    }

    /// MCP registration and hooks, as `cairn integrate` does it.
    fn with_hooks(&self, command: &str) -> Integrations {
        Integrations::new(self.env.clone(), command, &self.backups)
    }

    /// `framework`'s hook file (or plugin file).
    fn hooks_path(&self, framework: &str) -> PathBuf {
        self.cairn().hooks_path(framework).unwrap().unwrap()
    }

    /// Put `text` at `framework`'s hook file; returns the path.
    fn put_hooks(&self, framework: &str, text: &str) -> PathBuf {
        let path = self.hooks_path(framework);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(&path, text).unwrap();
        path
    }

    /// Put `bytes` at `framework`'s config path; returns the path.
    fn put(&self, framework: &str, bytes: &[u8]) -> PathBuf {
        let path = self.cairn().config_path(framework).unwrap();
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(&path, bytes).unwrap();
        path
    }

    fn backup_count(&self) -> usize {
        let mut count = 0;
        let Ok(dirs) = fs_err::read_dir(&self.backups) else {
            return 0;
        };
        for dir in dirs {
            let dir = dir.unwrap().path();
            if dir.is_dir() {
                count += fs_err::read_dir(&dir).unwrap().count();
            }
        }
        count
    }

    /// Every file under the home directory, relative to it.
    fn files(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) {
            for entry in fs_err::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                out.push(path.strip_prefix(base).unwrap().to_owned());
                if path.is_dir() {
                    walk(&path, base, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.home, &self.home, &mut out);
        out.sort();
        out
    }
}

fn fixture(framework: &str) -> Option<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(framework);
    let entries = fs_err::read_dir(&dir).ok()?;
    let file = entries.map(|entry| entry.unwrap().path()).next()?;
    Some(fs_err::read(file).unwrap())
}

fn fixture_name(framework: &str) -> Option<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(framework);
    let mut entries = fs_err::read_dir(&dir).ok()?;
    Some(
        entries
            .next()?
            .unwrap()
            .file_name()
            .to_string_lossy()
            .into_owned(),
    )
}

// ---------------------------------------------------------------------------------------------
// Independent parsers: what the agents themselves would read.

/// Comments and trailing commas out, for JSONC.
fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' {
            out.push(c);
            i += 1;
            while i < chars.len() {
                out.push(chars[i]);
                if chars[i] == '\\' {
                    out.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                i += 1;
                if chars[i - 1] == '"' {
                    break;
                }
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '}' || c == ']' {
            let trimmed = out.trim_end().len();
            if out[..trimmed].ends_with(',') {
                out.truncate(trimmed - 1);
            }
            out.push(c);
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn toml_json(item: &toml_edit::Item) -> Value {
    match item {
        toml_edit::Item::Value(value) => toml_value_json(value),
        toml_edit::Item::Table(table) => Value::Object(
            table
                .iter()
                .map(|(k, v)| (k.to_owned(), toml_json(v)))
                .collect(),
        ),
        toml_edit::Item::ArrayOfTables(array) => Value::Array(
            array
                .iter()
                .map(|t| toml_json(&toml_edit::Item::Table(t.clone())))
                .collect(),
        ),
        toml_edit::Item::None => Value::Null,
    }
}

fn toml_value_json(value: &toml_edit::Value) -> Value {
    match value {
        toml_edit::Value::String(s) => Value::from(s.value().as_str()),
        toml_edit::Value::Integer(i) => Value::from(*i.value()),
        toml_edit::Value::Float(f) => Value::from(*f.value()),
        toml_edit::Value::Boolean(b) => Value::from(*b.value()),
        toml_edit::Value::Datetime(d) => Value::from(d.value().to_string()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(toml_value_json).collect()),
        toml_edit::Value::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), toml_value_json(v)))
                .collect(),
        ),
    }
}

fn yaml_json(yaml: &yaml_rust2::Yaml) -> Value {
    use yaml_rust2::Yaml;
    match yaml {
        Yaml::Real(r) => Value::from(r.parse::<f64>().unwrap()),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::from(s.as_str()),
        Yaml::Boolean(b) => Value::from(*b),
        Yaml::Array(a) => Value::Array(a.iter().map(yaml_json).collect()),
        Yaml::Hash(h) => Value::Object(
            h.iter()
                .map(|(k, v)| (k.as_str().unwrap().to_owned(), yaml_json(v)))
                .collect(),
        ),
        Yaml::Null => Value::Null,
        other => panic!("unexpected YAML node {other:?}"),
    }
}

/// Parse a config file as its agent would.
fn parse(framework: &str, bytes: &[u8]) -> Value {
    let text = std::str::from_utf8(bytes).unwrap();
    match framework {
        "codex" => toml_json(text.parse::<toml_edit::DocumentMut>().unwrap().as_item()),
        "goose" => {
            let docs = yaml_rust2::YamlLoader::load_from_str(text).unwrap();
            docs.first().map_or(Value::Null, yaml_json)
        }
        "gemini-cli" | "opencode" | "qwen-code" => serde_json::from_str(&strip_jsonc(text))
            .unwrap_or_else(|e| panic!("{framework}: {e}\n{text}")),
        _ => serde_json::from_str(text).unwrap_or_else(|e| panic!("{framework}: {e}\n{text}")),
    }
}

fn container(framework: &str) -> &'static str {
    match framework {
        "codex" => "mcp_servers",
        "opencode" | "crush" => "mcp",
        "goose" => "extensions",
        _ => "mcpServers",
    }
}

/// The entry each agent should hold for `command`.
fn expected_entry(framework: &str, command: &str) -> Value {
    match framework {
        "claude-code" | "crush" => {
            serde_json::json!({"type": "stdio", "command": command, "args": ["mcp"]})
        }
        "opencode" => {
            serde_json::json!({"type": "local", "command": [command, "mcp"], "enabled": true})
        }
        "copilot-cli" => serde_json::json!(
            {"type": "local", "command": command, "args": ["mcp"], "tools": ["*"]}
        ),
        "goose" => serde_json::json!({
            "name": "cairn", "type": "stdio", "cmd": command, "args": ["mcp"],
            "enabled": true, "timeout": 300
        }),
        _ => serde_json::json!({"command": command, "args": ["mcp"]}),
    }
}

/// `doc` without Cairn's entry, and without its container when `drop_empty` and it is empty.
fn without_cairn(framework: &str, mut doc: Value, drop_empty: bool) -> Value {
    let key = container(framework);
    if let Some(top) = doc.as_object_mut() {
        let empty = match top.get_mut(key) {
            Some(Value::Object(servers)) => {
                servers.remove("cairn");
                servers.is_empty()
            }
            _ => false,
        };
        if empty && drop_empty {
            top.remove(key);
        }
    }
    doc
}

fn read(path: &Path) -> Vec<u8> {
    fs_err::read(path).unwrap()
}

// ---------------------------------------------------------------------------------------------
// The round trip, for every framework.

fn round_trip(framework: &str) {
    let sandbox = Sandbox::new();
    let cairn = sandbox.cairn();
    let original = fixture(framework);
    let path = match &original {
        Some(bytes) => sandbox.put(framework, bytes),
        None => cairn.config_path(framework).unwrap(),
    };
    let files_before = sandbox.files();

    let status = cairn.status(framework).unwrap();
    assert_eq!(status.path, path);
    assert_eq!(status.exists, original.is_some());
    assert!(!status.installed && !status.current, "{status:?}");
    assert_eq!(status.problem, None);

    // Install.
    let change = cairn.install(framework).unwrap();
    assert_eq!(change.action, Action::Installed, "{framework}");
    assert_eq!(change.path, path);
    match (&original, &change.backup) {
        (Some(bytes), Some(backup)) => {
            assert_eq!(&read(backup), bytes, "the backup holds the original");
            assert!(backup.starts_with(sandbox.backups.join(framework)));
            assert!(
                backup
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .ends_with(&*path.file_name().unwrap().to_string_lossy())
            );
        }
        (None, None) => {}
        (original, backup) => panic!("{framework}: original {original:?}, backup {backup:?}"),
    }
    let installed = read(&path);
    let doc = parse(framework, &installed);
    assert_eq!(
        doc[container(framework)]["cairn"],
        expected_entry(framework, CAIRN),
        "{framework}:\n{}",
        String::from_utf8_lossy(&installed)
    );
    let before = original
        .as_ref()
        .map_or_else(|| serde_json::json!({}), |bytes| parse(framework, bytes));
    let had_container = before.get(container(framework)).is_some();
    assert_eq!(
        without_cairn(framework, doc, !had_container),
        before,
        "{framework}: every other setting is unchanged"
    );
    let status = cairn.status(framework).unwrap();
    assert!(
        status.exists && status.installed && status.current,
        "{status:?}"
    );

    // Install again: nothing written, no new backup.
    let backups = sandbox.backup_count();
    let again = cairn.install(framework).unwrap();
    assert_eq!(again.action, Action::AlreadyInstalled);
    assert_eq!(again.backup, None);
    assert_eq!(read(&path), installed, "{framework}: byte-identical");
    assert_eq!(sandbox.backup_count(), backups);

    // Remove: the original bytes, or no file at all.
    let removed = cairn.remove(framework).unwrap();
    assert_eq!(removed.action, Action::Removed);
    assert!(removed.backup.is_some());
    match &original {
        Some(bytes) => assert_eq!(
            String::from_utf8_lossy(&read(&path)),
            String::from_utf8_lossy(bytes),
            "{framework}: removal gives back the original"
        ),
        None => {
            assert!(
                !path.exists(),
                "{framework}: the file Cairn created is gone"
            );
            assert_eq!(sandbox.files(), files_before, "and the directories it made");
        }
    }
    let status = cairn.status(framework).unwrap();
    assert!(!status.installed, "{status:?}");
    assert_eq!(
        cairn.remove(framework).unwrap().action,
        Action::NotInstalled
    );
}

#[test]
fn claude_code_round_trip() {
    round_trip("claude-code");
}

#[test]
fn codex_round_trip() {
    round_trip("codex");
}

#[test]
fn gemini_cli_round_trip() {
    round_trip("gemini-cli");
}

#[test]
fn opencode_round_trip() {
    round_trip("opencode");
}

#[test]
fn cursor_round_trip() {
    round_trip("cursor");
}

#[test]
fn qwen_code_round_trip() {
    round_trip("qwen-code");
}

#[test]
fn crush_round_trip_on_an_absent_file() {
    assert!(fixture("crush").is_none());
    round_trip("crush");
}

#[test]
fn copilot_cli_round_trip() {
    round_trip("copilot-cli");
}

#[test]
fn goose_round_trip() {
    round_trip("goose");
}

#[test]
fn every_framework_round_trips_on_an_absent_file() {
    for framework in Integrations::frameworks() {
        let sandbox = Sandbox::new();
        let cairn = sandbox.cairn();
        let path = cairn.config_path(framework).unwrap();
        assert_eq!(cairn.install(framework).unwrap().action, Action::Installed);
        let doc = parse(framework, &read(&path));
        assert_eq!(
            doc[container(framework)]["cairn"],
            expected_entry(framework, CAIRN)
        );
        assert_eq!(cairn.remove(framework).unwrap().action, Action::Removed);
        assert!(!path.exists(), "{framework}");
        assert!(
            sandbox.files().is_empty(),
            "{framework}: {:?}",
            sandbox.files()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Updates and edits in between.

#[test]
fn a_changed_command_updates_only_cairns_entry() {
    for framework in ["claude-code", "codex", "goose", "opencode", "copilot-cli"] {
        let sandbox = Sandbox::new();
        let original = fixture(framework).unwrap();
        let path = sandbox.put(framework, &original);
        let old = sandbox.cairn_at("/old/place/cairn");
        assert_eq!(old.install(framework).unwrap().action, Action::Installed);
        let before = parse(framework, &read(&path));

        let new = sandbox.cairn_at("/new/place/cairn");
        let status = new.status(framework).unwrap();
        assert!(status.installed && !status.current, "{status:?}");
        let change = new.install(framework).unwrap();
        assert_eq!(change.action, Action::Updated, "{framework}");
        assert!(change.backup.is_some());
        let after = parse(framework, &read(&path));
        assert_eq!(
            after[container(framework)]["cairn"],
            expected_entry(framework, "/new/place/cairn"),
            "{framework}"
        );
        assert_eq!(
            without_cairn(framework, after, false),
            without_cairn(framework, before, false)
        );
        assert_eq!(
            new.install(framework).unwrap().action,
            Action::AlreadyInstalled
        );
        assert_eq!(new.remove(framework).unwrap().action, Action::Removed);
        assert_eq!(
            String::from_utf8_lossy(&read(&path)),
            String::from_utf8_lossy(&original),
            "{framework}"
        );
    }
}

#[test]
fn an_update_keeps_what_the_user_added_to_cairns_entry() {
    let sandbox = Sandbox::new();
    let path = sandbox.put(
        "cursor",
        b"{\n  \"mcpServers\": {\n    \"cairn\": {\n      \"command\": \"/old\",\n      \
          \"args\": [\"mcp\"],\n      \"env\": {\"CAIRN_LOG\": \"debug\"}\n    }\n  }\n}\n",
    );
    assert_eq!(
        sandbox.cairn().install("cursor").unwrap().action,
        Action::Updated
    );
    assert_eq!(
        String::from_utf8(read(&path)).unwrap(),
        format!(
            "{{\n  \"mcpServers\": {{\n    \"cairn\": {{\n      \"command\": \"{CAIRN}\",\n      \
             \"args\": [\"mcp\"],\n      \"env\": {{\"CAIRN_LOG\": \"debug\"}}\n    }}\n  }}\n}}\n"
        )
    );
}

/// Install, let the user change another setting, remove: the user's change survives and
/// everything else is as before.
fn edit_between(framework: &str, from: &str, to: &str) {
    let sandbox = Sandbox::new();
    let original = String::from_utf8(fixture(framework).unwrap()).unwrap();
    assert!(
        original.contains(from),
        "{framework}: fixture holds {from:?}"
    );
    let path = sandbox.put(framework, original.as_bytes());
    let cairn = sandbox.cairn();
    cairn.install(framework).unwrap();
    let installed = String::from_utf8(read(&path)).unwrap();
    fs_err::write(&path, installed.replacen(from, to, 1)).unwrap();
    let change = cairn.remove(framework).unwrap();
    assert_eq!(change.action, Action::Removed);
    assert_eq!(
        String::from_utf8(read(&path)).unwrap(),
        original.replacen(from, to, 1),
        "{framework}"
    );
}

#[test]
fn a_user_edit_between_install_and_remove_survives() {
    edit_between("claude-code", "\"numStartups\": 42", "\"numStartups\": 43");
    edit_between("codex", "model = \"gpt-5-codex\"", "model = \"o3\"");
    edit_between(
        "goose",
        "GOOSE_MODEL: claude-sonnet-4-5",
        "GOOSE_MODEL: gpt-5",
    );
    edit_between(
        "opencode",
        "\"theme\": \"opencode\"",
        "\"theme\": \"tokyonight\"",
    );
    // A new server added next to Cairn's.
    edit_between(
        "cursor",
        "\"figma\": {",
        "\"sentry\": {\"url\": \"https://mcp.sentry.dev/sse\"},\r\n    \"figma\": {",
    );
}

#[test]
fn a_server_the_user_adds_after_cairns_survives_removal() {
    let sandbox = Sandbox::new();
    let original = fixture("qwen-code").unwrap();
    let path = sandbox.put("qwen-code", &original);
    let cairn = sandbox.cairn();
    cairn.install("qwen-code").unwrap();
    // The user adds a server after Cairn's, the way an agent's own `mcp add` would.
    let installed = String::from_utf8(read(&path)).unwrap();
    let with_more = installed.replacen(
        "\"args\": [\"mcp\"]\n    }\n  }",
        "\"args\": [\"mcp\"]\n    },\n    \"time\": {\"command\": \"uvx\"}\n  }",
        1,
    );
    assert_ne!(with_more, installed);
    fs_err::write(&path, &with_more).unwrap();
    cairn.remove("qwen-code").unwrap();
    let doc = parse("qwen-code", &read(&path));
    assert_eq!(
        doc["mcpServers"],
        serde_json::json!({"time": {"command": "uvx"}})
    );
    assert_eq!(doc["theme"], "Qwen Dark");
}

// ---------------------------------------------------------------------------------------------
// Bad input: an error naming the file, and the file untouched.

fn refused(framework: &str, bytes: &[u8], what: &str) {
    check_refused(framework, bytes, what, true);
}

/// A valid file in a shape Cairn does not edit: install is refused; there is nothing to remove.
fn install_refused(framework: &str, bytes: &[u8], what: &str) {
    check_refused(framework, bytes, what, false);
}

fn check_refused(framework: &str, bytes: &[u8], what: &str, remove_too: bool) {
    let sandbox = Sandbox::new();
    let path = sandbox.put(framework, bytes);
    let cairn = sandbox.cairn();
    if !remove_too {
        let change = cairn.remove(framework).unwrap();
        assert_eq!(change.action, Action::NotInstalled, "{framework}: {what}");
        assert_eq!(read(&path), bytes);
    }
    let mut attempts = vec![("install", cairn.install(framework))];
    if remove_too {
        attempts.push(("remove", cairn.remove(framework)));
    }
    for (verb, result) in attempts {
        let error = result.expect_err(&format!("{framework} {verb}: {what}"));
        let message = error.to_string();
        assert!(
            message.contains(&path.display().to_string()),
            "{framework} {verb} ({what}): {message}"
        );
        assert!(matches!(error, Error::Malformed { .. }), "{message}");
        assert!(error.is_bad_input());
        assert_eq!(read(&path), bytes, "{framework} {verb}: file untouched");
    }
    let status = cairn.status(framework).unwrap();
    assert_eq!(status.problem.is_some(), remove_too, "{status:?}");
    assert_eq!(sandbox.backup_count(), 0);
}

#[test]
fn malformed_json_is_refused() {
    refused("claude-code", b"{\"numStartups\": 42,,}", "invalid JSON");
    refused("claude-code", b"{\"numStartups\": 42", "truncated JSON");
    refused(
        "cursor",
        b"{\n  // comment\n  \"mcpServers\": {}\n}\n",
        "comments in strict JSON",
    );
    refused("crush", b"{\"mcp\": {},}", "trailing comma in strict JSON");
    refused("claude-code", b"[1, 2, 3]", "top level not an object");
    refused("copilot-cli", b"\"mcpServers\"", "top level a string");
    refused(
        "claude-code",
        b"{\"mcpServers\": []}",
        "container holds an array",
    );
    refused("cursor", b"{\"mcpServers\": null}", "container holds null");
    refused("gemini-cli", b"{ /* unterminated", "unterminated comment");
    refused(
        "opencode",
        b"{\"mcp\": \"off\"}",
        "container holds a string",
    );
    refused("qwen-code", b"{\"a\": 1} {\"b\": 2}", "two values");
}

#[test]
fn malformed_toml_is_refused() {
    refused("codex", b"model = \"o3\nsandbox = 1\n", "invalid TOML");
    refused(
        "codex",
        b"[mcp_servers]\n[mcp_servers]\n",
        "duplicate table",
    );
    refused(
        "codex",
        b"mcp_servers = \"none\"\n",
        "container not a table",
    );
    install_refused(
        "codex",
        b"mcp_servers = { github = { command = \"npx\" } }\n",
        "container is an inline table",
    );
}

#[test]
fn malformed_or_unsupported_yaml_is_refused() {
    refused("goose", b"extensions: [developer\n", "invalid YAML");
    install_refused(
        "goose",
        b"GOOSE_MODEL: x\nextensions: {developer: {enabled: true}}\n",
        "flow-style extensions",
    );
    refused(
        "goose",
        b"extensions:\n- developer\n",
        "extensions is a list",
    );
    refused("goose", b"extensions: none\n", "extensions is a string");
    refused("goose", b"- a\n- b\n", "top level a list");
    refused("goose", b"a: 1\n---\nb: 2\n", "two documents");
    install_refused(
        "goose",
        b"base: &ext\n  dev: {}\nextensions: *ext\n",
        "extensions is an alias",
    );
}

#[test]
fn an_entry_cairn_cannot_edit_is_reported_not_touched() {
    let bytes = b"extensions: {cairn: {cmd: /old/cairn, args: [mcp]}}\n";
    let sandbox = Sandbox::new();
    let path = sandbox.put("goose", bytes);
    let cairn = sandbox.cairn();
    let status = cairn.status("goose").unwrap();
    assert!(status.installed && !status.current, "{status:?}");
    for error in [
        cairn.install("goose").unwrap_err(),
        cairn.remove("goose").unwrap_err(),
    ] {
        assert!(error.to_string().contains("flow style"), "{error}");
        assert!(error.to_string().contains(&path.display().to_string()));
    }
    assert_eq!(read(&path), bytes);
}

#[test]
fn non_utf8_is_refused() {
    refused(
        "cursor",
        b"{\"mcpServers\": {\"x\": \"\xff\xfe\"}}",
        "not UTF-8",
    );
}

#[test]
fn a_huge_file_is_refused_unread() {
    let sandbox = Sandbox::new();
    let path = sandbox.cairn().config_path("claude-code").unwrap();
    let file = fs_err::File::create(&path).unwrap();
    file.set_len(cairn_integrate::MAX_CONFIG_BYTES + 1).unwrap();
    drop(file);
    let error = sandbox.cairn().install("claude-code").unwrap_err();
    assert!(matches!(error, Error::TooLarge { .. }), "{error}");
    assert!(error.to_string().contains(&path.display().to_string()));
    assert_eq!(
        fs_err::metadata(&path).unwrap().len(),
        cairn_integrate::MAX_CONFIG_BYTES + 1
    );
}

#[test]
fn a_directory_in_place_of_the_file_is_refused() {
    let sandbox = Sandbox::new();
    let path = sandbox.cairn().config_path("cursor").unwrap();
    fs_err::create_dir_all(&path).unwrap();
    let error = sandbox.cairn().install("cursor").unwrap_err();
    assert!(
        error.to_string().contains(&path.display().to_string()),
        "{error}"
    );
    assert!(path.is_dir());
}

/// Set in the child that [`an_unreadable_file_is_refused`] runs when it runs as root.
const WITHOUT_DAC_OVERRIDE: &str = "CAIRN_TEST_WITHOUT_DAC_OVERRIDE";

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let sandbox = Sandbox::new();
    let path = sandbox.put("cursor", b"{}\n");
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    if fs_err::read(&path).is_ok() {
        // Root reads a file whatever its mode (CAP_DAC_OVERRIDE). Run this test again in a
        // child that has lost the capabilities that let it (dropped from the bounding set,
        // so root's exec does not get them back): there the read really fails.
        assert!(
            std::env::var_os(WITHOUT_DAC_OVERRIDE).is_none(),
            "the file is readable even without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH"
        );
        let out = std::process::Command::new("setpriv")
            .arg("--bounding-set=-dac_override,-dac_read_search")
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "an_unreadable_file_is_refused",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(WITHOUT_DAC_OVERRIDE, "1")
            .output()
            .expect("setpriv (util-linux) runs the test without root's file override");
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{log}");
        assert!(log.contains("1 passed"), "the child ran the test: {log}");
        return;
    }
    let error = sandbox.cairn().install("cursor").unwrap_err();
    assert!(matches!(error, Error::Read { .. }), "{error}");
    assert!(
        error.to_string().contains(&path.display().to_string()),
        "{error}"
    );
}

#[test]
fn an_unknown_framework_is_refused() {
    let sandbox = Sandbox::new();
    let error = sandbox.cairn().install("vim").unwrap_err();
    assert!(matches!(error, Error::UnknownFramework(_)));
    assert!(error.is_bad_input());
    assert!(error.to_string().contains("claude-code"), "{error}");
}

#[test]
fn actions_read_as_their_serialised_names() {
    for action in [
        Action::Installed,
        Action::Updated,
        Action::AlreadyInstalled,
        Action::Removed,
        Action::NotInstalled,
    ] {
        assert_eq!(
            serde_json::to_value(action).unwrap(),
            Value::from(action.as_str())
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Files: symlinks, permissions, blank files, opencode's two names.

#[cfg(unix)]
#[test]
fn a_symlinked_config_is_followed_and_said_so() {
    let sandbox = Sandbox::new();
    let original = fixture("claude-code").unwrap();
    let dotfiles = sandbox.home.join("dotfiles");
    fs_err::create_dir_all(&dotfiles).unwrap();
    let target = dotfiles.join("claude.json");
    fs_err::write(&target, &original).unwrap();
    let link = sandbox.cairn().config_path("claude-code").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();

    let change = sandbox.cairn().install("claude-code").unwrap();
    assert_eq!(change.action, Action::Installed);
    assert_eq!(change.via_symlink.as_deref(), Some(link.as_path()));
    assert_eq!(change.path, fs_err::canonicalize(&target).unwrap());
    assert!(
        change.notes.iter().any(|note| note.contains("symlink")),
        "{change:?}"
    );
    assert!(
        fs_err::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_ne!(read(&target), original);

    sandbox.cairn().remove("claude-code").unwrap();
    assert!(
        fs_err::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read(&target), original);
}

#[cfg(unix)]
#[test]
fn a_symlink_to_nowhere_is_refused() {
    let sandbox = Sandbox::new();
    let link = sandbox.cairn().config_path("claude-code").unwrap();
    std::os::unix::fs::symlink(sandbox.home.join("missing.json"), &link).unwrap();
    let error = sandbox.cairn().install("claude-code").unwrap_err();
    assert!(
        error.to_string().contains(&link.display().to_string()),
        "{error}"
    );
    assert!(!sandbox.home.join("missing.json").exists());
}

/// Links planted at every temporary name a writer could be expected to use beside the config
/// file (this process's id and every retry number included) are left alone, never written
/// through nor in the way: the write uses a random name.
#[cfg(unix)]
#[test]
fn links_planted_at_temporary_names_are_left_alone() {
    use std::os::unix::fs::PermissionsExt as _;
    let sandbox = Sandbox::new();
    let path = sandbox.put("claude-code", &fixture("claude-code").unwrap());
    let victim = sandbox.home.join("victim");
    fs_err::write(&victim, "untouched\n").unwrap();
    fs_err::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let dir = path.parent().unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut planted = vec![
        dir.join(format!(".{name}.cairn-tmp")),
        dir.join(format!(".{name}.tmp-cairn")),
    ];
    for attempt in 0..=100 {
        planted.push(dir.join(format!(
            ".{name}.cairn-{}-{attempt}.tmp",
            std::process::id()
        )));
    }
    for at in &planted {
        std::os::unix::fs::symlink(&victim, at).unwrap();
    }
    let change = sandbox.cairn().install("claude-code").unwrap();
    assert_eq!(change.action, Action::Installed);
    assert_eq!(
        parse("claude-code", &read(&path))[container("claude-code")]["cairn"],
        expected_entry("claude-code", CAIRN)
    );
    sandbox.cairn().remove("claude-code").unwrap();
    for at in &planted {
        assert!(
            fs_err::symlink_metadata(at)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{}",
            at.display()
        );
    }
    assert_eq!(read(&victim), b"untouched\n");
    let mode = fs_err::metadata(&victim).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    // No temporary file of Cairn's is left beside the config.
    let left: Vec<String> = fs_err::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp-cairn") && !planted.iter().any(|p| p.ends_with(n)))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A link that leads nowhere, standing where the config's folder must be created, is refused
/// with its path named; nothing is created where it points.
#[cfg(unix)]
#[test]
fn a_folder_created_for_a_config_never_goes_through_a_link() {
    let sandbox = Sandbox::new();
    // Gemini's folder is missing; a dangling link stands where it would be created.
    let path = sandbox.cairn().config_path("gemini-cli").unwrap();
    let folder = path.parent().unwrap();
    let elsewhere = sandbox.home.join("elsewhere");
    fs_err::create_dir_all(folder.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, folder).unwrap();
    let error = sandbox.cairn().install("gemini-cli").unwrap_err();
    assert!(
        error.to_string().contains(&folder.display().to_string())
            && error.to_string().contains("symbolic link"),
        "{error}"
    );
    assert!(!elsewhere.exists());
}

#[cfg(unix)]
#[test]
fn permissions_are_kept() {
    use std::os::unix::fs::PermissionsExt as _;
    let sandbox = Sandbox::new();
    let path = sandbox.put("claude-code", &fixture("claude-code").unwrap());
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let change = sandbox.cairn().install("claude-code").unwrap();
    let mode = |path: &Path| fs_err::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        mode(&change.backup.unwrap()),
        0o600,
        "the backup is as private"
    );
    sandbox.cairn().remove("claude-code").unwrap();
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn a_blank_file_is_filled_and_given_back() {
    for (framework, blank) in [("gemini-cli", "\n"), ("codex", ""), ("goose", "\n\n")] {
        let sandbox = Sandbox::new();
        let path = sandbox.put(framework, blank.as_bytes());
        let cairn = sandbox.cairn();
        assert_eq!(cairn.install(framework).unwrap().action, Action::Installed);
        let doc = parse(framework, &read(&path));
        assert_eq!(
            doc[container(framework)]["cairn"],
            expected_entry(framework, CAIRN)
        );
        cairn.remove(framework).unwrap();
        assert_eq!(read(&path), blank.as_bytes(), "{framework}");
    }
}

#[test]
fn opencode_uses_the_jsonc_file_when_there_is_one() {
    let sandbox = Sandbox::new();
    let cairn = sandbox.cairn();
    let dir = sandbox.home.join(".config/opencode");
    assert_eq!(
        cairn.config_path("opencode").unwrap(),
        dir.join("opencode.json")
    );
    fs_err::create_dir_all(&dir).unwrap();
    fs_err::write(dir.join("opencode.jsonc"), fixture("opencode").unwrap()).unwrap();
    assert_eq!(
        cairn.config_path("opencode").unwrap(),
        dir.join("opencode.jsonc")
    );
    cairn.install("opencode").unwrap();
    assert!(!dir.join("opencode.json").exists());
}

#[test]
fn config_paths_follow_the_environment() {
    let home = PathBuf::from("/home/u");
    let env = Env::for_home(&home)
        .with_var("XDG_CONFIG_HOME", "/xdg")
        .with_var("QWEN_HOME", "/q")
        .with_var("COPILOT_HOME", "")
        .with_var("CODEX_HOME", "/c");
    let cairn = Integrations::new(env, CAIRN, "/backups");
    let path = |framework: &str| cairn.config_path(framework).unwrap();
    assert_eq!(path("claude-code"), home.join(".claude.json"));
    assert_eq!(path("codex"), PathBuf::from("/c/config.toml"));
    assert_eq!(path("gemini-cli"), home.join(".gemini/settings.json"));
    assert_eq!(
        path("opencode"),
        PathBuf::from("/xdg/opencode/opencode.json")
    );
    assert_eq!(path("cursor"), home.join(".cursor/mcp.json"));
    assert_eq!(path("qwen-code"), PathBuf::from("/q/settings.json"));
    assert_eq!(path("crush"), PathBuf::from("/xdg/crush/crush.json"));
    assert_eq!(path("copilot-cli"), home.join(".copilot/mcp-config.json"));
    assert_eq!(path("goose"), PathBuf::from("/xdg/goose/config.yaml"));
}

// ---------------------------------------------------------------------------------------------
// list().

#[test]
fn list_reports_before_and_after() {
    let sandbox = Sandbox::new();
    let cairn = sandbox.cairn();
    let list = cairn.list();
    assert_eq!(
        list.iter().map(|s| s.framework).collect::<Vec<_>>(),
        Integrations::frameworks()
    );
    assert!(
        list.iter()
            .all(|s| !s.exists && !s.detected && !s.installed && s.problem.is_none())
    );

    // Codex is installed (its home exists) and has a config; Cursor's file is broken.
    sandbox.put("codex", &fixture("codex").unwrap());
    sandbox.put("cursor", b"{ nope");
    let list = cairn.list();
    let get = |list: &[cairn_integrate::IntegrationStatus], id: &str| {
        list.iter().find(|s| s.framework == id).unwrap().clone()
    };
    let codex = get(&list, "codex");
    assert!(
        codex.exists && codex.detected && !codex.installed,
        "{codex:?}"
    );
    let cursor = get(&list, "cursor");
    assert!(cursor.detected && cursor.problem.is_some(), "{cursor:?}");
    assert!(
        cursor
            .problem
            .unwrap()
            .contains(&cursor.path.display().to_string())
    );

    cairn.install("codex").unwrap();
    cairn.install("goose").unwrap();
    let list = cairn.list();
    for id in ["codex", "goose"] {
        let status = get(&list, id);
        assert!(status.exists && status.detected && status.installed && status.current);
    }
    let stale = sandbox.cairn_at("/elsewhere/cairn").list();
    assert!(!get(&stale, "codex").current && get(&stale, "codex").installed);

    cairn.remove("codex").unwrap();
    assert!(!get(&cairn.list(), "codex").installed);
}

#[test]
fn fixtures_cover_the_awkward_cases() {
    let text = |framework: &str| String::from_utf8(fixture(framework).unwrap()).unwrap();
    assert!(text("cursor").contains("\r\n"), "CRLF");
    assert!(!text("claude-code").ends_with('\n'), "no final newline");
    assert!(!text("goose").ends_with('\n'), "no final newline (YAML)");
    assert!(text("copilot-cli").contains("\n\t\""), "tabs");
    assert!(text("gemini-cli").contains("\n    \""), "4 spaces");
    assert!(
        text("qwen-code").contains("\"mcpServers\": {}"),
        "empty container"
    );
    assert!(
        !text("gemini-cli").contains("mcpServers"),
        "missing container"
    );
    assert!(text("opencode").contains("},\n"), "trailing commas");
    assert!(text("codex").contains("# MCP servers"), "TOML comments");
    assert!(text("goose").contains("  # fetched docs"), "YAML comments");
    assert_eq!(fixture_name("opencode").unwrap(), "opencode.jsonc");
    assert!(fixture("crush").is_none(), "an absent file");
}

/// Backups are private (0600 files in 0700 folders, even for a world-readable original and a
/// backup folder that already existed open), only the newest `BACKUPS_KEPT` per file are
/// kept, and the status lists them newest first.
#[cfg(unix)]
#[test]
fn backups_are_private_and_only_the_newest_are_kept() {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |path: &Path| fs_err::metadata(path).unwrap().permissions().mode() & 0o777;
    let sandbox = Sandbox::new();
    let path = sandbox.put("codex", &fixture("codex").unwrap());
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    // A folder left open by an older Cairn is closed on the next backup.
    fs_err::create_dir_all(sandbox.backups.join("codex")).unwrap();
    fs_err::set_permissions(&sandbox.backups, std::fs::Permissions::from_mode(0o755)).unwrap();
    fs_err::set_permissions(
        sandbox.backups.join("codex"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();

    let kept = cairn_integrate::BACKUPS_KEPT;
    assert_eq!(kept, 5);
    let mut made = Vec::new();
    // N + 3 installs, each of a different binary so each one rewrites the file.
    for i in 0..kept + 3 {
        let change = sandbox
            .cairn_at(&format!("/opt/Cairn-{i}/bin/cairn"))
            .install("codex")
            .unwrap();
        let expected = if i == 0 {
            Action::Installed
        } else {
            Action::Updated
        };
        assert_eq!(change.action, expected);
        let backup = change.backup.unwrap();
        assert_eq!(mode(&backup), 0o600, "{}", backup.display());
        made.push(backup);
    }
    assert_eq!(mode(&path), 0o644, "the config file keeps its own mode");
    assert_eq!(mode(&sandbox.backups), 0o700);
    assert_eq!(mode(&sandbox.backups.join("codex")), 0o700);
    assert_eq!(mode(&sandbox.backups.join("ledger.json")), 0o600);

    let on_disk = sandbox.backup_count();
    assert_eq!(on_disk, kept, "only the newest {kept} backups are kept");
    for old in &made[..3] {
        assert!(!old.exists(), "{} should be gone", old.display());
    }
    let status = sandbox.cairn().status("codex").unwrap();
    let listed: Vec<PathBuf> = status.backups.iter().map(|b| b.path.clone()).collect();
    let newest_first: Vec<PathBuf> = made[3..].iter().rev().cloned().collect();
    assert_eq!(listed, newest_first);
    assert!(status.backups.iter().all(|b| b.file_name == "config.toml"));
    assert!(status.backups.iter().all(|b| b.size > 0));
    assert!(
        status
            .backups
            .windows(2)
            .all(|w| w[0].created_at >= w[1].created_at),
        "{:?}",
        status.backups
    );
    // Another framework's backups are its own.
    assert!(sandbox.cairn().status("cursor").unwrap().backups.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Hooks: installed and removed with the MCP registration.

/// The frameworks whose hooks live in a JSON hook file, with their two events.
const HOOK_FILES: [(&str, [&str; 2]); 5] = [
    ("claude-code", ["SessionStart", "UserPromptSubmit"]),
    ("codex", ["SessionStart", "UserPromptSubmit"]),
    ("gemini-cli", ["SessionStart", "BeforeAgent"]),
    ("qwen-code", ["SessionStart", "UserPromptSubmit"]),
    ("cursor", ["sessionStart", "beforeSubmitPrompt"]),
];

fn events(framework: &str) -> [&'static str; 2] {
    HOOK_FILES
        .iter()
        .find(|(id, _)| *id == framework)
        .unwrap()
        .1
}

/// A hook file as the agent reads it (comments and trailing commas out).
fn hook_doc(path: &Path) -> Value {
    serde_json::from_str(&strip_jsonc(&String::from_utf8(read(path)).unwrap())).unwrap()
}

/// The commands under `hooks.<event>`, read as the agent reads them: handlers inside groups
/// (Claude Code's shape), or handlers directly (Cursor).
fn commands(doc: &Value, framework: &str, event: &str) -> Vec<String> {
    let list = doc["hooks"][event].as_array().cloned().unwrap_or_default();
    let handlers: Vec<Value> = if framework == "cursor" {
        list
    } else {
        list.iter()
            .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
            .collect()
    };
    handlers
        .iter()
        .map(|h| h["command"].as_str().unwrap().to_owned())
        .collect()
}

/// Cairn's handler for `event` as the agent reads it.
fn cairn_handler(doc: &Value, framework: &str, event: &str) -> Value {
    let list = doc["hooks"][event].as_array().unwrap();
    let handlers: Vec<&Value> = if framework == "cursor" {
        list.iter().collect()
    } else {
        list.iter()
            .flat_map(|group| group["hooks"].as_array().unwrap())
            .collect()
    };
    let found: Vec<_> = handlers
        .into_iter()
        .filter(|h| h["command"].as_str().unwrap().contains(" hook "))
        .collect();
    assert_eq!(found.len(), 1, "{framework} {event}: one Cairn handler");
    found[0].clone()
}

fn check_cairn_hooks(path: &Path, framework: &str, command: &str) {
    let doc = hook_doc(path);
    if framework == "cursor" {
        assert_eq!(doc["version"], 1);
    }
    for event in events(framework) {
        let handler = cairn_handler(&doc, framework, event);
        assert_eq!(
            handler["command"],
            format!("{command} hook {framework} {event}"),
            "{framework}"
        );
        match framework {
            "claude-code" | "codex" => {
                assert_eq!(handler["type"], "command");
                assert_eq!(handler["timeout"], 2, "seconds");
            }
            "gemini-cli" | "qwen-code" => {
                assert_eq!(handler["type"], "command");
                assert_eq!(handler["timeout"], 2000, "milliseconds");
            }
            _ => assert_eq!(handler.get("type"), None),
        }
    }
}

#[test]
fn hooks_go_in_and_out_with_the_registration_on_a_fresh_home() {
    for (framework, _) in HOOK_FILES {
        let sandbox = Sandbox::new();
        let cairn = sandbox.with_hooks(CAIRN);
        let files_before = sandbox.files();
        let hooks = sandbox.hooks_path(framework);
        let status = cairn.status(framework).unwrap();
        let hook_status = status.hooks.clone().unwrap();
        assert_eq!(hook_status.path, hooks);
        assert_eq!(hook_status.state, HooksState::NotInstalled);

        let change = cairn.install(framework).unwrap();
        assert_eq!(change.action, Action::Installed, "{framework}");
        let done = change.hooks.clone().unwrap();
        assert_eq!(done.action, Action::Installed, "{framework}");
        assert_eq!(done.path, hooks);
        assert_eq!(done.backup, None, "nothing to back up");
        check_cairn_hooks(&hooks, framework, CAIRN);
        let status = cairn.status(framework).unwrap();
        assert!(status.installed && status.current, "{status:?}");
        let hook_status = status.hooks.unwrap();
        assert_eq!(hook_status.state, HooksState::Installed, "{framework}");
        assert!(hook_status.current && hook_status.problem.is_none());

        // Again: nothing written anywhere.
        let config = read(&change.path);
        let hook_bytes = read(&hooks);
        let backups = sandbox.backup_count();
        let again = cairn.install(framework).unwrap();
        assert_eq!(again.action, Action::AlreadyInstalled);
        assert_eq!(again.hooks.unwrap().action, Action::AlreadyInstalled);
        assert_eq!(read(&change.path), config);
        assert_eq!(read(&hooks), hook_bytes, "{framework}: byte-identical");
        assert_eq!(sandbox.backup_count(), backups);

        // Remove: both files and the folders Cairn made are gone.
        let removed = cairn.remove(framework).unwrap();
        assert_eq!(removed.action, Action::Removed);
        assert_eq!(removed.hooks.unwrap().action, Action::Removed);
        assert!(!hooks.exists(), "{framework}");
        assert_eq!(sandbox.files(), files_before, "{framework}");
        let status = cairn.status(framework).unwrap();
        assert_eq!(status.hooks.unwrap().state, HooksState::NotInstalled);
        let again = cairn.remove(framework).unwrap();
        assert_eq!(again.action, Action::NotInstalled);
        assert_eq!(again.hooks.unwrap().action, Action::NotInstalled);
    }
}

/// A user's hook file with hooks of their own (in Cairn's events and others), in the
/// file's own style: JSONC with comments for Gemini and Qwen, CRLF for Codex, tabs for Cursor.
fn users_hook_file(framework: &str) -> String {
    match framework {
        "claude-code" => concat!(
            "{\n",
            "  \"model\": \"opus\",\n",
            "  \"hooks\": {\n",
            "    \"UserPromptSubmit\": [\n",
            "      {\n",
            "        \"hooks\": [\n",
            "          { \"type\": \"command\", \"command\": \"~/bin/remind.sh\" }\n",
            "        ]\n",
            "      }\n",
            "    ],\n",
            "    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n",
            "  },\n",
            "  \"permissions\": {\"allow\": [\"Bash(ls:*)\"]}\n",
            "}"
        )
        .to_owned(),
        "codex" => concat!(
            "{\r\n",
            "    \"hooks\": {\r\n",
            "        \"SessionStart\": [\r\n",
            "            {\"matcher\": \"startup\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}\r\n",
            "        ]\r\n",
            "    }\r\n",
            "}\r\n"
        )
        .to_owned(),
        "gemini-cli" | "qwen-code" => {
            let event = events(framework)[1];
            format!(
                concat!(
                    "// my settings\n",
                    "{{\n",
                    "  \"theme\": \"Dracula\", // dark\n",
                    "  \"hooks\": {{\n",
                    "    \"{event}\": [\n",
                    "      {{ \"hooks\": [ {{ \"type\": \"command\", \"command\": \"lint-prompt\", \"timeout\": 500 }}, ], }},\n",
                    "    ],\n",
                    "    /* none yet */\n",
                    "    \"SessionStart\": []\n",
                    "  }},\n",
                    "}}\n"
                ),
                event = event
            )
        }
        "cursor" => concat!(
            "{\n",
            "\t\"version\": 1,\n",
            "\t\"hooks\": {\n",
            "\t\t\"beforeSubmitPrompt\": [{\"command\": \"./audit.sh\"}],\n",
            "\t\t\"stop\": [{\"command\": \"./stop.sh\"}]\n",
            "\t}\n",
            "}\n"
        )
        .to_owned(),
        other => panic!("{other}"),
    }
}

/// Everything in a hook file but Cairn's handlers (and what held only them).
fn without_cairn_hooks(mut doc: Value, framework: &str) -> Value {
    let Some(hooks) = doc.get_mut("hooks").and_then(Value::as_object_mut) else {
        return doc;
    };
    for (_, list) in hooks.iter_mut() {
        let list = list.as_array_mut().unwrap();
        let mine = |h: &Value| h["command"].as_str().unwrap().contains(" hook ");
        if framework == "cursor" {
            list.retain(|h| !mine(h));
        } else {
            let before = list.len();
            for group in list.iter_mut() {
                group["hooks"].as_array_mut().unwrap().retain(|h| !mine(h));
            }
            list.retain(|g| !g["hooks"].as_array().unwrap().is_empty());
            assert!(list.len() <= before);
        }
    }
    hooks.retain(|_, list| !list.as_array().unwrap().is_empty());
    doc
}

#[test]
fn users_own_hooks_are_kept_and_removal_gives_back_the_bytes() {
    for (framework, _) in HOOK_FILES {
        let sandbox = Sandbox::new();
        let cairn = sandbox.with_hooks(CAIRN);
        let original = users_hook_file(framework);
        let hooks = sandbox.put_hooks(framework, &original);
        // Gemini and Qwen keep MCP servers and hooks in one file: start from the user's.
        let shared = cairn.config_path(framework).unwrap() == hooks;

        let change = cairn.install(framework).unwrap();
        let done = change.hooks.clone().unwrap();
        assert_eq!(done.action, Action::Installed, "{framework}");
        let backup = done.backup.clone().unwrap();
        assert_eq!(
            read(&backup),
            original.as_bytes(),
            "{framework}: backup first"
        );
        if shared {
            assert_eq!(change.backup, Some(backup), "one backup for the one file");
        }
        check_cairn_hooks(&hooks, framework, CAIRN);
        let doc = hook_doc(&hooks);
        let mut before: Value = serde_json::from_str(&strip_jsonc(&original)).unwrap();
        let mut after = without_cairn_hooks(doc.clone(), framework);
        if shared {
            after.as_object_mut().unwrap().remove("mcpServers");
        }
        // An empty list of the user's stays a list (now holding Cairn's group).
        if let Some(hooks) = before["hooks"].as_object_mut() {
            hooks.retain(|_, list| !list.as_array().unwrap().is_empty());
        }
        assert_eq!(after, before, "{framework}: the user's settings and hooks");
        // The user's own hook comes first, Cairn's after it.
        let prompt_event = events(framework)[1];
        let prompt_commands = commands(&doc, framework, prompt_event);
        if framework != "codex" {
            assert_eq!(prompt_commands.len(), 2, "{framework}: {prompt_commands:?}");
            assert!(!prompt_commands[0].contains(" hook "));
        }
        let installed = read(&hooks);
        assert_eq!(
            cairn.install(framework).unwrap().hooks.unwrap().action,
            Action::AlreadyInstalled
        );
        assert_eq!(read(&hooks), installed);

        let removed = cairn.remove(framework).unwrap();
        assert_eq!(removed.hooks.unwrap().action, Action::Removed);
        assert_eq!(
            String::from_utf8(read(&hooks)).unwrap(),
            original,
            "{framework}: the original bytes"
        );
    }
}

#[test]
fn a_hook_file_cairn_cannot_edit_stops_the_install_before_anything_is_written() {
    let cases: [(&str, &str, &str); 6] = [
        (
            "claude-code",
            "{\"hooks\": [1]}",
            "`hooks` is not an object",
        ),
        (
            "claude-code",
            "{\"hooks\": {\"SessionStart\": {}}}",
            "`hooks.SessionStart` is not a list",
        ),
        ("codex", "{\"hooks\": {", "not valid JSON"),
        ("cursor", "[1, 2]", "the top level is not an object"),
        (
            "cursor",
            "{\"version\": 1, // no comments in JSON\n}",
            "not valid JSON",
        ),
        (
            "claude-code",
            "{\"hooks\": {\"UserPromptSubmit\": \"x\"}}",
            "is not a list",
        ),
    ];
    for (framework, text, what) in cases {
        let sandbox = Sandbox::new();
        let cairn = sandbox.with_hooks(CAIRN);
        let hooks = sandbox.put_hooks(framework, text);
        let config = cairn.config_path(framework).unwrap();
        for verb in ["install", "remove"] {
            let result = if verb == "install" {
                cairn.install(framework)
            } else {
                cairn.remove(framework)
            };
            let error = result.expect_err(&format!("{framework} {verb} {text}"));
            let message = error.to_string();
            assert!(matches!(error, Error::Malformed { .. }), "{message}");
            assert!(
                message.contains(&hooks.display().to_string()) && message.contains(what),
                "{framework} {verb}: {message}"
            );
            assert_eq!(read(&hooks), text.as_bytes(), "untouched");
            assert!(
                !config.exists(),
                "{framework}: the MCP file was not written either"
            );
        }
        let status = cairn.status(framework).unwrap();
        let problem = status.hooks.unwrap().problem.unwrap();
        assert!(problem.contains(what), "{problem}");
        assert_eq!(sandbox.backup_count(), 0);
    }
}

#[test]
fn status_tells_partial_and_outdated_hooks_and_install_mends_them() {
    let sandbox = Sandbox::new();
    let cairn = sandbox.with_hooks(CAIRN);
    cairn.install("claude-code").unwrap();
    let hooks = sandbox.hooks_path("claude-code");
    assert_eq!(hooks, sandbox.home.join(".claude/settings.json"));

    // The user deletes one of Cairn's hooks by hand: partly installed.
    let mut doc = hook_doc(&hooks);
    doc["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("UserPromptSubmit");
    fs_err::write(&hooks, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let status = cairn.status("claude-code").unwrap().hooks.unwrap();
    assert_eq!(status.state, HooksState::Partial);
    assert!(!status.current);
    let change = cairn.install("claude-code").unwrap();
    assert_eq!(
        change.action,
        Action::AlreadyInstalled,
        "the MCP entry was fine"
    );
    assert_eq!(change.hooks.unwrap().action, Action::Installed);
    check_cairn_hooks(&hooks, "claude-code", CAIRN);

    // Another binary: installed but not current; installing corrects both events, once.
    let moved = "/usr/local/bin/cairn";
    let status = sandbox.with_hooks(moved).status("claude-code").unwrap();
    let hook_status = status.hooks.unwrap();
    assert_eq!(hook_status.state, HooksState::Installed);
    assert!(!hook_status.current);
    let change = sandbox.with_hooks(moved).install("claude-code").unwrap();
    assert_eq!(change.hooks.unwrap().action, Action::Updated);
    check_cairn_hooks(&hooks, "claude-code", moved);
    assert!(
        sandbox
            .with_hooks(moved)
            .status("claude-code")
            .unwrap()
            .hooks
            .unwrap()
            .current
    );
    // Removal still takes everything Cairn made: the file held nothing else.
    sandbox.with_hooks(moved).remove("claude-code").unwrap();
    assert!(!hooks.exists());
}

#[test]
fn claude_settings_follow_claude_config_dir_and_odd_binary_paths_are_quoted() {
    let sandbox = Sandbox::new();
    let dir = sandbox.home.join("claude-profile");
    let env = sandbox
        .env
        .clone()
        .with_var("CLAUDE_CONFIG_DIR", dir.to_str().unwrap());
    let binary = "/Applications/My Tools/cairn's/cairn";
    let cairn = Integrations::new(env, binary, &sandbox.backups);
    let change = cairn.install("claude-code").unwrap();
    let done = change.hooks.unwrap();
    assert_eq!(done.path, dir.join("settings.json"));
    let doc = hook_doc(&done.path);
    let command = cairn_handler(&doc, "claude-code", "SessionStart")["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        command,
        r"'/Applications/My Tools/cairn'\''s/cairn' hook claude-code SessionStart"
    );
    // The shell gives back the path.
    let echoed = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "printf %s {}",
            command.trim_end_matches(" hook claude-code SessionStart")
        ))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(echoed.stdout).unwrap(), binary);
    assert_eq!(
        cairn.status("claude-code").unwrap().hooks.unwrap().state,
        HooksState::Installed
    );
}

#[test]
fn codex_says_to_trust_the_hooks_and_copilot_gets_none() {
    let sandbox = Sandbox::new();
    let cairn = sandbox.with_hooks(CAIRN);
    let change = cairn.install("codex").unwrap();
    assert_eq!(change.manual.len(), 1);
    assert!(
        change.manual[0].contains("/hooks") && change.manual[0].contains("Trust"),
        "{:?}",
        change.manual
    );
    assert_eq!(
        change.hooks.unwrap().path,
        sandbox.home.join("codex-home/hooks.json")
    );
    assert_eq!(cairn.status("codex").unwrap().manual, change.manual);

    let change = cairn.install("copilot-cli").unwrap();
    assert_eq!(change.hooks, None);
    assert!(
        change
            .notes
            .iter()
            .any(|n| n.contains("ignores what its hooks print")),
        "{:?}",
        change.notes
    );
    assert!(cairn.status("copilot-cli").unwrap().hooks.is_err());
    assert_eq!(cairn.hooks_path("copilot-cli").unwrap(), None);
    assert!(!sandbox.home.join(".copilot/hooks").exists());
}

#[test]
fn the_opencode_plugin_is_written_updated_and_deleted_only_when_it_is_cairns() {
    let sandbox = Sandbox::new();
    let cairn = sandbox.with_hooks(CAIRN);
    let plugin = sandbox.hooks_path("opencode");
    assert_eq!(
        plugin,
        sandbox.home.join(".config/opencode/plugins/cairn.js")
    );
    let files_before = sandbox.files();
    let change = cairn.install("opencode").unwrap();
    assert_eq!(change.hooks.clone().unwrap().action, Action::Installed);
    let text = String::from_utf8(read(&plugin)).unwrap();
    assert!(text.starts_with("// Cairn's OpenCode plugin"), "{text}");
    assert!(text.contains(&format!("const CAIRN = \"{CAIRN}\";")));
    for needle in [
        "\"chat.message\"",
        "\"session.created\"",
        "synthetic: true",
        "parts.push(",
        "TIMEOUT_MS",
    ] {
        assert!(text.contains(needle), "{needle}");
    }
    // Recalled text joins the user's message, never an agent's system prompt.
    for never in ["system.transform", "output.system", "messages.transform"] {
        assert!(!text.contains(never), "{never}: {text}");
    }
    let status = cairn.status("opencode").unwrap().hooks.unwrap();
    assert_eq!(
        (status.state, status.current),
        (HooksState::Installed, true)
    );
    assert_eq!(
        cairn.install("opencode").unwrap().hooks.unwrap().action,
        Action::AlreadyInstalled
    );

    // Another binary: the plugin is rewritten (and the old one backed up).
    let moved = sandbox.with_hooks("/usr/bin/cairn");
    assert!(!moved.status("opencode").unwrap().hooks.unwrap().current);
    let done = moved.install("opencode").unwrap().hooks.unwrap();
    assert_eq!(done.action, Action::Updated);
    assert_eq!(read(&done.backup.unwrap()), text.as_bytes());
    assert!(
        String::from_utf8(read(&plugin))
            .unwrap()
            .contains("\"/usr/bin/cairn\"")
    );

    let removed = moved.remove("opencode").unwrap();
    assert_eq!(removed.hooks.unwrap().action, Action::Removed);
    assert!(!plugin.exists());
    assert_eq!(
        sandbox.files(),
        files_before,
        "the plugins folder Cairn made is gone"
    );

    // Someone else's cairn.js: refused before anything is written, never deleted.
    let theirs = "export const Mine = async () => ({});\n";
    sandbox.put_hooks("opencode", theirs);
    let config = cairn.config_path("opencode").unwrap();
    let error = cairn.install("opencode").unwrap_err();
    assert!(matches!(error, Error::Malformed { .. }));
    assert!(
        error.to_string().contains(&plugin.display().to_string()),
        "{error}"
    );
    assert!(!config.exists(), "the MCP entry was not written either");
    let removed = cairn.remove("opencode").unwrap();
    assert_eq!(removed.hooks.unwrap().action, Action::NotInstalled);
    assert_eq!(read(&plugin), theirs.as_bytes());
    assert!(
        cairn
            .status("opencode")
            .unwrap()
            .hooks
            .unwrap()
            .problem
            .is_some()
    );
}

#[test]
fn hooks_can_be_left_out_and_removal_still_takes_them() {
    let sandbox = Sandbox::new();
    let change = sandbox.cairn().install("cursor").unwrap();
    assert_eq!(change.hooks, None);
    assert!(!sandbox.hooks_path("cursor").exists());
    sandbox.with_hooks(CAIRN).install("cursor").unwrap();
    let removed = sandbox.cairn().remove("cursor").unwrap();
    assert_eq!(removed.hooks.unwrap().action, Action::Removed);
    assert!(!sandbox.hooks_path("cursor").exists());
}
