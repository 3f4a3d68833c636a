//! Project identity: the git common dir of a session's working directory (or its `origin`
//! remote), so worktrees of one repository share a project and two repositories with the same
//! folder name do not; otherwise the path itself.
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// Resolves working directories to project identities, remembering what it has seen.
#[derive(Debug, Default)]
pub struct ProjectResolver {
    cache: HashMap<String, String>,
}

impl ProjectResolver {
    /// The project identity of a working directory.
    pub fn identify(&mut self, cwd: &str) -> String {
        if let Some(p) = self.cache.get(cwd) {
            return p.clone();
        }
        let id = identify(Path::new(cwd));
        self.cache.insert(cwd.to_owned(), id.clone());
        id
    }
}

/// The project identity of a working directory: the normalised `origin` remote of its git
/// repository (`github.com/acme/app`), else the repository's main working tree (the parent
/// of its common git dir), else the directory itself.
pub fn identify(cwd: &Path) -> String {
    match git_common_dir(cwd) {
        Some(common) => {
            if let Some(remote) = origin_remote(&common) {
                return remote;
            }
            let root = if common.file_name().is_some_and(|n| n == ".git") {
                common.parent().map(Path::to_path_buf).unwrap_or(common)
            } else {
                common
            };
            display(&root)
        }
        None => display(&normalize(cwd)),
    }
}

fn display(p: &Path) -> String {
    p.to_string_lossy().trim_end_matches(['/', '\\']).to_owned()
}

/// The common git dir of the repository containing `dir` (shared by all its worktrees).
pub fn git_common_dir(dir: &Path) -> Option<PathBuf> {
    for d in dir.ancestors() {
        let dot_git = d.join(".git");
        let git_dir = if dot_git.is_dir() {
            dot_git
        } else if dot_git.is_file() {
            // A worktree or submodule: `gitdir: <path>`.
            let text = fs_err::read_to_string(&dot_git).ok()?;
            let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
            let target = Path::new(target);
            if target.is_absolute() {
                target.to_path_buf()
            } else {
                d.join(target)
            }
        } else {
            continue;
        };
        let common = match fs_err::read_to_string(git_dir.join("commondir")) {
            Ok(rel) => {
                let rel = Path::new(rel.trim());
                if rel.is_absolute() {
                    rel.to_path_buf()
                } else {
                    git_dir.join(rel)
                }
            }
            Err(_) => git_dir,
        };
        return Some(normalize(&common));
    }
    None
}

/// The `origin` remote of a git dir, normalised to `host/owner/repo`.
fn origin_remote(common: &Path) -> Option<String> {
    let config = fs_err::read_to_string(common.join("config")).ok()?;
    let mut in_origin = false;
    for line in config.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_origin = t == "[remote \"origin\"]";
        } else if in_origin && let Some(url) = t.strip_prefix("url") {
            let url = url.trim_start().strip_prefix('=')?.trim();
            return normalize_remote(url);
        }
    }
    None
}

/// `git@github.com:acme/app.git`, `https://user@github.com/acme/app` → `github.com/acme/app`.
pub fn normalize_remote(url: &str) -> Option<String> {
    let url = url.trim().trim_end_matches('/');
    let url = url.strip_suffix(".git").unwrap_or(url);
    let rest = if let Some((_, rest)) = url.split_once("://") {
        rest.to_owned()
    } else if let Some((host, path)) = url.split_once(':').filter(|(h, _)| !h.contains('/')) {
        // scp-like `user@host:path`
        format!("{host}/{path}")
    } else {
        // A local path remote: keep it as it is.
        return Some(url.to_owned());
    };
    let rest = rest
        .rsplit_once('@')
        .map(|(_, r)| r.to_owned())
        .unwrap_or(rest);
    let (host, path) = rest.split_once('/').unwrap_or((&rest, ""));
    let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
    if host.is_empty() {
        return None;
    }
    Some(if path.is_empty() {
        host
    } else {
        format!("{host}/{path}")
    })
}

/// Removes `.` and `..` without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remotes_normalise_to_host_and_path() {
        for (url, want) in [
            ("git@github.com:acme/app.git", "github.com/acme/app"),
            ("https://github.com/acme/app", "github.com/acme/app"),
            (
                "https://token@GitHub.com/acme/app.git/",
                "github.com/acme/app",
            ),
            (
                "ssh://git@gitlab.example.com:2222/team/app.git",
                "gitlab.example.com/team/app",
            ),
        ] {
            assert_eq!(normalize_remote(url).as_deref(), Some(want), "{url}");
        }
    }

    #[test]
    fn worktrees_share_a_project_and_same_named_repos_do_not() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = tmp.path().join("one/app");
        let b = tmp.path().join("two/app");
        for repo in [&a, &b] {
            fs_err::create_dir_all(repo.join(".git/worktrees/wt")).expect("mkdir");
        }
        // A linked worktree of `a` elsewhere.
        let wt = tmp.path().join("elsewhere/app-feature");
        fs_err::create_dir_all(wt.join("src")).expect("mkdir");
        fs_err::write(
            wt.join(".git"),
            format!("gitdir: {}\n", a.join(".git/worktrees/wt").display()),
        )
        .expect("write");
        fs_err::write(a.join(".git/worktrees/wt/commondir"), "../..\n").expect("write");
        let pa = identify(&a.join("src"));
        assert_eq!(pa, a.display().to_string());
        assert_eq!(
            identify(&wt.join("src")),
            pa,
            "a worktree shares its repository's project"
        );
        assert_ne!(identify(&b), pa, "same folder name, different repository");
        // With an origin remote, the remote is the identity.
        fs_err::write(
            b.join(".git/config"),
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:acme/app.git\n",
        )
        .expect("write");
        assert_eq!(identify(&b), "github.com/acme/app");
        // Not a repository (or gone): the path.
        assert_eq!(identify(Path::new("/nonexistent/x/../y")), "/nonexistent/y");
    }
}
