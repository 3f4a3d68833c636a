//! `agents_found`: what the first run shows — every agent framework with session stores on
//! this machine or captured history, with its figures, and the history files inside projects
//! that came with cloned repositories (not captured).
use std::collections::BTreeMap;

use cairn_core::api::{AgentFound, AgentsFound, Empty};

use crate::{ApiError, Result, Service};
use cairn_core::api::timestamp as rfc3339;

impl Service {
    /// The `agents_found` method.
    #[tracing::instrument(skip_all, err)]
    pub(crate) async fn agents_found(&self, _: Empty) -> Result<AgentsFound> {
        let opts = self.capture_options()?;
        // Aider's and SpecStory's files live inside projects: each is its own store.
        let histories = cairn_capture::pass::project_histories(self.store(), &opts).await?;
        let cloned_histories = histories
            .cloned
            .iter()
            .map(|(_, p)| p.display().to_string())
            .collect();
        let project_files = histories.files;
        let found = tokio::task::spawn_blocking(move || {
            let mut warnings = Vec::new();
            cairn_capture::pass::discover(&opts, &mut warnings)
                .into_iter()
                .map(|(spec, path)| {
                    // Where the agent keeps its sessions (the root the store was found under).
                    let root = (spec.roots)(&opts.env)
                        .into_iter()
                        .find(|r| path.starts_with(r))
                        .unwrap_or(path);
                    (spec.name, spec.display, root)
                })
                .chain(
                    project_files
                        .into_iter()
                        .map(|(spec, path)| (spec.name, spec.display, path)),
                )
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| ApiError::internal(format!("looking for agents' stores stopped: {e}")))?;
        let mut agents: BTreeMap<String, AgentFound> = BTreeMap::new();
        let blank = |framework: &str, name: &str| AgentFound {
            framework: framework.to_owned(),
            name: name.to_owned(),
            stores: 0,
            place: None,
            conversations: 0,
            requests: 0,
            first_at: None,
            last_at: None,
        };
        for (framework, name, path) in found {
            let a = agents
                .entry(framework.to_owned())
                .or_insert_with(|| blank(framework, name));
            a.stores += 1;
            if a.place.is_none() {
                a.place = Some(path.display().to_string());
            }
        }
        for span in self.store().framework_spans().await? {
            let name = cairn_capture::frameworks::all()
                .into_iter()
                .find(|s| s.name == span.framework)
                .map_or_else(|| span.framework.clone(), |s| s.display.to_owned());
            let a = agents
                .entry(span.framework.clone())
                .or_insert_with(|| blank(&span.framework, &name));
            a.conversations = span.sessions;
            a.requests = span.requests;
            a.first_at = Some(rfc3339(&span.first_at));
            a.last_at = Some(rfc3339(&span.last_at));
        }
        let mut agents: Vec<AgentFound> = agents.into_values().collect();
        agents.sort_by(|a, b| {
            b.conversations
                .cmp(&a.conversations)
                .then(b.stores.cmp(&a.stores))
                .then(a.framework.cmp(&b.framework))
        });
        Ok(AgentsFound {
            agents,
            cloned_histories,
        })
    }
}
