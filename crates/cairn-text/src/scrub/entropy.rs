//! The high-entropy rule: long random-looking tokens that no known format claimed.
//!
//! A single pass over the bytes finds runs of `[A-Za-z0-9+/_-]`; only runs of 32 or more
//! bytes are examined, so ordinary text costs one table lookup per byte. The thresholds and
//! their calibration are documented on the parent module.

use super::{Finding, HIGH_ENTROPY};

/// Public PEM blocks (certificates, public keys, signatures): their base64 is not secret.
pub(super) const PUBLIC_BLOCKS: &str = r"-----BEGIN (?:CERTIFICATE|TRUSTED CERTIFICATE|X509 CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|EC PUBLIC KEY|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST|X509 CRL|PKCS7|CMS|PGP PUBLIC KEY BLOCK|PGP SIGNATURE|SSH2 PUBLIC KEY|DH PARAMETERS|EC PARAMETERS)-----[\s\S]*?-----END [A-Z0-9 ]+-----";

/// Minimum token length, padding excluded.
const MIN_LEN: usize = 32;
/// Entropy floor (bits/char) for hex tokens.
const HEX_MIN_ENTROPY: f64 = 3.0;
/// Entropy floor for other tokens shorter than [`LONG`].
const SHORT_MIN_ENTROPY: f64 = 3.7;
/// Entropy floor for other tokens of [`LONG`] chars or more.
const LONG_MIN_ENTROPY: f64 = 4.0;
const LONG: usize = 48;
/// Tokens whose mean word length reaches this are made of words (identifiers, paths).
const WORDY: f64 = 3.2;
/// Hex lengths that are digests, not keys: MD5/UUID, SHA-1, SHA-224, SHA-256, SHA-384, SHA-512.
const DIGEST_LENGTHS: &[usize] = &[32, 40, 56, 64, 96, 128];

const fn token_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric() || c == b'+' || c == b'/' || c == b'_' || c == b'-';
        i += 1;
    }
    t
}
static TOKEN: [bool; 256] = token_table();

/// Appends a finding for every high-entropy token of `text` that overlaps neither `taken`
/// (sorted, disjoint findings of the other rules) nor `protected`.
pub(super) fn scan(
    text: &str,
    taken: &[Finding],
    protected: &[(usize, usize)],
    out: &mut Vec<Finding>,
) {
    let b = text.as_bytes();
    let n = b.len();
    let mut t = 0; // index into `taken`
    // Invariant: `i == 0` or `b[i - 1]` is not a token byte. A run of MIN_LEN or more that
    // starts in `i..i + MIN_LEN` covers `i + MIN_LEN - 1`, so probing that one byte lets
    // ordinary text be skipped MIN_LEN bytes at a time.
    let mut i = 0;
    while i + MIN_LEN <= n {
        let probe = i + MIN_LEN - 1;
        if !TOKEN[b[probe] as usize] {
            i = probe + 1;
            continue;
        }
        let mut start = probe;
        while start > i && TOKEN[b[start - 1] as usize] {
            start -= 1;
        }
        let mut end = probe + 1;
        while end < n && TOKEN[b[end] as usize] {
            end += 1;
        }
        i = end + 1;
        if end - start < MIN_LEN {
            continue;
        }
        // Trailing base64 padding belongs to the token.
        let mut pad = 0;
        while end + pad < n && b[end + pad] == b'=' && pad < 2 {
            pad += 1;
        }
        if pad > 0 && !(end + pad < n && b[end + pad].is_ascii_alphanumeric()) {
            end += pad;
            i = end + 1;
        }
        while t < taken.len() && taken[t].end <= start {
            t += 1;
        }
        if t < taken.len() && taken[t].start < end {
            continue;
        }
        if protected.iter().any(|&(s, e)| s < end && start < e) {
            continue;
        }
        examine(text, start, end, out);
    }
}

/// Judges one maximal run `text[start..end]`.
fn examine(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) {
    let b = text.as_bytes();
    // Trim separators that cannot start or end a key.
    let (mut s, mut e) = (start, end);
    while s < e && matches!(b[s], b'-' | b'_' | b'/' | b'+') {
        s += 1;
    }
    while e > s && matches!(b[e - 1], b'-' | b'_' | b'/' | b'+') {
        e -= 1;
    }
    // …unless that makes it too short: then the separators may be part of the key
    // (base64 starts with `/` or `+` one time in 32).
    if text[s..e].trim_end_matches('=').len() < MIN_LEN {
        (s, e) = (start, end);
    }
    let tok = &text[s..e];
    if tok.trim_end_matches('=').len() < MIN_LEN || safe_context(text, start, tok) {
        return;
    }
    if tok.contains('/') && is_path(tok) {
        let mut at = s;
        for seg in tok.split('/') {
            if seg.len() >= MIN_LEN && looks_random(seg) {
                out.push(Finding {
                    kind: HIGH_ENTROPY,
                    start: at,
                    end: at + seg.len(),
                });
            }
            at += seg.len() + 1;
        }
        return;
    }
    if looks_random(tok) {
        out.push(Finding {
            kind: HIGH_ENTROPY,
            start: s,
            end: e,
        });
    }
}

/// Public checksums and blobs, recognised by what precedes or starts the token.
fn safe_context(text: &str, s: usize, tok: &str) -> bool {
    const PREFIXES: &[&str] = &[
        // Subresource integrity / lockfiles / Nix.
        "sha1-",
        "sha256-",
        "sha384-",
        "sha512-",
        // SSH public key blobs.
        "AAAAB3NzaC1",
        "AAAAC3NzaC1",
        "AAAAE2VjZHNh",
        "AAAAB3NzaC",
        // WebAssembly modules (`\0asm`) inlined as base64.
        "AGFzbQ",
        // Stripe publishable keys are meant to be public.
        "pk_live_",
        "pk_test_",
    ];
    if PREFIXES.iter().any(|p| tok.starts_with(p)) {
        return true;
    }
    // age public keys: `age1` + 58 lowercase bech32.
    if tok.len() == 62 && tok.starts_with("age1") && !tok.bytes().any(|c| c.is_ascii_uppercase()) {
        return true;
    }
    let before = &text.as_bytes()[s.saturating_sub(64)..s];
    const LOOKBEHIND: &[&[u8]] = &[
        b"h1:",
        b"sha1:",
        b"sha256:",
        b"sha384:",
        b"sha512:",
        b"md5:",
        b"sha256=",
        b"sha512=",
        b"sha256=\"",
        b"sha256: ",
        b"/nix/store/",
        b"ssh-rsa ",
        b"ssh-ed25519 ",
        b"ssh-dss ",
    ];
    if LOOKBEHIND.iter().any(|p| before.ends_with(p)) {
        return true;
    }
    if before.starts_with(b"ecdsa-sha2-") || before.ends_with(b"nistp256 ") {
        return true;
    }
    // data:image/png;base64,… (judged on the media type alone, so that the check still
    // holds once a neighbouring token has been redacted).
    if before.ends_with(b";base64,")
        && let Some(pos) = before.iter().rposition(|&c| c == b':')
    {
        let mime = &before[pos + 1..];
        return [&b"image/"[..], b"font/", b"audio/", b"video/"]
            .iter()
            .any(|m| mime.starts_with(m));
    }
    // Twilio account SIDs (`AC` + 32 hex) are identifiers.
    if tok.len() == 34
        && tok.starts_with("AC")
        && hex_body(&tok[2..]).is_some_and(|h| h.len() == 32)
    {
        return true;
    }
    false
}

/// Paths and URL paths: several `/`-separated segments, most of them words.
fn is_path(tok: &str) -> bool {
    let segs: Vec<&str> = tok.split('/').filter(|s| !s.is_empty()).collect();
    if segs.len() < 2 {
        return false;
    }
    let wordy = segs
        .iter()
        .filter(|seg| {
            seg.len() >= 2
                && seg
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_'))
                && (mean_word_len(seg) >= 3.0 || !seg.bytes().any(|c| c.is_ascii_uppercase()))
        })
        .count();
    wordy >= 2 && wordy * 2 >= segs.len()
}

/// The decision for a single token (no `/`-splitting).
pub(super) fn looks_random(tok: &str) -> bool {
    let core = tok.trim_end_matches('=');
    if core.len() < MIN_LEN {
        return false;
    }
    let b = core.as_bytes();
    let letters = b.iter().filter(|c| c.is_ascii_alphabetic()).count();
    if !b.iter().any(u8::is_ascii_digit) || letters == 0 {
        return false;
    }
    // Numbers: `2645751311…e1`, `1234567890123456789012345678901234567890u128`.
    if letters <= 4 && b.iter().filter(|c| c.is_ascii_digit()).count() * 10 >= b.len() * 9 {
        return false;
    }
    if is_sequential(b) || has_digest_part(core) {
        return false;
    }
    if let Some(hex) = hex_body(core) {
        return hex_is_random(hex);
    }
    let h = entropy(b);
    let floor = if core.len() < LONG {
        SHORT_MIN_ENTROPY
    } else {
        LONG_MIN_ENTROPY
    };
    if h < floor {
        return false;
    }
    if mean_word_len(core) >= WORDY || is_separated_identifier(core) {
        return false;
    }
    !decodes_to_prose(core)
}

/// `Some(digits)` when the token is hex (optionally `0x`-prefixed, `-`/`_`-grouped, with a
/// Rust integer suffix): `None` otherwise. Grouped hex yields an empty body.
fn hex_body(tok: &str) -> Option<&str> {
    let mut t = tok;
    for suffix in [
        "_u128", "_u64", "_i128", "_i64", "u128", "u64", "i128", "i64",
    ] {
        if let Some(rest) = t.strip_suffix(suffix) {
            t = rest;
            break;
        }
    }
    t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    if !t
        .bytes()
        .all(|c| c.is_ascii_hexdigit() || c == b'-' || c == b'_')
    {
        return None;
    }
    if t.bytes().any(|c| c == b'-' || c == b'_') {
        // UUIDs, grouped literals: structured, never a bare key.
        return Some("");
    }
    Some(t)
}

fn hex_is_random(hex: &str) -> bool {
    hex.len() >= MIN_LEN
        && !DIGEST_LENGTHS.contains(&hex.len())
        && hex.bytes().any(|c| c.is_ascii_digit())
        && hex.bytes().any(|c| c.is_ascii_alphabetic())
        && entropy(hex.to_ascii_lowercase().as_bytes()) >= HEX_MIN_ENTROPY
}

/// Shannon entropy in bits per byte.
pub(super) fn entropy(b: &[u8]) -> f64 {
    if b.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &c in b {
        counts[c as usize] += 1;
    }
    let n = b.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Mean length of the "words" of a token: runs split at separators, digit/letter changes
/// and camelCase humps (`HTTPServer` is `HTTP` + `Server`). Random strings score ~2,
/// identifiers and paths 3.5 and up.
pub(super) fn mean_word_len(tok: &str) -> f64 {
    #[derive(PartialEq, Clone, Copy)]
    enum C {
        Upper,
        Lower,
        Digit,
        Other,
    }
    let class = |c: u8| {
        if c.is_ascii_uppercase() {
            C::Upper
        } else if c.is_ascii_lowercase() {
            C::Lower
        } else if c.is_ascii_digit() {
            C::Digit
        } else {
            C::Other
        }
    };
    let b = tok.as_bytes();
    let mut words = 0usize;
    let mut chars = 0usize;
    let mut prev = C::Other;
    let mut upper_run = 0usize;
    for &c in b {
        let cur = class(c);
        if cur == C::Other {
            prev = C::Other;
            upper_run = 0;
            continue;
        }
        chars += 1;
        let starts = match (prev, cur) {
            (C::Other, _) => true,
            (C::Upper, C::Lower) => {
                // `HTTPServer`: the last capital starts a new word.
                if upper_run >= 2 {
                    words += 1;
                }
                false
            }
            (p, q) => p != q,
        };
        if starts {
            words += 1;
        }
        upper_run = if cur == C::Upper { upper_run + 1 } else { 0 };
        prev = cur;
    }
    if words == 0 {
        return 0.0;
    }
    chars as f64 / words as f64
}

/// `snake_case`, `SCREAMING_CASE`, `kebab-case` identifiers: at least three parts, and most
/// of the characters in parts that read as words (one letter case, `Capitalised`, or
/// camelCase words).
fn is_separated_identifier(tok: &str) -> bool {
    let parts: Vec<&str> = tok.split(['_', '-']).filter(|p| !p.is_empty()).collect();
    if parts.len() < 3 {
        return false;
    }
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let wordy: usize = parts
        .iter()
        .filter(|p| p.len() >= 2 && reads_as_word(p))
        .map(|p| p.len())
        .sum();
    wordy * 10 >= total * 7
}

fn reads_as_word(p: &str) -> bool {
    let b = p.as_bytes();
    let upper = b.iter().any(u8::is_ascii_uppercase);
    let lower = b.iter().any(u8::is_ascii_lowercase);
    let capitalised = b[0].is_ascii_uppercase() && !b[1..].iter().any(u8::is_ascii_uppercase);
    !(upper && lower) || capitalised || mean_word_len(p) >= WORDY
}

/// A short word, maybe with a trailing number: `crash`, `id`, `v2`, `sha256`.
fn is_label(part: &str) -> bool {
    let word = part.trim_end_matches(|c: char| c.is_ascii_digit());
    part.len() <= 24 && !word.is_empty() && word.bytes().all(|c| c.is_ascii_alphabetic())
}

/// `csr-id-<sha1>`, `crash-<sha1>`, `testdata/…-<sha256>`: a digest with word labels.
fn has_digest_part(tok: &str) -> bool {
    let mut digest = false;
    for part in tok.split(['_', '-', '/']).filter(|p| !p.is_empty()) {
        if part.len() >= MIN_LEN
            && DIGEST_LENGTHS.contains(&part.len())
            && part.bytes().all(|c| c.is_ascii_hexdigit())
        {
            digest = true;
        } else if !is_label(part) {
            return false;
        }
    }
    digest
}

/// Alphabet tables (`ABCDEFGHIJ…`, `0123456789abcdef…`): mostly consecutive bytes.
fn is_sequential(b: &[u8]) -> bool {
    let steps = b
        .windows(2)
        .filter(|w| w[1] == w[0].wrapping_add(1))
        .count();
    steps * 2 >= b.len()
}

/// Base64 of ordinary text (`VGhpcyBpcyBhIHRlc3Q=`) is encoded prose, not a key.
fn decodes_to_prose(tok: &str) -> bool {
    let Some(bytes) = decode_base64(tok) else {
        return false;
    };
    if bytes.len() < 16 {
        return false;
    }
    let printable = bytes
        .iter()
        .filter(|&&c| (0x20..0x7f).contains(&c) || c == b'\n' || c == b'\t' || c == b'\r')
        .count();
    let spaces = bytes.iter().filter(|&&c| c == b' ').count();
    let letters = bytes.iter().filter(|c| c.is_ascii_alphabetic()).count();
    printable == bytes.len() && spaces * 12 >= bytes.len() && letters * 10 >= bytes.len() * 6
}

/// Decodes standard or URL-safe base64, padding optional. `None` if it is not base64.
fn decode_base64(tok: &str) -> Option<Vec<u8>> {
    let core = tok.trim_end_matches('=');
    let mut out = Vec::with_capacity(core.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in core.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_tokens_are_flagged() {
        for t in [
            "Zq3vK8pLm2XrT9wBn4YcJ6hDf1GsQ7eA",
            "q8Fv2Lr9KpZ3mXw7TbN4cY6hJd1GsA5eRu0iOk",
            "kd82jf9s0a7d6f5g4h3j2k1l0p9o8i7u6y5t4r3e",
            "Xk9Pq2+Lm7/Rt4Vb8Nw3Yc6Hd1Gs5Jf0Ae2Ui7Oz4Kx9Pq2Lm7Rt4Vb8Nw3Yc6Hd1Gs5Jf0Ae2Ui7Oz4Kx9Pq2Lm7Rt4Vb==",
        ] {
            assert!(looks_random(t), "{t}");
        }
    }

    #[test]
    fn ordinary_tokens_are_kept() {
        for t in [
            "thisIsAVeryLongCamelCaseIdentifierName",
            "performSelectorOnMainThread_withObject_waitUntilDone",
            "ChaCha20Poly1305MessageEncrypter",
            "TLS_DHE_PSK_WITH_CHACHA20_POLY1305_SHA256",
            "NL80211_RATE_INFO_HE_RU_ALLOC_2x996",
            "test_rsa_pkcs1_sha1_bad_key_der_null",
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "0xa82e10eb_9dc6225a_ef6223e7_54aa254d_u128",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
            "VGhpcyBpcyBhIHRlc3Qgb2YgYmFzZTY0IGVuY29kaW5nIG9mIHByb3Nl",
            "550e8400-e29b-41d4-a716-446655440000",
        ] {
            assert!(!looks_random(t), "{t}");
        }
    }

    #[test]
    fn word_length() {
        assert!(mean_word_len("HTTPServerConfig") >= 4.0);
        assert!(mean_word_len("aB3xQz9KpL") < 2.0);
    }
}
