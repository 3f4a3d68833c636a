//! The supported agents as one declarative table: id, config file, file format, the key that
//! holds MCP servers and the shape of Cairn's entry.

use std::path::PathBuf;

use crate::env::Env;
pub(crate) use crate::ids::IDS;

/// The name Cairn's server is registered under in every agent.
pub(crate) const ENTRY_NAME: &str = "cairn";

/// How a config file is written, which decides how it is parsed and edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Strict JSON: comments or trailing commas make the file invalid.
    Json,
    /// JSON with comments and trailing commas allowed.
    Jsonc,
    /// TOML, edited as text with toml_edit's spans.
    Toml,
    /// YAML, edited as text line by line.
    Yaml,
}

impl Format {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Jsonc => "JSON (with comments)",
            Format::Toml => "TOML",
            Format::Yaml => "YAML",
        }
    }
}

/// A value in Cairn's entry. Kept small and ordered (unlike `serde_json::Map`) so rendering
/// follows the order written here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum V {
    Str(String),
    Bool(bool),
    Int(i64),
    List(Vec<V>),
    Map(Vec<(String, V)>),
}

impl V {
    pub(crate) fn to_json(&self) -> serde_json::Value {
        match self {
            V::Str(s) => serde_json::Value::String(s.clone()),
            V::Bool(b) => serde_json::Value::Bool(*b),
            V::Int(i) => serde_json::Value::from(*i),
            V::List(items) => serde_json::Value::Array(items.iter().map(V::to_json).collect()),
            V::Map(members) => serde_json::Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// The fields of Cairn's entry, in the order they are written.
pub(crate) type Fields = Vec<(String, V)>;

/// One supported agent.
pub(crate) struct Framework {
    pub(crate) id: &'static str,
    pub(crate) format: Format,
    /// The top-level key holding MCP servers.
    pub(crate) container: &'static str,
    config: fn(&Env) -> PathBuf,
    detect: fn(&Env) -> PathBuf,
    entry: fn(&str) -> Fields,
    /// How Cairn's hooks reach this agent.
    pub(crate) hooks: HookSupport,
}

/// How an agent runs Cairn's hook (`<cairn> hook <framework> <event>`).
pub(crate) enum HookSupport {
    /// A JSON hook file with `hooks.<event>` arrays.
    Json(JsonHooks),
    /// A plugin file Cairn writes (OpenCode), at this path.
    Plugin(fn(&Env) -> PathBuf),
    /// No hook that can add context; why, for the user.
    None(&'static str),
}

/// How an agent's entries in `hooks.<event>` look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookShape {
    /// Matcher groups holding handlers: `[{"hooks": [{"type": "command", "command": …}]}]`
    /// (Claude Code and the agents that copied its hooks).
    Groups,
    /// Handlers directly: `[{"command": …}]` (Cursor).
    Flat,
}

/// A JSON hook file and Cairn's entries in it.
pub(crate) struct JsonHooks {
    pub(crate) format: Format,
    pub(crate) shape: HookShape,
    path: fn(&Env) -> PathBuf,
    /// The events Cairn hooks, as the agent spells them: session start, then each prompt.
    pub(crate) events: [&'static str; 2],
    /// The handler's `timeout` (in the agent's unit: seconds or milliseconds).
    pub(crate) timeout: Option<i64>,
    /// The text of a file Cairn creates, before its hooks go in (Cursor wants `version`).
    pub(crate) seed: &'static str,
    /// What the user must still do by hand once the hooks are in.
    pub(crate) manual: Option<&'static str>,
}

impl JsonHooks {
    /// The hook file.
    pub(crate) fn path(&self, env: &Env) -> PathBuf {
        (self.path)(env)
    }
}

impl Framework {
    /// The user-scope config file that holds MCP servers.
    pub(crate) fn config_path(&self, env: &Env) -> PathBuf {
        (self.config)(env)
    }

    /// The directory whose existence means the agent is installed.
    pub(crate) fn detect_dir(&self, env: &Env) -> PathBuf {
        (self.detect)(env)
    }

    /// Cairn's entry for this agent, running `command mcp`.
    pub(crate) fn entry(&self, command: &str) -> Fields {
        (self.entry)(command)
    }
}

fn s(value: &str) -> V {
    V::Str(value.to_owned())
}

fn field(key: &str, value: V) -> (String, V) {
    (key.to_owned(), value)
}

fn command_args(command: &str) -> Fields {
    vec![
        field("command", s(command)),
        field("args", V::List(vec![s("mcp")])),
    ]
}

fn xdg_config(env: &Env) -> PathBuf {
    env.dir("XDG_CONFIG_HOME", ".config")
}

/// Every supported agent, in the order they are listed.
pub(crate) static FRAMEWORKS: [Framework; 9] = [
    Framework {
        id: "claude-code",
        format: Format::Json,
        container: "mcpServers",
        config: |env| env.home.join(".claude.json"),
        detect: |env| env.home.join(".claude"),
        entry: |command| {
            let mut fields = vec![field("type", s("stdio"))];
            fields.extend(command_args(command));
            fields
        },
        hooks: HookSupport::Json(JsonHooks {
            format: Format::Json,
            shape: HookShape::Groups,
            path: |env| {
                env.dir("CLAUDE_CONFIG_DIR", ".claude")
                    .join("settings.json")
            },
            events: ["SessionStart", "UserPromptSubmit"],
            timeout: Some(2),
            seed: "{}\n",
            manual: None,
        }),
    },
    Framework {
        id: "codex",
        format: Format::Toml,
        container: "mcp_servers",
        config: |env| env.dir("CODEX_HOME", ".codex").join("config.toml"),
        detect: |env| env.dir("CODEX_HOME", ".codex"),
        entry: command_args,
        hooks: HookSupport::Json(JsonHooks {
            format: Format::Json,
            shape: HookShape::Groups,
            path: |env| env.dir("CODEX_HOME", ".codex").join("hooks.json"),
            events: ["SessionStart", "UserPromptSubmit"],
            timeout: Some(2),
            seed: "{}\n",
            manual: Some(
                "Codex runs new or changed hooks only once you trust them: open `codex` once, \
                 type /hooks and choose Trust (there is no way to do this for you).",
            ),
        }),
    },
    Framework {
        id: "gemini-cli",
        format: Format::Jsonc,
        container: "mcpServers",
        config: |env| gemini_dir(env).join("settings.json"),
        detect: gemini_dir,
        entry: command_args,
        hooks: HookSupport::Json(JsonHooks {
            format: Format::Jsonc,
            shape: HookShape::Groups,
            path: |env| gemini_dir(env).join("settings.json"),
            events: ["SessionStart", "BeforeAgent"],
            timeout: Some(2000),
            seed: "{}\n",
            manual: None,
        }),
    },
    Framework {
        id: "opencode",
        format: Format::Jsonc,
        container: "mcp",
        config: |env| {
            let dir = xdg_config(env).join("opencode");
            let jsonc = dir.join("opencode.jsonc");
            if jsonc.exists() {
                jsonc
            } else {
                dir.join("opencode.json")
            }
        },
        detect: |env| xdg_config(env).join("opencode"),
        entry: |command| {
            vec![
                field("type", s("local")),
                field("command", V::List(vec![s(command), s("mcp")])),
                field("enabled", V::Bool(true)),
            ]
        },
        hooks: HookSupport::Plugin(|env| {
            xdg_config(env)
                .join("opencode")
                .join("plugins")
                .join("cairn.js")
        }),
    },
    Framework {
        id: "cursor",
        format: Format::Json,
        container: "mcpServers",
        config: |env| env.home.join(".cursor").join("mcp.json"),
        detect: |env| env.home.join(".cursor"),
        entry: command_args,
        hooks: HookSupport::Json(JsonHooks {
            format: Format::Json,
            shape: HookShape::Flat,
            path: |env| env.home.join(".cursor").join("hooks.json"),
            events: ["sessionStart", "beforeSubmitPrompt"],
            timeout: None,
            seed: "{\n  \"version\": 1\n}\n",
            manual: None,
        }),
    },
    Framework {
        id: "qwen-code",
        format: Format::Jsonc,
        container: "mcpServers",
        config: |env| env.dir("QWEN_HOME", ".qwen").join("settings.json"),
        detect: |env| env.dir("QWEN_HOME", ".qwen"),
        entry: command_args,
        hooks: HookSupport::Json(JsonHooks {
            format: Format::Jsonc,
            shape: HookShape::Groups,
            path: |env| env.dir("QWEN_HOME", ".qwen").join("settings.json"),
            events: ["SessionStart", "UserPromptSubmit"],
            timeout: Some(2000),
            seed: "{}\n",
            manual: None,
        }),
    },
    Framework {
        id: "crush",
        format: Format::Json,
        container: "mcp",
        config: |env| xdg_config(env).join("crush").join("crush.json"),
        detect: |env| xdg_config(env).join("crush"),
        entry: |command| {
            let mut fields = vec![field("type", s("stdio"))];
            fields.extend(command_args(command));
            fields
        },
        hooks: HookSupport::None("Cairn installs no hook for Crush; it reaches Crush through MCP"),
    },
    Framework {
        id: "copilot-cli",
        format: Format::Json,
        container: "mcpServers",
        config: |env| env.dir("COPILOT_HOME", ".copilot").join("mcp-config.json"),
        detect: |env| env.dir("COPILOT_HOME", ".copilot"),
        entry: |command| {
            let mut fields = vec![field("type", s("local"))];
            fields.extend(command_args(command));
            fields.push(field("tools", V::List(vec![s("*")])));
            fields
        },
        hooks: HookSupport::None(
            "Copilot CLI ignores what its hooks print, so Cairn installs no hook there; it \
             reaches Copilot through MCP",
        ),
    },
    Framework {
        id: "goose",
        format: Format::Yaml,
        container: "extensions",
        config: |env| xdg_config(env).join("goose").join("config.yaml"),
        detect: |env| xdg_config(env).join("goose"),
        entry: |command| {
            vec![
                field("name", s(ENTRY_NAME)),
                field("type", s("stdio")),
                field("cmd", s(command)),
                field("args", V::List(vec![s("mcp")])),
                field("enabled", V::Bool(true)),
                field("timeout", V::Int(300)),
            ]
        },
        hooks: HookSupport::None(
            "Goose has no hook that adds context; Cairn reaches it through MCP",
        ),
    },
];

fn gemini_dir(env: &Env) -> PathBuf {
    match env.var("GEMINI_CLI_HOME") {
        Some(home) => PathBuf::from(home).join(".gemini"),
        None => env.home.join(".gemini"),
    }
}

pub(crate) fn find(id: &str) -> Option<&'static Framework> {
    FRAMEWORKS.iter().find(|framework| framework.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_the_table() {
        let table: Vec<_> = FRAMEWORKS.iter().map(|f| f.id).collect();
        assert_eq!(table, IDS.to_vec());
    }
}
