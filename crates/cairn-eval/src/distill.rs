//! `cairn eval distill`: distils LoCoMo conversations with the configured model provider and
//! measures what the items keep — how many questions have an evidence turn among some
//! item's sources (any, and all of them), how many evidence turns are covered, items per
//! session, and the model calls and tokens per 100 requests. With `--recordings`, the
//! provider's answers are recorded once and replayed on the next run, so the figure can be
//! reproduced without the model.
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use cairn_distill::{Distiller, Settle};
use cairn_llm::{Llm, Policy, Provider, Recorded};
use cairn_store::Store;
use serde::Serialize;

use crate::locomo::{audit_corrections, evidence_ids, locomo_records};

/// What the distillation eval measured.
#[derive(Debug, Default, Serialize)]
pub struct DistillEval {
    /// The provider and model.
    pub provider: String,
    /// Its model.
    pub model: String,
    /// Conversations distilled.
    pub conversations: usize,
    /// Sessions (windows) distilled.
    pub sessions: usize,
    /// Requests (turns) read.
    pub requests: usize,
    /// Windows whose answer stayed invalid.
    pub invalid_windows: usize,
    /// Items kept (active after reconcile).
    pub items: usize,
    /// Items kept per session.
    pub items_per_session: f64,
    /// Items the model proposed that the rules dropped, by reason.
    pub dropped: BTreeMap<String, usize>,
    /// Questions of categories 1-4 with evidence in the distilled sessions.
    pub questions: usize,
    /// Share of those with an evidence turn among some item's sources.
    pub covered_any: f64,
    /// Share of those with every evidence turn among items' sources.
    pub covered_all: f64,
    /// Share of distinct evidence turns among items' sources.
    pub evidence_turns_covered: f64,
    /// Model calls per 100 requests.
    pub calls_per_100_requests: f64,
    /// Prompt and answer tokens per 100 requests.
    pub tokens_per_100_requests: f64,
    /// Model calls made.
    pub calls: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Per category: (questions, covered any).
    pub by_category: BTreeMap<String, (usize, f64)>,
}

/// Runs the distillation eval and prints it.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    paths: &cairn_config::Paths,
    settings: &cairn_config::Settings,
    file: &Path,
    audit: Option<&Path>,
    recordings: Option<PathBuf>,
    conversations: Option<usize>,
    sessions: Option<usize>,
    json: bool,
) -> anyhow::Result<DistillEval> {
    let data: serde_json::Value = serde_json::from_str(
        &fs_err::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?,
    )
    .with_context(|| format!("{} is not JSON", file.display()))?;
    let Some(convs) = data.as_array() else {
        bail!(
            "{} is not a LoCoMo file: expected a list of conversations",
            file.display()
        )
    };
    let corrections = audit_corrections(audit)?;
    let live = cairn_llm::provider_from_settings(&settings.llm, paths)?.ok_or_else(|| {
        anyhow::anyhow!(
            "no model provider is set: set llm.provider (for example --set llm.provider=local \
             --set llm.model_path=/path/model.gguf)"
        )
    })?;
    let provider: Arc<dyn Provider> = match &recordings {
        Some(dir) => Arc::new(Recorded::recording(dir, live)),
        None => live,
    };
    let (embedder, _, warnings) = cairn_api::models_for_eval(paths, settings).await;
    for w in &warnings {
        eprintln!("note: {w}");
    }
    let convs: Vec<&serde_json::Value> = convs
        .iter()
        .take(conversations.unwrap_or(usize::MAX))
        .collect();
    let mut out = DistillEval {
        provider: provider.name().to_owned(),
        model: provider.model().to_owned(),
        ..DistillEval::default()
    };
    let bar = crate::progress::bar(convs.len() as u64, "conversations");
    let (mut any, mut all, mut turns_total, mut turns_covered) = (0usize, 0usize, 0usize, 0usize);
    let mut cat: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for conv in convs {
        let sample = conv["sample_id"]
            .as_str()
            .unwrap_or("conversation")
            .to_owned();
        bar.set_message(sample.clone());
        let dir = tempfile::tempdir()?;
        let store = Store::open(&dir.path().join("cairn.db")).await?;
        let (batch, dia_of, last) = locomo_records(&sample, &conv["conversation"], sessions);
        out.requests += batch.len();
        store.append_records(&batch).await?;
        let llm = Llm::new(
            provider.clone(),
            store.clone(),
            Policy::from_settings(&settings.llm),
        );
        let d = Distiller::new(store.clone(), llm, embedder.clone(), Settle::default());
        let b = bar.clone();
        let s = sample.clone();
        let report = d
            .run(last + chrono::Duration::days(1), &move |done, total| {
                b.set_message(format!("{s}: window {done}/{total}"));
            })
            .await?;
        if let Some(why) = &report.stopped {
            eprintln!("note: {sample}: stopped early: {why}");
        }
        out.conversations += 1;
        out.sessions += report.windows;
        out.invalid_windows += report
            .details
            .iter()
            .filter(|w| w.invalid.is_some())
            .count();
        out.calls += report.calls;
        out.input_tokens += report.input_tokens;
        out.output_tokens += report.output_tokens;
        for w in &report.details {
            for x in &w.dropped {
                *out.dropped.entry(x.reason.clone()).or_default() += 1;
            }
        }
        let items = store.items(false).await?;
        out.items += items.len();
        let covered: HashSet<&str> = items
            .iter()
            .flat_map(|i| i.sources.iter())
            .filter_map(|s| dia_of.get(s.as_str()).map(String::as_str))
            .collect();
        let present: HashSet<&str> = dia_of.values().map(String::as_str).collect();
        let mut turns: HashSet<String> = HashSet::new();
        for (qi, qa) in conv["qa"].as_array().into_iter().flatten().enumerate() {
            let category = qa["category"].as_u64().unwrap_or(0);
            if !(1..=4).contains(&category) {
                continue;
            }
            let evidence = corrections
                .get(&(sample.clone(), qi))
                .cloned()
                .unwrap_or_else(|| evidence_ids(&qa["evidence"]));
            // Only questions whose evidence lies in the sessions distilled.
            if evidence.is_empty() || !evidence.iter().all(|e| present.contains(e.as_str())) {
                continue;
            }
            out.questions += 1;
            let hit_any = evidence.iter().any(|e| covered.contains(e.as_str()));
            let hit_all = evidence.iter().all(|e| covered.contains(e.as_str()));
            any += usize::from(hit_any);
            all += usize::from(hit_all);
            let slot = cat.entry(category.to_string()).or_default();
            slot.0 += 1;
            slot.1 += usize::from(hit_any);
            turns.extend(evidence);
        }
        turns_total += turns.len();
        turns_covered += turns
            .iter()
            .filter(|t| covered.contains(t.as_str()))
            .count();
        bar.inc(1);
    }
    bar.finish_and_clear();
    let share = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    out.covered_any = share(any, out.questions);
    out.covered_all = share(all, out.questions);
    out.evidence_turns_covered = share(turns_covered, turns_total);
    out.items_per_session = share(out.items, out.sessions);
    out.calls_per_100_requests = 100.0 * share(out.calls as usize, out.requests);
    out.tokens_per_100_requests = 100.0
        * share(
            (out.input_tokens + out.output_tokens) as usize,
            out.requests,
        );
    out.by_category = cat
        .into_iter()
        .map(|(k, (n, a))| (k, (n, share(a, n))))
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "{} ({}): {} conversation(s), {} session(s), {} request(s)",
            out.provider, out.model, out.conversations, out.sessions, out.requests
        );
        println!(
            "items: {} ({:.2} per session); windows with no usable answer: {}",
            out.items, out.items_per_session, out.invalid_windows
        );
        for (reason, n) in &out.dropped {
            println!("  dropped {n}: {reason}");
        }
        println!(
            "questions (categories 1-4, evidence in these sessions): {}; an evidence turn among \
             item sources: {:.3}; all of them: {:.3}; evidence turns covered: {:.3}",
            out.questions, out.covered_any, out.covered_all, out.evidence_turns_covered
        );
        for (c, (n, a)) in &out.by_category {
            println!("  category {c}: {n} questions, {a:.3}");
        }
        println!(
            "model calls: {} ({:.1} per 100 requests), tokens: {} in + {} out ({:.0} per 100 requests)",
            out.calls,
            out.calls_per_100_requests,
            out.input_tokens,
            out.output_tokens,
            out.tokens_per_100_requests
        );
    }
    Ok(out)
}
