//! `open` and `explore`: one thing whole, and what relates to it. Records relate through their
//! conversation (same session), their project, and the concepts they share (distinctive words
//! of their text, weighed by how rare they are in the whole index); items bring typed
//! relations later.
use std::collections::{HashMap, HashSet, VecDeque};

use cairn_core::api::{
    ExploreEdge, ExploreNode, ExploreReq, ExploreRes, OpenReq, OpenRes, OpenedRecord, TurnView,
};
use cairn_core::{ErrorCode, ItemId, NoteId, Record, RecordId};
use cairn_index::TextQuery;

use crate::service::turn_view;
use crate::{ApiError, Result, Service};

/// Concepts taken from one record or note.
const CONCEPTS_PER_NODE: usize = 5;
/// Records reached from one concept.
const RECORDS_PER_CONCEPT: usize = 5;

/// Words too common to be a concept.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was",
    "one", "our", "out", "has", "have", "him", "his", "how", "its", "may", "new", "now", "old",
    "see", "two", "way", "who", "did", "get", "got", "let", "put", "say", "she", "too", "use",
    "that", "this", "with", "from", "they", "will", "would", "there", "their", "what", "about",
    "which", "when", "make", "like", "time", "just", "know", "take", "into", "your", "some",
    "could", "them", "than", "then", "look", "only", "come", "over", "think", "also", "back",
    "after", "work", "first", "well", "even", "want", "because", "these", "give", "most", "should",
    "been", "were", "here", "does", "done", "doing", "each", "more", "much", "very", "need",
    "needs", "used", "using", "file", "files", "line", "lines", "true", "false", "null", "none",
    "self", "thing", "things", "sure", "okay", "yes", "please", "thanks", "still", "same", "other",
    "where", "while", "those", "such", "why", "again", "before", "between", "both", "down", "off",
    "once", "under", "until", "upon", "whether", "without", "within", "let's", "i'm", "it's",
    "don't", "can't", "won't", "isn't", "doesn't", "didn't",
];

/// The distinctive words of a text: frequent in it, rare in the index. Best first.
fn concepts_of(text: &str, doc_freq: &dyn Fn(&str) -> u64, total: u64) -> Vec<String> {
    let mut tf: HashMap<String, u32> = HashMap::new();
    for word in text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '\''))
        .map(|w| w.trim_matches(|c: char| c == '-' || c == '\'' || c == '_'))
    {
        let w = word.to_lowercase();
        if w.chars().count() < 3
            || w.len() > 40
            || w.chars().all(|c| c.is_ascii_digit())
            || STOPWORDS.contains(&w.as_str())
            || w.starts_with("redacted")
        {
            continue;
        }
        *tf.entry(w).or_default() += 1;
    }
    let total = total.max(1) as f64;
    let mut scored: Vec<(String, f64)> = tf
        .into_iter()
        .filter_map(|(w, n)| {
            let df = doc_freq(&w);
            // A word in (almost) no other document links nothing; one everywhere means nothing.
            if df < 2 || df as f64 > total * 0.2 {
                return None;
            }
            let idf = (total / df as f64).ln();
            Some((w, f64::from(n).sqrt() * idf))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    scored.into_iter().map(|(w, _)| w).collect()
}

fn short(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let mut out: String = line.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn ts(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn record_node(r: &Record, depth: u32) -> ExploreNode {
    ExploreNode {
        id: r.record.id.to_string(),
        kind: "record".into(),
        label: short(&r.record.request, 120),
        depth,
        framework: Some(r.record.framework.clone()),
        project: r.record.project.clone(),
        timestamp: Some(ts(&r.record.started_at)),
    }
}

fn concept_node(term: &str, depth: u32) -> ExploreNode {
    ExploreNode {
        id: format!("concept:{term}"),
        kind: "concept".into(),
        label: term.to_owned(),
        depth,
        framework: None,
        project: None,
        timestamp: None,
    }
}

fn edge(from: &str, to: &str, relation: &str) -> ExploreEdge {
    ExploreEdge {
        from: from.to_owned(),
        to: to.to_owned(),
        relation: relation.to_owned(),
    }
}

impl Service {
    async fn record_or_404(&self, id: &str) -> Result<Record> {
        self.store()
            .record(&RecordId::new(id))
            .await?
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no record {id}")))
    }

    pub(crate) async fn open(&self, req: OpenReq) -> Result<OpenRes> {
        let id = req.id.trim();
        if id.starts_with(NoteId::PREFIX) {
            let doc = self
                .notes()?
                .get_by_id(id)
                .await
                .map_err(crate::notes_index::err)?;
            return Ok(OpenRes {
                kind: "note".into(),
                record: None,
                item: None,
                note: Some(doc),
            });
        }
        if id.starts_with(ItemId::PREFIX) {
            return Ok(OpenRes {
                kind: "item".into(),
                record: None,
                item: Some(self.opened_item(id).await?),
                note: None,
            });
        }
        if !id.starts_with(RecordId::PREFIX) {
            return Err(ApiError::bad_request(format!(
                "{id:?} is not an id Cairn gave out: record ids start with {}, item ids with {}, \
                 note ids with {}",
                RecordId::PREFIX,
                ItemId::PREFIX,
                NoteId::PREFIX
            )));
        }
        let record = self.record_or_404(id).await?;
        Ok(OpenRes {
            kind: "record".into(),
            record: Some(self.opened_record(&record).await?),
            item: None,
            note: None,
        })
    }

    /// A record whole, with where it sits in its conversation.
    pub(crate) async fn opened_record(&self, record: &Record) -> Result<OpenedRecord> {
        let session = self
            .store()
            .session_records(&record.record.framework, &record.record.session_id)
            .await?;
        let index = session
            .iter()
            .position(|r| r.record.id == record.record.id)
            .unwrap_or(0);
        let neighbours = [index.checked_sub(1), Some(index + 1)]
            .into_iter()
            .flatten()
            .filter_map(|i| session.get(i))
            .map(|r| r.record.id.to_string())
            .collect();
        let turn: TurnView = turn_view(record);
        Ok(OpenedRecord {
            framework: record.record.framework.clone(),
            session_id: record.record.session_id.clone(),
            project: record.record.project.clone(),
            cwd: record.record.cwd.clone(),
            turn,
            position: index as u64 + 1,
            session_turns: session.len() as u64,
            neighbours,
        })
    }

    pub(crate) async fn explore(&self, req: ExploreReq) -> Result<ExploreRes> {
        if !self.memory_enabled() {
            return Err(ApiError::new(
                ErrorCode::MemoryOff,
                "memory is off: explore is stopped",
            ));
        }
        let depth = req.depth.unwrap_or(1).clamp(1, 3);
        let limit = req.limit.unwrap_or(20).clamp(1, 100) as usize;
        let text = self.text_index();
        let total = text.num_docs();
        let df = |w: &str| text.doc_freq(w);

        let start = match (req.id.as_deref().map(str::trim), req.concept.as_deref()) {
            (Some(id), None) if !id.is_empty() => {
                if id.starts_with(NoteId::PREFIX) {
                    let doc = self
                        .notes()?
                        .get_by_id(id)
                        .await
                        .map_err(crate::notes_index::err)?;
                    ExploreNode {
                        id: doc.note.id.clone(),
                        kind: "note".into(),
                        label: doc.note.title.clone(),
                        depth: 0,
                        framework: None,
                        project: doc.note.project.clone(),
                        timestamp: Some(doc.note.updated_at.clone()),
                    }
                } else if id.starts_with(ItemId::PREFIX) {
                    crate::items_api::item_node(&self.item_or_404(id).await?, 0)
                } else if let Some(c) = id.strip_prefix("concept:") {
                    concept_node(&c.to_lowercase(), 0)
                } else {
                    record_node(&self.record_or_404(id).await?, 0)
                }
            }
            (None, Some(c)) if !c.trim().is_empty() => {
                let c = c.trim().to_lowercase();
                if c.len() > 200 {
                    return Err(ApiError::bad_request(
                        "a concept is a word or a short phrase (at most 200 bytes)",
                    ));
                }
                concept_node(&c, 0)
            }
            _ => {
                return Err(ApiError::bad_request(
                    "give either an id (a record, item or note id from search) or a concept, not both",
                ));
            }
        };

        let mut seen: HashSet<String> = HashSet::from([start.id.clone()]);
        let mut nodes: Vec<ExploreNode> = Vec::new();
        let mut edges: Vec<ExploreEdge> = Vec::new();
        let mut queue: VecDeque<ExploreNode> = VecDeque::from([start.clone()]);
        while let Some(node) = queue.pop_front() {
            if node.depth >= depth || nodes.len() >= limit {
                continue;
            }
            let next = node.depth + 1;
            let mut found: Vec<(ExploreNode, &'static str)> = Vec::new();
            match node.kind.as_str() {
                "record" => {
                    let r = self.record_or_404(&node.id).await?;
                    let body = format!(
                        "{}\n{}\n{}",
                        r.record.request, r.record.request, r.record.text
                    );
                    for c in concepts_of(&body, &df, total)
                        .into_iter()
                        .take(CONCEPTS_PER_NODE)
                    {
                        found.push((concept_node(&c, next), "mentions"));
                    }
                    let session = self
                        .store()
                        .session_records(&r.record.framework, &r.record.session_id)
                        .await?;
                    if let Some(i) = session.iter().position(|x| x.record.id == r.record.id) {
                        for j in [i.checked_sub(1), Some(i + 1)].into_iter().flatten() {
                            if let Some(n) = session.get(j) {
                                found.push((record_node(n, next), "same_session"));
                            }
                        }
                    }
                }
                "item" => {
                    let item = self.item_or_404(&node.id).await?;
                    for rel in self.store().relations_of(&item.id).await? {
                        let other = if rel.from == item.id {
                            &rel.to
                        } else {
                            &rel.from
                        };
                        if let Some(o) = self.store().item(other).await? {
                            let kind = crate::items_api::relation_name(rel.kind);
                            found.push((crate::items_api::item_node(&o, next), kind));
                        }
                    }
                    for c in item.concepts.iter().take(CONCEPTS_PER_NODE) {
                        found.push((concept_node(&c.to_lowercase(), next), "mentions"));
                    }
                    for src in &item.sources {
                        if let Some(r) = self.store().record(src).await? {
                            found.push((record_node(&r, next), "source"));
                        }
                    }
                }
                "note" => {
                    let doc = self
                        .notes()?
                        .get_by_id(&node.id)
                        .await
                        .map_err(crate::notes_index::err)?;
                    let body = format!("{}\n{}\n{}", doc.note.title, doc.note.title, doc.content);
                    for c in concepts_of(&body, &df, total)
                        .into_iter()
                        .take(CONCEPTS_PER_NODE)
                    {
                        found.push((concept_node(&c, next), "mentions"));
                    }
                }
                _ => {
                    // A concept: the items, records and notes that are about it.
                    let term = node.label.clone();
                    for item in self.items_with_concept(&term, RECORDS_PER_CONCEPT).await? {
                        found.push((crate::items_api::item_node(&item, next), "mentions"));
                    }
                    let mut q = TextQuery::new(
                        &format!("\"{}\"", term.replace('"', " ")),
                        RECORDS_PER_CONCEPT,
                    );
                    q.project = None;
                    let hits = text
                        .search(&q)
                        .map_err(|e| ApiError::bad_request(e.to_string()))?;
                    for h in hits {
                        if let Some(r) = self.store().record(&RecordId::new(&h.record_id)).await? {
                            found.push((record_node(&r, next), "mentions"));
                        }
                    }
                    for n in self.search_notes_for(&term, 3).await? {
                        found.push((
                            ExploreNode {
                                id: n.note.id.clone(),
                                kind: "note".into(),
                                label: n.note.title.clone(),
                                depth: next,
                                framework: None,
                                project: n.note.project.clone(),
                                timestamp: Some(n.note.updated_at.clone()),
                            },
                            "mentions",
                        ));
                    }
                }
            }
            for (n, relation) in found {
                edges.push(edge(&node.id, &n.id, relation));
                if seen.insert(n.id.clone()) && nodes.len() < limit {
                    nodes.push(n.clone());
                    queue.push_back(n);
                }
            }
        }
        // Keep only edges between nodes that were kept.
        let kept: HashSet<&str> = nodes
            .iter()
            .map(|n| n.id.as_str())
            .chain([start.id.as_str()])
            .collect();
        edges.retain(|e| kept.contains(e.from.as_str()) && kept.contains(e.to.as_str()));
        edges.dedup_by(|a, b| a.from == b.from && a.to == b.to);
        Ok(ExploreRes {
            start,
            nodes,
            edges,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concepts_prefer_rare_repeated_words_and_skip_noise() {
        let df = |w: &str| match w {
            "postgres" => 3,
            "migration" => 5,
            "timeout" => 40,
            "cargo" => 900,
            _ => 1,
        };
        let text = "The postgres migration failed with a timeout. Postgres again: migration 0042, \
                    cargo build, cargo test, the the the 12345";
        let c = concepts_of(text, &df, 1000);
        assert_eq!(c.first().map(String::as_str), Some("postgres"));
        assert!(c.contains(&"migration".to_owned()));
        assert!(!c.contains(&"the".to_owned()), "stopwords are not concepts");
        assert!(
            !c.contains(&"cargo".to_owned()),
            "a word in most documents is not a concept"
        );
        assert!(!c.contains(&"12345".to_owned()));
        assert!(
            !c.contains(&"failed".to_owned()),
            "a word in no other document links nothing"
        );
    }
}
