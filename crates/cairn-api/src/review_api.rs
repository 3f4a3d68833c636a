//! The review inbox (`review_list`, `review_act`, `review_undo`): what may be wrong with
//! what Cairn remembers, each finding with one-click actions, every action logged and
//! undoable.
//!
//! - **Duplicates**: two active items of the same project whose summaries are near-identical
//!   (cosine of their stored summary vectors ≥ [`DUPLICATE_COSINE`], or word overlap ≥
//!   [`DUPLICATE_WORDS`]) and that cite the same numbers; two notes of one scope with the
//!   same content.
//! - **Contradictions**: items a reconcile marked contradicting, and close neighbours
//!   (cosine ≥ [`CONFLICT_COSINE`] or word overlap ≥ [`CONFLICT_WORDS`]) that cite different
//!   numbers or dates ("port 6543" against "port 5432"). An item stated only by outside text
//!   that disagrees with one the user or the agent stated never replaces it at distillation:
//!   the pair comes here, the user's or the agent's suggested to stay.
//! - **Stale**: items citing a file or a code symbol that is no longer in the project's
//!   working tree — found from the item's source requests' working folder (up to its
//!   repository root); a project whose folder is not on this machine is not judged. Only
//!   the tree is ever looked at: a cited path with `..` or outside the root, or one through
//!   a link, is neither present nor missing, just left out.
//! - **Junk**: items or notes with almost nothing in them, Cairn's own words (a turn note or
//!   its skills section read back), and items that only restate an instruction the project's
//!   instruction files (`CLAUDE.md`, `AGENTS.md`, …) already give every agent.
//!
//! Actions append to the item log (`merged`, `superseded`, `archived`; nothing is rewritten)
//! or delete a note (its versions stay), and go into the review log with the states before,
//! so `review_undo` puts every one back — unless it changed since, which is refused rather
//! than lost. `keep` changes nothing and hides the entry until undone.
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use cairn_core::api::{
    NoteDeleteReq, NoteRef, NoteSummary, NoteVersionReq, NotesListReq, ReviewActReq,
    ReviewActionView, ReviewCounts, ReviewEntry, ReviewInbox, ReviewReq, ReviewSubject,
    ReviewUndoReq,
};
use cairn_core::{ErrorCode, Item, ItemEventKind, ItemId, NewItemEvent, Relation, RelationKind};
use cairn_store::ReviewAction;

use crate::items_api::name_of;
use crate::{ApiError, Result, Service};

/// Summary vectors at least this close make a likely duplicate.
pub const DUPLICATE_COSINE: f32 = 0.92;
/// Or this much word overlap (Jaccard) between title and summary.
pub const DUPLICATE_WORDS: f32 = 0.75;
/// Neighbours at least this close that cite different numbers may contradict.
pub const CONFLICT_COSINE: f32 = 0.80;
/// Or this much word overlap.
pub const CONFLICT_WORDS: f32 = 0.45;
/// The most active items compared for duplicates and contradictions (the newest).
const MAX_PAIRWISE: usize = 20_000;
/// A word in more items than this does not make two items candidates (it is everywhere).
const MAX_POSTING: usize = 400;
/// Stored turns shorter than this (request and replies) are not offered as duplicates.
const MIN_RECORD_CHARS: u32 = 200;
/// An item or note with fewer content words than this is junk.
const MIN_WORDS: usize = 3;
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
/// Signs of Cairn's own words read back.
const CAIRN_MARKS: &[&str] = &[
    "<cairn-memory>",
    "</cairn-memory>",
    "From Cairn's memory of earlier sessions",
    crate::skills_api::BEGIN,
    "What earlier sessions learned in this project (from Cairn)",
];
const STOP: &[&str] = &[
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "was", "were", "be",
    "it", "its", "this", "that", "with", "as", "at", "by", "we", "our", "you", "your", "i", "not",
    "no", "do", "does", "from", "use", "uses", "used", "so", "but", "if", "then", "than", "has",
    "have", "had", "will", "should", "must", "can", "all", "any", "always", "never", "when",
    "which", "what", "there", "their", "they", "them",
];

const CATEGORIES: [&str; 4] = ["contradiction", "duplicate", "stale", "junk"];

fn ts(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Content words, lower-cased (numbers kept).
fn words(s: &str) -> HashSet<String> {
    s.split(|c: char| !c.is_alphanumeric() && c != '.' && c != '-' && c != '_')
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty() && (w.len() > 1 || w.chars().all(|c| c.is_ascii_digit())))
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect()
}

#[cfg(test)]
fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let inter = a.intersection(b).count();
    let union = a.len() + b.len() - inter;
    inter as f32 / union as f32
}

/// The numbers and dates a text cites (`6543`, `1.0.200`, `2026-05-01`), as written.
fn numbers(s: &str) -> BTreeSet<String> {
    s.split(|c: char| c.is_whitespace() || ",;:()[]{}\"'`=<>".contains(c))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .map(|w| {
            w.strip_prefix(['v', 'V'])
                .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
                .unwrap_or(w)
        })
        .filter(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na <= 0.0 || nb <= 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

fn one_line(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    cairn_recall::note::cut(&flat, max)
}

fn item_subject(i: &Item) -> ReviewSubject {
    ReviewSubject {
        id: i.id.as_str().to_owned(),
        kind: "item".into(),
        subkind: name_of(&i.kind),
        title: i.title.clone(),
        text: one_line(
            if i.summary.is_empty() {
                &i.body
            } else {
                &i.summary
            },
            300,
        ),
        project: i.project.clone(),
        at: i.said_at.as_ref().map(ts),
        importance: Some(i.importance),
        session: None,
    }
}

fn record_subject(r: &cairn_store::RecordCopy) -> ReviewSubject {
    ReviewSubject {
        id: r.id.clone(),
        kind: "record".into(),
        subkind: r.framework.clone(),
        title: one_line(&r.request, 120),
        text: one_line(&r.text_start, 300),
        project: r.project.clone(),
        at: Some(ts(&r.started_at)),
        importance: None,
        session: Some(r.session_id.clone()),
    }
}

fn note_subject(n: &NoteSummary, content: &str) -> ReviewSubject {
    ReviewSubject {
        id: n.id.clone(),
        kind: "note".into(),
        subkind: name_of(&n.scope),
        title: n.path.clone(),
        text: one_line(content, 300),
        project: n.project.clone(),
        at: Some(n.updated_at.clone()),
        importance: None,
        session: None,
    }
}

/// The entry key of a finding about these subjects (a pair in a stable order).
fn key(category: &str, ids: &[&str]) -> String {
    let mut ids = ids.to_vec();
    if category == "duplicate" || category == "contradiction" {
        ids.sort_unstable();
    }
    format!("{category}:{}", ids.join("+"))
}

fn parse_key(k: &str) -> Result<(&str, Vec<&str>)> {
    let bad = || {
        ApiError::bad_request(format!(
            "{k:?} is not a review entry key (category:id or category:id+id, as review_list gives it)"
        ))
    };
    let (category, ids) = k.split_once(':').ok_or_else(bad)?;
    if !CATEGORIES.contains(&category) {
        return Err(bad());
    }
    let ids: Vec<&str> = ids.split('+').collect();
    let pair = category == "duplicate" || category == "contradiction";
    if ids.iter().any(|i| i.is_empty()) || (pair && ids.len() != 2) || (!pair && ids.len() != 1) {
        return Err(bad());
    }
    Ok((category, ids))
}

fn actions_for(category: &str, subjects: &[ReviewSubject]) -> Vec<String> {
    let items = subjects.iter().all(|s| s.kind == "item");
    let list: &[&str] = match category {
        "duplicate" if items => &["merge", "archive", "keep"],
        "contradiction" => &["supersede", "archive", "keep"],
        _ => &["archive", "keep"],
    };
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// Which of two items to suggest keeping: the more important, then the better sourced, then
/// the newer.
fn better<'a>(a: &'a Item, b: &'a Item) -> (&'a Item, &'a Item) {
    let rank = |i: &Item| (i.importance, i.sources.len(), i.said_at);
    if rank(b) > rank(a) { (b, a) } else { (a, b) }
}

/// Of two items that disagree, the one to suggest keeping first: the one the user or the
/// agent stated over one stated only by outside text (or never checked), else the newer.
fn believed<'a>(a: &'a Item, b: &'a Item) -> (&'a Item, &'a Item) {
    match (a.untrusted(), b.untrusted()) {
        (true, false) => (b, a),
        (false, true) => (a, b),
        _ => newer(a, b),
    }
}

/// Why the inbox suggests keeping `keep` over `other`, when provenance decided it.
fn outside_note(keep: &Item, other: &Item) -> &'static str {
    if keep.untrusted() {
        return "";
    }
    match other.provenance {
        Some(cairn_core::Provenance::Outside) => {
            " The other is stated only by outside text (tool output, files read, fetched \
             pages), so it did not replace the first without your review."
        }
        None => " The other was distilled before Cairn checked whose text states it.",
        Some(_) => "",
    }
}

/// The newer of two items first (newer information usually replaces older).
fn newer<'a>(a: &'a Item, b: &'a Item) -> (&'a Item, &'a Item) {
    if b.said_at > a.said_at {
        (b, a)
    } else {
        (a, b)
    }
}

/// The text of an item that the checks read.
fn item_text(i: &Item) -> String {
    format!("{}\n{}\n{}", i.title, i.summary, i.body)
}

fn ordered(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_owned(), b.to_owned())
    } else {
        (b.to_owned(), a.to_owned())
    }
}

/// Sorted word ids: a Jaccard overlap by merging two short lists.
fn overlap(a: &[u32], b: &[u32]) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut inter) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += 1;
                i += 1;
                j += 1;
            }
        }
    }
    inter as f32 / (a.len() + b.len() - inter) as f32
}

fn day(i: &Item) -> String {
    i.said_at
        .as_ref()
        .map_or("undated".into(), |t| t.format("%Y-%m-%d").to_string())
}

/// Duplicates and contradictions among `items` (compared only within one project).
fn pair_findings(
    items: &[Item],
    vectors: &HashMap<String, Vec<f32>>,
    marked: &HashSet<(String, String)>,
) -> Vec<Finding> {
    let mut vocab: HashMap<String, u32> = HashMap::new();
    let keys: Vec<Vec<u32>> = items
        .iter()
        .map(|i| {
            let mut ids: Vec<u32> = words(&format!("{} {}", i.title, i.summary))
                .into_iter()
                .map(|w| {
                    let next = u32::try_from(vocab.len()).unwrap_or(u32::MAX);
                    *vocab.entry(w).or_insert(next)
                })
                .collect();
            ids.sort_unstable();
            ids
        })
        .collect();
    let nums: Vec<BTreeSet<String>> = items.iter().map(|i| numbers(&item_text(i))).collect();
    // Candidate pairs, not every pair: one project, at least two title or summary words in
    // common that are not everywhere (one, for very short keys); and every pair distillation
    // marked contradicting.
    let mut postings: HashMap<u32, Vec<usize>> = HashMap::new();
    for (n, k) in keys.iter().enumerate() {
        for w in k {
            postings.entry(*w).or_default().push(n);
        }
    }
    let mut pairs: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (x, k) in keys.iter().enumerate() {
        let mut shared: HashMap<usize, u32> = HashMap::new();
        for w in k {
            let Some(list) = postings.get(w).filter(|l| l.len() <= MAX_POSTING) else {
                continue;
            };
            for &y in list {
                if y > x && items[y].project == items[x].project {
                    *shared.entry(y).or_default() += 1;
                }
            }
        }
        for (y, n) in shared {
            if n >= 2 || k.len().min(keys[y].len()) <= 2 {
                pairs.insert((x, y));
            }
        }
    }
    let position: HashMap<&str, usize> = items
        .iter()
        .enumerate()
        .map(|(n, i)| (i.id.as_str(), n))
        .collect();
    for (a, b) in marked {
        if let (Some(&x), Some(&y)) = (position.get(a.as_str()), position.get(b.as_str()))
            && items[x].project == items[y].project
        {
            pairs.insert((x.min(y), x.max(y)));
        }
    }
    let mut out = Vec::new();
    for (x, y) in pairs {
        let (a, b) = (&items[x], &items[y]);
        let cos = match (vectors.get(a.id.as_str()), vectors.get(b.id.as_str())) {
            (Some(va), Some(vb)) => cosine(va, vb),
            _ => 0.0,
        };
        let jac = overlap(&keys[x], &keys[y]);
        let sim = cos.max(jac);
        let differ = !nums[x].is_empty() && !nums[y].is_empty() && nums[x] != nums[y];
        if marked.contains(&ordered(a.id.as_str(), b.id.as_str())) {
            let (keep, other) = believed(a, b);
            let which = if outside_note(keep, other).is_empty() {
                "the newer"
            } else {
                "the first"
            };
            out.push(Finding {
                category: "contradiction",
                reason: format!(
                    "Distillation found these two disagree; {which} ({}) is suggested to stay.{}",
                    day(keep),
                    outside_note(keep, other)
                ),
                score: sim.max(0.5),
                subjects: vec![item_subject(keep), item_subject(other)],
            });
        } else if differ && (cos >= CONFLICT_COSINE || jac >= CONFLICT_WORDS) {
            let (keep, other) = believed(a, b);
            let (nk, no) = if std::ptr::eq(keep, a) {
                (x, y)
            } else {
                (y, x)
            };
            let only_keep: Vec<String> = nums[nk].difference(&nums[no]).cloned().collect();
            let only_other: Vec<String> = nums[no].difference(&nums[nk]).cloned().collect();
            out.push(Finding {
                category: "contradiction",
                reason: format!(
                    "About the same thing with different numbers or dates: {} ({}) against {} ({}).{}",
                    short_list(&only_keep),
                    day(keep),
                    short_list(&only_other),
                    day(other),
                    outside_note(keep, other)
                ),
                score: sim,
                subjects: vec![item_subject(keep), item_subject(other)],
            });
        } else if cos >= DUPLICATE_COSINE || jac >= DUPLICATE_WORDS {
            let (keep, other) = better(a, b);
            out.push(Finding {
                category: "duplicate",
                reason: format!(
                    "Near-identical {}s ({:.0}% alike); merging keeps every source and fact of both.",
                    name_of(&a.kind),
                    sim * 100.0
                ),
                score: sim,
                subjects: vec![item_subject(keep), item_subject(other)],
            });
        }
    }
    out
}

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
struct Tree {
    root: PathBuf,
    /// The root with every link resolved, when it exists: what is inside the tree.
    canonical: Option<PathBuf>,
    files: Vec<String>,
    /// False when the walk stopped at [`MAX_TREE_FILES`]: nothing is judged missing then.
    complete: bool,
}

fn skip_dir(name: &str) -> bool {
    name.starts_with('.') || SKIP_DIRS.contains(&name)
}

/// The repository root above `cwd` (the nearest folder holding `.git`), or `cwd` itself.
fn root_of(cwd: &Path) -> Option<PathBuf> {
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
fn walk(root: &Path) -> Tree {
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
enum Presence {
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
    fn has_file(&self, cited: &str, cwd: &Path) -> Presence {
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
    fn missing_symbols(&self, symbols: &BTreeSet<String>) -> HashSet<String> {
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
    fn instruction_lines(&self) -> Vec<(String, String)> {
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
                if line.trim() == crate::skills_api::BEGIN {
                    inside = true;
                } else if line.trim() == crate::skills_api::END {
                    inside = false;
                } else if !inside && !line.trim().is_empty() {
                    out.push((name.clone(), line.trim().to_owned()));
                }
            }
        }
        out
    }
}

/// One finding before it becomes an entry.
struct Finding {
    category: &'static str,
    reason: String,
    score: f32,
    subjects: Vec<ReviewSubject>,
}

impl Finding {
    fn entry(self) -> ReviewEntry {
        let ids: Vec<&str> = self.subjects.iter().map(|s| s.id.as_str()).collect();
        ReviewEntry {
            key: key(self.category, &ids),
            category: self.category.into(),
            reason: self.reason,
            score: self.score,
            actions: actions_for(self.category, &self.subjects),
            subjects: self.subjects,
        }
    }
}

fn short_list(v: &[String]) -> String {
    let shown: Vec<String> = v.iter().take(3).map(|s| format!("`{s}`")).collect();
    let more = v.len().saturating_sub(3);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

fn action_view(a: &ReviewAction) -> ReviewActionView {
    let changed = a.detail["changed"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    ReviewActionView {
        id: a.id.clone(),
        at: ts(&a.at),
        entry: a.entry.clone(),
        category: a.category.clone(),
        action: a.action.clone(),
        summary: a.summary.clone(),
        changed,
        undone_at: a.undone_at.as_ref().map(ts),
    }
}

/// Items in words: “title” (id), ….
fn named(items: &[Item]) -> String {
    items
        .iter()
        .map(|i| {
            format!(
                "\u{201c}{}\u{201d} ({})",
                one_line(&i.title, 80),
                i.id.as_str()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn new_action_id() -> Result<String> {
    let mut buf = [0u8; 12];
    getrandom::fill(&mut buf)
        .map_err(|e| ApiError::internal(format!("no randomness for an action id: {e}")))?;
    Ok(format!("rv_{}", hex::encode(buf)))
}

fn note_ref(n: &NoteSummary) -> NoteRef {
    NoteRef {
        scope: n.scope,
        project: n.project.clone(),
        path: n.path.clone(),
    }
}

impl Service {
    async fn item_findings(
        &self,
        items: &[Item],
        unchecked: &mut BTreeSet<String>,
    ) -> Result<Vec<Finding>> {
        let mut out = Vec::new();
        // Pairs: duplicates and contradictions, within one project, off the async threads.
        let mut recent: Vec<Item> = items.to_vec();
        recent.sort_by_key(|i| std::cmp::Reverse(i.said_at));
        recent.truncate(MAX_PAIRWISE);
        let vectors: HashMap<String, Vec<f32>> = match self.dense_parts().await {
            Some(d) => {
                let owners: Vec<String> = recent.iter().map(|i| i.id.as_str().to_owned()).collect();
                self.store()
                    .summary_vectors(&owners, &d.vectors_id())
                    .await?
            }
            None => HashMap::new(),
        };
        let marked: HashSet<(String, String)> = self
            .store()
            .relations_of_kind(RelationKind::Contradicts)
            .await?
            .into_iter()
            .map(|r| ordered(r.from.as_str(), r.to.as_str()))
            .collect();
        out.extend(
            tokio::task::spawn_blocking(move || pair_findings(&recent, &vectors, &marked))
                .await
                .map_err(|e| ApiError::internal(e.to_string()))?,
        );
        // One item at a time: junk, then stale.
        let mut by_root: HashMap<PathBuf, Vec<(&Item, Citations, PathBuf)>> = HashMap::new();
        let sources: Vec<String> = items
            .iter()
            .flat_map(|i| i.sources.iter().map(|s| s.as_str().to_owned()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let cwds = self.store().record_cwds(&sources).await?;
        for i in items {
            let text = item_text(i);
            if let Some(mark) = CAIRN_MARKS.iter().find(|m| text.contains(*m)) {
                out.push(Finding {
                    category: "junk",
                    reason: format!(
                        "Cairn's own words read back ({mark:?}): a turn note or skills section, not something that happened."
                    ),
                    score: 1.0,
                    subjects: vec![item_subject(i)],
                });
                continue;
            }
            if words(&format!("{} {}", i.summary, i.body)).len() < MIN_WORDS {
                out.push(Finding {
                    category: "junk",
                    reason: "Almost nothing in it: too short to help any later turn.".into(),
                    score: 0.9,
                    subjects: vec![item_subject(i)],
                });
                continue;
            }
            // The working folder of its newest source request.
            let Some(cwd) = i
                .sources
                .iter()
                .filter_map(|s| cwds.get(s.as_str()))
                .max_by_key(|(at, _)| *at)
                .map(|(_, c)| c.clone())
            else {
                continue;
            };
            let cited = citations(&text);
            let Some(root) = root_of(Path::new(&cwd)) else {
                if !cited.files.is_empty() || !cited.symbols.is_empty() {
                    unchecked.insert(i.project.clone().unwrap_or(cwd));
                }
                continue;
            };
            by_root
                .entry(root)
                .or_default()
                .push((i, cited, PathBuf::from(&cwd)));
        }
        for (root, list) in by_root {
            let symbols: BTreeSet<String> = list
                .iter()
                .flat_map(|(_, c, _)| c.symbols.iter().cloned())
                .collect();
            let (tree, missing_symbols, lines) = tokio::task::spawn_blocking(move || {
                let tree = walk(&root);
                let missing = tree.missing_symbols(&symbols);
                let lines = tree.instruction_lines();
                (tree, missing, lines)
            })
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?;
            let line_words: Vec<(String, String, HashSet<String>)> = lines
                .into_iter()
                .map(|(f, l)| {
                    let w = words(&l);
                    (f, l, w)
                })
                .collect();
            for (i, cited, cwd) in list {
                // Restated instructions: the summary's words all in one instruction line.
                let w = words(&i.summary);
                if w.len() >= MIN_WORDS
                    && let Some((file, line, _)) = line_words.iter().find(|(_, _, lw)| {
                        w.iter().filter(|x| lw.contains(*x)).count() as f32 / w.len() as f32 >= 0.8
                    })
                {
                    out.push(Finding {
                        category: "junk",
                        reason: format!(
                            "Restates an instruction every agent already reads in {file}: \u{201c}{}\u{201d}",
                            one_line(line, 160)
                        ),
                        score: 0.8,
                        subjects: vec![item_subject(i)],
                    });
                    continue;
                }
                if !tree.complete {
                    if !cited.files.is_empty() || !cited.symbols.is_empty() {
                        unchecked.insert(tree.root.display().to_string());
                    }
                    continue;
                }
                let presence: Vec<(String, Presence)> = cited
                    .files
                    .iter()
                    .map(|f| (f.clone(), tree.has_file(f, &cwd)))
                    .collect();
                let gone_files: Vec<String> = presence
                    .iter()
                    .filter(|(_, p)| *p == Presence::Absent)
                    .map(|(f, _)| f.clone())
                    .collect();
                let ignored = presence
                    .iter()
                    .filter(|(_, p)| *p == Presence::Ignored)
                    .count();
                let gone_symbols: Vec<String> = cited
                    .symbols
                    .iter()
                    .filter(|s| missing_symbols.contains(*s))
                    .cloned()
                    .collect();
                let cites = cited.files.len() - ignored + cited.symbols.len();
                let gone = gone_files.len() + gone_symbols.len();
                if gone == 0 {
                    continue;
                }
                let mut what = Vec::new();
                if !gone_files.is_empty() {
                    what.push(format!(
                        "file{} {}",
                        if gone_files.len() == 1 { "" } else { "s" },
                        short_list(&gone_files)
                    ));
                }
                if !gone_symbols.is_empty() {
                    what.push(format!(
                        "symbol{} {}",
                        if gone_symbols.len() == 1 { "" } else { "s" },
                        short_list(&gone_symbols)
                    ));
                }
                out.push(Finding {
                    category: "stale",
                    reason: format!(
                        "Cites {}, no longer in {}.",
                        what.join(" and "),
                        tree.root.display()
                    ),
                    score: gone as f32 / cites.max(1) as f32,
                    subjects: vec![item_subject(i)],
                });
            }
        }
        Ok(out)
    }

    /// The same turn stored more than once (a resumed session's copy, two stores of one
    /// agent): the oldest stays, each later copy is an entry.
    async fn record_findings(&self, project: Option<&str>) -> Result<Vec<Finding>> {
        let hidden = self.store().hidden_records().await?;
        let mut out = Vec::new();
        for group in self.store().duplicate_records(MIN_RECORD_CHARS).await? {
            let group: Vec<&cairn_store::RecordCopy> = group
                .iter()
                .filter(|r| !hidden.contains(&r.id))
                .filter(|r| project.is_none_or(|p| r.project.as_deref() == Some(p)))
                .collect();
            let Some((first, copies)) = group.split_first() else {
                continue;
            };
            for copy in copies {
                out.push(Finding {
                    category: "duplicate",
                    reason: format!(
                        "The same turn stored twice ({} session {} and {} session {}): archiving leaves the later copy out of search and the turn note; the log keeps it.",
                        first.framework, first.session_id, copy.framework, copy.session_id
                    ),
                    score: 1.0,
                    subjects: vec![record_subject(first), record_subject(copy)],
                });
            }
        }
        Ok(out)
    }

    async fn note_findings(&self, project: Option<&str>) -> Result<Vec<Finding>> {
        let Ok(notes) = self.notes() else {
            return Ok(Vec::new());
        };
        let list = notes
            .list(&NotesListReq::default())
            .await
            .map_err(crate::notes_api::err)?;
        let mut out = Vec::new();
        let mut by_content: HashMap<(String, Option<String>, String), Vec<&NoteSummary>> =
            HashMap::new();
        for n in &list {
            if project.is_some_and(|p| n.project.as_deref() != Some(p)) {
                continue;
            }
            by_content
                .entry((name_of(&n.scope), n.project.clone(), n.sha256.clone()))
                .or_default()
                .push(n);
            let Ok(doc) = notes.get(&note_ref(n)).await else {
                continue;
            };
            let text = doc.content.trim();
            if let Some(mark) = CAIRN_MARKS.iter().find(|m| text.contains(*m)) {
                out.push(Finding {
                    category: "junk",
                    reason: format!("Cairn's own words saved as a note ({mark:?})."),
                    score: 1.0,
                    subjects: vec![note_subject(n, text)],
                });
            } else if words(text).len() < MIN_WORDS {
                out.push(Finding {
                    category: "junk",
                    reason: "A note with almost nothing in it.".into(),
                    score: 0.9,
                    subjects: vec![note_subject(n, text)],
                });
            }
        }
        for group in by_content.values().filter(|g| g.len() > 1) {
            let mut group = group.clone();
            // The oldest path stays; later copies are suggested for archiving.
            group.sort_by(|a, b| a.updated_at.cmp(&b.updated_at).then(a.path.cmp(&b.path)));
            let Ok(doc) = notes.get(&note_ref(group[0])).await else {
                continue;
            };
            for copy in &group[1..] {
                out.push(Finding {
                    category: "duplicate",
                    reason: format!(
                        "Same content as {}: archiving deletes the copy (its versions stay).",
                        group[0].path
                    ),
                    score: 1.0,
                    subjects: vec![
                        note_subject(group[0], &doc.content),
                        note_subject(copy, &doc.content),
                    ],
                });
            }
        }
        Ok(out)
    }

    /// The `review_list` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn review_list(&self, req: ReviewReq) -> Result<ReviewInbox> {
        if let Some(c) = req.category.as_deref()
            && !CATEGORIES.contains(&c)
        {
            return Err(ApiError::bad_request(format!(
                "unknown review category {c:?}; use duplicate, contradiction, stale or junk"
            )));
        }
        let limit = req.limit.unwrap_or(200).clamp(1, 1_000) as usize;
        let items: Vec<Item> = self
            .store()
            .items(false)
            .await?
            .into_iter()
            .filter(|i| req.project.is_none() || i.project == req.project)
            .collect();
        let mut unchecked = BTreeSet::new();
        let mut findings = self.item_findings(&items, &mut unchecked).await?;
        findings.extend(self.record_findings(req.project.as_deref()).await?);
        findings.extend(self.note_findings(req.project.as_deref()).await?);
        let kept = self.store().kept_review_entries().await?;
        let mut entries: Vec<ReviewEntry> = findings
            .into_iter()
            .map(Finding::entry)
            .filter(|e| !kept.contains(&e.key))
            .collect();
        let mut seen = HashSet::new();
        entries.retain(|e| seen.insert(e.key.clone()));
        let mut counts = ReviewCounts::default();
        for e in &entries {
            match e.category.as_str() {
                "duplicate" => counts.duplicate += 1,
                "contradiction" => counts.contradiction += 1,
                "stale" => counts.stale += 1,
                _ => counts.junk += 1,
            }
        }
        let order = |c: &str| CATEGORIES.iter().position(|x| *x == c).unwrap_or(9);
        entries.sort_by(|a, b| {
            order(&a.category)
                .cmp(&order(&b.category))
                .then(b.score.total_cmp(&a.score))
                .then(a.key.cmp(&b.key))
        });
        entries.retain(|e| req.category.as_deref().is_none_or(|c| e.category == c));
        entries.truncate(limit);
        let recent = self
            .store()
            .review_actions(20)
            .await?
            .iter()
            .map(action_view)
            .collect();
        Ok(ReviewInbox {
            entries,
            counts,
            recent,
            unchecked_projects: unchecked.into_iter().collect(),
        })
    }

    async fn active_item(&self, id: &str) -> Result<Item> {
        let item = self
            .store()
            .item(&ItemId::new(id))
            .await?
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no item {id}")))?;
        if item.archived || item.superseded_by.is_some() {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!(
                    "item {id} is no longer active (archived or superseded): review the inbox again"
                ),
            ));
        }
        Ok(item)
    }

    async fn note_by_id(&self, id: &str) -> Result<NoteSummary> {
        let list = self
            .notes()?
            .list(&NotesListReq::default())
            .await
            .map_err(crate::notes_api::err)?;
        list.into_iter().find(|n| n.id == id).ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("no note {id} (deleted or moved since): review the inbox again"),
            )
        })
    }

    /// Which subject of a pair the inbox suggests keeping (it lists that one first).
    async fn suggested(&self, category: &str, ids: &[&str]) -> Result<String> {
        if ids.iter().all(|i| i.starts_with("i_")) {
            let a = self.active_item(ids[0]).await?;
            let b = self.active_item(ids[1]).await?;
            let first = if category == "contradiction" {
                believed(&a, &b).0
            } else {
                better(&a, &b).0
            };
            return Ok(first.id.as_str().to_owned());
        }
        if ids.iter().all(|i| i.starts_with("r_")) {
            let mut recs = Vec::new();
            for id in ids {
                let r = self
                    .store()
                    .record(&cairn_core::RecordId::new(*id))
                    .await?
                    .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no record {id}")))?;
                recs.push((r.record.started_at, (*id).to_owned()));
            }
            recs.sort();
            return Ok(recs[0].1.clone());
        }
        let mut notes = Vec::new();
        for id in ids {
            notes.push(self.note_by_id(id).await?);
        }
        notes.sort_by(|a, b| a.updated_at.cmp(&b.updated_at).then(a.path.cmp(&b.path)));
        Ok(notes[0].id.clone())
    }

    /// The `review_act` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn review_act(&self, req: ReviewActReq) -> Result<ReviewActionView> {
        let (category, ids) = parse_key(&req.entry)?;
        let action = req.action.as_str();
        if !["merge", "supersede", "archive", "keep"].contains(&action) {
            return Err(ApiError::bad_request(format!(
                "unknown review action {action:?}; use merge, supersede, archive or keep"
            )));
        }
        // The subject that stays, and the others.
        let (stay, others): (&str, Vec<&str>) = match req.keep.as_deref() {
            Some(k) if ids.len() > 1 => {
                if !ids.contains(&k) {
                    return Err(ApiError::bad_request(format!(
                        "keep {k:?} is not one of this entry's subjects ({})",
                        ids.join(", ")
                    )));
                }
                (k, ids.iter().copied().filter(|i| *i != k).collect())
            }
            _ if ids.len() > 1 => {
                // The one the inbox suggested (its first subject).
                let first = self.suggested(category, &ids).await?;
                let first = ids.iter().copied().find(|i| *i == first).unwrap_or(ids[0]);
                (first, ids.iter().copied().filter(|i| *i != first).collect())
            }
            _ => ("", ids.clone()),
        };
        let records = ids.iter().all(|i| i.starts_with("r_"));
        let notes = !records && ids.iter().all(|i| !i.starts_with("i_"));
        let allowed: &[&str] = match (category, notes || records) {
            ("duplicate", false) => &["merge", "archive", "keep"],
            ("contradiction", false) => &["supersede", "archive", "keep"],
            _ => &["archive", "keep"],
        };
        if !allowed.contains(&action) {
            return Err(ApiError::bad_request(format!(
                "{action} does not apply to a {category} entry of {}; use {}",
                if records {
                    "records"
                } else if notes {
                    "notes"
                } else {
                    "items"
                },
                allowed.join(", ")
            )));
        }
        let mut hidden: Vec<String> = Vec::new();
        let _permit = self.write_permit().await;
        let id = new_action_id()?;
        let reason = |what: &str| format!("review {id}: {what}");
        let mut before: Vec<serde_json::Value> = Vec::new();
        let mut after: Vec<serde_json::Value> = Vec::new();
        let mut edges: Vec<serde_json::Value> = Vec::new();
        let mut deleted_notes: Vec<serde_json::Value> = Vec::new();
        let mut changed: Vec<String> = Vec::new();
        let summary;
        if action == "keep" {
            summary = format!(
                "Kept {} as {} (the entry is hidden).",
                ids.join(" and "),
                if ids.len() > 1 { "they are" } else { "it is" }
            );
        } else if records {
            for r in &others {
                if self
                    .store()
                    .record(&cairn_core::RecordId::new(*r))
                    .await?
                    .is_none()
                {
                    return Err(ApiError::new(ErrorCode::NotFound, format!("no record {r}")));
                }
                hidden.push((*r).to_owned());
            }
            self.store()
                .hide_records(&hidden, "review: duplicate")
                .await?;
            changed.extend(hidden.iter().cloned());
            summary = format!(
                "Archived {} (left out of search and the turn note; the log keeps it).",
                others.join(", ")
            );
        } else if notes {
            for n in &others {
                let note = self.note_by_id(n).await?;
                let del = self
                    .notes()?
                    .delete(
                        &crate::notes_api::owner(),
                        &NoteDeleteReq {
                            note: note_ref(&note),
                            expected_sha256: Some(note.sha256.clone()),
                        },
                    )
                    .await
                    .map_err(crate::notes_api::err)?;
                deleted_notes.push(serde_json::json!({
                    "ref": serde_json::to_value(note_ref(&note)).unwrap_or_default(),
                    "version": del.version.saturating_sub(1),
                    "deleted": del.version,
                }));
                changed.push(note.id.clone());
            }
            self.after_note_change().await;
            summary = format!(
                "Archived note {} (deleted; its versions stay).",
                others.join(", ")
            );
        } else {
            let keep = if stay.is_empty() {
                None
            } else {
                Some(self.active_item(stay).await?)
            };
            let mut gone = Vec::new();
            for o in &others {
                gone.push(self.active_item(o).await?);
            }
            let mut events: Vec<NewItemEvent> = Vec::new();
            // Each of `gone` marked replaced by `by`.
            let superseded = |gone: &[Item], by: &Item, why: &str| -> Vec<NewItemEvent> {
                gone.iter()
                    .map(|o| NewItemEvent {
                        kind: ItemEventKind::Superseded,
                        item: Item {
                            superseded_by: Some(by.id.clone()),
                            ..o.clone()
                        },
                        reason: Some(reason(&format!("{why} {}", by.id.as_str()))),
                    })
                    .collect()
            };
            match (action, &keep) {
                ("merge", Some(k)) => {
                    let mut merged = k.clone();
                    for o in &gone {
                        for s in &o.sources {
                            if !merged.sources.contains(s) {
                                merged.sources.push(s.clone());
                            }
                        }
                        for c in &o.cues {
                            if !merged.cues.contains(c) {
                                merged.cues.push(c.clone());
                            }
                        }
                        for c in &o.concepts {
                            if !merged.concepts.contains(c) {
                                merged.concepts.push(c.clone());
                            }
                        }
                        if !o.body.trim().is_empty() && !merged.body.contains(o.body.trim()) {
                            merged.body =
                                format!("{}\n\n{}", merged.body.trim_end(), o.body.trim());
                        }
                        merged.importance = merged.importance.max(o.importance);
                        merged.provenance =
                            cairn_core::Provenance::combine(merged.provenance, o.provenance);
                        merged.said_at = merged.said_at.max(o.said_at);
                        merged.happened_at = match (merged.happened_at, o.happened_at) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                    }
                    events.push(NewItemEvent {
                        kind: ItemEventKind::Merged,
                        item: merged,
                        reason: Some(reason(&format!("merged {}", others.join(", ")))),
                    });
                    events.extend(superseded(&gone, k, "merged into"));
                    summary = format!(
                        "Merged {} into {}.",
                        named(&gone),
                        named(std::slice::from_ref(k))
                    );
                }
                ("supersede", Some(k)) => {
                    events.extend(superseded(&gone, k, "replaced by"));
                    summary = format!(
                        "{} replaced by {}.",
                        named(&gone),
                        named(std::slice::from_ref(k))
                    );
                }
                _ => {
                    for o in &gone {
                        let mut s = o.clone();
                        s.archived = true;
                        events.push(NewItemEvent {
                            kind: ItemEventKind::Archived,
                            item: s,
                            reason: Some(reason(&format!("archived ({category})"))),
                        });
                    }
                    summary = format!("Archived {}.", named(&gone));
                }
            }
            let mut states: HashMap<String, Item> = HashMap::new();
            if let Some(k) = &keep {
                states.insert(k.id.as_str().to_owned(), k.clone());
            }
            for o in &gone {
                states.insert(o.id.as_str().to_owned(), o.clone());
            }
            for ev in &events {
                let id_str = ev.item.id.as_str().to_owned();
                if let Some(prev) = states.get(&id_str) {
                    before.push(serde_json::to_value(prev).unwrap_or_default());
                }
                let stored = self.store().append_item_event(ev).await?;
                after.push(serde_json::json!({ "id": id_str, "seq": stored.seq }));
                changed.push(id_str);
            }
            if matches!(action, "merge" | "supersede")
                && let Some(k) = &keep
            {
                for o in &gone {
                    self.store()
                        .put_relation(&Relation {
                            from: k.id.clone(),
                            to: o.id.clone(),
                            kind: RelationKind::Supersedes,
                            weight: 1.0,
                        })
                        .await?;
                    edges.push(serde_json::json!([k.id.as_str(), o.id.as_str()]));
                }
            }
        }
        let logged = ReviewAction {
            id,
            at: chrono::Utc::now(),
            entry: key(category, &ids),
            category: category.to_owned(),
            action: action.to_owned(),
            summary,
            detail: serde_json::json!({
                "changed": changed,
                "before": before,
                "after": after,
                "edges": edges,
                "notes": deleted_notes,
                "records": hidden,
            }),
            undone_at: None,
        };
        self.store().append_review_action(&logged).await?;
        Ok(action_view(&logged))
    }

    /// The `review_undo` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn review_undo(&self, req: ReviewUndoReq) -> Result<ReviewActionView> {
        let _permit = self.write_permit().await;
        let a = self
            .store()
            .review_action(&req.action)
            .await?
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::NotFound,
                    format!("no review action {:?}", req.action),
                )
            })?;
        if a.undone_at.is_some() {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("review action {} was already undone", a.id),
            ));
        }
        let bad = |what: &str| {
            ApiError::internal(format!("review action {} is unreadable: {what}", a.id))
        };
        // Refuse before changing anything when an item changed after the action.
        let mut expected: HashMap<String, i64> = HashMap::new();
        for x in a.detail["after"].as_array().into_iter().flatten() {
            let (Some(id), Some(seq)) = (x["id"].as_str(), x["seq"].as_i64()) else {
                return Err(bad("after"));
            };
            expected.insert(id.to_owned(), seq);
        }
        for (id, seq) in &expected {
            let latest = self
                .store()
                .item_history(&ItemId::new(id.as_str()))
                .await?
                .last()
                .map(|e| e.seq);
            if latest != Some(*seq) {
                return Err(ApiError::new(
                    ErrorCode::Conflict,
                    format!(
                        "item {id} changed after this action; undoing it would lose that change (open the item to see its history)"
                    ),
                ));
            }
        }
        for x in a.detail["before"].as_array().into_iter().flatten() {
            let prev: Item = serde_json::from_value(x.clone()).map_err(|e| bad(&e.to_string()))?;
            let now = self.store().item(&prev.id).await?;
            let kind = match now {
                Some(n)
                    if (n.archived || n.superseded_by.is_some())
                        && !prev.archived
                        && prev.superseded_by.is_none() =>
                {
                    ItemEventKind::Restored
                }
                _ => ItemEventKind::Updated,
            };
            self.store()
                .append_item_event(&NewItemEvent {
                    kind,
                    item: prev,
                    reason: Some(format!("review {}: undone", a.id)),
                })
                .await?;
        }
        for e in a.detail["edges"].as_array().into_iter().flatten() {
            let (Some(from), Some(to)) = (e[0].as_str(), e[1].as_str()) else {
                return Err(bad("edges"));
            };
            self.store()
                .delete_relation(
                    &ItemId::new(from),
                    &ItemId::new(to),
                    RelationKind::Supersedes,
                )
                .await?;
        }
        let records: Vec<String> = a.detail["records"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(str::to_owned))
            .collect();
        if !records.is_empty() {
            self.store().unhide_records(&records).await?;
        }
        let mut notes_changed = false;
        for n in a.detail["notes"].as_array().into_iter().flatten() {
            let note: NoteRef =
                serde_json::from_value(n["ref"].clone()).map_err(|e| bad(&e.to_string()))?;
            let version = n["version"].as_u64().ok_or_else(|| bad("notes"))?;
            self.notes()?
                .restore(
                    &crate::notes_api::owner(),
                    &NoteVersionReq {
                        note,
                        version,
                        expected_sha256: None,
                    },
                )
                .await
                .map_err(crate::notes_api::err)?;
            notes_changed = true;
        }
        if notes_changed {
            self.after_note_change().await;
        }
        let at = chrono::Utc::now();
        if !self.store().mark_review_undone(&a.id, &at).await? {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("review action {} was already undone", a.id),
            ));
        }
        Ok(action_view(&ReviewAction {
            undone_at: Some(at),
            ..a
        }))
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

    #[test]
    fn numbers_and_words_tell_a_contradiction_from_a_duplicate() {
        let a = numbers("Staging Postgres listens on 6543 since 2026-05-01.");
        let b = numbers("Staging Postgres listens on 5432 since 2026-05-01.");
        assert_ne!(a, b);
        assert!(a.contains("6543") && a.contains("2026-05-01"));
        assert!(
            numbers("utf8 and sha256 in x86_64 builds").is_empty(),
            "names are not numbers"
        );
        assert_eq!(
            numbers("pinned serde to v1.0.200"),
            numbers("pinned serde to 1.0.200")
        );
        let wa = words("Staging Postgres listens on port 6543");
        let wb = words("staging postgres listens on port 5432");
        assert!(jaccard(&wa, &wb) > CONFLICT_WORDS);
        assert!(jaccard(&wa, &wa) >= DUPLICATE_WORDS);
    }

    fn fact(id: &str, title: &str, summary: &str) -> Item {
        Item {
            id: ItemId::new(id),
            kind: cairn_core::ItemKind::Fact,
            title: title.into(),
            summary: summary.into(),
            body: String::new(),
            cues: vec![],
            concepts: vec![],
            importance: 3,
            certainty: cairn_core::Certainty::Stated,
            project: Some("p".into()),
            sources: vec![],
            happened_at: None,
            said_at: None,
            ended_at: None,
            superseded_by: None,
            archived: false,
            provenance: None,
        }
    }

    #[test]
    fn pairs_are_weighed_among_items_that_share_words_and_marked_ones() {
        let items = vec![
            fact(
                "i_a",
                "Release builds need the locked flag",
                "cargo build --locked in CI",
            ),
            fact(
                "i_b",
                "Release builds need the locked flag",
                "cargo build --locked in CI",
            ),
            fact(
                "i_c",
                "Deploys go out on Tuesdays",
                "after the staging soak passes",
            ),
            fact("i_d", "Lunch order", "pizza from the corner shop"),
        ];
        // i_c's vector equals i_a's, but they share no word: never weighed.
        let v = vec![1.0f32, 0.0, 0.0];
        let vectors: HashMap<String, Vec<f32>> = ["i_a", "i_b", "i_c"]
            .iter()
            .map(|i| ((*i).to_owned(), v.clone()))
            .collect();
        let marked = HashSet::from([ordered("i_d", "i_c")]);
        let found: Vec<(String, Vec<String>)> = pair_findings(&items, &vectors, &marked)
            .into_iter()
            .map(|f| {
                let mut ids: Vec<String> = f.subjects.iter().map(|s| s.id.clone()).collect();
                ids.sort();
                (f.category.to_owned(), ids)
            })
            .collect();
        assert_eq!(
            found,
            vec![
                (
                    "duplicate".to_owned(),
                    vec!["i_a".to_owned(), "i_b".to_owned()]
                ),
                (
                    "contradiction".to_owned(),
                    vec!["i_c".to_owned(), "i_d".to_owned()]
                ),
            ]
        );
    }

    #[test]
    fn keys_are_stable_for_a_pair_and_parse_back() {
        assert_eq!(key("duplicate", &["i_b", "i_a"]), "duplicate:i_a+i_b");
        assert_eq!(key("stale", &["i_c"]), "stale:i_c");
        let (c, ids) = parse_key("duplicate:i_a+i_b").expect("parses");
        assert_eq!((c, ids), ("duplicate", vec!["i_a", "i_b"]));
        for bad in [
            "",
            "duplicate:i_a",
            "stale:i_a+i_b",
            "weird:i_a",
            "junk:",
            "duplicate:i_a+",
        ] {
            assert!(parse_key(bad).is_err(), "{bad}");
        }
    }
}
