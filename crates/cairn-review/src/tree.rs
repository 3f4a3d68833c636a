//! A project's working tree as this machine has it: what an item cites from it (files and
//! code symbols), and whether the tree still holds them. Only the tree is ever looked at: a
//! cited path with `..` or outside the root, or one through a link, is neither present nor
//! missing, just left out.
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

/// The most files read from one working tree, and the largest one read.
const MAX_TREE_FILES: usize = 50_000;

const MAX_FILE_BYTES: u64 = 1 << 20;

/// The most bytes read from one working tree while looking for symbols.
const MAX_TREE_BYTES: u64 = 256 << 20;

/// Folders never walked.
const SKIP_DIRS: &[&str] = &[
    "node_modules",
    "target",
    "dist",
    "build",
    "out",
    "vendor",
    "venv",
    "__pycache__",
];

/// File extensions that make a backticked word a file citation, and the files read for
/// symbols.
const CODE_EXTS: &[&str] = &[
    "rs", "py", "ts", "tsx", "js", "jsx", "mjs", "cjs", "go", "java", "kt", "kts", "c", "h", "cc",
    "cpp", "hpp", "cs", "rb", "php", "swift", "scala", "m", "mm", "toml", "json", "yaml", "yml",
    "md", "sql", "sh", "bash", "zsh", "css", "scss", "html", "svelte", "vue", "lock", "txt", "cfg",
    "ini", "xml", "gradle", "proto", "lua", "ex", "exs", "erl", "hs", "ml", "zig", "dart", "r",
    "jl", "nix", "tf", "graphql", "env", "mdc",
];

/// The instruction files every agent reads from a project's folder.
const INSTRUCTION_FILES: &[&str] = &[
    "CLAUDE.md",
    "AGENTS.md",
    "GEMINI.md",
    "QWEN.md",
    ".github/copilot-instructions.md",
    ".cursorrules",
];

/// What a text cites from a working tree: paths of files, and code symbols.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Citations {
    pub files: Vec<String>,
    pub symbols: Vec<String>,
}

fn is_code_ext(path: &str) -> bool {
    path.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && CODE_EXTS.contains(&ext.to_lowercase().as_str())
    })
}

fn is_symbol(w: &str) -> bool {
    let ident = w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && w.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !ident || w.len() < 4 {
        return false;
    }
    let humps = w.chars().skip(1).filter(|c| c.is_ascii_uppercase()).count();
    let has_lower = w.chars().any(|c| c.is_ascii_lowercase());
    (w.contains('_') && has_lower && !w.starts_with("__")) || (humps >= 1 && has_lower)
}

/// Files and symbols a text cites: a path with a folder and a known extension anywhere, a
/// file name or a code symbol (snake_case, camelCase, `a::b`, `f()`) inside backticks.
pub(crate) fn citations(text: &str) -> Citations {
    let mut files = BTreeSet::new();
    let mut symbols = BTreeSet::new();
    for raw in text.split(|c: char| c.is_whitespace() || "\"'()[]{}<>,;".contains(c)) {
        let w = raw
            .trim_start_matches('`')
            .trim_end_matches(['`', '.', ':', '!', '?']);
        if w.contains("://") || w.starts_with('/') || w.starts_with('~') || w.contains('\\') {
            continue;
        }
        let w = w.trim_start_matches("./");
        if w.contains('/') && is_code_ext(w) && !w.split('/').any(|p| p.is_empty() || p == "..") {
            files.insert(w.to_owned());
        }
    }
    for (n, span) in text.split('`').enumerate() {
        if n % 2 == 0 || span.is_empty() || span.len() > 120 || span.contains(char::is_whitespace) {
            continue;
        }
        let span = span.trim_start_matches("./");
        if !span.contains('/') && is_code_ext(span) && !span.starts_with('.') {
            files.insert(span.to_owned());
            continue;
        }
        let bare = span.trim_end_matches("()");
        let last = bare.rsplit("::").next().unwrap_or(bare);
        let last = last.rsplit('.').next().unwrap_or(last);
        if is_symbol(last) {
            symbols.insert(last.to_owned());
        }
    }
    Citations {
        files: files.into_iter().collect(),
        symbols: symbols.into_iter().collect(),
    }
}

/// A project's working tree as this machine has it: its files (relative, `/`-separated).
pub(crate) struct Tree {
    pub(crate) root: PathBuf,
    /// The root with every link resolved, when it exists: what is inside the tree.
    canonical: Option<PathBuf>,
    files: Vec<String>,
    /// False when the walk stopped at [`MAX_TREE_FILES`]: nothing is judged missing then.
    pub(crate) complete: bool,
}

fn skip_dir(name: &str) -> bool {
    name.starts_with('.') || SKIP_DIRS.contains(&name)
}

/// The repository root above `cwd` (the nearest folder holding `.git`), or `cwd` itself.
pub(crate) fn root_of(cwd: &Path) -> Option<PathBuf> {
    if !cwd.is_absolute() || !cwd.is_dir() {
        return None;
    }
    let mut at = Some(cwd);
    for _ in 0..16 {
        let Some(dir) = at else { break };
        if dir.join(".git").exists() {
            return Some(dir.to_path_buf());
        }
        at = dir.parent();
    }
    Some(cwd.to_path_buf())
}

/// Lists a working tree (links never followed, hidden and build folders skipped).
pub(crate) fn walk(root: &Path) -> Tree {
    let mut files = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, rel, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let name = e.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if ft.is_dir() {
                if depth < 24 && !skip_dir(&name) {
                    stack.push((e.path(), path, depth + 1));
                }
            } else if ft.is_file() {
                files.push(path);
                if files.len() >= MAX_TREE_FILES {
                    return Tree {
                        root: root.to_path_buf(),
                        canonical: root.canonicalize().ok(),
                        files,
                        complete: false,
                    };
                }
            }
        }
    }
    Tree {
        root: root.to_path_buf(),
        canonical: root.canonicalize().ok(),
        files,
        complete: true,
    }
}

/// What a working tree says of a cited file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Presence {
    Present,
    Absent,
    /// Not looked up: the path leaves the tree (`..`, absolute) or goes through a link.
    Ignored,
}

/// Looks `cited` up below `base` one component at a time without following links: a link
/// on the way (wherever it points) makes it [`Presence::Ignored`], so nothing outside the
/// tree is ever looked at.
fn probe(base: &Path, cited: &Path) -> Presence {
    let mut cur = base.to_path_buf();
    let count = cited.components().count();
    for (n, comp) in cited.components().enumerate() {
        cur.push(comp);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => return Presence::Ignored,
            Ok(m) if n + 1 == count => {
                return if m.is_file() {
                    Presence::Present
                } else {
                    Presence::Absent
                };
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) | Err(_) => return Presence::Absent,
        }
    }
    Presence::Absent
}

impl Tree {
    /// Whether the tree holds this file: at the root or the working folder `cwd` as
    /// written, or anywhere below (the citation may be relative to a sub-folder). A path
    /// through a hidden or build folder (never walked) is only looked up as written. A
    /// citation that is not a plain relative path (`..`, absolute), a working folder outside
    /// the tree, and a path through a link are never looked up: [`Presence::Ignored`].
    pub(crate) fn has_file(&self, cited: &str, cwd: &Path) -> Presence {
        let rel = Path::new(cited);
        if cited.is_empty()
            || cited.contains('\\')
            || !rel
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
        {
            return Presence::Ignored;
        }
        let Some(canonical) = &self.canonical else {
            return Presence::Ignored;
        };
        let mut found = probe(canonical, rel);
        if found == Presence::Absent
            && let Ok(cwd) = cwd.canonicalize()
            && cwd.starts_with(canonical)
            && cwd != *canonical
        {
            found = probe(&cwd, rel);
        }
        if found != Presence::Absent {
            return found;
        }
        if cited.split('/').any(skip_dir) {
            return Presence::Absent;
        }
        let tail = format!("/{cited}");
        if self.files.iter().any(|f| f == cited || f.ends_with(&tail)) {
            Presence::Present
        } else {
            Presence::Absent
        }
    }

    /// Which of `symbols` appear in none of the tree's code files.
    pub(crate) fn missing_symbols(&self, symbols: &BTreeSet<String>) -> HashSet<String> {
        let mut missing: HashSet<String> = symbols.iter().cloned().collect();
        if missing.is_empty() {
            return missing;
        }
        let pats: Vec<&String> = symbols.iter().collect();
        let Ok(ac) = aho_corasick::AhoCorasick::new(&pats) else {
            return HashSet::new();
        };
        let mut read = 0u64;
        for f in &self.files {
            if missing.is_empty() || read > MAX_TREE_BYTES {
                break;
            }
            if !is_code_ext(f.rsplit('/').next().unwrap_or(f)) {
                continue;
            }
            // Never through a link, never a FIFO or a device.
            let path = self.root.join(f);
            let Ok(bytes) = cairn_text::fsx::read_regular(&path, &self.root, MAX_FILE_BYTES) else {
                continue;
            };
            read += bytes.len() as u64;
            for m in ac.find_overlapping_iter(&bytes) {
                missing.remove(pats[m.pattern().as_usize()].as_str());
            }
        }
        if read > MAX_TREE_BYTES || !self.complete {
            // Not everything was read: say nothing rather than something wrong.
            return HashSet::new();
        }
        missing
    }

    /// The project's instruction files' lines (Cairn's own section left out), each with the
    /// file it is in.
    pub(crate) fn instruction_lines(&self) -> Vec<(String, String)> {
        let mut names: Vec<String> = INSTRUCTION_FILES.iter().map(|s| (*s).to_owned()).collect();
        names.extend(
            self.files
                .iter()
                .filter(|f| f.starts_with(".cursor/rules/") && f.ends_with(".mdc"))
                .filter(|f| !f.ends_with("cairn-skills.mdc"))
                .cloned(),
        );
        let mut out = Vec::new();
        for name in names {
            let path = self.root.join(&name);
            let Ok(bytes) = cairn_text::fsx::read_regular(&path, &self.root, MAX_FILE_BYTES) else {
                continue;
            };
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            let mut inside = false;
            for line in text.lines() {
                if line.trim() == cairn_text::marks::SKILLS_BEGIN {
                    inside = true;
                } else if line.trim() == cairn_text::marks::SKILLS_END {
                    inside = false;
                } else if !inside && !line.trim().is_empty() {
                    out.push((name.clone(), line.trim().to_owned()));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_find_paths_backticked_files_and_code_symbols() {
        let c = citations(
            "Moved the parser to crates/cairn-text/src/chunk.rs; `lib.rs` calls `split_units()` \
             from .github/workflows/ci.yml and ./scripts/run.sh. \
             and `Chunker::new`. See https://example.com/a/b.rs and /etc/hosts.conf, \
             v1.2.3, e.g. Node.js, `cargo test`, `ok`, `TextIndex`.",
        );
        assert_eq!(
            c.files,
            vec![
                ".github/workflows/ci.yml",
                "crates/cairn-text/src/chunk.rs",
                "lib.rs",
                "scripts/run.sh"
            ]
        );
        assert_eq!(c.symbols, vec!["TextIndex", "split_units"]);
    }
}
