//! The turn note on real histories (`cairn eval real --note`), and the real corpus's train
//! split as ranker examples (`cairn ranker train --real DIR`).
//!
//! Each repository's histories are captured into a real service (its store, keyword index
//! and embedded vector index, the models the settings name; vectors come from the
//! evaluations' cache when it has them), homed in the fixed folder of `real::RepoDir` so
//! record ids are the same run to run. Every hand-labelled request is then
//! asked of that service as the hook would have asked it at that moment
//! (`turn_note_whole`, dry run): its own session named, so left out, its project and
//! framework, its time, so only what was captured before it is a candidate. A candidate is
//! needed when it is a turn the hand labels name, or an item sourced from one. The framework
//! is the one capture gives the history (`specstory`, `aider`), which every candidate of a
//! repository shares (where a hook in use would name the agent: `cursor`, `claude-code`); no
//! ranker input reads it. The request's own session is named, so the session's requests
//! before it (`session_turns`) are counted from its place in the captured session.
//!
//! The figures are the targets for the note on real data: precision of the shown
//! entries, silence on requests needing nothing, hit rate of the requests needing an earlier
//! turn (of all of them, and of those whose needed turn the retriever's top 10 holds), and
//! plain search's top 3 beside it — the first three candidates in the retriever's order,
//! shown with no ranker and no bar.
use std::collections::HashSet;
use std::path::Path;

use anyhow::Context;
use cairn_api::{Host as ServiceHost, Service, ServiceOptions};
use cairn_config::{Paths, Settings};
use cairn_core::api::{TurnNote, TurnNoteReq};
use cairn_turn::Candidate;
use cairn_turn::note::Kind;
use serde::Serialize;

use crate::real::{RealCorpus, all_records, capture_repo, resolve, sessions_of, splits_named};

/// One labelled request asked of its repository's memory.
pub struct Asked<'a> {
    /// `owner/name`.
    pub repo: &'a str,
    /// The request's key (repository and position among its labels).
    pub group: String,
    /// The record ids the hand labels say it needs (empty: it needs nothing earlier).
    pub needed: &'a HashSet<String>,
    /// The note the service gave.
    pub note: &'a TurnNote,
    /// Every candidate behind it, in the retriever's order.
    pub candidates: &'a [Candidate],
    /// The request's text.
    pub request: &'a str,
}

/// Whether a candidate is one of the needed records or an item sourced from one.
pub fn is_needed(c: &Candidate, needed: &HashSet<String>) -> bool {
    match c.meta.kind {
        Kind::Record => needed.contains(&c.meta.id),
        Kind::Item => c.sources.iter().any(|s| needed.contains(s)),
        Kind::Note => false,
    }
}

/// Asks every hand-labelled request of one split's repositories; `visit` sees each. A
/// request, or a needed turn, that matches no captured record is left out; so is a needed
/// turn captured at or after the request. Returns the labels left out.
pub async fn each_request(
    paths: &Paths,
    settings: &Settings,
    dir: &Path,
    split: &str,
    ranker: Option<&Path>,
    mut visit: impl FnMut(&Asked<'_>),
) -> anyhow::Result<usize> {
    let corpus = RealCorpus::read(dir)?;
    let repos = corpus.repos(split);
    let models = crate::locomo::eval_models(paths, settings).await;
    let total: usize = repos
        .iter()
        .map(|r| corpus.labels.get(r).map_or(0, Vec::len))
        .sum();
    let bar = crate::progress::bar(total as u64, "requests");
    let mut unmatched = 0;
    for repo in repos {
        bar.set_message(format!("({split}: {repo}, capturing and indexing)"));
        let source = corpus.source(repo)?;
        let said = bar.clone();
        let tmp = crate::real::RepoDir::new(&|line| said.suspend(|| eprintln!("{line}")))?;
        let home = Paths::under(&tmp.path().join("cairn"));
        home.create_all()
            .context("cannot create the temporary home's folders")?;
        if let Some(model) = ranker {
            // Where the service looks for this machine's own model (and its figures).
            let to = home.ranker_model();
            if let Some(parent) = to.parent() {
                fs_err::create_dir_all(parent)?;
            }
            fs_err::copy(model, &to).with_context(|| format!("--ranker {}", model.display()))?;
            let figures = model.with_extension("json");
            if figures.is_file() {
                fs_err::copy(&figures, to.with_extension("json"))?;
            }
        }
        let service = Service::load(&ServiceOptions {
            paths: home.clone(),
            settings: settings.clone(),
            config_file: home.config_file(),
            host: ServiceHost::Direct,
            serve_http: false,
            ui_dir: None,
        })
        .await
        .map_err(|e| anyhow::anyhow!("cannot start a service for {repo}: {e}"))?;
        if let Some(cached) = &models.embedder {
            service
                .embed_with(cached.clone())
                .await
                .map_err(|e| anyhow::anyhow!("cannot use the embedding cache for {repo}: {e}"))?;
        }
        capture_repo(dir, source, service.store(), tmp.path(), &|line| {
            said.suspend(|| eprintln!("{line}"));
        })
        .await?;
        service
            .sync_index()
            .await
            .map_err(|e| anyhow::anyhow!("cannot index {repo}: {e}"))?;
        service
            .sync_dense()
            .await
            .map_err(|e| anyhow::anyhow!("cannot embed {repo}: {e}"))?;
        bar.set_message(format!("({split}: {repo})"));
        let records = all_records(service.store()).await?;
        let sessions = sessions_of(&records);
        for (i, label) in corpus.labels.get(repo).into_iter().flatten().enumerate() {
            bar.inc(1);
            let Some((asked, needed)) = resolve(&sessions, label) else {
                unmatched += 1;
                continue;
            };
            let at = asked.record.started_at;
            unmatched += label.needed.len() - needed.len();
            let needed: HashSet<String> = needed.into_iter().collect();
            if !label.needed.is_empty() && needed.is_empty() {
                continue;
            }
            let req = TurnNoteReq {
                framework: asked.record.framework.clone(),
                project: asked.record.project.clone(),
                session_id: Some(asked.record.session_id.clone()),
                turn_id: None,
                prompt: asked.record.request.clone(),
                context: Vec::new(),
                dry_run: true,
                at: Some(at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
            };
            let (note, candidates) = service
                .turn_note_whole(req)
                .await
                .map_err(|e| anyhow::anyhow!("the turn note failed in {repo}: {e}"))?;
            visit(&Asked {
                repo,
                group: format!("real:{repo}:{i}"),
                needed: &needed,
                note: &note,
                candidates: &candidates,
                request: &asked.record.request,
            });
        }
    }
    bar.finish_and_clear();
    models.say_cache();
    Ok(unmatched)
}

/// A note's (or search's top three's) figures over one split's requests.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Shown {
    /// Entries shown.
    pub entries: usize,
    /// Share of them that are needed.
    pub precision: f64,
    /// Share of the requests needing an earlier turn whose entries hold one.
    pub hit_rate: f64,
    /// The same, of the requests whose needed turn the retriever's top 10 holds.
    pub hit_rate_reachable: f64,
    /// Share of the requests needing nothing that are shown nothing.
    pub silence: f64,
    /// Share of all requests shown something.
    pub with_note: f64,
}

/// `cairn eval real --note`: one split's figures.
#[derive(Debug, Clone, Serialize)]
pub struct RealNoteFigures {
    /// `train` or `heldout`.
    pub split: String,
    /// Requests asked.
    pub requests: usize,
    /// Of those, needing an earlier turn (one of them captured before it).
    pub need: usize,
    /// Of those, whose needed turn is among the note's candidates at all.
    pub in_candidates: usize,
    /// Of those, whose needed turn is in the retriever's top 10.
    pub in_top10: usize,
    /// Labels that matched no record captured before their request, left out.
    pub unmatched: usize,
    /// The turn note as the service gives it.
    pub note: Shown,
    /// Search's first three candidates, shown with no ranker and no bar.
    pub search_top3: Shown,
}

#[derive(Default)]
struct Tally {
    entries: usize,
    right: usize,
    need: usize,
    hits: usize,
    reachable: usize,
    reachable_hits: usize,
    none: usize,
    silent: usize,
    requests: usize,
    with_note: usize,
}

impl Tally {
    fn add(&mut self, shown: &[&Candidate], needed: &HashSet<String>, reachable: bool) {
        self.requests += 1;
        self.entries += shown.len();
        let right = shown.iter().filter(|c| is_needed(c, needed)).count();
        self.right += right;
        self.with_note += usize::from(!shown.is_empty());
        if needed.is_empty() {
            self.none += 1;
            self.silent += usize::from(shown.is_empty());
        } else {
            self.need += 1;
            self.hits += usize::from(right > 0);
            if reachable {
                self.reachable += 1;
                self.reachable_hits += usize::from(right > 0);
            }
        }
    }

    fn figures(&self) -> Shown {
        let share = |a: usize, n: usize| if n == 0 { 0.0 } else { a as f64 / n as f64 };
        Shown {
            entries: self.entries,
            precision: share(self.right, self.entries),
            hit_rate: share(self.hits, self.need),
            hit_rate_reachable: share(self.reachable_hits, self.reachable),
            silence: share(self.silent, self.none),
            with_note: share(self.with_note, self.requests),
        }
    }
}

/// One request's line of `cairn eval real --note --rows`.
#[derive(Serialize)]
struct Row<'a> {
    split: &'a str,
    repo: &'a str,
    group: &'a str,
    request: &'a str,
    needed: Vec<&'a str>,
    candidates: Vec<RowCandidate<'a>>,
}

#[derive(Serialize)]
struct RowCandidate<'a> {
    id: &'a str,
    kind: &'a str,
    session: Option<&'a str>,
    at: Option<String>,
    needed: bool,
    shown: bool,
    probability: f32,
    /// The ranker's inputs by name (`null`: missing).
    features: serde_json::Map<String, serde_json::Value>,
    text: String,
}

fn row_of<'a>(split: &'a str, a: &'a Asked<'_>, request: &'a str) -> Row<'a> {
    Row {
        split,
        repo: a.repo,
        group: &a.group,
        request,
        // In a set's order, which differs run to run: sorted, so two runs' rows compare.
        needed: {
            let mut ids: Vec<&str> = a.needed.iter().map(String::as_str).collect();
            ids.sort_unstable();
            ids
        },
        candidates: a
            .candidates
            .iter()
            .map(|c| RowCandidate {
                id: &c.meta.id,
                kind: c.meta.kind.as_str(),
                session: c.meta.session.as_deref(),
                at: c.meta.at.map(|t| t.to_rfc3339()),
                needed: is_needed(c, a.needed),
                shown: c.shown,
                probability: c.probability,
                features: cairn_turn::note::FEATURES
                    .iter()
                    .zip(&c.features)
                    .map(|(n, v)| {
                        let v = serde_json::Number::from_f64(*v)
                            .map_or(serde_json::Value::Null, serde_json::Value::Number);
                        ((*n).to_owned(), v)
                    })
                    .collect(),
                text: cairn_text::chunk::cut(&c.meta.text, 300),
            })
            .collect(),
    }
}

/// Runs `cairn eval real --note` over the splits `split` names and prints the figures; with
/// `ranker`, the note uses that model file (and the figures beside it, for its bar) instead
/// of the shipped one; with `rows`, every request's candidates go to that file, one JSON
/// line each.
pub async fn run(
    paths: &Paths,
    settings: &Settings,
    dir: &Path,
    split: &str,
    ranker: Option<&Path>,
    rows: Option<&Path>,
    json: bool,
) -> anyhow::Result<Vec<RealNoteFigures>> {
    let mut out = Vec::new();
    let mut rows_out = match rows {
        Some(p) => Some(std::io::BufWriter::new(
            fs_err::File::create(p).with_context(|| format!("--rows {}", p.display()))?,
        )),
        None => None,
    };
    let mut failed: Option<std::io::Error> = None;
    for name in splits_named(split)? {
        let (mut note, mut top3) = (Tally::default(), Tally::default());
        let (mut in_candidates, mut in_top10) = (0, 0);
        let unmatched = each_request(paths, settings, dir, name, ranker, |a| {
            let reachable = a.candidates.iter().take(10).any(|c| is_needed(c, a.needed));
            if !a.needed.is_empty() {
                in_candidates += usize::from(a.candidates.iter().any(|c| is_needed(c, a.needed)));
                in_top10 += usize::from(reachable);
            }
            let shown: Vec<&Candidate> = a.candidates.iter().filter(|c| c.shown).collect();
            debug_assert_eq!(shown.len(), a.note.entries.len());
            note.add(&shown, a.needed, reachable);
            let first: Vec<&Candidate> = a.candidates.iter().take(3).collect();
            top3.add(&first, a.needed, reachable);
            if let Some(w) = rows_out.as_mut()
                && failed.is_none()
            {
                let request = a.request;
                let line =
                    serde_json::to_string(&row_of(name, a, request)).map_err(std::io::Error::other);
                if let Err(e) = line.and_then(|l| {
                    use std::io::Write;
                    writeln!(w, "{l}")
                }) {
                    failed = Some(e);
                }
            }
        })
        .await?;
        if let Some(e) = failed.take() {
            return Err(anyhow::Error::from(e).context("cannot write the --rows file"));
        }
        out.push(RealNoteFigures {
            split: name.to_owned(),
            requests: note.requests,
            need: note.need,
            in_candidates,
            in_top10,
            unmatched,
            note: note.figures(),
            search_top3: top3.figures(),
        });
    }
    if let Some(mut w) = rows_out {
        use std::io::Write;
        w.flush().context("cannot write the --rows file")?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for f in &out {
            println!(
                "{} split: {} requests asked, {} needing an earlier turn ({} of them among the \
                 note's candidates, {} in the retriever's top 10; {} labels unmatched, left out)",
                f.split, f.requests, f.need, f.in_candidates, f.in_top10, f.unmatched
            );
            println!(
                "{:<12} {:>8} {:>10} {:>9} {:>16} {:>8} {:>10}",
                "", "entries", "precision", "hit rate", "hit rate (top10)", "silence", "with note"
            );
            for (name, s) in [("turn note", &f.note), ("search top 3", &f.search_top3)] {
                println!(
                    "{:<12} {:>8} {:>10.3} {:>9.3} {:>16.3} {:>8.3} {:>10.3}",
                    name,
                    s.entries,
                    s.precision,
                    s.hit_rate,
                    s.hit_rate_reachable,
                    s.silence,
                    s.with_note
                );
            }
            println!();
        }
    }
    Ok(out)
}
