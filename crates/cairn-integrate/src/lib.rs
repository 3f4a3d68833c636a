//! # cairn-integrate
//!
//! Registers Cairn's MCP server (`<cairn binary> mcp`) in coding agents' user-scope config
//! files, and Cairn's hooks (`<cairn binary> hook <framework> <event>`: the note titles at
//! session start, the turn note before each prompt) in their hook files, and takes both out
//! again, without disturbing anything else in those files.
//!
//! | id | file | key |
//! | --- | --- | --- |
//! | `claude-code` | `~/.claude.json` (JSON) | `mcpServers.cairn` |
//! | `codex` | `${CODEX_HOME:-~/.codex}/config.toml` (TOML) | `[mcp_servers.cairn]` |
//! | `gemini-cli` | `${GEMINI_CLI_HOME:-~}/.gemini/settings.json` (JSONC) | `mcpServers.cairn` |
//! | `opencode` | `${XDG_CONFIG_HOME:-~/.config}/opencode/opencode.json[c]` (JSONC) | `mcp.cairn` |
//! | `cursor` | `~/.cursor/mcp.json` (JSON) | `mcpServers.cairn` |
//! | `qwen-code` | `${QWEN_HOME:-~/.qwen}/settings.json` (JSONC) | `mcpServers.cairn` |
//! | `crush` | `${XDG_CONFIG_HOME:-~/.config}/crush/crush.json` (JSON) | `mcp.cairn` |
//! | `copilot-cli` | `${COPILOT_HOME:-~/.copilot}/mcp-config.json` (JSON) | `mcpServers.cairn` |
//! | `goose` | `${XDG_CONFIG_HOME:-~/.config}/goose/config.yaml` (YAML) | `extensions.cairn` |
//!
//! Hooks (installed with the MCP entry, removed with it; [`Integrations::with_hooks`] leaves
//! them out of an install):
//!
//! | id | hook file | Cairn's entries |
//! | --- | --- | --- |
//! | `claude-code` | `${CLAUDE_CONFIG_DIR:-~/.claude}/settings.json` | `hooks.SessionStart`, `hooks.UserPromptSubmit` (timeout 2 s) |
//! | `codex` | `${CODEX_HOME:-~/.codex}/hooks.json` | `hooks.SessionStart`, `hooks.UserPromptSubmit` (2 s); the user must trust them once in `codex` (`/hooks` → Trust) |
//! | `gemini-cli` | `${GEMINI_CLI_HOME:-~}/.gemini/settings.json` | `hooks.SessionStart`, `hooks.BeforeAgent` (2000 ms) |
//! | `qwen-code` | `${QWEN_HOME:-~/.qwen}/settings.json` | `hooks.SessionStart`, `hooks.UserPromptSubmit` (2000 ms) |
//! | `cursor` | `~/.cursor/hooks.json` (`"version": 1`) | `hooks.sessionStart`, `hooks.beforeSubmitPrompt` |
//! | `opencode` | `${XDG_CONFIG_HOME:-~/.config}/opencode/plugins/cairn.js` | the whole file, Cairn's plugin (first line marks it) |
//! | `crush`, `copilot-cli`, `goose` | none | Copilot CLI ignores its hooks' output; the others have no hook that adds context |
//!
//! Cairn's entry in a hook list is a group `{"hooks": [{"type": "command", "command": …}]}`
//! (Cursor: the handler itself); it is recognised by ` hook <framework> ` in its command, so
//! the user's own hooks in the same lists are never touched.
//!
//! How edits are made safe:
//!
//! - Files are edited as text. Cairn's entry is inserted as one span in the file's own
//!   indentation and newline style; removal takes out exactly that span, so install → remove
//!   gives back the original bytes, and settings the user changed in between survive.
//! - Before writing, the new text is parsed again: Cairn's entry must hold the right values
//!   and every other setting must be unchanged. Otherwise nothing is written.
//! - Every file is copied to `<backup dir>/<framework>/<UTC timestamp>-<file name>` before it
//!   is changed; writes go through a temporary file and a rename and keep the permissions.
//!   Backups are readable by the owner only (files 0600, folders 0700: agents' config files
//!   may hold other servers' API keys), only the newest [`BACKUPS_KEPT`] of each file are
//!   kept, and [`IntegrationStatus::backups`] lists them.
//! - Installing twice writes nothing the second time. A file or servers key Cairn created is
//!   removed again when Cairn's entry was all it held (recorded in `<backup dir>/ledger.json`);
//!   so are a `hooks` key and an event's list, and the OpenCode plugin file.
//! - A hook file Cairn cannot edit stops the install before either file is written.
//! - Malformed files, unsupported shapes, symlinks to nowhere and files over
//!   [`MAX_CONFIG_BYTES`] are refused with an [`Error`] naming the file; the file is untouched.
//!
//! ```
//! use cairn_integrate::{Action, Env, Integrations};
//! let home = tempfile::tempdir().unwrap();
//! let env = Env::for_home(home.path());
//! let cairn = Integrations::new(env, "/usr/bin/cairn", home.path().join("backups"));
//! let change = cairn.install("cursor").unwrap();
//! assert_eq!(change.action, Action::Installed);
//! assert_eq!(cairn.install("cursor").unwrap().action, Action::AlreadyInstalled);
//! assert_eq!(cairn.remove("cursor").unwrap().action, Action::Removed);
//! assert!(!home.path().join(".cursor/mcp.json").exists());
//! ```
#![deny(missing_docs)]

mod env;
mod error;
mod files;
mod framework;
mod hooks;
mod ids;
mod jsonc;
mod ledger;
mod text;
mod tomldoc;
mod yamldoc;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

pub use env::Env;
pub use error::{Error, Result};
pub use files::{BACKUPS_KEPT, Backup, MAX_CONFIG_BYTES};

use framework::{ENTRY_NAME, Fields, Format, Framework, V};
use ledger::{Ledger, Prior, Record};

/// What [`Integrations::install`] or [`Integrations::remove`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Cairn's entry was added.
    Installed,
    /// Cairn's entry was there with other values (another binary path); it was corrected.
    Updated,
    /// Cairn's entry was already there and right; nothing was written.
    AlreadyInstalled,
    /// Cairn's entry was taken out.
    Removed,
    /// There was no Cairn entry to take out; nothing was written.
    NotInstalled,
}

impl Action {
    /// The action as a snake_case word (`installed`, `already_installed`, …), as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Installed => "installed",
            Action::Updated => "updated",
            Action::AlreadyInstalled => "already_installed",
            Action::Removed => "removed",
            Action::NotInstalled => "not_installed",
        }
    }
}

/// What an install or a removal did to a framework's hooks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HooksChange {
    /// The hook file (or OpenCode plugin file) read and written.
    pub path: PathBuf,
    /// What was done.
    pub action: Action,
    /// The copy of the file made before it was changed (the MCP step's copy when both live
    /// in the same file).
    pub backup: Option<PathBuf>,
}

/// The outcome of an install or a removal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The framework id.
    pub framework: &'static str,
    /// The file read (and written): the config file, or the file its symlink points to.
    pub path: PathBuf,
    /// What was done.
    pub action: Action,
    /// The copy of the file made before it was changed.
    pub backup: Option<PathBuf>,
    /// The configured path, when it is a symlink that was followed to [`Change::path`].
    pub via_symlink: Option<PathBuf>,
    /// Anything else worth telling the user (a deleted file, a followed symlink, …).
    pub notes: Vec<String>,
    /// What was done to Cairn's hooks; `None` when the framework takes none (see
    /// [`Change::notes`] for why) or hooks were left out ([`Integrations::with_hooks`]).
    pub hooks: Option<HooksChange>,
    /// What the user must still do by hand for the install to work (Codex: trust the hooks).
    pub manual: Vec<String>,
}

/// Whether Cairn's hooks are in a framework's hook file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HooksState {
    /// Every hook Cairn installs is there.
    Installed,
    /// Some are there, not all (one event's entry was deleted by hand, …).
    Partial,
    /// None is there.
    NotInstalled,
}

impl HooksState {
    /// The state as a snake_case word (`installed`, `partial`, `not_installed`).
    pub fn as_str(self) -> &'static str {
        match self {
            HooksState::Installed => "installed",
            HooksState::Partial => "partial",
            HooksState::NotInstalled => "not_installed",
        }
    }
}

/// A framework's hooks, as [`Integrations::list`] reports them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HooksStatus {
    /// The hook file (or OpenCode plugin file).
    pub path: PathBuf,
    /// Which of Cairn's hooks are there.
    pub state: HooksState,
    /// Whether every hook is there and runs the current binary.
    pub current: bool,
    /// Why the file could not be read or understood, if it could not.
    pub problem: Option<String>,
}

/// One framework's registration state, as [`Integrations::list`] reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IntegrationStatus {
    /// The framework id.
    pub framework: &'static str,
    /// The config file that holds MCP servers.
    pub path: PathBuf,
    /// Whether that file exists.
    pub exists: bool,
    /// Whether the agent seems to be installed (its config directory exists).
    pub detected: bool,
    /// Whether Cairn's entry is in the file.
    pub installed: bool,
    /// Whether Cairn's entry runs the current binary with the right arguments.
    pub current: bool,
    /// Why the file could not be read or understood, if it could not.
    pub problem: Option<String>,
    /// The backups Cairn made of the file before changing it, newest first (the hook file's
    /// backups too).
    pub backups: Vec<Backup>,
    /// Cairn's hooks with this framework, or why it takes none.
    pub hooks: Result<HooksStatus, &'static str>,
    /// What the user must do by hand once Cairn is installed (Codex: trust the hooks).
    pub manual: Vec<String>,
}

/// Registers Cairn's MCP server in agents' config files.
#[derive(Debug, Clone)]
pub struct Integrations {
    env: Env,
    command: String,
    backup_dir: PathBuf,
    with_hooks: bool,
}

/// Whether Cairn's entry is in a parsed config, and right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Absent,
    Matches,
    Differs,
}

impl Integrations {
    /// `command` is the absolute path of the `cairn` binary (registered as `command mcp`);
    /// `backup_dir` is Cairn's own directory for backups and its install ledger.
    pub fn new(env: Env, command: impl Into<String>, backup_dir: impl Into<PathBuf>) -> Self {
        Self {
            env,
            command: command.into(),
            backup_dir: backup_dir.into(),
            with_hooks: true,
        }
    }

    /// Whether [`Integrations::install`] also installs Cairn's hooks (the default). Removal
    /// always takes out both.
    #[must_use]
    pub fn with_hooks(mut self, hooks: bool) -> Self {
        self.with_hooks = hooks;
        self
    }

    /// The hook file (or OpenCode plugin file) Cairn edits for `framework`; `None` when it
    /// takes no hooks.
    pub fn hooks_path(&self, framework: &str) -> Result<Option<PathBuf>> {
        Ok(match &lookup(framework)?.hooks {
            framework::HookSupport::Json(spec) => Some(spec.path(&self.env)),
            framework::HookSupport::Plugin(path) => Some(path(&self.env)),
            framework::HookSupport::None(_) => None,
        })
    }

    /// The supported framework ids.
    pub fn frameworks() -> &'static [&'static str] {
        &framework::IDS
    }

    /// The config file Cairn edits for `framework`.
    pub fn config_path(&self, framework: &str) -> Result<PathBuf> {
        Ok(lookup(framework)?.config_path(&self.env))
    }

    /// The backups made of `framework`'s config file, newest first.
    pub fn backups(&self, framework: &str) -> Result<Vec<Backup>> {
        files::list_backups(&self.backup_dir.join(lookup(framework)?.id))
    }

    /// Every framework's state, in [`Integrations::frameworks`] order.
    pub fn list(&self) -> Vec<IntegrationStatus> {
        framework::FRAMEWORKS
            .iter()
            .map(|framework| self.status_of(framework))
            .collect()
    }

    /// One framework's state.
    pub fn status(&self, framework: &str) -> Result<IntegrationStatus> {
        Ok(self.status_of(lookup(framework)?))
    }

    fn status_of(&self, framework: &'static Framework) -> IntegrationStatus {
        let path = framework.config_path(&self.env);
        let mut status = IntegrationStatus {
            framework: framework.id,
            path: path.clone(),
            exists: false,
            detected: framework.detect_dir(&self.env).is_dir(),
            installed: false,
            current: false,
            problem: None,
            backups: Vec::new(),
            hooks: self.hooks_status(framework),
            manual: manual(framework),
        };
        match self.backups(framework.id) {
            Ok(backups) => status.backups = backups,
            Err(error) => status.problem = Some(error.to_string()),
        }
        let state = files::load(&path).and_then(|loaded| {
            status.exists = loaded.bytes.is_some();
            match loaded.text()? {
                None => Ok(State::Absent),
                Some(text) if text.trim().is_empty() => Ok(State::Absent),
                Some(text) => {
                    let doc = parse(framework, text, &loaded.target)?;
                    state(framework, &doc, &self.expected(framework), &loaded.target)
                }
            }
        });
        match state {
            Ok(state) => {
                status.installed = state != State::Absent;
                status.current = state == State::Matches;
            }
            Err(error) => status.problem = Some(error.to_string()),
        }
        status
    }

    fn fields(&self, framework: &Framework) -> Fields {
        framework.entry(&self.command)
    }

    fn expected(&self, framework: &Framework) -> Value {
        V::Map(self.fields(framework)).to_json()
    }

    /// Register Cairn's server with `framework`: add the entry, correct it if it runs another
    /// binary, or do nothing (and write nothing) if it is already right.
    ///
    /// Cairn's hooks go in with it (unless [`Integrations::with_hooks`] said not to): their
    /// file is checked first, so a hook file Cairn cannot edit stops the install before
    /// anything is written.
    pub fn install(&self, framework: &str) -> Result<Change> {
        let framework = lookup(framework)?;
        if self.with_hooks {
            self.install_hooks(framework, true, None)?;
        }
        let mut change = self.install_mcp(framework)?;
        change.manual = manual(framework);
        if !self.with_hooks {
            return Ok(change);
        }
        // When the hooks live in the file the MCP step just wrote, its backup (or its creation
        // of the file) stands for both.
        let wrote = matches!(change.action, Action::Installed | Action::Updated);
        let backed_up = wrote.then_some((change.path.as_path(), change.backup.as_deref()));
        if let Some(done) = self.install_hooks(framework, false, backed_up)? {
            change.notes.extend(done.notes);
            change.hooks = Some(HooksChange {
                path: done.path,
                action: done.action,
                backup: done.backup,
            });
        } else if let framework::HookSupport::None(why) = framework.hooks {
            change.notes.push(format!("{why}."));
        }
        Ok(change)
    }

    fn install_mcp(&self, framework: &'static Framework) -> Result<Change> {
        let loaded = files::load(&framework.config_path(&self.env))?;
        let path = loaded.target.clone();
        let original = loaded.text()?;
        let prior = match original {
            None => Prior::Absent,
            Some(text) if text.trim().is_empty() => Prior::Blank(text.to_owned()),
            Some(_) => Prior::Content,
        };
        let base = match (original, framework.format) {
            (Some(text), Format::Toml | Format::Yaml) => text,
            (Some(text), Format::Json | Format::Jsonc) if !text.trim().is_empty() => text,
            (None | Some(_), Format::Json | Format::Jsonc) => "{}\n",
            (None, Format::Toml | Format::Yaml) => "",
        };
        let mut change = Change {
            framework: framework.id,
            path: path.clone(),
            action: Action::AlreadyInstalled,
            backup: None,
            via_symlink: loaded.via_symlink.clone(),
            notes: symlink_note(&loaded),
            hooks: None,
            manual: Vec::new(),
        };
        let doc = parse(framework, base, &path)?;
        let expected = self.expected(framework);
        let before = state(framework, &doc, &expected, &path)?;
        if before == State::Matches {
            return Ok(change);
        }
        let fields = self.fields(framework);
        let container = framework.container;
        let edited = match framework.format {
            Format::Json | Format::Jsonc => jsonc::install(
                base,
                framework.format == Format::Jsonc,
                container,
                ENTRY_NAME,
                &fields,
            ),
            Format::Toml => tomldoc::install(base, container, ENTRY_NAME, &fields),
            Format::Yaml => yamldoc::install(base, container, ENTRY_NAME, &fields),
        }
        .map_err(|problem| Error::Malformed {
            path: path.clone(),
            problem,
        })?;

        // Check the edit before anything touches the disk.
        let verify = |problem: String| Error::Verify {
            path: path.clone(),
            problem,
        };
        let after = parse(framework, &edited, &path).map_err(|error| verify(error.to_string()))?;
        if state(framework, &after, &expected, &path).ok() != Some(State::Matches) {
            return Err(verify("Cairn's entry is not there as expected".to_owned()));
        }
        let had_container = doc.get(container).is_some();
        if without_entry(&doc, container, false) != without_entry(&after, container, !had_container)
        {
            return Err(verify("other settings would have changed".to_owned()));
        }

        files::ensure_unchanged(&loaded)?;
        change.backup = files::backup(&self.backup_dir.join(framework.id), &loaded)?;
        let created_dirs = match (&loaded.bytes, path.parent()) {
            (None, Some(parent)) if !parent.as_os_str().is_empty() => files::create_dirs(parent)?,
            _ => Vec::new(),
        };
        files::write_atomic(&path, &edited, loaded.permissions.clone())?;

        if before == State::Differs {
            change.action = Action::Updated;
            return Ok(change);
        }
        change.action = Action::Installed;
        let mut ledger = Ledger::load(&self.backup_dir);
        ledger.set(
            framework.id,
            Record {
                path: path.clone(),
                prior,
                created_container: !had_container,
                created_dirs,
                created_keys: Vec::new(),
            },
        );
        if let Err(error) = ledger.save(&self.backup_dir) {
            change.notes.push(format!(
                "could not record the install ({error}); removing it later will leave an empty \
                 `{container}` behind"
            ));
        }
        Ok(change)
    }

    /// Take Cairn's server out of `framework`'s config. Removing what an install added gives
    /// back the original bytes; a file Cairn created and that holds nothing else is deleted.
    ///
    /// Cairn's hooks are taken out first (the reverse of the install order, so a file holding
    /// both gets its original bytes back); both files are checked before either is written.
    pub fn remove(&self, framework: &str) -> Result<Change> {
        let framework = lookup(framework)?;
        self.remove_hooks(framework, true)?;
        let hooks = self.remove_hooks(framework, false)?;
        let mut change = self.remove_mcp(framework)?;
        if let Some(done) = hooks {
            change.notes.extend(done.notes);
            change.hooks = Some(HooksChange {
                path: done.path,
                action: done.action,
                backup: done.backup,
            });
        }
        Ok(change)
    }

    fn remove_mcp(&self, framework: &'static Framework) -> Result<Change> {
        let loaded = files::load(&framework.config_path(&self.env))?;
        let path = loaded.target.clone();
        let mut change = Change {
            framework: framework.id,
            path: path.clone(),
            action: Action::NotInstalled,
            backup: None,
            via_symlink: loaded.via_symlink.clone(),
            notes: symlink_note(&loaded),
            hooks: None,
            manual: Vec::new(),
        };
        let text = match loaded.text()? {
            Some(text) if !text.trim().is_empty() => text,
            _ => return Ok(change),
        };
        let doc = parse(framework, text, &path)?;
        let expected = self.expected(framework);
        if state(framework, &doc, &expected, &path)? == State::Absent {
            return Ok(change);
        }
        let mut ledger = Ledger::load(&self.backup_dir);
        let record = ledger.get(framework.id, &path).cloned();
        let drop_container = record.as_ref().is_some_and(|r| r.created_container);
        let container = framework.container;
        let verify = |problem: String| Error::Verify {
            path: path.clone(),
            problem,
        };

        // Remove until no entry is left (a hand-edited file may hold the key twice).
        let mut edited = text.to_owned();
        let mut after = doc.clone();
        for _ in 0..8 {
            edited = match framework.format {
                Format::Json | Format::Jsonc => {
                    jsonc::remove(&edited, container, ENTRY_NAME, drop_container)
                }
                Format::Toml => tomldoc::remove(&edited, container, ENTRY_NAME),
                Format::Yaml => yamldoc::remove(&edited, container, ENTRY_NAME, drop_container),
            }
            .map_err(|problem| Error::Malformed {
                path: path.clone(),
                problem,
            })?;
            after = parse(framework, &edited, &path).map_err(|error| verify(error.to_string()))?;
            if state(framework, &after, &expected, &path).ok() == Some(State::Absent) {
                break;
            }
        }
        if state(framework, &after, &expected, &path).ok() != Some(State::Absent) {
            return Err(verify("Cairn's entry is still there".to_owned()));
        }
        let dropped = after.get(container).is_none();
        if without_entry(&doc, container, dropped) != after {
            return Err(verify("other settings would have changed".to_owned()));
        }

        files::ensure_unchanged(&loaded)?;
        change.backup = files::backup(&self.backup_dir.join(framework.id), &loaded)?;
        let empty = after.as_object().is_some_and(serde_json::Map::is_empty);
        match record.as_ref().map(|record| &record.prior) {
            Some(Prior::Absent) if empty => {
                let dirs = record.as_ref().map_or(&[][..], |r| &r.created_dirs[..]);
                files::delete(&path, dirs)?;
                change.notes.push(format!(
                    "deleted {}: Cairn had created it and it held nothing else",
                    path.display()
                ));
            }
            Some(Prior::Blank(original)) if empty => {
                files::write_atomic(&path, original, loaded.permissions.clone())?;
            }
            _ => files::write_atomic(&path, &edited, loaded.permissions.clone())?,
        }
        change.action = Action::Removed;
        if ledger.forget(framework.id)
            && let Err(error) = ledger.save(&self.backup_dir)
        {
            change
                .notes
                .push(format!("could not update Cairn's install record ({error})"));
        }
        Ok(change)
    }
}

/// What the user must still do by hand for `framework`'s hooks to run.
fn manual(framework: &Framework) -> Vec<String> {
    match &framework.hooks {
        framework::HookSupport::Json(spec) => spec.manual.iter().map(|m| (*m).to_owned()).collect(),
        _ => Vec::new(),
    }
}

fn lookup(framework: &str) -> Result<&'static Framework> {
    framework::find(framework).ok_or_else(|| Error::UnknownFramework(framework.to_owned()))
}

fn symlink_note(loaded: &files::Loaded) -> Vec<String> {
    loaded
        .via_symlink
        .iter()
        .map(|link| {
            format!(
                "{} is a symlink; edited the file it points to, {}",
                link.display(),
                loaded.target.display()
            )
        })
        .collect()
}

fn kind_of_mapping(format: Format) -> &'static str {
    match format {
        Format::Json | Format::Jsonc => "an object",
        Format::Toml => "a table",
        Format::Yaml => "a mapping",
    }
}

/// Parse a config file's text into a value, checking the top level is a mapping.
fn parse(framework: &Framework, text: &str, path: &Path) -> Result<Value> {
    let parsed = match framework.format {
        Format::Json => jsonc::to_value(text, false),
        Format::Jsonc => jsonc::to_value(text, true),
        Format::Toml => tomldoc::to_value(text),
        Format::Yaml => yamldoc::to_value(text),
    };
    let malformed = |problem: String| Error::Malformed {
        path: path.to_owned(),
        problem,
    };
    let mut doc = parsed.map_err(malformed)?;
    let Some(top) = doc.as_object_mut() else {
        return Err(malformed(format!(
            "the top level is not {} ({} config)",
            kind_of_mapping(framework.format),
            framework.format.label()
        )));
    };
    // `extensions:` with nothing under it is an empty mapping as far as Cairn is concerned.
    if framework.format == Format::Yaml
        && let Some(container @ Value::Null) = top.get_mut(framework.container)
    {
        *container = Value::Object(serde_json::Map::new());
    }
    Ok(doc)
}

/// Whether Cairn's entry is in `doc` and holds the expected fields.
fn state(framework: &Framework, doc: &Value, expected: &Value, path: &Path) -> Result<State> {
    let container = framework.container;
    let servers = match doc.get(container) {
        None => return Ok(State::Absent),
        Some(Value::Object(servers)) => servers,
        Some(_) => {
            return Err(Error::Malformed {
                path: path.to_owned(),
                problem: format!("`{container}` is not {}", kind_of_mapping(framework.format)),
            });
        }
    };
    let Some(entry) = servers.get(ENTRY_NAME) else {
        return Ok(State::Absent);
    };
    let matches = match (entry, expected) {
        (Value::Object(entry), Value::Object(expected)) => expected
            .iter()
            .all(|(key, value)| entry.get(key) == Some(value)),
        _ => false,
    };
    Ok(if matches {
        State::Matches
    } else {
        State::Differs
    })
}

/// `doc` without Cairn's entry; with `drop_empty_container`, also without a servers key that
/// is then empty.
fn without_entry(doc: &Value, container: &str, drop_empty_container: bool) -> Value {
    let mut doc = doc.clone();
    if let Some(top) = doc.as_object_mut() {
        let now_empty = match top.get_mut(container) {
            Some(Value::Object(servers)) => {
                servers.remove(ENTRY_NAME);
                servers.is_empty()
            }
            _ => false,
        };
        if drop_empty_container && now_empty {
            top.remove(container);
        }
    }
    doc
}
