//! The turn note's learned ranker: gradient-boosted trees (LightGBM, through the `lightgbm3`
//! crate) that turn one candidate's feature vector (its similarities, the judges' scores and
//! its metadata) into the probability that the request needs it.
//!
//! - [`train`] fits a binary model on labelled [`Example`]s and reports [`CrossFit`] figures:
//!   k-fold by the caller's fold key ([`Example::fold`]: what repeats across requests, such
//!   as the template a request was made from or its repository; requests sharing a key always
//!   share a fold, and a request and its candidates are never split), every example scored
//!   by the model that did not see its key; then the final model is fitted on all examples
//!   and returned as LightGBM's model text.
//! - [`Ranker`] loads such a text ([`Ranker::from_text`], or the committed
//!   `ranker/model.txt` with [`Ranker::shipped`]) and scores rows of features.
//!
//! A missing signal is `f64::NAN`: LightGBM routes it down each split's learned default
//! branch. Training is deterministic (one thread, fixed seeds, `deterministic=true`), so
//! the same examples and options give the same model text.
//!
//! LightGBM's booster is a C++ object behind a raw pointer, not `Send`; a [`Ranker`] keeps
//! its booster on a thread of its own and talks to it over channels, so the ranker is
//! `Send + Sync` without unsafe code.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc;
use std::thread;

use lightgbm3::{Booster, Dataset};
use serde::{Deserialize, Serialize};

/// The model committed with the crate (`ranker/model.txt`; `cairn ranker train` writes it).
const SHIPPED: &str = include_str!("../ranker/model.txt");

/// The figures `cairn ranker train` wrote beside the shipped model (its bar among them).
const SHIPPED_FIGURES: &str = include_str!("../ranker/model.json");

/// The bars [`CrossFit::at_bars`] reports, in this order.
pub const BARS: [f64; 3] = [0.3, 0.4, 0.5];

/// The bar under which a group's best candidate counts as silence
/// ([`CrossFit::silence_when_not_needed`]).
pub const SILENCE_BAR: f64 = 0.4;

/// The bars [`CrossFit::notes`] reports and the choice of a model's bar tries, lowest first.
pub const NOTE_BARS: [f64; 15] = [
    0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90,
];

/// The share of requests needing nothing on which a note must stay silent when no bar
/// reaches the target precision ([`Chosen::rule`]).
pub const SILENCE_TARGET: f64 = 0.90;

/// The most entries a note shows (as `note::MAX_ENTRIES`).
const NOTE_ENTRIES: usize = 3;

/// A ranker failure; each names what went wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// LightGBM refused something; the text says what was being done and LightGBM's message.
    #[error("LightGBM failed while {doing}: {message}")]
    Lightgbm {
        /// What the ranker was doing.
        doing: &'static str,
        /// LightGBM's own message.
        message: String,
    },
    /// A row does not have as many features as the model.
    #[error("row {row} has {got} features, the ranker model expects {expected}")]
    FeatureCount {
        /// Which row (0-based).
        row: usize,
        /// Its length.
        got: usize,
        /// The model's feature count.
        expected: usize,
    },
    /// The training input or the options cannot give a model.
    #[error("cannot train the ranker: {0}")]
    Input(String),
    /// The model text is not a LightGBM model.
    #[error("the ranker model text is not a LightGBM model: {0}")]
    Model(String),
    /// The ranker's booster thread is gone (it could not start, or it stopped).
    #[error("the ranker's booster thread is not running")]
    Stopped,
}

fn lgbm(doing: &'static str) -> impl FnOnce(lightgbm3::Error) -> Error {
    move |e| Error::Lightgbm {
        doing,
        message: e.to_string(),
    }
}

/// One labelled candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// The group it belongs to: one request and all its candidates (folds never split one).
    pub group: String,
    /// What the cross-fit deals into folds: examples with one key always share a fold (the
    /// template the request was made from, its repository). Empty: its group. Every
    /// example of a group must have the same key.
    #[serde(default)]
    pub fold: String,
    /// Its feature vector, in the order of the names given to [`train`]; `NAN` = missing.
    pub features: Vec<f64>,
    /// Whether the request needs this candidate.
    pub label: bool,
    /// How much it counts in fitting (1: as any other; a real request among many made ones
    /// can count for more). The figures count every example once.
    #[serde(default = "one")]
    pub weight: f32,
    /// What the note does to the model's probability after it, as a factor
    /// ([`crate::note::discounted`]: earlier showings a person marked not useful or whose
    /// answer ignored it, beyond the used ones). It is not an input and does not change the
    /// fit; the cross-fitted figures score the probability times it, as the note would.
    #[serde(default = "one")]
    pub after: f32,
}

fn one() -> f32 {
    1.0
}

/// How [`train`] fits the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainOptions {
    /// Boosting rounds (one tree each).
    pub trees: usize,
    /// Shrinkage of each tree.
    pub learning_rate: f64,
    /// Most leaves per tree.
    pub num_leaves: usize,
    /// Fewest examples in a leaf.
    pub min_data_in_leaf: usize,
    /// Seed of LightGBM and of the fold assignment.
    pub seed: u64,
    /// Folds of the cross-fit (at least 2).
    pub folds: usize,
    /// Per feature, in order: `1` the probability may only rise with it, `-1` only fall,
    /// `0` free. Empty: every feature free. (A ranker trained on one set must not learn
    /// that being more similar makes a candidate less needed.)
    pub monotone: Vec<i8>,
    /// The note precision the model's bar is chosen for ([`Chosen`]): the lowest of
    /// [`NOTE_BARS`] at which the notes of the tuning half of the fold keys reach it.
    pub target_precision: f64,
}

impl Default for TrainOptions {
    fn default() -> Self {
        Self {
            trees: 150,
            learning_rate: 0.05,
            num_leaves: 15,
            min_data_in_leaf: 20,
            seed: 7,
            folds: 5,
            monotone: Vec::new(),
            target_precision: 0.75,
        }
    }
}

/// Precision, recall and how often something is shown, at one bar on the probability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BarFigures {
    /// The bar: a candidate is shown when its probability is at least this.
    pub bar: f64,
    /// Of the candidates shown, the share that is needed (1 when none is shown).
    pub precision: f64,
    /// Of the needed candidates, the share shown.
    pub recall: f64,
    /// Of the groups, the share with at least one candidate shown.
    pub shown_groups: f64,
}

/// What the turn note would have done at one bar, over out-of-fold probabilities: each
/// request shows at most three candidates at or above the bar, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoteFigures {
    /// The bar.
    pub bar: f64,
    /// Requests measured.
    pub requests: usize,
    /// Of the entries shown, the share that is needed (1 when none is shown).
    pub precision: f64,
    /// Of the requests that need a candidate, the share whose note shows a needed one.
    pub hit_rate: f64,
    /// Of the requests that need none, the share with no note.
    pub silence: f64,
    /// Of all requests, the share with a note.
    pub with_note: f64,
}

/// How a model's bar was chosen, and what it gives where it was not chosen. The requests are
/// split in two: the real histories' and the rest when the training holds real ones, else
/// two halves of the fold keys (by a hash of the key). The bar is the lowest of
/// [`NOTE_BARS`] whose notes on the tuning part (at least [`MIN_NOTES`] of them) reach
/// [`TrainOptions::target_precision`] (else by [`Chosen::rule`]), and the report part's figures at that bar were not looked at
/// to choose it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chosen {
    /// What chose it: `real` (the real histories' requests, out of fold, when the training
    /// holds any; the report is then every other request) or `halves` (the tuning half of
    /// the fold keys; the report is the other half).
    #[serde(default)]
    pub on: String,
    /// The bar the model ships with.
    pub bar: f64,
    /// The precision it was chosen for.
    pub target_precision: f64,
    /// Whether the tuning half reached the target at some bar.
    pub reached: bool,
    /// What chose the bar: `precision` (the lowest reaching the target), `silence` (none
    /// did: the lowest silent on [`SILENCE_TARGET`] of the requests needing nothing) or
    /// `highest` (neither).
    #[serde(default)]
    pub rule: String,
    /// Fold keys in the tuning half.
    pub tune_keys: usize,
    /// Fold keys in the report half.
    pub report_keys: usize,
    /// The tuning half's notes at the bar.
    pub tune: NoteFigures,
    /// The report half's notes at the bar.
    pub report: NoteFigures,
}

/// Out-of-fold figures of a [`train`]ing: every example scored by a model fitted without
/// its group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossFit {
    /// Folds.
    pub folds: usize,
    /// Examples (candidates).
    pub examples: usize,
    /// Groups (requests).
    pub groups: usize,
    /// Fold keys ([`Example::fold`]): the units dealt into folds.
    pub fold_keys: usize,
    /// Examples labelled needed.
    pub positives: usize,
    /// Area under the ROC curve over all examples (ties count half).
    pub auc: f64,
    /// Mean binary log loss (probabilities clipped to [1e-15, 1 - 1e-15]).
    pub logloss: f64,
    /// Figures at each of [`BARS`].
    pub at_bars: Vec<BarFigures>,
    /// Of the groups with a needed candidate, the share whose top-scored candidate is needed.
    pub top1_when_needed: f64,
    /// Of the groups with no needed candidate, the share whose best probability is under
    /// [`SILENCE_BAR`].
    pub silence_when_not_needed: f64,
    /// The notes at each of [`NOTE_BARS`], over all requests.
    #[serde(default)]
    pub notes: Vec<NoteFigures>,
    /// The model's bar and its figures on fold keys it was not chosen on.
    #[serde(default)]
    pub chosen: Option<Chosen>,
}

/// Fits the ranker: the cross-fit first (k folds by group, out-of-fold predictions scored),
/// then the final model on all examples. Returns LightGBM's model text (feature names
/// `names`) and the cross-fit figures. The final model is reloaded from its text and must
/// predict exactly what the trained booster predicts, or this fails.
pub fn train(
    examples: &[Example],
    names: &[&str],
    opts: &TrainOptions,
) -> Result<(String, CrossFit), Error> {
    check_input(examples, names, opts)?;
    let fold_of = assign_folds(examples, opts.folds, opts.seed);
    let mut oof = vec![f64::NAN; examples.len()];
    for fold in 0..opts.folds {
        let (fit, held): (Vec<usize>, Vec<usize>) =
            (0..examples.len()).partition(|&i| fold_of[i] != fold);
        let fit_labels: BTreeSet<bool> = fit.iter().map(|&i| examples[i].label).collect();
        if fit_labels.len() < 2 {
            return Err(Error::Input(format!(
                "fold {fold}: the other folds' examples are all {}; add examples of both labels",
                if fit_labels.contains(&true) {
                    "needed"
                } else {
                    "not needed"
                }
            )));
        }
        let booster = fit_booster(examples, &fit, names, opts)?;
        let rows: Vec<f64> = held
            .iter()
            .flat_map(|&i| examples[i].features.iter().copied())
            .collect();
        let p = booster
            .predict(&rows, names.len() as i32, true)
            .map_err(lgbm("predicting a held-out fold"))?;
        for (&i, p) in held.iter().zip(p) {
            oof[i] = p * f64::from(examples[i].after);
        }
    }
    let all: Vec<usize> = (0..examples.len()).collect();
    let booster = fit_booster(examples, &all, names, opts)?;
    let text = booster
        .save_string()
        .map_err(lgbm("writing the model text"))?;
    let rows: Vec<Vec<f64>> = examples.iter().map(|e| e.features.clone()).collect();
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    let trained = booster
        .predict(&flat, names.len() as i32, true)
        .map_err(lgbm("predicting with the trained model"))?;
    let reloaded = Ranker::from_text(&text)?.predict(&rows)?;
    if let Some(i) = (0..trained.len()).find(|&i| trained[i].to_bits() != reloaded[i].to_bits()) {
        return Err(Error::Model(format!(
            "the model reloaded from its text predicts {} for example {i}, the trained one {}",
            reloaded[i], trained[i]
        )));
    }
    Ok((text, cross_fit(examples, &oof, opts)))
}

fn check_input(examples: &[Example], names: &[&str], opts: &TrainOptions) -> Result<(), Error> {
    if names.is_empty() {
        return Err(Error::Input("no feature names".into()));
    }
    if let Some(bad) = names.iter().find(|n| {
        n.is_empty() || n.len() > 63 || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    }) {
        return Err(Error::Input(format!(
            "feature name {bad:?}: use 1 to 63 ASCII letters, digits and underscores"
        )));
    }
    if !opts.monotone.is_empty()
        && (opts.monotone.len() != names.len() || opts.monotone.iter().any(|m| m.abs() > 1))
    {
        return Err(Error::Input(format!(
            "{} monotone constraints for {} features: give one per feature, each -1, 0 or 1",
            opts.monotone.len(),
            names.len()
        )));
    }
    if opts.folds < 2 {
        return Err(Error::Input(format!(
            "{} folds: the cross-fit needs at least 2",
            opts.folds
        )));
    }
    if opts.trees == 0 || opts.num_leaves < 2 || opts.min_data_in_leaf == 0 {
        return Err(Error::Input(format!(
            "trees {}, num_leaves {}, min_data_in_leaf {}: need at least 1 tree, 2 leaves and 1 example per leaf",
            opts.trees, opts.num_leaves, opts.min_data_in_leaf
        )));
    }
    if !(opts.learning_rate > 0.0 && opts.learning_rate.is_finite()) {
        return Err(Error::Input(format!(
            "learning rate {}: must be positive",
            opts.learning_rate
        )));
    }
    if let Some((row, e)) = examples
        .iter()
        .enumerate()
        .find(|(_, e)| e.features.len() != names.len())
    {
        return Err(Error::FeatureCount {
            row,
            got: e.features.len(),
            expected: names.len(),
        });
    }
    let mut key_of: BTreeMap<&str, &str> = BTreeMap::new();
    for e in examples {
        let key = *key_of.entry(e.group.as_str()).or_insert(fold_key(e));
        if key != fold_key(e) {
            return Err(Error::Input(format!(
                "group {:?} has examples with fold keys {key:?} and {:?}: a group has one key",
                e.group,
                fold_key(e)
            )));
        }
    }
    let keys: BTreeSet<&str> = key_of.values().copied().collect();
    if keys.len() < opts.folds {
        return Err(Error::Input(format!(
            "{} fold keys for {} folds: every fold needs one",
            keys.len(),
            opts.folds
        )));
    }
    if let Some((row, e)) = examples
        .iter()
        .enumerate()
        .find(|(_, e)| !(e.weight > 0.0 && e.weight.is_finite()))
    {
        return Err(Error::Input(format!(
            "example {row} weighs {}: a weight must be positive",
            e.weight
        )));
    }
    let positives = examples.iter().filter(|e| e.label).count();
    if positives == 0 || positives == examples.len() {
        return Err(Error::Input(format!(
            "{positives} of {} examples are needed: both labels must occur",
            examples.len()
        )));
    }
    if examples.len() > i32::MAX as usize / names.len() {
        return Err(Error::Input(format!(
            "{} examples is more than LightGBM takes",
            examples.len()
        )));
    }
    Ok(())
}

/// What an example is dealt into a fold by: its fold key, or its group without one.
fn fold_key(e: &Example) -> &str {
    if e.fold.is_empty() { &e.group } else { &e.fold }
}

/// The fold of each example. Fold keys ([`Example::fold`]) with a needed candidate and keys
/// without are each shuffled (seeded) and dealt round-robin, so every fold gets its share of
/// both and the examples of one key (hence of one group) always share a fold.
fn assign_folds(examples: &[Example], folds: usize, seed: u64) -> Vec<usize> {
    let mut has_positive: BTreeMap<&str, bool> = BTreeMap::new();
    for e in examples {
        *has_positive.entry(fold_key(e)).or_default() |= e.label;
    }
    let mut rng = SplitMix64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut fold_of_group: BTreeMap<&str, usize> = BTreeMap::new();
    let mut next = 0;
    for wanted in [true, false] {
        let mut groups: Vec<&str> = has_positive
            .iter()
            .filter(|(_, p)| **p == wanted)
            .map(|(g, _)| *g)
            .collect();
        for i in (1..groups.len()).rev() {
            groups.swap(i, (rng.next() % (i as u64 + 1)) as usize);
        }
        for g in groups {
            fold_of_group.insert(g, next % folds);
            next += 1;
        }
    }
    examples
        .iter()
        .map(|e| fold_of_group[fold_key(e)])
        .collect()
}

/// A small deterministic generator (SplitMix64) for the fold shuffle.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn fit_booster(
    examples: &[Example],
    rows: &[usize],
    names: &[&str],
    opts: &TrainOptions,
) -> Result<Booster, Error> {
    let flat: Vec<f64> = rows
        .iter()
        .flat_map(|&i| examples[i].features.iter().copied())
        .collect();
    let labels: Vec<f32> = rows
        .iter()
        .map(|&i| if examples[i].label { 1.0 } else { 0.0 })
        .collect();
    let mut data = Dataset::from_slice(&flat, &labels, names.len() as i32, true)
        .map_err(lgbm("building the training set"))?;
    if rows.iter().any(|&i| examples[i].weight != 1.0) {
        let weights: Vec<f32> = rows.iter().map(|&i| examples[i].weight).collect();
        data.set_weights(&weights)
            .map_err(lgbm("weighting the training set"))?;
    }
    let owned: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    data.set_feature_names(&owned)
        .map_err(lgbm("naming the features"))?;
    // LightGBM takes the seed as a C int.
    let seed = (opts.seed % i32::MAX as u64) as i64;
    let mut params = serde_json::json!({
        "objective": "binary",
        "num_iterations": opts.trees,
        "learning_rate": opts.learning_rate,
        "num_leaves": opts.num_leaves,
        "min_data_in_leaf": opts.min_data_in_leaf,
        "seed": seed,
        "deterministic": true,
        "force_row_wise": true,
        "num_threads": 1,
        "verbosity": -1,
    });
    if !opts.monotone.is_empty() {
        params["monotone_constraints"] = serde_json::Value::String(
            opts.monotone
                .iter()
                .map(i8::to_string)
                .collect::<Vec<_>>()
                .join(","),
        );
        params["monotone_constraints_method"] = "intermediate".into();
    }
    let booster = Booster::train(data, &params).map_err(lgbm("training"))?;
    if booster.num_iterations() <= 0 {
        return Err(Error::Input(
            "LightGBM grew no tree: the features do not vary".into(),
        ));
    }
    Ok(booster)
}

fn cross_fit(examples: &[Example], p: &[f64], opts: &TrainOptions) -> CrossFit {
    let folds = opts.folds;
    let positives = examples.iter().filter(|e| e.label).count();
    let mut by_group: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, e) in examples.iter().enumerate() {
        by_group.entry(e.group.as_str()).or_default().push(i);
    }
    let logloss = examples
        .iter()
        .zip(p)
        .map(|(e, &p)| {
            let p = p.clamp(1e-15, 1.0 - 1e-15);
            -(if e.label { p.ln() } else { (1.0 - p).ln() })
        })
        .sum::<f64>()
        / examples.len() as f64;
    let at_bars = BARS
        .iter()
        .map(|&bar| {
            let shown = p.iter().filter(|&&p| p >= bar).count();
            let hits = examples
                .iter()
                .zip(p)
                .filter(|(e, p)| e.label && **p >= bar)
                .count();
            let shown_groups = by_group
                .values()
                .filter(|ix| ix.iter().any(|&i| p[i] >= bar))
                .count();
            BarFigures {
                bar,
                precision: if shown == 0 {
                    1.0
                } else {
                    hits as f64 / shown as f64
                },
                recall: hits as f64 / positives as f64,
                shown_groups: shown_groups as f64 / by_group.len() as f64,
            }
        })
        .collect();
    let (mut needed, mut top1, mut not_needed, mut silent) = (0, 0, 0, 0);
    for ix in by_group.values() {
        let best = ix
            .iter()
            .copied()
            .max_by(|&a, &b| p[a].total_cmp(&p[b]).then(b.cmp(&a)));
        let Some(best) = best else { continue };
        if ix.iter().any(|&i| examples[i].label) {
            needed += 1;
            top1 += usize::from(examples[best].label);
        } else {
            not_needed += 1;
            silent += usize::from(p[best] < SILENCE_BAR);
        }
    }
    let share = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    CrossFit {
        folds,
        examples: examples.len(),
        groups: by_group.len(),
        fold_keys: examples.iter().map(fold_key).collect::<BTreeSet<_>>().len(),
        positives,
        auc: auc(examples, p),
        logloss,
        at_bars,
        top1_when_needed: share(top1, needed),
        silence_when_not_needed: share(silent, not_needed),
        notes: NOTE_BARS
            .iter()
            .map(|&bar| notes_at(examples, p, &by_group, bar, |_| true))
            .collect(),
        chosen: Some(choose_bar(examples, p, &by_group, opts.target_precision)),
    }
}

/// The fewest notes on the tuning part whose precision may choose the bar: a precision of one
/// or two notes measures nothing.
pub const MIN_NOTES: usize = 10;

/// Whether a fold key is a real history's repository (`repository:owner/name`).
pub fn is_real(key: &str) -> bool {
    key.starts_with("repository:")
}

/// Which half of the fold keys a key is in: `true` for the tuning half (FNV-1a of the key,
/// so the split does not depend on the order or number of keys).
fn tuning_half(key: &str) -> bool {
    cairn_text::hash::Fnv1a::default()
        .write(key.as_bytes())
        .finish()
        .is_multiple_of(2)
}

/// The notes at `bar` over the groups whose fold key passes `keep`.
fn notes_at(
    examples: &[Example],
    p: &[f64],
    by_group: &BTreeMap<&str, Vec<usize>>,
    bar: f64,
    keep: impl Fn(&str) -> bool,
) -> NoteFigures {
    let (mut requests, mut shown, mut right) = (0usize, 0usize, 0usize);
    let (mut needing, mut hit, mut needing_none, mut silent, mut with_note) = (0, 0, 0, 0, 0);
    for ix in by_group.values() {
        let Some(&first) = ix.first() else { continue };
        if !keep(fold_key(&examples[first])) {
            continue;
        }
        requests += 1;
        let mut order: Vec<usize> = ix.iter().copied().filter(|&i| p[i] >= bar).collect();
        order.sort_by(|&a, &b| p[b].total_cmp(&p[a]).then(a.cmp(&b)));
        order.truncate(NOTE_ENTRIES);
        let good = order.iter().filter(|&&i| examples[i].label).count();
        shown += order.len();
        right += good;
        with_note += usize::from(!order.is_empty());
        if ix.iter().any(|&i| examples[i].label) {
            needing += 1;
            hit += usize::from(good > 0);
        } else {
            needing_none += 1;
            silent += usize::from(order.is_empty());
        }
    }
    let share = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    NoteFigures {
        bar,
        requests,
        precision: if shown == 0 { 1.0 } else { share(right, shown) },
        hit_rate: share(hit, needing),
        silence: share(silent, needing_none),
        with_note: share(with_note, requests),
    }
}

/// The model's bar, chosen on the tuning half of the fold keys and reported on the other.
fn choose_bar(
    examples: &[Example],
    p: &[f64],
    by_group: &BTreeMap<&str, Vec<usize>>,
    target: f64,
) -> Chosen {
    let keys: BTreeSet<&str> = examples.iter().map(fold_key).collect();
    // Real histories, when there are any, choose the bar: it is their notes the bar is for.
    // The made requests are then the report. Else the two halves of the fold keys.
    let has_real = keys.iter().any(|k| is_real(k));
    let tuning = |k: &str| if has_real { is_real(k) } else { tuning_half(k) };
    let tune_keys = keys.iter().filter(|k| tuning(k)).count();
    let tuned: Vec<NoteFigures> = NOTE_BARS
        .iter()
        .map(|&bar| notes_at(examples, p, by_group, bar, tuning))
        .collect();
    let by_precision = tuned.iter().find(|f| {
        f.precision >= target && f.with_note * f.requests as f64 >= MIN_NOTES as f64 - 1e-9
    });
    let reached = by_precision.is_some();
    // When no bar gives notes that precise, the note at least keeps out of the way: the
    // lowest bar at which it stays silent on SILENCE_TARGET of the requests needing nothing.
    let (rule, tune) = match by_precision {
        Some(f) => ("precision", f.clone()),
        None => match tuned.iter().find(|f| f.silence >= SILENCE_TARGET) {
            Some(f) => ("silence", f.clone()),
            None => ("highest", tuned[tuned.len() - 1].clone()),
        },
    };
    let report = notes_at(examples, p, by_group, tune.bar, |k| !tuning(k));
    Chosen {
        on: if has_real {
            "real".to_owned()
        } else {
            "halves".to_owned()
        },
        bar: tune.bar,
        target_precision: target,
        reached,
        rule: rule.to_owned(),
        tune_keys,
        report_keys: keys.len() - tune_keys,
        tune,
        report,
    }
}

/// ROC AUC by ranks (Mann-Whitney U), tied scores sharing their mean rank.
fn auc(examples: &[Example], p: &[f64]) -> f64 {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let (mut rank_sum, mut i) = (0.0, 0);
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && p[order[j + 1]] == p[order[i]] {
            j += 1;
        }
        let mean_rank = (i + j) as f64 / 2.0 + 1.0;
        rank_sum += mean_rank * order[i..=j].iter().filter(|&&k| examples[k].label).count() as f64;
        i = j + 1;
    }
    let pos = examples.iter().filter(|e| e.label).count() as f64;
    let neg = examples.len() as f64 - pos;
    (rank_sum - pos * (pos + 1.0) / 2.0) / (pos * neg)
}

/// Which requests [`notes_of`] measures, by the half of the fold keys they are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requests {
    /// Every request.
    All,
    /// The requests whose fold key is in the half a model's bar is reported on
    /// ([`Chosen::report`]), not chosen on.
    Report,
}

/// The notes at `bar` of the probabilities `p` (one per example, in order), as
/// [`CrossFit::notes`] counts them: for comparing another model's scores of the same examples
/// with a [`train`]ing's figures.
pub fn notes_of(examples: &[Example], p: &[f64], bar: f64, which: Requests) -> NoteFigures {
    let mut by_group: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, e) in examples.iter().enumerate() {
        by_group.entry(e.group.as_str()).or_default().push(i);
    }
    match which {
        Requests::All => notes_at(examples, p, &by_group, bar, |_| true),
        Requests::Report => {
            let has_real = examples.iter().any(|e| is_real(fold_key(e)));
            notes_at(examples, p, &by_group, bar, |k| {
                if has_real {
                    !is_real(k)
                } else {
                    !tuning_half(k)
                }
            })
        }
    }
}

/// The ROC AUC of the probabilities `p` (one per example, in order), ties counting half, as
/// [`CrossFit::auc`] computes it.
pub fn auc_of(examples: &[Example], p: &[f64]) -> f64 {
    auc(examples, p)
}

/// The figures `cairn ranker train` wrote beside the shipped model (`ranker/model.json`).
pub fn shipped_figures() -> &'static str {
    SHIPPED_FIGURES
}

/// A request to the booster thread: flattened rows and where to answer.
struct Job {
    rows: Vec<f64>,
    reply: mpsc::Sender<Result<Vec<f64>, Error>>,
}

/// A loaded model that scores feature rows. `Send + Sync`: the booster lives on a thread of
/// its own (stopped when the ranker is dropped), and calls reach it over a channel.
#[derive(Debug)]
pub struct Ranker {
    jobs: mpsc::Sender<Job>,
    names: Vec<String>,
    trees: usize,
    bar: f32,
}

/// The bar chosen when a model was trained ([`Chosen::bar`]), read from the figures
/// `cairn ranker train` writes beside it (`<model>.json`); `None` when they name none.
pub fn bar_of_figures(json: &str) -> Option<f32> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let bar = v.pointer("/cross_fit/chosen/bar")?.as_f64()?;
    (bar > 0.0 && bar < 1.0).then_some(bar as f32)
}

impl Ranker {
    /// Loads LightGBM model text (as [`train`] returns it and `ranker/model.txt` holds).
    pub fn from_text(model: &str) -> Result<Self, Error> {
        check_model_text(model)?;
        let model = model.to_string();
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (ready, loaded) = mpsc::channel::<Result<(Vec<String>, usize), Error>>();
        thread::Builder::new()
            .name("cairn-ranker".into())
            .spawn(move || serve(&model, &ready, &inbox))
            .map_err(|e| Error::Model(format!("cannot start the ranker's thread: {e}")))?;
        let (names, trees) = loaded.recv().map_err(|_| Error::Stopped)??;
        Ok(Self {
            jobs,
            names,
            trees,
            bar: crate::note::BAR_UNCHOSEN,
        })
    }

    /// The model committed with the crate, `crates/cairn-turn/ranker/model.txt`, with the
    /// bar chosen when it was trained (`ranker/model.json`).
    pub fn shipped() -> Result<Self, Error> {
        Ok(Self::from_text(SHIPPED)?.with_bar(bar_of_figures(SHIPPED_FIGURES)))
    }

    /// The same model with the bar its training chose (`None`: [`crate::note::BAR_UNCHOSEN`]).
    #[must_use]
    pub fn with_bar(mut self, bar: Option<f32>) -> Self {
        self.bar = bar.unwrap_or(crate::note::BAR_UNCHOSEN);
        self
    }

    /// The probability a candidate needs to be shown: chosen with the model, on requests
    /// whose templates or repositories it was not chosen on being reported
    /// ([`CrossFit::chosen`]).
    pub fn bar(&self) -> f32 {
        self.bar
    }

    /// The probability that each row's candidate is needed, in row order. Every row must
    /// have [`Ranker::feature_names`]`.len()` features; `NAN` marks a missing one.
    pub fn predict(&self, rows: &[Vec<f64>]) -> Result<Vec<f64>, Error> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        if let Some((row, r)) = rows
            .iter()
            .enumerate()
            .find(|(_, r)| r.len() != self.names.len())
        {
            return Err(Error::FeatureCount {
                row,
                got: r.len(),
                expected: self.names.len(),
            });
        }
        let (reply, answer) = mpsc::channel();
        let job = Job {
            rows: rows.iter().flatten().copied().collect(),
            reply,
        };
        self.jobs.send(job).map_err(|_| Error::Stopped)?;
        answer.recv().map_err(|_| Error::Stopped)?
    }

    /// The model's feature names, in the order rows give them.
    pub fn feature_names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// The number of trees.
    pub fn trees(&self) -> usize {
        self.trees
    }
}

/// LightGBM's model parser trusts its input: a truncated or edited text can make it read past
/// the end, and a tree whose children point anywhere makes prediction read out of bounds or
/// loop. So the ranker checks the structure first: a binary model whose `tree_sizes` frame
/// every tree, each tree a proper binary tree over the model's features, without categorical
/// or linear parts (the ranker never trains those).
fn check_model_text(model: &str) -> Result<(), Error> {
    let bad = |why: String| Err(Error::Model(why));
    if model.contains('\0') || model.contains('\r') {
        return bad("it contains a NUL byte or a carriage return".into());
    }
    if !model.starts_with("tree\n") {
        return bad(format!(
            "it starts with {:?}, not with LightGBM's \"tree\" header",
            model.chars().take(20).collect::<String>()
        ));
    }
    let Some(first) = model.find("\nTree=").map(|i| i + 1) else {
        return bad("it has no trees".into());
    };
    let header: BTreeMap<&str, &str> = model[..first]
        .lines()
        .filter_map(|l| l.split_once('='))
        .collect();
    let get = |k: &str| {
        header
            .get(k)
            .copied()
            .ok_or_else(|| Error::Model(format!("its header has no {k}")))
    };
    if get("num_class")? != "1"
        || get("num_tree_per_iteration")? != "1"
        || !get("objective")?.starts_with("binary")
    {
        return bad("it is not a binary model with one tree per iteration".into());
    }
    let features = get("max_feature_idx")?
        .parse::<usize>()
        .map_err(|_| Error::Model("its max_feature_idx is not a number".into()))?
        + 1;
    let names = get("feature_names")?.split(' ').count();
    if names != features {
        return bad(format!("it names {names} features but has {features}"));
    }
    let sizes = get("tree_sizes")?
        .split(' ')
        .map(str::parse::<usize>)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| Error::Model("its tree_sizes are not numbers".into()))?;
    let mut at = first;
    for (i, size) in sizes.iter().enumerate() {
        let tree = at
            .checked_add(*size)
            .and_then(|end| model.get(at..end))
            .ok_or_else(|| Error::Model(format!("tree {i} runs past the end of the text")))?;
        check_tree(tree, features).map_err(|why| Error::Model(format!("tree {i} {why}")))?;
        at += size;
    }
    if !model[at..].starts_with("end of trees\n") {
        return bad("the trees are not followed by \"end of trees\"".into());
    }
    Ok(())
}

/// What a model learned: each input's share of the total split gain and its number of
/// splits over all trees, and the first tree's top splits drawn as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Learned {
    /// Per input, in the model's order.
    pub inputs: Vec<InputUse>,
    /// The first tree to depth 3, one node per line, indented by depth.
    pub first_tree: Vec<String>,
}

/// One input's use by a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputUse {
    /// Its name.
    pub name: String,
    /// Its share of the total split gain over all trees.
    pub gain_share: f64,
    /// How many splits use it.
    pub splits: usize,
}

/// Reads what a model (LightGBM text, as [`train`] writes it) learned: gains and splits per
/// input, and its first tree's top splits. Fails as [`Ranker::from_text`] does on text that
/// is not such a model.
pub fn learned(model: &str) -> Result<Learned, Error> {
    check_model_text(model)?;
    let names: Vec<String> = model
        .lines()
        .find_map(|l| l.strip_prefix("feature_names="))
        .unwrap_or_default()
        .split(' ')
        .map(str::to_owned)
        .collect();
    let mut gain = vec![0.0f64; names.len()];
    let mut splits = vec![0usize; names.len()];
    let mut first_tree = Vec::new();
    for (t, tree) in model.split("\nTree=").skip(1).enumerate() {
        let kv: BTreeMap<&str, &str> = tree
            .lines()
            .skip(1)
            .take_while(|l| !l.is_empty())
            .filter_map(|l| l.split_once('='))
            .collect();
        let nums = |k: &str| -> Vec<f64> {
            kv.get(k)
                .map(|v| v.split(' ').filter_map(|x| x.parse().ok()).collect())
                .unwrap_or_default()
        };
        let (feature, gains) = (nums("split_feature"), nums("split_gain"));
        for (&f, &g) in feature.iter().zip(&gains) {
            if let Some(slot) = gain.get_mut(f as usize) {
                *slot += g;
                splits[f as usize] += 1;
            }
        }
        if t == 0 {
            let tree = TreeText {
                names: &names,
                feature,
                gains,
                threshold: nums("threshold"),
                decision: nums("decision_type"),
                left: nums("left_child"),
                right: nums("right_child"),
                count: nums("internal_count"),
                leaf_value: nums("leaf_value"),
                leaf_count: nums("leaf_count"),
            };
            if tree.feature.is_empty() {
                first_tree.push(tree.leaf(0, 0));
            } else {
                tree.draw(0, 0, 3, &mut first_tree);
            }
        }
    }
    let total: f64 = gain.iter().sum();
    let inputs = names
        .iter()
        .enumerate()
        .map(|(i, n)| InputUse {
            name: n.clone(),
            gain_share: if total > 0.0 { gain[i] / total } else { 0.0 },
            splits: splits[i],
        })
        .collect();
    Ok(Learned { inputs, first_tree })
}

/// One tree's arrays, for drawing it.
struct TreeText<'a> {
    names: &'a [String],
    feature: Vec<f64>,
    gains: Vec<f64>,
    threshold: Vec<f64>,
    decision: Vec<f64>,
    left: Vec<f64>,
    right: Vec<f64>,
    count: Vec<f64>,
    leaf_value: Vec<f64>,
    leaf_count: Vec<f64>,
}

impl TreeText<'_> {
    fn leaf(&self, leaf: usize, depth: usize) -> String {
        format!(
            "{}leaf {leaf}: value {:.3} ({} examples)",
            "  ".repeat(depth),
            self.leaf_value.get(leaf).copied().unwrap_or(f64::NAN),
            self.leaf_count.get(leaf).copied().unwrap_or(0.0)
        )
    }

    fn draw(&self, node: usize, depth: usize, max: usize, out: &mut Vec<String>) {
        let pad = "  ".repeat(depth);
        if depth >= max {
            out.push(format!("{pad}…"));
            return;
        }
        let name = self
            .feature
            .get(node)
            .and_then(|&f| self.names.get(f as usize))
            .map_or("?", String::as_str);
        // Bit 1 of LightGBM's decision type: missing values go left.
        let missing = if self.decision.get(node).is_some_and(|&d| (d as u8) & 2 == 2) {
            "left"
        } else {
            "right"
        };
        let threshold = self.threshold.get(node).copied().unwrap_or(f64::NAN);
        // LightGBM splits a 0/1 input at 1e-35: print such a tiny number as one.
        let threshold = if threshold != 0.0 && threshold.abs() < 1e-4 {
            format!("{threshold:.0e}")
        } else {
            format!("{threshold:.4}")
        };
        out.push(format!(
            "{pad}{name} <= {threshold} (gain {:.1}, {} examples; missing go {missing})",
            self.gains.get(node).copied().unwrap_or(0.0),
            self.count.get(node).copied().unwrap_or(0.0)
        ));
        for child in [self.left.get(node), self.right.get(node)]
            .into_iter()
            .flatten()
        {
            if *child >= 0.0 {
                self.draw(*child as usize, depth + 1, max, out);
            } else {
                out.push(self.leaf((-child) as usize - 1, depth + 1));
            }
        }
    }
}

/// One tree's text: `Tree=i`, then `key=value` lines up to an empty line (LightGBM reads at
/// most 22), with splits on known features and children that form one binary tree.
fn check_tree(text: &str, features: usize) -> Result<(), String> {
    let mut lines = text.split('\n');
    let head = lines.next().unwrap_or_default();
    if !head.starts_with("Tree=") {
        return Err(format!("starts with {head:?}, not \"Tree=\""));
    }
    let mut kv: BTreeMap<&str, &str> = BTreeMap::new();
    let mut closed = false;
    for line in lines {
        if line.is_empty() {
            closed = true;
            break;
        }
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| format!("has a line without '=': {line:?}"))?;
        kv.insert(k, v);
    }
    if !closed || kv.len() > 22 {
        return Err("is cut short or has too many lines".into());
    }
    let field = |k: &str| kv.get(k).copied().ok_or_else(|| format!("has no {k}"));
    // Thresholds may be infinite (a split that sends every finite value one way, as
    // monotone constraints produce); nothing may be NaN, and the rest must be finite.
    let numbers = |k: &str, n: usize| -> Result<Vec<f64>, String> {
        let v = field(k)?;
        let xs = v
            .split(' ')
            .filter(|x| !x.is_empty())
            .map(str::parse::<f64>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| format!("has a {k} that is not numbers"))?;
        if xs.len() != n {
            return Err(format!("has {} {k} values, not {n}", xs.len()));
        }
        let ok = |x: &f64| {
            if k == "threshold" {
                !x.is_nan()
            } else {
                x.is_finite()
            }
        };
        if let Some(x) = xs.iter().find(|x| !ok(x)) {
            return Err(format!("has a {k} value {x}"));
        }
        Ok(xs)
    };
    let leaves: usize = field("num_leaves")?
        .parse()
        .map_err(|_| "has a num_leaves that is not a number".to_string())?;
    if leaves == 0 || leaves > 1 << 17 {
        return Err(format!("has {leaves} leaves"));
    }
    if field("num_cat")? != "0" || kv.get("is_linear").is_some_and(|v| *v != "0") {
        return Err("has categorical or linear parts, which the ranker never trains".into());
    }
    numbers("leaf_value", leaves)?;
    if leaves == 1 {
        return Ok(());
    }
    let inner = leaves - 1;
    numbers("threshold", inner)?;
    let index = |x: f64| x.fract() == 0.0 && x.abs() < (1u64 << 31) as f64;
    if numbers("split_feature", inner)?
        .iter()
        .any(|&f| !index(f) || f < 0.0 || f as usize >= features)
    {
        return Err(format!("splits on a feature outside 0..{features}"));
    }
    if numbers("decision_type", inner)?
        .iter()
        .any(|&d| !index(d) || !(0.0..256.0).contains(&d) || (d as u8) & 1 == 1)
    {
        return Err("has a categorical or unknown decision type".into());
    }
    // Every node but the root is some node's child exactly once, every leaf too.
    let (mut inner_seen, mut leaf_seen) = (vec![false; inner], vec![false; leaves]);
    inner_seen[0] = true;
    for c in numbers("left_child", inner)?
        .into_iter()
        .chain(numbers("right_child", inner)?)
    {
        let slot = if !index(c) {
            None
        } else if c >= 0.0 {
            inner_seen.get_mut(c as usize)
        } else {
            leaf_seen.get_mut((-c) as usize - 1)
        };
        match slot {
            Some(seen) if !*seen => *seen = true,
            _ => return Err(format!("has a child {c} that is out of range or shared")),
        }
    }
    if inner_seen.iter().chain(&leaf_seen).any(|s| !s) {
        return Err("has nodes no split reaches".into());
    }
    Ok(())
}

/// The booster thread: loads the model, reports its names and size, then answers jobs until
/// the ranker (the jobs' sender) is dropped.
fn serve(
    model: &str,
    ready: &mpsc::Sender<Result<(Vec<String>, usize), Error>>,
    inbox: &mpsc::Receiver<Job>,
) {
    let loaded = Booster::from_string(model)
        .map_err(|e| Error::Model(e.to_string()))
        .and_then(|b| {
            if b.num_classes() != 1 {
                return Err(Error::Model(format!(
                    "it has {} classes; the ranker is a binary model",
                    b.num_classes()
                )));
            }
            if b.num_iterations() <= 0 || b.num_features() <= 0 {
                return Err(Error::Model("it has no trees or no features".into()));
            }
            let names = b
                .feature_name()
                .map_err(lgbm("reading the feature names"))?;
            let mut b = b;
            // A prepared single-row predictor: much cheaper per call than a batch
            // prediction, which sets up a predictor every time.
            b.single_row_fast_init::<f64>(None)
                .map_err(lgbm("preparing the predictor"))?;
            Ok((b, names))
        });
    let booster = match loaded {
        Ok((b, names)) => {
            let trees = b.num_iterations() as usize;
            if ready.send(Ok((names, trees))).is_err() {
                return;
            }
            b
        }
        Err(e) => {
            // The caller is waiting for this answer; if it is gone there is no one to tell.
            drop(ready.send(Err(e)));
            return;
        }
    };
    let n = booster.num_features() as usize;
    for job in inbox {
        let p = job
            .rows
            .chunks(n)
            .map(|row| match booster.predict_single_row_fast(row) {
                Ok(p) => p.first().copied().ok_or(Error::Stopped),
                Err(e) => Err(lgbm("predicting")(e)),
            })
            .collect();
        // A caller that stopped waiting does not need the answer.
        drop(job.reply.send(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pipeline's feature columns, in order.
    const NAMES: [&str; crate::note::FEATURES.len()] = crate::note::FEATURES;
    /// A column the separable set leaves missing now and then.
    const SPARSE: usize = 13;

    /// A separable set: the label follows two features (plus a little noise), the rest is
    /// noise; every 7th value of one column missing.
    fn separable(groups: usize, per_group: usize, seed: u64) -> Vec<Example> {
        let mut rng = SplitMix64(seed);
        let mut u = move || (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let mut out = Vec::new();
        for g in 0..groups {
            for c in 0..per_group {
                let mut f: Vec<f64> = (0..NAMES.len()).map(|_| u()).collect();
                let label = f[0] + 0.5 * f[3] + 0.1 * u() > 0.95;
                f[4] = c as f64;
                if (g + c) % 7 == 0 {
                    f[SPARSE] = f64::NAN;
                }
                out.push(Example {
                    group: format!("g{g}"),
                    fold: String::new(),
                    features: f,
                    label,
                    weight: 1.0,
                    after: 1.0,
                });
            }
        }
        out
    }

    fn small() -> TrainOptions {
        TrainOptions {
            trees: 40,
            ..TrainOptions::default()
        }
    }

    #[test]
    fn a_monotone_feature_never_lowers_the_probability_even_when_the_data_says_so() {
        // Labels fall with feature 1 (as in a set built so that word overlap misleads).
        let mut ex = separable(120, 8, 3);
        for e in &mut ex {
            e.label = e.features[0] > 0.6 && e.features[1] < 0.5;
        }
        let mut monotone = vec![0i8; NAMES.len()];
        monotone[1] = 1;
        let free = train(&ex, &NAMES, &small()).unwrap().0;
        let bound = TrainOptions {
            monotone: monotone.clone(),
            ..small()
        };
        let (text, _) = train(&ex, &NAMES, &bound).unwrap();
        let row = |x: f64| {
            let mut f = vec![0.5; NAMES.len()];
            f[0] = 0.9;
            f[1] = x;
            f
        };
        let rows: Vec<Vec<f64>> = (0..=10).map(|i| row(f64::from(i) / 10.0)).collect();
        let p_free = Ranker::from_text(&free).unwrap().predict(&rows).unwrap();
        assert!(
            p_free[0] > p_free[10],
            "the free model learns the fall: {p_free:?}"
        );
        let p = Ranker::from_text(&text).unwrap().predict(&rows).unwrap();
        assert!(p.windows(2).all(|w| w[1] >= w[0] - 1e-12), "{p:?}");
        let wrong = TrainOptions {
            monotone: vec![1; 3],
            ..small()
        };
        assert!(
            train(&ex, &NAMES, &wrong)
                .unwrap_err()
                .to_string()
                .contains("monotone")
        );
    }

    #[test]
    fn separable_set_gives_a_high_cross_fitted_auc() {
        let ex = separable(120, 8, 1);
        let (text, cf) = train(&ex, &NAMES, &small()).unwrap();
        assert!(cf.auc > 0.9, "cross-fitted AUC {}", cf.auc);
        assert_eq!(cf.folds, 5);
        assert_eq!(cf.examples, 960);
        assert_eq!(cf.groups, 120);
        assert_eq!(cf.positives, ex.iter().filter(|e| e.label).count());
        assert!(cf.logloss < 0.4, "logloss {}", cf.logloss);
        assert_eq!(cf.at_bars.len(), 3);
        assert_eq!(cf.at_bars[1].bar, 0.4);
        assert!(cf.at_bars[1].precision > 0.7, "{:?}", cf.at_bars[1]);
        assert!(cf.top1_when_needed > 0.7, "{cf:?}");
        let r = Ranker::from_text(&text).unwrap();
        assert_eq!(r.trees(), 40);
        assert_eq!(r.feature_names(), NAMES.map(String::from).to_vec());
        // Deterministic: the same input gives the same model text.
        let (again, cf2) = train(&ex, &NAMES, &small()).unwrap();
        assert_eq!(text, again);
        assert_eq!(cf, cf2);
    }

    /// Candidates whose labels are unrelated to their features (a quarter needed).
    fn noise() -> Vec<Example> {
        let mut ex = separable(100, 8, 2);
        let mut rng = SplitMix64(99);
        for e in &mut ex {
            e.label = rng.next().is_multiple_of(4);
        }
        ex
    }

    #[test]
    fn noise_gives_an_auc_near_one_half() {
        // The figures are not a given: a label unrelated to the features scores near 0.5.
        let (_, cf) = train(&noise(), &NAMES, &small()).unwrap();
        assert!((cf.auc - 0.5).abs() < 0.1, "AUC {}", cf.auc);
    }

    #[test]
    fn the_cross_fit_scores_the_probability_after_the_notes_rule() {
        // The figures are of what the note does: the model's probability times what it
        // does after the model (`Example::after`), never the fit itself.
        let mut ex = noise();
        let (text, cf) = train(&ex, &NAMES, &small()).unwrap();
        assert!(cf.auc < 0.75, "noise: AUC {}", cf.auc);
        // Every candidate not needed was shown before and ignored: the rule halves it.
        for e in ex.iter_mut().filter(|e| !e.label) {
            e.after = crate::note::discounted(1.0, 0, 1);
        }
        let (halved_text, halved) = train(&ex, &NAMES, &small()).unwrap();
        assert_eq!(text, halved_text, "the rule is not part of the fit");
        assert!(halved.auc > cf.auc + 0.1, "{} vs {}", halved.auc, cf.auc);
        let precision = |c: &CrossFit| c.notes.iter().map(|n| n.precision).sum::<f64>();
        assert!(precision(&halved) > precision(&cf));
    }

    #[test]
    fn folds_never_split_a_group_and_share_out_the_groups() {
        let ex = separable(53, 5, 3);
        let fold_of = assign_folds(&ex, 5, 11);
        let mut of_group: BTreeMap<&str, usize> = BTreeMap::new();
        for (e, &f) in ex.iter().zip(&fold_of) {
            assert_eq!(
                *of_group.entry(&e.group).or_insert(f),
                f,
                "{} split",
                e.group
            );
        }
        let mut sizes = [0usize; 5];
        for f in of_group.values() {
            sizes[*f] += 1;
        }
        assert!(sizes.iter().all(|&s| (10..=11).contains(&s)), "{sizes:?}");
        assert_eq!(fold_of, assign_folds(&ex, 5, 11), "not deterministic");
        assert_ne!(fold_of, assign_folds(&ex, 5, 12), "the seed is not used");
    }

    #[test]
    fn model_text_round_trip_predicts_the_same() {
        let ex = separable(60, 6, 4);
        let (text, _) = train(&ex, &NAMES, &small()).unwrap();
        let rows: Vec<Vec<f64>> = ex.iter().map(|e| e.features.clone()).collect();
        let a = Ranker::from_text(&text).unwrap().predict(&rows).unwrap();
        let b = Ranker::from_text(&text).unwrap().predict(&rows).unwrap();
        assert_eq!(a.len(), rows.len());
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        assert!(a.iter().all(|p| (0.0..=1.0).contains(p)));
        // One row alone is scored as in a batch.
        let one = Ranker::from_text(&text)
            .unwrap()
            .predict(&rows[..1])
            .unwrap();
        assert_eq!(one[0].to_bits(), a[0].to_bits());
    }

    #[test]
    fn nan_features_are_missing_values() {
        let r = Ranker::shipped().unwrap();
        let all_nan = vec![f64::NAN; r.feature_names().len()];
        let p = r.predict(&[all_nan]).unwrap();
        assert!(p[0].is_finite() && (0.0..=1.0).contains(&p[0]), "{p:?}");
        // Training takes NaN too (every 7th value of one column is missing).
        let ex = separable(40, 6, 5);
        assert!(ex.iter().any(|e| e.features[SPARSE].is_nan()));
        train(&ex, &NAMES, &small()).unwrap();
    }

    #[test]
    fn a_wrong_feature_count_is_a_clear_error() {
        let r = Ranker::shipped().unwrap();
        let n = NAMES.len();
        let err = r
            .predict(&[vec![0.5; n], vec![0.5; n - 1]])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!("row 1 has {} features, the ranker model expects {n}", n - 1),
            "{err}"
        );
        let mut ex = separable(20, 4, 6);
        ex[3].features.pop();
        let err = train(&ex, &NAMES, &small()).unwrap_err().to_string();
        assert!(
            err.contains(&format!("row 3 has {} features", n - 1)),
            "{err}"
        );
    }

    #[test]
    fn a_corrupt_model_text_is_a_clear_error() {
        let err = Ranker::from_text("not a model").unwrap_err().to_string();
        assert!(
            err.starts_with("the ranker model text is not a LightGBM model"),
            "{err}"
        );
        let half = &SHIPPED[..SHIPPED.len() / 2];
        let err = Ranker::from_text(half).unwrap_err().to_string();
        assert!(
            err.starts_with("the ranker model text is not a LightGBM model"),
            "{err}"
        );
        let garbled = SHIPPED.replacen("leaf_value=", "leaf_value=x", 1);
        assert!(Ranker::from_text(&garbled).is_err());
        // LightGBM's own parser reads past the end of a cut text; the check stops it first.
        let trees_end = SHIPPED.find("end of trees").unwrap();
        for cut in (0..SHIPPED.len()).step_by(997) {
            let r = Ranker::from_text(&SHIPPED[..cut]);
            assert_eq!(r.is_ok(), cut > trees_end + 12, "cut at {cut}");
        }
        // The first tree's first split, moved to a feature that does not exist.
        let first = SHIPPED
            .split("split_feature=")
            .nth(1)
            .and_then(|rest| rest.split([' ', '\n']).next())
            .unwrap();
        let split = format!("split_feature={first}");
        let outside = format!("split_feature={}", NAMES.len());
        let outside_says = format!("splits on a feature outside 0..{}", NAMES.len());
        for (from, to, says) in [
            (split.as_str(), outside.as_str(), outside_says.as_str()),
            ("left_child=1 ", "left_child=0 ", "out of range or shared"),
            ("num_class=1", "num_class=0", "not a binary model"),
            ("num_cat=0", "num_cat=2", "categorical"),
        ] {
            let edited = SHIPPED.replacen(from, to, 1);
            assert_ne!(edited, SHIPPED, "{from}");
            let err = Ranker::from_text(&edited).unwrap_err().to_string();
            assert!(err.contains(says), "{from}: {err}");
        }
    }

    #[test]
    fn shipped_model_names_the_pipeline_features() {
        let r = Ranker::shipped().unwrap();
        assert_eq!(r.feature_names(), NAMES.map(String::from).to_vec());
        assert!(r.trees() > 0);
        fn send_sync<T: Send + Sync>(_: &T) {}
        send_sync(&r);
        let r = std::sync::Arc::new(r);
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let r = r.clone();
                thread::spawn(move || r.predict(&[vec![i as f64 / 4.0; NAMES.len()]]).unwrap()[0])
            })
            .collect();
        for h in handles {
            assert!((0.0..=1.0).contains(&h.join().unwrap()));
        }
    }

    #[test]
    fn bad_input_is_refused_before_lightgbm() {
        let ex = separable(20, 4, 7);
        let one_fold = TrainOptions {
            folds: 1,
            ..small()
        };
        assert!(
            train(&ex, &NAMES, &one_fold)
                .unwrap_err()
                .to_string()
                .contains("at least 2")
        );
        let mut all_neg = ex.clone();
        all_neg.iter_mut().for_each(|e| e.label = false);
        assert!(
            train(&all_neg, &NAMES, &small())
                .unwrap_err()
                .to_string()
                .contains("both labels")
        );
        assert!(
            train(&ex[..12], &NAMES, &small())
                .unwrap_err()
                .to_string()
                .contains("3 fold keys for 5 folds")
        );
        let mut weightless = ex.clone();
        weightless[5].weight = 0.0;
        assert!(
            train(&weightless, &NAMES, &small())
                .unwrap_err()
                .to_string()
                .contains("example 5 weighs 0")
        );
        let mut bad_names = NAMES;
        bad_names[2] = "key word";
        assert!(
            train(&ex, &bad_names, &small())
                .unwrap_err()
                .to_string()
                .contains("\"key word\"")
        );
    }

    #[test]
    fn real_requests_choose_the_bar_and_the_made_ones_report_it() {
        let mut ex = separable(120, 8, 5);
        for e in &mut ex {
            let g: usize = e.group[1..].parse().unwrap();
            e.fold = if g.is_multiple_of(3) {
                format!("repository:o/r{}", g % 4)
            } else {
                format!("t{}", g % 10)
            };
        }
        let (plain, cf) = train(&ex, &NAMES, &small()).unwrap();
        let chosen = cf.chosen.clone().unwrap();
        // Every real request's repository chooses the bar; the made requests report it.
        assert_eq!(chosen.on, "real");
        assert_eq!(
            (chosen.tune_keys, chosen.report_keys),
            (4, 10),
            "{chosen:?}"
        );
        assert_eq!(chosen.tune.requests, 40);
        assert_eq!(chosen.report.requests, 80);
        // Weighting the real requests changes the model, not what the figures count.
        for e in ex.iter_mut().filter(|e| is_real(&e.fold)) {
            e.weight = 5.0;
        }
        let (text, weighted) = train(&ex, &NAMES, &small()).unwrap();
        assert_eq!(weighted.examples, cf.examples);
        assert_eq!(weighted.chosen.unwrap().tune.requests, 40);
        assert_ne!(text, plain);
        // With no real request, the halves of the fold keys choose it.
        let (_, made) = train(&separable(120, 8, 5), &NAMES, &small()).unwrap();
        assert_eq!(made.chosen.unwrap().on, "halves");
    }

    #[test]
    fn folds_keep_a_fold_key_together_and_refuse_a_group_with_two() {
        // Requests made from one template (the fold key) share a fold, whatever their group.
        let mut ex = separable(60, 4, 8);
        for e in &mut ex {
            let g: usize = e.group[1..].parse().unwrap();
            e.fold = format!("t{}", g % 12);
        }
        let fold_of = assign_folds(&ex, 5, 3);
        let mut of_key: BTreeMap<&str, usize> = BTreeMap::new();
        for (e, &f) in ex.iter().zip(&fold_of) {
            assert_eq!(*of_key.entry(&e.fold).or_insert(f), f, "{} split", e.fold);
        }
        assert_eq!(of_key.len(), 12);
        let (_, cf) = train(&ex, &NAMES, &small()).unwrap();
        assert_eq!((cf.groups, cf.fold_keys), (60, 12));
        // Without keys, each group is its own.
        let plain = separable(60, 4, 8);
        assert_eq!(train(&plain, &NAMES, &small()).unwrap().1.fold_keys, 60);
        ex[1].fold = "elsewhere".into();
        let err = train(&ex, &NAMES, &small()).unwrap_err().to_string();
        assert!(
            err.contains("group \"g0\" has examples with fold keys"),
            "{err}"
        );
        let mut few = separable(60, 4, 8);
        few.iter_mut().for_each(|e| e.fold = "one".into());
        let err = train(&few, &NAMES, &small()).unwrap_err().to_string();
        assert!(err.contains("1 fold keys for 5 folds"), "{err}");
    }

    /// The feature indices each tree of a model text splits on.
    fn split_features(text: &str) -> BTreeSet<usize> {
        text.lines()
            .filter_map(|l| l.strip_prefix("split_feature="))
            .flat_map(|l| l.split_whitespace().map(|f| f.parse::<usize>().unwrap()))
            .collect()
    }

    #[test]
    fn what_a_model_learned_is_read_from_its_text() {
        let (text, _) = train(&separable(60, 6, 3), &NAMES, &small()).unwrap();
        let l = learned(&text).unwrap();
        assert_eq!(l.inputs.len(), NAMES.len());
        let total: f64 = l.inputs.iter().map(|i| i.gain_share).sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        // The label follows inputs 0 and 3: they carry most of the gain.
        let top: f64 = l.inputs[0].gain_share + l.inputs[3].gain_share;
        assert!(top > 0.5, "{:?}", l.inputs);
        assert_eq!(
            l.inputs.iter().map(|i| i.splits).sum::<usize>(),
            split_count(&text)
        );
        assert!(l.first_tree[0].contains(" <= "), "{:?}", l.first_tree);
        assert!(
            l.first_tree.iter().any(|n| n.contains("leaf")),
            "{:?}",
            l.first_tree
        );
        assert!(learned("not a model").is_err());
    }

    fn split_count(text: &str) -> usize {
        text.lines()
            .filter_map(|l| l.strip_prefix("split_feature="))
            .map(|l| l.split_whitespace().count())
            .sum()
    }

    #[test]
    fn every_input_of_the_shipped_model_splits_somewhere() {
        // An input no tree splits on was constant in training (the model never learned what
        // it means) or says nothing the others do not: it must be made to vary in the
        // training set or removed.
        let used = split_features(SHIPPED);
        let dead: Vec<&str> = NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| !used.contains(i))
            .map(|(_, n)| *n)
            .collect();
        assert!(
            dead.is_empty(),
            "inputs with no split in any tree: {dead:?}"
        );
        // The check itself: a model trained with a constant column finds it dead.
        let mut ex = separable(60, 6, 9);
        ex.iter_mut().for_each(|e| e.features[7] = 1.0);
        let (text, _) = train(&ex, &NAMES, &small()).unwrap();
        let used = split_features(&text);
        assert!(!used.contains(&7) && used.contains(&0), "{used:?}");
    }

    #[test]
    fn the_models_readme_names_its_inputs_in_order() {
        // The README beside the model lists its columns; a retraining that changes the inputs
        // must change that list too.
        let readme = include_str!("../ranker/README.md");
        let start = readme
            .find("Its columns, in order:")
            .expect("the columns' paragraph");
        let rest = &readme[start..];
        let open = rest.find('`').unwrap() + 1;
        let close = open + rest[open..].find('`').unwrap();
        let listed: Vec<&str> = rest[open..close].split(',').map(str::trim).collect();
        assert_eq!(listed, NAMES.to_vec());
        let in_model = SHIPPED
            .lines()
            .find_map(|l| l.strip_prefix("feature_names="))
            .unwrap();
        assert_eq!(in_model.split(' ').collect::<Vec<_>>(), NAMES.to_vec());
    }

    #[test]
    fn auc_by_ranks_counts_ties_half() {
        let ex = |l: &[bool]| -> Vec<Example> {
            l.iter()
                .map(|&label| Example {
                    group: "g".into(),
                    fold: String::new(),
                    features: vec![],
                    label,
                    weight: 1.0,
                    after: 1.0,
                })
                .collect()
        };
        assert_eq!(auc(&ex(&[false, true]), &[0.1, 0.9]), 1.0);
        assert_eq!(auc(&ex(&[false, true]), &[0.9, 0.1]), 0.0);
        assert_eq!(auc(&ex(&[false, true]), &[0.5, 0.5]), 0.5);
        assert_eq!(
            auc(&ex(&[false, true, false, true]), &[0.1, 0.4, 0.35, 0.8]),
            1.0
        );
    }
}
