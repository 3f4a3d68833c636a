//! Duplicates and contradictions among a project's items: candidate pairs that share words
//! (or that distillation marked contradicting), weighed by their stored summary vectors,
//! their word overlap and the numbers they cite; which of two to suggest keeping.
use std::collections::{BTreeSet, HashMap, HashSet};

use cairn_core::Item;
use cairn_core::api::name_of;

use crate::entry::{Finding, item_subject, item_text};
use crate::text::{cosine, numbers, overlap, short_list, words};

/// Summary vectors at least this close make a likely duplicate.
pub const DUPLICATE_COSINE: f32 = 0.92;

/// Or this much word overlap (Jaccard) between title and summary.
pub const DUPLICATE_WORDS: f32 = 0.75;

/// Neighbours at least this close that cite different numbers may contradict.
pub const CONFLICT_COSINE: f32 = 0.80;

/// Or this much word overlap.
pub const CONFLICT_WORDS: f32 = 0.45;

/// A word in more items than this does not make two items candidates (it is everywhere).
const MAX_POSTING: usize = 400;

/// Which of two items to suggest keeping: the more important, then the better sourced, then
/// the newer.
pub(crate) fn better<'a>(a: &'a Item, b: &'a Item) -> (&'a Item, &'a Item) {
    let rank = |i: &Item| (i.importance, i.sources.len(), i.said_at);
    if rank(b) > rank(a) { (b, a) } else { (a, b) }
}

/// Of two items that disagree, the one to suggest keeping first: the one the user or the
/// agent stated over one stated only by outside text (or never checked), else the newer.
pub(crate) fn believed<'a>(a: &'a Item, b: &'a Item) -> (&'a Item, &'a Item) {
    match (a.untrusted(), b.untrusted()) {
        (true, false) => (b, a),
        (false, true) => (a, b),
        _ => newer(a, b),
    }
}

/// Why the inbox suggests keeping `keep` over `other`, when provenance decided it.
fn outside_note(keep: &Item, other: &Item) -> &'static str {
    if keep.untrusted() {
        return "";
    }
    match other.provenance {
        Some(cairn_core::Provenance::Outside) => {
            " The other is stated only by outside text (tool output, files read, fetched \
             pages), so it did not replace the first without your review."
        }
        None => " The other was distilled before Cairn checked whose text states it.",
        Some(_) => "",
    }
}

/// The newer of two items first (newer information usually replaces older).
fn newer<'a>(a: &'a Item, b: &'a Item) -> (&'a Item, &'a Item) {
    if b.said_at > a.said_at {
        (b, a)
    } else {
        (a, b)
    }
}

pub(crate) fn ordered(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_owned(), b.to_owned())
    } else {
        (b.to_owned(), a.to_owned())
    }
}

fn day(i: &Item) -> String {
    i.said_at
        .as_ref()
        .map_or("undated".into(), |t| t.format("%Y-%m-%d").to_string())
}

/// Duplicates and contradictions among `items` (compared only within one project).
pub(crate) fn pair_findings(
    items: &[Item],
    vectors: &HashMap<String, Vec<f32>>,
    marked: &HashSet<(String, String)>,
) -> Vec<Finding> {
    let mut vocab: HashMap<String, u32> = HashMap::new();
    let keys: Vec<Vec<u32>> = items
        .iter()
        .map(|i| {
            let mut ids: Vec<u32> = words(&format!("{} {}", i.title, i.summary))
                .into_iter()
                .map(|w| {
                    let next = u32::try_from(vocab.len()).unwrap_or(u32::MAX);
                    *vocab.entry(w).or_insert(next)
                })
                .collect();
            ids.sort_unstable();
            ids
        })
        .collect();
    let nums: Vec<BTreeSet<String>> = items.iter().map(|i| numbers(&item_text(i))).collect();
    // Candidate pairs, not every pair: one project, at least two title or summary words in
    // common that are not everywhere (one, for very short keys); and every pair distillation
    // marked contradicting.
    let mut postings: HashMap<u32, Vec<usize>> = HashMap::new();
    for (n, k) in keys.iter().enumerate() {
        for w in k {
            postings.entry(*w).or_default().push(n);
        }
    }
    let mut pairs: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (x, k) in keys.iter().enumerate() {
        let mut shared: HashMap<usize, u32> = HashMap::new();
        for w in k {
            let Some(list) = postings.get(w).filter(|l| l.len() <= MAX_POSTING) else {
                continue;
            };
            for &y in list {
                if y > x && items[y].project == items[x].project {
                    *shared.entry(y).or_default() += 1;
                }
            }
        }
        for (y, n) in shared {
            if n >= 2 || k.len().min(keys[y].len()) <= 2 {
                pairs.insert((x, y));
            }
        }
    }
    let position: HashMap<&str, usize> = items
        .iter()
        .enumerate()
        .map(|(n, i)| (i.id.as_str(), n))
        .collect();
    for (a, b) in marked {
        if let (Some(&x), Some(&y)) = (position.get(a.as_str()), position.get(b.as_str()))
            && items[x].project == items[y].project
        {
            pairs.insert((x.min(y), x.max(y)));
        }
    }
    let mut out = Vec::new();
    for (x, y) in pairs {
        let (a, b) = (&items[x], &items[y]);
        let cos = match (vectors.get(a.id.as_str()), vectors.get(b.id.as_str())) {
            (Some(va), Some(vb)) => cosine(va, vb),
            _ => 0.0,
        };
        let jac = overlap(&keys[x], &keys[y]);
        let sim = cos.max(jac);
        let differ = !nums[x].is_empty() && !nums[y].is_empty() && nums[x] != nums[y];
        if marked.contains(&ordered(a.id.as_str(), b.id.as_str())) {
            let (keep, other) = believed(a, b);
            let which = if outside_note(keep, other).is_empty() {
                "the newer"
            } else {
                "the first"
            };
            out.push(Finding {
                category: "contradiction",
                reason: format!(
                    "Distillation found these two disagree; {which} ({}) is suggested to stay.{}",
                    day(keep),
                    outside_note(keep, other)
                ),
                score: sim.max(0.5),
                subjects: vec![item_subject(keep), item_subject(other)],
            });
        } else if differ && (cos >= CONFLICT_COSINE || jac >= CONFLICT_WORDS) {
            let (keep, other) = believed(a, b);
            let (nk, no) = if std::ptr::eq(keep, a) {
                (x, y)
            } else {
                (y, x)
            };
            let only_keep: Vec<String> = nums[nk].difference(&nums[no]).cloned().collect();
            let only_other: Vec<String> = nums[no].difference(&nums[nk]).cloned().collect();
            out.push(Finding {
                category: "contradiction",
                reason: format!(
                    "About the same thing with different numbers or dates: {} ({}) against {} ({}).{}",
                    short_list(&only_keep),
                    day(keep),
                    short_list(&only_other),
                    day(other),
                    outside_note(keep, other)
                ),
                score: sim,
                subjects: vec![item_subject(keep), item_subject(other)],
            });
        } else if cos >= DUPLICATE_COSINE || jac >= DUPLICATE_WORDS {
            let (keep, other) = better(a, b);
            out.push(Finding {
                category: "duplicate",
                reason: format!(
                    "Near-identical {}s ({:.0}% alike); merging keeps every source and fact of both.",
                    name_of(&a.kind),
                    sim * 100.0
                ),
                score: sim,
                subjects: vec![item_subject(keep), item_subject(other)],
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(id: &str, title: &str, summary: &str) -> Item {
        let v = serde_json::json!({"id": id, "kind": "fact", "title": title,
            "summary": summary, "body": "", "cues": [], "concepts": [], "importance": 3,
            "certainty": "stated", "project": "p", "sources": [], "archived": false});
        serde_json::from_value(v).expect("an item")
    }

    #[test]
    fn pairs_are_weighed_among_items_that_share_words_and_marked_ones() {
        let items = vec![
            fact(
                "i_a",
                "Release builds need the locked flag",
                "cargo build --locked in CI",
            ),
            fact(
                "i_b",
                "Release builds need the locked flag",
                "cargo build --locked in CI",
            ),
            fact(
                "i_c",
                "Deploys go out on Tuesdays",
                "after the staging soak passes",
            ),
            fact("i_d", "Lunch order", "pizza from the corner shop"),
        ];
        // i_c's vector equals i_a's, but they share no word: never weighed.
        let v = vec![1.0f32, 0.0, 0.0];
        let vectors: HashMap<String, Vec<f32>> = ["i_a", "i_b", "i_c"]
            .iter()
            .map(|i| ((*i).to_owned(), v.clone()))
            .collect();
        let marked = HashSet::from([ordered("i_d", "i_c")]);
        let found: Vec<(String, Vec<String>)> = pair_findings(&items, &vectors, &marked)
            .into_iter()
            .map(|f| {
                let mut ids: Vec<String> = f.subjects.iter().map(|s| s.id.clone()).collect();
                ids.sort();
                (f.category.to_owned(), ids)
            })
            .collect();
        assert_eq!(
            found,
            vec![
                (
                    "duplicate".to_owned(),
                    vec!["i_a".to_owned(), "i_b".to_owned()]
                ),
                (
                    "contradiction".to_owned(),
                    vec!["i_c".to_owned(), "i_d".to_owned()]
                ),
            ]
        );
    }
}
