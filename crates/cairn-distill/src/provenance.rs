//! Whose text states an item, checked by code: the model says which kind of text states each
//! item, and its word is kept only when the conversation bears it out. An item is stated by
//! outside text (tool output, fetched pages, files read) when its distinctive content — the
//! identifiers, paths, numbers and backticked spans of its title, summary and body, and its
//! rarer words — occurs in the window's outside text but not in what the user or the agent
//! wrote. The model's "outside" is always kept; its "user" or "agent" is lowered to what the
//! check finds, never raised.
//!
//! The whole window is read, not only the requests the model cites: a citation is the
//! model's word too, and an instruction hidden in a tool output could make it cite another
//! request.
use std::collections::BTreeSet;

use cairn_core::{Provenance, Record};

/// Words too common to tell where a statement came from.
const COMMON: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "against",
    "along",
    "already",
    "also",
    "always",
    "among",
    "another",
    "anything",
    "around",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "cannot",
    "could",
    "does",
    "doing",
    "done",
    "during",
    "each",
    "either",
    "every",
    "everything",
    "first",
    "found",
    "from",
    "given",
    "have",
    "having",
    "here",
    "instead",
    "into",
    "itself",
    "just",
    "later",
    "least",
    "less",
    "like",
    "made",
    "make",
    "makes",
    "many",
    "might",
    "more",
    "most",
    "much",
    "must",
    "need",
    "needs",
    "never",
    "next",
    "none",
    "nothing",
    "often",
    "once",
    "only",
    "other",
    "others",
    "over",
    "same",
    "should",
    "since",
    "some",
    "something",
    "still",
    "such",
    "than",
    "that",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "though",
    "through",
    "under",
    "until",
    "upon",
    "used",
    "uses",
    "using",
    "very",
    "want",
    "wants",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "with",
    "within",
    "without",
    "would",
    "your",
    "user",
    "users",
    "agent",
    "project",
    "asked",
    "means",
    "shows",
    "works",
    "stated",
    "store",
    "stored",
    "remember",
];

/// The distinctive content of an item's text: strong marks (identifiers, paths, numbers,
/// backticked spans) and rarer words, lower-cased.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// Identifiers, paths, numbers and backticked spans.
    pub strong: BTreeSet<String>,
    /// Words of five letters or more that are not common.
    pub words: BTreeSet<String>,
}

fn is_strong(token: &str) -> bool {
    let chars: Vec<char> = token.chars().collect();
    if chars.len() < 2 {
        return false;
    }
    let digits = chars.iter().filter(|c| c.is_ascii_digit()).count();
    if digits > 0 {
        // A lone digit or a two-digit number says little; a longer number does.
        return chars.len() >= 3 || digits < chars.len();
    }
    let inner = &chars[1..chars.len() - 1];
    chars
        .iter()
        .any(|c| matches!(c, '_' | '/' | '~' | '$' | '@'))
        || inner
            .iter()
            .any(|c| matches!(c, '.' | ':' | '-' | '=' | '\\'))
        || (chars[1..].iter().any(|c| c.is_uppercase()) && chars.iter().any(|c| c.is_lowercase()))
}

/// The marks of `text`.
pub fn marks(text: &str) -> Marks {
    let mut m = Marks::default();
    // Backticked spans, whole.
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('`') else { break };
        let span = after[..end].trim();
        if span.chars().count() >= 3 && !span.contains('\n') {
            m.strong.insert(span.to_lowercase());
        }
        rest = &after[end + 1..];
    }
    for raw in text.split(|c: char| c.is_whitespace() || "`'\"()[]{}<>,;|*".contains(c)) {
        let token = raw.trim_matches(|c: char| ".:!?-=".contains(c));
        if token.is_empty() {
            continue;
        }
        if is_strong(token) {
            m.strong.insert(token.to_lowercase());
        } else if token.chars().count() >= 5 && token.chars().all(char::is_alphabetic) {
            let w = token.to_lowercase();
            if !COMMON.contains(&w.as_str()) {
                m.words.insert(w);
            }
        }
    }
    m
}

/// A window's text by who wrote it, lower-cased, for the check.
#[derive(Debug, Default)]
pub struct WindowText {
    user: String,
    agent: String,
    outside: String,
}

impl WindowText {
    /// The text of `records` by provenance (injected context left out, as the model saw it).
    pub fn of(records: &[Record]) -> Self {
        let mut w = Self::default();
        for r in records {
            for part in r.record.parts() {
                let into = match part.provenance {
                    Provenance::User => &mut w.user,
                    Provenance::Agent => &mut w.agent,
                    Provenance::Outside => &mut w.outside,
                };
                into.push_str(&crate::prompt::distillable(&part.text).to_lowercase());
                into.push('\n');
            }
        }
        w
    }

    /// The most trusted text that holds `mark`, if any does.
    fn level(&self, mark: &str) -> Option<Provenance> {
        if self.user.contains(mark) {
            Some(Provenance::User)
        } else if self.agent.contains(mark) {
            Some(Provenance::Agent)
        } else if self.outside.contains(mark) {
            Some(Provenance::Outside)
        } else {
            None
        }
    }

    /// What the text of an item shows about who stated it: the least trusted text that
    /// alone holds one of its strong marks, or outside when most of its rarer words found in
    /// the window are found only in outside text; `None` when nothing tells.
    pub fn check(&self, item_text: &str) -> Option<Provenance> {
        let m = marks(item_text);
        let strong = m.strong.iter().filter_map(|s| self.level(s)).min();
        let found: Vec<Provenance> = m.words.iter().filter_map(|w| self.level(w)).collect();
        let outside_words = found.iter().filter(|p| **p == Provenance::Outside).count();
        let words =
            (!found.is_empty() && outside_words * 2 > found.len()).then_some(Provenance::Outside);
        match (strong, words) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The provenance an item keeps: what the model claimed (anything but `user` or `agent`,
/// or nothing, counts as outside), lowered to what the check finds.
pub fn verified(claim: Option<&str>, item_text: &str, window: &WindowText) -> Provenance {
    let claimed = match claim.map(str::trim) {
        Some("user") => Provenance::User,
        Some("agent") => Provenance::Agent,
        _ => return Provenance::Outside,
    };
    match window.check(item_text) {
        Some(found) => claimed.min(found),
        None => claimed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(parts: &[(&str, &str)]) -> WindowText {
        let mut w = WindowText::default();
        for (who, text) in parts {
            let into = match *who {
                "user" => &mut w.user,
                "agent" => &mut w.agent,
                _ => &mut w.outside,
            };
            into.push_str(&text.to_lowercase());
        }
        w
    }

    #[test]
    fn marks_are_identifiers_paths_numbers_and_rarer_words() {
        let m = marks("The deploy key is in `~/.ssh/id_ed25519_prod`; relay listens on 7420.");
        assert!(m.strong.contains("~/.ssh/id_ed25519_prod"), "{m:?}");
        assert!(m.strong.contains("7420"), "{m:?}");
        assert!(
            m.words.contains("deploy") && m.words.contains("listens"),
            "{m:?}"
        );
        assert!(!m.words.contains("the") && !m.strong.contains("is"));
        assert!(marks("tokio 1.38 and HashMap").strong.contains("hashmap"));
    }

    #[test]
    fn a_claim_is_lowered_to_what_the_window_shows_never_raised() {
        let w = window(&[
            ("user", "where is the deploy key?"),
            ("agent", "Let me look."),
            ("outside", "deploy key is in ~/.ssh/id_ed25519_prod"),
        ]);
        let text = "Deploy key location: the deploy key is in ~/.ssh/id_ed25519_prod";
        assert_eq!(verified(Some("user"), text, &w), Provenance::Outside);
        assert_eq!(verified(Some("agent"), text, &w), Provenance::Outside);
        // Said by the agent too: the agent's word.
        let w2 = window(&[
            ("user", "where is the deploy key?"),
            ("agent", "It is ~/.ssh/id_ed25519_prod."),
            ("outside", "deploy key is in ~/.ssh/id_ed25519_prod"),
        ]);
        assert_eq!(verified(Some("agent"), text, &w2), Provenance::Agent);
        assert_eq!(verified(Some("user"), text, &w2), Provenance::Agent);
        // The model's "outside" stays, whatever the window holds; no claim is outside.
        assert_eq!(verified(Some("outside"), text, &w2), Provenance::Outside);
        assert_eq!(verified(None, text, &w2), Provenance::Outside);
        assert_eq!(verified(Some("system"), text, &w2), Provenance::Outside);
        // Nothing distinctive found anywhere: the claim stands.
        assert_eq!(
            verified(
                Some("user"),
                "Prefers tabs.",
                &window(&[("user", "tabs please")])
            ),
            Provenance::User
        );
    }

    #[test]
    fn most_rarer_words_only_in_outside_text_make_it_outside() {
        let w = window(&[
            ("user", "summarise the readme"),
            (
                "outside",
                "maintainers rotate credentials quarterly through vaultwarden",
            ),
        ]);
        let text = "Maintainers rotate credentials quarterly through vaultwarden.";
        assert_eq!(verified(Some("agent"), text, &w), Provenance::Outside);
    }
}
