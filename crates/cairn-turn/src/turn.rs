//! The turn note's pipeline (DESIGN §1.6): candidates from the records, items and notes
//! (the asking conversation's own left out), the cross-encoder as judge when it is loaded,
//! the LightGBM ranker, the note — and the injection log behind it: every turn logged with
//! each candidate's probability and the ranker's inputs (and what the note said of each
//! shown entry), what became of each shown entry once the agent's answer was captured
//! (`used` / `ignored`, [`crate::outcomes`]), and people's labels on shown entries, for the
//! next `cairn ranker train` (read back by [`crate::log`]).
//!
//! What earlier notes did with a candidate is two of the ranker's inputs, read from the log
//! per showing, a person's label winning over the automatic outcome: `uses` (filled from
//! `Signals::used`) is how many times a note showed it and it was **used** — the agent's
//! answer reused a rare identifier of it or opened it, or a person marked it `useful`; and
//! `not_useful` (from `Signals::not_useful`) is how many times it was shown and a person
//! marked it **not useful** or, unmarked, the finished answer **ignored** it. A showing whose
//! answer is not captured yet counts in neither.
//!
//! By default nothing here calls a model provider or the network: the hot path is the
//! retriever, the cross-encoder (when present) and the ranker. The LLM judge
//! ([`crate::judge`]) joins only when the user turns it on (`llm.judge`), within its own
//! deadline.
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use cairn_core::api::{NoteEntry, TurnNote, TurnNoteReq};
use cairn_core::{RecordId, Timestamp};
use cairn_index::TextQuery;

use crate::memory::Memory;
use crate::note::{self, Kind, Meta, Signals};
use crate::{Error, Result, judge};

/// The longest prompt read (bytes); the rest is not part of the query.
const MAX_PROMPT: usize = 4096;
/// A prompt with fewer words than this is asked together with the conversation's previous
/// request ("and the other one?").
const SHORT_PROMPT_WORDS: usize = 8;
/// The most characters of the previous request that join a short prompt.
const CONTEXT_CHARS: usize = 300;
/// The most of the project's latest requests read for its recent sessions.
const RECENT_ROWS: u32 = 2000;

/// One candidate of a turn, whole: what it is, what retrieval said, the ranker's inputs
/// and its probability. The eval and `cairn ranker train` read these.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// What it is.
    pub meta: Meta,
    /// What retrieval and the judges said.
    pub signals: Signals,
    /// The ranker's inputs ([`note::FEATURES`]).
    pub features: Vec<f64>,
    /// The ranker's probability.
    pub probability: f32,
    /// Whether the note shows it.
    pub shown: bool,
    /// For an item: the records it came from.
    pub sources: Vec<String>,
}

fn title_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    cairn_text::chunk::cut(line, 100)
}

/// How many of the asking session's requests (`own`, in the session's order) came before
/// the prompt asked at `now`. A replayed turn's own record is in the store: the ones before
/// it in the session's order (turns of one session may share a time: an Aider run, a
/// SpecStory file without times). A live turn's is not yet, or only just (then it is the
/// last before `now`, saying the prompt).
fn session_turns(
    own: &[cairn_core::Record],
    prompt: &str,
    now: Timestamp,
    replayed: bool,
) -> usize {
    let prompt = prompt.trim();
    let asking = replayed
        .then(|| {
            own.iter()
                .position(|r| r.record.started_at >= now && r.record.request.trim() == prompt)
        })
        .flatten();
    asking.unwrap_or_else(|| {
        let before: Vec<&cairn_core::Record> =
            own.iter().filter(|r| r.record.started_at < now).collect();
        let own_already = !replayed
            && before
                .last()
                .is_some_and(|r| r.record.request.trim() == prompt);
        before.len() - usize::from(own_already)
    })
}

/// The query for a turn: the prompt, and for a short one the previous request too.
fn query_text(prompt: &str, previous: Option<&str>) -> String {
    let mut end = prompt.len().min(MAX_PROMPT);
    while !prompt.is_char_boundary(end) {
        end -= 1;
    }
    let prompt = prompt[..end].trim();
    match previous.map(str::trim).filter(|p| !p.is_empty()) {
        Some(prev) if prompt.split_whitespace().count() < SHORT_PROMPT_WORDS => {
            let prev: String = prev.chars().take(CONTEXT_CHARS).collect();
            format!("{prompt}\n{prev}")
        }
        _ => prompt.to_owned(),
    }
}

/// A fresh turn id: `t_` and 16 random bytes in hex.
fn new_turn_id() -> Result<String> {
    let mut buf = [0u8; 16];
    getrandom::fill(&mut buf)
        .map_err(|e| Error::internal(format!("no randomness for a turn id: {e}")))?;
    Ok(format!(
        "t_{}",
        buf.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ))
}

/// The mark an item stated only by outside text (or never checked) carries where agents
/// read it, in front of its text; `None` for the user's or the agent's own words.
fn provenance_mark(i: &cairn_core::Item) -> Option<&'static str> {
    match i.provenance {
        Some(cairn_core::Provenance::User | cairn_core::Provenance::Agent) => None,
        Some(cairn_core::Provenance::Outside) => Some("(from tool output or files read)"),
        None => Some("(source unchecked)"),
    }
}

impl Memory {
    /// The turn note for `req` and every candidate behind it (the eval and ranker training
    /// read them): silent when memory is off, the message is empty or nothing reaches the
    /// bar; logged in the injection log unless `req.dry_run`.
    pub async fn note(&self, req: TurnNoteReq) -> Result<(TurnNote, Vec<Candidate>)> {
        let started = Instant::now();
        let silent = |why: &str, bar: f32| TurnNote {
            turn: String::new(),
            note: None,
            entries: Vec::new(),
            bar,
            judged_by: Vec::new(),
            silent_because: Some(why.to_owned()),
            latency_ms: 0,
        };
        if req.framework.trim().is_empty() {
            return Err(Error::bad_request("the framework is missing"));
        }
        if !self.memory_on {
            return Ok((silent("memory is off", note::BAR_UNCHOSEN), Vec::new()));
        }
        if req.prompt.trim().is_empty() {
            return Ok((
                silent("the message is empty", note::BAR_UNCHOSEN),
                Vec::new(),
            ));
        }
        let now = match req.at.as_deref() {
            Some(at) => chrono::DateTime::parse_from_rfc3339(at)
                .map_err(|e| Error::bad_request(format!("at {at:?} is not an RFC 3339 time: {e}")))?
                .with_timezone(&chrono::Utc),
            None => chrono::Utc::now(),
        };
        // The asking conversation: its records are left out, and its previous request joins
        // a short prompt.
        let own: Vec<cairn_core::Record> = match &req.session_id {
            Some(s) if !s.is_empty() => self.store.session_records(&req.framework, s).await?,
            _ => Vec::new(),
        };
        let own_ids: HashSet<String> = own
            .iter()
            .map(|r| r.record.id.as_str().to_owned())
            .collect();
        // A replayed turn's conversation had said only what came before it.
        let replayed = req.at.is_some();
        let previous = req.context.last().cloned().or_else(|| {
            own.iter()
                .rfind(|r| !replayed || r.record.started_at < now)
                .map(|r| r.record.request.clone())
        });
        let session_turns = req
            .session_id
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(|_| session_turns(&own, &req.prompt, now, replayed));
        let query = query_text(&req.prompt, previous.as_deref());
        let q = TextQuery {
            text: query.clone(),
            project: None,
            framework: None,
            since: None,
            until: None,
            exclude_session: req.session_id.clone().filter(|s| !s.is_empty()),
            before: None,
            bare: false,
            limit: note::CANDIDATES,
            context_boost: None,
        };
        // The records, items and notes the turn may be shown: not the asking conversation's,
        // not archived duplicates and, when the turn is asked at a given time, only what was
        // remembered before it (`recall_at`).
        let recall = self
            .recall_at(
                replayed.then_some(now),
                q.exclude_session.clone(),
                own_ids,
                req.project.clone(),
            )
            .await?;
        let corpora = recall.corpora.clone();
        let items_at = recall.items.as_ref().map(|(at, _)| *at);
        let items_index = recall.items.as_ref().map(|(_, index)| index.clone());
        let notes_at = recall.notes.as_ref().map(|(at, _)| *at);
        let notes_index = recall.notes.as_ref().map(|(_, index)| index.clone());
        // How many of the prompt's words, and of its names, the memory knows at all, where
        // the note may show from (not the asking conversation; when replayed, only what was
        // said by then). Started on a blocking thread before the retrieval and read after
        // it: neither waits for the other.
        let known_words = {
            let words: Vec<String> = note::content_words(&req.prompt).into_iter().collect();
            let names = note::names(&req.prompt);
            let until = replayed.then_some(now);
            let indexes: Vec<(Arc<cairn_index::TextIndex>, Option<String>)> = corpora
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let own = if i == 0 {
                        q.exclude_session.clone()
                    } else {
                        None
                    };
                    (c.text.clone(), own)
                })
                .collect();
            (!words.is_empty() || !names.is_empty()).then(|| {
                tokio::task::spawn_blocking(move || {
                    let share = |ws: &[String]| {
                        (!ws.is_empty()).then(|| {
                            let held = ws
                                .iter()
                                .filter(|w| {
                                    indexes.iter().any(|(text, own)| {
                                        text.holds_word(w, until, own.as_deref()).unwrap_or(false)
                                    })
                                })
                                .count();
                            held as f64 / ws.len() as f64
                        })
                    };
                    (share(&words), share(&names))
                })
            })
        };
        // The project's recent sessions (how far back each candidate lies), read beside the
        // retrieval.
        let recent = async {
            let Some(project) = req.project.as_deref().filter(|p| !p.is_empty()) else {
                return Ok(None);
            };
            let mut sessions = self
                .store
                .recent_sessions(project, now, note::RECENT_SESSIONS + 1, RECENT_ROWS)
                .await?;
            sessions.retain(|s| {
                !(s.framework == req.framework
                    && req.session_id.as_deref() == Some(s.session_id.as_str()))
            });
            sessions.truncate(note::RECENT_SESSIONS);
            Ok::<_, Error>(Some(note::Recent { sessions }))
        };
        let (hits, recent) = tokio::join!(
            self.retrieve(
                corpora,
                q,
                replayed.then_some(now),
                crate::memory::Asked::Request {
                    project: req.project.clone()
                }
            ),
            recent
        );
        let (hits, recent) = (hits?, recent?);
        let (known, names_known) = match known_words {
            Some(task) => task.await.unwrap_or((None, None)),
            None => (None, None),
        };
        // What each candidate is (what was remembered after the turn's time is not known then).
        let mut cands: Vec<(Meta, Signals, Vec<String>)> = Vec::new();
        for h in hits {
            if !recall.shows(&h) {
                continue;
            }
            let signals = Signals {
                fused: h.hit.score,
                dense: h.dense,
                keyword: h.keyword,
                rerank: h.rerank,
                ..Signals::default()
            };
            if Some(h.corpus) == items_at {
                let Some(item) = items_index.as_ref().and_then(|i| i.item(&h.hit.record_id)) else {
                    continue;
                };
                cands.push((
                    Meta {
                        id: item.id.as_str().to_owned(),
                        kind: Kind::Item,
                        item_kind: Some(cairn_core::api::name_of(&item.kind)),
                        title: item.title.clone(),
                        text: {
                            let text = if item.body.trim().is_empty() {
                                item.summary.clone()
                            } else {
                                format!("{} {}", item.summary, item.body)
                            };
                            // What only outside text stated says so where the agent reads it.
                            match provenance_mark(item) {
                                Some(mark) => format!("{mark} {text}"),
                                None => text,
                            }
                        },
                        at: item.said_at.or(item.happened_at),
                        project: item.project.clone(),
                        framework: None,
                        session: None,
                        importance: Some(item.importance),
                    },
                    signals,
                    item.sources.iter().map(|s| s.as_str().to_owned()).collect(),
                ));
            } else if Some(h.corpus) == notes_at {
                let Some(doc) = notes_index
                    .as_ref()
                    .and_then(|i| i.summary(&h.hit.record_id))
                else {
                    continue;
                };
                cands.push((
                    Meta {
                        id: doc.id.clone(),
                        kind: Kind::Note,
                        item_kind: None,
                        title: doc.title.clone(),
                        text: h.hit.passage.clone(),
                        at: chrono::DateTime::parse_from_rfc3339(&doc.updated_at)
                            .ok()
                            .map(|t| t.with_timezone(&chrono::Utc)),
                        project: doc.project.clone(),
                        framework: None,
                        session: None,
                        importance: None,
                    },
                    signals,
                    Vec::new(),
                ));
            } else {
                cands.push((
                    Meta {
                        id: h.hit.record_id.clone(),
                        kind: Kind::Record,
                        item_kind: None,
                        title: title_line(&h.hit.passage),
                        text: h.hit.passage.clone(),
                        at: Some(h.hit.timestamp),
                        project: h.hit.project.clone(),
                        framework: Some(h.hit.framework.clone()),
                        session: Some(h.hit.session_id.clone()),
                        importance: None,
                    },
                    signals,
                    Vec::new(),
                ));
            }
        }
        // What earlier notes did with each candidate (see the module docs): the ranker's
        // `uses` input is the showings that were used; those marked not useful or ignored
        // lower the probability afterwards (`note::discounted`).
        let ids: Vec<String> = cands.iter().map(|c| c.0.id.clone()).collect();
        let uses = self.store.note_uses(&ids).await?;
        for (m, s, _) in &mut cands {
            if let Some(u) = uses.get(&m.id) {
                s.used = u.used;
                s.not_useful = u.not_useful.saturating_add(u.ignored);
            }
        }
        let asked = note::Asked {
            prompt: &req.prompt,
            project: req.project.as_deref(),
            known,
            names_known,
            recent: recent.as_ref(),
            session_turns,
        };
        let pairs: Vec<(Meta, Signals)> = cands.iter().map(|(m, s, _)| (m.clone(), *s)).collect();
        let rows = note::features(&asked, &pairs);
        let ranker = self.ranker().await?;
        let mut probs: Vec<f32> = if rows.is_empty() {
            Vec::new()
        } else {
            let r = ranker.clone();
            let rows = rows.clone();
            tokio::task::spawn_blocking(move || r.predict(&rows))
                .await
                .map_err(|e| Error::internal(format!("the ranker task failed: {e}")))?
                .map_err(|e| Error::internal(e.to_string()))?
                .into_iter()
                .map(|p| p as f32)
                .collect()
        };
        for (p, (_, s, _)) in probs.iter_mut().zip(&cands) {
            *p = note::discounted(*p, s.used, s.not_useful);
        }
        let mut judged_by = Vec::new();
        if cands.iter().any(|c| c.1.rerank.is_some()) {
            judged_by.push("cross-encoder".to_owned());
        }
        // The LLM judge, when the user turned it on: the ranker's best few, within its own
        // deadline.
        if !cands.is_empty()
            && let Some((llm, ms)) = self.judge_llm().await
        {
            let mut order: Vec<usize> = (0..probs.len()).collect();
            order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]));
            order.truncate(judge::JUDGED);
            let asked: Vec<&Meta> = order.iter().map(|&i| &cands[i].0).collect();
            let verdict =
                judge::judge(llm, &query, &asked, std::time::Duration::from_millis(ms)).await;
            match verdict {
                judge::Verdict::Answered(ps) => {
                    // Not a ranker input (no judge answers in its training): combined with
                    // the ranker's probability instead, and the bar follows.
                    for (&i, p) in order.iter().zip(ps) {
                        let Some(p) = p else { continue };
                        cands[i].1.llm = Some(p);
                        probs[i] = judge::combine(probs[i], p);
                    }
                    judged_by.push("llm".to_owned());
                }
                judge::Verdict::Late => {
                    tracing::info!(
                        deadline_ms = ms,
                        "the LLM judge did not answer in time; the note goes out without it"
                    );
                }
                judge::Verdict::Failed(why) => {
                    tracing::warn!(error = %why, "the LLM judge failed; the note goes out without it");
                }
            }
        }
        // The bar is the one the model was trained with: no judge moves it (the ranker never
        // saw a judge's answer; the LLM judge's probability is combined with the ranker's
        // instead, so a judge that disagrees lowers the probability, not the bar).
        let bar = note::raised(ranker.bar(), names_known);
        let metas: Vec<Meta> = cands.iter().map(|c| c.0.clone()).collect();
        let shown_at = note::choose(&metas, &probs, bar);
        // A shown record is told by its whole request, not the passage that matched.
        let mut shown_meta: Vec<Meta> = Vec::new();
        for &i in &shown_at {
            let mut m = metas[i].clone();
            if m.kind == Kind::Record
                && let Some(r) = self.store.record(&RecordId::new(&m.id)).await?
            {
                m.text = r.record.text;
                m.title = title_line(&r.record.request);
            }
            shown_meta.push(m);
        }
        let refs: Vec<&Meta> = shown_meta.iter().collect();
        let text = if refs.is_empty() {
            None
        } else {
            // Marks with a fresh nonce under this install's key ([`cairn_text::marks`]).
            let nonce = cairn_text::marks::key_at(&self.paths.mark_key())
                .and_then(|k| k.nonce())
                .map_err(|e| Error::internal(format!("cannot mark the note: {e}")))?;
            note::render(&refs, &nonce)
        };
        let entries: Vec<NoteEntry> = shown_at
            .iter()
            .zip(&shown_meta)
            .map(|(&i, m)| NoteEntry {
                id: m.id.clone(),
                kind: m.kind.as_str().to_owned(),
                item_kind: m.item_kind.clone(),
                title: m.title.clone(),
                text: cairn_text::chunk::cut(&m.text, note::ENTRY_CHARS),
                at: m.at.as_ref().map(cairn_core::api::timestamp),
                project: m.project.clone(),
                framework: m.framework.clone(),
                probability: probs[i],
            })
            .collect();
        let silent_because = if entries.is_empty() {
            Some(if cands.is_empty() {
                "nothing earlier matched".to_owned()
            } else {
                format!("no candidate reached the bar of {bar}")
            })
        } else {
            None
        };
        let shown_set: HashSet<usize> = shown_at.iter().copied().collect();
        let whole: Vec<Candidate> = cands
            .into_iter()
            .zip(rows)
            .enumerate()
            .map(|(i, ((meta, signals, sources), features))| Candidate {
                probability: probs.get(i).copied().unwrap_or(0.0),
                shown: shown_set.contains(&i),
                meta,
                signals,
                features,
                sources,
            })
            .collect();
        let latency_ms = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
        let turn = if req.dry_run {
            String::new()
        } else {
            let turn = new_turn_id()?;
            let mut order: Vec<&Candidate> = whole.iter().collect();
            order.sort_by(|a, b| {
                b.shown
                    .cmp(&a.shown)
                    .then(b.probability.total_cmp(&a.probability))
            });
            let prompt = cairn_text::scrub::scrubber()
                .scrub(&req.prompt)
                .0
                .into_owned();
            // What the note said of each shown entry, for telling whether the answer used it.
            let said: HashMap<&str, String> = entries
                .iter()
                .map(|e| (e.id.as_str(), format!("{}\n{}", e.title, e.text)))
                .collect();
            self.store
                .log_injection(&cairn_store::Injection {
                    turn: turn.clone(),
                    at: now,
                    framework: req.framework.clone(),
                    session_id: req.session_id.clone(),
                    project: req.project.clone(),
                    prompt,
                    shown: !entries.is_empty(),
                    bar,
                    judged_by: judged_by.clone(),
                    silent_because: silent_because.clone(),
                    latency_ms,
                    feature_names: note::FEATURES.iter().map(|s| (*s).to_owned()).collect(),
                    entries: order
                        .into_iter()
                        .map(|c| cairn_store::InjectionCandidate {
                            id: c.meta.id.clone(),
                            kind: c.meta.kind.as_str().to_owned(),
                            item_kind: c.meta.item_kind.clone(),
                            title: c.meta.title.clone(),
                            probability: c.probability,
                            shown: c.shown,
                            features: c
                                .features
                                .iter()
                                .map(|v| v.is_finite().then_some(*v as f32))
                                .collect(),
                            text: c
                                .shown
                                .then(|| said.get(c.meta.id.as_str()).cloned())
                                .flatten(),
                        })
                        .collect(),
                })
                .await?;
            turn
        };
        Ok((
            TurnNote {
                turn,
                note: text,
                entries,
                bar,
                judged_by,
                silent_because,
                latency_ms,
            },
            whole,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_prompt_is_asked_with_the_previous_request() {
        assert_eq!(
            query_text("and the port?", Some("set up postgres")),
            "and the port?\nset up postgres"
        );
        let long = "please refactor the billing module so that invoices are computed lazily";
        assert_eq!(query_text(long, Some("x")), long);
        assert_eq!(query_text("hi", None), "hi");
    }

    /// The `n`th request of one session, captured in that order, said at `at`.
    fn said(n: i64, request: &str, at: Timestamp) -> cairn_core::Record {
        let mut r = crate::testkit::record(
            &format!("r_{n}"),
            "run",
            n,
            request,
            request,
            serde_json::json!({}),
        );
        r.record.started_at = at;
        r
    }

    #[test]
    fn the_sessions_requests_before_the_prompt_are_counted_where_capture_put_them() {
        let base = chrono::Utc::now();
        let t = |m: i64| base - chrono::Duration::minutes(m);
        // An Aider run: every turn at the run's start time, in capture order.
        let start = t(60);
        let run = [
            said(1, "add a cache", start),
            said(2, "now test it", start),
            said(3, "commit", start),
        ];
        assert_eq!(session_turns(&run, "add a cache", start, true), 0);
        assert_eq!(session_turns(&run, " now test it\n", start, true), 1);
        assert_eq!(session_turns(&run, "commit", start, true), 2);
        // Turns with their own times, replayed at the third: the two before it.
        let timed = [
            said(1, "add a cache", t(30)),
            said(2, "now test it", t(20)),
            said(3, "commit", t(10)),
        ];
        assert_eq!(session_turns(&timed, "commit", t(10), true), 2);
        // Live: the prompt not captured yet, or captured just before the hook asked.
        assert_eq!(session_turns(&timed[..2], "commit", t(0), false), 2);
        assert_eq!(session_turns(&timed, "commit", t(0), false), 2);
        // Live, the same words asked again: the earlier asking counts once it is not last.
        assert_eq!(session_turns(&timed, "add a cache", t(0), false), 3);
        assert_eq!(session_turns(&[], "anything", t(0), false), 0);
    }
}
