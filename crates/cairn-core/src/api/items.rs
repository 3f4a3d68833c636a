//! Typed memory items as the API shows them: the item, its history (every event), its
//! relations and supersede chain, and its sources.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A typed memory item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ItemView {
    /// Its id (`i_…`).
    pub id: String,
    /// fact, decision, procedure, pitfall, architecture, preference, observation, episode.
    pub kind: String,
    /// A short title.
    pub title: String,
    /// The summary: its search key.
    pub summary: String,
    /// The whole body.
    pub body: String,
    /// Requests someone might make that this item answers.
    pub cues: Vec<String>,
    /// What it is about.
    pub concepts: Vec<String>,
    /// 1 to 5.
    pub importance: u8,
    /// stated, inferred, contested or ambiguous.
    pub certainty: String,
    /// Project identity.
    pub project: Option<String>,
    /// The records it came from.
    pub sources: Vec<String>,
    /// When it happened (RFC 3339).
    pub happened_at: Option<String>,
    /// When it was said: its newest source request (RFC 3339).
    pub said_at: Option<String>,
    /// When a lasting thing ended (RFC 3339).
    pub ended_at: Option<String>,
    /// The item that replaced it, when superseded.
    pub superseded_by: Option<String>,
    /// It left the active index (the log keeps it).
    pub archived: bool,
    /// Whose text states it: `user` (the request), `agent` (the agent's replies and tool
    /// calls), `outside` (only tool output, fetched pages or files read: never written into
    /// instruction files, never replacing what the user or the agent stated) or `unchecked`
    /// (distilled before Cairn recorded it; treated like `outside`).
    pub provenance: String,
}

/// An item as the API shows it.
pub fn item_view(i: &crate::Item) -> ItemView {
    let ts = super::timestamp;
    ItemView {
        id: i.id.as_str().to_owned(),
        kind: super::name_of(&i.kind),
        title: i.title.clone(),
        summary: i.summary.clone(),
        body: i.body.clone(),
        cues: i.cues.clone(),
        concepts: i.concepts.clone(),
        importance: i.importance,
        certainty: super::name_of(&i.certainty),
        project: i.project.clone(),
        sources: i.sources.iter().map(|s| s.as_str().to_owned()).collect(),
        happened_at: i.happened_at.as_ref().map(ts),
        said_at: i.said_at.as_ref().map(ts),
        ended_at: i.ended_at.as_ref().map(ts),
        superseded_by: i.superseded_by.as_ref().map(|s| s.as_str().to_owned()),
        archived: i.archived,
        provenance: provenance_name(i).to_owned(),
    }
}

/// Whose text states an item: `user`, `agent`, `outside`, or `unchecked` (distilled before
/// Cairn recorded it).
pub fn provenance_name(i: &crate::Item) -> &'static str {
    i.provenance.map_or("unchecked", crate::Provenance::as_str)
}

/// One event of an item's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ItemEventView {
    /// Position in the long-term log.
    #[ts(type = "number")]
    pub seq: i64,
    /// When (RFC 3339).
    pub at: String,
    /// created, merged, updated, superseded, archived, restored, used.
    pub kind: String,
    /// Why, in a few words.
    pub reason: Option<String>,
    /// The item's state after the event.
    pub item: ItemView,
}

/// An edge between two items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ItemRelationView {
    /// From this item.
    pub from: String,
    /// To this item.
    pub to: String,
    /// related, supersedes or contradicts.
    pub kind: String,
    /// Similarity or confidence, 0 to 1.
    pub weight: f32,
    /// The other item's title, when it still exists.
    pub other_title: Option<String>,
}

/// An item opened whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct OpenedItem {
    /// The item as it is now.
    pub item: ItemView,
    /// Every event, oldest first.
    pub history: Vec<ItemEventView>,
    /// Its relations (related, supersedes, contradicts), strongest first.
    pub relations: Vec<ItemRelationView>,
    /// The items it replaced and the ones that replaced it, oldest first (itself included).
    pub chain: Vec<String>,
    /// Its source requests, whole.
    pub sources: Vec<super::OpenedRecord>,
}

/// Ask for the items that came from a conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ItemsReq {
    /// Only items whose sources are in this conversation (framework and session id).
    #[serde(default)]
    pub framework: Option<String>,
    /// The conversation's session id (with `framework`).
    #[serde(default)]
    pub session_id: Option<String>,
    /// Only this project's items.
    #[serde(default)]
    pub project: Option<String>,
    /// Include archived and superseded items.
    #[serde(default)]
    pub all: bool,
    /// At most this many (200 by default, 2,000 at most), newest first.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Items, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ItemList {
    /// The items.
    pub items: Vec<ItemView>,
}

/// Ask for every profile (`profiles_list`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ProfilesReq {}

/// One dated line of a profile's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ProfileTimelineEntry {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// What happened or held from then.
    pub text: String,
}

/// A subject's profile: a short summary and a dated timeline, written by the nightly tidy-up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ProfileView {
    /// The project identity, or the machine's name.
    pub subject: String,
    /// `project` or `machine`.
    pub kind: String,
    /// A few sentences.
    pub summary: String,
    /// Oldest first.
    pub timeline: Vec<ProfileTimelineEntry>,
    /// How many items it was written from.
    #[ts(type = "number")]
    pub item_count: u64,
    /// When it was written (RFC 3339).
    pub updated_at: String,
}

/// Every profile: projects first, then the machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ProfileList {
    /// The profiles.
    pub profiles: Vec<ProfileView>,
}
