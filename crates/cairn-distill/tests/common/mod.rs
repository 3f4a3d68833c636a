//! What the distillation test binaries share: the real embedder, answers written by hand for
//! the tests (a scripted model), their recordings (made once with `CAIRN_RECORD=1` and
//! labelled "written by hand for the tests", replayed otherwise), a test policy, and the
//! items' summary points as the service's vector index holds them.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_core::ports::{Embedder, PointPayload, VectorIndex, VectorPoint};
use cairn_core::{Item, VectorKind};
use cairn_llm::{Budget, Policy, Provider, ProviderError, Recorded, Reply, Request, Usage};

/// all-MiniLM-L6-v2 from `CAIRN_TEST_MODELS` (`npm test` installs it); missing, the test fails.
pub fn embedder() -> Arc<dyn Embedder> {
    let dir = std::env::var_os("CAIRN_TEST_MODELS")
        .map(PathBuf::from)
        .expect("CAIRN_TEST_MODELS must name the all-MiniLM-L6-v2 folder (`npm test` installs it)");
    Arc::new(cairn_models::BertEmbedder::load(&dir).unwrap())
}

/// Answers written by hand for the tests (`answer`); no model runs. The other fields are not
/// recorded: a recording keeps the answer's text and says it was written by hand.
pub struct Scripted {
    /// The answer to a request.
    pub answer: fn(&Request) -> String,
    /// The model name a reply carries.
    pub model: &'static str,
    /// Answer tokens a reply reports.
    pub output_tokens: u64,
    /// Cost a reply reports.
    pub cost_usd: f64,
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "written-by-hand"
    }
    fn model(&self) -> &str {
        self.model
    }
    fn complete(&self, r: &Request, _deadline: Instant) -> Result<Reply, ProviderError> {
        Ok(Reply {
            text: (self.answer)(r),
            model: self.model.into(),
            usage: Usage {
                input_tokens: (r.system.len() + r.prompt.len()) as u64 / 4,
                output_tokens: self.output_tokens,
            },
            cost_usd: Some(self.cost_usd),
        })
    }
}

fn folder(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

/// The committed recordings in `tests/<folder>`: replayed, or (with `CAIRN_RECORD` set)
/// made from `scripted` where missing.
pub fn recorded(folder_name: &str, scripted: Scripted) -> Arc<dyn Provider> {
    let dir = folder(folder_name);
    if std::env::var_os("CAIRN_RECORD").is_some() {
        Arc::new(Recorded::written_by_hand(&dir, Arc::new(scripted)))
    } else {
        Arc::new(Recorded::replay(&dir))
    }
}

/// Deadlines long enough for a slow machine, no retries, a budget of `calls` a day.
pub fn policy(calls: u32) -> Policy {
    Policy {
        timeout: Duration::from_secs(30),
        retries: 0,
        backoff: Duration::from_millis(1),
        budget: Budget { calls, usd: 10.0 },
    }
}

/// The items' summary points as the service's vector index holds them.
pub fn items_index(items: &[Item], vectors: &[Vec<f32>]) -> Arc<dyn VectorIndex> {
    let index: Arc<dyn VectorIndex> = Arc::new(cairn_vectors::MemoryIndex::new());
    index.ensure(vectors[0].len()).unwrap();
    add_points(&index, items, vectors);
    index
}

pub fn add_points(index: &Arc<dyn VectorIndex>, items: &[Item], vectors: &[Vec<f32>]) {
    let points: Vec<VectorPoint> = items
        .iter()
        .zip(vectors)
        .map(|(it, v)| VectorPoint {
            owner: it.id.as_str().to_owned(),
            vector_kind: VectorKind::Summary,
            ord: 0,
            vector: v.clone(),
            payload: PointPayload {
                project: it.project.clone(),
                framework: Some("item".into()),
                kind: Some("item".into()),
                session: Some(it.id.as_str().to_owned()),
                timestamp_ms: 0,
            },
        })
        .collect();
    index.upsert(&points).unwrap();
}
