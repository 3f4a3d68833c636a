//! The words and numbers the checks compare: content words without function words, the
//! numbers and dates a text cites, overlaps and cosines, and text cut to one line.
use std::collections::{BTreeSet, HashSet};

const STOP: &[&str] = &[
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "was", "were", "be",
    "it", "its", "this", "that", "with", "as", "at", "by", "we", "our", "you", "your", "i", "not",
    "no", "do", "does", "from", "use", "uses", "used", "so", "but", "if", "then", "than", "has",
    "have", "had", "will", "should", "must", "can", "all", "any", "always", "never", "when",
    "which", "what", "there", "their", "they", "them",
];

/// Content words, lower-cased (numbers kept).
pub(crate) fn words(s: &str) -> HashSet<String> {
    s.split(|c: char| !c.is_alphanumeric() && c != '.' && c != '-' && c != '_')
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty() && (w.len() > 1 || w.chars().all(|c| c.is_ascii_digit())))
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect()
}

#[cfg(test)]
pub(crate) fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let inter = a.intersection(b).count();
    let union = a.len() + b.len() - inter;
    inter as f32 / union as f32
}

/// The numbers and dates a text cites (`6543`, `1.0.200`, `2026-05-01`), as written.
pub(crate) fn numbers(s: &str) -> BTreeSet<String> {
    s.split(|c: char| c.is_whitespace() || ",;:()[]{}\"'`=<>".contains(c))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .map(|w| {
            w.strip_prefix(['v', 'V'])
                .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
                .unwrap_or(w)
        })
        .filter(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .collect()
}

pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na <= 0.0 || nb <= 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Sorted word ids: a Jaccard overlap by merging two short lists.
pub(crate) fn overlap(a: &[u32], b: &[u32]) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut inter) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += 1;
                i += 1;
                j += 1;
            }
        }
    }
    inter as f32 / (a.len() + b.len() - inter) as f32
}

/// A text on one line, cut to `max` characters.
pub(crate) fn one_line(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    cairn_text::chunk::cut(&flat, max)
}

pub(crate) fn short_list(v: &[String]) -> String {
    let shown: Vec<String> = v.iter().take(3).map(|s| format!("`{s}`")).collect();
    let more = v.len().saturating_sub(3);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairs::{CONFLICT_WORDS, DUPLICATE_WORDS};

    #[test]
    fn numbers_and_words_tell_a_contradiction_from_a_duplicate() {
        let a = numbers("Staging Postgres listens on 6543 since 2026-05-01.");
        let b = numbers("Staging Postgres listens on 5432 since 2026-05-01.");
        assert_ne!(a, b);
        assert!(a.contains("6543") && a.contains("2026-05-01"));
        assert!(
            numbers("utf8 and sha256 in x86_64 builds").is_empty(),
            "names are not numbers"
        );
        assert_eq!(
            numbers("pinned serde to v1.0.200"),
            numbers("pinned serde to 1.0.200")
        );
        let wa = words("Staging Postgres listens on port 6543");
        let wb = words("staging postgres listens on port 5432");
        assert!(jaccard(&wa, &wb) > CONFLICT_WORDS);
        assert!(jaccard(&wa, &wa) >= DUPLICATE_WORDS);
    }
}
