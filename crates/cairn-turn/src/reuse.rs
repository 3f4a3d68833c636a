//! What an answer reused: the rule of labels from use, shared by the replay's labels
//! ([`crate::replay`]) and the outcome of each entry a turn note showed
//! ([`crate::outcomes`]).
//!
//! An identifier is a name a memory would carry: a path, a symbol, a flag, a version, a port,
//! an environment variable, an error code, a command in backticks ([`identifiers`]). An answer
//! *reused* one when its prose says it, neither its request nor its own tool steps held it,
//! nothing earlier in its session said it, and it is rare: at most [`rare_max`] records of
//! the store hold it ([`reused`]). Prose and plain words are never identifiers; a name found
//! in hundreds of sessions points at none of them.
use std::collections::HashSet;

/// An identifier counts as rare — a pointer to the few records holding it — when at most
/// this many records hold it, or at most [`RARE_SHARE`] of all records (whichever is more).
/// A project's main file or `cargo test` is in hundreds of sessions: its reuse says nothing
/// about which earlier one was needed; a port, a flag or a helper's name seen in a handful of
/// records points at those.
pub const RARE_RECORDS: usize = 5;
/// The share of all records an identifier may be found in and still count as rare (0.5 %),
/// so a large store's bound grows with it (50 records of 10,000).
pub const RARE_SHARE: f64 = 0.005;
/// The longest identifier kept (characters); longer tokens are data, not names.
const MAX_IDENT: usize = 160;
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

/// The most records an identifier may be in and still count as rare, in a store of
/// `records` records: [`RARE_RECORDS`], or [`RARE_SHARE`] of them when that is more.
pub(crate) fn rare_max(records: usize) -> usize {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let share = (records as f64 * RARE_SHARE).floor() as usize;
    RARE_RECORDS.max(share)
}

/// The identifiers among `answer` (those of an answer's prose) that it reused, in their
/// order: each that the turn did not hold itself (`own`: its request and its own tool steps),
/// that is rare (`holders`, the records holding it, at most `rare`), and that nothing earlier
/// in the answer's session said (`said_before`). The checks run in that order, so `holders`
/// is asked only of what the turn did not hold, and `said_before` only of rare ones.
pub(crate) fn reused<T: Copy>(
    answer: impl IntoIterator<Item = T>,
    own: impl Fn(T) -> bool,
    holders: impl Fn(T) -> usize,
    rare: usize,
    said_before: impl Fn(T) -> bool,
) -> impl Iterator<Item = T> {
    answer
        .into_iter()
        .filter(move |&w| !own(w) && holders(w) <= rare && !said_before(w))
}

/// The identifiers a record holds: those of its text and the commands its tool steps ran.
pub(crate) fn held(rec: &cairn_core::NewRecord) -> HashSet<String> {
    let mut out = HashSet::new();
    identifiers(&rec.text, &mut out);
    tool_commands(&rec.content, &mut out);
    out
}

/// A captured turn as the rule reads it: the identifiers of its answer's prose (the agent's
/// text steps), and those the turn held itself (its request, its tool steps' inputs and
/// outputs, the commands they ran).
pub(crate) fn answer_and_own(rec: &cairn_core::NewRecord) -> (HashSet<String>, HashSet<String>) {
    let (prose, tools) = steps(&rec.content);
    let mut answer = HashSet::new();
    identifiers(&prose, &mut answer);
    let mut own = HashSet::new();
    identifiers(&rec.request, &mut own);
    identifiers(&tools, &mut own);
    tool_commands(&rec.content, &mut own);
    (answer, own)
}

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

    #[test]
    fn the_rare_bound_grows_with_the_store() {
        assert_eq!(rare_max(0), RARE_RECORDS);
        assert_eq!(rare_max(1_199), RARE_RECORDS);
        assert_eq!(rare_max(1_999), 9);
        assert_eq!(rare_max(10_000), 50);
    }

    #[test]
    fn an_answer_reused_what_it_did_not_hold_that_is_rare_and_new_to_its_session() {
        let rec = crate::testkit::record(
            "r_1",
            "s",
            0,
            "why does the worker fail against staging? see worker.rs",
            "",
            serde_json::json!({"steps": [
                {"type": "tool", "name": "Bash", "input": {"command": "grep -rn PORT src/"},
                 "output": "src/config.rs: PORT_FALLBACK = 5432"},
                {"type": "text", "text": "Staging listens on port 6543 (DATABASE_URL in \
                  .env.staging), not PORT_FALLBACK; worker.rs reads it. Also `cargo test` \
                  passes, and common_helper is fine."},
            ]}),
        )
        .record;
        let (answer, own) = answer_and_own(&rec);
        for w in [
            "port:6543",
            "DATABASE_URL",
            ".env.staging",
            "PORT_FALLBACK",
            "worker.rs",
        ] {
            assert!(answer.contains(w), "{w} missing from {answer:?}");
        }
        // The request and the tool steps are the turn's own.
        for w in [
            "worker.rs",
            "PORT_FALLBACK",
            "src/config.rs",
            "grep -rn PORT src/",
        ] {
            assert!(own.contains(w), "{w} missing from {own:?}");
        }
        let holders = |w: &str| match w {
            "common_helper" => 400,
            _ => 2,
        };
        let before: HashSet<&str> = [".env.staging"].into();
        let mut got: Vec<&str> = reused(
            answer.iter().map(String::as_str),
            |w| own.contains(w),
            holders,
            rare_max(1_000),
            |w| before.contains(w),
        )
        .collect();
        got.sort_unstable();
        // Not the turn's own (worker.rs, PORT_FALLBACK), not common (common_helper), not said
        // before in its session (.env.staging); a plain command is no name.
        assert_eq!(got, vec!["DATABASE_URL", "cargo test", "port:6543"]);
    }
}
