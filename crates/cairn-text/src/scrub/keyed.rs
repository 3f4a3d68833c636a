//! Labelled values: a key that names a secret, and a value that is a real literal.
//!
//! The regexes here are deliberately loose (any key containing `pass`, `pwd`, `secret`,
//! `token`, `key`, `auth` or `credential`); the decisions are made in code:
//! [`key_names_secret`] on the key and [`literal_is_secret`] / [`check_assignment`] on the value.

use regex::Captures;

/// `KEY = value`, `key: value`, `"key": "value"`, `key := value`, `'key' => 'value'`, also
/// with JSON-escaped quotes (`\"key\": \"value\"`) and a type annotation (`key: str = "…"`).
pub(super) const ASSIGNMENT: &str = r#"(?i)(?P<key>[A-Za-z0-9_.-]*(?:pass|pwd|secret|token|key|auth|credential)[A-Za-z0-9_.-]*)\\{0,3}["']?\]?(?:[ \t]*:[ \t]*[A-Za-z_][A-Za-z0-9_.\[\]|, ]{0,40}?[ \t]*(?P<tsep>=)|[ \t]*(?P<sep>=>|:=|=|:))(?P<ws>[ \t]*)(?:\\{0,3}"(?P<dq>[^"\\\r\n]*)\\{0,3}"|'(?P<sq>[^'\r\n]*)'|`(?P<bq>[^`\r\n]*)`|(?P<uq>[^\s"'`,;&|)}\]<>\\]+))"#;

/// `--password hunter2…`, `--api-key=…`, `-token …`.
pub(super) const FLAG: &str = r#"(?i)--?(?P<key>[A-Za-z0-9_-]*(?:pass|pwd|secret|token|key|auth|credential)[A-Za-z0-9_-]*)(?:[ \t]+|=)(?:"(?P<dq>[^"\r\n]*)"|'(?P<sq>[^'\r\n]*)'|(?P<uq>[^\s"'-][^\s"'`;&|)]*))"#;

/// Splits an identifier into lowercase words: separators `_ - . space`, and camelCase humps.
fn words(key: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev: Option<char> = None;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let hump = (p.is_ascii_lowercase() || p.is_ascii_digit()) && c.is_ascii_uppercase();
            if hump && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c.to_ascii_lowercase());
        prev = Some(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Words after which a final `key` names a secret (`api_key`, `SECRET_KEY`, `signingKey`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "sign",
    "encryption",
    "encrypt",
    "decryption",
    "master",
    "auth",
    "client",
    "service",
    "app",
    "application",
    "account",
    "session",
    "license",
    "licence",
    "deploy",
    "webhook",
    "consumer",
    "admin",
    "subscription",
    "ingest",
    "ingestion",
    "write",
    "root",
    "shared",
    "storage",
    "x",
    "hmac",
    "jwt",
    "cookie",
    "crypto",
    "aes",
    "gpg",
    "pgp",
    "ssh",
    "rsa",
    "user",
    "project",
    "personal",
];

/// Final words that name a secret by themselves.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "credential",
    "credentials",
    "authorization",
    "auth",
];

/// Suffixes of a final word written as one (`pgpassword`, `authtoken`, `xapikey`).
const SECRET_SUFFIXES: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
];

/// Does this key (a variable, field, header or flag name) name a secret?
///
/// Only the last word counts, so `token_url`, `max_tokens`, `password_hash`, `secretName`
/// or `auth_type` do not, while `GITHUB_TOKEN`, `db_password`, `x-api-key`, `clientSecret`,
/// `AWS_SECRET_ACCESS_KEY` and `Authorization` do.
pub(crate) fn key_names_secret(key: &str) -> bool {
    let words = words(key);
    let Some(last) = words.last() else {
        return false;
    };
    if SECRET_WORDS.contains(&last.as_str()) {
        return true;
    }
    if SECRET_SUFFIXES.iter().any(|s| last.ends_with(s)) {
        return true;
    }
    let prev = words.len().checked_sub(2).map(|i| words[i].as_str());
    // Rails: `SECRET_KEY_BASE`, `secret_key_base`.
    if last == "base"
        && words.len() >= 3
        && words[words.len() - 3..words.len() - 1] == ["secret", "key"]
    {
        return true;
    }
    // Plurals: `passwords`, `secrets`, `api_keys`, `access_tokens` (but not `max_tokens`).
    match (last.as_str(), prev) {
        ("passwords" | "secrets" | "apikeys", _) => return true,
        ("keys", Some(p)) if KEY_QUALIFIERS.contains(&p) => return true,
        ("tokens", Some("access" | "refresh" | "auth" | "api" | "bearer" | "session" | "id")) => {
            return true;
        }
        _ => {}
    }
    if last == "key" && words.len() >= 2 {
        let prev = words[words.len() - 2].as_str();
        if KEY_QUALIFIERS.contains(&prev) {
            return true;
        }
        // `STRIPE_KEY`, `OPENAI_KEY`: an environment variable named `…_KEY`.
        let screaming = key.bytes().any(|b| b == b'_')
            && key
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        return screaming;
    }
    false
}

/// Obvious non-secrets: template variables, masks and fill-ins.
pub(crate) fn is_placeholder(v: &str) -> bool {
    let t = v.trim();
    if t.is_empty() || t.contains("[REDACTED") {
        return true;
    }
    let lower = t.to_ascii_lowercase();
    let b = t.as_bytes();
    // ${VAR}, $VAR, $(cmd), %VAR%, %(name)s, {{ var }}, <your-key>, #{var}, [your key]
    if b[0] == b'$'
        || (b[0] == b'%' && b.len() > 1)
        || lower.contains("{{")
        || lower.contains("${")
        || lower.contains("#{")
        || (b[0] == b'<' && b[b.len() - 1] == b'>')
        || (b[0] == b'[' && b[b.len() - 1] == b']')
        || b[0] == b'{'
    {
        return true;
    }
    // xxxxxxxx, ********, ........, 00000000, ####, sk-xxxx…, abc…xyz
    if lower.contains("xxxx") || t.contains("****") || t.contains("...") || t.contains('…') {
        return true;
    }
    let first = b[0];
    if b.iter().all(|&c| c == first) {
        return true;
    }
    if b.iter()
        .all(|&c| matches!(c, b'x' | b'X' | b'*' | b'.' | b'-' | b'_' | b'#' | b'0'))
    {
        return true;
    }
    const FILL_INS: &[&str] = &[
        "your",
        "example",
        "placeholder",
        "changeme",
        "change_me",
        "change-me",
        "replace",
        "dummy",
        "redacted",
        "insert",
        "_here",
        "-here",
        " here",
        "<",
        ">",
        "secret_value",
        "my_secret",
        "mysecret",
        "mypassword",
        "my_password",
        "my-password",
        "notasecret",
        "my-token",
        "my_token",
        "mytoken",
        "my-secret",
        "my-key",
        "my_key",
        "my-api-key",
        "my_api_key",
    ];
    FILL_INS.iter().any(|w| lower.contains(w))
}

/// Words that are values of a setting, not secrets (`auth: required`, `token: none`).
pub(crate) fn is_placeholder_word(v: &str) -> bool {
    const WORDS: &[&str] = &[
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "token",
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "required",
        "optional",
        "enabled",
        "disabled",
        "default",
        "hidden",
        "masked",
        "omitted",
        "removed",
        "unknown",
        "unset",
        "empty",
        "string",
        "bearer",
        "basic",
        "oauth",
        "oauth2",
        "test",
        "testing",
        "user",
        "username",
        "admin",
        "login",
        "pw",
        "secrets",
        "sensitive",
        "env",
        "environment",
        "keychain",
        "keyring",
        "function",
        "continue",
        "readonly",
        "abstract",
        "override",
        "xyz",
        "abc",
        "123",
        "1234",
        "12345",
        "123456",
        "foo",
        "bar",
        "baz",
        "qux",
        "foobar",
        "todo",
        "tbd",
        "fixme",
    ];
    let lower = v.trim().to_ascii_lowercase();
    WORDS.contains(&lower.as_str())
}

/// Is this identifier made of words (`user_password`, `accessToken`, `tokenizer`), i.e. a
/// variable rather than a literal like `hunter2hunter2`?
fn is_word_identifier(v: &str) -> bool {
    let b = v.as_bytes();
    if b.is_empty() || !(b[0].is_ascii_alphabetic() || b[0] == b'_') {
        return false;
    }
    if !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        return false;
    }
    // Digits only as a trailing counter (`token2`, `key_v3`).
    let body = v.trim_end_matches(|c: char| c.is_ascii_digit());
    if body.bytes().any(|c| c.is_ascii_digit()) {
        return false;
    }
    let letters = body.bytes().filter(u8::is_ascii_alphabetic).count();
    let words = words(body);
    !words.is_empty() && letters / words.len() >= 3
}

/// An identifier with structure: `snake_case`, `camelCase`, `PascalCase` (a variable, field
/// or type name), not a single lowercase word.
fn is_snake_or_camel(v: &str) -> bool {
    let b = v.as_bytes();
    if b.is_empty() {
        return false;
    }
    // `rc5_key_st`, `AES_KEY_V2`: one letter case, every part starting with a letter.
    let one_case = !(b.iter().any(u8::is_ascii_uppercase) && b.iter().any(u8::is_ascii_lowercase));
    if one_case
        && v.contains('_')
        && v.split('_').all(|p| {
            p.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
                && p.bytes().all(|c| c.is_ascii_alphanumeric())
        })
    {
        return true;
    }
    is_word_identifier(v)
        && (v.contains('_')
            || b.windows(2)
                .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
            || (b[0].is_ascii_uppercase() && b[1..].iter().any(u8::is_ascii_lowercase)))
}

/// Is this (unescaped) value a literal secret rather than a placeholder, a URL or a path?
/// `quoted` values are literals by construction; unquoted ones may be code.
pub(crate) fn literal_is_secret(v: &str, quoted: bool) -> bool {
    let v = v.trim();
    if v.len() < 8 || is_placeholder(v) || is_placeholder_word(v) {
        return false;
    }
    // Numbers (`token_limit: 100000000`), URLs without credentials, file paths.
    if v.bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'_' || b == b'-')
    {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    if let Some((scheme, _)) = lower.split_once("://")
        && !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+')
    {
        return false;
    }
    if (v.starts_with('/') || v.starts_with("~/") || v.starts_with("./") || v.starts_with("../"))
        && v[1..].contains('/')
    {
        return false;
    }
    const FILE_EXTS: &[&str] = &[
        ".pem", ".key", ".json", ".p12", ".pfx", ".txt", ".crt", ".yaml", ".yml", ".env", ".gpg",
    ];
    if FILE_EXTS.iter().any(|e| lower.ends_with(e)) && !v.contains(' ') {
        return false;
    }
    // Prose, not a secret: `"password": "The user's password"`, `"invalid token"`.
    if v.contains(char::is_whitespace) && !v.bytes().any(|b| b.is_ascii_digit()) {
        return false;
    }
    // Namespaced names: `cairn.token`, `com.example.app`.
    if v.contains('.')
        && v.split('.')
            .all(|w| w.len() >= 2 && w.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
    {
        return false;
    }
    // Numeric literals: `0x00000013`, `1_000_000_000`.
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X"))
        && v.len() <= 18
        && hex.bytes().all(|b| b.is_ascii_hexdigit() || b == b'_')
    {
        return false;
    }
    // Identifiers, even quoted: `token: 'authToken'`, `"?NoLineTerminatorHere"`.
    if is_snake_or_camel(v.trim_start_matches(['?', '!', '@', '#', '.', ':'])) {
        return false;
    }
    if !quoted {
        // Code: calls, indexing, attribute access, negation, optional chaining.
        if v.contains('(')
            || v.contains('[')
            || v.contains("::")
            || v.contains("->")
            || v.contains("?.")
            || v.starts_with('!')
        {
            return false;
        }
        let dotted = v.split('.').count() >= 2
            && v.split('.').all(|p| {
                !p.is_empty()
                    && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    && !p.as_bytes()[0].is_ascii_digit()
            });
        if dotted {
            return false;
        }
    }
    true
}

/// The value span (without quotes) and whether it was quoted.
fn value_of<'t>(caps: &Captures<'t>) -> Option<(regex::Match<'t>, bool)> {
    if let Some(m) = caps.name("uq") {
        return Some((m, false));
    }
    ["dq", "sq", "bq"]
        .iter()
        .find_map(|g| caps.name(g))
        .map(|m| (m, true))
}

/// Shifts past an auth scheme (`Bearer …`, `Basic …`) so the header rules and labelled
/// values agree on the span.
fn skip_scheme(text: &str, start: usize, end: usize) -> usize {
    let v = &text[start..end];
    for scheme in ["bearer ", "basic ", "token "] {
        let head = v.as_bytes().get(..scheme.len());
        if v.len() > scheme.len() && head.is_some_and(|h| h.eq_ignore_ascii_case(scheme.as_bytes()))
        {
            let rest = &v[scheme.len()..];
            return start + scheme.len() + (rest.len() - rest.trim_start().len());
        }
    }
    start
}

/// `key <sep> value`: a secret when the key names one and the value is a real literal.
pub(super) fn check_assignment(text: &str, caps: &Captures<'_>) -> Option<(usize, usize)> {
    let key = caps.name("key")?.as_str();
    if !key_names_secret(key) {
        return None;
    }
    // `https://x-access-token:ghs_…@github.com`: URL userinfo belongs to the URL rule;
    // `Error::Token => "invalid token"` is a path, not a key.
    let key_start = caps.name("key").map_or(0, |m| m.start());
    if text[..key_start].ends_with("//") || text[..key_start].ends_with("::") {
        return None;
    }
    let (value, quoted) = value_of(caps)?;
    let sep = caps
        .name("sep")
        .or_else(|| caps.name("tsep"))
        .map_or("", |m| m.as_str());
    let spaced = caps.name("ws").is_some_and(|m| !m.as_str().is_empty());
    let v = value.as_str();
    // `token == other`, `key::Type`, `password =~ …`
    // and `key: \n…` (an escaped newline: the value is elsewhere).
    if !quoted && (v.starts_with(['=', ':', '~', '\\'])) {
        return None;
    }
    if !literal_is_secret(v, quoted) {
        return None;
    }
    // `password = tokenizer` in code: with spaces around `=` (or `:=`, `=>`), a bare word is
    // a variable. In `.env`, YAML and INI-without-spaces it is a literal.
    if !quoted && sep != ":" && spaced && is_word_identifier(v) {
        return None;
    }
    // A bare word followed by more words is prose (`pwd: expected bytes, got …`); in YAML,
    // `.env` and INI files a literal ends the line.
    if !quoted && v.bytes().all(|b| b.is_ascii_alphabetic()) {
        let rest = text[value.end()..].split('\n').next().unwrap_or("").trim();
        if !(rest.is_empty() || rest.starts_with('#')) {
            return None;
        }
    }
    // `{ password: password }`, `secret=SECRET`
    if v.eq_ignore_ascii_case(key) {
        return None;
    }
    let start = skip_scheme(text, value.start(), value.end());
    let trimmed = text[start..value.end()].trim_end();
    Some((start, start + trimmed.len())).filter(|(s, e)| e - s >= 6)
}

/// `--flag value`: same decisions as [`check_assignment`], the value is a literal unless it
/// reads like a variable.
pub(super) fn check_flag(text: &str, caps: &Captures<'_>) -> Option<(usize, usize)> {
    // The flag starts a word: `-p`, not `my-password`.
    let dash = caps.get(0)?.start();
    if dash > 0
        && !matches!(
            text.as_bytes()[dash - 1],
            b' ' | b'\t' | b'\n' | b'"' | b'\''
        )
    {
        return None;
    }
    let key = caps.name("key")?.as_str();
    if !key_names_secret(key) {
        return None;
    }
    let (value, quoted) = value_of(caps)?;
    if !literal_is_secret(value.as_str(), quoted) {
        return None;
    }
    Some((value.start(), value.end()))
}

/// A JSON string under a key that names a secret: anything non-trivial.
pub(crate) fn json_value_is_secret(v: &str) -> bool {
    literal_is_secret(v, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        for k in [
            "password",
            "DB_PASSWORD",
            "PGPASSWORD",
            "api_key",
            "apiKey",
            "x-api-key",
            "OPENAI_API_KEY",
            "STRIPE_KEY",
            "client_secret",
            "clientSecret",
            "GITHUB_TOKEN",
            "access_token",
            "authToken",
            "Authorization",
            "auth",
            "aws_secret_access_key",
            "SMTP_PASS",
            "private_key",
            "signingKey",
            "SECRET_KEY_BASE",
            "--password",
        ] {
            assert!(key_names_secret(k), "{k}");
        }
        for k in [
            "max_tokens",
            "token_url",
            "tokenizer",
            "token_type",
            "password_hash",
            "secretName",
            "auth_type",
            "primary_key",
            "key",
            "cache_key",
            "keyboard",
            "monkey",
            "passthrough",
            "private_key_id",
            "input_tokens",
            "key_base",
            "database",
        ] {
            assert!(!key_names_secret(k), "{k}");
        }
    }

    #[test]
    fn values() {
        for v in ["hunter2hunter2", "s3cr3t-P4ss!", "wJalrXUtnFEMI/K7MDENG"] {
            assert!(literal_is_secret(v, false), "{v}");
        }
        for v in [
            "<your-key>",
            "${DB_PASSWORD}",
            "$DB_PASSWORD",
            "xxxxxxxx",
            "********",
            "os.environ",
            "process.env.GITHUB_TOKEN",
            "get_password()",
            "user_password",
            "accessToken",
            "https://oauth2.googleapis.com/token",
            "/etc/secrets/key.pem",
            "100000000",
            "{{ .Values.password }}",
            "changeme123",
            "short",
        ] {
            assert!(!literal_is_secret(v, false), "{v}");
        }
    }
}
