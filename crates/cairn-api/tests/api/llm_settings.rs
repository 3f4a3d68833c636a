//! `llm_settings_set`: the settings view's Save writes `[llm]` into the config file and puts it
//! in effect at once; an invalid choice writes nothing and names the key and the file.
use std::path::Path;

use cairn_api::ServiceHandle;
use cairn_config::{Paths, Settings};
use serde_json::json;

async fn start(home: &Path) -> ServiceHandle {
    super::start_service(home, false, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_model_settings_are_in_the_config_file_and_in_effect_at_once() {
    let home = tempfile::tempdir().unwrap();
    let handle = start(home.path()).await;
    let service = handle.service().clone();
    let file = Paths::under(home.path()).config_file();
    let before = fs_err::read_to_string(&file).unwrap();

    let err = service
        .dispatch(
            "llm_settings_set",
            json!({"provider": "openai", "model": "qwen2.5:3b", "base_url": "localhost:11434",
                   "model_path": "", "daily_calls": 10, "daily_usd": 0.5}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("llm.base_url")
            && err.contains("localhost:11434")
            && err.contains("config.toml"),
        "{err}"
    );
    assert_eq!(
        fs_err::read_to_string(&file).unwrap(),
        before,
        "nothing written"
    );

    let status = service
        .dispatch(
            "llm_settings_set",
            json!({"provider": "claude-cli", "model": "", "base_url": "", "model_path": "",
                   "daily_calls": 10, "daily_usd": 0.5}),
        )
        .await
        .unwrap();
    assert_eq!(status["provider"], "claude-cli");
    assert_eq!(status["budget"], json!({"calls": 10, "usd": 0.5}));
    assert_eq!(
        service.dispatch("llm_status", json!({})).await.unwrap()["provider"],
        "claude-cli"
    );
    let effective = service.dispatch("config_show", json!({})).await.unwrap();
    assert!(
        effective["effective"]
            .as_str()
            .unwrap()
            .contains("provider = \"claude-cli\""),
        "{effective}"
    );
    // The file keeps its comments and loads back to the same choice.
    let text = fs_err::read_to_string(&file).unwrap();
    assert!(text.contains("# The model that distils"), "{text}");
    handle.shutdown().await;
    let again = Settings::load(
        &Paths::under(home.path()),
        &Default::default(),
        std::iter::empty(),
    )
    .unwrap()
    .settings
    .llm;
    assert_eq!(
        (again.provider.as_str(), again.daily_calls, again.daily_usd),
        ("claude-cli", 10, 0.5)
    );
}
