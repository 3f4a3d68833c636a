//! Findings as the inbox lists them: the subjects (items, stored turns, notes), entry keys
//! that name a finding the same way every time, the actions each category offers, and
//! logged actions as the API shows them.
use cairn_core::ErrorCode;
use cairn_core::Item;
use cairn_core::api::{
    NoteRef, NoteSummary, ReviewActionView, ReviewEntry, ReviewSubject, name_of, timestamp as ts,
};
use cairn_store::ReviewAction;

use crate::text::one_line;
use crate::{Error, Result};

pub(crate) const CATEGORIES: [&str; 4] = ["contradiction", "duplicate", "stale", "junk"];

pub(crate) fn item_subject(i: &Item) -> ReviewSubject {
    ReviewSubject {
        id: i.id.as_str().to_owned(),
        kind: "item".into(),
        subkind: name_of(&i.kind),
        title: i.title.clone(),
        text: one_line(
            if i.summary.is_empty() {
                &i.body
            } else {
                &i.summary
            },
            300,
        ),
        project: i.project.clone(),
        at: i.said_at.as_ref().map(ts),
        importance: Some(i.importance),
        session: None,
    }
}

pub(crate) fn record_subject(r: &cairn_store::RecordCopy) -> ReviewSubject {
    ReviewSubject {
        id: r.id.clone(),
        kind: "record".into(),
        subkind: r.framework.clone(),
        title: one_line(&r.request, 120),
        text: one_line(&r.text_start, 300),
        project: r.project.clone(),
        at: Some(ts(&r.started_at)),
        importance: None,
        session: Some(r.session_id.clone()),
    }
}

pub(crate) fn note_subject(n: &NoteSummary, content: &str) -> ReviewSubject {
    ReviewSubject {
        id: n.id.clone(),
        kind: "note".into(),
        subkind: name_of(&n.scope),
        title: n.path.clone(),
        text: one_line(content, 300),
        project: n.project.clone(),
        at: Some(n.updated_at.clone()),
        importance: None,
        session: None,
    }
}

/// The entry key of a finding about these subjects (a pair in a stable order).
pub(crate) fn key(category: &str, ids: &[&str]) -> String {
    let mut ids = ids.to_vec();
    if category == "duplicate" || category == "contradiction" {
        ids.sort_unstable();
    }
    format!("{category}:{}", ids.join("+"))
}

pub(crate) fn parse_key(k: &str) -> Result<(&str, Vec<&str>)> {
    let bad = || {
        Error::new(
            ErrorCode::BadRequest,
            format!(
                "{k:?} is not a review entry key (category:id or category:id+id, as review_list gives it)"
            ),
        )
    };
    let (category, ids) = k.split_once(':').ok_or_else(bad)?;
    if !CATEGORIES.contains(&category) {
        return Err(bad());
    }
    let ids: Vec<&str> = ids.split('+').collect();
    let pair = category == "duplicate" || category == "contradiction";
    if ids.iter().any(|i| i.is_empty()) || (pair && ids.len() != 2) || (!pair && ids.len() != 1) {
        return Err(bad());
    }
    Ok((category, ids))
}

fn actions_for(category: &str, subjects: &[ReviewSubject]) -> Vec<String> {
    let items = subjects.iter().all(|s| s.kind == "item");
    let list: &[&str] = match category {
        "duplicate" if items => &["merge", "archive", "keep"],
        "contradiction" => &["supersede", "archive", "keep"],
        _ => &["archive", "keep"],
    };
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// The text of an item that the checks read.
pub(crate) fn item_text(i: &Item) -> String {
    format!("{}\n{}\n{}", i.title, i.summary, i.body)
}

/// One finding before it becomes an entry.
pub(crate) struct Finding {
    pub(crate) category: &'static str,
    pub(crate) reason: String,
    pub(crate) score: f32,
    pub(crate) subjects: Vec<ReviewSubject>,
}

impl Finding {
    pub(crate) fn entry(self) -> ReviewEntry {
        let ids: Vec<&str> = self.subjects.iter().map(|s| s.id.as_str()).collect();
        ReviewEntry {
            key: key(self.category, &ids),
            category: self.category.into(),
            reason: self.reason,
            score: self.score,
            actions: actions_for(self.category, &self.subjects),
            subjects: self.subjects,
        }
    }
}

pub(crate) fn action_view(a: &ReviewAction) -> ReviewActionView {
    let changed = a.detail["changed"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    ReviewActionView {
        id: a.id.clone(),
        at: ts(&a.at),
        entry: a.entry.clone(),
        category: a.category.clone(),
        action: a.action.clone(),
        summary: a.summary.clone(),
        changed,
        undone_at: a.undone_at.as_ref().map(ts),
    }
}

/// Items in words: “title” (id), ….
pub(crate) fn named(items: &[Item]) -> String {
    items
        .iter()
        .map(|i| {
            format!(
                "\u{201c}{}\u{201d} ({})",
                one_line(&i.title, 80),
                i.id.as_str()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn note_ref(n: &NoteSummary) -> NoteRef {
    NoteRef {
        scope: n.scope,
        project: n.project.clone(),
        path: n.path.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_for_a_pair_and_parse_back() {
        assert_eq!(key("duplicate", &["i_b", "i_a"]), "duplicate:i_a+i_b");
        assert_eq!(key("stale", &["i_c"]), "stale:i_c");
        let (c, ids) = parse_key("duplicate:i_a+i_b").expect("parses");
        assert_eq!((c, ids), ("duplicate", vec!["i_a", "i_b"]));
        for bad in [
            "",
            "duplicate:i_a",
            "stale:i_a+i_b",
            "weird:i_a",
            "junk:",
            "duplicate:i_a+",
        ] {
            assert!(parse_key(bad).is_err(), "{bad}");
        }
    }
}
