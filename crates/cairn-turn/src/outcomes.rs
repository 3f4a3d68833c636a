//! Learning from use: what became of each entry a turn note showed.
//!
//! A noted turn is the request the agent's hook asked about (its session, framework and time
//! are in the injection log). Once capture has stored the agent's answer to it — the record of
//! that request in the same session — each shown entry gets one outcome:
//!
//! - **used** when the agent opened the entry with Cairn's `open` tool in that session from
//!   that turn on (a tool step such as Claude Code's `mcp__cairn__open` whose input names the
//!   entry's id), or when the answer's prose reused an identifier of what the note said of the
//!   entry, by the replay's rule ([`crate::reuse`]): an identifier the request and the turn's
//!   own tool steps did not hold, that nothing earlier in the session said, and that at most
//!   [`crate::reuse::rare_max`] records of the store hold (counted in the keyword index);
//! - **ignored** when neither happened and the answer is finished: marked complete by
//!   capture, followed by a later request of the session, or left as it is for
//!   [`ANSWER_QUIET`].
//!
//! A use is decided as soon as it is seen; an ignore waits for the finished answer. A turn
//! whose answer never comes stays undecided, and turns older than [`ANSWER_WAIT`] are not
//! looked at again. Each outcome is stored once (`Store::record_note_outcome`), and an item
//! used gets a `used` event, which sleep's priority and its archiving of unused items read. A
//! person's label (`note_feedback`) wins over the outcome wherever both exist. The pass runs
//! after every capture pass, over the undecided turns only: [`decide`] reads, and the host
//! hands its decisions to [`record`] under its write permit, so a Clear never interleaves.
use std::collections::{HashMap, HashSet};

use std::sync::Arc;

use cairn_core::{Record, Timestamp};
use cairn_index::TextIndex;
use cairn_store::{Injection, OUTCOME_IGNORED, OUTCOME_USED, Store, UndecidedEntry};

use crate::reuse;
use crate::{Error, Result};

/// How long a noted turn's answer is waited for.
pub(crate) const ANSWER_WAIT: chrono::Duration = chrono::Duration::days(7);
/// An answer capture has not marked complete counts as finished once it was stored this long
/// ago (no newer revision since) and no later request followed it.
pub(crate) const ANSWER_QUIET: chrono::Duration = chrono::Duration::minutes(30);
/// The most undecided turns one pass looks at (the newest first).
const PASS_TURNS: u64 = 500;
/// A captured request is the noted turn's when it began this long before the note was asked
/// at the earliest (clocks and the framework's own timestamps)…
const BEGAN_BEFORE: chrono::Duration = chrono::Duration::minutes(2);
/// …and this long after it at the latest.
const BEGAN_AFTER: chrono::Duration = chrono::Duration::minutes(10);
/// Without the same words, the request that began closest after the note was asked, from
/// this long before it (a hook runs as the request is sent).
const BEGAN_SLACK: chrono::Duration = chrono::Duration::seconds(5);
/// Characters of the request compared with the logged prompt.
const PROMPT_PREFIX: usize = 120;

/// Words joined by single spaces, at most `n` characters.
fn flat(text: &str, n: usize) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(n)
        .collect()
}

/// Which of a session's records (in time order) is the noted turn's: the one whose request is
/// the logged prompt, begun around the note's time; failing that, the first begun from just
/// before the note's time on.
pub(crate) fn answer_of(records: &[Record], at: Timestamp, prompt: &str) -> Option<usize> {
    let near = |r: &Record| {
        let t = r.record.started_at;
        t >= at - BEGAN_BEFORE && t <= at + BEGAN_AFTER
    };
    let prompt = flat(prompt, PROMPT_PREFIX);
    if !prompt.is_empty()
        && let Some(i) = records
            .iter()
            .position(|r| near(r) && flat(&r.record.request, PROMPT_PREFIX) == prompt)
    {
        return Some(i);
    }
    records
        .iter()
        .position(|r| near(r) && r.record.started_at >= at - BEGAN_SLACK)
}

/// Whether a tool step is Cairn's `open` (`mcp__cairn__open`, `cairn.open`, `open`, or an MCP
/// call by tool name as Cline writes it).
fn is_open_tool(name: &str, input: &serde_json::Value) -> bool {
    let name = name.to_ascii_lowercase();
    if name == "use_mcp_tool" {
        return input["tool_name"].as_str() == Some("open");
    }
    name.strip_suffix("open")
        .is_some_and(|head| head.is_empty() || head.ends_with(['_', '.', '/', ':', '-']))
}

/// Whether a turn's tool steps opened `id` with Cairn's `open` tool.
pub(crate) fn opens(content: &serde_json::Value, id: &str) -> bool {
    content["steps"].as_array().into_iter().flatten().any(|s| {
        s["type"].as_str() == Some("tool")
            && is_open_tool(s["name"].as_str().unwrap_or(""), &s["input"])
            && match &s["input"] {
                serde_json::Value::String(t) => t.contains(id),
                other => other.to_string().contains(id),
            }
    })
}

/// Whether the answer `records[i]` is finished: capture saw its end, a later request of its
/// session followed, or it was stored [`ANSWER_QUIET`] ago and not revised since.
pub(crate) fn finished(records: &[Record], i: usize, now: Timestamp) -> bool {
    let r = &records[i];
    r.record.content["complete"].as_bool().unwrap_or(true)
        || records[i + 1..]
            .iter()
            .any(|n| n.record.started_at > r.record.started_at)
        || now - r.captured_at >= ANSWER_QUIET
}

/// A noted turn with its undecided entries.
type Noted = (Injection, Vec<UndecidedEntry>);

/// One shown entry to decide, with what its answer said.
#[derive(Debug)]
struct Check {
    turn: String,
    entry: String,
    item: bool,
    opened: bool,
    finished: bool,
    /// The identifiers of the answer's prose that the note's text of the entry holds too.
    shared: Vec<String>,
    /// Those of `shared` the turn held itself or its session said before.
    own: HashSet<String>,
    before: HashSet<String>,
}

/// The words of an identifier as the keyword index holds them (a port is its number).
fn phrase(ident: &str) -> &str {
    ident.strip_prefix("port:").unwrap_or(ident)
}

/// What the note said of an entry: its kept text, or for a turn logged before texts were
/// kept, its title.
fn shown_text(inj: &Injection, e: &UndecidedEntry) -> String {
    e.text.clone().unwrap_or_else(|| {
        inj.entries
            .iter()
            .find(|c| c.id == e.id)
            .map(|c| c.title.clone())
            .unwrap_or_default()
    })
}

/// What [`decide`] found for one shown entry, for [`record`].
#[derive(Debug)]
pub struct Decision {
    check: Check,
    /// The identifiers its answer reused (none when it was opened).
    reused: Vec<String>,
}

/// Decides the outcome of every shown entry of the undecided noted turns whose answer is
/// captured (see the module docs), reading the store and the keyword index `text`; nothing is
/// written. The capture pass runs it after indexing what it stored.
pub async fn decide(store: &Store, text: Arc<TextIndex>) -> Result<Vec<Decision>> {
    let now = chrono::Utc::now();
    let pending = store.undecided_notes(now - ANSWER_WAIT, PASS_TURNS).await?;
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    // By session: its records are read once for all its noted turns.
    let mut sessions: HashMap<(String, String), Vec<Noted>> = HashMap::new();
    for (inj, entries) in pending {
        let Some(session) = inj.session_id.clone() else {
            continue;
        };
        sessions
            .entry((inj.framework.clone(), session))
            .or_default()
            .push((inj, entries));
    }
    let mut checks: Vec<Check> = Vec::new();
    for ((framework, session), turns) in sessions {
        let records = store.session_records(&framework, &session).await?;
        if records.is_empty() {
            continue;
        }
        // What each record of the session holds, read when first asked.
        let mut held: Vec<Option<HashSet<String>>> = vec![None; records.len()];
        for (inj, entries) in turns {
            let Some(i) = answer_of(&records, inj.at, &inj.prompt) else {
                continue;
            };
            let answer = &records[i];
            let done = finished(&records, i, now);
            let (prose, own) = reuse::answer_and_own(&answer.record);
            for e in entries {
                let opened = records[i..].iter().any(|r| opens(&r.record.content, &e.id));
                let mut named = HashSet::new();
                reuse::identifiers(&shown_text(&inj, &e), &mut named);
                let mut shared: Vec<String> = prose.intersection(&named).cloned().collect();
                shared.sort();
                // Said earlier in the session: not something the note brought.
                let mut before = HashSet::new();
                for w in &shared {
                    let said = (0..i).any(|j| {
                        records[j].record.started_at < answer.record.started_at
                            && held[j]
                                .get_or_insert_with(|| reuse::held(&records[j].record))
                                .contains(w)
                    });
                    if said {
                        before.insert(w.clone());
                    }
                }
                checks.push(Check {
                    turn: inj.turn.clone(),
                    item: e.id.starts_with(cairn_core::ItemId::PREFIX),
                    entry: e.id,
                    opened,
                    finished: done,
                    own: shared
                        .iter()
                        .filter(|w| own.contains(*w))
                        .cloned()
                        .collect(),
                    before,
                    shared,
                });
            }
        }
    }
    if checks.is_empty() {
        return Ok(Vec::new());
    }
    // The rare bound, and each candidate's holders in the keyword index (on the blocking
    // pool: a few phrase look-ups, each stopping past the bound).
    let rare =
        reuse::rare_max(usize::try_from(store.counts().await?.records).unwrap_or(usize::MAX));
    tokio::task::spawn_blocking(move || {
        let holders = |w: &String| match text.records_holding(phrase(w), rare) {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(error = %e, "cannot count an identifier's records; taken as common");
                usize::MAX
            }
        };
        checks
            .into_iter()
            .map(|c| {
                let reused: Vec<String> = if c.opened {
                    Vec::new()
                } else {
                    reuse::reused(
                        c.shared.iter(),
                        |w| c.own.contains(w),
                        &holders,
                        rare,
                        |w| c.before.contains(w),
                    )
                    .cloned()
                    .collect()
                };
                Decision { check: c, reused }
            })
            .collect()
    })
    .await
    .map_err(|e| Error::internal(format!("deciding the notes' outcomes failed: {e}")))
}

/// Records each decided outcome once, in the store (the host holds its write permit); an
/// entry not decided yet (no use seen, the answer not finished) is left for a later pass.
/// Idempotent: decided entries are never looked at again. Returns how many it recorded.
pub async fn record(store: &Store, decided: Vec<Decision>) -> Result<u64> {
    let mut recorded = 0;
    for Decision { check: c, reused } in decided {
        let (outcome, because) = if c.opened {
            (
                OUTCOME_USED,
                Some("opened with Cairn's open tool".to_owned()),
            )
        } else if !reused.is_empty() {
            (
                OUTCOME_USED,
                Some(format!("the answer reused {}", reused.join(", "))),
            )
        } else if c.finished {
            (OUTCOME_IGNORED, None)
        } else {
            continue;
        };
        match store
            .record_note_outcome(&c.turn, &c.entry, outcome, because.as_deref())
            .await
        {
            Ok(true) => {
                recorded += 1;
                tracing::debug!(turn = %c.turn, entry = %c.entry, outcome, item = c.item, "note outcome");
            }
            Ok(false) => {}
            // Cleared meanwhile.
            Err(cairn_store::Error::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(recorded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(minute: i64, request: &str, content: serde_json::Value) -> Record {
        let id = format!("r_{minute}");
        crate::testkit::record(&id, "s", minute, request, request, content)
    }

    fn minute(m: i64) -> Timestamp {
        chrono::DateTime::from_timestamp(1_780_000_000 + m * 60, 0).unwrap_or_default()
    }

    #[test]
    fn the_noted_turn_is_the_request_with_its_words_near_its_time() {
        let open = serde_json::json!({"complete": false});
        let records = vec![
            rec(0, "set up the pool", open.clone()),
            rec(1, "which port does  staging\nlisten on?", open.clone()),
            rec(2, "thanks", open.clone()),
        ];
        // The same words (spacing aside), asked some time after the request began.
        let at = minute(1) + chrono::Duration::seconds(30);
        assert_eq!(
            answer_of(&records, at, "which port does staging listen on?"),
            Some(1)
        );
        // Other words: the first request begun from just before the note on.
        assert_eq!(answer_of(&records, at, "something else"), Some(2));
        let at = minute(1) + chrono::Duration::seconds(3);
        assert_eq!(answer_of(&records, at, "something else"), Some(1));
        // Too far from any request: none.
        assert_eq!(answer_of(&records, minute(60), "thanks"), None);
    }

    #[test]
    fn an_answer_is_finished_when_complete_followed_or_quiet() {
        let open = serde_json::json!({"complete": false});
        let records = vec![
            rec(0, "a", serde_json::json!({"complete": true})),
            rec(1, "b", open.clone()),
            rec(2, "c", open.clone()),
        ];
        assert!(finished(&records, 0, minute(0)), "complete");
        assert!(finished(&records, 1, minute(1)), "a later request followed");
        assert!(
            !finished(&records, 2, minute(3)),
            "the latest, open, just stored"
        );
        assert!(
            finished(&records, 2, minute(2) + ANSWER_QUIET),
            "quiet since"
        );
    }

    #[test]
    fn opening_an_entry_is_a_cairn_open_tool_step_naming_its_id() {
        let steps = |name: &str, input: serde_json::Value| serde_json::json!({"steps": [{"type": "tool", "name": name, "input": input}]});
        let id = "r_0123456789abcdef01234567";
        assert!(opens(
            &steps("mcp__cairn__open", serde_json::json!({"id": id})),
            id
        ));
        assert!(opens(
            &steps("cairn.open", serde_json::json!({"id": id})),
            id
        ));
        assert!(opens(
            &steps(
                "use_mcp_tool",
                serde_json::json!({"server_name": "cairn", "tool_name": "open", "arguments": format!("{{\"id\":\"{id}\"}}")})
            ),
            id
        ));
        assert!(!opens(
            &steps("mcp__cairn__open", serde_json::json!({"id": "r_other"})),
            id
        ));
        assert!(!opens(
            &steps("mcp__cairn__search", serde_json::json!({"query": id})),
            id
        ));
        assert!(!opens(&steps("reopen", serde_json::json!({"id": id})), id));
        assert!(!opens(
            &serde_json::json!({"steps": [{"type": "text", "text": id}]}),
            id
        ));
    }
}
