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
//! the right note for it is none. The rule is [`crate::reuse`]'s, which the turn note's
//! outcomes (`used` / `ignored`, [`crate::outcomes`]) apply too.
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use cairn_config::Paths;
use cairn_core::Timestamp;
use cairn_core::api::timestamp as rfc3339;
use cairn_core::api::{
    ReplayFigures, ReplayLatest, ReplayReport, ReplayReq, ReplayRow, TurnNoteReq, WorkerState,
};
use cairn_index::TextQuery;

use crate::memory::Memory;
use crate::{Error, Result, reuse};
/// The most records labelled needed for one request: those holding most of the reused
/// identifiers (then the latest).
pub const NEEDED_MAX: usize = 3;
/// Entries of plain search's answer, the baseline (as many as a note shows at most).
pub const BASELINE_TOP: usize = 3;
/// Requests asked at the same time (the note's work is spread over the machine's cores).
const CONCURRENCY: usize = 2;
/// Records read from the store at a time while the identifier index is built.
const PAGE: u64 = 500;
/// The longest request text a replay row keeps (bytes; the note reads at most 4,096).
const REQUEST_BYTES: usize = 8_192;

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
        let mut held = reuse::held(rec);
        let asked = asked.then(|| reuse::answer_and_own(rec));
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
        reuse::rare_max(self.recs.len())
    }

    /// The label of request `q`: the earlier-session records it needed (at most
    /// [`NEEDED_MAX`]) and the identifiers its answer reused from them.
    fn label(&self, q: usize, hidden: &HashSet<String>) -> (Vec<u32>, Vec<String>) {
        let me = &self.recs[q];
        let Some(asked) = &me.asked else {
            return (Vec::new(), Vec::new());
        };
        let mut votes: HashMap<u32, usize> = HashMap::new();
        let mut reused = Vec::new();
        // Said earlier in the same session: not a memory of another one.
        let said_before = |w: u32| {
            self.holders[w as usize].iter().any(|&h| {
                let r = &self.recs[h as usize];
                r.session == me.session && r.at < me.at
            })
        };
        for w in reuse::reused(
            asked.answer.iter().copied(),
            |w| asked.own.contains(&w),
            |w| self.holders[w as usize].len(),
            self.rare_max(),
            said_before,
        ) {
            let holders = &self.holders[w as usize];
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

/// Where the latest replay's figures are kept.
fn latest_path(paths: &Paths) -> std::path::PathBuf {
    paths.data.join("replay.json")
}

/// The latest replay's figures, without rows (`replay_latest`); none before the first.
pub fn latest(paths: &Paths) -> ReplayLatest {
    let report = match fs_err::read_to_string(latest_path(paths)) {
        Ok(t) => serde_json::from_str::<ReplayReport>(&t).ok(),
        Err(_) => None,
    };
    ReplayLatest { report }
}

impl Memory {
    /// The replay (`replay_run`, see the module docs) of the requests made from `since` to
    /// `until` (the host read them from `req`): its progress goes to `progress` (a state, a
    /// sentence, a fraction done), and its figures (without rows) are kept as the latest
    /// replay.
    pub async fn replay(
        &self,
        req: &ReplayReq,
        since: Option<Timestamp>,
        until: Option<Timestamp>,
        progress: &(dyn Fn(WorkerState, Option<String>, Option<f32>) + Send + Sync),
    ) -> Result<ReplayReport> {
        if let (Some(s), Some(u)) = (since, until)
            && s > u
        {
            return Err(Error::bad_request(format!(
                "the range is empty: since {} is after until {}",
                rfc3339(&s),
                rfc3339(&u)
            )));
        }
        if req.limit == Some(0) {
            return Err(Error::bad_request(
                "limit 0 asks for no request; give 1 or more",
            ));
        }
        let project = req.project.clone().filter(|p| !p.trim().is_empty());
        progress(
            WorkerState::Running,
            Some("reading the captured requests".into()),
            Some(0.0),
        );
        let result = self.run(req, since, until, project, progress).await;
        match &result {
            Ok(r) => progress(
                WorkerState::Idle,
                Some(format!("replayed {} requests", r.note.requests)),
                None,
            ),
            Err(e) => progress(
                WorkerState::Failed,
                Some(format!("the replay failed: {e}")),
                None,
            ),
        }
        result
    }

    async fn run(
        &self,
        req: &ReplayReq,
        since: Option<Timestamp>,
        until: Option<Timestamp>,
        project: Option<String>,
        progress: &(dyn Fn(WorkerState, Option<String>, Option<f32>) + Send + Sync),
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
            let page = self.store.records_page(after, PAGE).await?;
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
            .map_err(|e| Error::internal(format!("the identifier index failed: {e}")))?;
            progress(
                WorkerState::Running,
                Some(format!(
                    "reading the captured requests ({} records)",
                    index.recs.len()
                )),
                Some(0.0),
            );
        }
        let hidden = self.store.hidden_records().await?;
        // Items sourced from each record, with the time each became known.
        let items = self.store.items(false).await?;
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
                let memory = self.clone();
                let qs = questions.clone();
                let i = next;
                running.spawn(async move { (i, memory.replay_one(&qs[i]).await) });
                next += 1;
            }
            let Some(joined) = running.join_next().await else {
                break;
            };
            let (i, answer) =
                joined.map_err(|e| Error::internal(format!("a replayed turn failed: {e}")))?;
            let answer = answer.map_err(|e| {
                Error::Failed(
                    e.code(),
                    format!("replaying request {} failed: {e}", questions[i].id),
                )
            })?;
            answers[i] = Some(answer);
            done += 1;
            #[allow(clippy::cast_precision_loss)]
            let p = done as f32 / total.max(1) as f32;
            progress(
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
        let path = latest_path(&self.paths);
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::internal(format!("cannot write the replay's figures: {e}")))?;
        if let Err(e) = fs_err::write(&path, text) {
            tracing::warn!(error = %e, "cannot keep the replay's figures");
        }
        Ok(ReplayReport { rows, ..report })
    }

    /// One request asked: its note, and plain search's top 3 under the same constraints.
    async fn replay_one(&self, q: &Question) -> Result<Answer> {
        let (note, _) = self.note(q.req.clone()).await?;
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
        let hits = self
            .retrieve(
                recall.corpora.clone(),
                tq,
                Some(q.at),
                crate::memory::Asked::Search,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        id: &str,
        session: &str,
        minute: i64,
        request: &str,
        answer: &str,
    ) -> cairn_core::Record {
        crate::testkit::record(
            id,
            session,
            minute,
            request,
            &format!("{request}\n\n{answer}"),
            serde_json::json!({"steps": [{"type": "text", "text": answer}]}),
        )
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
