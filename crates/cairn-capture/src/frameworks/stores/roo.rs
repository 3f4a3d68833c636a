//! Roo Code and the pre-1.0 Kilo Code extension: Cline forks that keep Cline's task folders in
//! VS Code's global storage (`rooveterinaryinc.roo-cline/tasks/<taskId>/`,
//! `kilocode.kilo-code/tasks/<taskId>/`). `api_conversation_history.json` is parsed by the
//! Cline parser; the cwd comes from `history_item.json`/`task_metadata.json` when present,
//! else from the `<environment_details>` block. Roo's `roo-cline.customStoragePath` setting
//! (a VS Code setting, not an environment variable) is not followed.
use std::path::PathBuf;

use super::cline::{read_task, task_matches};
use crate::spec::{Env, FrameworkSpec, Reader};

/// The Roo Code entry and the legacy Kilo Code extension entry.
pub(crate) fn specs() -> Vec<FrameworkSpec> {
    vec![
        FrameworkSpec {
            name: "roo-code",
            display: "Roo Code",
            env_vars: &["XDG_CONFIG_HOME"],
            roots: roo_roots,
            matches: task_matches,
            reader: Reader::WholeFile(read_task),
        },
        FrameworkSpec {
            name: "kilo",
            display: "Kilo Code (extension before 1.0)",
            env_vars: &["XDG_CONFIG_HOME"],
            roots: kilo_roots,
            matches: task_matches,
            reader: Reader::WholeFile(read_task),
        },
    ]
}

fn tasks(env: &Env, extension: &str) -> Vec<PathBuf> {
    env.vscode_global_storage(extension)
        .into_iter()
        .map(|d| d.join("tasks"))
        .collect()
}

fn roo_roots(env: &Env) -> Vec<PathBuf> {
    tasks(env, "rooveterinaryinc.roo-cline")
}

fn kilo_roots(env: &Env) -> Vec<PathBuf> {
    tasks(env, "kilocode.kilo-code")
}
