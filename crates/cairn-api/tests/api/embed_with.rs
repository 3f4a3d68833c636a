//! `Service::embed_with`, as evaluations use it: the service embeds what it indexes through
//! the embedder given (the same model behind an evaluation's vector cache), and refuses an
//! embedder of another model, keeping its own.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn_config::{Paths, Settings};
use cairn_core::ports::{BackendError, Embedder};

use crate::turn_note::{models, start};

/// Counts the texts it embeds, passing them to the model it wraps (or posing as another).
pub(crate) struct Counting {
    pub(crate) inner: Arc<dyn Embedder>,
    pub(crate) id: String,
    pub(crate) texts: AtomicUsize,
}

impl Embedder for Counting {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, BackendError> {
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        self.inner.embed(texts)
    }
}

/// The test model as the service under `home` loads it, counting behind `id` (its own id, or
/// another to pose as another model).
pub(crate) async fn counting(home: &std::path::Path, id: Option<&str>) -> Arc<Counting> {
    let paths = Paths::under(home);
    let env = [
        ("CAIRN__MODELS__DOWNLOAD", "false"),
        ("CAIRN__MODELS__EMBEDDER", models().as_str()),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    let settings = Settings::load(&paths, &Default::default(), env.into_iter())
        .unwrap()
        .settings;
    let (model, _, warnings) = cairn_api::models_for_eval(&paths, &settings).await;
    let model = model.unwrap_or_else(|| panic!("the test embedder loads: {warnings:?}"));
    Arc::new(Counting {
        id: id.unwrap_or(model.model_id()).to_owned(),
        inner: model,
        texts: AtomicUsize::new(0),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_embeds_through_the_embedder_given_and_refuses_another_model() {
    let home = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service();
    // Another model: refused, naming both.
    let other = counting(home.path(), Some("another-model")).await;
    let err = service.embed_with(other.clone()).await.unwrap_err();
    let own = other.inner.model_id().to_owned();
    assert!(
        err.message.contains("another-model") && err.message.contains(&own),
        "{}",
        err.message
    );

    // The same model: what the service indexes from now on goes through it.
    let same = counting(home.path(), None).await;
    service.embed_with(same.clone()).await.unwrap();
    let rec = cairn_core::NewRecord {
        id: cairn_core::RecordId::derive("claude-code", "s-1", "1"),
        framework: "claude-code".into(),
        session_id: "s-1".into(),
        project: Some("github.com/acme/billing".into()),
        cwd: None,
        model: None,
        outcome: cairn_core::Outcome::Success,
        started_at: chrono::Utc::now(),
        ended_at: None,
        request: "which port does staging postgres use?".into(),
        author: None,
        text: "which port does staging postgres use?\n\nPort 6543.".into(),
        content: serde_json::json!({}),
        source: None,
    };
    service
        .store()
        .append_records(&[(rec, Vec::new())])
        .await
        .unwrap();
    service.sync_dense().await.unwrap();
    assert!(
        same.texts.load(Ordering::SeqCst) > 0,
        "the record was embedded through it"
    );
    assert_eq!(
        other.texts.load(Ordering::SeqCst),
        0,
        "the refused one is never used"
    );
    handle.shutdown().await;
}
