//! The last few query vectors, kept: a turn's note and a search of the same words (the
//! replay's baseline, a search typed again) embed the query once. Only single-text calls are
//! kept — queries; a batch of records' chunks goes straight to the model.
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use cairn_core::ports::{BackendError, Embedder};

/// Query vectors kept.
const KEPT: usize = 32;

/// An embedder that remembers its last [`KEPT`] single-text answers.
pub(crate) struct QueryMemo {
    inner: Arc<dyn Embedder>,
    kept: Mutex<VecDeque<(String, Vec<f32>)>>,
}

impl QueryMemo {
    pub(crate) fn new(inner: Arc<dyn Embedder>) -> Self {
        Self {
            inner,
            kept: Mutex::new(VecDeque::with_capacity(KEPT)),
        }
    }
}

impl Embedder for QueryMemo {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, BackendError> {
        let [text] = texts else {
            return self.inner.embed(texts);
        };
        {
            let kept = self
                .kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((_, v)) = kept.iter().find(|(t, _)| t == text) {
                return Ok(vec![v.clone()]);
            }
        }
        let vectors = self.inner.embed(texts)?;
        if let Some(v) = vectors.first() {
            let mut kept = self
                .kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if kept.len() == KEPT {
                kept.pop_front();
            }
            kept.push_back(((*text).to_owned(), v.clone()));
        }
        Ok(vectors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting(AtomicUsize);

    impl Embedder for Counting {
        fn model_id(&self) -> &str {
            "counting"
        }
        fn dim(&self) -> usize {
            1
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, BackendError> {
            self.0.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
        }
    }

    #[test]
    fn a_repeated_query_is_embedded_once_and_batches_are_not_kept() {
        let inner = Arc::new(Counting(AtomicUsize::new(0)));
        let memo = QueryMemo::new(inner.clone());
        assert_eq!(memo.embed(&["which port"]).unwrap(), vec![vec![10.0]]);
        assert_eq!(memo.embed(&["which port"]).unwrap(), vec![vec![10.0]]);
        assert_eq!(inner.0.load(Ordering::SeqCst), 1);
        memo.embed(&["a", "bb"]).unwrap();
        memo.embed(&["a", "bb"]).unwrap();
        assert_eq!(inner.0.load(Ordering::SeqCst), 5, "batches go to the model");
        // The oldest query is forgotten once KEPT others came after it.
        for i in 0..KEPT {
            memo.embed(&[format!("query {i}").as_str()]).unwrap();
        }
        let before = inner.0.load(Ordering::SeqCst);
        memo.embed(&["which port"]).unwrap();
        assert_eq!(inner.0.load(Ordering::SeqCst), before + 1);
    }
}
