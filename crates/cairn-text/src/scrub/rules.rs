//! The rule table: one regex per known credential format, plus the contextual rules.
//!
//! Conventions:
//! - A pattern's named group `s` is the part to redact; without it, the whole match.
//! - `\b` is rewritten to the ASCII-only `(?-u:\b)` so the fast DFA engines also run on
//!   non-ASCII text; `\w` and `\d` become their ASCII classes.
//! - Alphabets end in a greedy `{n,}` rather than an exact count where the provider may grow
//!   the format; exact counts are bounded by `\b`.
//! - Order is priority: when two rules match the same span, the earlier kind is reported.

use regex::{Captures, Regex};

use super::{Hit, KEYED_SECRET, keyed};

/// A rule's own decision on a match: `None` rejects, `Some((kind, start, end))` redacts.
type Decide = fn(&str, &Captures<'_>) -> Option<(&'static str, usize, usize)>;

/// What a rule does with a match.
#[derive(Clone, Copy)]
enum Check {
    /// Redact it (group `s`, else the whole match).
    Plain,
    /// Redact it if it holds both an ASCII letter and an ASCII digit.
    Mixed,
    /// Decide with a function.
    Custom(Decide),
    /// Decide with a function that may redact several spans of one match (the values of a
    /// `Cookie:` header).
    Multi(DecideMany),
}

/// A rule's decision on a match that may redact several spans: it pushes each
/// `(kind, start, end)`.
type DecideMany = fn(&str, &Captures<'_>, &mut Vec<(&'static str, usize, usize)>);

struct Spec {
    kind: &'static str,
    /// Other kinds a `Custom` check may report.
    alt: &'static [&'static str],
    pattern: &'static str,
    check: Check,
    /// What the text must hold for the pattern to match at all.
    pre: Pre,
}

/// A cheap test that lets a rule skip a text its regex cannot match: for patterns that give
/// the regex engine no literal to search for, which would otherwise scan every byte.
#[derive(Clone, Copy)]
pub(super) enum Pre {
    /// No test: the regex's own literal prefilter does the work.
    Any,
    /// The text holds a run of 32 or more hex digits.
    HexRun,
}

/// What one scan knows about its text, computed on first use and shared by the rules.
pub(super) struct Facts<'t> {
    text: &'t str,
    hex_run: std::cell::OnceCell<bool>,
}

impl<'t> Facts<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        Self {
            text,
            hex_run: std::cell::OnceCell::new(),
        }
    }

    fn allows(&self, pre: Pre) -> bool {
        match pre {
            Pre::Any => true,
            Pre::HexRun => *self.hex_run.get_or_init(|| has_hex_run(self.text)),
        }
    }
}

/// Whether `text` holds a run of 32 or more hex digits. Probing one byte in 32 skips text
/// without one far faster than a regex scan (the same trick as the high-entropy scan).
fn has_hex_run(text: &str) -> bool {
    const RUN: usize = 32;
    let b = text.as_bytes();
    // Invariant: `i == 0` or `b[i - 1]` is not a hex digit.
    let mut i = 0;
    while i + RUN <= b.len() {
        let probe = i + RUN - 1;
        if !b[probe].is_ascii_hexdigit() {
            i = probe + 1;
            continue;
        }
        let mut start = probe;
        while start > i && b[start - 1].is_ascii_hexdigit() {
            start -= 1;
        }
        let mut end = probe + 1;
        while end < b.len() && b[end].is_ascii_hexdigit() {
            end += 1;
        }
        if end - start >= RUN {
            return true;
        }
        i = end + 1;
    }
    false
}

const fn spec(kind: &'static str, pattern: &'static str, check: Check) -> Spec {
    Spec {
        kind,
        alt: &[],
        pattern,
        check,
        pre: Pre::Any,
    }
}

/// `spec` that runs only on a text that passes `pre`.
const fn spec_if(pre: Pre, kind: &'static str, pattern: &'static str, check: Check) -> Spec {
    Spec {
        kind,
        alt: &[],
        pattern,
        check,
        pre,
    }
}

/// One compiled rule.
pub(super) struct Rule {
    kind: &'static str,
    alt: &'static [&'static str],
    re: Regex,
    check: Check,
    pre: Pre,
}

impl Rule {
    /// Every kind this rule can report.
    pub(super) fn kinds(&self) -> impl Iterator<Item = &'static str> + '_ {
        std::iter::once(self.kind).chain(self.alt.iter().copied())
    }

    /// Pushes this rule's hits in `text`.
    pub(super) fn find(&self, facts: &Facts<'_>, priority: usize, hits: &mut Vec<Hit>) {
        if !facts.allows(self.pre) {
            return;
        }
        let text = facts.text;
        let mut found: Vec<(&'static str, usize, usize)> = Vec::new();
        for caps in self.re.captures_iter(text) {
            let Some(whole) = caps.name("s").or_else(|| caps.get(0)) else {
                continue;
            };
            match self.check {
                Check::Plain => found.push((self.kind, whole.start(), whole.end())),
                Check::Mixed => {
                    if has_letter_and_digit(whole.as_str()) {
                        found.push((self.kind, whole.start(), whole.end()));
                    }
                }
                Check::Custom(f) => found.extend(f(text, &caps)),
                Check::Multi(f) => f(text, &caps, &mut found),
            }
            for (kind, start, end) in found.drain(..) {
                let Some(secret) = text.get(start..end) else {
                    continue;
                };
                if start < end && !secret.contains("[REDACTED:") {
                    hits.push(Hit {
                        kind,
                        start,
                        end,
                        priority,
                    });
                }
            }
        }
    }
}

/// Compiles a built-in pattern. They are constants covered by tests, so a failure is a bug.
pub(super) fn compile(pattern: &str) -> Regex {
    // ASCII classes: Unicode `\w`/`\d` make every automaton far bigger for no gain here.
    let pattern = pattern
        .replace(r"\b", r"(?-u:\b)")
        .replace(r"\w", "[A-Za-z0-9_]")
        .replace(r"\d", "[0-9]");
    // Every built-in pattern is compiled by the tests (`Scrubber::new`), so this cannot fail
    // at run time.
    Regex::new(&pattern).expect("built-in scrub pattern compiles")
}

/// The built-in rules, in priority order.
pub(super) fn builtin() -> Vec<Rule> {
    SPECS
        .iter()
        .map(|s| Rule {
            kind: s.kind,
            alt: s.alt,
            re: compile(s.pattern),
            check: s.check,
            pre: s.pre,
        })
        .collect()
}

pub(super) fn has_letter_and_digit(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
}

fn group<'t>(caps: &Captures<'t>) -> Option<regex::Match<'t>> {
    caps.name("s").or_else(|| caps.get(0))
}

/// The byte before `at`, if any.
fn byte_before(text: &str, at: usize) -> Option<u8> {
    at.checked_sub(1)
        .and_then(|i| text.as_bytes().get(i).copied())
}

/// JWT: the header must decode to a JSON object (`eyJ`), and the token must not be the tail
/// of a longer word. Unsigned tokens (`alg: none`) need a JSON payload too.
fn check_jwt(text: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = group(caps)?;
    if byte_before(text, m.start()).is_some_and(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let mut parts = m.as_str().splitn(3, '.');
    let (_, payload, sig) = (parts.next()?, parts.next()?, parts.next().unwrap_or(""));
    (payload.starts_with("eyJ") || sig.len() >= 16).then(|| ("jwt", m.start(), m.end()))
}

/// AWS secret access keys: exactly 40 base64 characters, mixed.
fn check_aws_secret(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = group(caps)?;
    let s = m.as_str();
    let ok = s.len() == 40
        && s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes().any(|b| b.is_ascii_lowercase())
        && s.bytes().any(|b| b.is_ascii_digit());
    ok.then(|| ("aws-secret-access-key", m.start(), m.end()))
}

/// Google API keys are exactly `AIza` + 35.
fn check_google_api_key(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = group(caps)?;
    (m.as_str().len() == 39).then(|| ("google-api-key", m.start(), m.end()))
}

/// Google OAuth access (`ya29.`) and refresh (`1//0…`) tokens; a refresh token must not
/// be the tail of a path or a number.
fn check_google_oauth(text: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = group(caps)?;
    if byte_before(text, m.start()).is_some_and(|b| b.is_ascii_alphanumeric() || b == b'/') {
        return None;
    }
    has_letter_and_digit(m.as_str()).then(|| ("google-oauth-token", m.start(), m.end()))
}

/// Telegram bot tokens: `<bot id>:<35 chars>`, the secret half mixed.
fn check_telegram(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = group(caps)?;
    let secret = m.as_str().split_once(':')?.1;
    let ok = secret.bytes().any(|b| b.is_ascii_uppercase())
        && secret.bytes().any(|b| b.is_ascii_lowercase());
    ok.then(|| ("telegram-bot-token", m.start(), m.end()))
}

/// Discord bot tokens: three dot-separated parts; the first is a base64 user id, so it holds
/// a digit, and the whole must not be a dotted name.
fn check_discord(text: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = group(caps)?;
    if byte_before(text, m.start()).is_some_and(|b| b == b'.' || b == b'/') {
        return None;
    }
    let s = m.as_str();
    let ok = has_letter_and_digit(s.split('.').next()?)
        && s.bytes().filter(u8::is_ascii_digit).count() >= 4;
    ok.then(|| ("discord-bot-token", m.start(), m.end()))
}

const DB_SCHEMES: &[&str] = &[
    "postgres",
    "postgresql",
    "postgis",
    "pgsql",
    "mysql",
    "mysql2",
    "mysqlx",
    "mariadb",
    "mongodb",
    "redis",
    "rediss",
    "valkey",
    "amqp",
    "amqps",
    "mssql",
    "sqlserver",
    "oracle",
    "db2",
    "clickhouse",
    "cockroachdb",
    "couchdb",
    "couchbase",
    "cassandra",
    "neo4j",
    "bolt",
    "memcached",
    "nats",
    "kafka",
    "snowflake",
    "influxdb",
    "arangodb",
    "rethinkdb",
    "ldap",
    "ldaps",
    "mqtt",
    "mqtts",
    "stomp",
    "sqlalchemy",
    "timescaledb",
    "surrealdb",
    "questdb",
    "vertica",
    "presto",
    "trino",
    "hive",
    "firebird",
];

/// Passwords in URLs: `scheme://user:PASSWORD@host`. Only the password is redacted.
fn check_url_password(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let pw = caps.name("s")?;
    let user = caps.name("user").map_or("", |m| m.as_str());
    if keyed::is_placeholder(pw.as_str()) || keyed::is_placeholder_word(pw.as_str()) {
        return None;
    }
    // `http://1000:1000@…` and the like are not credentials.
    if user.bytes().all(|b| b.is_ascii_digit()) && pw.as_str().bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scheme = caps
        .name("scheme")
        .map_or("", |m| m.as_str())
        .to_ascii_lowercase();
    let base = scheme.split('+').next().unwrap_or("");
    let kind = if DB_SCHEMES.contains(&base) {
        "connection-string-password"
    } else {
        "url-password"
    };
    Some((kind, pw.start(), pw.end()))
}

/// A credential after an auth scheme or `curl -u user:`: anything that is not a placeholder.
/// Returns the span without trailing sentence punctuation.
fn auth_value(m: regex::Match<'_>) -> Option<(usize, usize)> {
    let s = m.as_str().trim_end_matches(['.', ',']);
    if s.len() < 6 || keyed::is_placeholder(s) || keyed::is_placeholder_word(s) {
        return None;
    }
    Some((m.start(), m.start() + s.len()))
}

/// A bare `Bearer <token>` outside a header: the token must look like one.
fn check_bare_bearer(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = group(caps)?;
    let s = m.as_str().trim_end_matches(['.', ',']);
    if !has_letter_and_digit(s) || keyed::is_placeholder(s) {
        return None;
    }
    Some(("bearer-token", m.start(), m.start() + s.len()))
}

fn check_keyed(text: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    keyed::check_assignment(text, caps).map(|(s, e)| (KEYED_SECRET, s, e))
}

fn check_keyed_flag(text: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    keyed::check_flag(text, caps).map(|(s, e)| (KEYED_SECRET, s, e))
}

fn check_keyed_value(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = group(caps)?;
    keyed::literal_is_secret(m.as_str(), true).then(|| (KEYED_SECRET, m.start(), m.end()))
}

/// The table. Keep it sorted by specificity: exact provider formats first, then contextual
/// provider rules, then URLs and headers, then labelled values.
const SPECS: &[Spec] = &[
    // --- Key material ---------------------------------------------------------------------
    spec(
        "private-key",
        // The whole block (its body never holds `-----`, so a block cannot run into the next
        // one); when the END line is missing (truncated output), the header and every base64
        // line after it.
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:(?:[^-]|-{1,4}[^-])*-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:(?:\s|\\[rn])+(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\r\n\\]*))*)",
        Check::Plain,
    ),
    spec(
        "age-secret-key",
        r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
        Check::Plain,
    ),
    // --- AI providers ---------------------------------------------------------------------
    spec(
        "anthropic-admin-key",
        r"\bsk-ant-admin\d{2}-[A-Za-z0-9_-]{32,}",
        Check::Plain,
    ),
    spec(
        "anthropic-oauth-token",
        r"\bsk-ant-o(?:at|rt)\d{2}-[A-Za-z0-9_-]{32,}",
        Check::Plain,
    ),
    spec(
        "anthropic-api-key",
        r"\bsk-ant-[a-z]{2,10}\d{0,3}-[A-Za-z0-9_-]{32,}",
        Check::Plain,
    ),
    spec(
        "openai-admin-key",
        r"\bsk-admin-[A-Za-z0-9_-]{20,}",
        Check::Mixed,
    ),
    spec(
        "openai-api-key",
        r"\bsk-(?:proj|svcacct|None)-[A-Za-z0-9_-]{20,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b",
        Check::Mixed,
    ),
    spec(
        "openrouter-api-key",
        r"\bsk-or-v1-[0-9a-f]{64}\b",
        Check::Plain,
    ),
    // Other `sk-` keys of OpenAI-compatible providers (DeepSeek, Moonshot, DashScope, …).
    spec("sk-api-key", r"\bsk-[A-Za-z0-9]{32,}\b", Check::Mixed),
    spec(
        "huggingface-token",
        r"\bhf_[A-Za-z0-9]{30,}\b|\bapi_org_[A-Za-z]{34}\b",
        Check::Plain,
    ),
    spec("groq-api-key", r"\bgsk_[A-Za-z0-9]{48,}\b", Check::Mixed),
    spec("xai-api-key", r"\bxai-[A-Za-z0-9]{60,}\b", Check::Mixed),
    spec(
        "perplexity-api-key",
        r"\bpplx-[A-Za-z0-9]{40,}\b",
        Check::Mixed,
    ),
    spec(
        "replicate-api-token",
        r"\br8_[A-Za-z0-9]{30,}\b",
        Check::Mixed,
    ),
    spec(
        "together-api-key",
        r"\btgp_v1_[A-Za-z0-9_-]{30,}",
        Check::Mixed,
    ),
    spec(
        "fireworks-api-key",
        r"\bfw_[A-Za-z0-9]{20,}\b",
        Check::Mixed,
    ),
    spec("cerebras-api-key", r"\bcsk-[a-z0-9]{40,}\b", Check::Mixed),
    spec(
        "nvidia-api-key",
        r"\bnvapi-[A-Za-z0-9_-]{40,}",
        Check::Mixed,
    ),
    spec(
        "langsmith-api-key",
        r"\blsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}\b",
        Check::Plain,
    ),
    spec(
        "pinecone-api-key",
        r"\bpcsk_[A-Za-z0-9_]{40,}\b",
        Check::Mixed,
    ),
    // --- Clouds ---------------------------------------------------------------------------
    spec(
        "aws-access-key-id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
        Check::Mixed,
    ),
    spec(
        "aws-bedrock-api-key",
        r"\bABSK[A-Za-z0-9+/]{109,269}={0,2}",
        Check::Mixed,
    ),
    Spec {
        kind: "aws-secret-access-key",
        alt: &[],
        pattern: r#"(?i)(?:\baws[\w.-]{0,30}?(?:secret|sk)[\w.-]{0,20}|\bsecret[_-]?access[_-]?key[\w.-]{0,10})\\?["']?\s*(?:=>|:=|[:=])?\s*\\?["']?(?P<s>(?-i:[A-Za-z0-9/+]{40,}))"#,
        check: Check::Custom(check_aws_secret),
        pre: Pre::Any,
    },
    Spec {
        kind: "google-api-key",
        alt: &[],
        pattern: r"\bAIza[0-9A-Za-z_-]{35,}",
        check: Check::Custom(check_google_api_key),
        pre: Pre::Any,
    },
    spec(
        "google-oauth-client-secret",
        r"\bGOCSPX-[A-Za-z0-9_-]{24,}",
        Check::Plain,
    ),
    Spec {
        kind: "google-oauth-token",
        alt: &[],
        pattern: r"\bya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{30,}",
        check: Check::Custom(check_google_oauth),
        pre: Pre::Any,
    },
    spec(
        "azure-storage-key",
        r"(?i)\b(?:AccountKey|SharedAccessKey)\s*=\s*(?P<s>(?-i:[A-Za-z0-9+/]{20,}={0,2}))",
        Check::Mixed,
    ),
    spec(
        "azure-sas-signature",
        r"[?&]sig=(?P<s>[A-Za-z0-9%+/]{30,}(?:=|%3[dD]){0,2})",
        Check::Plain,
    ),
    Spec {
        kind: "azure-ad-client-secret",
        alt: &[],
        // Entra ID (Azure AD) client secrets: 3 characters, a digit, `Q~`, 31–34 more.
        pattern: r"[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}",
        check: Check::Custom(check_azure_ad),
        pre: Pre::Any,
    },
    spec(
        "alibaba-access-key-id",
        r"\bLTAI[A-Za-z0-9]{20}\b",
        Check::Mixed,
    ),
    spec(
        "cloudflare-origin-ca-key",
        r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b",
        Check::Plain,
    ),
    spec(
        "openshift-token",
        r"\bsha256~[A-Za-z0-9_-]{43}(?:[^A-Za-z0-9_-]|$)",
        Check::Custom(check_openshift),
    ),
    spec(
        "yandex-api-key",
        r"\bAQVN[A-Za-z0-9_-]{35,38}\b",
        Check::Mixed,
    ),
    spec(
        "digitalocean-token",
        r"\bdo[opr]_v1_[a-f0-9]{64}\b",
        Check::Plain,
    ),
    spec(
        "heroku-api-key",
        r#"\bHRKU-[A-Za-z0-9_-]{40,}|(?i)\bheroku[\w.-]{0,20}?(?:key|token)\\?["']?\s*[:=]\s*\\?["']?(?P<s>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b"#,
        Check::Plain,
    ),
    spec(
        "databricks-token",
        r"\bdapi[0-9a-f]{32}(?:-\d)?\b",
        Check::Plain,
    ),
    spec(
        "vault-token",
        r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}",
        Check::Mixed,
    ),
    spec(
        "doppler-token",
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,}\b",
        Check::Plain,
    ),
    spec(
        "terraform-token",
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
        Check::Plain,
    ),
    spec("pulumi-token", r"\bpul-[0-9a-f]{40}\b", Check::Plain),
    spec(
        "supabase-token",
        r"\bsbp_[0-9a-f]{40}\b|\bsb_secret_[A-Za-z0-9_-]{20,}",
        Check::Plain,
    ),
    spec(
        "fly-token",
        r"\bFlyV1 fm[12]_[A-Za-z0-9+/=_,-]{40,}|\bfo1_[A-Za-z0-9_-]{40,}",
        Check::Plain,
    ),
    spec(
        "tailscale-key",
        r"\btskey-[a-z]+-[A-Za-z0-9_]{6,}-[A-Za-z0-9_]{16,}",
        Check::Mixed,
    ),
    spec(
        "planetscale-token",
        r"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}",
        Check::Mixed,
    ),
    spec(
        "grafana-token",
        r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,400}={0,2}|\beyJrIjoi[A-Za-z0-9]{70,400}={0,2}",
        Check::Mixed,
    ),
    spec(
        "dynatrace-token",
        r"\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b",
        Check::Plain,
    ),
    spec("prefect-api-key", r"\bpnu_[A-Za-z0-9]{36}\b", Check::Mixed),
    spec(
        "onepassword-secret-key",
        r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b",
        Check::Mixed,
    ),
    // --- Code hosting and package registries -----------------------------------------------
    spec(
        "github-token",
        r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
        Check::Mixed,
    ),
    spec(
        "github-fine-grained-pat",
        r"\bgithub_pat_[A-Za-z0-9_]{50,}\b",
        Check::Mixed,
    ),
    spec(
        "gitlab-token",
        r"\bgl(?:pat|dt|rt|rtr|ptt|cbt|imt|oas|soat|ft|agent|ffct|wt)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*|\bGR1348941[A-Za-z0-9_-]{20,}",
        Check::Mixed,
    ),
    spec("npm-token", r"\bnpm_[A-Za-z0-9]{36,}\b", Check::Mixed),
    spec(
        "pypi-token",
        r"\bpypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}",
        Check::Plain,
    ),
    spec(
        "dockerhub-pat",
        r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{24,}",
        Check::Mixed,
    ),
    spec(
        "postman-api-key",
        r"\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}\b",
        Check::Plain,
    ),
    spec(
        "rubygems-api-key",
        r"\brubygems_[a-f0-9]{48}\b",
        Check::Plain,
    ),
    spec("clojars-token", r"\bCLOJARS_[a-z0-9]{60}\b", Check::Mixed),
    spec(
        "artifactory-token",
        r"\bAKCp[A-Za-z0-9]{69}\b|\bcmVmd[A-Za-z0-9]{59}\b",
        Check::Mixed,
    ),
    spec(
        "sourcegraph-token",
        r"\bsgp_(?:[a-f0-9]{16}_|local_)?[a-f0-9]{40}\b",
        Check::Plain,
    ),
    spec(
        "sidekiq-secret",
        r#"(?i)\bBUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM\\?["']?\s*[:=]\s*\\?["']?(?P<s>(?-i:[a-f0-9]{8}:[a-f0-9]{8}))\b"#,
        Check::Plain,
    ),
    // --- Chat, mail, payments, SaaS ----------------------------------------------------------
    spec(
        "slack-token",
        r"\bxox[abeoprs]-[0-9A-Za-z-]{20,}",
        Check::Mixed,
    ),
    spec(
        "slack-app-token",
        r"\bxapp-\d-[0-9A-Za-z-]{20,}",
        Check::Mixed,
    ),
    spec(
        "slack-webhook-url",
        r"\bhooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{20,})",
        Check::Mixed,
    ),
    spec(
        "discord-webhook-url",
        r"\bdiscord(?:app)?\.com/api/webhooks/\d{5,}/(?P<s>[A-Za-z0-9_-]{40,})",
        Check::Plain,
    ),
    Spec {
        kind: "discord-bot-token",
        alt: &[],
        pattern: r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b",
        check: Check::Custom(check_discord),
        pre: Pre::Any,
    },
    Spec {
        kind: "telegram-bot-token",
        alt: &[],
        // The secret half of every current token starts with `AA`; requiring it gives the
        // regex a literal to search for.
        pattern: r"(?:\b|bot)(?P<s>\d{8,10}:AA[A-Za-z0-9_-]{33})\b",
        check: Check::Custom(check_telegram),
        pre: Pre::Any,
    },
    spec(
        "stripe-secret-key",
        r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}\b",
        Check::Mixed,
    ),
    spec(
        "stripe-webhook-secret",
        r"\bwhsec_[A-Za-z0-9+/=]{24,}",
        Check::Mixed,
    ),
    spec(
        "square-token",
        r"\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,}|\bEAAA[A-Za-z0-9_+-]{60,}",
        Check::Mixed,
    ),
    spec(
        "braintree-access-token",
        r"\baccess_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}\b",
        Check::Plain,
    ),
    spec(
        "shopify-token",
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        Check::Plain,
    ),
    spec(
        "sendgrid-api-key",
        r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,}",
        Check::Mixed,
    ),
    spec(
        "mailgun-api-key",
        r"(?i)(?:mailgun[\s\S]{0,80}?|\bapi:)(?P<s>(?-i:\bkey-[0-9a-f]{32}\b))",
        Check::Plain,
    ),
    spec("twilio-api-key", r"\bSK[0-9a-f]{32}\b", Check::Mixed),
    spec_if(
        Pre::HexRun,
        "twilio-auth-token",
        concat!(
            r#"(?i)\btwilio[\w .-]{0,30}?(?:auth[ _.-]?token|secret|token)\b"#,
            r#"\\?["']?(?:[ \t]*(?:=>|:=|[:=])[ \t]*|[ \t]+(?:is[ \t]+)?)\\?["']?"#,
            r"(?P<s>(?-i:[0-9a-f]{32}))\b"
        ),
        Check::Mixed,
    ),
    spec_if(
        Pre::HexRun,
        "datadog-api-key",
        concat!(
            r#"(?i)\b(?:datadog|dd)[\w .-]{0,30}?(?:api|app|application)[ _.-]?(?:key|token)\b"#,
            r#"\\?["']?(?:[ \t]*(?:=>|:=|[:=])[ \t]*|[ \t]+(?:is[ \t]+)?)\\?["']?"#,
            r"(?P<s>(?-i:[0-9a-f]{40}|[0-9a-f]{32}))\b"
        ),
        Check::Mixed,
    ),
    spec_if(
        Pre::HexRun,
        "mailchimp-api-key",
        r"\b[0-9a-f]{32}-us\d{1,2}\b",
        Check::Mixed,
    ),
    spec(
        "sendinblue-api-key",
        r"\bx(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}\b",
        Check::Plain,
    ),
    spec(
        "posthog-api-key",
        r"\bphx_[A-Za-z0-9_]{43,48}\b",
        Check::Mixed,
    ),
    spec(
        "mapbox-secret-token",
        r"\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}",
        Check::Plain,
    ),
    spec(
        "facebook-access-token",
        r"\bEAA[CM][A-Za-z0-9]{100,}\b",
        Check::Mixed,
    ),
    spec(
        "easypost-api-key",
        r"\bEZ[AT]K[A-Za-z0-9]{54}\b",
        Check::Mixed,
    ),
    spec(
        "shippo-api-token",
        r"\bshippo_(?:live|test)_[a-fA-F0-9]{40}\b",
        Check::Plain,
    ),
    spec(
        "duffel-api-token",
        r"\bduffel_(?:test|live)_[A-Za-z0-9_=-]{43}",
        Check::Mixed,
    ),
    spec(
        "flutterwave-secret-key",
        r"\bFLWSECK(?:_TEST)?-[a-h0-9]{32}-X\b",
        Check::Plain,
    ),
    spec("frameio-token", r"\bfio-u-[A-Za-z0-9_=-]{64}", Check::Mixed),
    spec(
        "airtable-token",
        r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b",
        Check::Plain,
    ),
    spec(
        "infracost-api-key",
        r"\bico-[A-Za-z0-9]{32}\b",
        Check::Mixed,
    ),
    Spec {
        kind: "maxmind-license-key",
        alt: &[],
        // `<6>_<29>_mmk`: the regex finds the suffix (a literal it can search for), the check
        // reads the 36 characters before it.
        pattern: r"_mmk\b",
        check: Check::Custom(check_maxmind),
        pre: Pre::Any,
    },
    spec("readme-api-key", r"\brdme_[a-z0-9]{70}\b", Check::Mixed),
    spec("scalingo-token", r"\btk-us-[A-Za-z0-9_-]{48}", Check::Mixed),
    spec("typeform-token", r"\btfp_[A-Za-z0-9_.=-]{59}", Check::Mixed),
    spec(
        "teams-webhook-url",
        r"(?:\.webhook\.office\.com/webhookb2|\boutlook\.office(?:365)?\.com/webhook)/(?P<s>[A-Za-z0-9@/-]{40,})",
        Check::Mixed,
    ),
    spec(
        "atlassian-api-token",
        r"\bATATT3[A-Za-z0-9_=-]{100,}",
        Check::Mixed,
    ),
    spec(
        "linear-api-key",
        r"\blin_(?:api|oauth)_[A-Za-z0-9]{32,}\b",
        Check::Mixed,
    ),
    spec(
        "notion-token",
        r"\bsecret_[A-Za-z0-9]{43}\b|\bntn_[A-Za-z0-9]{40,}\b",
        Check::Mixed,
    ),
    spec(
        "new-relic-key",
        r"\bNRAK-[A-Z0-9]{27}\b|\bNRII-[A-Za-z0-9_-]{32}",
        Check::Mixed,
    ),
    spec(
        "sentry-auth-token",
        r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,}",
        Check::Mixed,
    ),
    spec(
        "sentry-dsn-secret",
        r"\bhttps?://[0-9a-f]{32}:(?P<s>[0-9a-f]{32})@[A-Za-z0-9.-]*sentry",
        Check::Plain,
    ),
    spec(
        "onepassword-token",
        r"\bops_eyJ[A-Za-z0-9+/=_-]{100,}",
        Check::Plain,
    ),
    // --- Generic token shapes --------------------------------------------------------------
    Spec {
        kind: "jwt",
        alt: &[],
        pattern: r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        check: Check::Custom(check_jwt),
        pre: Pre::Any,
    },
    // --- URLs and headers ------------------------------------------------------------------
    Spec {
        kind: "connection-string-password",
        alt: &["url-password"],
        pattern: r#"(?i)\b(?P<scheme>[a-z][a-z0-9+.-]{1,30})://(?P<user>[^\s:@/?#"'<>{}|\\^`\[\]]*):(?P<s>[^\s@/?#"'<>{}|\\^`]+)@[a-z0-9\[_]"#,
        check: Check::Custom(check_url_password),
        pre: Pre::Any,
    },
    Spec {
        kind: "bearer-token",
        alt: &["basic-auth"],
        pattern: r#"(?i)\b(?:proxy-)?authorization\\?["']?\s*[:=]\s*\\?["']?(?:(?:bearer|token)\s+(?P<s>[A-Za-z0-9._~+/=-]{6,})|(?P<basic>basic)\s+(?P<b>[A-Za-z0-9+/]{6,}={0,2}))"#,
        check: Check::Custom(check_header),
        pre: Pre::Any,
    },
    Spec {
        kind: "bearer-token",
        alt: &[],
        pattern: r"\bBearer\s+(?P<s>[A-Za-z0-9._~+/-]{16,}=*)",
        check: Check::Custom(check_bare_bearer),
        pre: Pre::Any,
    },
    Spec {
        kind: "basic-auth",
        alt: &[],
        // Python: `auth=("user", "pass")`, `HTTPBasicAuth("user", "pass")`.
        pattern: r#"(?:\bauth\s*=\s*\(|\bHTTP(?:Basic|Digest)Auth\()\s*["'][^"'\r\n]*["']\s*,\s*(?:"(?P<s>[^"\r\n]+)"|'(?P<q>[^'\r\n]+)')"#,
        check: Check::Custom(check_python_auth),
        pre: Pre::Any,
    },
    Spec {
        kind: "basic-auth",
        alt: &[],
        pattern: r#"\bcurl\b[^\n]*?\s(?:-u|--user)(?:\s+|=)["']?[^\s:"']*:(?P<s>[^\s"']+)"#,
        check: Check::Custom(check_curl_user),
        pre: Pre::Any,
    },
    Spec {
        kind: "cookie",
        alt: &[],
        // `Cookie:` / `Set-Cookie:` headers (also as JSON or dict keys), `curl -b`/`--cookie`.
        pattern: r#"(?i)(?:\b(?P<set>set-)?cookie\\?["']?[ \t]*:[ \t]*\\?["']?|\bcurl\b[^\n]*?\s(?:-b|--cookie)(?:[ \t]+|=)["']?)(?P<v>[^\r\n"'\\]+)"#,
        check: Check::Multi(check_cookie),
        pre: Pre::Any,
    },
    // --- Labelled values -------------------------------------------------------------------
    Spec {
        kind: KEYED_SECRET,
        alt: &[],
        pattern: keyed::ASSIGNMENT,
        check: Check::Custom(check_keyed),
        pre: Pre::Any,
    },
    Spec {
        kind: KEYED_SECRET,
        alt: &[],
        pattern: keyed::FLAG,
        check: Check::Custom(check_keyed_flag),
        pre: Pre::Any,
    },
    Spec {
        kind: KEYED_SECRET,
        alt: &[],
        pattern: r"(?i)<(?:[A-Za-z0-9_.:-]*(?:password|passwd|secret|token|apikey|api_key|credential))>(?P<s>[^<\r\n]+)</",
        check: Check::Custom(check_keyed_value),
        pre: Pre::Any,
    },
    Spec {
        kind: KEYED_SECRET,
        alt: &[],
        // Prose: "the password is Xy7!pQ2v", "API key: …" is covered by the assignment rule.
        pattern: r"(?i)\b(?:password|passphrase|passwd)\s+(?:is|was|=)\s+(?P<s>[^\s,;]+)",
        check: Check::Custom(check_prose_password),
        pre: Pre::Any,
    },
    Spec {
        kind: KEYED_SECRET,
        alt: &[],
        // netrc: `machine host login me password s3cret`; mysql -pSECRET; sshpass -p SECRET.
        pattern: r#"\b(?:machine\s+\S+|default)\s+login\s+\S+\s+password\s+(?P<s>[^\s"']+)|\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p(?P<m>[^\s'"-][^\s'"]*)|\bsshpass\s+-p\s*["']?(?P<p>[^\s"']+)"#,
        check: Check::Custom(check_cli_password),
        pre: Pre::Any,
    },
    Spec {
        kind: KEYED_SECRET,
        alt: &[],
        // docker login -p SECRET; redis-cli -a SECRET; ldapsearch … -w SECRET.
        pattern: r#"\bdocker\s+login\b[^\n|;&]*?\s-p[ \t]*["']?(?P<s>[^\s"'-][^\s"']*)|\bredis-cli\b[^\n|;&]*?\s-a[ \t]+["']?(?P<m>[^\s"'-][^\s"']*)|\bldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn|exop)\b[^\n|;&]*?\s-w[ \t]+["']?(?P<p>[^\s"'-][^\s"']*)"#,
        check: Check::Custom(check_cli_password),
        pre: Pre::Any,
    },
    Spec {
        kind: KEYED_SECRET,
        alt: &[],
        // .NET config: `<add key="ClearTextPassword" value="…" />`.
        pattern: r#"(?i)<add\s+key\s*=\s*"(?P<k>[^"\r\n]{1,60})"\s+value\s*=\s*"(?P<s>[^"\r\n]+)""#,
        check: Check::Custom(check_add_key),
        pre: Pre::Any,
    },
    Spec {
        kind: KEYED_SECRET,
        alt: &[],
        // A hex secret right after words that name one, in prose or a log line: "auth token
        // 3f9c…", "API key: 3f9c…". Hex of a digest length is otherwise kept (commits, sums).
        pattern: concat!(
            r#"(?i)\b(?:(?:auth|access|refresh|bearer|api|session|csrf|app)[ _-]?token|token|(?:api|app|application|secret|access|private|license|licence|master|encryption|signing)[ _-]?key|(?:(?:client|api|app|webhook|signing|shared)[ _-]?)?secret|password|passphrase)"#,
            r#"\\?["']?(?:[ \t]*(?:=>|:=|[:=])[ \t]*|[ \t]+(?:is[ \t]+)?)\\?["'`]?"#,
            r"(?P<s>(?-i:[0-9a-f]{32,}|[0-9A-F]{32,}))\b"
        ),
        check: Check::Mixed,
        pre: Pre::HexRun,
    },
    Spec {
        kind: "pgpass-password",
        alt: &[],
        // `.pgpass` lines: `host:port:database:user:password`.
        pattern: r#"(?m)(?:^|[ \t"'>])(?P<host>\*|[A-Za-z0-9][A-Za-z0-9._-]*):(?P<port>\*|\d{1,5}):(?P<db>[^:\s"']+):(?P<user>[^:\s"']+):(?P<s>[^\s"']+)"#,
        check: Check::Custom(check_pgpass),
        pre: Pre::Any,
    },
];

/// `Authorization: Bearer …` / `Basic …` / `token …`.
fn check_header(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = caps.name("s").or_else(|| caps.name("b"))?;
    let kind = if caps.name("basic").is_some() {
        "basic-auth"
    } else {
        "bearer-token"
    };
    auth_value(m).map(|(s, e)| (kind, s, e))
}

/// `curl -u user:password`.
fn check_curl_user(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    auth_value(caps.name("s")?).map(|(s, e)| ("basic-auth", s, e))
}

fn check_python_auth(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = caps.name("s").or_else(|| caps.name("q"))?;
    let s = m.as_str();
    (s.len() >= 4 && !keyed::is_placeholder(s) && !keyed::is_placeholder_word(s))
        .then(|| ("basic-auth", m.start(), m.end()))
}

/// In prose only a value that cannot be a word counts: it has a digit or a symbol.
fn check_prose_password(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = caps.name("s")?;
    let s = m.as_str().trim_end_matches(['.', '!', '?', ')', '"', '\'']);
    let s = s.trim_start_matches(['"', '\'', '`']);
    let start =
        m.start() + (m.as_str().len() - m.as_str().trim_start_matches(['"', '\'', '`']).len());
    let odd = s.bytes().any(|b| !b.is_ascii_alphabetic());
    (s.len() >= 6 && odd && keyed::literal_is_secret(s, false))
        .then(|| (KEYED_SECRET, start, start + s.len()))
}

fn check_cli_password(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = caps
        .name("s")
        .or_else(|| caps.name("m"))
        .or_else(|| caps.name("p"))?;
    let s = m.as_str();
    (s.len() >= 4 && !keyed::is_placeholder(s) && !keyed::is_placeholder_word(s))
        .then(|| (KEYED_SECRET, m.start(), m.end()))
}

/// MaxMind license keys: `_mmk` after 6 alphanumerics, `_` and 29 alphanumerics, which
/// start a word.
fn check_maxmind(text: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = caps.get(0)?;
    let start = m.start().checked_sub(36)?;
    let head = text.as_bytes().get(start..m.start())?;
    let ok = head[6] == b'_'
        && head[..6]
            .iter()
            .chain(&head[7..])
            .all(u8::is_ascii_alphanumeric)
        && !byte_before(text, start).is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
    (ok && has_letter_and_digit(&text[start..m.start()]))
        .then(|| ("maxmind-license-key", start, m.end()))
}

/// Entra ID client secrets stand alone: not the middle of a longer token.
fn check_azure_ad(text: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = group(caps)?;
    let in_token = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'~' | b'.' | b'-');
    if byte_before(text, m.start()).is_some_and(in_token)
        || text.as_bytes().get(m.end()).copied().is_some_and(in_token)
    {
        return None;
    }
    has_letter_and_digit(m.as_str()).then(|| ("azure-ad-client-secret", m.start(), m.end()))
}

/// OpenShift user tokens: `sha256~` and 43 base64url characters, nothing more.
fn check_openshift(text: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let m = caps.get(0)?;
    let start = m.start() + "sha256~".len();
    let token = text.get(start..start + 43)?;
    has_letter_and_digit(token).then(|| ("openshift-token", m.start(), start + 43))
}

/// Cookie attributes of a `Set-Cookie` header, never secret.
const COOKIE_ATTRIBUTES: &[&str] = &[
    "path",
    "domain",
    "expires",
    "max-age",
    "samesite",
    "secure",
    "httponly",
    "priority",
    "partitioned",
    "version",
    "comment",
];

/// `Cookie: a=…; b=…`: every value that looks like a token (a session id, a signed value);
/// `Set-Cookie: a=…; Path=/`: the cookie's value only, not its attributes.
fn check_cookie(_: &str, caps: &Captures<'_>, out: &mut Vec<(&'static str, usize, usize)>) {
    let Some(v) = caps.name("v") else {
        return;
    };
    let set = caps.name("set").is_some();
    let mut at = v.start();
    for (i, pair) in v.as_str().split(';').enumerate() {
        let pair_start = at;
        at += pair.len() + 1;
        if set && i > 0 {
            break;
        }
        let Some((name, value)) = pair.split_once('=') else {
            continue;
        };
        let name = name.trim();
        let valid_name = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-$!#%&*+^|~".contains(&b));
        if !valid_name || COOKIE_ATTRIBUTES.contains(&name.to_ascii_lowercase().as_str()) {
            continue;
        }
        let lead = value.len() - value.trim_start().len();
        let value = value.trim();
        let start = pair_start + pair.find('=').unwrap_or(0) + 1 + lead;
        if cookie_value_is_secret(value) {
            out.push(("cookie", start, start + value.len()));
        }
    }
}

/// A cookie value worth redacting: a token, not a preference (`theme=dark`, `lang=en-US`) or
/// a number.
fn cookie_value_is_secret(v: &str) -> bool {
    if v.len() < 8 || keyed::is_placeholder(v) || keyed::is_placeholder_word(v) {
        return false;
    }
    let words = v
        .bytes()
        .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_');
    has_letter_and_digit(v) || (v.len() >= 20 && !words)
}

/// `.pgpass`: the host is `*`, a name or an address (not a number), the port a number or
/// `*`, the database and user are names (not numbers: `file.rs:12:5:…` is a position).
fn check_pgpass(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let pw = caps.name("s")?;
    let host = caps.name("host")?.as_str();
    let named = |s: &str| s == "*" || s.bytes().any(|b| b.is_ascii_alphabetic());
    let host_ok = host == "*" || host.bytes().any(|b| b.is_ascii_alphabetic() || b == b'.');
    let (db, user) = (caps.name("db")?.as_str(), caps.name("user")?.as_str());
    let p = pw.as_str();
    let ok = host_ok
        && named(db)
        && named(user)
        && p.len() >= 4
        && !keyed::is_placeholder(p)
        && !keyed::is_placeholder_word(p);
    ok.then(|| ("pgpass-password", pw.start(), pw.end()))
}

/// `<add key="…Password" value="…"/>`: the key must name a secret.
fn check_add_key(_: &str, caps: &Captures<'_>) -> Option<(&'static str, usize, usize)> {
    let key = caps.name("k")?.as_str();
    let m = caps.name("s")?;
    (keyed::key_names_secret(key) && keyed::literal_is_secret(m.as_str(), true))
        .then(|| (KEYED_SECRET, m.start(), m.end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_runs_are_found_at_any_offset_and_only_from_32_digits() {
        let run = "0123456789abcdef0123456789ABCDEF";
        for pad in 0..40 {
            let before = "x".repeat(pad);
            assert!(has_hex_run(&format!("{before}{run}")), "{pad}");
            assert!(has_hex_run(&format!("{before}{run} tail")), "{pad}");
            assert!(
                !has_hex_run(&format!("{before}{} tail", &run[1..])),
                "{pad}"
            );
            assert!(!has_hex_run(&format!(
                "{before}{}-{} tail",
                &run[..16],
                &run[16..]
            )));
        }
        assert!(!has_hex_run(""));
    }
}
