//! Re-derivable memory: distillation run again over the log with the current provider and
//! prompts. Items found again keep their ids (reconcile merges the new answer into them, and
//! a merge that adds nothing writes no event); what the new run no longer finds is archived
//! (it leaves the active index, the log keeps it). The report is the diff.
use std::collections::{HashMap, HashSet};

use cairn_core::{Item, ItemEventKind, NewItemEvent, Timestamp};
use serde::Serialize;

use crate::{DistillError, Distiller, RunReport, prompt};

/// An item in a rebuild's diff.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffItem {
    /// Its id.
    pub id: String,
    /// Its kind.
    pub kind: String,
    /// Its title (now, or when dropped).
    pub title: String,
}

/// What a rebuild changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RebuildReport {
    /// The distillation run.
    pub run: RunReport,
    /// Items the rebuild made that did not exist.
    pub added: Vec<DiffItem>,
    /// Items found again whose content changed.
    pub changed: Vec<DiffItem>,
    /// Items not found again: archived.
    pub dropped: Vec<DiffItem>,
    /// Items found again unchanged.
    pub unchanged: usize,
}

fn diff_item(i: &Item) -> DiffItem {
    DiffItem {
        id: i.id.as_str().to_owned(),
        kind: serde_json::to_value(i.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        title: i.title.clone(),
    }
}

impl Distiller {
    /// Distils again every request made since `since` (all when `None`), whatever the
    /// settle rules say, and reports the diff. `progress` hears (done, total) per window.
    /// Stops (and says so in `run.stopped`) when the day's budget is spent; nothing is
    /// archived then, since the rest was not read again.
    pub async fn rebuild(
        &self,
        since: Option<Timestamp>,
        progress: &(dyn Fn(usize, usize) + Send + Sync),
    ) -> Result<RebuildReport, DistillError> {
        // The active items that came (at least partly) from the requests read again.
        let in_range = |i: &&Item| since.is_none_or(|t| i.said_at.is_none_or(|s| s >= t));
        let before: HashMap<String, Item> = self
            .store
            .items(false)
            .await?
            .into_iter()
            .filter(|i| in_range(&i))
            .map(|i| (i.id.as_str().to_owned(), i))
            .collect();
        let spent_before = self.llm.today().await?;
        self.store.unmark_distilled(since.as_ref()).await?;
        let windows = self.windows(None).await?;
        let total = windows.len();
        let mut run = RunReport::default();
        let mut touched: HashSet<String> = HashSet::new();
        for (i, w) in windows.iter().enumerate() {
            match self.distil(w).await {
                Ok(r) => {
                    touched.extend(r.kept.iter().map(|a| a.item().id.as_str().to_owned()));
                    run.add(r);
                }
                Err(DistillError::Call(e)) => {
                    run.left = total - i;
                    run.stopped = Some(e.to_string());
                    break;
                }
                Err(e) => return Err(e),
            }
            progress(i + 1, total);
        }
        let after: HashMap<String, Item> = self
            .store
            .items(true)
            .await?
            .into_iter()
            .map(|i| (i.id.as_str().to_owned(), i))
            .collect();
        let mut report = RebuildReport::default();
        for id in &touched {
            let Some(now) = after.get(id) else { continue };
            match before.get(id) {
                None => report.added.push(diff_item(now)),
                Some(old) if old != now => report.changed.push(diff_item(now)),
                Some(_) => report.unchanged += 1,
            }
        }
        if run.stopped.is_none() {
            for (id, old) in &before {
                if touched.contains(id) {
                    continue;
                }
                let Some(current) = after.get(id) else {
                    continue;
                };
                if current.archived || current.superseded_by.is_some() {
                    // Superseded by what the rebuild found: reported as changed by it.
                    continue;
                }
                let mut archived = current.clone();
                archived.archived = true;
                self.store
                    .append_item_event(&NewItemEvent {
                        kind: ItemEventKind::Archived,
                        item: archived,
                        reason: Some(format!(
                            "not found again when distillation was rebuilt ({})",
                            prompt::PROMPT_VERSION
                        )),
                    })
                    .await?;
                report.dropped.push(diff_item(old));
            }
        }
        for list in [&mut report.added, &mut report.changed, &mut report.dropped] {
            list.sort_by(|a, b| a.title.cmp(&b.title));
        }
        let spent = self.llm.today().await?;
        run.calls = spent.calls.saturating_sub(spent_before.calls);
        run.input_tokens = spent.input_tokens.saturating_sub(spent_before.input_tokens);
        run.output_tokens = spent
            .output_tokens
            .saturating_sub(spent_before.output_tokens);
        run.cost_usd = (spent.cost_usd - spent_before.cost_usd).max(0.0);
        report.run = run;
        Ok(report)
    }
}
