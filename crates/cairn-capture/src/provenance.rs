//! Whose history a file inside a project is. Aider and SpecStory write their histories inside
//! the project, and many projects commit them: a cloned repository then brings someone else's
//! conversations, which must not be captured as the user's own.
//!
//! A history file *came with a clone* when it is tracked by git, unchanged since the last
//! commit (its bytes equal the blob at `HEAD`), and that commit's author email is not the local
//! git user's (`git config user.email` in that repository). Everything else is the user's own:
//! an untracked file, one changed on this machine, one last committed by the user, one outside
//! any repository, and any file when git is missing, fails or takes too long.
//!
//! git runs without the system config (`GIT_CONFIG_NOSYSTEM`), without a pager or prompts,
//! with a short deadline, and only with commands that cannot run a program named in the
//! repository's own `.git/config`: no `diff` or `status` (which may run `core.fsmonitor` and
//! the clean filters of `filter.<driver>`), `log` without patches (no `diff.external`, no
//! textconv) and with signatures off (no `gpg.program`), `cat-file` without `--filters`.
//! The file's bytes are compared with the blob by Cairn itself.
//!
//! A verdict is kept per file with its size, modification time and the repository's `HEAD`, so
//! a pass runs git again only for files that changed or repositories that moved.
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

/// How long one git command may take.
const GIT_DEADLINE: Duration = Duration::from_secs(3);
/// A file larger than this is not compared with its blob (taken as the user's).
const MAX_COMPARE: u64 = 64 << 20;

/// Whose a history file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The user's own: captured.
    Own,
    /// Committed by someone else and unchanged here: it came with a cloned repository.
    Cloned {
        /// The email of the author of the last commit that touched it.
        author: String,
    },
}

/// Whether `file` came with a cloned repository (see the module documentation). Uses and
/// updates the cache.
pub fn verdict(file: &Path) -> Verdict {
    let Ok(meta) = std::fs::metadata(file) else {
        return Verdict::Own;
    };
    let Some(repo) = repository_of(file) else {
        return Verdict::Own;
    };
    let key = Key {
        size: meta.len(),
        mtime: meta.modified().ok(),
        head: head_state(&repo.git_dir),
    };
    let cache = CACHE.get_or_init(Default::default);
    if let Some((k, v)) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(file)
        && *k == key
    {
        return v.clone();
    }
    let v = decide(file, &repo, meta.len());
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(file.to_path_buf(), (key, v.clone()));
    v
}

/// What a cached verdict depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    size: u64,
    mtime: Option<SystemTime>,
    head: String,
}

/// The verdicts known so far, by file.
type Verdicts = HashMap<PathBuf, (Key, Verdict)>;

static CACHE: OnceLock<Mutex<Verdicts>> = OnceLock::new();

/// A repository: its work tree and its git directory.
struct Repo {
    root: PathBuf,
    git_dir: PathBuf,
}

/// The nearest repository holding `file`: a folder with a `.git` folder, or a `.git` file
/// naming the git directory (worktrees, submodules).
fn repository_of(file: &Path) -> Option<Repo> {
    for dir in file.parent()?.ancestors() {
        let dot = dir.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot) else {
            continue;
        };
        if meta.is_dir() {
            return Some(Repo {
                root: dir.to_path_buf(),
                git_dir: dot,
            });
        }
        if meta.is_file() {
            let text = fs_err::read_to_string(&dot).ok()?;
            let target = text.trim().strip_prefix("gitdir:")?.trim();
            let git_dir = dir.join(target);
            return Some(Repo {
                root: dir.to_path_buf(),
                git_dir,
            });
        }
        return None;
    }
    None
}

/// What `HEAD` points at, read from the git directory without running git: `HEAD`'s text and,
/// for a branch, its loose ref (here or in the common directory of a worktree) and the packed
/// refs' modification time. Any commit changes it.
fn head_state(git_dir: &Path) -> String {
    let head = fs_err::read_to_string(git_dir.join("HEAD")).unwrap_or_default();
    let mut state = head.trim().to_owned();
    let common = fs_err::read_to_string(git_dir.join("commondir"))
        .map(|c| git_dir.join(c.trim()))
        .unwrap_or_else(|_| git_dir.to_path_buf());
    if let Some(name) = head.trim().strip_prefix("ref:") {
        let name = name.trim();
        for base in [git_dir, common.as_path()] {
            if let Ok(r) = fs_err::read_to_string(base.join(name)) {
                state.push(' ');
                state.push_str(r.trim());
                break;
            }
        }
    }
    if let Ok(t) = std::fs::metadata(common.join("packed-refs")).and_then(|m| m.modified()) {
        state.push_str(&format!(" {t:?}"));
    }
    state
}

/// Asks git (see the module documentation for what is and is not run).
fn decide(file: &Path, repo: &Repo, size: u64) -> Verdict {
    let (Ok(file_abs), Ok(root_abs)) = (file.canonicalize(), repo.root.canonicalize()) else {
        return Verdict::Own;
    };
    let Ok(rel) = file_abs.strip_prefix(&root_abs) else {
        return Verdict::Own;
    };
    let rel = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    let spec = format!("HEAD:{rel}");
    // Not at HEAD: untracked, or added but not committed.
    let Some(blob_size) =
        git(&root_abs, &["cat-file", "-s", &spec]).and_then(|s| s.trim().parse::<u64>().ok())
    else {
        return Verdict::Own;
    };
    if blob_size != size || size > MAX_COMPARE {
        return Verdict::Own;
    }
    let Some(blob) = git_bytes(&root_abs, &["cat-file", "blob", &spec]) else {
        return Verdict::Own;
    };
    match fs_err::read(&file_abs) {
        Ok(bytes) if bytes == blob => {}
        _ => return Verdict::Own,
    }
    let Some(author) = git(
        &root_abs,
        &[
            "log",
            "-1",
            "--no-show-signature",
            "--no-mailmap",
            "--format=%ae",
            "HEAD",
            "--",
            &rel,
        ],
    )
    .map(|a| a.trim().to_owned())
    .filter(|a| !a.is_empty()) else {
        return Verdict::Own;
    };
    let me = git(&root_abs, &["config", "user.email"])
        .map(|e| e.trim().to_owned())
        .unwrap_or_default();
    if !me.is_empty() && me.eq_ignore_ascii_case(&author) {
        Verdict::Own
    } else {
        Verdict::Cloned { author }
    }
}

/// A git command's standard output as text, or None when it failed or took too long.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    git_bytes(root, args).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// A git command's standard output, or None when git is missing, the command failed or it
/// took longer than the deadline (it is then killed).
fn git_bytes(root: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let mut cmd = Command::new("git");
    cmd.arg("--no-pager")
        .args(["-c", "core.fsmonitor=false"])
        .args(["-c", "log.showSignature=false"])
        .args(["-c", "core.untrackedCache=false"])
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_PAGER", "cat")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_EXTERNAL_DIFF")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().ok()?;
    let mut out = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        out.read_to_end(&mut buf).map(|_| buf)
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < GIT_DEADLINE => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                // Too slow (or lost): stop it; the reader then sees the pipe close.
                // Nothing more to do if it ended meanwhile.
                let _stopped = child.kill().and_then(|()| child.wait());
                break None;
            }
        }
    };
    let bytes = reader.join().ok()?.ok()?;
    status.filter(|s| s.success()).map(|_| bytes)
}
