//! Notes brought in from an export: the file written where the note lives and the metadata
//! and versions stored as they were (same id, versions and times), under the notes lock so
//! nothing else writes in between.
use cairn_core::NoteId;
use cairn_core::api::NoteScopeKind;
use cairn_store::{Imported, NoteMetaRow, NoteVersionExport};

use crate::error::{Error, Result};
use crate::fsx::{self, FileStat};
use crate::notes::Notes;
use crate::path::{Scope, parse_path};
use crate::text::sha256_hex;

impl Notes {
    /// Imports one note: its file (for a live note, `content` must be its current content,
    /// matching `meta.sha256`), metadata and versions. A note whose id is stored already is a
    /// duplicate (same versions) or a conflict; so is a live note whose path holds another
    /// note's file. Nothing is written unless the note is added.
    pub async fn import(
        &self,
        meta: &NoteMetaRow,
        versions: &[NoteVersionExport],
        content: Option<&str>,
    ) -> Result<Imported> {
        let kind = match meta.scope.as_str() {
            "user" => NoteScopeKind::User,
            "project" => NoteScopeKind::Project,
            other => {
                return Err(Error::BadRequest(format!(
                    "note {}: unknown scope {other:?} (user or project)",
                    meta.id
                )));
            }
        };
        let scope = Scope::new(kind, meta.project.as_deref())?;
        let rel = parse_path(&meta.path, false)?;
        let _guard = self.inner.lock.lock().await;
        let store = self.store();
        let live = meta.deleted_at.is_none();
        if !live || store.note(&NoteId::new(meta.id.clone())).await?.is_some() {
            return Ok(store.import_note(meta, versions, None).await?);
        }
        let content = content.ok_or_else(|| {
            Error::BadRequest(format!("note {} is live but has no content", meta.id))
        })?;
        if sha256_hex(content) != meta.sha256 {
            return Err(Error::BadRequest(format!(
                "note {} ({}): its content does not match its sha256",
                meta.id, meta.path
            )));
        }
        self.sync_scope(&scope, &meta.path).await?;
        let res = self.resolve(&scope, &rel, &meta.path)?;
        if res.meta.is_some() {
            return Ok(Imported::Conflict);
        }
        self.make_parents(&scope, &res, &meta.path)?;
        let res = self.resolve(&scope, &rel, &meta.path)?;
        if res.meta.is_some() {
            return Ok(Imported::Conflict);
        }
        let stat = FileStat::of(&fsx::write_atomic(&res.path, content.as_bytes())?);
        let done = store
            .import_note(meta, versions, Some((stat.size, stat.mtime)))
            .await;
        if !matches!(done, Ok(Imported::Added)) {
            // Not ours after all: leave no file behind that the store does not know.
            if let Err(e) = fs_err::remove_file(&res.path) {
                tracing::warn!(error = %e, "could not remove a note file an import left behind");
            }
        }
        Ok(done?)
    }
}
