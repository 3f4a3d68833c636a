//! Cairn's hooks: the entries that run `<cairn> hook <framework> <event>` in an agent's hook
//! file (a JSON `hooks.<event>` list), or the plugin file Cairn writes for OpenCode. They are
//! installed and removed with the MCP registration, under the same guarantees: a text edit
//! that adds one span per event and removal that takes exactly that span out, the edit
//! checked before it is written, a backup first, nothing written when nothing changes, and
//! what Cairn created (the file, `hooks`, an event's list) recorded so removal takes it away.
//!
//! A handler is Cairn's when its `command` holds ` hook <framework> ` (the binary's path may
//! change); everything else in the file, the user's own hooks included, is never touched.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::files;
use crate::framework::{Format, Framework, HookShape, HookSupport, JsonHooks, V};
use crate::jsonc;
use crate::ledger::{Ledger, Prior, Record};
use crate::{Action, HooksState, HooksStatus, Integrations};

/// The first line of the OpenCode plugin Cairn writes: a file that does not start with it is
/// not Cairn's, and Cairn neither overwrites nor deletes it.
pub(crate) const PLUGIN_HEADER: &str =
    "// Cairn's OpenCode plugin, written by `cairn integrate opencode`.";

/// What a hook install or removal did to one file.
pub(crate) struct Done {
    pub(crate) path: PathBuf,
    pub(crate) action: Action,
    pub(crate) backup: Option<PathBuf>,
    pub(crate) notes: Vec<String>,
}

/// The ledger key of a framework's hooks (its MCP entry is recorded under the bare id).
fn ledger_key(framework: &str) -> String {
    format!("{framework}:hooks")
}

/// `<cairn> hook <framework> <event>`, the binary quoted for the shell that runs it when its
/// path holds anything but plain path characters.
pub(crate) fn command(binary: &str, framework: &str, event: &str) -> String {
    format!("{} hook {framework} {event}", quote(binary))
}

fn quote(binary: &str) -> String {
    let plain = !binary.is_empty()
        && binary
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c) || c == '\\');
    if plain {
        binary.to_owned()
    } else if cfg!(windows) {
        format!("\"{binary}\"")
    } else {
        format!("'{}'", binary.replace('\'', r"'\''"))
    }
}

/// Whether a handler's command is one of Cairn's for `framework`.
fn is_cairns(handler: &Value, framework: &str) -> bool {
    let marker = format!(" hook {framework} ");
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|command| command.contains(&marker))
}

fn field(key: &str, value: V) -> (String, V) {
    (key.to_owned(), value)
}

/// Cairn's handler for `event`, in the order its fields are written.
fn handler(spec: &JsonHooks, binary: &str, framework: &str, event: &str) -> V {
    let mut fields = Vec::new();
    if spec.shape == HookShape::Groups {
        fields.push(field("type", V::Str("command".to_owned())));
    }
    fields.push(field("command", V::Str(command(binary, framework, event))));
    if let Some(timeout) = spec.timeout {
        fields.push(field("timeout", V::Int(timeout)));
    }
    V::Map(fields)
}

/// What Cairn adds to `hooks.<event>`: a group holding its handler, or the handler.
fn item(spec: &JsonHooks, binary: &str, framework: &str, event: &str) -> V {
    let handler = handler(spec, binary, framework, event);
    match spec.shape {
        HookShape::Groups => V::Map(vec![field("hooks", V::List(vec![handler]))]),
        HookShape::Flat => handler,
    }
}

/// Parse a hook file, checking the shapes Cairn edits: an object at the top, `hooks` an
/// object, each of Cairn's events a list.
fn parse(spec: &JsonHooks, text: &str, path: &Path) -> Result<Value> {
    let malformed = |problem: String| Error::Malformed {
        path: path.to_owned(),
        problem,
    };
    let doc = jsonc::to_value(text, spec.format == Format::Jsonc).map_err(malformed)?;
    if !doc.is_object() {
        return Err(malformed(format!(
            "the top level is not an object ({} hook file)",
            spec.format.label()
        )));
    }
    match doc.get("hooks") {
        None => {}
        Some(Value::Object(hooks)) => {
            for event in spec.events {
                if hooks.get(event).is_some_and(|list| !list.is_array()) {
                    return Err(malformed(format!("`hooks.{event}` is not a list")));
                }
            }
        }
        Some(_) => return Err(malformed("`hooks` is not an object".to_owned())),
    }
    Ok(doc)
}

/// Cairn's handlers under `hooks.<event>`.
fn handlers<'a>(doc: &'a Value, spec: &JsonHooks, framework: &str, event: &str) -> Vec<&'a Value> {
    let Some(list) = doc
        .get("hooks")
        .and_then(|hooks| hooks.get(event))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let candidates: Vec<&Value> = match spec.shape {
        HookShape::Flat => list.iter().collect(),
        HookShape::Groups => list
            .iter()
            .filter_map(|group| group.get("hooks").and_then(Value::as_array))
            .flatten()
            .collect(),
    };
    candidates
        .into_iter()
        .filter(|handler| is_cairns(handler, framework))
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventState {
    Absent,
    Matches,
    Differs,
}

fn event_state(
    doc: &Value,
    spec: &JsonHooks,
    binary: &str,
    framework: &str,
    event: &str,
) -> EventState {
    let expected = handler(spec, binary, framework, event).to_json();
    let found = handlers(doc, spec, framework, event);
    let matches = |handler: &&Value| match (handler, &expected) {
        (Value::Object(handler), Value::Object(expected)) => expected
            .iter()
            .all(|(key, value)| handler.get(key) == Some(value)),
        _ => false,
    };
    if found.is_empty() {
        EventState::Absent
    } else if found.iter().any(matches) {
        EventState::Matches
    } else {
        EventState::Differs
    }
}

/// `doc` without Cairn's handlers, and without the groups, event lists and `hooks` left
/// empty: what must be the same before and after any edit of Cairn's.
fn without_cairn(doc: &Value, spec: &JsonHooks, framework: &str) -> Value {
    let mut doc = doc.clone();
    let Some(top) = doc.as_object_mut() else {
        return doc;
    };
    let Some(Value::Object(hooks)) = top.get_mut("hooks") else {
        return doc;
    };
    for event in spec.events {
        let Some(Value::Array(list)) = hooks.get_mut(event) else {
            continue;
        };
        match spec.shape {
            HookShape::Flat => list.retain(|handler| !is_cairns(handler, framework)),
            HookShape::Groups => {
                for group in list.iter_mut() {
                    if let Some(Value::Array(inner)) = group.get_mut("hooks") {
                        inner.retain(|handler| !is_cairns(handler, framework));
                    }
                }
                list.retain(|group| {
                    group
                        .get("hooks")
                        .and_then(Value::as_array)
                        .is_none_or(|inner| !inner.is_empty())
                });
            }
        }
        if list.is_empty() {
            hooks.remove(event);
        }
    }
    if hooks.is_empty() {
        top.remove("hooks");
    }
    doc
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

/// The OpenCode plugin: per user message it asks `<cairn> hook opencode chat.message` (and,
/// on a session's first message, `session.created`), with a timeout, and adds what Cairn
/// prints to that user message as synthetic text parts: recalled text joins the user's turn
/// as context, never the agent's system prompt. Anything going wrong adds nothing.
///
/// Checked against OpenCode's plugin API (anomalyco/opencode `packages/plugin/src/index.ts`
/// at 0d4d22f4: `"chat.message"(input {sessionID, messageID?}, output {message, parts})`)
/// and `packages/opencode/src/session/prompt.ts` at 00078e84 (`createUserMessage` runs the
/// hook after the parts get their ids and before they are saved, so a part added there is
/// saved with the message and must carry its own id; synthetic text parts reach the model
/// as part of the user's message and stay out of the message shown).
pub(crate) fn plugin_text(binary: &str) -> String {
    let binary = serde_json::to_string(binary).unwrap_or_else(|_| "\"cairn\"".to_owned());
    format!(
        r#"{PLUGIN_HEADER}
// `cairn integrate opencode --remove` deletes it; edits here are overwritten.
// Per user message it runs `cairn hook opencode chat.message` (on a session's first message
// also `cairn hook opencode session.created`) with the message as JSON on standard input,
// and adds what Cairn prints to that user message as a synthetic text part: context for
// this turn, never part of the system prompt. Cairn not running, slow or failing: nothing
// is added and the message goes on untouched.
// OpenCode's `chat.message` hook (checked at anomalyco/opencode 0d4d22f4 / 00078e84) runs
// before the message's parts are saved; a part added here is saved with them and needs its
// own id, made from the last part's so it sorts right after the user's words.
import {{ spawn }} from "node:child_process";

const CAIRN = {binary};
const TIMEOUT_MS = 2000;

function ask(event, input) {{
  return new Promise((resolve) => {{
    let out = "";
    let done = false;
    let timer;
    const finish = (text) => {{
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(text.trim());
    }};
    let child;
    try {{
      child = spawn(CAIRN, ["hook", "opencode", event], {{ stdio: ["pipe", "pipe", "ignore"] }});
    }} catch {{
      return finish("");
    }}
    timer = setTimeout(() => {{
      try {{ child.kill(); }} catch {{}}
      finish("");
    }}, TIMEOUT_MS);
    child.on("error", () => finish(""));
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {{ out += chunk; }});
    child.on("close", (code) => finish(code === 0 ? out : ""));
    child.stdin.on("error", () => {{}});
    child.stdin.end(JSON.stringify(input));
  }});
}}

export const CairnPlugin = async ({{ directory }}) => {{
  const started = new Set(); // sessions whose note titles were added
  return {{
    "chat.message": async (input, output) => {{
      const session = input?.sessionID;
      const parts = output?.parts;
      if (!session || !Array.isArray(parts) || parts.length === 0) return;
      const prompt = parts
        .filter((p) => p && p.type === "text" && !p.synthetic && typeof p.text === "string")
        .map((p) => p.text)
        .join("\n");
      const messageID = output?.message?.id ?? input.messageID ?? parts[0]?.messageID;
      const base = {{ session_id: session, cwd: directory, turn_id: messageID ?? null }};
      const first = !started.has(session);
      started.add(session);
      const [start, note] = await Promise.all([
        first ? ask("session.created", base) : "",
        prompt ? ask("chat.message", {{ ...base, prompt }}) : "",
      ]);
      const last = parts[parts.length - 1];
      let n = 0;
      for (const text of [start, note]) {{
        if (!text || !last?.id) continue;
        n += 1;
        parts.push({{
          id: `${{last.id}}cairn${{n}}`,
          sessionID: session,
          messageID: messageID ?? last.messageID,
          type: "text",
          text,
          synthetic: true,
        }});
      }}
    }},
    event: async ({{ event }}) => {{
      if (event?.type !== "session.deleted") return;
      started.delete(event.properties?.info?.id);
    }},
  }};
}};
"#
    )
}

impl Integrations {
    /// The state of `framework`'s hooks; `None` when it takes none (with why).
    pub(crate) fn hooks_status(
        &self,
        framework: &Framework,
    ) -> std::result::Result<HooksStatus, &'static str> {
        match &framework.hooks {
            HookSupport::None(why) => Err(why),
            HookSupport::Json(spec) => Ok(self.json_status(framework, spec)),
            HookSupport::Plugin(path) => Ok(self.plugin_status(&path(&self.env))),
        }
    }

    fn json_status(&self, framework: &Framework, spec: &JsonHooks) -> HooksStatus {
        let path = spec.path(&self.env);
        let mut status = HooksStatus {
            path: path.clone(),
            state: HooksState::NotInstalled,
            current: false,
            problem: None,
        };
        let states = files::load(&path).and_then(|loaded| match loaded.text()? {
            Some(text) if !text.trim().is_empty() => {
                let doc = parse(spec, text, &loaded.target)?;
                Ok(spec
                    .events
                    .map(|event| event_state(&doc, spec, &self.command, framework.id, event)))
            }
            _ => Ok([EventState::Absent; 2]),
        });
        match states {
            Ok(states) => {
                let present = states.iter().filter(|s| **s != EventState::Absent).count();
                status.state = match present {
                    0 => HooksState::NotInstalled,
                    n if n == states.len() => HooksState::Installed,
                    _ => HooksState::Partial,
                };
                status.current = states.iter().all(|s| *s == EventState::Matches);
            }
            Err(error) => status.problem = Some(error.to_string()),
        }
        status
    }

    fn plugin_status(&self, path: &Path) -> HooksStatus {
        let mut status = HooksStatus {
            path: path.to_owned(),
            state: HooksState::NotInstalled,
            current: false,
            problem: None,
        };
        match files::load(path).and_then(|loaded| Ok(loaded.text()?.map(str::to_owned))) {
            Ok(None) => {}
            Ok(Some(text)) if text.starts_with(PLUGIN_HEADER) => {
                status.state = HooksState::Installed;
                status.current = text == plugin_text(&self.command);
            }
            Ok(Some(_)) => {
                status.problem = Some(format!(
                    "{} is not Cairn's plugin; Cairn leaves it alone",
                    path.display()
                ));
            }
            Err(error) => status.problem = Some(error.to_string()),
        }
        status
    }

    /// Install `framework`'s hooks. With `dry_run`, everything is checked and nothing is
    /// written. `backed_up` is a file this operation already wrote and its backup (none: it
    /// created the file): when the hooks live in that same file, no second copy is made.
    pub(crate) fn install_hooks(
        &self,
        framework: &Framework,
        dry_run: bool,
        backed_up: Option<(&Path, Option<&Path>)>,
    ) -> Result<Option<Done>> {
        match &framework.hooks {
            HookSupport::None(_) => Ok(None),
            HookSupport::Json(spec) => self
                .install_json(framework, spec, dry_run, backed_up)
                .map(Some),
            HookSupport::Plugin(path) => self
                .install_plugin(framework, &path(&self.env), dry_run)
                .map(Some),
        }
    }

    /// Remove `framework`'s hooks (see [`Integrations::install_hooks`] for `dry_run`).
    pub(crate) fn remove_hooks(
        &self,
        framework: &Framework,
        dry_run: bool,
    ) -> Result<Option<Done>> {
        match &framework.hooks {
            HookSupport::None(_) => Ok(None),
            HookSupport::Json(spec) => self.remove_json(framework, spec, dry_run).map(Some),
            HookSupport::Plugin(path) => self
                .remove_plugin(framework, &path(&self.env), dry_run)
                .map(Some),
        }
    }

    fn install_json(
        &self,
        framework: &Framework,
        spec: &JsonHooks,
        dry_run: bool,
        backed_up: Option<(&Path, Option<&Path>)>,
    ) -> Result<Done> {
        let loaded = files::load(&spec.path(&self.env))?;
        let path = loaded.target.clone();
        let original = loaded.text()?;
        let prior = match original {
            None => Prior::Absent,
            Some(text) if text.trim().is_empty() => Prior::Blank(text.to_owned()),
            Some(_) => Prior::Content,
        };
        let base = match original {
            Some(text) if !text.trim().is_empty() => text,
            _ => spec.seed,
        };
        let mut done = Done {
            path: path.clone(),
            action: Action::AlreadyInstalled,
            backup: None,
            notes: symlink_note(&loaded),
        };
        let doc = parse(spec, base, &path)?;
        let states = spec
            .events
            .map(|event| event_state(&doc, spec, &self.command, framework.id, event));
        if states.iter().all(|s| *s == EventState::Matches) {
            return Ok(done);
        }
        let malformed = |problem: String| Error::Malformed {
            path: path.clone(),
            problem,
        };
        let verify = |problem: String| Error::Verify {
            path: path.clone(),
            problem,
        };
        let jsonc = spec.format == Format::Jsonc;
        let grouped = spec.shape == HookShape::Groups;
        let mine = |handler: &Value| is_cairns(handler, framework.id);
        let mut text = base.to_owned();
        let created_hooks = doc.get("hooks").is_none();
        let mut created_keys = Vec::new();
        for (event, state) in spec.events.iter().zip(states) {
            match state {
                EventState::Matches => continue,
                EventState::Absent => {}
                EventState::Differs => {
                    // Another binary's entry: take it out, then add the right one.
                    for _ in 0..8 {
                        match jsonc::hook_remove(&text, jsonc, event, grouped, &mine, false, false)
                            .map_err(malformed)?
                        {
                            Some(edited) => text = edited,
                            None => break,
                        }
                    }
                }
            }
            let now = parse(spec, &text, &path).map_err(|error| verify(error.to_string()))?;
            if now
                .get("hooks")
                .and_then(|hooks| hooks.get(event))
                .is_none()
            {
                created_keys.push((*event).to_owned());
            }
            let item = item(spec, &self.command, framework.id, event);
            text = jsonc::hook_append(&text, event, &item).map_err(malformed)?;
        }

        // Check the edit before anything touches the disk.
        let after = parse(spec, &text, &path).map_err(|error| verify(error.to_string()))?;
        if spec.events.iter().any(|event| {
            event_state(&after, spec, &self.command, framework.id, event) != EventState::Matches
        }) {
            return Err(verify("Cairn's hooks are not there as expected".to_owned()));
        }
        if without_cairn(&doc, spec, framework.id) != without_cairn(&after, spec, framework.id) {
            return Err(verify("other settings would have changed".to_owned()));
        }
        done.action = if states.contains(&EventState::Absent) {
            Action::Installed
        } else {
            Action::Updated
        };
        if dry_run {
            return Ok(done);
        }

        files::ensure_unchanged(&loaded)?;
        done.backup = match backed_up {
            Some((file, backup)) if file == path => backup.map(Path::to_owned),
            _ => files::backup(&self.backup_dir.join(framework.id), &loaded)?,
        };
        let created_dirs = match (&loaded.bytes, path.parent()) {
            (None, Some(parent)) if !parent.as_os_str().is_empty() => files::create_dirs(parent)?,
            _ => Vec::new(),
        };
        files::write_atomic(&path, &text, loaded.permissions.clone())?;

        if created_keys.is_empty() && !created_hooks && prior == Prior::Content {
            return Ok(done);
        }
        let key = ledger_key(framework.id);
        let mut ledger = Ledger::load(&self.backup_dir);
        let record = match ledger.get(&key, &path).cloned() {
            Some(mut record) => {
                record.created_container |= created_hooks;
                for event in created_keys {
                    if !record.created_keys.contains(&event) {
                        record.created_keys.push(event);
                    }
                }
                record
            }
            None => Record {
                path: path.clone(),
                prior,
                created_container: created_hooks,
                created_dirs,
                created_keys,
            },
        };
        ledger.set(&key, record);
        if let Err(error) = ledger.save(&self.backup_dir) {
            done.notes.push(format!(
                "could not record the hooks' install ({error}); removing them later will leave \
                 empty hook lists behind"
            ));
        }
        Ok(done)
    }

    fn remove_json(&self, framework: &Framework, spec: &JsonHooks, dry_run: bool) -> Result<Done> {
        let loaded = files::load(&spec.path(&self.env))?;
        let path = loaded.target.clone();
        let mut done = Done {
            path: path.clone(),
            action: Action::NotInstalled,
            backup: None,
            notes: symlink_note(&loaded),
        };
        let text = match loaded.text()? {
            Some(text) if !text.trim().is_empty() => text,
            _ => return Ok(done),
        };
        let doc = parse(spec, text, &path)?;
        let present = |doc: &Value| {
            spec.events
                .iter()
                .any(|event| !handlers(doc, spec, framework.id, event).is_empty())
        };
        if !present(&doc) {
            return Ok(done);
        }
        let key = ledger_key(framework.id);
        let mut ledger = Ledger::load(&self.backup_dir);
        let record = ledger.get(&key, &path).cloned();
        let drop_hooks = record.as_ref().is_some_and(|r| r.created_container);
        let malformed = |problem: String| Error::Malformed {
            path: path.clone(),
            problem,
        };
        let verify = |problem: String| Error::Verify {
            path: path.clone(),
            problem,
        };
        let jsonc = spec.format == Format::Jsonc;
        let grouped = spec.shape == HookShape::Groups;
        let mine = |handler: &Value| is_cairns(handler, framework.id);
        let mut edited = text.to_owned();
        // The reverse of the install order, so each removal undoes the matching insertion.
        for event in spec.events.iter().rev() {
            let drop_event = record
                .as_ref()
                .is_some_and(|r| r.created_keys.iter().any(|k| k == event));
            for _ in 0..8 {
                match jsonc::hook_remove(
                    &edited, jsonc, event, grouped, &mine, drop_event, drop_hooks,
                )
                .map_err(malformed)?
                {
                    Some(next) => edited = next,
                    None => break,
                }
            }
        }
        let after = parse(spec, &edited, &path).map_err(|error| verify(error.to_string()))?;
        if present(&after) {
            return Err(verify("Cairn's hooks are still there".to_owned()));
        }
        if without_cairn(&doc, spec, framework.id) != without_cairn(&after, spec, framework.id) {
            return Err(verify("other settings would have changed".to_owned()));
        }
        done.action = Action::Removed;
        if dry_run {
            return Ok(done);
        }

        files::ensure_unchanged(&loaded)?;
        done.backup = files::backup(&self.backup_dir.join(framework.id), &loaded)?;
        let seed = jsonc::to_value(spec.seed, false).ok();
        let as_created = seed.as_ref() == Some(&after);
        match record.as_ref().map(|record| &record.prior) {
            Some(Prior::Absent) if as_created => {
                let dirs = record.as_ref().map_or(&[][..], |r| &r.created_dirs[..]);
                files::delete(&path, dirs)?;
                done.notes.push(format!(
                    "deleted {}: Cairn had created it and it held nothing else",
                    path.display()
                ));
            }
            Some(Prior::Blank(original)) if as_created => {
                files::write_atomic(&path, original, loaded.permissions.clone())?;
            }
            _ => files::write_atomic(&path, &edited, loaded.permissions.clone())?,
        }
        if ledger.forget(&key)
            && let Err(error) = ledger.save(&self.backup_dir)
        {
            done.notes
                .push(format!("could not update Cairn's install record ({error})"));
        }
        Ok(done)
    }

    fn install_plugin(&self, framework: &Framework, path: &Path, dry_run: bool) -> Result<Done> {
        let loaded = files::load(path)?;
        let target = loaded.target.clone();
        let mut done = Done {
            path: target.clone(),
            action: Action::AlreadyInstalled,
            backup: None,
            notes: symlink_note(&loaded),
        };
        let wanted = plugin_text(&self.command);
        match loaded.text()? {
            Some(text) if text == wanted => return Ok(done),
            Some(text) if text.starts_with(PLUGIN_HEADER) => done.action = Action::Updated,
            Some(_) => {
                return Err(Error::Malformed {
                    path: target,
                    problem: "is not Cairn's plugin (it lacks Cairn's first line); Cairn will \
                              not overwrite it: move it away, then install again"
                        .to_owned(),
                });
            }
            None => done.action = Action::Installed,
        }
        if dry_run {
            return Ok(done);
        }
        files::ensure_unchanged(&loaded)?;
        done.backup = files::backup(&self.backup_dir.join(framework.id), &loaded)?;
        let created_dirs = match (&loaded.bytes, target.parent()) {
            (None, Some(parent)) if !parent.as_os_str().is_empty() => files::create_dirs(parent)?,
            _ => Vec::new(),
        };
        files::write_atomic(&target, &wanted, loaded.permissions.clone())?;
        if done.action == Action::Installed {
            let mut ledger = Ledger::load(&self.backup_dir);
            ledger.set(
                &ledger_key(framework.id),
                Record {
                    path: target.clone(),
                    prior: Prior::Absent,
                    created_container: false,
                    created_dirs,
                    created_keys: Vec::new(),
                },
            );
            if let Err(error) = ledger.save(&self.backup_dir) {
                done.notes.push(format!(
                    "could not record the plugin's install ({error}); removing it later will \
                     leave its folder behind"
                ));
            }
        }
        Ok(done)
    }

    fn remove_plugin(&self, framework: &Framework, path: &Path, dry_run: bool) -> Result<Done> {
        let loaded = files::load(path)?;
        let target = loaded.target.clone();
        let mut done = Done {
            path: target.clone(),
            action: Action::NotInstalled,
            backup: None,
            notes: symlink_note(&loaded),
        };
        match loaded.text()? {
            None => return Ok(done),
            Some(text) if !text.starts_with(PLUGIN_HEADER) => {
                done.notes.push(format!(
                    "{} is not Cairn's plugin; left alone",
                    target.display()
                ));
                return Ok(done);
            }
            Some(_) => done.action = Action::Removed,
        }
        if dry_run {
            return Ok(done);
        }
        files::ensure_unchanged(&loaded)?;
        let key = ledger_key(framework.id);
        let mut ledger = Ledger::load(&self.backup_dir);
        let dirs = ledger
            .get(&key, &target)
            .map(|record| record.created_dirs.clone())
            .unwrap_or_default();
        files::delete(&target, &dirs)?;
        done.notes
            .push(format!("deleted {}, Cairn's plugin", target.display()));
        if ledger.forget(&key)
            && let Err(error) = ledger.save(&self.backup_dir)
        {
            done.notes
                .push(format!("could not update Cairn's install record ({error})"));
        }
        Ok(done)
    }
}
