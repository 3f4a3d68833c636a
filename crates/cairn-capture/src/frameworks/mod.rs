//! One module per framework. [`all`] is the declarative table capture walks.

pub mod jsonl;
pub mod stores;

use std::path::{Path, PathBuf};

use crate::FrameworkSpec;

/// Folders never searched for history files kept inside projects (Aider, SpecStory).
const SKIP_DIRS: &[&str] = &[
    "node_modules",
    "target",
    "vendor",
    "dist",
    "build",
    "__pycache__",
];

/// How deep below a project folder [`search_projects`] looks.
const PROJECT_DEPTH: usize = 3;

/// The history files `in_dir` finds in `dir` and in its sub-folders, up to three levels down,
/// sorted. Hidden folders and dependency/build folders (`node_modules`, `target`, …) are
/// skipped, links are never followed (`file_type` does not follow them: no loops, no
/// escaping the folder), and each folder that cannot be read is a sentence in `warnings`.
/// The one walk of the frameworks that keep their files inside projects.
pub(crate) fn search_projects(
    dir: &Path,
    in_dir: fn(&Path, &mut Vec<String>) -> Vec<PathBuf>,
    warnings: &mut Vec<String>,
) -> Vec<PathBuf> {
    fn walk(
        dir: &Path,
        depth: usize,
        in_dir: fn(&Path, &mut Vec<String>) -> Vec<PathBuf>,
        found: &mut Vec<PathBuf>,
        warnings: &mut Vec<String>,
    ) {
        found.extend(in_dir(dir, warnings));
        if depth >= PROJECT_DEPTH {
            return;
        }
        let entries = match fs_err::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                warnings.push(format!("cannot read folder: {e}"));
                return;
            }
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || SKIP_DIRS.contains(&name.as_str()) {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&entry.path(), depth + 1, in_dir, found, warnings);
            }
        }
    }
    let mut found = Vec::new();
    walk(dir, 0, in_dir, &mut found, warnings);
    found.sort();
    found
}

/// Every supported framework, in a stable order.
pub fn all() -> Vec<FrameworkSpec> {
    let mut v = jsonl::specs();
    v.extend(stores::specs());
    v
}

/// One framework by name.
pub fn by_name(name: &str) -> Option<FrameworkSpec> {
    all().into_iter().find(|s| s.name == name)
}
