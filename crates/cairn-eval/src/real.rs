//! `cairn eval real DIR`: retrieval recall on real coding-agent histories — the corpus in
//! `data/real` (public repositories' committed Aider and SpecStory histories, hand-labelled).
//!
//! Each repository's history files become the memory of one user through Cairn's own
//! capture (the readers, the scrubber, the store) and the service's own indexing (tantivy,
//! the embedded vector index with its graph built). Each hand-labelled request that needs
//! earlier turns is then asked as search would be asked at that moment: the request's words,
//! its own session left out, only what happened before it a candidate, dates read against
//! its time. Recall-any of the labelled turns at k = 1, 3, 10 (and recall-all at 10) is
//! reported per split, for the retriever as search uses it (`cairn`) and plain BM25
//! (`bm25`) side by side, with each search's latency.
//!
//! The same run measures the replay's label rule (`cairn eval replay`: labels from the
//! identifiers an answer reuses) against the hand labels, request by request.
//!
//! The split is by repository (`split.json`): choices are made on `train`; `heldout` is for
//! final figures only, and is measured only when asked for by name.
use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use cairn_capture::Env;
use cairn_capture::pass::PassOptions;
use cairn_core::Record;
use cairn_index::TextQuery;
use cairn_recall::{Corpus, Query, Retriever, SearchMode, Tuning};
use cairn_store::Store;
use serde::{Deserialize, Serialize};

use crate::locomo::{Models, Setup, eval_models, index_store, pct, runnable, setups_from};

/// The k values reported.
pub const KS: [usize; 3] = [1, 3, 10];

/// Characters of a request compared when a label is matched to a captured record.
const MATCH_CHARS: usize = 100;

/// One source repository (`sources.json`).
#[derive(Debug, Deserialize)]
pub(crate) struct Source {
    repo: String,
    files: Vec<SourceFile>,
}

/// One history file of a source.
#[derive(Debug, Deserialize)]
struct SourceFile {
    path: String,
}

/// The split by repository (`split.json`).
#[derive(Debug, Deserialize)]
struct Split {
    train: Vec<String>,
    heldout: Vec<String>,
}

/// A turn a label points at: its session and position, and the start of its request.
#[derive(Debug, Clone, Deserialize)]
pub struct TurnRef {
    /// The session as the file names it (Aider's run header time, SpecStory's file name).
    pub session: String,
    /// 1-based position of the request in its session.
    #[serde(default)]
    pub turn: usize,
    /// The request's first characters, as in the file.
    pub request: String,
}

/// One hand-read request (`labels/hand.jsonl`).
#[derive(Debug, Clone, Deserialize)]
pub struct Label {
    /// `owner/name`.
    pub repo: String,
    /// The request itself.
    #[serde(flatten)]
    pub at: TurnRef,
    /// The earlier-session turns it needs (empty: none).
    #[serde(default)]
    pub needed: Vec<TurnRef>,
}

/// Figures of one setup on one split.
#[derive(Debug, Clone, Serialize)]
pub struct SetupFigures {
    /// The setup (`cairn`: the retriever as search uses it; `bm25`: keywords alone).
    pub setup: String,
    /// Requests measured (labelled as needing earlier turns, all of them found in the store).
    pub n: usize,
    /// Recall-any at k = 1, 3, 10: share of requests with a needed turn in the top k.
    pub any_at_1: f64,
    /// See `any_at_1`.
    pub any_at_3: f64,
    /// See `any_at_1`.
    pub any_at_10: f64,
    /// Share of requests with every needed turn in the top 10.
    pub all_at_10: f64,
    /// Median search time, query embedding included (ms).
    pub p50_ms: f64,
    /// 95th percentile of the same (ms).
    pub p95_ms: f64,
}

/// Figures of one split.
#[derive(Debug, Clone, Serialize)]
pub struct SplitFigures {
    /// `train` or `heldout`.
    pub split: String,
    /// Repositories in it.
    pub repositories: usize,
    /// Records captured from their histories.
    pub records: usize,
    /// Hand-labelled requests.
    pub labelled: usize,
    /// Of those, the ones needing earlier turns.
    pub need: usize,
    /// Labels (requests or needed turns) that matched no captured record, left out.
    pub unmatched: usize,
    /// One entry per setup.
    pub setups: Vec<SetupFigures>,
    /// The replay's labels from use (`cairn eval replay`) measured against the hand labels.
    pub label_rule: RuleFigures,
}

/// How the replay's label rule agrees with the hand labels, over the labelled requests found
/// in the store.
#[derive(Debug, Clone, Serialize)]
pub struct RuleFigures {
    /// Labelled requests found in the store.
    pub requests: usize,
    /// Of those, the ones the rule says need an earlier record.
    pub rule_need: usize,
    /// Of those, the ones the hand labels say need an earlier turn.
    pub hand_need: usize,
    /// Share of the rule's needing requests that need one by hand too.
    pub precision: f64,
    /// Share of the hand-labelled needing requests the rule finds.
    pub recall: f64,
    /// Share of the records the rule names that are turns the hand labels name.
    pub record_precision: f64,
}

/// Counts for [`RuleFigures`].
#[derive(Default)]
struct Agreement {
    requests: usize,
    rule_need: usize,
    hand_need: usize,
    both: usize,
    named: usize,
    named_right: usize,
}

impl Agreement {
    fn add(&mut self, hand_need: bool, hand: &[String], rule: &[String]) {
        self.requests += 1;
        self.hand_need += usize::from(hand_need);
        self.rule_need += usize::from(!rule.is_empty());
        self.both += usize::from(hand_need && !rule.is_empty());
        self.named += rule.len();
        self.named_right += rule.iter().filter(|r| hand.contains(r)).count();
    }

    fn figures(&self) -> RuleFigures {
        let share = |a: usize, n: usize| if n == 0 { 0.0 } else { a as f64 / n as f64 };
        RuleFigures {
            requests: self.requests,
            rule_need: self.rule_need,
            hand_need: self.hand_need,
            precision: share(self.both, self.rule_need),
            recall: share(self.both, self.hand_need),
            record_precision: share(self.named_right, self.named),
        }
    }
}

/// Whitespace collapsed, lower case: how a label's request and a record's are compared.
fn norm(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Whether a record's request is the one a label quotes (the label holds its first
/// characters; either may be cut shorter).
fn same_request(record: &str, label: &str) -> bool {
    let r = norm(record);
    let l: String = norm(label).chars().take(MATCH_CHARS).collect();
    if l.chars().count() < 3 {
        return false;
    }
    r.starts_with(&l) || (r.chars().count() >= 20 && l.starts_with(&r))
}

/// Whether a captured session is the one a label names (Aider: the run's header time at the
/// end of the session id; SpecStory: the file's name in its id or its source).
fn same_session(record: &Record, session: &str) -> bool {
    let id = &record.record.session_id;
    id.ends_with(&format!("#{session}"))
        || id.contains(session)
        || record
            .record
            .source
            .as_deref()
            .is_some_and(|s| s.ends_with(session) || s.contains(&format!("/{session}")))
}

/// The captured record a label points at.
pub(crate) fn find<'a>(
    sessions: &'a BTreeMap<String, Vec<&'a Record>>,
    t: &TurnRef,
) -> Option<&'a Record> {
    let mut best: Option<&Record> = None;
    for recs in sessions.values() {
        if !recs.first().is_some_and(|r| same_session(r, &t.session)) {
            continue;
        }
        let hits: Vec<(usize, &&Record)> = recs
            .iter()
            .enumerate()
            .filter(|(_, r)| same_request(&r.record.request, &t.request))
            .collect();
        if let Some((_, r)) = hits
            .iter()
            .find(|(i, _)| t.turn > 0 && *i + 1 == t.turn)
            .or(hits.first())
        {
            best = Some(r);
            break;
        }
    }
    if best.is_none() {
        // The session did not match by name: a request quoted exactly once in the store.
        let mut all = sessions
            .values()
            .flatten()
            .filter(|r| same_request(&r.record.request, &t.request));
        if let (Some(one), None) = (all.next(), all.next()) {
            best = Some(one);
        }
    }
    best
}

/// The corpus's parts: its repositories, their split and the hand labels.
pub(crate) struct RealCorpus {
    sources: Vec<Source>,
    splits: Split,
    pub(crate) labels: HashMap<String, Vec<Label>>,
}

impl RealCorpus {
    /// Reads `sources.json`, `split.json` and `labels/hand.jsonl` under `dir`.
    pub(crate) fn read(dir: &Path) -> anyhow::Result<Self> {
        let read = |name: &str| -> anyhow::Result<String> {
            let p = dir.join(name);
            fs_err::read_to_string(&p).with_context(|| {
                format!(
                    "{} is not a real-history corpus: cannot read {name}",
                    dir.display()
                )
            })
        };
        let sources: Vec<Source> =
            serde_json::from_str(&read("sources.json")?).context("sources.json is malformed")?;
        let splits: Split =
            serde_json::from_str(&read("split.json")?).context("split.json is malformed")?;
        let mut labels: HashMap<String, Vec<Label>> = HashMap::new();
        for (i, line) in read("labels/hand.jsonl")?.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let l: Label = serde_json::from_str(line)
                .with_context(|| format!("labels/hand.jsonl line {}: not a label", i + 1))?;
            labels.entry(l.repo.clone()).or_default().push(l);
        }
        Ok(Self {
            sources,
            splits,
            labels,
        })
    }

    /// The repositories of a split (`train` or `heldout`).
    pub(crate) fn repos(&self, split: &str) -> &[String] {
        if split == "train" {
            &self.splits.train
        } else {
            &self.splits.heldout
        }
    }

    /// A repository's entry in `sources.json`.
    pub(crate) fn source(&self, repo: &str) -> anyhow::Result<&Source> {
        self.sources
            .iter()
            .find(|s| s.repo == repo)
            .with_context(|| format!("split.json names {repo}, which sources.json does not list"))
    }
}

/// The splits `--split` names: `train`, `heldout` or both (`all`).
pub(crate) fn splits_named(split: &str) -> anyhow::Result<Vec<&'static str>> {
    Ok(match split {
        "train" => vec!["train"],
        "heldout" => vec!["heldout"],
        "all" => vec!["train", "heldout"],
        other => bail!("--split {other:?}: expected train, heldout or all"),
    })
}

/// Where one repository's history is captured for an evaluation. While this process holds
/// the lock beside it, a fixed folder under the system's temporary folder, emptied first and
/// removed after: an Aider session is named by its history file's path, so the same path
/// gives the same record ids each run and ties between records break the same way (what
/// still differs run to run is which of two identical passages the vector search returns).
/// When another evaluation holds the lock, a fresh temporary folder, said once.
pub(crate) struct RepoDir {
    path: PathBuf,
    lock: Option<fs_err::File>,
    _tmp: Option<tempfile::TempDir>,
}

impl RepoDir {
    pub(crate) fn new(say: &(dyn Fn(String) + Sync)) -> anyhow::Result<Self> {
        let root = std::env::temp_dir();
        let fixed = root.join("cairn-eval-real");
        let lock_path = root.join("cairn-eval-real.lock");
        let locked = fs_err::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| e.to_string())
            .and_then(|f| match f.try_lock() {
                Ok(()) => Ok(f),
                Err(std::fs::TryLockError::WouldBlock) => {
                    Err("another evaluation holds it".to_owned())
                }
                Err(std::fs::TryLockError::Error(e)) => Err(e.to_string()),
            })
            .and_then(|f| {
                if fixed.exists() {
                    fs_err::remove_dir_all(&fixed).map_err(|e| e.to_string())?;
                }
                fs_err::create_dir_all(&fixed).map_err(|e| e.to_string())?;
                Ok(f)
            });
        match locked {
            Ok(lock) => Ok(Self {
                path: fixed,
                lock: Some(lock),
                _tmp: None,
            }),
            Err(why) => {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    say(format!(
                        "note: capturing under fresh temporary folders, not {} ({why}, {}): an \
                         Aider history's record ids, and so ties between identical records, \
                         differ from another run's",
                        fixed.display(),
                        lock_path.display()
                    ));
                });
                let tmp = tempfile::tempdir().context("cannot make a temporary folder")?;
                Ok(Self {
                    path: tmp.path().to_owned(),
                    lock: None,
                    _tmp: Some(tmp),
                })
            }
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RepoDir {
    fn drop(&mut self) {
        // Best effort: the next run empties it first anyway.
        if self.lock.is_some()
            && let Err(e) = fs_err::remove_dir_all(&self.path)
        {
            eprintln!("note: the evaluation's folder stays ({e})");
        }
    }
}

/// Captures a repository's history files into `store` through Cairn's own readers and
/// scrubber, laid out in a project folder under `tmp` (a user's own histories: trusted).
/// `say` hears a line when capture stored nothing.
pub(crate) async fn capture_repo(
    dir: &Path,
    source: &Source,
    store: &Store,
    tmp: &Path,
    say: &(dyn Fn(String) + Sync),
) -> anyhow::Result<()> {
    let repo = &source.repo;
    let home = tmp.join("home");
    let project: PathBuf = tmp.join("projects").join(repo.replace('/', "__"));
    fs_err::create_dir_all(&home)?;
    fs_err::create_dir_all(&project)?;
    lay_out(
        &dir.join("raw").join(repo.replace('/', "__")),
        source,
        &project,
    )?;
    let opts = PassOptions {
        env: Env::fake(&home, &[]),
        only: Vec::new(),
        disabled: Vec::new(),
        settle: Duration::ZERO,
        internal_dirs: Vec::new(),
        forget: Default::default(),
        aider_folders: vec![project.clone()],
        specstory_folders: vec![project.clone()],
        // Public repositories' committed histories are this evaluation's data.
        trusted_history_folders: vec![project.clone()],
        batch: Default::default(),
    };
    let report = cairn_capture::pass::run(store, &opts, &|_| {})
        .await
        .with_context(|| format!("capturing {repo}"))?;
    let added: u64 = report.frameworks.iter().map(|f| f.added).sum();
    if added == 0 {
        say(format!(
            "{repo}: capture stored nothing ({:?}; warnings: {})",
            report.frameworks,
            report.warnings.join("; ")
        ));
    }
    Ok(())
}

/// Records by session, each session's in the order they were asked.
pub(crate) fn sessions_of(records: &[Record]) -> BTreeMap<String, Vec<&Record>> {
    let mut sessions: BTreeMap<String, Vec<&Record>> = BTreeMap::new();
    for r in records {
        sessions
            .entry(r.record.session_id.clone())
            .or_default()
            .push(r);
    }
    for recs in sessions.values_mut() {
        recs.sort_by_key(|r| (r.record.started_at, r.seq));
    }
    sessions
}

/// The captured record a label's request is, and the ids of the turns it needs that were
/// captured before it (a needed turn that matches none, or came at or after it, is left
/// out); none when the request matches no record.
pub(crate) fn resolve<'a>(
    sessions: &'a BTreeMap<String, Vec<&'a Record>>,
    label: &Label,
) -> Option<(&'a Record, Vec<String>)> {
    let asked = find(sessions, &label.at)?;
    let at = asked.record.started_at;
    let needed = label
        .needed
        .iter()
        .filter_map(|t| find(sessions, t))
        .filter(|r| r.record.started_at < at)
        .map(|r| r.record.id.as_str().to_owned())
        .collect();
    Some((asked, needed))
}

/// Every current record of a store.
pub(crate) async fn all_records(store: &Store) -> anyhow::Result<Vec<Record>> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = store.records_page(after, 1_000).await?;
        let Some(last) = page.last() else { break };
        after = last.0.seq;
        out.extend(page.into_iter().map(|(r, _)| r));
    }
    Ok(out)
}

/// Copies a repository's history files into a project folder outside any repository
/// (capture's rule for cloned histories looks at git; these are the user's in this eval).
fn lay_out(raw: &Path, source: &Source, project: &Path) -> anyhow::Result<usize> {
    let mut n = 0;
    for f in &source.files {
        let from = raw.join(f.path.trim_start_matches('/'));
        if !from.is_file() {
            bail!(
                "{} is listed in sources.json for {} but missing",
                from.display(),
                source.repo
            );
        }
        let to = project.join(f.path.trim_start_matches('/'));
        if let Some(parent) = to.parent() {
            fs_err::create_dir_all(parent)?;
        }
        fs_err::copy(&from, &to)?;
        n += 1;
    }
    Ok(n)
}

/// The setups compared by default: the retriever as search uses it, as a request asked as
/// a query uses it (the latest records among the candidates), and plain BM25.
fn real_setups() -> Vec<Setup> {
    vec![
        Setup {
            name: "cairn".into(),
            mode: SearchMode::Hybrid,
            tuning: Tuning::default(),
            rerank: false,
        },
        Setup {
            name: "cairn-requests".into(),
            mode: SearchMode::Hybrid,
            tuning: Tuning::requests(),
            rerank: false,
        },
        Setup {
            name: "bm25".into(),
            mode: SearchMode::Bm25,
            tuning: Tuning::plain(),
            rerank: false,
        },
    ]
}

/// Rates of one setup.
#[derive(Default)]
struct Tally {
    any: [usize; 3],
    all10: usize,
    n: usize,
    times: Vec<f64>,
}

/// Runs the evaluation and prints it (a table, or JSON).
pub async fn run(
    paths: &cairn_config::Paths,
    settings: &cairn_config::Settings,
    dir: &Path,
    split: &str,
    json: bool,
    tunings: &[String],
    rows: Option<&Path>,
) -> anyhow::Result<Vec<SplitFigures>> {
    let wanted = splits_named(split)?;
    let corpus = RealCorpus::read(dir)?;
    let setups = setups_from(tunings, real_setups)?;
    let models = eval_models(paths, settings).await;
    let setups = runnable(setups, &models);
    let mut out = Vec::new();
    let mut row_file = match rows {
        Some(p) => Some(std::io::BufWriter::new(
            fs_err::File::create(p).with_context(|| format!("--rows {}", p.display()))?,
        )),
        None => None,
    };
    for name in wanted {
        let figures = measure(
            dir,
            name,
            &corpus,
            &setups,
            &models,
            row_file.as_mut().map(|w| w as &mut dyn std::io::Write),
        )
        .await?;
        out.push(figures);
    }
    models.say_cache();
    if json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print(&out);
    }
    Ok(out)
}

/// One split measured.
async fn measure(
    dir: &Path,
    name: &str,
    corpus: &RealCorpus,
    setups: &[Setup],
    models: &Models,
    mut rows: Option<&mut dyn std::io::Write>,
) -> anyhow::Result<SplitFigures> {
    let repos = corpus.repos(name);
    let mut tallies: Vec<Tally> = setups.iter().map(|_| Tally::default()).collect();
    let (mut records_total, mut labelled, mut need, mut unmatched) = (0, 0, 0, 0);
    let mut agreement = Agreement::default();
    let bar = crate::progress::bar(repos.len() as u64, "repositories");
    for repo in repos {
        bar.set_message(format!("({name}: {repo})"));
        let source = corpus.source(repo)?;
        let said = bar.clone();
        let tmp = RepoDir::new(&|line| said.suspend(|| eprintln!("{line}")))?;
        let store = Store::open(&tmp.path().join("cairn.db")).await?;
        capture_repo(dir, source, &store, tmp.path(), &|line| {
            said.suspend(|| eprintln!("{line}"))
        })
        .await?;
        let (text, vectors) = index_store(&store, tmp.path(), models).await?;
        let records = all_records(&store).await?;
        records_total += records.len();
        let sessions = sessions_of(&records);
        let rule = cairn_turn::labels_from_use(&records);
        for label in corpus.labels.get(repo).into_iter().flatten() {
            labelled += 1;
            need += usize::from(!label.needed.is_empty());
            let Some((asked, needed)) = resolve(&sessions, label) else {
                unmatched += 1;
                continue;
            };
            let at = asked.record.started_at;
            unmatched += label.needed.len() - needed.len();
            let ruled = rule
                .get(asked.record.id.as_str())
                .map_or(&[][..], Vec::as_slice);
            agreement.add(!label.needed.is_empty(), &needed, ruled);
            if needed.is_empty() {
                continue;
            }
            let own = asked.record.session_id.clone();
            let keep: cairn_recall::KeepFn =
                Arc::new(move |h: &cairn_index::TextHit| h.session_id != own && h.timestamp < at);
            for (setup, tally) in setups.iter().zip(tallies.iter_mut()) {
                let retriever = Retriever {
                    corpora: vec![Corpus {
                        text: text.clone(),
                        vectors: vectors.clone(),
                        keep: Some(keep.clone()),
                        store: Some(store.clone()),
                        before: Some(at),
                        kinds: cairn_recall::CHUNKS,
                    }],
                    embedder: models.embedder.clone(),
                    reranker: models.reranker.clone(),
                    tuning: setup.tuning.clone(),
                };
                let started = Instant::now();
                let (hits, _) = retriever
                    .search(&Query {
                        text: TextQuery::new(&asked.record.request, 10),
                        mode: setup.mode,
                        rerank: setup.rerank,
                        now: at,
                        recent_project: None,
                    })
                    .await?;
                tally.times.push(started.elapsed().as_secs_f64() * 1000.0);
                // A neighbour the retriever brought in is held to the same rule as a hit.
                let ranked: Vec<&str> = hits
                    .iter()
                    .filter(|h| keep(&h.hit))
                    .map(|h| h.hit.record_id.as_str())
                    .collect();
                tally.n += 1;
                for (i, k) in KS.iter().enumerate() {
                    let top = &ranked[..ranked.len().min(*k)];
                    tally.any[i] += usize::from(needed.iter().any(|n| top.contains(&n.as_str())));
                }
                let top10 = &ranked[..ranked.len().min(10)];
                tally.all10 += usize::from(needed.iter().all(|n| top10.contains(&n.as_str())));
                if let Some(w) = rows.as_mut() {
                    let request_of = |id: &str| {
                        records
                            .iter()
                            .find(|r| r.record.id.as_str() == id)
                            .map(|r| r.record.request.chars().take(160).collect::<String>())
                    };
                    let row = serde_json::json!({
                        "split": name,
                        "repo": repo,
                        "setup": setup.name,
                        "request": asked.record.request.chars().take(300).collect::<String>(),
                        "needed": needed.iter().map(|n| request_of(n)).collect::<Vec<_>>(),
                        "rank": ranked.iter().position(|r| needed.iter().any(|n| n == r))
                            .map(|p| p + 1),
                        "top3": ranked.iter().take(3).map(|r| request_of(r)).collect::<Vec<_>>(),
                    });
                    writeln!(w, "{row}")?;
                }
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(w) = rows.as_mut() {
        w.flush()?;
    }
    let share = |a: usize, n: usize| if n == 0 { 0.0 } else { a as f64 / n as f64 };
    let setups = setups
        .iter()
        .zip(tallies)
        .map(|(s, mut t)| {
            t.times.sort_by(f64::total_cmp);
            SetupFigures {
                setup: s.name.clone(),
                n: t.n,
                any_at_1: share(t.any[0], t.n),
                any_at_3: share(t.any[1], t.n),
                any_at_10: share(t.any[2], t.n),
                all_at_10: share(t.all10, t.n),
                p50_ms: pct(&t.times, 0.5),
                p95_ms: pct(&t.times, 0.95),
            }
        })
        .collect();
    Ok(SplitFigures {
        split: name.to_owned(),
        repositories: repos.len(),
        records: records_total,
        labelled,
        need,
        unmatched,
        setups,
        label_rule: agreement.figures(),
    })
}

fn print(figures: &[SplitFigures]) {
    for f in figures {
        println!(
            "{} split: {} repositories, {} records captured, {} requests labelled, {} needing \
             earlier turns ({} labels unmatched, left out)",
            f.split, f.repositories, f.records, f.labelled, f.need, f.unmatched
        );
        println!(
            "{:<10} {:>5} {:>8} {:>8} {:>8} {:>9} {:>17}",
            "setup", "n", "any@1", "any@3", "any@10", "all@10", "p50 / p95 ms"
        );
        for s in &f.setups {
            println!(
                "{:<10} {:>5} {:>8.3} {:>8.3} {:>8.3} {:>9.3} {:>17}",
                s.setup,
                s.n,
                s.any_at_1,
                s.any_at_3,
                s.any_at_10,
                s.all_at_10,
                format!("{:.0} / {:.0}", s.p50_ms, s.p95_ms)
            );
        }
        let r = &f.label_rule;
        println!(
            "label rule of `cairn eval replay` against the hand labels: {} requests, the rule \
             says {} need an earlier record, the hands {}; precision {:.3}, recall {:.3}, \
             records named right {:.3}",
            r.requests, r.rule_need, r.hand_need, r.precision, r.recall, r.record_precision
        );
        println!();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_matches_the_request_it_quotes() {
        assert!(same_request(
            "Add a retry to the fetch in src/net.rs\nwith backoff",
            "add a retry to the  fetch in src/net.rs with"
        ));
        assert!(!same_request("Add a retry", "Remove the retry"));
        // A record cut shorter than the label still matches when long enough.
        assert!(same_request(
            "Add a retry to the fetch",
            "Add a retry to the fetch in src/net.rs"
        ));
        assert!(!same_request("ok", "ok then, ship it"));
    }

    #[test]
    fn a_second_repository_folder_while_the_first_is_in_use_is_another_and_leaves_it_whole() {
        let said = std::sync::Mutex::new(Vec::new());
        let say = |line: String| said.lock().unwrap().push(line);
        let first = RepoDir::new(&say).unwrap();
        fs_err::write(first.path().join("cairn.db"), "held").unwrap();
        let second = RepoDir::new(&say).unwrap();
        assert_ne!(first.path(), second.path());
        assert!(second.path().is_dir());
        assert_eq!(
            fs_err::read_to_string(first.path().join("cairn.db")).unwrap(),
            "held",
            "the second folder emptied the first's"
        );
        let (first_path, second_path) = (first.path().to_owned(), second.path().to_owned());
        drop(second);
        assert!(!second_path.exists(), "a temporary folder outlived its use");
        drop(first);
        if first_path == std::env::temp_dir().join("cairn-eval-real") {
            assert!(!first_path.exists(), "the fixed folder outlived its use");
        }
    }
}
