//! What the memory held when a turn was asked: the corpora the turn note reads (and the
//! replay's plain search), with the asking conversation left out and, when the turn is asked
//! at a given time (`at`: a replayed turn, the eval, ranker training), only what was
//! remembered before that time. One rule for every caller:
//!
//! - a record counts when its request was made before `at`;
//! - an item counts only when every record it came from was made before `at` (an item whose
//!   records are gone from the store counts from its `said_at`, and not at all without one);
//! - a note counts from its creation.
//!
//! The retriever reads dates in the question ("yesterday", "last week") against `at` too.
//! The turn note, the replay, `cairn eval note` and the ranker's training rows all read the
//! memory through this rule.
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use cairn_core::Timestamp;

use crate::Result;
use crate::memory::{ItemsIndex, Memory, NotesIndex};

/// The corpora of one turn and what decides which of their hits may be shown.
pub(crate) struct Recall {
    /// Records first, then items and notes when there are any.
    pub(crate) corpora: Vec<cairn_recall::Corpus>,
    /// The items' position in `corpora`, and their index.
    pub(crate) items: Option<(usize, Arc<dyn ItemsIndex>)>,
    /// The notes' position in `corpora`, and their index.
    pub(crate) notes: Option<(usize, Arc<dyn NotesIndex>)>,
    /// Records a review archived as duplicates (never shown).
    pub(crate) hidden: Arc<HashSet<String>>,
    /// The asking conversation.
    pub(crate) own_session: Option<String>,
    /// When the turn is asked, when it is not now.
    pub(crate) at: Option<Timestamp>,
}

impl Recall {
    /// Whether a hit may be shown. The corpora's tests already left out what may not, except
    /// a record the retriever brought in as a neighbour of one it found: that one is checked
    /// here (its session, its time, a review's archive).
    pub(crate) fn shows(&self, h: &cairn_recall::Hit) -> bool {
        if h.corpus != 0 {
            return true;
        }
        !self.hidden.contains(&h.hit.record_id)
            && self.own_session.as_deref() != Some(h.hit.session_id.as_str())
            && self.at.is_none_or(|at| h.hit.timestamp < at)
    }
}

impl Memory {
    /// The corpora a turn reads (see the module docs). `own_ids` are the asking
    /// conversation's records: an item made only from them is its own and left out.
    pub(crate) async fn recall_at(
        &self,
        at: Option<Timestamp>,
        own_session: Option<String>,
        own_ids: HashSet<String>,
        project: Option<String>,
    ) -> Result<Recall> {
        let own_session = own_session.filter(|s| !s.is_empty());
        let hidden = Arc::new(self.store.hidden_records().await?);
        // Left out before fusion, so the scores of what stays are not measured against what
        // cannot be shown.
        let keep_record: cairn_recall::KeepFn = {
            let hidden = hidden.clone();
            let own = own_session.clone();
            Arc::new(move |h: &cairn_index::TextHit| {
                own.as_deref() != Some(h.session_id.as_str())
                    && !hidden.contains(&h.record_id)
                    && at.is_none_or(|at| h.timestamp < at)
            })
        };
        let mut corpora = vec![cairn_recall::Corpus {
            text: self.text.clone(),
            vectors: self.vectors.clone(),
            keep: Some(keep_record),
            store: Some(self.store.clone()),
            before: at,
            kinds: cairn_recall::CHUNKS,
        }];
        let times = match at {
            Some(_) => Some(self.item_times().await?),
            None => None,
        };
        let mut items = None;
        if let Some(index) = &self.items
            && let Some(mut corpus) = index.corpus()
        {
            let idx = index.clone();
            corpus.keep = Some(Arc::new(move |h: &cairn_index::TextHit| {
                let before = match (&times, at) {
                    (Some(times), Some(at)) => times.get(&h.record_id).is_some_and(|t| *t < at),
                    _ => true,
                };
                // An item distilled only from the asking conversation is its own.
                before
                    && idx.item(&h.record_id).is_none_or(|i| {
                        i.sources.is_empty()
                            || !i.sources.iter().all(|r| own_ids.contains(r.as_str()))
                    })
            }));
            corpora.push(corpus);
            items = Some((corpora.len() - 1, index.clone()));
        }
        let mut notes = None;
        if let Some(index) = &self.notes
            && let Some(mut corpus) = index.corpus(project)
        {
            if let Some(at) = at {
                let created: HashMap<String, Timestamp> = self
                    .store
                    .live_notes()
                    .await?
                    .into_iter()
                    .map(|n| (n.id.as_str().to_owned(), n.created_at))
                    .collect();
                let inner = corpus.keep.clone();
                corpus.keep = Some(Arc::new(move |h: &cairn_index::TextHit| {
                    inner.as_ref().is_none_or(|k| k(h))
                        && created.get(&h.record_id).is_some_and(|t| *t < at)
                }));
            }
            corpora.push(corpus);
            notes = Some((corpora.len() - 1, index.clone()));
        }
        Ok(Recall {
            corpora,
            items,
            notes,
            hidden,
            own_session,
            at,
        })
    }

    /// When each item became known by the rule of the module docs, kept until the item log
    /// changes.
    pub(crate) async fn item_times(&self) -> Result<Arc<HashMap<String, Timestamp>>> {
        let stamp = self.store.item_log_stamp().await?;
        let mut slot = self.state.item_times.lock().await;
        if let Some((s, times)) = slot.as_ref()
            && *s == stamp
        {
            return Ok(times.clone());
        }
        let items = self.store.items(false).await?;
        let ids: Vec<String> = items
            .iter()
            .flat_map(|i| i.sources.iter().map(|s| s.as_str().to_owned()))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let places = self.store.session_places(&ids).await?;
        let mut times = HashMap::new();
        for i in &items {
            let sources: Option<Vec<Timestamp>> = i
                .sources
                .iter()
                .map(|s| places.get(s.as_str()).map(|p| p.started_at))
                .collect();
            let t = match sources {
                Some(ts) if !ts.is_empty() => ts.into_iter().max(),
                _ => i.said_at,
            };
            if let Some(t) = t {
                times.insert(i.id.as_str().to_owned(), t);
            }
        }
        let times = Arc::new(times);
        *slot = Some((stamp, times.clone()));
        Ok(times)
    }
}
