//! Acting on an entry and undoing an action: item events appended (`merged`, `superseded`,
//! `archived`; nothing rewritten), stored turns hidden from search, notes deleted (their
//! versions stay), and each action logged with the states before, so undo puts every one
//! back unless it changed since.
use std::collections::HashMap;

use cairn_core::ErrorCode;
use cairn_core::api::{
    NoteDeleteReq, NoteRef, NoteSummary, NoteVersionReq, NotesListReq, ReviewActReq,
    ReviewActionView, ReviewUndoReq,
};
use cairn_core::{Item, ItemEventKind, ItemId, NewItemEvent, Relation, RelationKind};
use cairn_notes::Caller;
use cairn_store::ReviewAction;

use crate::entry::{action_view, key, named, note_ref, parse_key};
use crate::pairs::{believed, better};
use crate::{Error, Inbox, Result};

fn new_action_id() -> Result<String> {
    let mut buf = [0u8; 12];
    getrandom::fill(&mut buf).map_err(|e| {
        Error::new(
            ErrorCode::Internal,
            format!("no randomness for an action id: {e}"),
        )
    })?;
    Ok(format!("rv_{}", hex::encode(buf)))
}

impl Inbox<'_> {
    async fn active_item(&self, id: &str) -> Result<Item> {
        let item = self
            .store
            .item(&ItemId::new(id))
            .await?
            .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("no item {id}")))?;
        if item.archived || item.superseded_by.is_some() {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!(
                    "item {id} is no longer active (archived or superseded): review the inbox again"
                ),
            ));
        }
        Ok(item)
    }

    async fn note_by_id(&self, id: &str) -> Result<NoteSummary> {
        let list = self.notes.list(&NotesListReq::default()).await?;
        list.into_iter().find(|n| n.id == id).ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("no note {id} (deleted or moved since): review the inbox again"),
            )
        })
    }

    /// Which subject of a pair the inbox suggests keeping (it lists that one first).
    async fn suggested(&self, category: &str, ids: &[&str]) -> Result<String> {
        if ids.iter().all(|i| i.starts_with("i_")) {
            let a = self.active_item(ids[0]).await?;
            let b = self.active_item(ids[1]).await?;
            let first = if category == "contradiction" {
                believed(&a, &b).0
            } else {
                better(&a, &b).0
            };
            return Ok(first.id.as_str().to_owned());
        }
        if ids.iter().all(|i| i.starts_with("r_")) {
            let mut recs = Vec::new();
            for id in ids {
                let r = self
                    .store
                    .record(&cairn_core::RecordId::new(*id))
                    .await?
                    .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("no record {id}")))?;
                recs.push((r.record.started_at, (*id).to_owned()));
            }
            recs.sort();
            return Ok(recs[0].1.clone());
        }
        let mut notes = Vec::new();
        for id in ids {
            notes.push(self.note_by_id(id).await?);
        }
        notes.sort_by(|a, b| a.updated_at.cmp(&b.updated_at).then(a.path.cmp(&b.path)));
        Ok(notes[0].id.clone())
    }

    /// Acts on an entry (`review_act`) and logs the action with the states before it. The
    /// caller holds whatever keeps other writers out (the service's write permit).
    pub async fn act(&self, req: &ReviewActReq) -> Result<ReviewActionView> {
        let (category, ids) = parse_key(&req.entry)?;
        let action = req.action.as_str();
        if !["merge", "supersede", "archive", "keep"].contains(&action) {
            return Err(Error::new(
                ErrorCode::BadRequest,
                format!("unknown review action {action:?}; use merge, supersede, archive or keep"),
            ));
        }
        // The subject that stays, and the others.
        let (stay, others): (&str, Vec<&str>) = match req.keep.as_deref() {
            Some(k) if ids.len() > 1 => {
                if !ids.contains(&k) {
                    return Err(Error::new(
                        ErrorCode::BadRequest,
                        format!(
                            "keep {k:?} is not one of this entry's subjects ({})",
                            ids.join(", ")
                        ),
                    ));
                }
                (k, ids.iter().copied().filter(|i| *i != k).collect())
            }
            _ if ids.len() > 1 => {
                // The one the inbox suggested (its first subject).
                let first = self.suggested(category, &ids).await?;
                let first = ids.iter().copied().find(|i| *i == first).unwrap_or(ids[0]);
                (first, ids.iter().copied().filter(|i| *i != first).collect())
            }
            _ => ("", ids.clone()),
        };
        let records = ids.iter().all(|i| i.starts_with("r_"));
        let notes = !records && ids.iter().all(|i| !i.starts_with("i_"));
        let allowed: &[&str] = match (category, notes || records) {
            ("duplicate", false) => &["merge", "archive", "keep"],
            ("contradiction", false) => &["supersede", "archive", "keep"],
            _ => &["archive", "keep"],
        };
        if !allowed.contains(&action) {
            return Err(Error::new(
                ErrorCode::BadRequest,
                format!(
                    "{action} does not apply to a {category} entry of {}; use {}",
                    if records {
                        "records"
                    } else if notes {
                        "notes"
                    } else {
                        "items"
                    },
                    allowed.join(", ")
                ),
            ));
        }
        let mut hidden: Vec<String> = Vec::new();
        let id = new_action_id()?;
        let reason = |what: &str| format!("review {id}: {what}");
        let mut before: Vec<serde_json::Value> = Vec::new();
        let mut after: Vec<serde_json::Value> = Vec::new();
        let mut edges: Vec<serde_json::Value> = Vec::new();
        let mut deleted_notes: Vec<serde_json::Value> = Vec::new();
        let mut changed: Vec<String> = Vec::new();
        let summary;
        if action == "keep" {
            summary = format!(
                "Kept {} as {} (the entry is hidden).",
                ids.join(" and "),
                if ids.len() > 1 { "they are" } else { "it is" }
            );
        } else if records {
            for r in &others {
                if self
                    .store
                    .record(&cairn_core::RecordId::new(*r))
                    .await?
                    .is_none()
                {
                    return Err(Error::new(ErrorCode::NotFound, format!("no record {r}")));
                }
                hidden.push((*r).to_owned());
            }
            self.store
                .hide_records(&hidden, "review: duplicate")
                .await?;
            changed.extend(hidden.iter().cloned());
            summary = format!(
                "Archived {} (left out of search and the turn note; the log keeps it).",
                others.join(", ")
            );
        } else if notes {
            for n in &others {
                let note = self.note_by_id(n).await?;
                let del = self
                    .notes
                    .delete(
                        &Caller::user(),
                        &NoteDeleteReq {
                            note: note_ref(&note),
                            expected_sha256: Some(note.sha256.clone()),
                        },
                    )
                    .await?;
                deleted_notes.push(serde_json::json!({
                    "ref": serde_json::to_value(note_ref(&note)).unwrap_or_default(),
                    "version": del.version.saturating_sub(1),
                    "deleted": del.version,
                }));
                changed.push(note.id.clone());
            }
            (self.notes_changed)();
            summary = format!(
                "Archived note {} (deleted; its versions stay).",
                others.join(", ")
            );
        } else {
            let keep = if stay.is_empty() {
                None
            } else {
                Some(self.active_item(stay).await?)
            };
            let mut gone = Vec::new();
            for o in &others {
                gone.push(self.active_item(o).await?);
            }
            let mut events: Vec<NewItemEvent> = Vec::new();
            // Each of `gone` marked replaced by `by`.
            let superseded = |gone: &[Item], by: &Item, why: &str| -> Vec<NewItemEvent> {
                gone.iter()
                    .map(|o| NewItemEvent {
                        kind: ItemEventKind::Superseded,
                        item: Item {
                            superseded_by: Some(by.id.clone()),
                            ..o.clone()
                        },
                        reason: Some(reason(&format!("{why} {}", by.id.as_str()))),
                    })
                    .collect()
            };
            match (action, &keep) {
                ("merge", Some(k)) => {
                    let mut merged = k.clone();
                    for o in &gone {
                        for s in &o.sources {
                            if !merged.sources.contains(s) {
                                merged.sources.push(s.clone());
                            }
                        }
                        for c in &o.cues {
                            if !merged.cues.contains(c) {
                                merged.cues.push(c.clone());
                            }
                        }
                        for c in &o.concepts {
                            if !merged.concepts.contains(c) {
                                merged.concepts.push(c.clone());
                            }
                        }
                        if !o.body.trim().is_empty() && !merged.body.contains(o.body.trim()) {
                            merged.body =
                                format!("{}\n\n{}", merged.body.trim_end(), o.body.trim());
                        }
                        merged.importance = merged.importance.max(o.importance);
                        merged.provenance =
                            cairn_core::Provenance::combine(merged.provenance, o.provenance);
                        merged.said_at = merged.said_at.max(o.said_at);
                        merged.happened_at = match (merged.happened_at, o.happened_at) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                    }
                    events.push(NewItemEvent {
                        kind: ItemEventKind::Merged,
                        item: merged,
                        reason: Some(reason(&format!("merged {}", others.join(", ")))),
                    });
                    events.extend(superseded(&gone, k, "merged into"));
                    summary = format!(
                        "Merged {} into {}.",
                        named(&gone),
                        named(std::slice::from_ref(k))
                    );
                }
                ("supersede", Some(k)) => {
                    events.extend(superseded(&gone, k, "replaced by"));
                    summary = format!(
                        "{} replaced by {}.",
                        named(&gone),
                        named(std::slice::from_ref(k))
                    );
                }
                _ => {
                    for o in &gone {
                        let mut s = o.clone();
                        s.archived = true;
                        events.push(NewItemEvent {
                            kind: ItemEventKind::Archived,
                            item: s,
                            reason: Some(reason(&format!("archived ({category})"))),
                        });
                    }
                    summary = format!("Archived {}.", named(&gone));
                }
            }
            let mut states: HashMap<String, Item> = HashMap::new();
            if let Some(k) = &keep {
                states.insert(k.id.as_str().to_owned(), k.clone());
            }
            for o in &gone {
                states.insert(o.id.as_str().to_owned(), o.clone());
            }
            for ev in &events {
                let id_str = ev.item.id.as_str().to_owned();
                if let Some(prev) = states.get(&id_str) {
                    before.push(serde_json::to_value(prev).unwrap_or_default());
                }
                let stored = self.store.append_item_event(ev).await?;
                after.push(serde_json::json!({ "id": id_str, "seq": stored.seq }));
                changed.push(id_str);
            }
            if matches!(action, "merge" | "supersede")
                && let Some(k) = &keep
            {
                for o in &gone {
                    self.store
                        .put_relation(&Relation {
                            from: k.id.clone(),
                            to: o.id.clone(),
                            kind: RelationKind::Supersedes,
                            weight: 1.0,
                        })
                        .await?;
                    edges.push(serde_json::json!([k.id.as_str(), o.id.as_str()]));
                }
            }
        }
        let logged = ReviewAction {
            id,
            at: chrono::Utc::now(),
            entry: key(category, &ids),
            category: category.to_owned(),
            action: action.to_owned(),
            summary,
            detail: serde_json::json!({
                "changed": changed,
                "before": before,
                "after": after,
                "edges": edges,
                "notes": deleted_notes,
                "records": hidden,
            }),
            undone_at: None,
        };
        self.store.append_review_action(&logged).await?;
        Ok(action_view(&logged))
    }

    /// Undoes a logged action (`review_undo`): refused, with nothing changed, when an item
    /// it touched changed since. The caller holds the write permit, as for [`Inbox::act`].
    pub async fn undo(&self, req: &ReviewUndoReq) -> Result<ReviewActionView> {
        let a = self
            .store
            .review_action(&req.action)
            .await?
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::NotFound,
                    format!("no review action {:?}", req.action),
                )
            })?;
        if a.undone_at.is_some() {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!("review action {} was already undone", a.id),
            ));
        }
        let bad = |what: &str| {
            Error::new(
                ErrorCode::Internal,
                format!("review action {} is unreadable: {what}", a.id),
            )
        };
        // Refuse before changing anything when an item changed after the action.
        let mut expected: HashMap<String, i64> = HashMap::new();
        for x in a.detail["after"].as_array().into_iter().flatten() {
            let (Some(id), Some(seq)) = (x["id"].as_str(), x["seq"].as_i64()) else {
                return Err(bad("after"));
            };
            expected.insert(id.to_owned(), seq);
        }
        for (id, seq) in &expected {
            let latest = self
                .store
                .item_history(&ItemId::new(id.as_str()))
                .await?
                .last()
                .map(|e| e.seq);
            if latest != Some(*seq) {
                return Err(Error::new(
                    ErrorCode::Conflict,
                    format!(
                        "item {id} changed after this action; undoing it would lose that change (open the item to see its history)"
                    ),
                ));
            }
        }
        for x in a.detail["before"].as_array().into_iter().flatten() {
            let prev: Item = serde_json::from_value(x.clone()).map_err(|e| bad(&e.to_string()))?;
            let now = self.store.item(&prev.id).await?;
            let kind = match now {
                Some(n)
                    if (n.archived || n.superseded_by.is_some())
                        && !prev.archived
                        && prev.superseded_by.is_none() =>
                {
                    ItemEventKind::Restored
                }
                _ => ItemEventKind::Updated,
            };
            self.store
                .append_item_event(&NewItemEvent {
                    kind,
                    item: prev,
                    reason: Some(format!("review {}: undone", a.id)),
                })
                .await?;
        }
        for e in a.detail["edges"].as_array().into_iter().flatten() {
            let (Some(from), Some(to)) = (e[0].as_str(), e[1].as_str()) else {
                return Err(bad("edges"));
            };
            self.store
                .delete_relation(
                    &ItemId::new(from),
                    &ItemId::new(to),
                    RelationKind::Supersedes,
                )
                .await?;
        }
        let records: Vec<String> = a.detail["records"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(str::to_owned))
            .collect();
        if !records.is_empty() {
            self.store.unhide_records(&records).await?;
        }
        let mut notes_changed = false;
        for n in a.detail["notes"].as_array().into_iter().flatten() {
            let note: NoteRef =
                serde_json::from_value(n["ref"].clone()).map_err(|e| bad(&e.to_string()))?;
            let version = n["version"].as_u64().ok_or_else(|| bad("notes"))?;
            self.notes
                .restore(
                    &Caller::user(),
                    &NoteVersionReq {
                        note,
                        version,
                        expected_sha256: None,
                    },
                )
                .await?;
            notes_changed = true;
        }
        if notes_changed {
            (self.notes_changed)();
        }
        let at = chrono::Utc::now();
        if !self.store.mark_review_undone(&a.id, &at).await? {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!("review action {} was already undone", a.id),
            ));
        }
        Ok(action_view(&ReviewAction {
            undone_at: Some(at),
            ..a
        }))
    }
}
