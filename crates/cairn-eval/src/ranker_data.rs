//! The owned ranker set (`data/ranker/histories.json`) as capture sees it.
//!
//! A sample of the owned set (sessions carrying `session_N_framework`) is written as real
//! agent session files in a user home — Claude Code's JSONL for `claude-code` and `cursor`,
//! Codex's rollout files for the other frameworks — with the session's date as the message
//! times, the project as the working folder (a git repository whose `origin` is the project)
//! and each agent turn's tool steps as the format's tool calls and results. `cairn eval note`
//! and `cairn ranker train` capture those files with `cairn_capture::pass::run`, so their
//! records are the ones capture makes; [`write_sessions`] says which record holds each
//! dialog id.
//!
//! [`shapes`] measures what the ranker could learn from the generator instead of from
//! relevance: per sample, the length of evidence and filler records (their text as capture
//! builds it) and their age when the requests are asked, and the two-sample
//! Kolmogorov–Smirnov distance of each pair.
use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, bail};
use cairn_core::RecordId;
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use crate::locomo::session_time;

/// The session format a sample's framework is written in: Claude Code's for `claude-code` and
/// `cursor`, Codex's for the others. Requests are asked under the same name, so whether a
/// record comes from the asking framework still varies.
pub fn captured_framework(name: &str) -> &'static str {
    match name {
        "claude-code" | "cursor" => "claude-code",
        _ => "codex",
    }
}

/// Whether a conversation is of the owned set (a framework per session).
pub fn is_owned(conversation: &Value) -> bool {
    conversation["session_1_framework"].is_string()
}

/// One tool step of an agent turn (`{"name", "input", "output"}` in the file).
struct Tool<'a> {
    name: &'a str,
    input: &'a str,
    output: &'a str,
}

/// One record to be: a user turn and the agent turns after it.
struct Exchange<'a> {
    dias: Vec<&'a str>,
    user: &'a str,
    /// Each agent turn's answer and tool steps.
    answers: Vec<(&'a str, Vec<Tool<'a>>)>,
}

/// A session of a sample.
struct Session<'a> {
    n: usize,
    framework: &'a str,
    project: &'a str,
    at: DateTime<Utc>,
    exchanges: Vec<Exchange<'a>>,
}

/// The sessions of an owned sample, in order.
fn sessions<'a>(id: &str, c: &'a Value) -> anyhow::Result<Vec<Session<'a>>> {
    let user = c["speaker_a"].as_str().unwrap_or("user");
    let mut out = Vec::new();
    for n in 1.. {
        let Some(turns) = c[format!("session_{n}")].as_array() else {
            break;
        };
        let when = c[format!("session_{n}_date_time")].as_str().unwrap_or("");
        let at = session_time(when).with_context(|| {
            format!("{id}: session {n} has no readable session_{n}_date_time ({when:?})")
        })?;
        let framework = c[format!("session_{n}_framework")]
            .as_str()
            .with_context(|| format!("{id}: session {n} has no session_{n}_framework"))?;
        let project = c[format!("session_{n}_project")]
            .as_str()
            .with_context(|| format!("{id}: session {n} has no session_{n}_project"))?;
        let mut exchanges: Vec<Exchange> = Vec::new();
        for t in turns {
            let (Some(dia), Some(text)) = (t["dia_id"].as_str(), t["text"].as_str()) else {
                bail!("{id}: a turn of session {n} has no dia_id or text");
            };
            if t["speaker"].as_str() == Some(user) {
                exchanges.push(Exchange {
                    dias: vec![dia],
                    user: text,
                    answers: Vec::new(),
                });
                continue;
            }
            let Some(ex) = exchanges.last_mut() else {
                bail!("{id}: session {n} starts with an agent turn ({dia}), not a request");
            };
            let mut tools = Vec::new();
            for s in t["tools"].as_array().into_iter().flatten() {
                let name = s["name"].as_str().unwrap_or("");
                if !matches!(name, "Bash" | "Read" | "Grep" | "Edit") {
                    bail!("{id}: {dia} has a tool step named {name:?} (Bash, Read, Grep or Edit)");
                }
                tools.push(Tool {
                    name,
                    input: s["input"].as_str().unwrap_or(""),
                    output: s["output"].as_str().unwrap_or(""),
                });
            }
            ex.dias.push(dia);
            ex.answers.push((text, tools));
        }
        out.push(Session {
            n,
            framework,
            project,
            at,
            exchanges,
        });
    }
    Ok(out)
}

/// A tool step's name and input as the format writes it: Codex runs commands through its
/// `shell` tool; the others keep the generator's names, with Claude Code's input fields.
fn tool_call(format: &str, t: &Tool) -> (String, Value) {
    if format == "codex" && t.name == "Bash" {
        return (
            "shell".to_owned(),
            json!({"command": ["bash", "-lc", t.input]}),
        );
    }
    let input = match t.name {
        "Bash" => json!({"command": t.input}),
        "Read" => json!({"file_path": t.input}),
        "Grep" => {
            let (pattern, path) = t.input.split_once(" in ").unwrap_or((t.input, "."));
            json!({"path": path, "pattern": pattern})
        }
        _ => {
            let (path, rest) = t.input.split_once('\n').unwrap_or((t.input, ""));
            let (old, new) = rest.split_once("\n=>\n").unwrap_or((rest, ""));
            json!({"file_path": path, "new_string": new, "old_string": old})
        }
    };
    (t.name.to_owned(), input)
}

/// A record's text as capture builds it (`cairn_capture::record`): the request, each tool
/// step as `[tool name] input` and its output, each answer.
fn record_text(format: &str, ex: &Exchange) -> String {
    let mut text = ex.user.to_owned();
    for (answer, tools) in &ex.answers {
        for t in tools {
            let (name, input) = tool_call(format, t);
            text.push_str(&format!("\n\n[tool {name}] {input}"));
            if !t.output.is_empty() {
                text.push('\n');
                text.push_str(t.output);
            }
        }
        if !answer.trim().is_empty() {
            text.push_str("\n\n");
            text.push_str(answer.trim());
        }
    }
    text
}

/// A session id in the shape both formats use (a UUID), the same for the same sample and
/// session.
fn session_uuid(sample: &str, n: usize) -> String {
    let h = sample.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!(
        "{:08x}-{:04x}-4000-8000-{n:012x}",
        h >> 32,
        (h >> 16) & 0xffff
    )
}

fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The folder standing for a project: `<home>/src/<host>/<owner>/<repo>`, a git repository
/// whose `origin` is the project, so capture resolves it to the project's name.
fn project_dir(home: &Path, project: &str) -> anyhow::Result<std::path::PathBuf> {
    let rel: String = project
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_./".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let dir = home
        .join("src")
        .join(rel.trim_matches('/').replace("..", "_"));
    let git = dir.join(".git");
    if !git.exists() {
        fs_err::create_dir_all(&git)?;
        fs_err::write(git.join("HEAD"), "ref: refs/heads/main\n")?;
        fs_err::write(
            git.join("config"),
            format!("[remote \"origin\"]\n\turl = https://{project}.git\n"),
        )?;
    }
    Ok(dir)
}

/// Writes an owned sample's sessions as agent session files under `home` (a user home) and
/// returns which record each dialog id will be once captured, and each record's time.
pub fn write_sessions(
    sample: &str,
    conversation: &Value,
    home: &Path,
) -> anyhow::Result<HashMap<String, String>> {
    let mut record_of = HashMap::new();
    for s in sessions(sample, conversation)? {
        let format = captured_framework(s.framework);
        let sid = session_uuid(sample, s.n);
        let cwd = project_dir(home, s.project)?;
        let cwd = cwd.display().to_string();
        let mut lines: Vec<Value> = Vec::new();
        if format == "codex" {
            lines.push(
                json!({"timestamp": ts(s.at), "type": "session_meta", "payload": {
                "id": sid, "cwd": cwd, "originator": s.framework, "cli_version": "0.149.0",
                "source": "cli", "timestamp": ts(s.at)}}),
            );
        }
        let mut parent: Option<String> = None;
        for (k, ex) in s.exchanges.iter().enumerate() {
            // A minute per request; each step a second after the one before.
            let start = s.at + Duration::minutes(k as i64);
            let mut sec = 0;
            let mut at = || {
                sec += 1;
                ts(start + Duration::seconds(sec))
            };
            let id = if format == "codex" {
                let turn = format!("{sid}-t{k}");
                lines.push(
                    json!({"timestamp": ts(start), "type": "turn_context", "payload": {
                    "turn_id": turn, "cwd": cwd, "model": "gpt-5-codex"}}),
                );
                lines.push(
                    json!({"timestamp": ts(start), "type": "event_msg", "payload": {
                    "type": "task_started", "turn_id": turn}}),
                );
                lines.push(
                    json!({"timestamp": ts(start), "type": "response_item", "payload": {
                    "type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": ex.user}]}}),
                );
                lines.push(
                    json!({"timestamp": ts(start), "type": "event_msg", "payload": {
                    "type": "user_message", "message": ex.user, "images": []}}),
                );
                for (j, (answer, tools)) in ex.answers.iter().enumerate() {
                    for (i, t) in tools.iter().enumerate() {
                        let call = format!("call-{k}-{j}-{i}");
                        let (name, input) = tool_call(format, t);
                        lines.push(
                            json!({"timestamp": at(), "type": "response_item", "payload": {
                            "type": "function_call", "name": name,
                            "arguments": input.to_string(), "call_id": call}}),
                        );
                        let output = json!({"output": t.output, "metadata": {"exit_code": 0}});
                        lines.push(
                            json!({"timestamp": at(), "type": "response_item", "payload": {
                            "type": "function_call_output", "call_id": call,
                            "output": output.to_string()}}),
                        );
                    }
                    lines.push(
                        json!({"timestamp": at(), "type": "response_item", "payload": {
                        "type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": answer}]}}),
                    );
                }
                lines.push(json!({"timestamp": at(), "type": "event_msg", "payload": {
                    "type": "task_complete", "turn_id": turn}}));
                RecordId::derive("codex", &sid, &turn)
            } else {
                let uuid = format!("{sid}-u{k}");
                let line = |uuid: &str, parent: &Option<String>, at: String, extra: Value| {
                    let mut v = json!({"uuid": uuid, "parentUuid": parent, "sessionId": sid,
                        "timestamp": at, "cwd": cwd, "entrypoint": s.framework,
                        "version": "2.0.0", "userType": "external"});
                    if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
                        o.extend(e);
                    }
                    v
                };
                lines.push(line(
                    &uuid,
                    &parent,
                    ts(start),
                    json!({"type": "user", "message": {"role": "user", "content": ex.user}}),
                ));
                parent = Some(uuid.clone());
                let last = ex.answers.len().saturating_sub(1);
                for (j, (answer, tools)) in ex.answers.iter().enumerate() {
                    let msg = format!("{sid}-m{k}-{j}");
                    for (i, t) in tools.iter().enumerate() {
                        let call = format!("toolu-{k}-{j}-{i}");
                        let (name, input) = tool_call(format, t);
                        let a = format!("{sid}-a{k}-{j}-{i}");
                        lines.push(line(
                            &a,
                            &parent,
                            at(),
                            json!({"type": "assistant",
                            "message": {"id": format!("{msg}-{i}"), "role": "assistant",
                                "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
                                "content": [{"type": "tool_use", "id": call, "name": name,
                                    "input": input}]}}),
                        ));
                        let r = format!("{sid}-r{k}-{j}-{i}");
                        lines.push(line(
                            &r,
                            &Some(a),
                            at(),
                            json!({"type": "user",
                            "message": {"role": "user", "content": [{"type": "tool_result",
                                "tool_use_id": call, "content": t.output}]}}),
                        ));
                        parent = Some(r);
                    }
                    let a = format!("{sid}-a{k}-{j}");
                    let stop = if j == last {
                        json!("end_turn")
                    } else {
                        Value::Null
                    };
                    lines.push(line(
                        &a,
                        &parent,
                        at(),
                        json!({"type": "assistant",
                        "message": {"id": msg, "role": "assistant", "model": "claude-sonnet-4-5",
                            "stop_reason": stop,
                            "content": [{"type": "text", "text": answer}]}}),
                    ));
                    parent = Some(a);
                }
                RecordId::derive("claude-code", &sid, &uuid)
            };
            for d in &ex.dias {
                record_of.insert((*d).to_owned(), id.as_str().to_owned());
            }
        }
        let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let file = if format == "codex" {
            home.join(".codex/sessions")
                .join(s.at.format("%Y/%m/%d").to_string())
                .join(format!(
                    "rollout-{}-{sid}.jsonl",
                    s.at.format("%Y-%m-%dT%H-%M-%S")
                ))
        } else {
            let encoded: String = cwd
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            home.join(".claude/projects")
                .join(encoded)
                .join(format!("{sid}.jsonl"))
        };
        if let Some(dir) = file.parent() {
            fs_err::create_dir_all(dir)?;
        }
        fs_err::write(&file, body)?;
    }
    Ok(record_of)
}

/// How the sessions [`write_sessions`] wrote under `home` are captured: that home only,
/// Claude Code and Codex, every turn settled.
pub fn capture_options(home: &Path) -> cairn_capture::pass::PassOptions {
    cairn_capture::pass::PassOptions {
        env: cairn_capture::Env::fake(home, &[]),
        only: vec!["claude-code".to_owned(), "codex".to_owned()],
        disabled: Vec::new(),
        settle: std::time::Duration::ZERO,
        internal_dirs: Vec::new(),
        forget: Default::default(),
        aider_folders: Vec::new(),
        specstory_folders: Vec::new(),
        trusted_history_folders: Vec::new(),
        batch: Default::default(),
    }
}

/// The lengths (characters of the record's text) and ages (days before the sample's first
/// request) of one kind of record.
#[derive(Debug, Default, Clone)]
pub struct Spread {
    pub lengths: Vec<f64>,
    pub ages: Vec<f64>,
}

/// One sample's evidence records (holding a turn some request needs) against its filler
/// records (the rest).
#[derive(Debug, Clone)]
pub struct Shape {
    pub sample: String,
    pub evidence: Spread,
    pub filler: Spread,
    /// KS distance of the lengths.
    pub length_ks: f64,
    /// KS distance of the ages.
    pub age_ks: f64,
}

/// Two-sample Kolmogorov–Smirnov distance: the largest gap between the empirical
/// distribution functions of `a` and `b` (NaN when either is empty).
pub fn ks(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return f64::NAN;
    }
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

/// Reads a histories file (the owned set's shape) and measures, per sample with requests, its
/// evidence and filler records' lengths and ages at asking time (before its first request)
/// and the KS distance of each pair.
pub fn shapes(file: &Path) -> anyhow::Result<Vec<Shape>> {
    let data: Value = serde_json::from_str(
        &fs_err::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?,
    )
    .with_context(|| format!("{} is not JSON", file.display()))?;
    let Some(samples) = data.as_array() else {
        bail!("{} is not a list of samples", file.display());
    };
    let mut out = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let id = s["sample_id"]
            .as_str()
            .map_or_else(|| format!("sample-{}", i + 1), str::to_owned);
        if !is_owned(&s["conversation"]) {
            bail!(
                "{}: {id} has no session_1_framework (not the owned set's shape)",
                file.display()
            );
        }
        let qa = s["qa"].as_array().map(Vec::as_slice).unwrap_or_default();
        // A sample without requests has nothing asked, so no age and no evidence: skipped.
        let Some(ask) = qa
            .iter()
            .filter_map(|q| q["date_time"].as_str().and_then(session_time))
            .min()
        else {
            continue;
        };
        let needed: std::collections::HashSet<&str> = qa
            .iter()
            .filter(|q| q["category"].as_u64() == Some(4))
            .flat_map(|q| q["evidence"].as_array().into_iter().flatten())
            .filter_map(Value::as_str)
            .collect();
        let (mut evidence, mut filler) = (Spread::default(), Spread::default());
        for session in sessions(&id, &s["conversation"])? {
            let format = captured_framework(session.framework);
            for ex in &session.exchanges {
                let into = if ex.dias.iter().any(|d| needed.contains(d)) {
                    &mut evidence
                } else {
                    &mut filler
                };
                into.lengths
                    .push(record_text(format, ex).chars().count() as f64);
                into.ages
                    .push((ask - session.at).num_seconds() as f64 / 86_400.0);
            }
        }
        out.push(Shape {
            sample: id,
            length_ks: ks(&evidence.lengths, &filler.lengths),
            age_ks: ks(&evidence.ages, &filler.ages),
            evidence,
            filler,
        });
    }
    Ok(out)
}

/// All samples' records pooled: the KS distance of lengths and of ages.
pub fn pooled(shapes: &[Shape]) -> (f64, f64) {
    let cat = |f: fn(&Shape) -> &Vec<f64>| shapes.iter().flat_map(f).copied().collect::<Vec<_>>();
    (
        ks(&cat(|s| &s.evidence.lengths), &cat(|s| &s.filler.lengths)),
        ks(&cat(|s| &s.evidence.ages), &cat(|s| &s.filler.ages)),
    )
}

/// The largest KS distance of pooled record lengths, evidence against filler, that the set
/// may show. With the committed set's ~420 evidence and ~2,150 filler records, two samples of
/// one distribution stay under 0.073 in 95 % of draws; 0.15 is twice that, and the set that
/// taught the ranker passage length (long planted answers, short filler) measured 0.71.
pub const MAX_LENGTH_KS: f64 = 0.15;

/// The largest KS distance of pooled ages at asking time. The same 0.073 bound holds; the
/// set that planted facts only in the first 80 % of sessions measured 0.205, so the margin
/// is 0.12 (above chance, below that artefact) rather than 0.2.
pub const MAX_AGE_KS: f64 = 0.12;

/// Whether a set's pooled evidence and filler records are alike in length and age; the error
/// names the distance that is too large.
pub fn check(shapes: &[Shape]) -> Result<(f64, f64), String> {
    let (length, age) = pooled(shapes);
    if length.is_nan() || age.is_nan() {
        return Err("the set has no evidence or no filler records".to_owned());
    }
    if length > MAX_LENGTH_KS {
        return Err(format!(
            "evidence and filler records differ in length: KS distance {length:.3} > {MAX_LENGTH_KS}"
        ));
    }
    if age > MAX_AGE_KS {
        return Err(format!(
            "evidence and filler records differ in age: KS distance {age:.3} > {MAX_AGE_KS}"
        ));
    }
    Ok((length, age))
}

/// One line on a histories file for `cairn ranker train`: how alike its evidence and filler
/// records are in length and age, or what the ranker could learn instead of relevance.
pub fn describe(file: &Path) -> anyhow::Result<String> {
    let shapes = shapes(file)?;
    // Per sample the counts are small (a few dozen evidence records), so only the pooled
    // distances are held to the bounds; the largest per-sample ones are said for reading.
    let worst = |f: fn(&Shape) -> f64| {
        shapes
            .iter()
            .filter(|s| f(s).is_finite())
            .max_by(|a, b| f(a).total_cmp(&f(b)))
            .map_or_else(
                || "none".to_owned(),
                |s| format!("{:.3} ({})", f(s), s.sample),
            )
    };
    let per_sample = format!(
        "largest per sample: length {}, age {}",
        worst(|s| s.length_ks),
        worst(|s| s.age_ks)
    );
    Ok(match check(&shapes) {
        Ok((length, age)) => format!(
            "Evidence against filler in {}: length KS {length:.3}, age KS {age:.3} (within {MAX_LENGTH_KS} and {MAX_AGE_KS}; {per_sample})",
            file.display()
        ),
        Err(e) => format!(
            "Warning: {} may teach the ranker its generator: {e} ({per_sample})",
            file.display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/ranker/histories.json")
    }

    #[test]
    fn ks_distance_of_known_samples() {
        assert_eq!(ks(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), 0.0);
        assert_eq!(ks(&[1.0, 2.0], &[3.0, 4.0]), 1.0);
        assert!((ks(&[1.0, 2.0, 3.0, 4.0], &[3.0, 4.0, 5.0, 6.0]) - 0.5).abs() < 1e-9);
        assert!(ks(&[], &[1.0]).is_nan());
    }

    #[test]
    fn committed_set_has_no_length_or_age_artefact() {
        let shapes = shapes(&committed()).unwrap();
        assert!(shapes.len() >= 10, "{} samples", shapes.len());
        let evidence: usize = shapes.iter().map(|s| s.evidence.lengths.len()).sum();
        let filler: usize = shapes.iter().map(|s| s.filler.lengths.len()).sum();
        assert!(
            evidence >= 200 && filler >= 1000,
            "{evidence} evidence, {filler} filler"
        );
        let (length, age) = check(&shapes).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("pooled KS: length {length:.3}, age {age:.3}");
        for s in &shapes {
            assert!(
                s.length_ks.is_finite() && s.age_ks.is_finite(),
                "{}",
                s.sample
            );
        }
    }

    /// A made-up set with the old artefact: every planted answer long, every filler answer
    /// short, facts only in early sessions.
    fn artefact_set(long_evidence: bool, early_facts: bool) -> Value {
        let mut conv = json!({"speaker_a": "user", "speaker_b": "agent"});
        let mut qa = Vec::new();
        for n in 1..=10usize {
            conv[format!("session_{n}_date_time")] = json!(format!("9:00 am on {n} May, 2026"));
            conv[format!("session_{n}_project")] = json!("github.com/acme/billing-api");
            conv[format!("session_{n}_framework")] =
                json!(if n % 2 == 0 { "codex" } else { "claude-code" });
            let mut turns = Vec::new();
            for k in 0..6 {
                let fact = k == 0 && (!early_facts || n <= 5);
                let answer = if fact && long_evidence {
                    "The staging deploy is tag-driven and migrations run first. ".repeat(6)
                } else {
                    "Done, tests pass.".to_owned()
                };
                turns.push(
                    json!({"speaker": "user", "dia_id": format!("D{n}:{}", 2 * k + 1),
                    "text": "a request"}),
                );
                turns.push(
                    json!({"speaker": "agent", "dia_id": format!("D{n}:{}", 2 * k + 2),
                    "text": answer}),
                );
                if fact {
                    qa.push(json!({"question": "how do we deploy?", "category": 4,
                        "evidence": [format!("D{n}:{}", 2 * k + 2)],
                        "date_time": "8:00 am on 20 May, 2026"}));
                }
            }
            conv[format!("session_{n}")] = json!(turns);
        }
        json!([{"sample_id": "made-up", "conversation": conv, "qa": qa}])
    }

    fn shapes_of(set: &Value) -> Vec<Shape> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("set.json");
        fs_err::write(&file, set.to_string()).unwrap();
        shapes(&file).unwrap()
    }

    #[test]
    fn training_is_told_about_an_artefact() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("set.json");
        fs_err::write(&file, artefact_set(true, false).to_string()).unwrap();
        let line = describe(&file).unwrap();
        assert!(
            line.starts_with("Warning:") && line.contains("length"),
            "{line}"
        );
        let line = describe(&committed()).unwrap();
        assert!(line.starts_with("Evidence against filler"), "{line}");
    }

    #[test]
    fn the_check_catches_long_evidence_and_short_filler() {
        let err = check(&shapes_of(&artefact_set(true, false))).unwrap_err();
        assert!(err.contains("length"), "{err}");
        let err = check(&shapes_of(&artefact_set(false, true))).unwrap_err();
        assert!(err.contains("age"), "{err}");
        // The same set with neither artefact passes.
        check(&shapes_of(&artefact_set(false, false))).unwrap();
    }

    /// Capture makes exactly the records the measure assumes: one per request, holding its
    /// dialog ids, with the text (tool steps included) whose length is measured.
    #[tokio::test]
    async fn captured_records_are_the_measured_ones() {
        let data: Value =
            serde_json::from_str(&fs_err::read_to_string(committed()).unwrap()).unwrap();
        let sample = &data[0];
        let id = sample["sample_id"].as_str().unwrap();
        let home = tempfile::tempdir().unwrap();
        let record_of = write_sessions(id, &sample["conversation"], home.path()).unwrap();
        let store = cairn_store::Store::open(&home.path().join("cairn.db"))
            .await
            .unwrap();
        let opts = capture_options(home.path());
        let report = cairn_capture::pass::run(&store, &opts, &|_| {})
            .await
            .unwrap();
        let frameworks: Vec<&str> = report
            .frameworks
            .iter()
            .filter(|f| f.added > 0)
            .map(|f| f.framework.as_str())
            .collect();
        let mut expected: HashMap<String, usize> = HashMap::new();
        let mut projects = std::collections::HashSet::new();
        for s in sessions(id, &sample["conversation"]).unwrap() {
            projects.insert(s.project.to_owned());
            for ex in &s.exchanges {
                let rid = &record_of[ex.dias[0]];
                expected.insert(
                    rid.clone(),
                    record_text(captured_framework(s.framework), ex)
                        .chars()
                        .count(),
                );
            }
        }
        let mut with_tools = 0;
        for (rid, len) in &expected {
            let r = store
                .record(&RecordId::new(rid.clone()))
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("record {rid} was not captured ({frameworks:?})"));
            assert_eq!(r.record.text.chars().count(), *len, "{}", r.record.text);
            assert!(
                projects.contains(r.record.project.as_deref().unwrap_or("")),
                "{:?}",
                r.record.project
            );
            assert!(r.record.author.is_none());
            if r.record.text.contains("\n\n[tool ") {
                if with_tools == 0 {
                    let shown: String = r.record.text.chars().take(700).collect();
                    eprintln!("a captured record ({}):\n{shown}", r.record.framework);
                }
                with_tools += 1;
            }
        }
        assert!(
            with_tools > expected.len() / 4,
            "{with_tools} of {}",
            expected.len()
        );
    }
}
