//! cairn-api end to end: a real service on loopback (store, HTTP server, workers), driven
//! over raw TCP and through the real client.
#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

mod fake_judge;
mod llm_settings;
mod profiles;
mod review;
mod trust;
mod turn_note;

use std::path::{Path, PathBuf};

use cairn_api::{Host, ServiceHandle, ServiceOptions};
use cairn_config::{Paths, Settings};

/// A daemon's service on a temporary home: no model download, no capture, a free port; the
/// HTTP server and the UI folder as asked.
pub(crate) async fn start_service(
    home: &Path,
    serve_http: bool,
    ui_dir: Option<PathBuf>,
) -> ServiceHandle {
    let paths = Paths::under(home);
    let env = [
        ("CAIRN__MODELS__DOWNLOAD", "false"),
        ("CAIRN__CAPTURE__ENABLED", "false"),
        ("CAIRN__SERVICE__PORT", "0"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    let loaded = Settings::load(&paths, &Default::default(), env.into_iter()).unwrap();
    ServiceHandle::start(ServiceOptions {
        paths,
        settings: loaded.settings,
        config_file: loaded.file,
        host: Host::Daemon,
        serve_http,
        ui_dir,
    })
    .await
    .unwrap()
}
