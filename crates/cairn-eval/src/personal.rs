//! `cairn ranker train --from-store`: the turn note's ranker trained on this machine's own
//! use ([`cairn_turn::personal`], which sleep also runs each night), printed.
use anyhow::Context as _;
use cairn_config::Paths;
use cairn_turn::personal::{self, MIN_PROJECTS, StoreTrained};
use std::path::PathBuf;

/// Runs `cairn ranker train --from-store`: collects, trains, compares with the shipped
/// model, writes the model and its figures (`<out>.json`) only when it beats it, writes the
/// training down beside it (which turns sleep's nightly training back on), prints.
pub async fn train_from_store(
    paths: &Paths,
    out: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<StoreTrained> {
    let db = paths.database();
    let out = out.unwrap_or_else(|| paths.ranker_model());
    let trained = if db.exists() {
        let store = cairn_store::Store::open(&db)
            .await
            .with_context(|| format!("cannot open the store at {}", db.display()))?;
        personal::train(&store, &out, personal::BY_HAND).await?
    } else {
        // Nothing captured: refused with the numbers, nothing written.
        personal::check_enough(&[])?;
        anyhow::bail!("no store at {}", db.display());
    };
    if json {
        println!("{}", serde_json::to_string(&trained)?);
    } else {
        print(&trained);
    }
    Ok(trained)
}

fn print(t: &StoreTrained) {
    println!(
        "{} labelled candidates from {} turns of this machine's turn notes ({} needed); folds by {}{}",
        t.examples,
        t.turns,
        t.needed,
        t.folds_by,
        if t.folds_by == "project" {
            String::new()
        } else {
            format!(" (fewer than {MIN_PROJECTS} projects)")
        }
    );
    println!(
        "Compared on {} requests ({}):",
        t.personal.requests, t.compared_on
    );
    for (name, f) in [("personal", &t.personal), ("shipped", &t.shipped)] {
        println!(
            "  {name:<8} AUC {:.3}; at bar {:.2}: precision {:.3}, hit rate {:.3}, silence {:.3}, requests with a note {:.3}",
            f.auc, f.bar, f.precision, f.hit_rate, f.silence, f.with_note
        );
    }
    if t.written {
        println!(
            "The personal model beats the shipped one: written to {} (figures beside it); the turn note uses it from its next turn.",
            t.model.display()
        );
    } else {
        println!(
            "The personal model does not beat the shipped one (it needs a higher AUC and a note precision not lower): nothing was written; the shipped model stays in use."
        );
    }
}
