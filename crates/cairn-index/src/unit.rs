//! What each indexed unit carries besides its own words: who made the request (a named
//! speaker), when (the date in words) and where (framework and project). Questions name
//! people, months and projects; a turn's own words rarely do. The keyword index searches
//! these words in a field of their own, and the embedder reads the author and date before
//! the passage, so both sides of search can match them.
use cairn_core::NewRecord;

/// The version of what the embedder reads for a unit ([`embed_text`]): stored with every
/// vector beside the model's id, so a change re-embeds everything from the log.
pub const RECIPE: &str = "unit-3";

/// The date in words, as people ask about it: `8 May 2023`.
pub fn date_words(rec: &NewRecord) -> String {
    rec.started_at.format("%-d %B %Y").to_string()
}

/// The last part of a project identity (`github.com/acme/shop` → `shop`).
fn project_name(identity: &str) -> &str {
    identity
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\', ':'])
        .next()
        .unwrap_or(identity)
}

/// The words indexed beside a record's text: author, date, framework, project.
pub fn context(rec: &NewRecord) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(a) = rec.author.as_deref().filter(|a| !a.trim().is_empty()) {
        parts.push(a.trim().to_owned());
    }
    parts.push(date_words(rec));
    parts.push(rec.framework.clone());
    if let Some(p) = rec.project.as_deref() {
        parts.push(project_name(p).to_owned());
    }
    parts.join(" · ")
}

/// What the embedder reads for one piece of a record: its author, when the source names
/// one, then the piece (`Caroline: …`). Dates are left to the keyword side and to the
/// retriever's date understanding: in the embedded text they made dense search worse.
pub fn embed_text(rec: &NewRecord, piece: &str) -> String {
    match rec.author.as_deref().filter(|a| !a.trim().is_empty()) {
        Some(a) => format!("{}: {piece}", a.trim()),
        None => piece.to_owned(),
    }
}

/// The id stored with every vector: the embedding model's and [`RECIPE`]. A change of
/// either re-embeds from the log.
pub fn vectors_id(model_id: &str) -> String {
    format!("{model_id}+{RECIPE}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(author: Option<&str>, project: Option<&str>) -> NewRecord {
        NewRecord {
            id: cairn_core::RecordId::derive("t", "s", "1"),
            framework: "codex".into(),
            session_id: "s".into(),
            project: project.map(str::to_owned),
            cwd: None,
            model: None,
            outcome: cairn_core::Outcome::Success,
            started_at: chrono::DateTime::from_timestamp(1_683_553_000, 0).unwrap_or_default(),
            ended_at: None,
            request: "hello".into(),
            author: author.map(str::to_owned),
            text: "hello".into(),
            content: serde_json::json!({}),
            source: None,
        }
    }

    #[test]
    fn context_says_who_when_and_where() {
        assert_eq!(
            context(&rec(Some("Caroline"), Some("github.com/acme/shop"))),
            "Caroline · 8 May 2023 · codex · shop"
        );
        assert_eq!(context(&rec(None, None)), "8 May 2023 · codex");
        assert_eq!(
            embed_text(&rec(Some("Caroline"), None), "I went hiking"),
            "Caroline: I went hiking"
        );
        assert_eq!(embed_text(&rec(None, None), "fix it"), "fix it");
    }
}
