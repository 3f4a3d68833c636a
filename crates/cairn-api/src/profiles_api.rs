//! Profiles in the service: each project's and the machine's summary and dated timeline, as
//! the nightly tidy-up (sleep) last wrote them. Read-only; Clear empties them with the items.
use cairn_core::api::{ProfileList, ProfileTimelineEntry, ProfileView, ProfilesReq};

use crate::{Result, Service};

/// A stored profile as the API shows it.
fn profile_view(p: cairn_store::Profile) -> ProfileView {
    ProfileView {
        subject: p.subject,
        kind: p.kind.as_str().to_owned(),
        summary: p.summary,
        timeline: p
            .timeline
            .into_iter()
            .map(|e| ProfileTimelineEntry {
                date: e.date,
                text: e.text,
            })
            .collect(),
        item_count: p.item_count,
        updated_at: p
            .updated_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    }
}

impl Service {
    /// The `profiles_list` method: every profile, projects first, then the machine.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn profiles_list(&self, _: ProfilesReq) -> Result<ProfileList> {
        let profiles = self.store().profiles().await?;
        Ok(ProfileList {
            profiles: profiles.into_iter().map(profile_view).collect(),
        })
    }
}
