//! A personal ranker: the turn note's ranker trained on this machine's own use. Every turn
//! note in the injection log whose inputs are today's ([`crate::note::FEATURES`]) gives one
//! example per shown entry that has a label: a person's (`useful` / `not_useful`, which
//! wins) or the automatic outcome (`used` / `ignored`, [`crate::outcomes`]). A turn is a
//! group; folds are dealt by project (the request's repository) so a project is never
//! split, or by session (then by turn) when fewer than five projects are logged.
//!
//! The model is written only when it beats the shipped one on the same examples: a higher
//! cross-fitted AUC, and note precision at its chosen bar not lower than the shipped
//! model's at the shipped bar, both measured on the requests the personal bar was not chosen
//! on (all requests when that half is empty). The replay's requests are not used: the
//! replay keeps only the ids it showed and needed, not every candidate's features.
//!
//! Two callers: `cairn ranker train --from-store` ([`train`]), and sleep each night
//! ([`nightly`]) once enough entries are labelled and enough are new since the last
//! training. Going back to the shipped model (`ranker_reset`, which calls [`turn_off`]) turns the nightly
//! training off until the person trains one by hand; every training, by hand or at night,
//! is written down beside the model ([`NightlyState`]) and Settings shows it.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cairn_core::ErrorCode;
use serde::{Deserialize, Serialize};

use crate::ranker::{self, CrossFit, Example, Learned, NoteFigures, Requests, TrainOptions};
use crate::{Error, Result};

/// The fewest labelled candidates a personal model is trained on.
pub const MIN_EXAMPLES: usize = 200;
/// The fewest needed (and the fewest not needed) candidates among them.
pub const MIN_NEEDED: usize = 20;
/// The fewest projects for folds by project.
pub const MIN_PROJECTS: usize = 5;

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
pub async fn collect(store: &cairn_store::Store) -> Result<Vec<Labelled>> {
    let mut out = Vec::new();
    for inj in store.injections(u64::MAX, true).await? {
        if inj
            .feature_names
            .iter()
            .map(String::as_str)
            .ne(crate::note::FEATURES)
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
                // The log keeps the inputs a showing had, not what earlier showings did to
                // its probability, so the comparison with the shipped model scores both
                // without the rule.
                after: 1.0,
            }
        })
        .collect();
    (examples, by)
}

/// Refuses too few examples, naming the numbers.
pub fn check_enough(examples: &[Example]) -> Result<()> {
    let needed = examples.iter().filter(|e| e.label).count();
    let not_needed = examples.len() - needed;
    if examples.len() < MIN_EXAMPLES || needed < MIN_NEEDED || not_needed < MIN_NEEDED {
        return Err(Error::Failed(
            ErrorCode::Conflict,
            format!(
                "too few labelled turn-note entries to train a personal ranker: {} labelled candidates ({needed} needed, {not_needed} not needed); it takes at least {MIN_EXAMPLES}, with at least {MIN_NEEDED} needed and {MIN_NEEDED} not needed. Nothing was written; the shipped model stays in use.",
                examples.len()
            ),
        ));
    }
    Ok(())
}

/// An I/O failure writing the personal model or its state, as the turn note's error.
fn io(e: std::io::Error) -> Error {
    Error::internal(format!("cannot write the personal ranker: {e}"))
}

/// How many labelled entries must be new since the last training before sleep trains
/// again: this many, or a tenth of the last training's, whichever is more.
pub const NIGHTLY_NEW: usize = 50;

/// Who trained: a person (`cairn ranker train --from-store`) or sleep.
pub const BY_HAND: &str = "hand";
/// See [`BY_HAND`].
pub const BY_SLEEP: &str = "sleep";

/// One training of a personal model (or a try with too few labels), as written down beside
/// the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// When (RFC 3339).
    pub at: String,
    /// [`BY_HAND`] or [`BY_SLEEP`].
    pub by: String,
    /// Labelled entries it found.
    pub examples: usize,
    /// Of them, needed.
    pub needed: usize,
    /// Whether a model was trained (false: too few labels).
    pub trained: bool,
    /// Whether the model beat the shipped one and was written.
    pub written: bool,
    /// What came of it, in a sentence.
    pub summary: String,
}

/// The nightly training's state (`nightly.json` beside the personal model).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NightlyState {
    /// Set when the person went back to the shipped model (RFC 3339): sleep trains no
    /// personal model until the person trains one by hand.
    #[serde(default)]
    pub off_since: Option<String>,
    /// The latest training or try.
    #[serde(default)]
    pub last: Option<Attempt>,
}

/// The state file beside the personal model at `model`.
pub fn state_path(model: &Path) -> PathBuf {
    model.with_file_name("nightly.json")
}

/// The nightly state beside `model` (the default when there is none or it cannot be read:
/// a damaged file turns nothing off).
pub fn state(model: &Path) -> NightlyState {
    match fs_err::read_to_string(state_path(model)) {
        Ok(t) => serde_json::from_str(&t).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the personal ranker's nightly state is damaged; starting afresh");
            NightlyState::default()
        }),
        Err(_) => NightlyState::default(),
    }
}

/// Writes the nightly state beside `model` (through a temporary file, so a crash leaves the
/// old one or the new one).
pub fn write_state(model: &Path, state: &NightlyState) -> Result<()> {
    let path = state_path(model);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs_err::create_dir_all(dir).map_err(io)?;
    }
    let text = serde_json::to_string_pretty(state)
        .map_err(|e| Error::internal(format!("cannot write the nightly state: {e}")))?;
    let tmp = path.with_extension("json.tmp");
    fs_err::write(&tmp, text).map_err(io)?;
    fs_err::rename(&tmp, &path).map_err(io)?;
    Ok(())
}

/// The person went back to the shipped model: sleep stops training one.
pub fn turn_off(model: &Path) -> Result<()> {
    let mut s = state(model);
    if s.off_since.is_none() {
        s.off_since = Some(now_text());
        write_state(model, &s)?;
    }
    Ok(())
}

fn now_text() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// What a training came to, in a sentence.
fn summary_of(t: &StoreTrained) -> String {
    let figures = format!(
        "AUC {:.3} against the shipped model's {:.3}, note precision {:.3} against {:.3}",
        t.personal.auc, t.shipped.auc, t.personal.precision, t.shipped.precision
    );
    if t.written {
        format!("it beat the shipped model ({figures}) and is in use")
    } else {
        format!("it did not beat the shipped model ({figures}); nothing was written")
    }
}

/// Trains a personal model on the labelled entries in `store`, written to `model` when it
/// beats the shipped one, and writes the training down beside it (by `by`). A training by
/// hand turns the nightly training back on. Too few labels: the error names the numbers,
/// and a nightly try is written down.
pub async fn train(store: &cairn_store::Store, model: &Path, by: &str) -> Result<StoreTrained> {
    let labelled = collect(store).await?;
    let (examples, folds_by) = examples(&labelled);
    let needed = examples.iter().filter(|e| e.label).count();
    let mut st = state(model);
    if by == BY_HAND {
        st.off_since = None;
    }
    if let Err(e) = check_enough(&examples) {
        st.last = Some(Attempt {
            at: now_text(),
            by: by.into(),
            examples: examples.len(),
            needed,
            trained: false,
            written: false,
            summary: format!(
                "{} labelled entries ({needed} needed); training starts at {MIN_EXAMPLES}, with {MIN_NEEDED} needed and {MIN_NEEDED} not",
                examples.len()
            ),
        });
        write_state(model, &st)?;
        return Err(e);
    }
    let opts = TrainOptions {
        monotone: crate::note::MONOTONE.to_vec(),
        ..TrainOptions::default()
    };
    let out = model.to_path_buf();
    let trained = tokio::task::spawn_blocking(move || {
        let shipped = ranker::Ranker::shipped().map_err(|e| Error::internal(e.to_string()))?;
        compare(&examples, folds_by, &opts, out, &shipped)
    })
    .await
    .map_err(|e| Error::internal(format!("the training stopped: {e}")))??;
    st.last = Some(Attempt {
        at: trained.trained_at.clone(),
        by: by.into(),
        examples: trained.examples,
        needed: trained.needed,
        trained: true,
        written: trained.written,
        summary: summary_of(&trained),
    });
    write_state(model, &st)?;
    Ok(trained)
}

/// What sleep's nightly training did.
#[derive(Debug, Clone, PartialEq)]
pub enum Nightly {
    /// The person went back to the shipped model; nothing trained.
    Off,
    /// Too few labelled entries (how many): the try is written down.
    TooFew(usize),
    /// Fewer than [`NIGHTLY_NEW`] new labelled entries since the last training (how many
    /// there are now).
    NothingNew(usize),
    /// Trained (written or not, as it says).
    Trained(Box<StoreTrained>),
}

impl Nightly {
    /// What it did, in a sentence for the worker's detail and the log.
    pub fn describe(&self) -> String {
        match self {
            Self::Off => "personal ranker: off (the shipped model was chosen)".into(),
            Self::TooFew(n) => {
                format!("personal ranker: {n} labelled entries, too few to train")
            }
            Self::NothingNew(n) => {
                format!(
                    "personal ranker: {n} labelled entries, too few new since the last training"
                )
            }
            Self::Trained(t) if t.written => "personal ranker: trained, and in use".into(),
            Self::Trained(_) => "personal ranker: trained, did not beat the shipped model".into(),
        }
    }
}

/// Sleep's nightly training: trains a personal model ([`train`], by [`BY_SLEEP`]) unless
/// the person went back to the shipped model, or too few labelled entries are new since the
/// last training (the more of [`NIGHTLY_NEW`] and a tenth of the last one's).
pub async fn nightly(store: &cairn_store::Store, model: &Path) -> Result<Nightly> {
    let st = state(model);
    if st.off_since.is_some() {
        return Ok(Nightly::Off);
    }
    if let Some(last) = st.last.as_ref().filter(|l| l.trained) {
        let labelled = collect(store).await?;
        if labelled.len() < last.examples + NIGHTLY_NEW.max(last.examples / 10) {
            return Ok(Nightly::NothingNew(labelled.len()));
        }
    }
    match train(store, model, BY_SLEEP).await {
        Ok(t) => Ok(Nightly::Trained(Box::new(t))),
        Err(Error::Failed(ErrorCode::Conflict, _)) => {
            Ok(Nightly::TooFew(state(model).last.map_or(0, |l| l.examples)))
        }
        Err(e) => Err(e),
    }
}

/// The nightly training as Settings shows it: off, waiting for labels, or the latest
/// training and what came of it.
pub fn nightly_line(model: &Path) -> String {
    let st = state(model);
    let day = |t: &str| t.get(..10).unwrap_or(t).to_owned();
    if let Some(off) = st.off_since.as_deref() {
        return format!(
            "Nightly training is off since {}, when the shipped model was chosen; `cairn ranker train --from-store` trains one now and turns it back on.",
            day(off)
        );
    }
    let rule = format!(
        "Sleep trains a personal model each night once {MIN_EXAMPLES} turn-note entries are labelled (at least {MIN_NEEDED} needed and {MIN_NEEDED} not), and again when {NIGHTLY_NEW} more are; it is kept only when it beats the shipped one."
    );
    match st.last {
        None => rule,
        Some(l) if !l.trained => format!("{rule} On {}: {}.", day(&l.at), l.summary),
        Some(l) => format!(
            "{rule} Last trained on {} ({}) on {} labelled entries: {}.",
            day(&l.at),
            if l.by == BY_SLEEP {
                "in sleep"
            } else {
                "by hand"
            },
            l.examples,
            l.summary
        ),
    }
}

/// Trains on `examples`, scores them with the shipped model (`shipped`), and writes the
/// personal model and its figures to `out` when it beats it.
pub fn compare(
    examples: &[Example],
    folds_by: &str,
    opts: &TrainOptions,
    out: PathBuf,
    shipped: &ranker::Ranker,
) -> Result<StoreTrained> {
    let (model, cross_fit) = ranker::train(examples, &crate::note::FEATURES, opts)
        .map_err(|e| Error::internal(format!("training failed: {e}")))?;
    let learned = ranker::learned(&model)
        .map_err(|e| Error::internal(format!("cannot read the trained model back: {e}")))?;
    let chosen = cross_fit
        .chosen
        .clone()
        .ok_or_else(|| Error::internal("the training chose no bar"))?;
    let rows: Vec<Vec<f64>> = examples.iter().map(|e| e.features.clone()).collect();
    let p = shipped.predict(&rows).map_err(|e| {
        Error::internal(format!("the shipped model cannot score the examples: {e}"))
    })?;
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
            fs_err::create_dir_all(dir).map_err(io)?;
        }
        // The figures first: the service keys its cached model on the model file's time,
        // and reads the bar from the figures when it loads it.
        let figures = serde_json::to_string_pretty(&trained)
            .map_err(|e| Error::internal(format!("cannot write the figures: {e}")))?;
        fs_err::write(out.with_extension("json"), figures).map_err(io)?;
        fs_err::write(&out, &model).map_err(io)?;
    }
    Ok(trained)
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
        let names = crate::note::FEATURES;
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
        let n = crate::note::FEATURES.len();
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
                    after: 1.0,
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
        let names = crate::note::FEATURES;
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

    /// Logs `turns` turns of three shown entries each under today's inputs, in five
    /// projects, with an outcome on each: the first input says which was used.
    async fn log_labelled(store: &cairn_store::Store, from: usize, turns: usize) {
        let names = crate::note::FEATURES;
        for t in from..from + turns {
            let turn = format!("t_{t}");
            let mut inj = injection(
                &turn,
                &names,
                &[("r_a", true), ("r_b", true), ("r_c", true)],
            );
            inj.project = Some(format!("github.com/acme/p{}", t % 5));
            inj.session_id = Some(format!("s{t}"));
            for (c, e) in inj.entries.iter_mut().enumerate() {
                let used = (t + c) % 3 == 0;
                e.features = (0..names.len())
                    .map(|i| {
                        Some(if i == 0 {
                            f32::from(u8::from(used))
                        } else {
                            ((t * 7 + c * 3 + i) % 11) as f32 / 10.0
                        })
                    })
                    .collect();
            }
            store.log_injection(&inj).await.unwrap();
            for (c, id) in ["r_a", "r_b", "r_c"].iter().enumerate() {
                let outcome = if (t + c) % 3 == 0 { "used" } else { "ignored" };
                store
                    .record_note_outcome(&turn, id, outcome, None)
                    .await
                    .unwrap();
            }
        }
    }

    #[tokio::test]
    async fn sleep_trains_once_enough_is_labelled_again_only_when_enough_is_new_and_never_after_going_back()
     {
        let dir = tempfile::tempdir().unwrap();
        let store = cairn_store::Store::open(&dir.path().join("cairn.db"))
            .await
            .unwrap();
        let model = dir.path().join("ranker").join("model.txt");
        assert!(
            nightly_line(&model).starts_with("Sleep trains a personal model each night once 200")
        );

        // Too few: a try is written down with the numbers, no model.
        log_labelled(&store, 0, 20).await;
        assert_eq!(nightly(&store, &model).await.unwrap(), Nightly::TooFew(60));
        assert!(!model.exists());
        let last = state(&model).last.unwrap();
        assert!(
            !last.trained && last.by == BY_SLEEP && last.examples == 60,
            "{last:?}"
        );
        assert!(
            nightly_line(&model).contains("60 labelled entries (20 needed)"),
            "{}",
            nightly_line(&model)
        );

        // Enough: trained, and written down whether or not it beat the shipped model.
        log_labelled(&store, 20, 60).await;
        let Nightly::Trained(t) = nightly(&store, &model).await.unwrap() else {
            panic!("not trained")
        };
        assert_eq!(t.examples, 240);
        assert_eq!(t.folds_by, "project");
        assert_eq!(model.exists(), t.written);
        let last = state(&model).last.unwrap();
        assert!(
            last.trained && last.examples == 240 && last.written == t.written,
            "{last:?}"
        );
        assert!(
            nightly_line(&model).contains("Last trained on 20"),
            "{}",
            nightly_line(&model)
        );
        assert!(nightly_line(&model).contains("(in sleep) on 240 labelled entries"));

        // Fewer than 50 new: not again.
        log_labelled(&store, 80, 10).await;
        assert_eq!(
            nightly(&store, &model).await.unwrap(),
            Nightly::NothingNew(270)
        );
        // 50 new: again.
        log_labelled(&store, 90, 7).await;
        assert!(
            matches!(nightly(&store, &model).await.unwrap(), Nightly::Trained(t) if t.examples == 291)
        );

        // Going back to the shipped model (`ranker_reset` removes the model and turns the
        // nightly training off) holds even with more new.
        turn_off(&model).unwrap();
        log_labelled(&store, 97, 40).await;
        assert_eq!(nightly(&store, &model).await.unwrap(), Nightly::Off);
        assert!(nightly_line(&model).starts_with("Nightly training is off since 20"));

        // Training by hand turns it back on.
        let t = train(&store, &model, BY_HAND).await.unwrap();
        assert_eq!(t.examples, 411);
        let st = state(&model);
        assert!(st.off_since.is_none() && st.last.unwrap().by == BY_HAND);
        assert_eq!(
            nightly(&store, &model).await.unwrap(),
            Nightly::NothingNew(411)
        );
    }

    #[test]
    fn a_damaged_state_file_turns_nothing_off() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("model.txt");
        fs_err::write(state_path(&model), "{not json").unwrap();
        assert_eq!(state(&model), NightlyState::default());
        turn_off(&model).unwrap();
        assert!(state(&model).off_since.is_some());
    }
}
