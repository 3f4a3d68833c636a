//! Paths and scopes: what a caller may name, checked on the text before anything is touched.
//!
//! A note path is relative, `/`-separated and stays inside its scope's root. Everything that
//! could make it mean something else on some file system or to some decoder is refused, with
//! the reason in the message: `.`/`..`, empty components, absolute and drive paths,
//! backslashes, control and invisible characters, URL encoding, look-alikes of `.` and `/`,
//! Windows device names and reserved characters, trailing dots and spaces, hidden names and
//! Cairn's own temporary names, and the length and depth limits.
use cairn_core::api::NoteScopeKind;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Longest path, in bytes.
pub const MAX_PATH_BYTES: usize = 512;
/// Longest component, in bytes.
pub const MAX_COMPONENT_BYTES: usize = 255;
/// Most components in a path.
pub const MAX_DEPTH: usize = 8;
/// The suffix of Cairn's temporary files (refused in every path).
pub const TEMP_SUFFIX: &str = cairn_text::fsx::TEMP_SUFFIX;
/// The notes root as the memory-tool contract names it.
pub const MEMORIES: &str = "/memories";

/// The path below `/memories` when `raw` is spelt the contract's way (`""` for the root).
pub(crate) fn contract_rest(raw: &str) -> Option<&str> {
    let rest = raw.strip_prefix(MEMORIES)?;
    if rest.is_empty() {
        return Some("");
    }
    rest.strip_prefix('/')
}

/// The longest project identity accepted.
const MAX_PROJECT_BYTES: usize = 1024;

/// A checked path inside a scope. Empty means the scope's root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct RelPath {
    comps: Vec<String>,
}

impl RelPath {
    pub(crate) fn components(&self) -> &[String] {
        &self.comps
    }

    pub(crate) fn is_root(&self) -> bool {
        self.comps.is_empty()
    }

    /// The path as `/`-separated text (`""` for the root).
    pub(crate) fn text(&self) -> String {
        self.comps.join("/")
    }

    /// The last component (the file name); empty for the root.
    pub(crate) fn name(&self) -> &str {
        self.comps.last().map_or("", String::as_str)
    }

    /// Whether `self` is `other` or lies below it.
    pub(crate) fn starts_with(&self, other: &RelPath) -> bool {
        self.comps.len() >= other.comps.len() && self.comps[..other.comps.len()] == other.comps[..]
    }

    pub(crate) fn from_checked(comps: Vec<String>) -> Self {
        Self { comps }
    }
}

/// Characters that look like `.` or `/` (or `\`) to a reader or to a normalising decoder.
const LOOKALIKES: &[(char, &str)] = &[
    ('\u{2024}', "`.`"),   // ONE DOT LEADER
    ('\u{2025}', "`..`"),  // TWO DOT LEADER
    ('\u{2026}', "`...`"), // HORIZONTAL ELLIPSIS
    ('\u{FE52}', "`.`"),   // SMALL FULL STOP
    ('\u{FF0E}', "`.`"),   // FULLWIDTH FULL STOP
    ('\u{3002}', "`.`"),   // IDEOGRAPHIC FULL STOP
    ('\u{FF61}', "`.`"),   // HALFWIDTH IDEOGRAPHIC FULL STOP
    ('\u{00B7}', "`.`"),   // MIDDLE DOT
    ('\u{2219}', "`.`"),   // BULLET OPERATOR
    ('\u{2215}', "`/`"),   // DIVISION SLASH
    ('\u{2044}', "`/`"),   // FRACTION SLASH
    ('\u{FF0F}', "`/`"),   // FULLWIDTH SOLIDUS
    ('\u{29F8}', "`/`"),   // BIG SOLIDUS
    ('\u{2571}', "`/`"),   // BOX DRAWINGS LIGHT DIAGONAL
    ('\u{1735}', "`/`"),   // PHILIPPINE SINGLE PUNCTUATION
    ('\u{2216}', "`\\`"),  // SET MINUS
    ('\u{29F5}', "`\\`"),  // REVERSE SOLIDUS OPERATOR
    ('\u{29F9}', "`\\`"),  // BIG REVERSE SOLIDUS
    ('\u{FE68}', "`\\`"),  // SMALL REVERSE SOLIDUS
    ('\u{FF3C}', "`\\`"),  // FULLWIDTH REVERSE SOLIDUS
];

/// Invisible characters that change how a name reads or sorts (zero-width, bidi controls).
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{180E}'
        | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206F}' | '\u{3164}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}')
}

const WINDOWS_RESERVED: &[char] = &['<', '>', '"', '|', '?', '*'];

const DEVICE_NAMES: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$", "COM0", "COM1", "COM2", "COM3",
    "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "COM¹", "COM²", "COM³", "LPT0", "LPT1", "LPT2",
    "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9", "LPT¹", "LPT²", "LPT³",
];

/// Checks a caller's path: the contract's spelling (`/memories` for the root,
/// `/memories/<path>` for a note) or relative to the notes root. `allow_root`: the root
/// (`/memories`, `/memories/`, empty or `/`) is accepted, which only `view` does.
pub(crate) fn parse_path(raw: &str, allow_root: bool) -> Result<RelPath> {
    let refuse = |reason: String| Err(Error::path(raw, reason));
    if raw.len() > MAX_PATH_BYTES {
        return refuse(format!(
            "it is {} bytes long; the limit is {MAX_PATH_BYTES}",
            raw.len()
        ));
    }
    let text = contract_rest(raw).unwrap_or(raw);
    if text.starts_with('/') && !(text == "/" && raw == "/") && !text.starts_with("//") {
        return refuse(format!(
            "it is absolute outside {MEMORIES}; name a note {MEMORIES}/<path> or relative to the notes root"
        ));
    }
    if text.is_empty() || text == "/" {
        if allow_root {
            return Ok(RelPath { comps: Vec::new() });
        }
        return refuse(
            "it names the scope's root, which only `view` accepts; name a file".to_owned(),
        );
    }
    for c in text.chars() {
        if c == '\0' {
            return refuse("it contains a NUL character".to_owned());
        }
        if c.is_control() {
            return refuse(format!(
                "it contains the control character U+{:04X}",
                u32::from(c)
            ));
        }
        if is_invisible(c) {
            return refuse(format!(
                "it contains the invisible formatting character U+{:04X}",
                u32::from(c)
            ));
        }
        if let Some((_, like)) = LOOKALIKES.iter().find(|(l, _)| *l == c) {
            return refuse(format!(
                "it contains U+{:04X}, a look-alike of {like}",
                u32::from(c)
            ));
        }
    }
    let bytes = text.as_bytes();
    if let Some(i) = (0..bytes.len().saturating_sub(2)).find(|&i| {
        bytes[i] == b'%' && bytes[i + 1].is_ascii_hexdigit() && bytes[i + 2].is_ascii_hexdigit()
    }) {
        return refuse(format!(
            "it contains URL encoding (`{}`); send the path decoded",
            &text[i..i + 3]
        ));
    }
    if text.starts_with("\\\\") || text.starts_with("//") {
        return refuse("it is a Windows UNC or device path".to_owned());
    }
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return refuse(format!(
            "it names a Windows drive (`{}`); paths are relative to the notes root",
            &text[..2]
        ));
    }
    if text.starts_with('/') {
        return refuse("it is absolute; paths are relative to the notes root".to_owned());
    }
    if text.contains('\\') {
        return refuse("it contains a backslash; separate components with `/`".to_owned());
    }
    if text.contains(':') {
        return refuse("it contains `:`, a Windows drive or stream separator".to_owned());
    }
    if let Some(c) = text.chars().find(|c| WINDOWS_RESERVED.contains(c)) {
        return refuse(format!(
            "it contains `{c}`, which Windows file names cannot hold"
        ));
    }
    let comps: Vec<&str> = text.split('/').collect();
    if comps.len() > MAX_DEPTH {
        return refuse(format!(
            "it is {} levels deep; the limit is {MAX_DEPTH}",
            comps.len()
        ));
    }
    for comp in &comps {
        if let Some(reason) = component_problem(comp) {
            return refuse(reason);
        }
    }
    Ok(RelPath {
        comps: comps.into_iter().map(str::to_owned).collect(),
    })
}

/// Why one component is refused, if it is.
pub(crate) fn component_problem(comp: &str) -> Option<String> {
    if comp.is_empty() {
        return Some("it has an empty component (`//` or a trailing `/`)".to_owned());
    }
    if comp == ".." {
        return Some("it leaves the notes root (`..`)".to_owned());
    }
    if comp == "." {
        return Some("it contains a `.` component".to_owned());
    }
    if comp.starts_with('.') {
        return Some(format!(
            "component `{comp}` is hidden (starts with `.`); hidden names are Cairn's"
        ));
    }
    if comp.len() > MAX_COMPONENT_BYTES {
        return Some(format!(
            "a component is {} bytes long; the limit is {MAX_COMPONENT_BYTES}",
            comp.len()
        ));
    }
    if comp.ends_with('.') || comp.ends_with(' ') {
        return Some(format!("component `{comp}` ends with a dot or a space"));
    }
    if comp.starts_with(' ') {
        return Some(format!("component `{comp}` starts with a space"));
    }
    if comp.to_ascii_lowercase().ends_with(TEMP_SUFFIX) {
        return Some(format!(
            "component `{comp}` ends with `{TEMP_SUFFIX}`, which Cairn keeps for its temporary files"
        ));
    }
    let stem = comp.split('.').next().unwrap_or(comp).trim_end();
    let upper = stem.to_uppercase();
    if let Some(dev) = DEVICE_NAMES.iter().find(|d| **d == upper) {
        return Some(format!(
            "component `{comp}` is the Windows device name `{dev}`"
        ));
    }
    None
}

/// Whose notes a request names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Scope {
    pub(crate) kind: NoteScopeKind,
    pub(crate) project: Option<String>,
}

impl Scope {
    /// The user's notes.
    pub(crate) fn user() -> Self {
        Self {
            kind: NoteScopeKind::User,
            project: None,
        }
    }

    /// Checks the scope rules: the project scope needs a project, the user scope refuses one.
    pub(crate) fn new(kind: NoteScopeKind, project: Option<&str>) -> Result<Self> {
        match (kind, project) {
            (NoteScopeKind::User, None) => Ok(Self::user()),
            (NoteScopeKind::User, Some(p)) => Err(Error::BadRequest(format!(
                "the user scope takes no project (got {}); use the project scope for project notes",
                crate::error::shown(p)
            ))),
            (NoteScopeKind::Project, None) => Err(Error::BadRequest(
                "the project scope needs a project".to_owned(),
            )),
            (NoteScopeKind::Project, Some(p)) => {
                check_project(p)?;
                Ok(Self {
                    kind,
                    project: Some(p.to_owned()),
                })
            }
        }
    }

    /// The directories under the notes root that hold this scope (`user`, or `projects` and
    /// the project's directory).
    pub(crate) fn dirs(&self) -> Vec<String> {
        match &self.project {
            None => vec!["user".to_owned()],
            Some(p) => vec!["projects".to_owned(), project_dir_name(p)],
        }
    }

    /// How messages name the scope.
    pub(crate) fn describe(&self) -> String {
        match &self.project {
            None => "the user notes".to_owned(),
            Some(p) => format!("the notes of project {}", crate::error::shown(p)),
        }
    }
}

fn check_project(p: &str) -> Result<()> {
    if p.trim().is_empty() {
        return Err(Error::BadRequest("the project is empty".to_owned()));
    }
    if p.len() > MAX_PROJECT_BYTES {
        return Err(Error::BadRequest(format!(
            "the project is {} bytes long; the limit is {MAX_PROJECT_BYTES}",
            p.len()
        )));
    }
    if p.chars().any(char::is_control) {
        return Err(Error::BadRequest(format!(
            "the project {} contains a control character",
            crate::error::shown(p)
        )));
    }
    Ok(())
}

/// A project's directory under `projects/`: a readable slug of its identity (lowercase
/// ASCII letters and digits, `-` for everything else, at most 40 characters) and 8 hex
/// digits of the identity's sha256, so different projects never share a directory.
pub fn project_dir_name(project: &str) -> String {
    let mut slug = String::new();
    for c in project.chars() {
        let c = if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '-'
        };
        if c == '-' && (slug.is_empty() || slug.ends_with('-')) {
            continue;
        }
        slug.push(c);
    }
    slug.truncate(40);
    let slug = slug.trim_end_matches('-');
    let slug = if slug.is_empty() { "project" } else { slug };
    let hash = hex::encode(Sha256::digest(project.as_bytes()));
    format!("{slug}-{}", &hash[..8])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]
    use super::*;

    #[test]
    fn good_paths_pass_and_keep_their_components() {
        for p in [
            "a.md",
            "db/migrations.md",
            "Notes on C++.md",
            "日本語/メモ.md",
            "a b/c-d_e.txt",
        ] {
            let r = parse_path(p, false).unwrap();
            assert_eq!(r.text(), p);
        }
        assert!(parse_path("", true).unwrap().is_root());
        assert!(parse_path("/", true).unwrap().is_root());
        assert!(parse_path("", false).is_err());
        let deep = ["a"; MAX_DEPTH].join("/");
        assert!(parse_path(&deep, false).is_ok());
        assert!(parse_path(&format!("{deep}/b"), false).is_err());
    }

    #[test]
    fn project_dirs_are_slugged_and_hashed() {
        let d = project_dir_name("github.com/Acme/App");
        assert!(d.starts_with("github-com-acme-app-"), "{d}");
        assert_eq!(d.len(), "github-com-acme-app-".len() + 8);
        assert_ne!(project_dir_name("a/b"), project_dir_name("a-b"));
        assert!(project_dir_name(&"x".repeat(100)).len() <= 40 + 9);
        assert!(project_dir_name("///").starts_with("project-"));
    }

    #[test]
    fn the_message_names_the_problem() {
        let e = parse_path("../x", false).unwrap_err().to_string();
        assert_eq!(e, "refused path \"../x\": it leaves the notes root (`..`)");
        let e = parse_path("COM1.txt", false).unwrap_err().to_string();
        assert!(e.contains("Windows device name `COM1`"), "{e}");
    }
}
