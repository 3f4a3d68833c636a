//! `cairn ranker train --from-store`: the turn note's ranker trained on this machine's own
//! use. Every turn note in the injection log whose inputs are today's
//! (`cairn_turn::note::FEATURES`) gives one example per shown entry that has a label: a
//! person's (`useful` / `not_useful`, which wins) or the automatic outcome (`used` /
//! `ignored`, `cairn_turn::outcomes`). A turn is a group; folds are dealt by project (the
//! request's repository) so a project is never split, or by session (then by turn) when
//! fewer than five projects are logged.
//!
//! The model is written only when it beats the shipped one on the same examples: a higher
//! cross-fitted AUC, and note precision at its chosen bar not lower than the shipped
//! model's at the shipped bar, both measured on the requests the personal bar was not chosen
//! on (all requests when that half is empty). The replay's requests are not used: the
//! replay keeps only the ids it showed and needed, not every candidate's features.
use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::Context as _;
use cairn_config::Paths;
use cairn_turn::ranker::{self, CrossFit, Example, Learned, NoteFigures, Requests, TrainOptions};
use serde::{Deserialize, Serialize};

/// The fewest labelled candidates a personal model is trained on.
pub const MIN_EXAMPLES: usize = 200;
/// The fewest needed (and the fewest not needed) candidates among them.
pub const MIN_NEEDED: usize = 20;
/// The fewest projects for folds by project.
const MIN_PROJECTS: usize = 5;

/// One shown entry of a logged turn with its label.
#[derive(Debug, Clone, PartialEq)]
pub struct Labelled {
    /// The turn.
    pub turn: String,
    /// Its session, if the hook named one.
    pub session: Option<String>,
    /// Its project (repository).
    pub project: Option<String>,
    /// The ranker's inputs (`NAN` = missing).
    pub features: Vec<f64>,
    /// Useful or used.
    pub needed: bool,
}

/// A model's figures on the examples: AUC, and its notes at its bar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFigures {
    /// The bar.
    pub bar: f64,
    /// ROC AUC over every example (the personal model's cross-fitted, out of fold).
    pub auc: f64,
    /// Requests the notes are measured on.
    pub requests: usize,
    /// Of the entries shown, the share needed.
    pub precision: f64,
    /// Of the requests needing an entry, the share whose note shows a needed one.
    pub hit_rate: f64,
    /// Of the requests needing none, the share with no note.
    pub silence: f64,
    /// Of all requests, the share with a note.
    pub with_note: f64,
}

impl ModelFigures {
    fn new(auc: f64, n: &NoteFigures) -> Self {
        Self {
            bar: n.bar,
            auc,
            requests: n.requests,
            precision: n.precision,
            hit_rate: n.hit_rate,
            silence: n.silence,
            with_note: n.with_note,
        }
    }
}

/// What `--from-store` did: the figures file's content, and whether the model was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoreTrained {
    /// Always `store`.
    pub source: String,
    /// When it was trained (RFC 3339).
    pub trained_at: String,
    /// The model file (written only when `written`).
    pub model: PathBuf,
    /// Whether the personal model beat the shipped one and was written.
    pub written: bool,
    /// Labelled candidates.
    pub examples: usize,
    /// Of them, needed.
    pub needed: usize,
    /// Turns (groups).
    pub turns: usize,
    /// What the folds are dealt by: `project`, `session` or `turn`.
    pub folds_by: String,
    /// The requests the two models are compared on: `report half` or `all`.
    pub compared_on: String,
    /// The personal model: cross-fitted AUC, notes at its chosen bar.
    pub personal: ModelFigures,
    /// The shipped model on the same examples at its own bar.
    pub shipped: ModelFigures,
    /// The personal model's cross-fit.
    pub cross_fit: CrossFit,
    /// What the personal model learned.
    pub learned: Learned,
}

/// Every shown entry of a logged turn with today's inputs that has a label or an outcome.
pub async fn collect(store: &cairn_store::Store) -> anyhow::Result<Vec<Labelled>> {
    let mut out = Vec::new();
    for inj in store.injections(u64::MAX, true).await? {
        if inj
            .feature_names
            .iter()
            .map(String::as_str)
            .ne(cairn_turn::note::FEATURES)
        {
            continue;
        }
        let labels = store.note_labels(&inj.turn).await?;
        let outcomes = store.note_outcomes(&inj.turn).await?;
        for e in inj.entries.iter().filter(|e| e.shown) {
            let needed = match labels.get(&e.id).map(String::as_str) {
                Some("useful") => Some(true),
                Some("not_useful") => Some(false),
                _ => match outcomes.get(&e.id).map(|o| o.outcome.as_str()) {
                    Some("used") => Some(true),
                    Some("ignored") => Some(false),
                    _ => None,
                },
            };
            let Some(needed) = needed else { continue };
            out.push(Labelled {
                turn: inj.turn.clone(),
                session: inj.session_id.clone(),
                project: inj.project.clone(),
                features: e
                    .features
                    .iter()
                    .map(|v| v.map_or(f64::NAN, f64::from))
                    .collect(),
                needed,
            });
        }
    }
    Ok(out)
}

/// The examples, grouped by turn, with fold keys by project (five or more projects), else
/// by session (five or more sessions), else by turn; and which it is.
pub fn examples(labelled: &[Labelled]) -> (Vec<Example>, &'static str) {
    let distinct = |f: &dyn Fn(&Labelled) -> Option<&String>| {
        labelled.iter().filter_map(f).collect::<BTreeSet<_>>().len()
    };
    let by: &'static str = if distinct(&|l| l.project.as_ref()) >= MIN_PROJECTS {
        "project"
    } else if distinct(&|l| l.session.as_ref()) >= MIN_PROJECTS {
        "session"
    } else {
        "turn"
    };
    let examples = labelled
        .iter()
        .map(|l| {
            let key = match by {
                "project" => l.project.as_ref().map(|p| format!("project:{p}")),
                "session" => l.session.as_ref().map(|s| format!("session:{s}")),
                _ => None,
            };
            Example {
                group: l.turn.clone(),
                fold: key.unwrap_or_else(|| format!("turn:{}", l.turn)),
                features: l.features.clone(),
                label: l.needed,
                weight: 1.0,
            }
        })
        .collect();
    (examples, by)
}

/// Refuses too few examples, naming the numbers.
pub fn check_enough(examples: &[Example]) -> anyhow::Result<()> {
    let needed = examples.iter().filter(|e| e.label).count();
    let not_needed = examples.len() - needed;
    if examples.len() < MIN_EXAMPLES || needed < MIN_NEEDED || not_needed < MIN_NEEDED {
        anyhow::bail!(
            "too few labelled turn-note entries to train a personal ranker: {} labelled candidates ({needed} needed, {not_needed} not needed); it takes at least {MIN_EXAMPLES}, with at least {MIN_NEEDED} needed and {MIN_NEEDED} not needed. Nothing was written; the shipped model stays in use.",
            examples.len()
        );
    }
    Ok(())
}

/// Runs `cairn ranker train --from-store`: collects, trains, compares with the shipped
/// model, writes the model and its figures (`<out>.json`) only when it beats it, prints.
pub async fn train_from_store(
    paths: &Paths,
    out: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<StoreTrained> {
    let db = paths.database();
    let labelled = if db.exists() {
        let store = cairn_store::Store::open(&db)
            .await
            .with_context(|| format!("cannot open the store at {}", db.display()))?;
        collect(&store).await?
    } else {
        Vec::new()
    };
    let (examples, folds_by) = examples(&labelled);
    check_enough(&examples)?;
    let out = out.unwrap_or_else(|| paths.ranker_model());
    let opts = TrainOptions {
        monotone: cairn_turn::note::MONOTONE.to_vec(),
        ..TrainOptions::default()
    };
    let trained = tokio::task::spawn_blocking(move || {
        let shipped = ranker::Ranker::shipped().map_err(|e| anyhow::anyhow!("{e}"))?;
        compare(&examples, folds_by, &opts, out, &shipped)
    })
    .await??;
    if json {
        println!("{}", serde_json::to_string(&trained)?);
    } else {
        print(&trained);
    }
    Ok(trained)
}

/// Trains on `examples`, scores them with the shipped model (`shipped`), and writes the
/// personal model and its figures to `out` when it beats it.
fn compare(
    examples: &[Example],
    folds_by: &str,
    opts: &TrainOptions,
    out: PathBuf,
    shipped: &ranker::Ranker,
) -> anyhow::Result<StoreTrained> {
    let (model, cross_fit) = ranker::train(examples, &cairn_turn::note::FEATURES, opts)
        .map_err(|e| anyhow::anyhow!("training failed: {e}"))?;
    let learned = ranker::learned(&model)
        .map_err(|e| anyhow::anyhow!("cannot read the trained model back: {e}"))?;
    let chosen = cross_fit
        .chosen
        .clone()
        .context("the training chose no bar")?;
    let rows: Vec<Vec<f64>> = examples.iter().map(|e| e.features.clone()).collect();
    let p = shipped
        .predict(&rows)
        .map_err(|e| anyhow::anyhow!("the shipped model cannot score the examples: {e}"))?;
    let shipped_bar = f64::from(shipped.bar());
    let report = chosen.report.requests > 0;
    let (personal_notes, shipped_notes, compared_on) = if report {
        (
            chosen.report.clone(),
            ranker::notes_of(examples, &p, shipped_bar, Requests::Report),
            "report half",
        )
    } else {
        let all = cross_fit
            .notes
            .iter()
            .find(|n| (n.bar - chosen.bar).abs() < 1e-9)
            .cloned()
            .unwrap_or_else(|| chosen.tune.clone());
        (
            all,
            ranker::notes_of(examples, &p, shipped_bar, Requests::All),
            "all",
        )
    };
    let personal = ModelFigures::new(cross_fit.auc, &personal_notes);
    let shipped = ModelFigures::new(ranker::auc_of(examples, &p), &shipped_notes);
    let written = personal.auc > shipped.auc && personal.precision >= shipped.precision;
    let trained = StoreTrained {
        source: "store".into(),
        trained_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        model: out.clone(),
        written,
        examples: examples.len(),
        needed: cross_fit.positives,
        turns: cross_fit.groups,
        folds_by: folds_by.into(),
        compared_on: compared_on.into(),
        personal,
        shipped,
        cross_fit,
        learned,
    };
    if written {
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs_err::create_dir_all(dir)?;
        }
        // The figures first: the service keys its cached model on the model file's time,
        // and reads the bar from the figures when it loads it.
        fs_err::write(
            out.with_extension("json"),
            serde_json::to_string_pretty(&trained)?,
        )?;
        fs_err::write(&out, &model)?;
    }
    Ok(trained)
}

fn print(t: &StoreTrained) {
    println!(
        "{} labelled candidates from {} turns of this machine's turn notes ({} needed); folds by {}{}",
        t.examples,
        t.turns,
        t.needed,
        t.folds_by,
        if t.folds_by == "project" {
            String::new()
        } else {
            format!(" (fewer than {MIN_PROJECTS} projects)")
        }
    );
    println!(
        "Compared on {} requests ({}):",
        t.personal.requests, t.compared_on
    );
    for (name, f) in [("personal", &t.personal), ("shipped", &t.shipped)] {
        println!(
            "  {name:<8} AUC {:.3}; at bar {:.2}: precision {:.3}, hit rate {:.3}, silence {:.3}, requests with a note {:.3}",
            f.auc, f.bar, f.precision, f.hit_rate, f.silence, f.with_note
        );
    }
    if t.written {
        println!(
            "The personal model beats the shipped one: written to {} (figures beside it); the turn note uses it from its next turn.",
            t.model.display()
        );
    } else {
        println!(
            "The personal model does not beat the shipped one (it needs a higher AUC and a note precision not lower): nothing was written; the shipped model stays in use."
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    fn labelled(turns: usize, projects: usize, sessions: usize) -> Vec<Labelled> {
        (0..turns)
            .flat_map(|t| {
                (0..3).map(move |c| Labelled {
                    turn: format!("t{t}"),
                    session: (sessions > 0).then(|| format!("s{}", t % sessions.max(1))),
                    project: (projects > 0).then(|| format!("p{}", t % projects.max(1))),
                    features: vec![0.0; 2],
                    needed: c == 0,
                })
            })
            .collect()
    }

    fn injection(turn: &str, names: &[&str], entries: &[(&str, bool)]) -> cairn_store::Injection {
        cairn_store::Injection {
            turn: turn.into(),
            at: chrono::Utc::now(),
            framework: "claude-code".into(),
            session_id: Some("s1".into()),
            project: Some("github.com/acme/billing".into()),
            prompt: "why does the pool run out".into(),
            shown: true,
            bar: 0.4,
            judged_by: Vec::new(),
            silent_because: None,
            latency_ms: 5,
            feature_names: names.iter().map(|s| (*s).to_owned()).collect(),
            entries: entries
                .iter()
                .map(|(id, shown)| cairn_store::InjectionCandidate {
                    id: (*id).into(),
                    kind: "record".into(),
                    item_kind: None,
                    title: String::new(),
                    probability: 0.6,
                    shown: *shown,
                    features: (0..names.len()).map(|i| Some(i as f32 / 10.0)).collect(),
                    text: Some(format!("{id} text")),
                })
                .collect(),
        }
    }

    #[tokio::test]
    async fn shown_entries_with_a_mark_or_an_outcome_are_examples_and_the_mark_wins() {
        let dir = tempfile::tempdir().unwrap();
        let store = cairn_store::Store::open(&dir.path().join("cairn.db"))
            .await
            .unwrap();
        let names = cairn_turn::note::FEATURES;
        let entries = [("r_a", true), ("r_b", true), ("r_c", true), ("r_d", false)];
        store
            .log_injection(&injection("t_1", &names, &entries))
            .await
            .unwrap();
        store
            .set_note_label("t_1", "r_a", Some("useful"))
            .await
            .unwrap();
        store
            .record_note_outcome("t_1", "r_a", "ignored", None)
            .await
            .unwrap();
        store
            .record_note_outcome("t_1", "r_b", "used", None)
            .await
            .unwrap();
        store
            .record_note_outcome("t_1", "r_c", "ignored", None)
            .await
            .unwrap();
        // A turn logged with other inputs is left out.
        store
            .log_injection(&injection("t_2", &["other"], &[("r_e", true)]))
            .await
            .unwrap();
        store
            .record_note_outcome("t_2", "r_e", "used", None)
            .await
            .unwrap();
        let got = collect(&store).await.unwrap();
        for l in &got {
            assert_eq!(l.turn, "t_1");
            assert_eq!(l.project.as_deref(), Some("github.com/acme/billing"));
            assert_eq!(l.features.len(), names.len());
            assert!((l.features[1] - 0.1).abs() < 1e-6, "{:?}", l.features);
        }
        // r_a: marked useful (its outcome, ignored, loses); r_b used; r_c ignored; r_d not shown.
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(
            got.iter().map(|l| l.needed).collect::<Vec<_>>(),
            vec![true, true, false]
        );
    }

    /// Examples over the turn note's inputs whose label follows the first two (or is noise),
    /// folds by project.
    fn separable(noise: bool) -> Vec<Example> {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut u = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let n = cairn_turn::note::FEATURES.len();
        (0..90)
            .flat_map(|g| (0..4).map(move |c| (g, c)))
            .map(|(g, _)| {
                let f: Vec<f64> = (0..n).map(|_| u()).collect();
                let label = if noise {
                    u() < 0.3
                } else {
                    f[0] + 0.5 * f[1] > 1.0
                };
                Example {
                    group: format!("t{g}"),
                    fold: format!("project:{}", g % 9),
                    features: f,
                    label,
                    weight: 1.0,
                }
            })
            .collect()
    }

    fn quick() -> TrainOptions {
        TrainOptions {
            trees: 30,
            ..TrainOptions::default()
        }
    }

    #[test]
    fn the_personal_model_is_written_only_when_it_beats_the_shipped_one() {
        let ex = separable(false);
        let names = cairn_turn::note::FEATURES;
        // A "shipped" model that learned nothing (trained on noise labels).
        let (weak, _) = ranker::train(&separable(true), &names, &quick()).unwrap();
        let weak = ranker::Ranker::from_text(&weak)
            .unwrap()
            .with_bar(Some(0.3));
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("ranker").join("model.txt");
        let t = compare(&ex, "project", &quick(), out.clone(), &weak).unwrap();
        assert!(t.written, "{:?} vs {:?}", t.personal, t.shipped);
        assert!(t.personal.auc > t.shipped.auc);
        assert_eq!(t.personal.requests, t.shipped.requests);
        assert_eq!(t.compared_on, "report half");
        assert_eq!(t.shipped.bar, f64::from(0.3_f32));
        let text = fs_err::read_to_string(&out).unwrap();
        let r = ranker::Ranker::from_text(&text).unwrap();
        assert_eq!(r.feature_names().len(), names.len());
        let figures = fs_err::read_to_string(out.with_extension("json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&figures).unwrap();
        assert_eq!(v["source"], "store");
        assert!(v["trained_at"].as_str().unwrap().starts_with("20"));
        assert!(v["shipped"]["auc"].is_number() && v["personal"]["auc"].is_number());
        let bar = ranker::bar_of_figures(&figures).unwrap();
        assert!((f64::from(bar) - t.cross_fit.chosen.as_ref().unwrap().bar).abs() < 1e-6);

        // A "shipped" model fitted on these very examples scores them in sample: the
        // personal model's cross-fitted AUC cannot beat it, and nothing is written.
        let (strong, _) = ranker::train(&ex, &names, &quick()).unwrap();
        let strong = ranker::Ranker::from_text(&strong).unwrap();
        let out2 = dir.path().join("other").join("model.txt");
        let t = compare(&ex, "project", &quick(), out2.clone(), &strong).unwrap();
        assert!(!t.written, "{:?} vs {:?}", t.personal, t.shipped);
        assert!(!out2.exists() && !out2.with_extension("json").exists());
    }

    #[test]
    fn folds_are_by_project_then_session_then_turn() {
        let (ex, by) = examples(&labelled(30, 6, 10));
        assert_eq!(by, "project");
        assert!(ex.iter().all(|e| e.fold.starts_with("project:")));
        assert_eq!(examples(&labelled(30, 3, 10)).1, "session");
        let (ex, by) = examples(&labelled(30, 3, 2));
        assert_eq!(by, "turn");
        assert_eq!(ex[0].fold, "turn:t0");
        assert_eq!(ex[0].group, "t0");
    }

    #[test]
    fn too_few_examples_are_refused_with_the_numbers() {
        let (ex, _) = examples(&labelled(30, 6, 10));
        let err = check_enough(&ex).unwrap_err().to_string();
        assert!(
            err.contains("90 labelled candidates (30 needed, 60 not needed)"),
            "{err}"
        );
        let (ex, _) = examples(&labelled(80, 6, 10));
        check_enough(&ex).unwrap();
    }
}
