//! Function words a keyword query can do without: question words, auxiliaries, pronouns,
//! articles and prepositions. They occur in most records, so in BM25 they only add noise
//! to the ranking ("What did she say about the deploy?" is about `deploy`).

/// English function words, lower case, sorted (searched by binary search).
const STOP: &[&str] = &[
    "a",
    "about",
    "after",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "during",
    "each",
    "for",
    "from",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "kind",
    "me",
    "might",
    "more",
    "most",
    "my",
    "myself",
    "of",
    "on",
    "or",
    "other",
    "our",
    "ours",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "too",
    "type",
    "very",
    "was",
    "way",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
];

fn is_stop(word: &str) -> bool {
    let w: String = word
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    !w.is_empty() && STOP.binary_search(&w.as_str()).is_ok()
}

/// The query with its function words left out, for BM25. A query written in the keyword
/// syntax (quotes, a field, `+`/`-`, brackets) is left as it is, and so is one made only of
/// function words: the words then are the question.
pub fn keyword_text(text: &str) -> String {
    if text.contains(['"', ':', '(', ')', '[', ']'])
        || text.split_whitespace().any(|w| w.starts_with(['+', '-']))
    {
        return text.to_owned();
    }
    let kept: Vec<&str> = text.split_whitespace().filter(|w| !is_stop(w)).collect();
    if kept.is_empty() {
        text.to_owned()
    } else {
        kept.join(" ")
    }
}

/// How many content words the text has: its words (runs of letters and digits) that are
/// not function words.
pub fn content_words(text: &str) -> usize {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !is_stop(w))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_words_leave_function_words_out() {
        assert_eq!(content_words("what is next?"), 1);
        assert_eq!(content_words("Start Phase 3"), 3);
        assert_eq!(content_words("the and of"), 0);
        assert_eq!(content_words("fix src/main.rs: port 8080"), 6);
    }

    #[test]
    fn the_list_is_sorted_for_binary_search() {
        assert!(STOP.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn function_words_go_and_content_words_stay() {
        assert_eq!(
            keyword_text("What did Caroline say about the deploy?"),
            "Caroline say deploy?"
        );
        assert_eq!(keyword_text("When is it?"), "When is it?");
        assert_eq!(
            keyword_text("\"the deploy\" script"),
            "\"the deploy\" script"
        );
        assert_eq!(keyword_text("-what deploy"), "-what deploy");
    }
}
