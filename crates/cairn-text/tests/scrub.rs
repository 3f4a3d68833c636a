//! The secret scrubber against its corpus (`tests/scrub_corpus/`) and its contract:
//! exact replacement, look-alikes untouched, idempotence, JSON, no panics.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use cairn_text::scrub::{Finding, Scrubber, scrubber};
use serde_json::json;

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scrub_corpus")
        .join(name)
}

/// `\n` is a newline, `\\` a backslash, `\.` nothing (it splits a sample so that the file
/// never holds a whole token in a provider's format); anything else is literal.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('\\') => out.push('\\'),
            Some('.') => {}
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn case_lines(name: &str) -> Vec<(usize, String)> {
    let text = fs_err::read_to_string(corpus(name)).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| (i + 1, l.to_owned()))
        .collect()
}

struct SecretCase {
    line: usize,
    kind: String,
    secret: String,
    input: String,
    expected: String,
}

fn secret_cases() -> Vec<SecretCase> {
    case_lines("secrets.txt")
        .into_iter()
        .map(|(line, l)| {
            let mut parts = l.splitn(3, " | ");
            let (kind, secret, context) = (
                parts.next().unwrap().trim().to_owned(),
                unescape(
                    parts
                        .next()
                        .unwrap_or_else(|| panic!("line {line}: no secret")),
                ),
                unescape(
                    parts
                        .next()
                        .unwrap_or_else(|| panic!("line {line}: no context")),
                ),
            );
            assert!(context.contains("{}"), "line {line}: context has no {{}}");
            SecretCase {
                line,
                input: context.replacen("{}", &secret, 1),
                expected: context.replacen("{}", &format!("[REDACTED:{kind}]"), 1),
                kind,
                secret,
            }
        })
        .collect()
}

fn lookalikes() -> Vec<(usize, String)> {
    case_lines("lookalikes.txt")
        .into_iter()
        .map(|(i, l)| (i, unescape(&l)))
        .collect()
}

#[test]
fn corpus_is_big_enough() {
    let secrets = secret_cases();
    let kinds: std::collections::BTreeSet<&str> = secrets.iter().map(|c| c.kind.as_str()).collect();
    assert!(secrets.len() >= 40, "{} secret cases", secrets.len());
    assert!(kinds.len() >= 40, "{} kinds in the corpus", kinds.len());
    assert!(
        lookalikes().len() >= 40,
        "{} look-alikes",
        lookalikes().len()
    );
}

#[test]
fn every_secret_in_the_corpus_is_redacted_exactly() {
    let s = scrubber();
    let mut failures = Vec::new();
    for case in secret_cases() {
        let (out, findings) = s.scrub(&case.input);
        if out != case.expected {
            failures.push(format!(
                "line {} ({}):\n  got:      {}\n  expected: {}",
                case.line, case.kind, out, case.expected
            ));
            continue;
        }
        assert!(
            !out.contains(&case.secret),
            "line {}: secret survived",
            case.line
        );
        assert!(matches!(out, Cow::Owned(_)));
        assert_eq!(findings.len(), 1, "line {}: {findings:?}", case.line);
        let f = &findings[0];
        assert_eq!(f.kind, case.kind, "line {}", case.line);
        assert_eq!(
            &case.input[f.start..f.end],
            case.secret,
            "line {}",
            case.line
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_kind_has_a_corpus_case() {
    let cases = secret_cases();
    let missing: Vec<&str> = scrubber()
        .kinds()
        .into_iter()
        .filter(|k| !cases.iter().any(|c| c.kind == *k))
        .collect();
    assert!(
        missing.is_empty(),
        "kinds without a corpus case: {missing:?}"
    );
    for case in &cases {
        assert!(
            scrubber().kinds().contains(&case.kind.as_str()),
            "line {}: unknown kind {}",
            case.line,
            case.kind
        );
    }
}

#[test]
fn the_catalogue_describes_every_kind_in_order() {
    let kinds = scrubber().kinds();
    let listed: Vec<&str> = cairn_text::scrub::catalogue()
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(listed, kinds);
    for e in cairn_text::scrub::catalogue() {
        for cell in [e.matches, e.shape, e.gitleaks, e.trufflehog] {
            assert!(
                !cell.is_empty() && !cell.contains('|'),
                "{}: {cell:?}",
                e.kind
            );
        }
    }
    assert!(
        scrubber().rule_count() >= kinds.len() - 2,
        "{}",
        scrubber().rule_count()
    );
}

/// `docs/security/scrubber.md` prints the catalogue; when a rule changes, paste the table this
/// test prints into it.
#[test]
fn the_doc_table_is_the_catalogue() {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/security/scrubber.md");
    let doc = fs_err::read_to_string(doc).unwrap();
    let table = cairn_text::scrub::markdown();
    assert!(
        doc.contains(&table),
        "docs/security/scrubber.md is out of date; its table is now:\n{table}"
    );
    for version in [
        cairn_text::scrub::GITLEAKS_VERSION,
        cairn_text::scrub::TRUFFLEHOG_VERSION,
    ] {
        assert!(doc.contains(version), "the doc does not name {version}");
    }
    let count = format!("{} kinds", scrubber().kinds().len());
    assert!(doc.contains(&count), "the doc does not say {count}");
}

#[test]
fn lookalikes_stay_byte_for_byte() {
    let s = scrubber();
    let mut failures = Vec::new();
    for (line, text) in lookalikes() {
        let (out, findings) = s.scrub(&text);
        if !findings.is_empty() || !matches!(out, Cow::Borrowed(_)) {
            failures.push(format!("line {line}: {findings:?}\n  {out}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn scrubbing_is_idempotent() {
    let s = scrubber();
    let inputs = secret_cases()
        .into_iter()
        .map(|c| c.input)
        .chain(lookalikes().into_iter().map(|(_, l)| l));
    for input in inputs {
        let (once, _) = s.scrub(&input);
        let (twice, findings) = s.scrub(&once);
        assert_eq!(once, twice, "not idempotent");
        assert!(findings.is_empty(), "{findings:?} in {once}");
        assert!(matches!(twice, Cow::Borrowed(_)));
    }
}

#[test]
fn clean_text_is_borrowed() {
    let text = "fn main() {\n    println!(\"hello, world\");\n}\n";
    let (out, findings) = scrubber().scrub(text);
    assert!(matches!(out, Cow::Borrowed(t) if std::ptr::eq(t, text)));
    assert!(findings.is_empty());
    let (out, _) = scrubber().scrub("");
    assert!(matches!(out, Cow::Borrowed("")));
}

#[test]
fn several_secrets_on_one_line() {
    let line = "AWS_ACCESS_KEY_ID=AKIAQ7R2M5X9K3L8P4ZD GH=ghp_k3Tq9ZLm2VxB7cRw4YpN8sHd6FjG1aUe5Oio \
                DATABASE_URL=postgres://app:Qz8vLm2Rt5Wx@db:5432/app done";
    let (out, findings) = scrubber().scrub(line);
    assert_eq!(
        out,
        "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id] GH=[REDACTED:github-token] \
         DATABASE_URL=postgres://app:[REDACTED:connection-string-password]@db:5432/app done"
    );
    let kinds: Vec<&str> = findings.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            "aws-access-key-id",
            "github-token",
            "connection-string-password"
        ]
    );
    assert!(findings.windows(2).all(|w| w[0].end <= w[1].start));
}

#[test]
fn pem_block_spanning_lines_is_one_redaction() {
    let text = "Here is the key:\n\
        -----BEGIN RSA PRIVATE KEY-----\n\
        Proc-Type: 4,ENCRYPTED\n\
        DEK-Info: AES-128-CBC,3F2A9C1B7D4E8F60A1B2C3D4E5F60718\n\
        \n\
        MIIEowIBAAKCAQEAu9p1Zk3Xq7Lm2Vr8Tw5Yc4Hd1Gs6Jf0Ae2Ui7Oz4Kx9Pq2Lm7Rt\n\
        4Vb8Nw3Yc6Hd1Gs5Jf0Ae2Ui7Oz4Kx9Pq2Lm7Rt4Vb8Nw3Yc6Hd1Gs5Jf0Ae2Ui7O\n\
        -----END RSA PRIVATE KEY-----\n\
        and that was all.";
    let (out, findings) = scrubber().scrub(text);
    assert_eq!(
        out,
        "Here is the key:\n[REDACTED:private-key]\nand that was all."
    );
    assert_eq!(findings.len(), 1);
    assert!(text[findings[0].start..findings[0].end].ends_with("-----END RSA PRIVATE KEY-----"));
}

#[test]
fn json_values_and_keyed_secrets() {
    let mut value = json!({
        "model": "claude-sonnet-4",
        "env": {
            "OPENAI_API_KEY": "sk-proj-Zq3vK8pLm2XrT9wBn4YcJ6hDf1GsQ7eAu0iOk5Nz",
            "DB_PASSWORD": "Tr0ub4dor&3-horse",
            "HOME": "/home/alice",
            "API_TOKEN": "${API_TOKEN}",
            "max_tokens": "4096",
        },
        "messages": [
            {"role": "user", "content": "my token is ghp_k3Tq9ZLm2VxB7cRw4YpN8sHd6FjG1aUe5Oio ok?"},
            {"role": "assistant", "content": "Never paste tokens."},
        ],
        "credentials": {"password": "xxxxxxxx", "client_secret": "q7Vb2Lm9Xr4Tw8Kp"},
        "api_keys": ["K9pQ2vLm7Xr4Tw8Bn3Yc", "<your-key>"],
        "authorization": "Bearer 8f2Kq9Lm3Vx7Rt5Wb1Yc",
        "count": 3,
        "ok": true,
        "ghp_k3Tq9ZLm2VxB7cRw4YpN8sHd6FjG1aUe5Oio": "a secret used as a key",
    });
    let n = scrubber().scrub_json(&mut value);
    assert_eq!(
        value,
        json!({
            "model": "claude-sonnet-4",
            "env": {
                "OPENAI_API_KEY": "[REDACTED:openai-api-key]",
                "DB_PASSWORD": "[REDACTED:keyed-secret]",
                "HOME": "/home/alice",
                "API_TOKEN": "${API_TOKEN}",
                "max_tokens": "4096",
            },
            "messages": [
                {"role": "user", "content": "my token is [REDACTED:github-token] ok?"},
                {"role": "assistant", "content": "Never paste tokens."},
            ],
            "credentials": {"password": "xxxxxxxx", "client_secret": "[REDACTED:keyed-secret]"},
            "api_keys": ["[REDACTED:keyed-secret]", "<your-key>"],
            "authorization": "Bearer [REDACTED:bearer-token]",
            "count": 3,
            "ok": true,
            "[REDACTED:github-token]": "a secret used as a key",
        })
    );
    assert_eq!(n, 7);
    // Scrubbing again finds nothing.
    let before = value.clone();
    assert_eq!(scrubber().scrub_json(&mut value), 0);
    assert_eq!(value, before);
}

#[test]
fn json_text_inside_a_string_is_scrubbed_too() {
    let mut value = json!({
        "tool_result": "{\"password\": \"Tr0ub4dor&3-horse\", \"user\": \"alice\"}"
    });
    assert_eq!(scrubber().scrub_json(&mut value), 1);
    assert_eq!(
        value["tool_result"],
        "{\"password\": \"[REDACTED:keyed-secret]\", \"user\": \"alice\"}"
    );
}

#[test]
fn findings_point_into_the_input() {
    let text = "ünïcödé ✓ token: ghp_k3Tq9ZLm2VxB7cRw4YpN8sHd6FjG1aUe5Oio ✓";
    let (_, findings) = scrubber().scrub(text);
    let start = text.find("ghp_").unwrap();
    assert_eq!(
        findings,
        vec![Finding {
            kind: "github-token",
            start,
            end: start + 40
        }]
    );
}

#[test]
fn kinds_are_many_unique_and_kebab_case() {
    let kinds = Scrubber::new().kinds();
    assert!(kinds.len() >= 40, "{} kinds", kinds.len());
    let unique: std::collections::BTreeSet<_> = kinds.iter().collect();
    assert_eq!(unique.len(), kinds.len());
    for k in &kinds {
        assert!(
            k.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !k.starts_with('-')
                && !k.ends_with('-'),
            "{k}"
        );
    }
    assert_eq!(kinds.last(), Some(&"high-entropy"));
    assert!(kinds.contains(&"keyed-secret"));
}

#[test]
fn shared_instance_is_usable_from_threads() {
    let handles: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                let text = format!(
                    "run {i}: 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"
                );
                scrubber().scrub(&text).1.len()
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 1);
    }
}

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn random_input_never_panics_and_stays_consistent() {
    const PIECES: &[&str] = &[
        "sk-",
        "ant-",
        "api03-",
        "ghp_",
        "AKIA",
        "eyJ",
        ".",
        "-----BEGIN ",
        "PRIVATE KEY-----",
        "-----END ",
        "://",
        ":",
        "@",
        "password",
        "=",
        "\"",
        "'",
        " ",
        "\n",
        "\\n",
        "Bearer ",
        "Authorization: ",
        "[REDACTED:",
        "]",
        "/",
        "+",
        "_",
        "-",
        "==",
        "é",
        "✓",
        "日本",
        "🦀",
        "\u{0}",
        "\r\n",
        "token",
        "key",
        "xoxb-",
        "hf_",
        "AIza",
        "sha512-",
        "data:image/png;base64,",
        "$",
        "{",
        "}",
        "<",
        ">",
        "${",
        "mysql -p",
        "curl -u a:",
        "postgres://u:",
    ];
    const ALPHA: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-";
    let s = scrubber();
    // `SCRUB_FUZZ_ITERS=200000 SCRUB_FUZZ_SEED=7` for a longer run.
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ env("SCRUB_FUZZ_SEED", 0));
    for _ in 0..env("SCRUB_FUZZ_ITERS", 3000) {
        let mut text = String::new();
        for _ in 0..rng.below(40) {
            if rng.below(3) == 0 {
                for _ in 0..rng.below(60) {
                    text.push(ALPHA[rng.below(ALPHA.len())] as char);
                }
            } else {
                text.push_str(PIECES[rng.below(PIECES.len())]);
            }
        }
        let (out, findings) = s.scrub(&text);
        let mut last = 0;
        for f in &findings {
            assert!(
                f.start >= last && f.start < f.end && f.end <= text.len(),
                "{findings:?}"
            );
            assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
            last = f.end;
        }
        let (again, _) = s.scrub(&out);
        assert_eq!(out, again, "not idempotent for {text:?}");
    }
}

/// Throughput on ~1 MB of ordinary code and prose (the workspace's own sources). Not a gate;
/// run with `cargo test --release -p cairn-text --test scrub -- --ignored --nocapture`.
#[test]
#[ignore = "timing, run on demand in release"]
fn throughput_on_one_megabyte() {
    let root = std::env::var_os("SCRUB_BENCH_ROOT").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
        PathBuf::from,
    );
    let mut text = String::new();
    let mut stack = vec![root.join("crates"), root.join("ui/src"), root.to_path_buf()];
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if p.is_dir() && !name.starts_with('.') && name != "target" && name != "node_modules" {
                if dir != root {
                    stack.push(p);
                }
            } else if ["rs", "md", "ts", "svelte", "toml"]
                .iter()
                .any(|ext| p.extension().is_some_and(|x| x == *ext))
                && !p.to_string_lossy().contains("scrub_corpus")
            {
                files.push(p);
            }
        }
    }
    files.sort();
    for f in &files {
        if let Ok(t) = fs_err::read_to_string(f) {
            text.push_str(&t);
        }
    }
    assert!(!text.is_empty());
    let base = text.clone();
    while text.len() < 1 << 20 {
        text.push_str(&base);
    }
    text.truncate(
        (1..=4)
            .map(|d| (1 << 20) - d)
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0),
    );
    let built = std::time::Instant::now();
    let s = Scrubber::new();
    let build = built.elapsed();
    // The same megabyte once scrubbed has no secrets left: the clean, single-pass case.
    let clean = s.scrub(&text).0.into_owned();
    let time = |t: &str| {
        let runs = 20;
        let start = std::time::Instant::now();
        let mut found = 0;
        for _ in 0..runs {
            found = s.scrub(t).1.len();
        }
        (start.elapsed() / runs, found)
    };
    let (raw, found) = time(&text);
    let (scrubbed, again) = time(&clean);
    println!(
        "{} files, {} bytes: {raw:?} per scrub with {found} findings; {} bytes already \
         scrubbed: {scrubbed:?} per scrub ({again} findings); Scrubber::new {build:?}",
        files.len(),
        text.len(),
        clean.len()
    );
}
