//! Registering `cairn mcp` and Cairn's hooks with each agent framework (Settings → Integrations, `cairn
//! integrate`). The edits themselves are `cairn-integrate`'s; this picks the binary to
//! register and where backups go (`<data>/backups/integrations/`, owner-only, the newest
//! few per file, listed with each integration).
use std::path::PathBuf;

use cairn_config::{HookSettings, Origin};
use cairn_core::ErrorCode;
use cairn_core::api::{
    Empty, HookTiming, HookTimingReq, IntegrationBackup, IntegrationChange, IntegrationList,
    IntegrationSetReq, IntegrationView,
};
use cairn_integrate::{Env, HooksState, Integrations};

use crate::{ApiError, Result, Service};

/// The `cairn` binary agents should start: this program when it is `cairn`, else a `cairn`
/// next to it (the desktop app ships one beside itself).
fn cairn_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe()
        .map_err(|e| ApiError::internal(format!("cannot tell where this program is: {e}")))?;
    let name = if cfg!(windows) { "cairn.exe" } else { "cairn" };
    if exe.file_name().is_some_and(|n| n == name) {
        return Ok(exe);
    }
    let sibling = exe.with_file_name(name);
    if sibling.is_file() {
        return Ok(sibling);
    }
    Err(ApiError::new(
        ErrorCode::Unavailable,
        format!(
            "cannot find the `cairn` command next to {}: reinstall Cairn, or run `cairn integrate` \
             from a terminal",
            exe.display()
        ),
    ))
}

fn integrate_err(e: cairn_integrate::Error) -> ApiError {
    let code = if e.is_bad_input() {
        ErrorCode::BadRequest
    } else {
        ErrorCode::Internal
    };
    ApiError::new(code, e.to_string())
}

impl Service {
    fn integrations(&self) -> Result<Integrations> {
        let env = Env::from_process().map_err(integrate_err)?;
        let command = cairn_binary()?;
        Ok(Integrations::new(
            env,
            command.to_string_lossy().into_owned(),
            self.paths().data.join("backups").join("integrations"),
        ))
    }

    pub(crate) async fn integrations_list(&self, _: Empty) -> Result<IntegrationList> {
        let integrations = self.integrations()?;
        let list = tokio::task::spawn_blocking(move || integrations.list())
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?;
        Ok(IntegrationList {
            integrations: list
                .into_iter()
                .map(|s| IntegrationView {
                    hooks: s.hooks.as_ref().ok().map(|h| {
                        match (h.state, h.current) {
                            (HooksState::Installed, false) => "outdated",
                            (state, _) => state.as_str(),
                        }
                        .to_owned()
                    }),
                    hooks_path: s
                        .hooks
                        .as_ref()
                        .ok()
                        .map(|h| h.path.to_string_lossy().into_owned()),
                    hooks_note: match &s.hooks {
                        Ok(h) => h.problem.clone(),
                        Err(why) => Some((*why).to_owned()),
                    },
                    manual: (!s.manual.is_empty()).then(|| s.manual.join(" ")),
                    framework: s.framework.to_string(),
                    path: s.path.to_string_lossy().into_owned(),
                    detected: s.detected,
                    exists: s.exists,
                    installed: s.installed,
                    current: s.current,
                    backups: s
                        .backups
                        .into_iter()
                        .map(|b| IntegrationBackup {
                            path: b.path.to_string_lossy().into_owned(),
                            file_name: b.file_name,
                            created_at: b.created_at,
                            size: b.size,
                        })
                        .collect(),
                })
                .collect(),
        })
    }

    pub(crate) async fn integration_set(
        &self,
        req: IntegrationSetReq,
    ) -> Result<IntegrationChange> {
        let integrations = self.integrations()?;
        let framework = req.framework.trim().to_owned();
        let change = tokio::task::spawn_blocking(move || {
            if req.installed {
                integrations.install(&framework)
            } else {
                integrations.remove(&framework)
            }
        })
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(integrate_err)?;
        tracing::info!(
            framework = %change.framework,
            action = ?change.action,
            hooks = ?change.hooks.as_ref().map(|h| h.action),
            "integration changed"
        );
        Ok(IntegrationChange {
            framework: change.framework.to_string(),
            path: change.path.to_string_lossy().into_owned(),
            action: change.action.as_str().to_owned(),
            backup: change.backup.map(|b| b.to_string_lossy().into_owned()),
            notes: change.notes,
            hooks: change.hooks.as_ref().map(|h| h.action.as_str().to_owned()),
            hooks_path: change
                .hooks
                .as_ref()
                .map(|h| h.path.to_string_lossy().into_owned()),
            hooks_backup: change
                .hooks
                .as_ref()
                .and_then(|h| h.backup.as_ref())
                .map(|b| b.to_string_lossy().into_owned()),
            manual: (!change.manual.is_empty()).then(|| change.manual.join(" ")),
        })
    }
}

impl Service {
    /// How long agents' hooks wait for the turn note, as in effect now.
    #[tracing::instrument(skip_all)]
    pub(crate) async fn hook_timing_get(&self, _: Empty) -> Result<HookTiming> {
        Ok(self.hook_timing())
    }

    /// Saves a new hook deadline in the config file's `[hook]` table and tells the hooks
    /// (through `service.json`), so the next hook waits that long.
    #[tracing::instrument(skip(self), err)]
    pub(crate) async fn hook_timing_set(&self, req: HookTimingReq) -> Result<HookTiming> {
        let file = self.config_file().to_path_buf();
        let hook = HookSettings {
            deadline_ms: req.deadline_ms,
        };
        let checked = self
            .settings()
            .with_hook(hook, &Origin::File(file.clone()))
            .map_err(|e| ApiError::bad_request(e.to_string()))?
            .hook;
        let to_save = checked.clone();
        tokio::task::spawn_blocking(move || cairn_config::save_hook(&file, &to_save))
            .await
            .map_err(|e| ApiError::internal(format!("the save task failed: {e}")))?
            .map_err(|e| ApiError::internal(format!("the hook deadline was not saved: {e}")))?;
        tracing::info!(deadline_ms = checked.deadline_ms, "hook deadline saved");
        self.set_hook_settings(checked);
        Ok(self.hook_timing())
    }

    fn hook_timing(&self) -> HookTiming {
        HookTiming {
            deadline_ms: self.hook_settings().deadline_ms,
            default_ms: HookSettings::default_deadline_ms(),
            min_ms: *HookSettings::DEADLINE_MS.start(),
            max_ms: *HookSettings::DEADLINE_MS.end(),
            judge_wait_ms: crate::service::hook_wait_ms(&self.llm_settings()),
            config_file: self.config_file().display().to_string(),
        }
    }
}
