//! Times as the store writes them (RFC 3339, milliseconds, UTC), shared by the store and
//! its schema migrations.
use cairn_core::Timestamp;

pub(crate) fn now_text() -> String {
    ts_text(&chrono::Utc::now())
}

pub(crate) fn ts_text(t: &Timestamp) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
