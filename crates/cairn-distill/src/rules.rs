//! What survives: code, not the model, decides (DESIGN §1.2), and what "the same" may mean
//! (DESIGN §1.3: different numbers, dates or versions are never the same).
use std::collections::BTreeSet;
use std::sync::LazyLock;

use cairn_core::{Certainty, Item, ItemKind, Outcome, Provenance, Record, Timestamp};
use regex::Regex;
use serde::{Deserialize, Serialize};

/// An item as the model proposed it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Proposed {
    /// Kind name.
    pub kind: String,
    /// Title.
    pub title: String,
    /// Summary (the search key).
    pub summary: String,
    /// Body.
    pub body: String,
    /// Cues.
    pub cues: Vec<String>,
    /// Concepts.
    pub concepts: Vec<String>,
    /// 1 to 5.
    pub importance: u8,
    /// stated / inferred / contested / ambiguous.
    pub certainty: String,
    /// Request numbers, from 1.
    pub sources: Vec<u32>,
    /// When it happened.
    #[serde(default)]
    pub happened_at: Option<String>,
    /// When a lasting thing ended.
    #[serde(default)]
    pub ended_at: Option<String>,
    /// Which kind of text states it, as the model says (`user`, `agent`, `outside`); checked
    /// against the window before it is kept (see [`crate::provenance`]).
    #[serde(default)]
    pub stated_by: Option<String>,
}

/// Why a proposed item was not kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dropped {
    /// Its title.
    pub title: String,
    /// Its kind.
    pub kind: String,
    /// Why.
    pub reason: String,
}

fn kind_of(name: &str) -> Option<ItemKind> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
}

fn certainty_of(name: &str) -> Option<Certainty> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
}

/// A date the model wrote (`2023-05-08`, `2023-05`, `2023`, or a full timestamp).
pub fn parse_date(s: &str) -> Option<Timestamp> {
    let s = s.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&chrono::Utc));
    }
    let padded = match s.len() {
        4 => format!("{s}-01-01"),
        7 => format!("{s}-01"),
        _ => s.get(..10)?.to_owned(),
    };
    chrono::NaiveDate::parse_from_str(&padded, "%Y-%m-%d")
        .ok()?
        .and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc())
}

/// A model's text as it may be stored: trimmed, and scrubbed like everything Cairn writes
/// (the conversation was scrubbed already, but a model may still write something that looks
/// like a key).
fn scrubbed(text: &str) -> String {
    cairn_text::scrub::scrubber()
        .scrub(text.trim())
        .0
        .into_owned()
}

fn clean_list(list: &[String], lower: bool) -> Vec<String> {
    let mut seen = BTreeSet::new();
    list.iter()
        .map(|s| scrubbed(s))
        .map(|s| if lower { s.to_lowercase() } else { s })
        .filter(|s| !s.is_empty() && seen.insert(s.to_lowercase()))
        .collect()
}

/// The most cues an item keeps.
pub const MAX_CUES: usize = 8;
/// The most concepts an item keeps.
pub const MAX_CONCEPTS: usize = 12;

/// The items that survive, as items (without ids yet), and what was dropped with why.
///
/// Dropped: inferred, contested or ambiguous items; importance below 2; procedures, snippets
/// and pitfalls learned from a request that failed or whose outcome is unclear; items whose
/// sources name no request of the window; items with no cue; episodes from a request a typed item came from.
///
/// Each survivor's provenance is the model's `stated_by` lowered to what the window's text
/// shows ([`crate::provenance::verified`]).
pub fn survivors(
    proposed: Vec<Proposed>,
    window: &[Record],
    project: Option<&str>,
) -> (Vec<Item>, Vec<Dropped>) {
    let text = crate::provenance::WindowText::of(window);
    let mut kept: Vec<Item> = Vec::new();
    let mut dropped = Vec::new();
    let mut episodes: Vec<Item> = Vec::new();
    for p in proposed {
        // What the model wrote goes out in reports: scrubbed like everything kept.
        let drop = |reason: &str| Dropped {
            title: scrubbed(&p.title),
            kind: scrubbed(&p.kind),
            reason: scrubbed(reason),
        };
        let Some(kind) = kind_of(&p.kind) else {
            dropped.push(drop("unknown kind"));
            continue;
        };
        let certainty = certainty_of(&p.certainty).unwrap_or(Certainty::Ambiguous);
        if certainty != Certainty::Stated {
            dropped.push(drop(&format!("certainty {}", p.certainty)));
            continue;
        }
        if p.importance < 2 {
            dropped.push(drop(&format!("importance {}", p.importance)));
            continue;
        }
        let sources: Vec<&Record> = p
            .sources
            .iter()
            .filter_map(|n| usize::try_from(*n).ok()?.checked_sub(1))
            .filter_map(|i| window.get(i))
            .collect();
        if sources.is_empty() {
            dropped.push(drop("names no request of the conversation"));
            continue;
        }
        if matches!(
            kind,
            ItemKind::Procedure | ItemKind::Snippet | ItemKind::Pitfall
        ) && sources.iter().any(|r| r.record.outcome != Outcome::Success)
        {
            dropped.push(drop(
                "learned from a request that failed or whose outcome is unclear",
            ));
            continue;
        }
        let mut cues = clean_list(&p.cues, false);
        cues.retain(|c| c.chars().count() >= 3);
        if cues.is_empty() {
            dropped.push(drop("no cues"));
            continue;
        }
        cues.truncate(MAX_CUES);
        let mut concepts = clean_list(&p.concepts, true);
        concepts.truncate(MAX_CONCEPTS);
        let mut ids: Vec<_> = sources.iter().map(|r| r.record.id.clone()).collect();
        ids.dedup();
        let said_at = sources.iter().map(|r| r.record.started_at).max();
        let provenance = crate::provenance::verified(
            p.stated_by.as_deref(),
            &format!("{}\n{}\n{}", p.title, p.summary, p.body),
            &text,
        );
        let item = Item {
            id: cairn_core::ItemId::new(""),
            kind,
            title: scrubbed(&p.title),
            summary: scrubbed(&p.summary),
            body: scrubbed(&p.body),
            cues,
            concepts,
            importance: p.importance.min(5),
            certainty,
            project: project.map(str::to_owned),
            sources: ids,
            happened_at: p.happened_at.as_deref().and_then(parse_date),
            said_at,
            ended_at: p.ended_at.as_deref().and_then(parse_date),
            superseded_by: None,
            archived: false,
            provenance: Some(provenance),
        };
        if kind == ItemKind::Episode {
            episodes.push(item);
        } else {
            kept.push(item);
        }
    }
    for e in episodes {
        if e.sources
            .iter()
            .any(|s| kept.iter().any(|k| k.sources.contains(s)))
        {
            dropped.push(Dropped {
                title: e.title,
                kind: "episode".into(),
                reason: "a typed item came from the same request".into(),
            });
        } else {
            kept.push(e);
        }
    }
    (kept, dropped)
}

static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::unwrap_used)] // A literal pattern.
    Regex::new(r"\d+(?:[.:/\-]\d+)*").unwrap()
});

/// The numbers, dates and versions a text names (`1.2.3`, `2023-05-08`, `7420`).
pub fn numbers(text: &str) -> BTreeSet<String> {
    NUMBER
        .find_iter(text)
        .map(|m| m.as_str().to_owned())
        .collect()
}

/// True when two items name different numbers, dates or versions: they are then never
/// "the same", whatever their similarity or the model says.
pub fn numbers_differ(a: &Item, b: &Item) -> bool {
    let na = numbers(&format!("{} {}", a.title, a.summary));
    let nb = numbers(&format!("{} {}", b.title, b.summary));
    !na.is_empty() && !nb.is_empty() && na != nb
}

/// `known` with `new` merged in: every fact of both (the new body's sentences the known body
/// lacks are appended), cues, concepts and sources of both, the higher importance, the later
/// dates.
pub fn merge(known: &Item, new: &Item) -> Item {
    let mut m = known.clone();
    let have = known.body.to_lowercase();
    let extra: Vec<&str> = split_sentences(&new.body)
        .into_iter()
        .filter(|s| !have.contains(&s.to_lowercase()))
        .collect();
    if !extra.is_empty() {
        m.body = format!("{}\n{}", known.body.trim_end(), extra.join(" "));
    }
    let push_new = |into: &mut Vec<String>, from: &[String]| {
        for x in from {
            if !into.iter().any(|y| y.eq_ignore_ascii_case(x)) {
                into.push(x.clone());
            }
        }
    };
    push_new(&mut m.cues, &new.cues);
    m.cues.truncate(12);
    push_new(&mut m.concepts, &new.concepts);
    m.concepts.truncate(16);
    for s in &new.sources {
        if !m.sources.contains(s) {
            m.sources.push(s.clone());
        }
    }
    m.importance = m.importance.max(new.importance);
    m.provenance =
        if known.provenance.is_none() && new.sources.iter().all(|s| known.sources.contains(s)) {
            // Found again in the requests it came from (a rebuild): checked now.
            new.provenance
        } else {
            Provenance::combine(known.provenance, new.provenance)
        };
    m.said_at = m.said_at.max(new.said_at);
    m.happened_at = m.happened_at.or(new.happened_at);
    m.ended_at = new.ended_at.or(m.ended_at);
    m
}

fn split_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        let boundary = matches!(c, '.' | '!' | '?' | '\n')
            && bytes.get(end).is_none_or(|b| b.is_ascii_whitespace());
        if boundary {
            let s = text[start..end].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = end;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(summary: &str, body: &str) -> Item {
        Item {
            id: cairn_core::ItemId::new("i_x"),
            kind: ItemKind::Fact,
            title: "t".into(),
            summary: summary.into(),
            body: body.into(),
            cues: vec!["a?".into()],
            concepts: vec!["x".into()],
            importance: 2,
            certainty: Certainty::Stated,
            project: None,
            sources: vec![],
            happened_at: None,
            said_at: None,
            ended_at: None,
            superseded_by: None,
            archived: false,
            provenance: Some(Provenance::Agent),
        }
    }

    #[test]
    fn different_numbers_dates_or_versions_are_never_the_same() {
        assert!(numbers_differ(
            &item("The service listens on port 7420.", ""),
            &item("The service listens on port 7421.", "")
        ));
        assert!(numbers_differ(
            &item("Upgraded tokio to 1.38.0", ""),
            &item("Upgraded tokio to 1.39.1", "")
        ));
        assert!(numbers_differ(
            &item("Release on 2024-05-01", ""),
            &item("Release on 2024-06-01", "")
        ));
        assert!(!numbers_differ(
            &item("The service listens on port 7420.", ""),
            &item("Port 7420 is where the service listens.", "")
        ));
        assert!(!numbers_differ(
            &item("Uses tokio", ""),
            &item("Uses tokio 1.38", "")
        ));
    }

    #[test]
    fn a_merge_keeps_every_fact_of_both() {
        let a = item(
            "s",
            "The cache lives in ~/.cache/app. It is cleared weekly.",
        );
        let mut b = item("s", "It is cleared weekly. Its size limit is 2 GiB.");
        b.cues = vec!["where is the cache?".into(), "A?".into()];
        b.importance = 4;
        let m = merge(&a, &b);
        assert!(
            m.body.contains("~/.cache/app") && m.body.contains("2 GiB"),
            "{}",
            m.body
        );
        assert_eq!(m.body.matches("cleared weekly").count(), 1, "{}", m.body);
        assert_eq!(
            m.cues,
            vec!["a?".to_owned(), "where is the cache?".to_owned()]
        );
        assert_eq!(m.importance, 4);
    }

    #[test]
    fn what_the_model_writes_is_scrubbed_before_it_is_kept() {
        let rec = cairn_core::Record {
            seq: 1,
            captured_at: chrono::Utc::now(),
            record: cairn_core::NewRecord {
                id: cairn_core::RecordId::derive("a", "b", "c"),
                framework: "claude-code".into(),
                session_id: "s".into(),
                project: None,
                cwd: None,
                model: None,
                outcome: Outcome::Success,
                started_at: chrono::Utc::now(),
                ended_at: None,
                request: "r".into(),
                author: None,
                text: "t".into(),
                content: serde_json::json!({}),
                source: None,
            },
        };
        let key = "AKIAQ3Z5X7C9V1B2N4M6";
        let p = Proposed {
            kind: "fact".into(),
            title: "The deploy key".into(),
            summary: format!("Deploys use the AWS key {key}."),
            body: format!("aws_access_key_id = {key}"),
            cues: vec![format!("what is {key}?"), "deploy key".into()],
            concepts: vec!["aws".into(), "deploy".into(), "keys".into()],
            importance: 3,
            certainty: "stated".into(),
            sources: vec![1],
            happened_at: None,
            ended_at: None,
            stated_by: Some("user".into()),
        };
        let (kept, _) = survivors(vec![p], &[rec], None);
        let text = serde_json::to_string(&kept).unwrap_or_default();
        assert!(!text.contains(key), "{text}");
        assert!(text.contains("[REDACTED"), "{text}");
    }

    #[test]
    fn a_dropped_item_keeps_no_secret_of_what_the_model_wrote() {
        // Built from parts so no whole token sits in the source.
        let key = format!("ghp_{}", "k3Tq9ZLm2VxB7cRw4YpN8sHd6FjG1aUe5Oio");
        let proposed = |kind: &str, certainty: &str| -> Proposed {
            serde_json::from_value(serde_json::json!({
                "kind": kind, "title": format!("Deploys use the token {key}"),
                "summary": "s", "body": "b", "cues": ["which deploy token?"],
                "concepts": ["deploy"], "importance": 3, "certainty": certainty,
                "sources": [1],
            }))
            .expect("a proposed item")
        };
        let (kept, dropped) = survivors(
            vec![
                proposed("fact", "inferred"),
                proposed(&format!("fact {key}"), "stated"),
                proposed("fact", &format!("stated {key}")),
            ],
            &[],
            None,
        );
        assert!(kept.is_empty());
        assert_eq!(dropped.len(), 3, "{dropped:?}");
        let text = serde_json::to_string(&dropped).unwrap_or_default();
        assert!(!text.contains(&key[4..]), "{text}");
        assert_eq!(text.matches("[REDACTED:github-token]").count(), 5, "{text}");
    }

    #[test]
    fn dates_the_model_writes_are_read() {
        assert_eq!(
            parse_date("2023-05-08").map(|t| t.to_rfc3339()),
            Some("2023-05-08T00:00:00+00:00".into())
        );
        assert!(parse_date("2023-05").is_some() && parse_date("2023").is_some());
        assert!(parse_date("last week").is_none());
    }
}
