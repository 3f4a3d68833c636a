//! Listing the inbox: every finding about the items (pairs, junk, stale), the stored turns
//! and the notes, less what the user kept, in one order.
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use cairn_core::ErrorCode;
use cairn_core::api::{
    NoteSummary, NotesListReq, ReviewCounts, ReviewEntry, ReviewInbox, ReviewReq, name_of,
};
use cairn_core::{Item, RelationKind};

use crate::entry::{
    CATEGORIES, Finding, action_view, item_subject, item_text, note_ref, note_subject,
    record_subject,
};
use crate::pairs::{ordered, pair_findings};
use crate::text::{one_line, short_list, words};
use crate::tree::{Citations, Presence, citations, root_of, walk};
use crate::{Error, Inbox, Result};

/// The most active items compared for duplicates and contradictions (the newest).
const MAX_PAIRWISE: usize = 20_000;

/// Stored turns shorter than this (request and replies) are not offered as duplicates.
const MIN_RECORD_CHARS: u32 = 200;

/// An item or note with fewer content words than this is junk.
const MIN_WORDS: usize = 3;

/// Signs of Cairn's own words read back.
const CAIRN_MARKS: &[&str] = &[
    "<cairn-memory>",
    "</cairn-memory>",
    "From Cairn's memory of earlier sessions",
    cairn_text::marks::SKILLS_BEGIN,
    "What earlier sessions learned in this project (from Cairn)",
];

impl Inbox<'_> {
    async fn item_findings(
        &self,
        items: &[Item],
        vectors_id: Option<&str>,
        unchecked: &mut BTreeSet<String>,
    ) -> Result<Vec<Finding>> {
        let mut out = Vec::new();
        // Pairs: duplicates and contradictions, within one project, off the async threads.
        let mut recent: Vec<Item> = items.to_vec();
        recent.sort_by_key(|i| std::cmp::Reverse(i.said_at));
        recent.truncate(MAX_PAIRWISE);
        let vectors: HashMap<String, Vec<f32>> = match vectors_id {
            Some(model) => {
                let owners: Vec<String> = recent.iter().map(|i| i.id.as_str().to_owned()).collect();
                self.store.summary_vectors(&owners, model).await?
            }
            None => HashMap::new(),
        };
        let marked: HashSet<(String, String)> = self
            .store
            .relations_of_kind(RelationKind::Contradicts)
            .await?
            .into_iter()
            .map(|r| ordered(r.from.as_str(), r.to.as_str()))
            .collect();
        out.extend(
            tokio::task::spawn_blocking(move || pair_findings(&recent, &vectors, &marked))
                .await
                .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?,
        );
        // One item at a time: junk, then stale.
        let mut by_root: HashMap<PathBuf, Vec<(&Item, Citations, PathBuf)>> = HashMap::new();
        let sources: Vec<String> = items
            .iter()
            .flat_map(|i| i.sources.iter().map(|s| s.as_str().to_owned()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let cwds = self.store.record_cwds(&sources).await?;
        for i in items {
            let text = item_text(i);
            if let Some(mark) = CAIRN_MARKS.iter().find(|m| text.contains(*m)) {
                out.push(Finding {
                    category: "junk",
                    reason: format!(
                        "Cairn's own words read back ({mark:?}): a turn note or skills section, not something that happened."
                    ),
                    score: 1.0,
                    subjects: vec![item_subject(i)],
                });
                continue;
            }
            if words(&format!("{} {}", i.summary, i.body)).len() < MIN_WORDS {
                out.push(Finding {
                    category: "junk",
                    reason: "Almost nothing in it: too short to help any later turn.".into(),
                    score: 0.9,
                    subjects: vec![item_subject(i)],
                });
                continue;
            }
            // The working folder of its newest source request.
            let Some(cwd) = i
                .sources
                .iter()
                .filter_map(|s| cwds.get(s.as_str()))
                .max_by_key(|(at, _)| *at)
                .map(|(_, c)| c.clone())
            else {
                continue;
            };
            let cited = citations(&text);
            let Some(root) = root_of(Path::new(&cwd)) else {
                if !cited.files.is_empty() || !cited.symbols.is_empty() {
                    unchecked.insert(i.project.clone().unwrap_or(cwd));
                }
                continue;
            };
            by_root
                .entry(root)
                .or_default()
                .push((i, cited, PathBuf::from(&cwd)));
        }
        for (root, list) in by_root {
            let symbols: BTreeSet<String> = list
                .iter()
                .flat_map(|(_, c, _)| c.symbols.iter().cloned())
                .collect();
            let (tree, missing_symbols, lines) = tokio::task::spawn_blocking(move || {
                let tree = walk(&root);
                let missing = tree.missing_symbols(&symbols);
                let lines = tree.instruction_lines();
                (tree, missing, lines)
            })
            .await
            .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?;
            let line_words: Vec<(String, String, HashSet<String>)> = lines
                .into_iter()
                .map(|(f, l)| {
                    let w = words(&l);
                    (f, l, w)
                })
                .collect();
            for (i, cited, cwd) in list {
                // Restated instructions: the summary's words all in one instruction line.
                let w = words(&i.summary);
                if w.len() >= MIN_WORDS
                    && let Some((file, line, _)) = line_words.iter().find(|(_, _, lw)| {
                        w.iter().filter(|x| lw.contains(*x)).count() as f32 / w.len() as f32 >= 0.8
                    })
                {
                    out.push(Finding {
                        category: "junk",
                        reason: format!(
                            "Restates an instruction every agent already reads in {file}: \u{201c}{}\u{201d}",
                            one_line(line, 160)
                        ),
                        score: 0.8,
                        subjects: vec![item_subject(i)],
                    });
                    continue;
                }
                if !tree.complete {
                    if !cited.files.is_empty() || !cited.symbols.is_empty() {
                        unchecked.insert(tree.root.display().to_string());
                    }
                    continue;
                }
                let presence: Vec<(String, Presence)> = cited
                    .files
                    .iter()
                    .map(|f| (f.clone(), tree.has_file(f, &cwd)))
                    .collect();
                let gone_files: Vec<String> = presence
                    .iter()
                    .filter(|(_, p)| *p == Presence::Absent)
                    .map(|(f, _)| f.clone())
                    .collect();
                let ignored = presence
                    .iter()
                    .filter(|(_, p)| *p == Presence::Ignored)
                    .count();
                let gone_symbols: Vec<String> = cited
                    .symbols
                    .iter()
                    .filter(|s| missing_symbols.contains(*s))
                    .cloned()
                    .collect();
                let cites = cited.files.len() - ignored + cited.symbols.len();
                let gone = gone_files.len() + gone_symbols.len();
                if gone == 0 {
                    continue;
                }
                let mut what = Vec::new();
                if !gone_files.is_empty() {
                    what.push(format!(
                        "file{} {}",
                        if gone_files.len() == 1 { "" } else { "s" },
                        short_list(&gone_files)
                    ));
                }
                if !gone_symbols.is_empty() {
                    what.push(format!(
                        "symbol{} {}",
                        if gone_symbols.len() == 1 { "" } else { "s" },
                        short_list(&gone_symbols)
                    ));
                }
                out.push(Finding {
                    category: "stale",
                    reason: format!(
                        "Cites {}, no longer in {}.",
                        what.join(" and "),
                        tree.root.display()
                    ),
                    score: gone as f32 / cites.max(1) as f32,
                    subjects: vec![item_subject(i)],
                });
            }
        }
        Ok(out)
    }

    /// The same turn stored more than once (a resumed session's copy, two stores of one
    /// agent): the oldest stays, each later copy is an entry.
    async fn record_findings(&self, project: Option<&str>) -> Result<Vec<Finding>> {
        let hidden = self.store.hidden_records().await?;
        let mut out = Vec::new();
        for group in self.store.duplicate_records(MIN_RECORD_CHARS).await? {
            let group: Vec<&cairn_store::RecordCopy> = group
                .iter()
                .filter(|r| !hidden.contains(&r.id))
                .filter(|r| project.is_none_or(|p| r.project.as_deref() == Some(p)))
                .collect();
            let Some((first, copies)) = group.split_first() else {
                continue;
            };
            for copy in copies {
                out.push(Finding {
                    category: "duplicate",
                    reason: format!(
                        "The same turn stored twice ({} session {} and {} session {}): archiving leaves the later copy out of search and the turn note; the log keeps it.",
                        first.framework, first.session_id, copy.framework, copy.session_id
                    ),
                    score: 1.0,
                    subjects: vec![record_subject(first), record_subject(copy)],
                });
            }
        }
        Ok(out)
    }

    async fn note_findings(&self, project: Option<&str>) -> Result<Vec<Finding>> {
        let notes = self.notes;
        let list = notes.list(&NotesListReq::default()).await?;
        let mut out = Vec::new();
        let mut by_content: HashMap<(String, Option<String>, String), Vec<&NoteSummary>> =
            HashMap::new();
        for n in &list {
            if project.is_some_and(|p| n.project.as_deref() != Some(p)) {
                continue;
            }
            by_content
                .entry((name_of(&n.scope), n.project.clone(), n.sha256.clone()))
                .or_default()
                .push(n);
            let Ok(doc) = notes.get(&note_ref(n)).await else {
                continue;
            };
            let text = doc.content.trim();
            if let Some(mark) = CAIRN_MARKS.iter().find(|m| text.contains(*m)) {
                out.push(Finding {
                    category: "junk",
                    reason: format!("Cairn's own words saved as a note ({mark:?})."),
                    score: 1.0,
                    subjects: vec![note_subject(n, text)],
                });
            } else if words(text).len() < MIN_WORDS {
                out.push(Finding {
                    category: "junk",
                    reason: "A note with almost nothing in it.".into(),
                    score: 0.9,
                    subjects: vec![note_subject(n, text)],
                });
            }
        }
        for group in by_content.values().filter(|g| g.len() > 1) {
            let mut group = group.clone();
            // The oldest path stays; later copies are suggested for archiving.
            group.sort_by(|a, b| a.updated_at.cmp(&b.updated_at).then(a.path.cmp(&b.path)));
            let Ok(doc) = notes.get(&note_ref(group[0])).await else {
                continue;
            };
            for copy in &group[1..] {
                out.push(Finding {
                    category: "duplicate",
                    reason: format!(
                        "Same content as {}: archiving deletes the copy (its versions stay).",
                        group[0].path
                    ),
                    score: 1.0,
                    subjects: vec![
                        note_subject(group[0], &doc.content),
                        note_subject(copy, &doc.content),
                    ],
                });
            }
        }
        Ok(out)
    }

    /// The inbox (`review_list`): every finding of the category and project asked for, the
    /// most telling first, less the entries kept; and the latest actions. `vectors_id` names
    /// the model the summary vectors are stored under, when one is loaded (without it, pairs
    /// are found by their words alone).
    pub async fn list(&self, req: &ReviewReq, vectors_id: Option<&str>) -> Result<ReviewInbox> {
        if let Some(c) = req.category.as_deref()
            && !CATEGORIES.contains(&c)
        {
            return Err(Error::new(
                ErrorCode::BadRequest,
                format!(
                    "unknown review category {c:?}; use duplicate, contradiction, stale or junk"
                ),
            ));
        }
        let limit = req.limit.unwrap_or(200).clamp(1, 1_000) as usize;
        let items: Vec<Item> = self
            .store
            .items(false)
            .await?
            .into_iter()
            .filter(|i| req.project.is_none() || i.project == req.project)
            .collect();
        let mut unchecked = BTreeSet::new();
        let mut findings = self
            .item_findings(&items, vectors_id, &mut unchecked)
            .await?;
        findings.extend(self.record_findings(req.project.as_deref()).await?);
        findings.extend(self.note_findings(req.project.as_deref()).await?);
        let kept = self.store.kept_review_entries().await?;
        let mut entries: Vec<ReviewEntry> = findings
            .into_iter()
            .map(Finding::entry)
            .filter(|e| !kept.contains(&e.key))
            .collect();
        let mut seen = HashSet::new();
        entries.retain(|e| seen.insert(e.key.clone()));
        let mut counts = ReviewCounts::default();
        for e in &entries {
            match e.category.as_str() {
                "duplicate" => counts.duplicate += 1,
                "contradiction" => counts.contradiction += 1,
                "stale" => counts.stale += 1,
                _ => counts.junk += 1,
            }
        }
        let order = |c: &str| CATEGORIES.iter().position(|x| *x == c).unwrap_or(9);
        entries.sort_by(|a, b| {
            order(&a.category)
                .cmp(&order(&b.category))
                .then(b.score.total_cmp(&a.score))
                .then(a.key.cmp(&b.key))
        });
        entries.retain(|e| req.category.as_deref().is_none_or(|c| e.category == c));
        entries.truncate(limit);
        let recent = self
            .store
            .review_actions(20)
            .await?
            .iter()
            .map(action_view)
            .collect();
        Ok(ReviewInbox {
            entries,
            counts,
            recent,
            unchecked_projects: unchecked.into_iter().collect(),
        })
    }
}
