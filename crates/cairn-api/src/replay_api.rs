//! The replay (`replay_run`, `replay_latest`): the turn note measured on the user's own
//! captured history. Every captured request in range, oldest first, is asked for its note
//! exactly as its hook would have asked at that moment — its text, its session, framework and
//! project, at its time (`TurnNoteReq::at`, so only what was remembered before it can be
//! shown and dates in it are read against it), logged nowhere (`dry_run`) — and plain search
//! of the request (its top 3, under the same constraints) is asked too, as the baseline.
//!
//! Each request is labelled from what happened next (`docs/replay.md`): an earlier session's
//! record is *needed* when the agent's own prose answer to the request reuses a rare
//! identifier (a path, a symbol, a flag, a version, a port, an environment variable, an error
//! code, a command in backticks) that the record holds and that neither the request, the
//! turn's own tool steps nor anything earlier in its session held. Items sourced from a
//! needed record are needed too. A request whose answer reuses nothing is a no-need request:
//! the right note for it is none.
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use cairn_core::api::{
    Empty, ReplayFigures, ReplayLatest, ReplayReport, ReplayReq, ReplayRow, TurnNoteReq,
    WorkerState,
};
use cairn_core::{ErrorCode, Timestamp};
use cairn_index::TextQuery;

use crate::{ApiError, Result, Service};

/// The worker the replay reports its progress as.
pub(crate) const REPLAY: &str = "replay";
/// An identifier counts as rare — a pointer to the few records holding it — when at most
/// this many records hold it, or at most [`RARE_SHARE`] of all records (whichever is more).
/// A project's main file or `cargo test` is in hundreds of sessions: its reuse says nothing
/// about which earlier one was needed; a port, a flag or a helper's name seen in a handful of
/// records points at those.
pub const RARE_RECORDS: usize = 5;
/// The share of all records an identifier may be found in and still count as rare (0.5 %),
/// so a large store's bound grows with it (50 records of 10,000).
pub const RARE_SHARE: f64 = 0.005;
/// The most records labelled needed for one request: those holding most of the reused
/// identifiers (then the latest).
pub const NEEDED_MAX: usize = 3;
/// Entries of plain search's answer, the baseline (as many as a note shows at most).
pub const BASELINE_TOP: usize = 3;
/// Requests asked at the same time (the note's work is spread over the machine's cores).
const CONCURRENCY: usize = 2;
/// Records read from the store at a time while the identifier index is built.
const PAGE: u64 = 500;
/// The longest identifier kept (characters); longer tokens are data, not names.
const MAX_IDENT: usize = 160;
/// The longest request text a replay row keeps (bytes; the note reads at most 4,096).
const REQUEST_BYTES: usize = 8_192;
/// `errno` names an answer may cite.
const ERRNO: [&str; 24] = [
    "EACCES",
    "EADDRINUSE",
    "EADDRNOTAVAIL",
    "EAGAIN",
    "EBADF",
    "EBUSY",
    "ECONNABORTED",
    "ECONNREFUSED",
    "ECONNRESET",
    "EEXIST",
    "EHOSTUNREACH",
    "EINVAL",
    "EISDIR",
    "EMFILE",
    "ENETUNREACH",
    "ENOENT",
    "ENOMEM",
    "ENOSPC",
    "ENOTDIR",
    "ENOTEMPTY",
    "EPERM",
    "EPIPE",
    "EROFS",
    "ETIMEDOUT",
];

// ───────────────────────────── identifiers ─────────────────────────────

/// Whether `c` ends a token.
fn breaks(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '`' | '"'
                | '\''
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '<'
                | '>'
                | ','
                | ';'
                | '|'
                | '='
                | '*'
                | '!'
                | '?'
                | '\\'
        )
}

fn is_ip(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.') && s.contains('.')
}

fn port_number(s: &str) -> Option<u32> {
    (s.len() >= 2 && s.len() <= 5 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse::<u32>().ok())
        .flatten()
        .filter(|p| (1..=65_535).contains(p))
}

/// `src/main.rs:42:7` → `src/main.rs` (a location's line and column are not its name).
fn strip_line(t: &str) -> &str {
    let mut t = t;
    for _ in 0..2 {
        if let Some((head, tail)) = t.rsplit_once(':')
            && !tail.is_empty()
            && tail.bytes().all(|b| b.is_ascii_digit())
            && !head.is_empty()
        {
            t = head;
        }
    }
    t
}

fn has_letter(s: &str) -> bool {
    s.chars().any(char::is_alphabetic)
}

fn word_chars(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `name.ext`: an extension of 1 to 6 letters or digits, with one letter at least.
fn has_extension(seg: &str) -> bool {
    seg.rsplit_once('.').is_some_and(|(name, ext)| {
        !name.is_empty()
            && (1..=6).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && has_letter(ext)
    })
}

fn is_env_var(t: &str) -> bool {
    let parts: Vec<&str> = t.split('_').collect();
    parts.len() >= 2
        && t.starts_with(|c: char| c.is_ascii_uppercase())
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
}

fn is_snake(t: &str) -> bool {
    let core = t.trim_matches('_');
    let parts: Vec<&str> = core.split('_').collect();
    parts.len() >= 2
        && core.starts_with(|c: char| c.is_ascii_lowercase())
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

fn is_camel(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_lowercase())
        && t.chars().all(|c| c.is_ascii_alphanumeric())
        && t.chars().any(|c| c.is_ascii_uppercase())
}

/// PascalCase with inner capitals (`HashMap`, `JSONParser`), not a capitalised word.
fn is_pascal(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_uppercase())
        && t.chars().all(|c| c.is_ascii_alphanumeric())
        && t.chars().filter(char::is_ascii_uppercase).count() >= 2
        && t.chars().any(|c| c.is_ascii_lowercase())
}

fn is_version(t: &str) -> bool {
    if let Some(rest) = t.strip_prefix('v') {
        return !rest.is_empty()
            && rest
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    }
    let core = t.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() >= 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// An error code: `E0432`, `TS2345`, or an `errno` name.
fn is_error_code(t: &str) -> bool {
    if ERRNO.contains(&t) {
        return true;
    }
    let letters = t.chars().take_while(char::is_ascii_uppercase).count();
    let digits = t.len() - letters;
    (1..=3).contains(&letters)
        && (3..=5).contains(&digits)
        && t[letters..].bytes().all(|b| b.is_ascii_digit())
}

/// A dotted name (`main.rs`, `.env.staging`, `self.store`, `Node.js`), not prose (`e.g`).
fn is_dotted(t: &str) -> bool {
    let t = t.strip_suffix("()").unwrap_or(t);
    let body = t.trim_start_matches('.');
    let parts: Vec<&str> = body.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
        && has_letter(body)
        && parts.iter().any(|p| p.len() >= 2)
        && !matches!(
            body.to_ascii_lowercase().as_str(),
            "e.g" | "i.e" | "a.m" | "p.m"
        )
}

/// A path: rooted (`/etc/x`, `./x`, `~/x`, `../x`), two slashes or more, or a file in a
/// folder (`src/main.rs`); not prose's `and/or`.
fn is_path(t: &str) -> bool {
    if !t.contains('/') || !has_letter(t) {
        return false;
    }
    let rooted = ["/", "./", "../", "~/"].iter().any(|p| t.starts_with(p));
    let last = t.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    rooted || t.matches('/').count() >= 2 || has_extension(last)
}

/// The identifiers of one token (none for a plain word).
fn classify(raw: &str, out: &mut HashSet<String>) {
    let t = raw
        .trim_start_matches([':', '$', '@', '#', '-'].as_slice())
        .trim_end_matches(['.', ',', ':', ';', '/'].as_slice());
    // Flags keep their dashes.
    let flag = raw.trim_end_matches(['.', ',', ':', ';'].as_slice());
    if let Some(name) = flag.strip_prefix("--") {
        let name = name.split('=').next().unwrap_or("");
        if name.len() >= 2
            && name.starts_with(|c: char| c.is_ascii_alphanumeric())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            out.insert(format!("--{name}"));
        }
        return;
    }
    if t.len() < 3 || t.chars().count() > MAX_IDENT {
        // A bare port (`:5433`) is short once its colon is gone.
        if let Some(p) = raw.strip_prefix(':').and_then(port_number) {
            out.insert(format!("port:{p}"));
        }
        return;
    }
    if let Some(p) = raw.strip_prefix(':').and_then(port_number) {
        out.insert(format!("port:{p}"));
        return;
    }
    // A URL: its host's port, and the URL itself.
    if let Some((_, rest)) = t.split_once("://") {
        let host = rest.split('/').next().unwrap_or("");
        if let Some((_, port)) = host.rsplit_once(':')
            && let Some(p) = port_number(port)
        {
            out.insert(format!("port:{p}"));
        }
        if has_letter(rest) {
            out.insert(t.to_owned());
        }
        return;
    }
    // host:port
    if let Some((host, port)) = t.rsplit_once(':')
        && let Some(p) = port_number(port)
        && (host.eq_ignore_ascii_case("localhost") || is_ip(host) || host == "0.0.0.0")
    {
        out.insert(format!("port:{p}"));
        return;
    }
    if t.contains("::") {
        for part in t.split("::") {
            classify(part, out);
        }
        return;
    }
    if let Some((name, version)) = t.split_once('@')
        && !name.is_empty()
        && !version.is_empty()
    {
        classify(name, out);
        classify(version, out);
        return;
    }
    let t = strip_line(t);
    if t.len() < 3 {
        return;
    }
    if is_version(t) || is_error_code(t) || is_env_var(t) {
        out.insert(t.to_owned());
    } else if t.contains('/') {
        if is_path(t) {
            out.insert(t.to_owned());
        }
    } else if t.contains('.') {
        if is_dotted(t) {
            out.insert(t.strip_suffix("()").unwrap_or(t).to_owned());
        }
    } else if word_chars(t) && (is_snake(t) || is_camel(t) || is_pascal(t)) {
        out.insert(t.to_owned());
    }
}

/// A command's text as an identifier: its words joined by single spaces (two words at least,
/// at most [`MAX_IDENT`] characters).
fn command(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let joined = words.join(" ");
    (words.len() >= 2 && joined.chars().count() <= MAX_IDENT && has_letter(&joined))
        .then_some(joined)
}

/// Every identifier of a text (see the module docs and `docs/replay.md`).
pub(crate) fn identifiers(text: &str, out: &mut HashSet<String>) {
    // Commands in backticks (single backticks on one line; fenced blocks are code, read as
    // tokens below).
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            continue;
        }
        let mut rest = line;
        while let Some(open) = rest.find('`') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('`') else { break };
            if let Some(c) = command(&after[..close]) {
                out.insert(c);
            }
            rest = &after[close + 1..];
        }
    }
    let tokens: Vec<&str> = text.split(breaks).filter(|t| !t.is_empty()).collect();
    for (i, tok) in tokens.iter().enumerate() {
        classify(tok, out);
        // "port 5433", "HTTP 409"
        if let Some(next) = tokens.get(i + 1) {
            let next = next.trim_end_matches(['.', ',', ':', ';'].as_slice());
            let word = tok.trim_end_matches(['.', ',', ':', ';'].as_slice());
            if word.eq_ignore_ascii_case("port")
                && let Some(p) = port_number(next)
            {
                out.insert(format!("port:{p}"));
            }
            if word.eq_ignore_ascii_case("http")
                && next.len() == 3
                && next.starts_with(['1', '2', '3', '4', '5'])
                && next.bytes().all(|b| b.is_ascii_digit())
            {
                out.insert(format!("HTTP {next}"));
            }
        }
    }
}

/// A request's text as the record's content has it: the assistant's prose (text steps), and
/// everything of its tool steps (their inputs and outputs).
fn steps(content: &serde_json::Value) -> (String, String) {
    let mut prose = String::new();
    let mut tools = String::new();
    for s in content["steps"].as_array().into_iter().flatten() {
        match s["type"].as_str() {
            Some("text") => {
                prose.push_str(s["text"].as_str().unwrap_or(""));
                prose.push('\n');
            }
            Some("tool") => {
                match &s["input"] {
                    serde_json::Value::String(t) => tools.push_str(t),
                    other => tools.push_str(&other.to_string()),
                }
                tools.push('\n');
                tools.push_str(s["output"].as_str().unwrap_or(""));
                tools.push('\n');
            }
            _ => {}
        }
    }
    (prose, tools)
}

/// The commands a turn's tool steps ran (a shell tool's `command`, as a string or as the last
/// word of an argument list), as identifiers.
fn tool_commands(content: &serde_json::Value, out: &mut HashSet<String>) {
    for s in content["steps"].as_array().into_iter().flatten() {
        if s["type"].as_str() != Some("tool") {
            continue;
        }
        let cmd = match &s["input"]["command"] {
            serde_json::Value::String(c) => Some(c.as_str()),
            serde_json::Value::Array(a) => a.last().and_then(|v| v.as_str()),
            _ => None,
        };
        if let Some(c) = cmd.and_then(command) {
            out.insert(c);
        }
    }
}

// ───────────────────────────── the index ─────────────────────────────

/// One record of the store, as the replay keeps it.
struct Rec {
    id: String,
    framework: String,
    session_id: String,
    /// The session, interned (framework and id).
    session: u32,
    project: Option<String>,
    cwd: Option<String>,
    at: Timestamp,
    /// For a request in range: its text, the identifiers of its prose answer, and those of
    /// the request and its own tool steps.
    asked: Option<Asked>,
}

struct Asked {
    request: String,
    answer: Vec<u32>,
    own: HashSet<u32>,
}

/// Every record's identifiers, once per run: identifier → the records holding it.
#[derive(Default)]
struct Index {
    recs: Vec<Rec>,
    names: HashMap<String, u32>,
    words: Vec<String>,
    holders: Vec<Vec<u32>>,
    sessions: HashMap<(String, String), u32>,
    by_id: HashMap<String, u32>,
}

impl Index {
    fn intern(&mut self, name: String) -> u32 {
        if let Some(&i) = self.names.get(&name) {
            return i;
        }
        let i = u32::try_from(self.words.len()).unwrap_or(u32::MAX);
        self.words.push(name.clone());
        self.names.insert(name, i);
        self.holders.push(Vec::new());
        i
    }

    /// Adds one record; `asked` says whether it is a request to replay.
    fn add(&mut self, r: &cairn_core::Record, asked: bool) {
        let rec = &r.record;
        let idx = u32::try_from(self.recs.len()).unwrap_or(u32::MAX);
        let mut held = HashSet::new();
        identifiers(&rec.text, &mut held);
        tool_commands(&rec.content, &mut held);
        let asked = asked.then(|| {
            let (prose, tools) = steps(&rec.content);
            let mut answer = HashSet::new();
            identifiers(&prose, &mut answer);
            let mut own = HashSet::new();
            identifiers(&rec.request, &mut own);
            identifiers(&tools, &mut own);
            tool_commands(&rec.content, &mut own);
            (answer, own)
        });
        // What the answer says is the record's too (its text holds it).
        if let Some((answer, _)) = &asked {
            held.extend(answer.iter().cloned());
        }
        for name in held {
            let w = self.intern(name);
            self.holders[w as usize].push(idx);
        }
        let asked = asked.map(|(answer, own)| {
            let mut request = rec.request.clone();
            if request.len() > REQUEST_BYTES {
                let mut end = REQUEST_BYTES;
                while !request.is_char_boundary(end) {
                    end -= 1;
                }
                request.truncate(end);
            }
            Asked {
                request,
                answer: answer.into_iter().map(|n| self.intern(n)).collect(),
                own: own.into_iter().map(|n| self.intern(n)).collect(),
            }
        });
        let key = (rec.framework.clone(), rec.session_id.clone());
        let next = u32::try_from(self.sessions.len()).unwrap_or(u32::MAX);
        let session = *self.sessions.entry(key).or_insert(next);
        self.by_id.insert(rec.id.as_str().to_owned(), idx);
        self.recs.push(Rec {
            id: rec.id.as_str().to_owned(),
            framework: rec.framework.clone(),
            session_id: rec.session_id.clone(),
            session,
            project: rec.project.clone(),
            cwd: rec.cwd.clone(),
            at: rec.started_at,
            asked,
        });
    }

    /// The most records an identifier may be in and count as rare.
    fn rare_max(&self) -> usize {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let share = (self.recs.len() as f64 * RARE_SHARE).floor() as usize;
        RARE_RECORDS.max(share)
    }

    /// The label of request `q`: the earlier-session records it needed (at most
    /// [`NEEDED_MAX`]) and the identifiers its answer reused from them.
    fn label(&self, q: usize, hidden: &HashSet<String>) -> (Vec<u32>, Vec<String>) {
        let me = &self.recs[q];
        let Some(asked) = &me.asked else {
            return (Vec::new(), Vec::new());
        };
        let rare = self.rare_max();
        let mut votes: HashMap<u32, usize> = HashMap::new();
        let mut reused = Vec::new();
        for &w in &asked.answer {
            if asked.own.contains(&w) {
                continue;
            }
            let holders = &self.holders[w as usize];
            if holders.len() > rare {
                continue;
            }
            // Said earlier in the same session: not a memory of another one.
            if holders.iter().any(|&h| {
                let r = &self.recs[h as usize];
                r.session == me.session && r.at < me.at
            }) {
                continue;
            }
            let earlier: Vec<u32> = holders
                .iter()
                .copied()
                .filter(|&h| {
                    let r = &self.recs[h as usize];
                    r.session != me.session && r.at < me.at && !hidden.contains(&r.id)
                })
                .collect();
            if earlier.is_empty() {
                continue;
            }
            reused.push(self.words[w as usize].clone());
            for h in earlier {
                *votes.entry(h).or_default() += 1;
            }
        }
        let mut needed: Vec<(u32, usize)> = votes.into_iter().collect();
        needed.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then(self.recs[b.0 as usize].at.cmp(&self.recs[a.0 as usize].at))
                .then(a.0.cmp(&b.0))
        });
        needed.truncate(NEEDED_MAX);
        reused.sort();
        (needed.into_iter().map(|(h, _)| h).collect(), reused)
    }
}

/// The replay's labels from use for every request among `records` (a whole store's current
/// records, in any order): each request's record id with the earlier-session records its
/// answer reused (empty: it needed none). The same rule `cairn eval replay` applies, for
/// evaluations that compare it with labels made another way.
pub fn labels_from_use(records: &[cairn_core::Record]) -> HashMap<String, Vec<String>> {
    let mut index = Index::default();
    for r in records {
        index.add(r, true);
    }
    let hidden = HashSet::new();
    (0..index.recs.len())
        .map(|q| {
            let (needed, _) = index.label(q, &hidden);
            (
                index.recs[q].id.clone(),
                needed
                    .into_iter()
                    .map(|h| index.recs[h as usize].id.clone())
                    .collect(),
            )
        })
        .collect()
}

// ───────────────────────────── figures ─────────────────────────────

fn share(n: u64, of: u64) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)]
    (of > 0).then(|| n as f64 / of as f64)
}

fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted.get(i.min(sorted.len() - 1)).copied()
}

/// What one way of choosing entries did over the requests.
#[derive(Default)]
struct Tally {
    requests: u64,
    needed: u64,
    hits: u64,
    shown: u64,
    shown_needed: u64,
    no_need: u64,
    silent_no_need: u64,
    noted: u64,
    ms: Vec<f64>,
}

impl Tally {
    fn add(&mut self, needed: &HashSet<String>, shown: &[String], ms: f64) {
        self.requests += 1;
        self.ms.push(ms);
        let good = shown.iter().filter(|s| needed.contains(*s)).count() as u64;
        self.shown += shown.len() as u64;
        self.shown_needed += good;
        if !shown.is_empty() {
            self.noted += 1;
        }
        if needed.is_empty() {
            self.no_need += 1;
            if shown.is_empty() {
                self.silent_no_need += 1;
            }
        } else {
            self.needed += 1;
            if good > 0 {
                self.hits += 1;
            }
        }
    }

    fn figures(mut self) -> ReplayFigures {
        self.ms.sort_by(f64::total_cmp);
        ReplayFigures {
            requests: self.requests,
            need: share(self.needed, self.requests),
            hit_rate: share(self.hits, self.needed),
            precision: share(self.shown_needed, self.shown),
            silence_no_need: share(self.silent_no_need, self.no_need),
            note_rate: share(self.noted, self.requests),
            p50_ms: percentile(&self.ms, 0.5),
            p95_ms: percentile(&self.ms, 0.95),
        }
    }
}

/// One request to ask, and what it needed.
struct Question {
    /// The request's record id.
    id: String,
    req: TurnNoteReq,
    at: Timestamp,
    own_ids: HashSet<String>,
    needed: HashSet<String>,
    needed_list: Vec<String>,
    reused: Vec<String>,
}

/// What asking one request gave.
struct Answer {
    shown: Vec<String>,
    note_ms: f64,
    baseline: Vec<String>,
    baseline_ms: f64,
}

fn rfc3339(t: &Timestamp) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl Service {
    /// The `replay_run` method (see the module docs); its progress is on the worker board as
    /// `replay`, and its figures (without rows) are kept as the latest replay.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn replay_run(&self, req: ReplayReq) -> Result<ReplayReport> {
        if !self.memory_enabled() {
            return Err(ApiError::new(
                ErrorCode::MemoryOff,
                "memory is off: the turn note is stopped, so there is nothing to replay",
            ));
        }
        let since = req
            .since
            .as_deref()
            .map(|d| crate::service::parse_date(d, false))
            .transpose()?;
        let until = req
            .until
            .as_deref()
            .map(|d| crate::service::parse_date(d, true))
            .transpose()?;
        if let (Some(s), Some(u)) = (since, until)
            && s > u
        {
            return Err(ApiError::bad_request(format!(
                "the range is empty: since {} is after until {}",
                rfc3339(&s),
                rfc3339(&u)
            )));
        }
        if req.limit == Some(0) {
            return Err(ApiError::bad_request(
                "limit 0 asks for no request; give 1 or more",
            ));
        }
        let project = req.project.clone().filter(|p| !p.trim().is_empty());
        let board = self.workers().clone();
        board.report(
            REPLAY,
            WorkerState::Running,
            Some("reading the captured requests".into()),
            Some(0.0),
        );
        let result = self.replay(&req, since, until, project, &board).await;
        match &result {
            Ok(r) => board.report(
                REPLAY,
                WorkerState::Idle,
                Some(format!("replayed {} requests", r.note.requests)),
                None,
            ),
            Err(e) => board.report(
                REPLAY,
                WorkerState::Failed,
                Some(format!("the replay failed: {}", e.message)),
                None,
            ),
        }
        result
    }

    async fn replay(
        &self,
        req: &ReplayReq,
        since: Option<Timestamp>,
        until: Option<Timestamp>,
        project: Option<String>,
        board: &crate::WorkerBoard,
    ) -> Result<ReplayReport> {
        let started = Instant::now();
        let in_range = |r: &cairn_core::NewRecord| {
            since.is_none_or(|s| r.started_at >= s)
                && until.is_none_or(|u| r.started_at <= u)
                && project.as_ref().is_none_or(|p| {
                    r.project.as_deref() == Some(p.as_str()) || r.cwd.as_deref() == Some(p)
                })
                && !r.request.trim().is_empty()
        };
        // The identifier index, a page of records at a time (their texts are not kept).
        let mut index = Index::default();
        let mut after = 0i64;
        loop {
            let page = self.store().records_page(after, PAGE).await?;
            let Some(last) = page.last().map(|(r, _)| r.seq) else {
                break;
            };
            after = last;
            let wanted: Vec<bool> = page.iter().map(|(r, _)| in_range(&r.record)).collect();
            index = tokio::task::spawn_blocking(move || {
                for ((r, _), asked) in page.iter().zip(wanted) {
                    index.add(r, asked);
                }
                index
            })
            .await
            .map_err(|e| ApiError::internal(format!("the identifier index failed: {e}")))?;
            board.report(
                REPLAY,
                WorkerState::Running,
                Some(format!(
                    "reading the captured requests ({} records)",
                    index.recs.len()
                )),
                Some(0.0),
            );
        }
        let hidden = self.store().hidden_records().await?;
        // Items sourced from each record, with the time each became known.
        let items = self.store().items(false).await?;
        let times = self.item_times().await?;
        let mut items_of: HashMap<String, Vec<(String, Timestamp)>> = HashMap::new();
        for i in &items {
            let Some(t) = times.get(i.id.as_str()) else {
                continue;
            };
            for s in &i.sources {
                items_of
                    .entry(s.as_str().to_owned())
                    .or_default()
                    .push((i.id.as_str().to_owned(), *t));
            }
        }
        let mut sessions: HashMap<u32, Vec<u32>> = HashMap::new();
        for (i, r) in index.recs.iter().enumerate() {
            sessions
                .entry(r.session)
                .or_default()
                .push(u32::try_from(i).unwrap_or(u32::MAX));
        }
        // The requests, oldest first: the latest `limit` of them.
        let mut order: Vec<u32> = (0..index.recs.len())
            .filter(|&i| index.recs[i].asked.is_some())
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        order.sort_by(|&a, &b| {
            let (ra, rb) = (&index.recs[a as usize], &index.recs[b as usize]);
            ra.at.cmp(&rb.at).then(ra.id.cmp(&rb.id))
        });
        if let Some(n) = req.limit {
            let n = n as usize;
            if order.len() > n {
                order.drain(..order.len() - n);
            }
        }
        let questions: Vec<Question> = order
            .iter()
            .map(|&q| {
                let r = &index.recs[q as usize];
                let (needed_recs, reused) = index.label(q as usize, &hidden);
                let mut needed_list: Vec<String> = needed_recs
                    .iter()
                    .map(|&h| index.recs[h as usize].id.clone())
                    .collect();
                let mut item_ids: Vec<String> = needed_list
                    .iter()
                    .flat_map(|id| items_of.get(id).into_iter().flatten())
                    .filter(|(_, t)| *t < r.at)
                    .map(|(id, _)| id.clone())
                    .collect();
                item_ids.sort();
                item_ids.dedup();
                needed_list.extend(item_ids);
                let own_ids = sessions
                    .get(&r.session)
                    .into_iter()
                    .flatten()
                    .map(|&i| index.recs[i as usize].id.clone())
                    .collect();
                let request = r
                    .asked
                    .as_ref()
                    .map(|a| a.request.clone())
                    .unwrap_or_default();
                Question {
                    id: r.id.clone(),
                    req: TurnNoteReq {
                        framework: r.framework.clone(),
                        project: r.project.clone().or_else(|| r.cwd.clone()),
                        session_id: Some(r.session_id.clone()),
                        turn_id: None,
                        prompt: request,
                        context: Vec::new(),
                        dry_run: true,
                        at: Some(rfc3339(&r.at)),
                    },
                    at: r.at,
                    own_ids,
                    needed: needed_list.iter().cloned().collect(),
                    needed_list,
                    reused,
                }
            })
            .collect();
        let records = index.recs.len() as u64;
        let rare_max = index.rare_max() as u64;
        drop(index);
        // Ask each request, a few at a time.
        let total = questions.len();
        let questions = Arc::new(questions);
        let mut answers: Vec<Option<Answer>> = (0..total).map(|_| None).collect();
        let mut running = tokio::task::JoinSet::new();
        let mut next = 0usize;
        let mut done = 0usize;
        while done < total {
            while next < total && running.len() < CONCURRENCY {
                let service = self.clone();
                let qs = questions.clone();
                let i = next;
                running.spawn(async move { (i, service.replay_one(&qs[i]).await) });
                next += 1;
            }
            let Some(joined) = running.join_next().await else {
                break;
            };
            let (i, answer) =
                joined.map_err(|e| ApiError::internal(format!("a replayed turn failed: {e}")))?;
            let answer = answer.map_err(|e| {
                ApiError::new(
                    e.code,
                    format!(
                        "replaying request {} failed: {}",
                        questions[i].id, e.message
                    ),
                )
            })?;
            answers[i] = Some(answer);
            done += 1;
            #[allow(clippy::cast_precision_loss)]
            let p = done as f32 / total.max(1) as f32;
            board.report(
                REPLAY,
                WorkerState::Running,
                Some(format!("replayed {done}/{total} requests")),
                Some(p),
            );
        }
        let mut note = Tally::default();
        let mut base = Tally::default();
        let mut rows = Vec::new();
        for (q, a) in questions.iter().zip(answers) {
            let Some(a) = a else { continue };
            note.add(&q.needed, &a.shown, a.note_ms);
            base.add(&q.needed, &a.baseline, a.baseline_ms);
            if req.rows {
                rows.push(ReplayRow {
                    id: q.id.clone(),
                    request: q.req.prompt.clone(),
                    at: rfc3339(&q.at),
                    session: q.req.session_id.clone().unwrap_or_default(),
                    framework: q.req.framework.clone(),
                    needed: q.needed_list.clone(),
                    reused: q.reused.clone(),
                    shown: a.shown,
                    baseline: a.baseline,
                });
            }
        }
        let needed = note.needed;
        let report = ReplayReport {
            ran_at: rfc3339(&chrono::Utc::now()),
            since: req.since.clone(),
            until: req.until.clone(),
            project: req.project.clone(),
            note: note.figures(),
            baseline: base.figures(),
            needed,
            rare_max,
            records,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            rows: Vec::new(),
        };
        let path = self.paths().data.join("replay.json");
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| ApiError::internal(format!("cannot write the replay's figures: {e}")))?;
        if let Err(e) = fs_err::write(&path, text) {
            tracing::warn!(error = %e, "cannot keep the replay's figures");
        }
        Ok(ReplayReport { rows, ..report })
    }

    /// One request asked: its note, and plain search's top 3 under the same constraints.
    async fn replay_one(&self, q: &Question) -> Result<Answer> {
        let (note, _) = self.turn_note_whole(q.req.clone()).await?;
        let shown = note.entries.iter().map(|e| e.id.clone()).collect();
        let started = Instant::now();
        let recall = self
            .recall_at(
                Some(q.at),
                q.req.session_id.clone(),
                q.own_ids.clone(),
                q.req.project.clone(),
            )
            .await?;
        let mut text = q.req.prompt.clone();
        if text.len() > 4096 {
            let mut end = 4096;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        let tq = TextQuery {
            text,
            project: None,
            framework: None,
            since: None,
            until: None,
            exclude_session: q.req.session_id.clone(),
            before: None,
            bare: false,
            limit: BASELINE_TOP * 2,
            context_boost: None,
        };
        let rerank = self.reranker().await.is_some();
        let (hits, _) = self
            .retrieve(
                recall.corpora.clone(),
                tq,
                cairn_recall::SearchMode::Hybrid,
                rerank,
                cairn_recall::Tuning::default(),
                Some(q.at),
            )
            .await?;
        let baseline = hits
            .iter()
            .filter(|h| recall.shows(h))
            .filter(|h| match &recall.items {
                Some((at, index)) if *at == h.corpus => index.item(&h.hit.record_id).is_some(),
                _ => true,
            })
            .take(BASELINE_TOP)
            .map(|h| h.hit.record_id.clone())
            .collect();
        Ok(Answer {
            shown,
            note_ms: f64::from(note.latency_ms),
            baseline,
            baseline_ms: started.elapsed().as_secs_f64() * 1000.0,
        })
    }

    /// The `replay_latest` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn replay_latest(&self, _: Empty) -> Result<ReplayLatest> {
        let path = self.paths().data.join("replay.json");
        let report = match fs_err::read_to_string(&path) {
            Ok(t) => serde_json::from_str::<ReplayReport>(&t).ok(),
            Err(_) => None,
        };
        Ok(ReplayLatest { report })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(text: &str) -> Vec<String> {
        let mut out = HashSet::new();
        identifiers(text, &mut out);
        let mut v: Vec<String> = out.into_iter().collect();
        v.sort();
        v
    }

    #[test]
    fn identifiers_of_each_kind_are_found_and_prose_is_not() {
        let text = "Staging Postgres listens on port 6543; I set DATABASE_URL in .env.staging \
                    and src/db/pool.rs (see pool.rs:42). Call `cargo test -p cairn-api` with \
                    --nocapture, then parse_config() and TextIndex::holds_word via self.store. \
                    Bumped serde to 1.0.200 and node to v18; rustc said E0432 and the fetch \
                    failed with ECONNREFUSED at http://localhost:5433/db (HTTP 409). \
                    The user said hello, e.g. nothing and/or everything. useState too.";
        let got = ids(text);
        for want in [
            "port:6543",
            "DATABASE_URL",
            ".env.staging",
            "src/db/pool.rs",
            "pool.rs",
            "cargo test -p cairn-api",
            "--nocapture",
            "parse_config",
            "TextIndex",
            "holds_word",
            "self.store",
            "1.0.200",
            "v18",
            "E0432",
            "ECONNREFUSED",
            "port:5433",
            "http://localhost:5433/db",
            "HTTP 409",
            "useState",
        ] {
            assert!(
                got.contains(&want.to_owned()),
                "{want} missing from {got:?}"
            );
        }
        for not in [
            "Staging", "Postgres", "hello", "e.g", "and/or", "nothing", "user",
        ] {
            assert!(!got.contains(&not.to_owned()), "{not} found in {got:?}");
        }
    }

    #[test]
    fn times_and_line_numbers_are_not_ports() {
        let got = ids("at 10:30 we looked at main.rs:120 and localhost:8080");
        assert!(got.contains(&"port:8080".to_owned()), "{got:?}");
        assert!(
            !got.iter().any(|g| g == "port:30" || g == "port:120"),
            "{got:?}"
        );
        assert!(got.contains(&"main.rs".to_owned()), "{got:?}");
    }

    fn rec(
        id: &str,
        session: &str,
        minute: i64,
        request: &str,
        answer: &str,
    ) -> cairn_core::Record {
        let at =
            chrono::DateTime::from_timestamp(1_780_000_000 + minute * 60, 0).unwrap_or_default();
        cairn_core::Record {
            seq: minute,
            captured_at: at,
            record: cairn_core::NewRecord {
                id: cairn_core::RecordId::new(id),
                framework: "claude-code".into(),
                session_id: session.into(),
                project: None,
                cwd: None,
                model: None,
                outcome: cairn_core::Outcome::Success,
                started_at: at,
                ended_at: None,
                request: request.into(),
                author: None,
                text: format!("{request}\n\n{answer}"),
                content: serde_json::json!({"steps": [{"type": "text", "text": answer}]}),
                source: None,
            },
        }
    }

    #[test]
    fn a_rare_identifier_reused_from_an_earlier_session_labels_its_record() {
        let mut index = Index::default();
        let recs = [
            rec(
                "r1",
                "s1",
                1,
                "set up postgres",
                "It listens on port 5433 now.",
            ),
            rec(
                "r2",
                "s1",
                2,
                "and the pool?",
                "The pool lives in src/db/pool.rs.",
            ),
            rec("r3", "s2", 3, "unrelated", "Fixed the typo in README.md."),
            // Said earlier in its own session: not a memory of another one.
            rec(
                "r4",
                "s3",
                4,
                "what port?",
                "I think README.md mentions it.",
            ),
            rec(
                "r5",
                "s3",
                5,
                "connect the worker",
                "Use port 5433 in src/db/pool.rs; README.md too.",
            ),
            // Named in the request itself: not reused from memory.
            rec("r6", "s4", 6, "is port 5433 right?", "Yes, port 5433."),
            // Captured after the request: never a candidate.
            rec("r7", "s5", 7, "later", "Port 5433 again in src/db/pool.rs."),
        ];
        for r in &recs {
            index.add(r, true);
        }
        let hidden = HashSet::new();
        let (needed, reused) = index.label(4, &hidden);
        let needed: Vec<&str> = needed
            .iter()
            .map(|&h| index.recs[h as usize].id.as_str())
            .collect();
        assert_eq!(needed, vec!["r2", "r1"]);
        assert_eq!(reused, vec!["port:5433", "src/db/pool.rs"]);
        let (needed, _) = index.label(5, &hidden);
        assert!(needed.is_empty(), "named in the request: {needed:?}");
        let (needed, _) = index.label(2, &hidden);
        assert!(needed.is_empty(), "nothing earlier: {needed:?}");
    }
}
