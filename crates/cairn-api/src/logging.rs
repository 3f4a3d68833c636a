//! Tracing to daily rolling log files in the log dir, one file family per component
//! (`daemon`, `desktop`, `cli`), with a retention count; warnings also go to stderr.
use cairn_config::{Paths, Settings};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Keeps the log writer flushing; hold it for the life of the process.
#[must_use = "logs stop being written when the guard is dropped"]
pub struct LogGuard(#[allow(dead_code)] Option<tracing_appender::non_blocking::WorkerGuard>);

/// Starts logging for `component`. `CAIRN_LOG` overrides the `log.level` setting.
pub fn init(
    paths: &Paths,
    settings: &Settings,
    component: &str,
    stderr_level: &str,
) -> std::io::Result<LogGuard> {
    fs_err::create_dir_all(&paths.logs)?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix(component)
        .filename_suffix("log")
        .max_log_files(settings.log.keep_days as usize)
        .build(&paths.logs)
        .map_err(std::io::Error::other)?;
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let level = std::env::var("CAIRN_LOG").unwrap_or_else(|_| settings.log.level.clone());
    let file_filter = EnvFilter::try_new(format!(
        "{level},sqlx=warn,sea_orm=warn,hyper=warn,tower_http=warn"
    ))
    .unwrap_or_else(|_| EnvFilter::new("info"));
    let file_layer = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(writer)
        .with_filter(file_filter);
    let stderr_layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .without_time()
        .with_filter(EnvFilter::new(stderr_level));
    // A second init in the same process (tests) keeps the first subscriber.
    if tracing_subscriber::registry()
        .with(file_layer)
        .with(stderr_layer)
        .try_init()
        .is_err()
    {
        return Ok(LogGuard(None));
    }
    Ok(LogGuard(Some(guard)))
}

use tracing_subscriber::Layer as _;

/// Empties every log file (Clear): a log line may quote what was remembered (an error that
/// names a note, a path). Files stay, so the open writer goes on appending to an empty file.
pub fn clear_logs(dir: &std::path::Path) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_file())
            && let Err(e) = fs_err::OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_len(0))
        {
            tracing::warn!(error = %e, "cannot empty a log file");
        }
    }
}
