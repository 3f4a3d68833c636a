//! Profiles (DESIGN §1.4): one dated timeline per subject — each project, and the machine
//! (items that belong to no project) — written by the model in one call per subject, and
//! rewritten only when the subject's active items changed (their ids and latest changes,
//! hashed), at most [`PROFILES_PER_NIGHT`] a night. Uses of an item do not count as a change.
//! Changing the prompt or schema below is a new profile version: every profile is rewritten
//! once (the version is part of the hash).
use std::collections::HashMap;

use cairn_core::{Item, ItemId, ItemKind};
use cairn_llm::{CallError, Request};
use cairn_store::{Profile, ProfileEntry, ProfileKind};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{DistillError, Distiller};

/// The version of the profile prompt (part of each profile's hash).
pub const PROFILE_VERSION: &str = "profile-1";
/// The most profiles written in one night.
pub const PROFILES_PER_NIGHT: usize = 400;
/// The subject of the machine's profile (items with no project).
pub const MACHINE: &str = "machine";
/// The most items shown to the model for one subject (the highest priorities).
pub const ITEMS_PER_PROFILE: usize = 150;
/// Characters of one item's summary shown.
const SUMMARY_CHARS: usize = 300;

/// Instructions of the profile call.
pub const PROFILE_SYSTEM: &str = "\
You keep a profile of one subject (a software project, or the developer's machine and \
habits) for a coding agent's long-term memory. You get the subject's memory items, each with \
its date, kind, title and summary; items marked (replaced) were later superseded.

Write a dated timeline of the subject: one line per event or lasting change (a decision, a \
version, a move, a problem and its fix), oldest first, each with its date (YYYY-MM-DD) and one \
sentence that keeps exact names, numbers, versions and paths. Merge lines that say the same; \
leave out trivia. Then a summary of two to four sentences: what the subject is and how it \
stands now. Use only what the items say.";

/// The answer schema of the profile call.
pub fn profile_schema() -> Value {
    json!({
        "type": "object",
        "required": ["timeline", "summary"],
        "properties": {
            "timeline": {
                "type": "array",
                "maxItems": 200,
                "items": {
                    "type": "object",
                    "required": ["date", "text"],
                    "properties": {
                        "date": {"type": "string", "minLength": 4, "maxLength": 10},
                        "text": {"type": "string", "minLength": 1, "maxLength": 600}
                    }
                }
            },
            "summary": {"type": "string", "minLength": 1, "maxLength": 2000}
        }
    })
}

/// One subject and its items.
pub(crate) struct Subject<'a> {
    pub kind: ProfileKind,
    pub name: String,
    /// Active items.
    pub active: Vec<&'a Item>,
    /// Superseded items of the subject (shown as replaced).
    pub replaced: Vec<&'a Item>,
    /// The hash of the active items and their latest changes.
    pub hash: String,
    /// The latest change among them (subjects changed last are written first).
    pub latest: i64,
}

/// FNV-1a, 64 bits: stable across builds and platforms (a change detector, not security).
fn fnv1a(parts: &[String]) -> String {
    let mut h = cairn_text::hash::Fnv1a::default();
    for p in parts {
        h.write(p.as_bytes()).write(b"\n");
    }
    h.hex()
}

/// Groups items into subjects: active and superseded (not archived) items by project, the
/// rest under the machine.
pub(crate) fn subjects<'a>(
    items: &'a [Item],
    last_change: &HashMap<ItemId, i64>,
) -> Vec<Subject<'a>> {
    type Parts<'b> = (Vec<&'b Item>, Vec<&'b Item>);
    let mut by: HashMap<(ProfileKind, String), Parts<'a>> = HashMap::new();
    for it in items.iter().filter(|i| !i.archived) {
        let key = match &it.project {
            Some(p) => (ProfileKind::Project, p.clone()),
            None => (ProfileKind::Machine, MACHINE.to_owned()),
        };
        let slot = by.entry(key).or_default();
        if it.superseded_by.is_some() {
            slot.1.push(it);
        } else {
            slot.0.push(it);
        }
    }
    let mut out: Vec<Subject<'a>> = by
        .into_iter()
        .filter(|(_, (active, _))| !active.is_empty())
        .map(|((kind, name), (active, replaced))| {
            let mut parts: Vec<String> = active
                .iter()
                .map(|i| {
                    let seq = last_change.get(&i.id).copied().unwrap_or_default();
                    format!("{} {seq}", i.id.as_str())
                })
                .collect();
            parts.sort();
            parts.insert(0, PROFILE_VERSION.to_owned());
            let latest = active
                .iter()
                .map(|i| last_change.get(&i.id).copied().unwrap_or_default())
                .max()
                .unwrap_or_default();
            Subject {
                kind,
                name,
                active,
                replaced,
                hash: fnv1a(&parts),
                latest,
            }
        })
        .collect();
    out.sort_by(|a, b| b.latest.cmp(&a.latest).then_with(|| a.name.cmp(&b.name)));
    out
}

fn kind_name(k: ItemKind) -> String {
    serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn cut(s: &str, n: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > n {
        format!("{}…", one.chars().take(n).collect::<String>())
    } else {
        one
    }
}

/// The prompt of one subject: its items (the highest priorities, at most
/// [`ITEMS_PER_PROFILE`]), oldest first.
pub(crate) fn profile_prompt(
    s: &Subject<'_>,
    priority: &HashMap<ItemId, f64>,
    dated: &(dyn Fn(&Item) -> String + Sync),
) -> String {
    let mut shown: Vec<(&Item, bool)> = s
        .active
        .iter()
        .map(|i| (*i, false))
        .chain(s.replaced.iter().map(|i| (*i, true)))
        .collect();
    shown.sort_by(|a, b| {
        let pa = priority.get(&a.0.id).copied().unwrap_or_default();
        let pb = priority.get(&b.0.id).copied().unwrap_or_default();
        a.1.cmp(&b.1)
            .then(pb.total_cmp(&pa))
            .then_with(|| a.0.id.cmp(&b.0.id))
    });
    shown.truncate(ITEMS_PER_PROFILE);
    shown.sort_by(|a, b| {
        dated(a.0)
            .cmp(&dated(b.0))
            .then_with(|| a.0.id.cmp(&b.0.id))
    });
    let what = match s.kind {
        ProfileKind::Project => format!("the project {}", s.name),
        ProfileKind::Machine => "the developer's machine (items that belong to no project)".into(),
    };
    let mut p = format!("Subject: {what}\n\nItems, oldest first:\n");
    for (it, replaced) in shown {
        p.push_str(&format!(
            "- {} · {}{} · {} — {}\n",
            dated(it),
            kind_name(it.kind),
            if replaced { " (replaced)" } else { "" },
            cut(&it.title, 120),
            cut(&it.summary, SUMMARY_CHARS),
        ));
    }
    p.push_str("\nWrite the subject's timeline and summary.");
    p
}

#[derive(Deserialize)]
struct Answer {
    timeline: Vec<ProfileEntry>,
    summary: String,
}

/// What writing one profile did.
pub(crate) enum Written {
    /// Stored.
    Stored,
    /// The answer stayed invalid: tried again next night.
    Invalid(String),
}

impl Distiller {
    /// Writes one subject's profile: one model call. Budget and provider failures are
    /// returned (the night's profiles stop); an invalid answer is skipped.
    pub(crate) async fn write_profile(
        &self,
        s: &Subject<'_>,
        priority: &HashMap<ItemId, f64>,
        dated: &(dyn Fn(&Item) -> String + Sync),
        now: cairn_core::Timestamp,
    ) -> Result<Written, DistillError> {
        let request = Request {
            purpose: "profile".into(),
            system: PROFILE_SYSTEM.into(),
            prompt: profile_prompt(s, priority, dated),
            schema: profile_schema(),
            max_tokens: 3_000,
        };
        let answer = match self.llm.call(&request).await {
            Ok(a) => a,
            Err(CallError::Invalid { reason, .. }) => return Ok(Written::Invalid(reason)),
            Err(e) => return Err(e.into()),
        };
        let a: Answer = match serde_json::from_value(answer.value) {
            Ok(a) => a,
            Err(e) => {
                return Ok(Written::Invalid(format!(
                    "the profile could not be read: {e}"
                )));
            }
        };
        self.store
            .put_profile(&Profile {
                kind: s.kind,
                subject: s.name.clone(),
                summary: a.summary,
                timeline: a.timeline,
                items_hash: s.hash.clone(),
                item_count: u64::try_from(s.active.len()).unwrap_or(u64::MAX),
                updated_at: now,
            })
            .await?;
        Ok(Written::Stored)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_stable_and_sees_every_part() {
        let a = fnv1a(&["x 1".into(), "y 2".into()]);
        assert_eq!(a, fnv1a(&["x 1".into(), "y 2".into()]));
        assert_ne!(a, fnv1a(&["x 1".into(), "y 3".into()]));
        assert_ne!(a, fnv1a(&["x 1y 2".into()]));
        assert_eq!(fnv1a(&[]), "cbf29ce484222325");
    }
}
