//! Score normalisation and rank fusion.
use std::collections::HashMap;
use std::hash::Hash;

/// How the keyword and dense lists become one score.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fusion {
    /// `w·dense + (1−w)·keyword` over scores min-max normalised within each list.
    Weighted,
    /// `w·dense + (1−w)·keyword` over scores divided by each list's best (a weak list stays
    /// weak instead of being stretched to 0..=1).
    WeightedMax,
    /// Reciprocal-rank fusion: `w/(k+rank_dense) + (1−w)/(k+rank_keyword)`, rescaled to 0..=1.
    Rrf,
}

/// Min-max normalisation of one list's scores into 0..=1 (a single result gets 1).
pub fn normalise<K: Clone + Eq + Hash>(scores: &HashMap<K, f32>) -> HashMap<K, f32> {
    let (lo, hi) = scores
        .values()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    scores
        .iter()
        .map(|(k, &s)| (k.clone(), if hi > lo { (s - lo) / (hi - lo) } else { 1.0 }))
        .collect()
}

/// Each score divided by the list's best (non-positive scores count 0).
pub fn normalise_max<K: Clone + Eq + Hash>(scores: &HashMap<K, f32>) -> HashMap<K, f32> {
    let hi = scores.values().copied().fold(0.0f32, f32::max);
    scores
        .iter()
        .map(|(k, &s)| (k.clone(), if hi > 0.0 { (s / hi).max(0.0) } else { 1.0 }))
        .collect()
}

/// Ranks (1 = best) of a list's scores, ties by key so the order is stable.
fn ranks<K: Clone + Eq + Ord + Hash>(scores: &HashMap<K, f32>) -> HashMap<K, usize> {
    let mut v: Vec<(&K, f32)> = scores.iter().map(|(k, s)| (k, *s)).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    v.into_iter()
        .enumerate()
        .map(|(i, (k, _))| (k.clone(), i + 1))
        .collect()
}

/// Fuses dense and keyword scores (raw: this normalises or ranks them itself) into one
/// score per key, `w_dense` the dense side's weight; a side that did not find a key counts
/// 0. Sorted best first (ties by key, so the order is stable).
pub fn fuse<K: Clone + Eq + Ord + Hash>(
    dense: &HashMap<K, f32>,
    keyword: &HashMap<K, f32>,
    w_dense: f32,
    how: Fusion,
    rrf_k: f32,
) -> Vec<(K, f32)> {
    let mut keys: Vec<&K> = dense.keys().chain(keyword.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<(K, f32)> = match how {
        Fusion::Weighted | Fusion::WeightedMax => {
            let norm = if how == Fusion::Weighted {
                normalise
            } else {
                normalise_max
            };
            let d = norm(dense);
            let k = norm(keyword);
            keys.into_iter()
                .map(|id| {
                    let s = w_dense * d.get(id).copied().unwrap_or(0.0)
                        + (1.0 - w_dense) * k.get(id).copied().unwrap_or(0.0);
                    (id.clone(), s)
                })
                .collect()
        }
        Fusion::Rrf => {
            let d = ranks(dense);
            let k = ranks(keyword);
            let top = 1.0 / (rrf_k + 1.0);
            keys.into_iter()
                .map(|id| {
                    let part = |r: Option<&usize>| r.map_or(0.0, |r| 1.0 / (rrf_k + *r as f32));
                    let s = w_dense * part(d.get(id)) + (1.0 - w_dense) * part(k.get(id));
                    (id.clone(), s / top)
                })
                .collect()
        }
    };
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: &[(&str, f32)]) -> HashMap<String, f32> {
        v.iter().map(|(k, s)| ((*k).to_owned(), *s)).collect()
    }

    #[test]
    fn weighted_fusion_normalises_each_side_then_weights_it() {
        let dense = map(&[("a", 0.9), ("b", 0.5), ("c", 0.1)]);
        let keyword = map(&[("c", 12.0), ("d", 3.0)]);
        let out = fuse(&dense, &keyword, 0.7, Fusion::Weighted, 60.0);
        let score = |id: &str| out.iter().find(|(k, _)| k == id).map(|(_, s)| *s);
        assert_eq!(score("a"), Some(0.7));
        assert!((score("b").unwrap_or(0.0) - 0.35).abs() < 1e-6);
        assert_eq!(score("c"), Some(0.3));
        assert_eq!(score("d"), Some(0.0));
        assert_eq!(out[0].0, "a");
    }

    #[test]
    fn max_fusion_keeps_a_weak_list_weak() {
        let dense = map(&[("a", 0.8), ("b", 0.4)]);
        let keyword = map(&[("b", 10.0), ("c", 9.0)]);
        let out = fuse(&dense, &keyword, 0.5, Fusion::WeightedMax, 60.0);
        let score = |id: &str| out.iter().find(|(k, _)| k == id).map_or(0.0, |(_, s)| *s);
        assert!((score("a") - 0.5).abs() < 1e-6);
        assert!((score("b") - 0.75).abs() < 1e-6);
        // Min-max would have given `c` nothing; divided by the best it keeps 0.45.
        assert!((score("c") - 0.45).abs() < 1e-6);
        assert_eq!(out[0].0, "b");
    }

    #[test]
    fn rank_fusion_rewards_agreement_and_ignores_score_scale() {
        let dense = map(&[("a", 0.9), ("b", 0.8)]);
        let keyword = map(&[("b", 100.0), ("a", 1.0)]);
        let out = fuse(&dense, &keyword, 0.5, Fusion::Rrf, 60.0);
        // Both are first on one side and second on the other: a tie, broken by key.
        assert!((out[0].1 - out[1].1).abs() < 1e-6);
        let keyword = map(&[("b", 100.0)]);
        let out = fuse(&dense, &keyword, 0.5, Fusion::Rrf, 60.0);
        assert_eq!(out[0].0, "b");
    }
}
