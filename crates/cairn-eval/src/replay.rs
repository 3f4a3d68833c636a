//! `cairn eval replay`: the turn note measured on the user's own captured history, through
//! the service (`replay_run`), with its progress on standard error.
use std::io::Write;
use std::path::Path;

use anyhow::Context;
use cairn_api::Backend;
use cairn_core::api::{ReplayReport, ReplayReq};

/// Runs the replay, prints its figures (a table, or one JSON object) and, when asked, writes
/// one JSON line per request with its labels.
pub async fn run(
    backend: &Backend,
    mut req: ReplayReq,
    json: bool,
    labels: Option<&Path>,
) -> anyhow::Result<()> {
    req.rows = labels.is_some();
    // Refuse a file that cannot be written before the replay runs, not after.
    let mut out = labels
        .map(|p| {
            fs_err::File::create(p)
                .map(std::io::BufWriter::new)
                .with_context(|| format!("cannot write the labels to {}", p.display()))
        })
        .transpose()?;
    let mut report: ReplayReport =
        crate::progress::call_with_progress_req(backend, "replay_run", &req, "replay", false)
            .await?;
    if let Some(w) = out.as_mut() {
        for r in &report.rows {
            let line = serde_json::json!({
                "request": r.request,
                "at": r.at,
                "session": r.session,
                "needed": r.needed,
                "shown": r.shown,
                "id": r.id,
                "framework": r.framework,
                "reused": r.reused,
                "baseline": r.baseline,
            });
            writeln!(w, "{line}")?;
        }
        w.flush()?;
    }
    report.rows.clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    print_report(&report);
    if let Some(p) = labels {
        println!("Labels: {}", p.display());
    }
    Ok(())
}

fn rate(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), |v| format!("{v:.3}"))
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), |v| format!("{v:.0}"))
}

/// The figures as a table: the turn note beside plain search's top 3.
pub fn print_report(r: &ReplayReport) {
    println!(
        "Replayed {} requests ({} needed an earlier session; {} records read; an identifier is rare in at most {} records) in {:.1} s.",
        r.note.requests,
        r.needed,
        r.records,
        r.rare_max,
        r.duration_ms as f64 / 1000.0
    );
    let note = &r.note;
    let b = &r.baseline;
    println!("{:<22} {:>10} {:>14}", "", "turn note", "search top 3");
    let rows: [(&str, String, String); 7] = [
        ("need", rate(note.need), rate(b.need)),
        ("hit rate", rate(note.hit_rate), rate(b.hit_rate)),
        ("precision", rate(note.precision), rate(b.precision)),
        (
            "silence (no need)",
            rate(note.silence_no_need),
            rate(b.silence_no_need),
        ),
        ("note rate", rate(note.note_rate), rate(b.note_rate)),
        ("p50 ms", ms(note.p50_ms), ms(b.p50_ms)),
        ("p95 ms", ms(note.p95_ms), ms(b.p95_ms)),
    ];
    for (name, a, b) in rows {
        println!("{name:<22} {a:>10} {b:>14}");
    }
}
