//! `cairn turn-note` and `cairn why`: the turn note as an agent's hook gets it, and why a
//! logged turn's note said what it said (with the "not useful" mark).
use cairn_api::{ApiError, Backend};
use cairn_core::api::{InjectionView, NoteFeedbackReq, TurnNote, TurnNoteReq, WhyReq};

use super::{Ctx, Failure};
use crate::cli::{TurnNoteArgs, WhyArgs};

/// Prints a turn note.
pub fn print_note(n: &TurnNote) {
    match &n.note {
        Some(text) => println!("{text}"),
        None => println!(
            "No note ({}).",
            n.silent_because
                .as_deref()
                .unwrap_or("nothing above the bar")
        ),
    }
    let turn = if n.turn.is_empty() {
        "not logged".to_owned()
    } else {
        format!("turn {}", n.turn)
    };
    let judges = if n.judged_by.is_empty() {
        "no judge".to_owned()
    } else {
        n.judged_by.join(", ")
    };
    println!("({turn}; bar {}; {judges}; {} ms)", n.bar, n.latency_ms);
}

/// Prints why a turn's note said what it said.
pub fn print_why(v: &InjectionView) {
    println!(
        "Turn {} at {} ({}{}{})",
        v.turn,
        v.at,
        v.framework,
        v.project
            .as_deref()
            .map(|p| format!(", project {p}"))
            .unwrap_or_default(),
        v.session_id
            .as_deref()
            .map(|s| format!(", session {s}"))
            .unwrap_or_default()
    );
    println!("Message: {}", v.prompt);
    let judges = if v.judged_by.is_empty() {
        "no judge answered".to_owned()
    } else {
        format!("judged by {}", v.judged_by.join(", "))
    };
    match (&v.silent_because, v.shown) {
        (_, true) => println!(
            "A note was shown (bar {}, {judges}, {} ms).",
            v.bar, v.latency_ms
        ),
        (Some(why), false) => println!("No note: {why} ({judges}, {} ms).", v.latency_ms),
        (None, false) => println!("No note ({judges}, {} ms).", v.latency_ms),
    }
    println!();
    for e in &v.entries {
        let mark = if e.shown { "shown" } else { "     " };
        let label = e
            .label
            .as_deref()
            .map(|l| format!(" [{}]", l.replace('_', " ")))
            .unwrap_or_default();
        // What became of a shown entry once the answer was captured.
        let outcome = match (e.shown, e.outcome.as_deref()) {
            (false, _) => String::new(),
            (true, Some(o)) => format!(" ({o})"),
            (true, None) => " (use not yet known)".to_owned(),
        };
        let kind = e.item_kind.as_deref().unwrap_or(e.kind.as_str());
        println!(
            "{mark} p={:.2}  {}  {kind}: {}{label}{outcome}",
            e.probability, e.id, e.title
        );
        let inputs: Vec<String> = e
            .features
            .iter()
            .filter_map(|f| f.value.map(|v| format!("{}={}", f.name, trim(v))))
            .collect();
        println!("        {}", inputs.join(" "));
    }
}

fn trim(v: f32) -> String {
    if v.fract() == 0.0 && v.abs() < 1e7 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// `cairn turn-note`: asks the service for the note, as a hook of the current folder would.
pub async fn turn_note(ctx: &Ctx, args: TurnNoteArgs) -> Result<(), Failure> {
    let TurnNoteArgs {
        prompt,
        framework,
        project,
        session,
        dry_run,
        at,
        json,
    } = args;
    let backend = ctx.backend().await?;
    // The project the command runs in, as a hook would name it.
    let project = project.or_else(|| {
        std::env::current_dir()
            .ok()
            .map(|d| cairn_text::project::identify(&d))
    });
    let req = cairn_core::api::TurnNoteReq {
        framework,
        project,
        session_id: session,
        turn_id: None,
        prompt,
        context: Vec::new(),
        dry_run,
        at,
    };
    let res = turn_note_with(&backend, req, json).await;
    backend.close().await;
    res.map_err(Failure::from)
}

/// Asks for the note and prints it (JSON with `json`).
async fn turn_note_with(backend: &Backend, req: TurnNoteReq, json: bool) -> Result<(), ApiError> {
    let note: TurnNote = backend.call_typed("turn_note", &req).await?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&note).map_err(|e| ApiError::internal(e.to_string()))?
        );
    } else {
        print_note(&note);
    }
    Ok(())
}

/// `cairn why`: the marks given, then why the turn's note said what it said.
pub async fn why(ctx: &Ctx, args: WhyArgs) -> Result<(), Failure> {
    let WhyArgs {
        turn,
        not_useful,
        useful,
        undo,
        json,
    } = args;
    let marks: Vec<(String, Option<String>)> = not_useful
        .into_iter()
        .map(|id| (id, Some("not_useful".to_owned())))
        .chain(useful.into_iter().map(|id| (id, Some("useful".to_owned()))))
        .chain(undo.into_iter().map(|id| (id, None)))
        .collect();
    let backend = ctx.backend().await?;
    let res = why_with(&backend, turn, marks, json).await;
    backend.close().await;
    res.map_err(Failure::from)
}

/// Marks first (not useful, useful, undo), then why.
async fn why_with(
    backend: &Backend,
    turn: String,
    marks: Vec<(String, Option<String>)>,
    json: bool,
) -> Result<(), ApiError> {
    let mut turn = turn;
    if turn == "last" && !marks.is_empty() {
        // Marks and the view must name the same turn even if a new one is logged meanwhile.
        let v: InjectionView = backend
            .call_typed("note_why", &WhyReq { turn: turn.clone() })
            .await?;
        turn = v.turn;
    }
    for (id, label) in marks {
        let _: cairn_core::api::InjectionEntry = backend
            .call_typed(
                "note_feedback",
                &NoteFeedbackReq {
                    turn: turn.clone(),
                    id,
                    label,
                },
            )
            .await?;
    }
    let v: InjectionView = backend.call_typed("note_why", &WhyReq { turn }).await?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| ApiError::internal(e.to_string()))?
        );
    } else {
        print_why(&v);
    }
    Ok(())
}
