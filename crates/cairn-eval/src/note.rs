//! `cairn eval note` and `cairn ranker train`: the turn note measured, and its ranker
//! trained, through the product's own path.
//!
//! Each conversation of a LoCoMo-format file becomes the memory of a real service in a
//! temporary home (the real store, keyword index and embedded vector index, the models the
//! settings name), its turns made into records the way capture makes them. Then each
//! question is an agent turn asking that service for its note (`turn_note`, logged
//! nowhere):
//!
//! - **own** questions against their own conversation: the note should hold an evidence
//!   turn (hit), and its entries should be evidence (precision); a question that needs
//!   nothing earlier (category 6 in the owned set) should get no note;
//! - **foreign** questions — each conversation's questions asked against the next
//!   conversation's memory, in that memory's project — should get no note at all.
//!
//! The owned set (`data/ranker/histories.json`) adds to LoCoMo's shape a project and a
//! framework per session, and tool steps on agent turns. Its sessions are written as real
//! agent session files (Claude Code's and Codex's formats, `ranker_data`) and captured by
//! `cairn_capture::pass::run`, so its records — a request with the agent's tool steps and
//! answers — are the ones capture makes. LoCoMo's turns are each made a record the way
//! capture would store them.
//!
//! Training labels every candidate of every question: needed when it is an evidence turn or
//! an item citing one. Foreign questions add groups where nothing is needed. The cross-fit
//! deals questions into folds by what repeats across them: the owned set's request template
//! (a planted fact's requests and near misses share one; other requests their bank), a
//! LoCoMo file's conversation, so no figure is measured on a template the model learned.
//!
//! An owned-set memory holds more than records, as a memory in use does ([`enrich`]): items
//! made from its planted facts (the fact's answer as summary, its evidence records as
//! sources) and decoy items made from filler exchanges, written through the store's item
//! log, and an injection log of simulated earlier turns (a needed record shown now and then,
//! filler shown and marked not useful now and then), which the note reads as each
//! candidate's `uses` and `not_useful`.
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use cairn_api::{Host as ServiceHost, Service, ServiceOptions};
use cairn_config::{Paths, Settings};
use cairn_core::api::{NoteEvalFigures, TurnNoteReq};
use cairn_core::{NewRecord, Outcome, RecordId};
use cairn_turn::Candidate;
use cairn_turn::note::Kind;
use serde::Serialize;

use crate::locomo::{audit_corrections, evidence_ids, session_time};
use crate::ranker_data;

/// LoCoMo categories whose questions have evidence turns (5, adversarial, has none).
const NEEDED_CATEGORIES: [u64; 4] = [1, 2, 3, 4];
/// The owned set's category for a request that needs nothing earlier.
const NOT_NEEDED: u64 = 6;

/// One question of a conversation.
#[derive(Debug, Clone)]
struct Question {
    text: String,
    /// Evidence dialog ids (none: nothing earlier is needed).
    evidence: Vec<String>,
    project: Option<String>,
    framework: Option<String>,
    /// When it is asked (none: the day after the conversation's last session).
    at: Option<chrono::DateTime<chrono::Utc>>,
    /// What the cross-fit deals into folds: the owned set's request template, else the
    /// conversation.
    fold: String,
}

/// One conversation of the file.
struct Sample {
    id: String,
    conversation: serde_json::Value,
    questions: Vec<Question>,
}

/// Reads a LoCoMo-format file (and the audit's corrections, when given).
fn samples(file: &Path, audit: Option<&Path>) -> anyhow::Result<Vec<Sample>> {
    let data: serde_json::Value = serde_json::from_str(
        &fs_err::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?,
    )
    .with_context(|| format!("{} is not JSON", file.display()))?;
    let Some(convs) = data.as_array() else {
        bail!(
            "{} is not a LoCoMo-format file: expected a list of conversations",
            file.display()
        )
    };
    let corrections = audit_corrections(audit)?;
    let mut out = Vec::new();
    for (n, c) in convs.iter().enumerate() {
        let id = c["sample_id"]
            .as_str()
            .map_or_else(|| format!("conversation-{}", n + 1), str::to_owned);
        if !c["conversation"].is_object() {
            bail!(
                "{}: conversation {id} has no \"conversation\" object",
                file.display()
            );
        }
        let owned = ranker_data::is_owned(&c["conversation"]);
        let mut questions = Vec::new();
        for (i, q) in c["qa"].as_array().into_iter().flatten().enumerate() {
            let Some(text) = q["question"].as_str().filter(|t| !t.trim().is_empty()) else {
                continue;
            };
            let category = q["category"].as_u64().unwrap_or(0);
            let evidence = corrections
                .get(&(id.clone(), i))
                .cloned()
                .unwrap_or_else(|| evidence_ids(&q["evidence"]));
            let keep = if category == NOT_NEEDED {
                true
            } else {
                NEEDED_CATEGORIES.contains(&category) && !evidence.is_empty()
            };
            if !keep {
                continue;
            }
            questions.push(Question {
                text: text.to_owned(),
                evidence: if category == NOT_NEEDED {
                    Vec::new()
                } else {
                    evidence
                },
                project: q["project"].as_str().map(str::to_owned),
                // The owned set's frameworks are captured in Claude Code's or Codex's format;
                // a request is asked under the name its framework's records carry.
                framework: q["framework"].as_str().map(|f| {
                    if owned {
                        ranker_data::captured_framework(f).to_owned()
                    } else {
                        f.to_owned()
                    }
                }),
                at: q["date_time"].as_str().and_then(session_time),
                fold: match q["template"].as_str() {
                    Some(t) if owned => format!("template:{t}"),
                    _ => format!("conversation:{id}"),
                },
            });
        }
        out.push(Sample {
            id,
            conversation: c["conversation"].clone(),
            questions,
        });
    }
    if out.is_empty() {
        bail!("{} holds no conversation", file.display());
    }
    Ok(out)
}

/// A conversation's memory: the service over its records, and which record holds each
/// dialog id.
struct Memory {
    service: Service,
    record_of: HashMap<String, String>,
    project: String,
    framework: String,
    /// The day after the last session: when a question without a time is asked.
    now: chrono::DateTime<chrono::Utc>,
    /// Dropped last: the service's files live in it.
    _home: tempfile::TempDir,
}

/// Records with their chunks, as the store takes them.
type Batch = Vec<(NewRecord, Vec<cairn_core::Chunk>)>;

/// The records of a LoCoMo conversation, the way capture would store them: every turn a
/// record, no author (capture stores none), the session's date as the time.
fn records(sample: &Sample) -> (Batch, HashMap<String, String>) {
    let c = &sample.conversation;
    let mut batch: Batch = Vec::new();
    let mut record_of = HashMap::new();
    for n in 1.. {
        let Some(turns) = c[format!("session_{n}")].as_array() else {
            break;
        };
        let when = c[format!("session_{n}_date_time")]
            .as_str()
            .and_then(session_time)
            .unwrap_or_default();
        let project = c[format!("session_{n}_project")]
            .as_str()
            .unwrap_or(&sample.id)
            .to_owned();
        let session_id = format!("{}:session_{n}", sample.id);
        for (i, t) in turns.iter().enumerate() {
            let Some(dia) = t["dia_id"].as_str() else {
                continue;
            };
            let mut text = t["text"].as_str().unwrap_or("").to_owned();
            if let Some(cap) = t["blip_caption"].as_str() {
                text.push_str(&format!(" [shares a photo: {cap}]"));
            }
            let id = RecordId::derive("locomo", &sample.id, dia);
            record_of.insert(dia.to_owned(), id.as_str().to_owned());
            batch.push((
                NewRecord {
                    id,
                    framework: "locomo".to_owned(),
                    session_id: session_id.clone(),
                    project: Some(project.clone()),
                    cwd: None,
                    model: None,
                    outcome: Outcome::Success,
                    started_at: when + chrono::Duration::seconds(i as i64),
                    ended_at: None,
                    request: text.clone(),
                    author: None,
                    text,
                    content: serde_json::json!({}),
                    source: None,
                },
                Vec::new(),
            ));
        }
    }
    (batch, record_of)
}

/// An owned-set conversation through the capture path: its sessions written as agent session
/// files in a user home under `home`, captured into `store`; which record holds each dialog
/// id, and the records stored. Every dialog id must name a captured record.
async fn captured(
    sample: &Sample,
    store: &cairn_store::Store,
    home: &Path,
) -> anyhow::Result<(HashMap<String, String>, Vec<NewRecord>)> {
    let user_home = home.join("user");
    let record_of = ranker_data::write_sessions(&sample.id, &sample.conversation, &user_home)
        .with_context(|| format!("cannot write the sessions of {}", sample.id))?;
    let report =
        cairn_capture::pass::run(store, &ranker_data::capture_options(&user_home), &|_| {})
            .await
            .with_context(|| format!("capturing {}", sample.id))?;
    let mut stored = Vec::new();
    let mut after = 0;
    loop {
        let page = store.records_page(after, 1_000).await?;
        let Some((last, _)) = page.last() else { break };
        after = last.seq;
        stored.extend(page.into_iter().map(|(r, _)| r.record));
    }
    let ids: HashSet<&str> = stored.iter().map(|r| r.id.as_str()).collect();
    let mut missing: Vec<&String> = record_of
        .iter()
        .filter(|(_, id)| !ids.contains(id.as_str()))
        .map(|(dia, _)| dia)
        .collect();
    missing.sort();
    if let Some(dia) = missing.first() {
        bail!(
            "{}: capture made no record for {dia} ({} dialog ids unresolved; {} records stored; warnings: {})",
            sample.id,
            missing.len(),
            stored.len(),
            report.warnings.join("; ")
        );
    }
    Ok((record_of, stored))
}

/// A number in [0, 1) fixed by `key`: the owned set's simulations are the same on every run.
fn chance(key: &str) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// The item kinds a planted fact or a filler exchange may be distilled as.
const KINDS: [cairn_core::ItemKind; 6] = [
    cairn_core::ItemKind::Fact,
    cairn_core::ItemKind::Decision,
    cairn_core::ItemKind::Procedure,
    cairn_core::ItemKind::Pitfall,
    cairn_core::ItemKind::Architecture,
    cairn_core::ItemKind::Observation,
];

/// An owned-set memory as one in use holds it: items distilled from its planted facts and,
/// as decoys, from filler exchanges (so being an item does not mean being needed), and the
/// injection log of earlier turns whose counts the note reads (`note_uses`).
///
/// - A planted fact (a `fact:` template with evidence) becomes an item: its summary the
///   evidence turn's answer, its sources the evidence records, its kind from the fact
///   (the developer's preferences are preferences, the rest spread over the kinds), its
///   importance 2–5. About as many filler agent turns become items of any kind, importance
///   1–4. An item counts for a turn once all its sources were said (`recall_at`).
/// - Each request needing a fact was asked once before with probability 0.35: its evidence
///   records and the fact's item were shown (and one in ten of those marked not useful).
///   Each filler record and decoy item was shown with probability 0.08, half of those
///   marked not useful.
/// - Each showing has the outcome the service would have decided from the answer
///   (`Store::record_note_outcome`, as `cairn_api`'s outcomes pass writes it): a showing of
///   evidence (a record or the fact's item) was used with probability 0.7, else ignored; a
///   showing of a filler record or decoy item was used with probability 0.1, else ignored.
///   The ranker's `uses` input then counts the used showings; those marked not useful or
///   ignored (a person's mark winning) lower the probability after the model
///   (`note::discounted`).
async fn enrich(
    sample: &Sample,
    store: &cairn_store::Store,
    record_of: &HashMap<String, String>,
    stored: &[NewRecord],
) -> anyhow::Result<()> {
    use cairn_core::{Certainty, Item, ItemEventKind, ItemId, ItemKind, NewItemEvent, Provenance};
    let c = &sample.conversation;
    let mut text_of: HashMap<String, String> = HashMap::new();
    let mut agent_dias: Vec<String> = Vec::new();
    for n in 1.. {
        let Some(turns) = c[format!("session_{n}")].as_array() else {
            break;
        };
        for t in turns {
            let (Some(dia), Some(text)) = (t["dia_id"].as_str(), t["text"].as_str()) else {
                continue;
            };
            text_of.insert(dia.to_owned(), text.to_owned());
            if t["speaker"].as_str() == Some("agent") {
                agent_dias.push(dia.to_owned());
            }
        }
    }
    let record: HashMap<&str, &NewRecord> = stored.iter().map(|r| (r.id.as_str(), r)).collect();
    // The planted facts: each template's evidence, in the order first asked.
    let mut facts: Vec<(String, Vec<String>)> = Vec::new();
    for q in sample.questions.iter().filter(|q| !q.evidence.is_empty()) {
        let Some(key) = q.fold.strip_prefix("template:fact:") else {
            continue;
        };
        match facts.iter_mut().find(|(k, _)| k == key) {
            Some((_, ev)) => ev.extend(q.evidence.iter().cloned()),
            None => facts.push((key.to_owned(), q.evidence.clone())),
        }
    }
    let evidence: HashSet<&str> = facts
        .iter()
        .flat_map(|(_, ev)| ev.iter().map(String::as_str))
        .collect();
    let item = |key: &str, dias: &[String], kind: ItemKind, importance: u8| -> Option<Item> {
        let mut dias: Vec<&String> = dias.iter().collect();
        dias.sort();
        dias.dedup();
        let summary = dias
            .iter()
            .filter_map(|d| text_of.get(*d))
            .map(|t| t.trim())
            .collect::<Vec<_>>()
            .join(" ");
        let sources: Vec<RecordId> = dias
            .iter()
            .filter_map(|d| record_of.get(*d))
            .map(RecordId::new)
            .collect();
        let newest = sources
            .iter()
            .filter_map(|s| record.get(s.as_str()))
            .max_by_key(|r| r.started_at)?;
        let title: String = summary
            .split_whitespace()
            .take(8)
            .collect::<Vec<_>>()
            .join(" ");
        let project = if key.starts_with("pref-") || key.starts_with("mach-") {
            None
        } else {
            newest.project.clone()
        };
        Some(Item {
            id: ItemId::new(format!("i_{}_{key}", sample.id)),
            kind,
            title,
            summary,
            body: String::new(),
            cues: Vec::new(),
            concepts: Vec::new(),
            importance,
            certainty: Certainty::Stated,
            project,
            sources,
            happened_at: None,
            said_at: Some(newest.started_at),
            ended_at: None,
            superseded_by: None,
            archived: false,
            provenance: Some(Provenance::Agent),
        })
    };
    let mut items: Vec<Item> = Vec::new();
    for (key, dias) in &facts {
        let r = chance(&format!("{}:{key}:kind", sample.id));
        let kind = if key.starts_with("pref-") {
            ItemKind::Preference
        } else {
            KINDS[(r * 5.0) as usize]
        };
        let importance = 2 + (chance(&format!("{}:{key}:importance", sample.id)) * 4.0) as u8;
        items.extend(item(&format!("fact-{key}"), dias, kind, importance));
    }
    let mut filler: Vec<&String> = agent_dias
        .iter()
        .filter(|d| !evidence.contains(d.as_str()))
        .collect();
    filler.sort_by(|a, b| {
        chance(&format!("{}:{a}:decoy", sample.id))
            .total_cmp(&chance(&format!("{}:{b}:decoy", sample.id)))
    });
    for dia in filler.iter().take(facts.len()) {
        let r = chance(&format!("{}:{dia}:kind", sample.id));
        let kind = if r < 0.1 {
            ItemKind::Preference
        } else {
            KINDS[((r - 0.1) / 0.9 * 6.0) as usize % 6]
        };
        let importance = 1 + (chance(&format!("{}:{dia}:importance", sample.id)) * 4.0) as u8;
        let key = format!("filler-{}", dia.replace(':', "-"));
        items.extend(item(&key, std::slice::from_ref(*dia), kind, importance));
    }
    for i in &items {
        store
            .append_item_event(&NewItemEvent {
                kind: ItemEventKind::Created,
                item: i.clone(),
                reason: Some("distilled".to_owned()),
            })
            .await?;
    }
    // Simulated earlier turns, read back as each candidate's uses.
    let item_of_fact = |key: &str| format!("i_{}_fact-{key}", sample.id);
    // Each simulated turn: its id, what it showed, whether a person marked it not useful,
    // and the chance that its answer used each shown entry.
    let mut turns: Vec<(String, Vec<String>, bool, f64)> = Vec::new();
    for (qi, q) in sample.questions.iter().enumerate() {
        let Some(key) = q.fold.strip_prefix("template:fact:") else {
            continue;
        };
        if q.evidence.is_empty() || chance(&format!("{}:{qi}:asked", sample.id)) >= 0.35 {
            continue;
        }
        let mut shown: Vec<String> = q
            .evidence
            .iter()
            .filter_map(|d| record_of.get(d).cloned())
            .collect();
        shown.push(item_of_fact(key));
        let not_useful = chance(&format!("{}:{qi}:not-useful", sample.id)) < 0.1;
        turns.push((format!("t_sim_{}_{qi}", sample.id), shown, not_useful, 0.7));
    }
    let mut others: Vec<String> = filler
        .iter()
        .filter_map(|d| record_of.get(*d).cloned())
        .collect();
    others.extend(
        items
            .iter()
            .filter(|i| i.id.as_str().contains("_filler-"))
            .map(|i| i.id.as_str().to_owned()),
    );
    others.sort();
    others.dedup();
    for id in others {
        if chance(&format!("{id}:shown")) < 0.08 {
            let not_useful = chance(&format!("{id}:not-useful")) < 0.5;
            turns.push((format!("t_sim_{id}"), vec![id], not_useful, 0.1));
        }
    }
    let at = stored
        .iter()
        .map(|r| r.started_at)
        .max()
        .unwrap_or_default();
    for (turn, shown, not_useful, p_used) in turns {
        store
            .log_injection(&cairn_store::Injection {
                turn: turn.clone(),
                at,
                framework: "claude-code".to_owned(),
                session_id: None,
                project: None,
                prompt: String::new(),
                shown: true,
                bar: cairn_turn::note::BAR_UNCHOSEN,
                judged_by: Vec::new(),
                silent_because: None,
                latency_ms: 0,
                feature_names: cairn_turn::note::FEATURES
                    .iter()
                    .map(|s| (*s).to_owned())
                    .collect(),
                entries: shown
                    .iter()
                    .map(|id| cairn_store::InjectionCandidate {
                        id: id.clone(),
                        kind: if id.starts_with("i_") {
                            "item"
                        } else {
                            "record"
                        }
                        .to_owned(),
                        item_kind: None,
                        title: String::new(),
                        probability: 0.5,
                        shown: true,
                        features: Vec::new(),
                        text: None,
                    })
                    .collect(),
            })
            .await?;
        if not_useful {
            for id in &shown {
                store.set_note_label(&turn, id, Some("not_useful")).await?;
            }
        }
        for id in &shown {
            let outcome = if chance(&format!("{turn}:{id}:used")) < p_used {
                cairn_store::OUTCOME_USED
            } else {
                cairn_store::OUTCOME_IGNORED
            };
            store
                .record_note_outcome(&turn, id, outcome, Some("simulated"))
                .await?;
        }
    }
    Ok(())
}

/// A service in a temporary home holding one conversation, indexed as the service indexes;
/// with `cached`, its vectors come from the evaluations' cache where a run before made them
/// (the same model, so the same vectors: `embed_cache`).
async fn remember(
    sample: &Sample,
    settings: &Settings,
    cached: Option<&Arc<dyn cairn_core::ports::Embedder>>,
) -> anyhow::Result<Memory> {
    let home = tempfile::tempdir().context("cannot make a temporary home")?;
    let paths = Paths::under(home.path());
    paths
        .create_all()
        .context("cannot create the temporary home's folders")?;
    let service = Service::load(&ServiceOptions {
        paths: paths.clone(),
        settings: settings.clone(),
        config_file: paths.config_file(),
        host: ServiceHost::Direct,
        serve_http: false,
        ui_dir: None,
    })
    .await
    .map_err(|e| anyhow::anyhow!("cannot start a service for {}: {e}", sample.id))?;
    if let Some(cached) = cached {
        service.embed_with(cached.clone()).await.map_err(|e| {
            anyhow::anyhow!("cannot use the embedding cache for {}: {e}", sample.id)
        })?;
    }
    let (record_of, stored) = if ranker_data::is_owned(&sample.conversation) {
        let (record_of, stored) = captured(sample, service.store(), home.path()).await?;
        enrich(sample, service.store(), &record_of, &stored)
            .await
            .with_context(|| format!("cannot add items and uses to {}", sample.id))?;
        (record_of, stored)
    } else {
        let (batch, record_of) = records(sample);
        service.store().append_records(&batch).await?;
        (record_of, batch.into_iter().map(|(r, _)| r).collect())
    };
    let now = stored
        .iter()
        .map(|r| r.started_at)
        .max()
        .unwrap_or_default()
        + chrono::Duration::days(1);
    let first = stored.iter().min_by_key(|r| r.started_at);
    let project = first
        .and_then(|r| r.project.clone())
        .unwrap_or_else(|| sample.id.clone());
    let framework = first.map_or_else(|| "locomo".to_owned(), |r| r.framework.clone());
    service
        .sync_index()
        .await
        .map_err(|e| anyhow::anyhow!("cannot index {}: {e}", sample.id))?;
    service
        .sync_dense()
        .await
        .map_err(|e| anyhow::anyhow!("cannot embed {}: {e}", sample.id))?;
    Ok(Memory {
        _home: home,
        service,
        record_of,
        project,
        framework,
        now,
    })
}

/// Asks one question of a memory: the note and every candidate.
async fn ask(
    mem: &Memory,
    q: &Question,
    foreign: bool,
) -> anyhow::Result<(cairn_core::api::TurnNote, Vec<Candidate>)> {
    let req = TurnNoteReq {
        framework: if foreign {
            mem.framework.clone()
        } else {
            q.framework.clone().unwrap_or_else(|| mem.framework.clone())
        },
        project: Some(if foreign {
            mem.project.clone()
        } else {
            q.project.clone().unwrap_or_else(|| mem.project.clone())
        }),
        session_id: None,
        turn_id: None,
        prompt: q.text.clone(),
        context: Vec::new(),
        dry_run: true,
        at: Some(
            (if foreign { None } else { q.at })
                .unwrap_or(mem.now)
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ),
    };
    mem.service
        .turn_note_whole(req)
        .await
        .map_err(|e| anyhow::anyhow!("the turn note failed: {e}"))
}

/// What the note does to a candidate's probability after the model for its earlier
/// showings ([`cairn_turn::note::discounted`]), as a factor: the cross-fitted figures score
/// the model's probability times it, as the note would (1 with no showing not used).
fn discount(c: &Candidate) -> f32 {
    cairn_turn::note::discounted(1.0, c.signals.used, c.signals.not_useful)
}

/// Whether a candidate is evidence for a question.
fn is_evidence(c: &Candidate, evidence: &HashSet<String>) -> bool {
    match c.meta.kind {
        Kind::Record => evidence.contains(&c.meta.id),
        Kind::Item => c.sources.iter().any(|s| evidence.contains(s)),
        Kind::Note => false,
    }
}

/// What one answer is: its group (the request), its fold key, and whether it is foreign.
struct Answer<'a> {
    group: &'a str,
    fold: &'a str,
    foreign: bool,
}

/// Every question, own and foreign, asked of each memory in turn; `visit` sees each answer
/// with the evidence records (empty: nothing is needed).
async fn each_answer(
    paths: &Paths,
    samples: &[Sample],
    settings: &Settings,
    mut visit: impl FnMut(&Answer<'_>, &HashSet<String>, &cairn_core::api::TurnNote, &[Candidate]),
) -> anyhow::Result<()> {
    let total: usize = samples.iter().map(|s| s.questions.len()).sum::<usize>()
        + if samples.len() > 1 {
            samples
                .iter()
                .map(|s| {
                    s.questions
                        .iter()
                        .filter(|q| !q.evidence.is_empty())
                        .count()
                })
                .sum()
        } else {
            0
        };
    // Each conversation's records are embedded once on this machine, then read back from the
    // evaluations' cache (training again, or `cairn eval note` after it).
    let models = crate::locomo::eval_models(paths, settings).await;
    let bar = crate::progress::bar(total as u64, "questions");
    for (i, sample) in samples.iter().enumerate() {
        bar.set_message(format!("({}: indexing)", sample.id));
        let mem = remember(sample, settings, models.embedder.as_ref()).await?;
        bar.set_message(format!("({})", sample.id));
        for (qi, q) in sample.questions.iter().enumerate() {
            let evidence: HashSet<String> = q
                .evidence
                .iter()
                .filter_map(|d| mem.record_of.get(d).cloned())
                .collect();
            if !q.evidence.is_empty() && evidence.is_empty() {
                bar.inc(1);
                continue;
            }
            let (note, cands) = ask(&mem, q, false).await?;
            let group = format!("{}:{qi}", sample.id);
            let answer = Answer {
                group: &group,
                fold: &q.fold,
                foreign: false,
            };
            visit(&answer, &evidence, &note, &cands);
            bar.inc(1);
        }
        // The previous conversation's questions, asked of this one's memory.
        if samples.len() > 1 {
            let other = &samples[(i + samples.len() - 1) % samples.len()];
            for (qi, q) in other.questions.iter().enumerate() {
                if q.evidence.is_empty() {
                    continue;
                }
                let (note, cands) = ask(&mem, q, true).await?;
                let group = format!("{}:{qi}:in:{}", other.id, sample.id);
                let answer = Answer {
                    group: &group,
                    fold: &q.fold,
                    foreign: true,
                };
                visit(&answer, &HashSet::new(), &note, &cands);
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    models.say_cache();
    Ok(())
}

/// What `cairn eval note` measured.
#[derive(Debug, Default, Serialize)]
pub struct NoteEval {
    /// Own questions that got a note (share).
    pub note_rate: f64,
    /// Own questions needing an earlier turn whose note holds one (share).
    pub hit_rate: f64,
    /// Shown entries that are evidence (share).
    pub precision: f64,
    /// Foreign questions answered with no note (share).
    pub foreign_silence: f64,
    /// Own questions asked.
    pub n: u64,
    /// Own questions that need an earlier turn.
    pub needed: u64,
    /// Own questions that need nothing (the owned set), and the share of them left silent.
    pub not_needed: u64,
    /// Share of the not-needed own questions with no note.
    pub silence_when_not_needed: Option<f64>,
    /// Foreign questions asked.
    pub foreign: u64,
    /// Entries shown, and per shown note.
    pub entries_shown: u64,
    /// Questions needing an earlier turn whose candidates (top 60) hold one: what the ranker
    /// could have shown.
    pub candidates_hold_evidence: f64,
    /// Median service milliseconds per note.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
}

fn pct(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    f64::from(sorted[((sorted.len() - 1) as f64 * p).round() as usize])
}

fn share(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// One bar's figures, recomputed from a `--candidates` file.
#[derive(Debug, Serialize)]
pub struct BarRow {
    /// The bar (raised for prompts whose names the memory knows none of, as the note does).
    pub bar: f32,
    /// Own questions that would get a note (share).
    pub note_rate: f64,
    /// Own questions needing an earlier turn whose note would hold one (share).
    pub hit_rate: f64,
    /// Entries that would be shown that are evidence (share).
    pub precision: f64,
    /// Foreign questions that would get no note (share).
    pub foreign_silence: f64,
    /// Own questions needing nothing that would get no note (share), when there are any.
    pub silence_when_not_needed: Option<f64>,
}

/// What `cairn eval bars` reads from a `--candidates` file.
#[derive(Debug, Serialize)]
pub struct Bars {
    /// Own questions in the file.
    pub own: u64,
    /// Foreign questions in the file.
    pub foreign: u64,
    /// Median `query_known` of own questions, of those needing an earlier turn, and of
    /// foreign ones (questions with candidates).
    pub query_known_median: [Option<f64>; 3],
    /// Share of own and of foreign questions (with candidates) naming things of which the
    /// memory knows none (`names_known` 0).
    pub names_none_known: [f64; 2],
    /// The figures at each bar.
    pub rows: Vec<BarRow>,
}

/// One question of a `--candidates` file.
#[derive(serde::Deserialize)]
struct Asked {
    foreign: bool,
    needed: bool,
    candidates: Vec<Scored>,
}

#[derive(serde::Deserialize)]
struct Scored {
    /// Null when the ranker gave no number.
    p: Option<f32>,
    evidence: bool,
    features: Vec<Option<f64>>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

/// Runs `cairn eval bars`: how the note would trade at each bar, from the candidates one
/// `cairn eval note --candidates FILE` run wrote (at most three entries at or above the bar,
/// most probable first; the bar raised as the note raises it). No service, no model.
pub fn bars(file: &Path, json: bool) -> anyhow::Result<Bars> {
    use cairn_turn::note::{FEATURES, MAX_ENTRIES, raised};
    let text = fs_err::read_to_string(file)?;
    let column = |name: &str| FEATURES.iter().position(|f| *f == name);
    let (known_at, names_at) = (column("query_known"), column("names_known"));
    let mut asked: Vec<Asked> = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let a: Asked = serde_json::from_str(line).with_context(|| {
            format!(
                "line {} of {} is not a question's candidates (write the file with `cairn eval note --candidates`)",
                i + 1,
                file.display()
            )
        })?;
        if let Some(c) = a
            .candidates
            .iter()
            .find(|c| c.features.len() != FEATURES.len())
        {
            bail!(
                "line {} of {} has {} ranker inputs, this build has {}: write it again with this build",
                i + 1,
                file.display(),
                c.features.len(),
                FEATURES.len()
            );
        }
        asked.push(a);
    }
    if asked.is_empty() {
        bail!("{} holds no questions", file.display());
    }
    let input = |a: &Asked, at: Option<usize>| -> Option<f64> {
        a.candidates.first().and_then(|c| c.features[at?])
    };
    let with_cands = |foreign: bool, needed_only: bool| {
        asked
            .iter()
            .filter(move |a| a.foreign == foreign && !a.candidates.is_empty())
            .filter(move |a| !needed_only || a.needed)
    };
    let known = |foreign, needed_only| {
        median(
            with_cands(foreign, needed_only)
                .filter_map(|a| input(a, known_at))
                .collect(),
        )
    };
    let none_known = |foreign| {
        let all = with_cands(foreign, false).count() as u64;
        let none = with_cands(foreign, false)
            .filter(|a| input(a, names_at) == Some(0.0))
            .count() as u64;
        share(none, all)
    };
    let rows = [0.3f32, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
        .into_iter()
        .map(|bar| {
            let (mut n, mut noted, mut needed, mut hits, mut shown, mut good) = (0, 0, 0, 0, 0, 0);
            let (mut foreign, mut silent, mut not_needed, mut nn_silent) = (0, 0, 0, 0);
            for a in &asked {
                let b = raised(bar, input(a, names_at));
                let mut above: Vec<&Scored> = a
                    .candidates
                    .iter()
                    .filter(|c| c.p.is_some_and(|p| p >= b))
                    .collect();
                above.sort_by(|x, y| y.p.unwrap_or(0.0).total_cmp(&x.p.unwrap_or(0.0)));
                above.truncate(MAX_ENTRIES);
                if a.foreign {
                    foreign += 1;
                    silent += u64::from(above.is_empty());
                    continue;
                }
                n += 1;
                noted += u64::from(!above.is_empty());
                shown += above.len() as u64;
                good += above.iter().filter(|c| c.evidence).count() as u64;
                if a.needed {
                    needed += 1;
                    hits += u64::from(above.iter().any(|c| c.evidence));
                } else {
                    not_needed += 1;
                    nn_silent += u64::from(above.is_empty());
                }
            }
            BarRow {
                bar,
                note_rate: share(noted, n),
                hit_rate: share(hits, needed),
                // As `cairn eval note` counts it: nothing shown is nothing wrong shown.
                precision: if shown == 0 { 1.0 } else { share(good, shown) },
                foreign_silence: share(silent, foreign),
                silence_when_not_needed: (not_needed > 0).then(|| share(nn_silent, not_needed)),
            }
        })
        .collect();
    let b = Bars {
        own: asked.iter().filter(|a| !a.foreign).count() as u64,
        foreign: asked.iter().filter(|a| a.foreign).count() as u64,
        query_known_median: [known(false, false), known(false, true), known(true, false)],
        names_none_known: [none_known(false), none_known(true)],
        rows,
    };
    if json {
        println!("{}", serde_json::to_string(&b)?);
    } else {
        let f = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| format!("{v:.3}"));
        println!(
            "How the note would trade, from {} ({} own questions, {} foreign)",
            file.display(),
            b.own,
            b.foreign
        );
        println!(
            "  query_known median: own {}, own needing a turn {}, foreign {}",
            f(b.query_known_median[0]),
            f(b.query_known_median[1]),
            f(b.query_known_median[2])
        );
        println!(
            "  naming only unknown things: own {:.3}, foreign {:.3}",
            b.names_none_known[0], b.names_none_known[1]
        );
        println!(
            "| bar | note rate | hit rate | precision | foreign silence | silent when nothing is needed |"
        );
        println!("|---|---|---|---|---|---|");
        for r in &b.rows {
            println!(
                "| {:.1} | {:.3} | {:.3} | {:.3} | {:.3} | {} |",
                r.bar,
                r.note_rate,
                r.hit_rate,
                r.precision,
                r.foreign_silence,
                f(r.silence_when_not_needed)
            );
        }
    }
    Ok(b)
}

/// Runs `cairn eval note`.
pub async fn eval(
    paths: &Paths,
    settings: &Settings,
    file: &Path,
    audit: Option<&Path>,
    conversations: Option<usize>,
    dump: Option<&Path>,
    json: bool,
) -> anyhow::Result<NoteEval> {
    let mut all = samples(file, audit)?;
    if let Some(n) = conversations {
        all.truncate(n.max(1));
    }
    let mut dump = match dump {
        Some(p) => Some(std::io::BufWriter::new(fs_err::File::create(p)?)),
        None => None,
    };
    let mut dump_error: Option<std::io::Error> = None;
    let mut e = NoteEval::default();
    let (mut noted, mut hits, mut good, mut in_cands) = (0u64, 0u64, 0u64, 0u64);
    let (mut foreign_silent, mut nn_silent) = (0u64, 0u64);
    let mut lat: Vec<u32> = Vec::new();
    each_answer(paths, &all, settings, |answer, evidence, note, cands| {
        let (group, foreign) = (answer.group, answer.foreign);
        lat.push(note.latency_ms);
        if let Some(w) = dump.as_mut()
            && dump_error.is_none()
        {
            let line = serde_json::json!({
                "group": group,
                "foreign": foreign,
                "needed": !evidence.is_empty(),
                "bar": note.bar,
                "candidates": cands.iter().map(|c| serde_json::json!({
                    "id": c.meta.id,
                    "kind": c.meta.kind.as_str(),
                    "p": c.probability,
                    "evidence": is_evidence(c, evidence),
                    "shown": c.shown,
                    "features": c.features.iter().map(|v| if v.is_finite() { Some(*v) } else { None }).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            });
            if let Err(err) = std::io::Write::write_all(w, format!("{line}\n").as_bytes()) {
                dump_error = Some(err);
            }
        }
        let shown: Vec<&Candidate> = cands.iter().filter(|c| c.shown).collect();
        if foreign {
            e.foreign += 1;
            foreign_silent += u64::from(shown.is_empty());
            return;
        }
        e.n += 1;
        noted += u64::from(!shown.is_empty());
        e.entries_shown += shown.len() as u64;
        good += shown.iter().filter(|c| is_evidence(c, evidence)).count() as u64;
        if evidence.is_empty() {
            e.not_needed += 1;
            nn_silent += u64::from(shown.is_empty());
        } else {
            e.needed += 1;
            hits += u64::from(shown.iter().any(|c| is_evidence(c, evidence)));
            in_cands += u64::from(cands.iter().any(|c| is_evidence(c, evidence)));
        }
    })
    .await?;
    if let Some(err) = dump_error {
        return Err(anyhow::anyhow!("cannot write the candidates file: {err}"));
    }
    if let Some(mut w) = dump {
        std::io::Write::flush(&mut w).context("cannot write the candidates file")?;
    }
    lat.sort_unstable();
    e.note_rate = share(noted, e.n);
    e.hit_rate = share(hits, e.needed);
    e.precision = if e.entries_shown == 0 {
        1.0
    } else {
        share(good, e.entries_shown)
    };
    e.foreign_silence = share(foreign_silent, e.foreign);
    e.silence_when_not_needed = (e.not_needed > 0).then(|| share(nn_silent, e.not_needed));
    e.candidates_hold_evidence = share(in_cands, e.needed);
    e.p50_ms = pct(&lat, 0.5);
    e.p95_ms = pct(&lat, 0.95);
    // The app shows the latest figures (Activity → Notes).
    let figures = NoteEvalFigures {
        at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        file: file.display().to_string(),
        note_rate: e.note_rate,
        hit_rate: e.hit_rate,
        precision: e.precision,
        foreign_silence: e.foreign_silence,
        n: e.n,
        p50_ms: e.p50_ms,
        p95_ms: e.p95_ms,
    };
    if let Some(dir) = paths.note_eval().parent() {
        fs_err::create_dir_all(dir)?;
    }
    fs_err::write(paths.note_eval(), serde_json::to_string_pretty(&figures)?)?;
    if json {
        println!("{}", serde_json::to_string(&e)?);
    } else {
        println!(
            "Turn note on {} ({} own questions, {} foreign)",
            file.display(),
            e.n,
            e.foreign
        );
        println!("  note rate            {:.3}", e.note_rate);
        println!(
            "  hit rate             {:.3}  (candidates hold evidence: {:.3})",
            e.hit_rate, e.candidates_hold_evidence
        );
        println!(
            "  precision of entries {:.3}  ({} entries shown)",
            e.precision, e.entries_shown
        );
        println!("  foreign silence      {:.3}", e.foreign_silence);
        if let Some(s) = e.silence_when_not_needed {
            println!(
                "  silence, not needed  {s:.3}  ({} questions)",
                e.not_needed
            );
        }
        println!(
            "  latency              p50 {:.0} ms, p95 {:.0} ms",
            e.p50_ms, e.p95_ms
        );
    }
    Ok(e)
}

/// What `cairn ranker train` learns from.
pub struct Sources<'a> {
    /// The labelled LoCoMo-format file (the owned set).
    pub file: &'a Path,
    /// Add this machine's labelled turn-note entries.
    pub labels: bool,
    /// Add the train split of this real-history corpus.
    pub real: Option<&'a Path>,
    /// The fitting weight of each real candidate.
    pub real_weight: f32,
    /// Write every example here, one JSON line each.
    pub examples: Option<&'a Path>,
}

/// What `cairn ranker train` wrote.
#[derive(Debug, Serialize)]
pub struct Trained {
    /// The model file.
    pub model: PathBuf,
    /// Labelled candidates from the file.
    pub examples: usize,
    /// Labelled entries from this machine's injection log.
    pub labels: usize,
    /// Labelled candidates from the real corpus's train split (hand labels).
    pub real: usize,
    /// The cross-fitted figures.
    pub cross_fit: cairn_turn::ranker::CrossFit,
    /// What the final model learned (gain and splits per input, its first tree).
    pub learned: cairn_turn::ranker::Learned,
    /// How long the whole command took, in seconds (capture, embedding through the
    /// evaluations' cache, labelling, cross-fitting and fitting).
    pub seconds: f64,
}

/// Runs `cairn ranker train`: labels every candidate of every question of the file (with
/// `labels`, this machine's shown entries with a mark or an outcome too, as `--from-store`
/// reads them: [`cairn_turn::personal::collect`]; with `real`, every candidate of the real corpus's
/// train split, [`crate::real_note::each_request`], folded by repository), cross-fits and
/// fits the LightGBM ranker, and writes its model text to `out` with the figures beside it
/// (`<out>.json`).
pub async fn train(
    paths: &Paths,
    settings: &Settings,
    sources: &Sources<'_>,
    out: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<Trained> {
    let started = std::time::Instant::now();
    let (file, labels) = (sources.file, sources.labels);
    use cairn_turn::ranker::{Example, TrainOptions};
    let all = samples(file, None)?;
    if all.iter().all(|s| ranker_data::is_owned(&s.conversation)) {
        match ranker_data::describe(file) {
            Ok(line) => eprintln!("{line}"),
            Err(e) => eprintln!("Cannot measure {}: {e:#}", file.display()),
        }
    }
    let mut examples: Vec<Example> = Vec::new();
    each_answer(paths, &all, settings, |answer, evidence, _, cands| {
        for c in cands {
            examples.push(Example {
                group: answer.group.to_owned(),
                fold: answer.fold.to_owned(),
                features: c.features.clone(),
                label: is_evidence(c, evidence),
                weight: 1.0,
                after: discount(c),
            });
        }
    })
    .await?;
    let from_file = examples.len();
    let mut from_real = 0;
    if let Some(dir) = sources.real {
        // Hand labels only: the replay's rule names the right record for 5 % of what it
        // names on this corpus (`cairn eval real`'s label_rule), too noisy to learn from.
        crate::real_note::each_request(paths, settings, dir, "train", None, |a| {
            for c in a.candidates {
                examples.push(Example {
                    group: a.group.clone(),
                    fold: format!("repository:{}", a.repo),
                    features: c.features.clone(),
                    label: crate::real_note::is_needed(c, a.needed),
                    weight: sources.real_weight,
                    after: discount(c),
                });
                from_real += 1;
            }
        })
        .await?;
    }
    let mut from_log = 0;
    if labels {
        let store = cairn_store::Store::open(&paths.database())
            .await
            .with_context(|| format!("cannot open the store at {}", paths.database().display()))?;
        // The same entries `--from-store` learns from (a person's mark, else the outcome
        // the answer gave), folded by project as there.
        let (logged, _) =
            cairn_turn::personal::examples(&cairn_turn::personal::collect(&store).await?);
        from_log = logged.len();
        examples.extend(logged.into_iter().map(|e| Example {
            group: format!("log:{}", e.group),
            ..e
        }));
    }
    if let Some(path) = sources.examples {
        use std::io::Write;
        let mut w = std::io::BufWriter::new(
            fs_err::File::create(path).with_context(|| format!("--examples {}", path.display()))?,
        );
        for e in &examples {
            writeln!(w, "{}", serde_json::to_string(e)?)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        w.flush()
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let opts = TrainOptions {
        monotone: cairn_turn::note::MONOTONE.to_vec(),
        ..TrainOptions::default()
    };
    let (model, cross_fit) = tokio::task::spawn_blocking(move || {
        cairn_turn::ranker::train(&examples, &cairn_turn::note::FEATURES, &opts)
    })
    .await?
    .map_err(|e| anyhow::anyhow!("training failed: {e}"))?;
    let out = out.unwrap_or_else(|| paths.ranker_model());
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs_err::create_dir_all(dir)?;
    }
    fs_err::write(&out, &model)?;
    let learned = cairn_turn::ranker::learned(&model)
        .map_err(|e| anyhow::anyhow!("cannot read the trained model back: {e}"))?;
    let trained = Trained {
        model: out.clone(),
        examples: from_file,
        labels: from_log,
        real: from_real,
        cross_fit,
        learned,
        seconds: started.elapsed().as_secs_f64(),
    };
    let figures = out.with_extension("json");
    fs_err::write(&figures, serde_json::to_string_pretty(&trained)?)?;
    if json {
        println!("{}", serde_json::to_string(&trained)?);
    } else {
        let c = &trained.cross_fit;
        println!(
            "Ranker written to {} ({} candidates from {}, {} from the real train split, {} labels from the injection log) in {:.0} s",
            out.display(),
            from_file,
            file.display(),
            from_real,
            from_log,
            trained.seconds
        );
        println!(
            "Cross-fitted ({} folds by request template, {} templates, {} requests, {} needed candidates): AUC {:.3}, log loss {:.3}",
            c.folds, c.fold_keys, c.groups, c.positives, c.auc, c.logloss
        );
        for b in &c.at_bars {
            println!(
                "  p >= {:.1}: precision {:.3}, recall {:.3}, requests with a note {:.3}",
                b.bar, b.precision, b.recall, b.shown_groups
            );
        }
        println!(
            "  top candidate needed (requests needing one) {:.3}; silent (requests needing none) {:.3}",
            c.top1_when_needed, c.silence_when_not_needed
        );
        println!("  notes (at most 3 entries at or above the bar), all requests:");
        for n in &c.notes {
            println!(
                "    bar {:.2}: precision {:.3}, hit rate {:.3}, silence {:.3}, requests with a note {:.3}",
                n.bar, n.precision, n.hit_rate, n.silence, n.with_note
            );
        }
        if let Some(ch) = &c.chosen {
            println!(
                "  the model's bar {:.2}: the lowest whose notes reach precision {:.2} on {} of the fold keys{}",
                ch.bar,
                ch.target_precision,
                ch.tune_keys,
                match ch.rule.as_str() {
                    "precision" => String::new(),
                    "silence" => format!(
                        " (none does: the lowest silent on {:.2} of the requests needing nothing)",
                        cairn_turn::ranker::SILENCE_TARGET
                    ),
                    _ => " (none does: the highest bar)".to_owned(),
                }
            );
            for (half, n) in [("chosen on", &ch.tune), ("reported on", &ch.report)] {
                println!(
                    "    {half} {} requests: precision {:.3}, hit rate {:.3}, silence {:.3}, requests with a note {:.3}",
                    n.requests, n.precision, n.hit_rate, n.silence, n.with_note
                );
            }
        }
        let mut inputs: Vec<&cairn_turn::ranker::InputUse> =
            trained.learned.inputs.iter().collect();
        inputs.sort_by(|a, b| b.gain_share.total_cmp(&a.gain_share));
        println!("What it learned (share of the split gain, splits):");
        for i in inputs {
            println!("  {:<18} {:.3} {:>5}", i.name, i.gain_share, i.splits);
        }
        println!("Its first tree:");
        for line in &trained.learned.first_tree {
            println!("  {line}");
        }
        println!("Figures written to {}", figures.display());
    }
    Ok(trained)
}
