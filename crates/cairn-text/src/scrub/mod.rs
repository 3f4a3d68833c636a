//! The secret scrubber: every text passes through it before anything is written.
//!
//! A [`Scrubber`] finds credentials in free text (and in JSON values) and replaces each one with
//! `[REDACTED:<kind>]`, where `<kind>` is a stable kebab-case name such as `github-token`
//! (see [`Scrubber::kinds`]). It reports what it found as [`Finding`]s, which name the kind and
//! the byte range but never carry the secret itself.
//!
//! ```
//! use cairn_text::scrub::scrubber;
//!
//! let (clean, findings) = scrubber().scrub("export GITHUB_TOKEN=ghp_k3Tq9ZLm2VxB7cRw4YpN8sHd6FjG1aUe5Oio");
//! assert_eq!(clean, "export GITHUB_TOKEN=[REDACTED:github-token]");
//! assert_eq!(findings[0].kind, "github-token");
//! ```
//!
//! # How it finds secrets
//!
//! Three layers, from most to least specific:
//!
//! 1. **Known formats** (`rules.rs`): one regex per provider format, tight on prefix, alphabet
//!    and length, so look-alikes (`risk-free`, `AKIA` in a sentence, `sk_` in an identifier,
//!    `ghp_xxxx…`) survive. A few formats are only secret next to a label (AWS secret keys,
//!    Mailgun `key-`, Heroku UUIDs, Twilio auth tokens and Datadog keys, which are bare hex)
//!    and the rule requires the label.
//! 2. **Labelled values** (`keyed.rs`, kind `keyed-secret`): `password=…`, `API_KEY: …`,
//!    `"client_secret": "…"`, `--token …`, `<password>…</password>`, netrc, `mysql -p…`,
//!    `sshpass -p …`, `docker login -p …`, `redis-cli -a …`, `ldapsearch -w …`,
//!    `<add key="…Password" value="…"/>`, "the password is …", a hex secret right after a
//!    secret's name in prose ("auth token 3f9c…"). The key must *name* a secret (its last word is
//!    `password`, `secret`, `token`, `api key`, …; so `max_tokens`, `token_url` or
//!    `secretName` do not count) and the value must be a non-trivial literal: at least 8
//!    characters, not a placeholder (`<your-key>`, `${VAR}`, `$VAR`, `xxxxxxxx`, `****`,
//!    `changeme`, …), not already redacted, not code (`os.environ[…]`, `self.token`,
//!    `get_password()`, `user_password`, `authToken`), not prose, not a URL or a file path.
//! 3. **High entropy** (`entropy.rs`, kind `high-entropy`), see below.
//!
//! Where matches overlap, the overlapping ones are merged into one redaction covering their
//! union, named after the widest of them (on a tie, the more specific rule: known formats before
//! labelled values). So nothing is replaced twice and no fragment of a secret survives.
//!
//! Scrubbing is idempotent: `[REDACTED:…]` markers never match a rule, and when a redaction
//! removes the context that kept a neighbour (a label, a `data:` prefix), the output is scanned
//! again until nothing new turns up (in practice one extra pass, and only when the first pass
//! found something).
//!
//! # Kinds
//!
//! Key material: `private-key` (PEM blocks, also truncated or JSON-escaped, e.g. the
//! `private_key` of a GCP service-account file), `age-secret-key`. AI providers:
//! `anthropic-api-key`, `anthropic-admin-key`, `anthropic-oauth-token`, `openai-api-key`,
//! `openai-admin-key`, `openrouter-api-key`, `sk-api-key` (other `sk-` keys: DeepSeek, Moonshot,
//! …), `huggingface-token`, `groq-api-key`, `xai-api-key`, `perplexity-api-key`,
//! `replicate-api-token`, `together-api-key`, `fireworks-api-key`, `cerebras-api-key`,
//! `nvidia-api-key`, `langsmith-api-key`, `pinecone-api-key` (Mistral and Cohere keys have no
//! prefix: `keyed-secret`/`high-entropy`). Clouds: `aws-access-key-id`, `aws-bedrock-api-key`,
//! `aws-secret-access-key`, `google-api-key`, `google-oauth-client-secret`,
//! `google-oauth-token`, `azure-storage-key`, `azure-sas-signature`, `azure-ad-client-secret`,
//! `alibaba-access-key-id`, `cloudflare-origin-ca-key`, `openshift-token`, `yandex-api-key`,
//! `digitalocean-token`, `heroku-api-key`, `databricks-token`, `vault-token`,
//! `doppler-token`, `terraform-token`, `pulumi-token`, `supabase-token`, `fly-token`,
//! `tailscale-key`, `planetscale-token`, `grafana-token`, `dynatrace-token`,
//! `prefect-api-key`, `onepassword-secret-key`. Code and packages: `github-token`,
//! `github-fine-grained-pat`, `gitlab-token`, `npm-token`, `pypi-token`, `dockerhub-pat`,
//! `postman-api-key`, `rubygems-api-key`, `clojars-token`, `artifactory-token`,
//! `sourcegraph-token`, `sidekiq-secret`. SaaS: `slack-token`, `slack-app-token`,
//! `slack-webhook-url`, `discord-webhook-url`, `discord-bot-token`, `telegram-bot-token`,
//! `stripe-secret-key`, `stripe-webhook-secret`, `square-token`, `braintree-access-token`,
//! `shopify-token`, `sendgrid-api-key`, `mailgun-api-key`, `twilio-api-key`,
//! `twilio-auth-token`, `datadog-api-key`, `mailchimp-api-key`, `sendinblue-api-key`,
//! `posthog-api-key`, `mapbox-secret-token`, `facebook-access-token`, `easypost-api-key`,
//! `shippo-api-token`, `duffel-api-token`, `flutterwave-secret-key`, `frameio-token`,
//! `airtable-token`, `infracost-api-key`, `maxmind-license-key`, `readme-api-key`,
//! `scalingo-token`, `typeform-token`, `teams-webhook-url`, `atlassian-api-token`,
//! `linear-api-key`, `notion-token`, `new-relic-key`, `sentry-auth-token`,
//! `sentry-dsn-secret`, `onepassword-token`. Shapes and places: `jwt`,
//! `connection-string-password`, `url-password`, `bearer-token`, `basic-auth` (header,
//! `curl -u`, Python `auth=(…)`), `cookie` (token-like values of `Cookie:`/`Set-Cookie:`
//! headers and `curl -b`), `keyed-secret`, `pgpass-password` (`.pgpass` lines),
//! `high-entropy`.
//!
//! [`catalogue()`] lists every kind with its shape and the gitleaks rules and trufflehog
//! detectors it corresponds to; `docs/security/scrubber.md` prints it.

//! # The high-entropy rule
//!
//! A candidate is a maximal run of `[A-Za-z0-9+/_-]` (plus trailing `=` padding), trimmed of
//! leading/trailing `-_/+`, of at least **32** characters. It is redacted when it looks random:
//!
//! - **Hex** (`[0-9a-f]` only, optional `0x`): at least one digit and one letter, Shannon
//!   entropy ≥ **3.0** bits/char, and a length that is *not* a digest length: 32 (MD5, UUID
//!   without dashes, trace ids), 40 (SHA-1, git commits), 56, 64 (SHA-256), 96, 128. Hex
//!   grouped by `-`/`_` (UUIDs, `0x…_u128` literals) is kept, and so is hex with word labels
//!   (`csr-id-<sha1>`, `crash-<sha1>`). A labelled hex secret
//!   (`secret: <64 hex>`) is still caught by the `keyed-secret` rule.
//! - **Anything else** (base64, base64url, alphanumeric): at least one digit and one letter,
//!   entropy ≥ **3.7** bits/char below 48 characters and ≥ **4.0** from 48 on, and not made of
//!   words: the mean length of its "words" (runs split at case changes, digits and
//!   separators) must be below **3.2**, and it must not be a `snake_case`/`SCREAMING_CASE`/
//!   `kebab-case` identifier.
//!
//! Calibration (20 000 random samples per alphabet, and the 14 600 distinct ≥32-char tokens of
//! ~6 000 Rust source files from crates.io): random base64/base64url/alphanumeric strings of
//! 32 chars have a plug-in entropy of 4.1–4.75 (0.1 %–95 % quantiles), 40 chars 4.3–5.0;
//! lowercase+digit strings 3.76–4.5 at 32 chars; hex 3.1–3.8. Long identifiers sit at 3.6–4.4,
//! so entropy alone cannot separate them from lowercase+digit keys; the word-length test does
//! (random mixed-case strings have a mean word length of 1.8–2.7, identifiers 3.5+). Measured
//! recall of the rule on random tokens: base64, base64url and alphanumeric ≥ 99 % from 32
//! characters on; lowercase+digit 84–92 %; hex 100 % at non-digest lengths. Over ~50 MB of
//! crates.io sources, ~46 MB of `node_modules` and ~40 MB of the Python standard library the
//! remaining hits were random data (test vectors, embedded keys, base64 attachments and
//! blobs), Google Docs ids and a handful of identifiers.
//!
//! Never redacted as high entropy: tokens inside `-----BEGIN CERTIFICATE-----` and other
//! *public* PEM blocks; SSH public key blobs (`AAAAB3NzaC1…`); package integrity hashes
//! (`sha512-…`, `sha256-…` in lockfiles and SRI, `h1:…` in `go.sum`, `sha256:…` digests) —
//! they are public checksums of public artefacts; `data:image/…;base64,…` URIs — images are not
//! secrets; `/nix/store/<hash>-…` paths; file paths and URL paths (split at `/` when most
//! segments are words, each long segment judged alone); alphabet tables
//! (`ABCDEFGH…`); base64 that decodes to prose (`VGhpcyBpcyBhIHRlc3Q…`); UUIDs, semvers,
//! CSS colours (too short or grouped).
//!
//! Known gaps, by design: public identifiers that are random by construction (IPFS CIDs,
//! base58 wallet addresses, Google Docs ids) are redacted; labelled values that read as
//! words or identifiers are not (`password = supersecret` is indistinguishable from
//! `password = tokenizer`, `"secret": "authToken"` from a field name), nor values under 8
//! characters, nor bare hex of a digest length or grouped hex (`<32 hex>-<8 hex>-<8 hex>`).
//!
//! # Decisions
//!
//! - Stripe publishable keys (`pk_live_`, `pk_test_`) are kept: they are meant to ship in
//!   client code. Secret and restricted keys (`sk_`, `rk_`, live and test) and webhook secrets
//!   (`whsec_`) are redacted.
//! - Twilio: API key SIDs (`SK` + 32 lowercase hex) are redacted without further context (the
//!   shape is distinctive enough); account SIDs (`AC…`) are identifiers and kept; auth tokens
//!   are caught when labelled (`TWILIO_AUTH_TOKEN=…`).
//! - Sentry: only the secret half of a legacy DSN (`https://<public>:<secret>@…sentry…`) and
//!   auth tokens (`sntrys_`, `sntryu_`) are redacted; a modern DSN holds only a public key.
//! - Connection strings keep scheme, user, host and database; only the password becomes
//!   `[REDACTED:connection-string-password]` (databases and brokers) or
//!   `[REDACTED:url-password]` (any other scheme). Obvious placeholders (`password`,
//!   `${DB_PASSWORD}`, `<pass>`) are kept.
//! - Long base64 blobs that are not images (attachments, inlined binaries, source maps) are
//!   redacted as `high-entropy`: they cannot be told from key material (a DER key, a
//!   keystore), and they are useless as searchable text anyway.
//! - Hex of a digest length (32, 40, 64, 128) is a secret only after a label: a Twilio or
//!   Datadog label, a key that names a secret (`SECRET_KEY_BASE=`, `"auth_token": "…"`) or a
//!   secret's name in prose ("the API key is 3f9c…", "signing secret: …"). A 40-hex commit in
//!   prose stays.
//! - Cookies: in a `Cookie:` header every value that looks like a token (8+ characters with a
//!   letter and a digit, or 20+ that are not words) goes; preferences (`theme=dark`,
//!   `lang=en-US`) stay. In `Set-Cookie:` only the cookie's own value, never its attributes.
//! - `.pgpass` lines need a host that is a name, address or `*`, a port that is a number or
//!   `*`, and a database and user that are not numbers (`main.rs:42:17:…` is a position).
//! - Telegram bot tokens: `<bot id>:AA…` (every current token's secret half starts with
//!   `AA`, which gives the regex a literal to search for).
//!
//! # Cost
//!
//! Regexes are compiled once per [`Scrubber`] (~10 ms in release; use the shared
//! [`scrubber()`]). A scan runs each rule's regex over the text (nearly all have a literal
//! prefilter, so clean text is skipped at memchr speed) and one byte loop for the high-entropy
//! rule that only looks at runs of 32+ token bytes. Measured in release on 1 MB of this
//! workspace's code and docs: ~6 ms when clean (one pass), ~17 ms with 31 findings (two
//! passes). Text with no finding comes back as [`Cow::Borrowed`] without a copy.

mod catalogue;
mod entropy;
mod keyed;
mod rules;

pub use catalogue::{Entry, GITLEAKS_VERSION, TRUFFLEHOG_VERSION, catalogue, markdown};

use std::borrow::Cow;
use std::sync::LazyLock;

use serde_json::Value;

use rules::Rule;

/// The kind reported by the labelled-value rules (`password=…`, `"api_key": "…"`, …).
pub const KEYED_SECRET: &str = "keyed-secret";
/// The kind reported by the high-entropy rule.
pub const HIGH_ENTROPY: &str = "high-entropy";

/// What a scrub found (never the secret itself).
///
/// `start..end` is the byte range of the redacted text in the *input* of
/// [`Scrubber::scrub`], so callers can log positions without keeping the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule's kind, as written in the `[REDACTED:<kind>]` marker.
    pub kind: &'static str,
    /// Byte offset of the first redacted byte in the input.
    pub start: usize,
    /// Byte offset one past the last redacted byte in the input.
    pub end: usize,
}

/// A reusable scrubber: build once (regexes are compiled once), share across threads.
///
/// It is `Send + Sync`; most callers want the process-wide [`scrubber()`].
pub struct Scrubber {
    rules: Vec<Rule>,
    public_blocks: regex::Regex,
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scrubber")
            .field("rules", &self.rules.len())
            .finish()
    }
}

impl Default for Scrubber {
    fn default() -> Self {
        Self::new()
    }
}

impl Scrubber {
    /// A scrubber with all built-in rules.
    pub fn new() -> Self {
        Self {
            rules: rules::builtin(),
            public_blocks: rules::compile(entropy::PUBLIC_BLOCKS),
        }
    }

    /// Returns the text with every secret replaced by `[REDACTED:<kind>]`, and the findings
    /// (sorted by position, offsets into `text`).
    ///
    /// Returns [`Cow::Borrowed`] when nothing was found, which is the common case and costs
    /// no allocation of the text.
    pub fn scrub<'a>(&self, text: &'a str) -> (Cow<'a, str>, Vec<Finding>) {
        let mut findings = self.find(text);
        if findings.is_empty() {
            return (Cow::Borrowed(text), findings);
        }
        let mut out = redact(text, &findings);
        // A redaction can remove the context that kept a neighbour (a `data:` prefix, a
        // label): scan the output again until nothing new turns up, so that scrubbing is
        // idempotent. Later passes only run when the first one found something.
        for _ in 0..MAX_PASSES {
            let more = self.find(&out);
            if more.is_empty() {
                break;
            }
            let mut mapped: Vec<Finding> = more
                .into_iter()
                .map(|f| to_original(&findings, f))
                .collect();
            findings.append(&mut mapped);
            findings.sort_by_key(|f| f.start);
            out = redact(text, &findings);
        }
        (Cow::Owned(out), findings)
    }

    /// Scrubs every string inside a JSON value in place and returns the number of findings.
    ///
    /// Every string value (and every object key) goes through [`Scrubber::scrub`]. On top of
    /// that, a string whose object key names a secret (`api_key`, `password`, `token`,
    /// `client_secret`, `authorization`, …) and that is a non-trivial literal (at least 8
    /// characters, not a placeholder such as `<your key>`, `xxx…` or `${VAR}`, not already
    /// redacted) becomes `[REDACTED:keyed-secret]` as a whole. The same holds for the
    /// strings of an array under such a key.
    pub fn scrub_json(&self, value: &mut Value) -> usize {
        self.scrub_value(value, false)
    }

    /// How many rules it runs: one regex each, plus the high-entropy scan.
    pub fn rule_count(&self) -> usize {
        self.rules.len() + 1
    }

    /// Kinds of every rule, in priority order (`high-entropy` last), for docs and tests.
    /// [`catalogue()`] describes each.
    pub fn kinds(&self) -> Vec<&'static str> {
        let mut kinds: Vec<&'static str> = Vec::new();
        for rule in &self.rules {
            for kind in rule.kinds() {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
        }
        kinds.push(HIGH_ENTROPY);
        kinds
    }

    /// All findings of `text`, merged so that none overlap, sorted by start.
    fn find(&self, text: &str) -> Vec<Finding> {
        let mut hits: Vec<Hit> = Vec::new();
        let facts = rules::Facts::new(text);
        for (priority, rule) in self.rules.iter().enumerate() {
            rule.find(&facts, priority, &mut hits);
        }
        // Idempotence: a redaction marker is never (part of) a secret.
        let markers = markers(text);
        if !markers.is_empty() {
            hits.retain(|h| !markers.iter().any(|&(s, e)| h.start < e && s < h.end));
        }
        let mut merged = merge(hits);
        let protected = self.protected(text);
        let mut extra = Vec::new();
        entropy::scan(text, &merged, &protected, &mut extra);
        if !extra.is_empty() {
            merged.extend(extra);
            merged.sort_by_key(|f| f.start);
        }
        merged
    }

    /// Byte ranges the high-entropy rule must leave alone (public PEM blocks).
    fn protected(&self, text: &str) -> Vec<(usize, usize)> {
        if !text.contains("-----BEGIN ") {
            return Vec::new();
        }
        self.public_blocks
            .find_iter(text)
            .map(|m| (m.start(), m.end()))
            .collect()
    }

    fn scrub_value(&self, value: &mut Value, keyed: bool) -> usize {
        match value {
            Value::String(s) => self.scrub_string(s, keyed),
            Value::Array(items) => items.iter_mut().map(|v| self.scrub_value(v, keyed)).sum(),
            Value::Object(map) => {
                let mut count = 0;
                // Keys first: a secret used as a key is rare but must not survive.
                let renames: Vec<(String, String, usize)> = map
                    .keys()
                    .filter_map(|k| match self.scrub(k) {
                        (Cow::Owned(new), findings) => Some((k.clone(), new, findings.len())),
                        (Cow::Borrowed(_), _) => None,
                    })
                    .collect();
                for (old, mut new, n) in renames {
                    count += n;
                    if let Some(v) = map.remove(&old) {
                        let base = new.clone();
                        let mut i = 2;
                        while map.contains_key(&new) {
                            new = format!("{base} ({i})");
                            i += 1;
                        }
                        map.insert(new, v);
                    }
                }
                for (k, v) in map.iter_mut() {
                    count += self.scrub_value(v, keyed::key_names_secret(k));
                }
                count
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
    }

    fn scrub_string(&self, s: &mut String, keyed: bool) -> usize {
        let (new, findings) = match self.scrub(s) {
            (Cow::Owned(new), findings) => (Some(new), findings.len()),
            (Cow::Borrowed(_), findings) => (None, findings.len()),
        };
        if let Some(new) = new {
            *s = new;
        }
        if findings == 0 && keyed && keyed::json_value_is_secret(s) {
            *s = format!("[REDACTED:{KEYED_SECRET}]");
            return 1;
        }
        findings
    }
}

/// The process-wide scrubber, built on first use.
pub fn scrubber() -> &'static Scrubber {
    static SCRUBBER: LazyLock<Scrubber> = LazyLock::new(Scrubber::new);
    &SCRUBBER
}

/// Extra passes over the output before giving up on reaching a fixed point.
const MAX_PASSES: usize = 4;

/// `text` with every finding (sorted, disjoint) replaced by its marker.
fn redact(text: &str, findings: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in findings {
        out.push_str(&text[at..f.start]);
        out.push_str("[REDACTED:");
        out.push_str(f.kind);
        out.push(']');
        at = f.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Maps a finding in `redact(text, findings)` back to `text`. It lies between markers
/// (hits on markers are dropped), so only the length changes of earlier markers matter.
fn to_original(findings: &[Finding], f: Finding) -> Finding {
    let mut shift: isize = 0;
    let mut out_pos: usize = 0; // where the current gap starts in the output
    let mut orig_pos: usize = 0;
    for g in findings {
        let gap = g.start - orig_pos;
        if f.start < out_pos + gap {
            break;
        }
        let marker = "[REDACTED:]".len() + g.kind.len();
        shift += marker as isize - (g.end - g.start) as isize;
        out_pos += gap + marker;
        orig_pos = g.end;
    }
    let back = |p: usize| (p as isize - shift) as usize;
    Finding {
        kind: f.kind,
        start: back(f.start),
        end: back(f.end),
    }
}

/// Byte ranges of the `[REDACTED:<kind>]` markers already in `text`.
fn markers(text: &str) -> Vec<(usize, usize)> {
    const OPEN: &str = "[REDACTED:";
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(OPEN) {
        let start = from + i;
        let rest = &text[start + OPEN.len()..];
        let kind_len = rest
            .bytes()
            .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
            .count();
        if kind_len > 0 && rest.as_bytes().get(kind_len) == Some(&b']') {
            let end = start + OPEN.len() + kind_len + 1;
            out.push((start, end));
            from = end;
        } else {
            from = start + OPEN.len();
        }
    }
    out
}

/// A raw match of one rule, before overlaps are resolved.
#[derive(Debug, Clone, Copy)]
struct Hit {
    kind: &'static str,
    start: usize,
    end: usize,
    /// Index of the rule; lower wins a tie.
    priority: usize,
}

/// Merges overlapping hits into one finding each: the span is the union, the kind is the
/// widest member's (ties go to the lower priority number).
fn merge(mut hits: Vec<Hit>) -> Vec<Finding> {
    hits.retain(|h| h.start < h.end);
    hits.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end), h.priority));
    let mut out: Vec<Finding> = Vec::with_capacity(hits.len());
    let mut cluster: Option<(usize, usize, Hit)> = None;
    for h in hits {
        match &mut cluster {
            Some((_, end, best)) if h.start < *end => {
                *end = (*end).max(h.end);
                let (w, bw) = (h.end - h.start, best.end - best.start);
                if w > bw || (w == bw && h.priority < best.priority) {
                    *best = h;
                }
            }
            _ => {
                if let Some((start, end, best)) = cluster.take() {
                    out.push(Finding {
                        kind: best.kind,
                        start,
                        end,
                    });
                }
                cluster = Some((h.start, h.end, h));
            }
        }
    }
    if let Some((start, end, best)) = cluster {
        out.push(Finding {
            kind: best.kind,
            start,
            end,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(kind: &'static str, start: usize, end: usize, priority: usize) -> Hit {
        Hit {
            kind,
            start,
            end,
            priority,
        }
    }

    #[test]
    fn merge_takes_union_and_widest_kind() {
        let merged = merge(vec![
            hit("a", 0, 10, 0),
            hit("b", 5, 30, 1),
            hit("c", 40, 50, 2),
            hit("d", 40, 50, 1),
        ]);
        assert_eq!(
            merged,
            vec![
                Finding {
                    kind: "b",
                    start: 0,
                    end: 30
                },
                Finding {
                    kind: "d",
                    start: 40,
                    end: 50
                },
            ]
        );
    }

    #[test]
    fn scrubber_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Scrubber>();
    }
}
