-- Cairn store, schema 2: what notes need beyond schema 1. Forward-only: never edit a shipped
-- migration; add a new one.
--
-- 1. `notes` is rebuilt so that a path is unique among *live* notes only (a deleted note
--    keeps its row and its path, and a new note may take that path), the user scope included
--    (schema 1's UNIQUE treated every NULL project as distinct). It also learns the content's
--    size and what the file looked like when Cairn last read or wrote it, so a file changed
--    outside Cairn is noticed by comparing size and mtime before any hashing.
-- 2. `note_versions` learns what each change was and the note's path after it, and its
--    redaction trigger is recreated so that those two columns can never change either.

CREATE TABLE notes_v2 (
    id          TEXT PRIMARY KEY,
    scope       TEXT    NOT NULL CHECK (scope IN ('user', 'project')),
    project     TEXT,
    path        TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    sha256      TEXT    NOT NULL,
    bytes       INTEGER NOT NULL DEFAULT 0,
    file_size   INTEGER,
    file_mtime  INTEGER,
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL,
    deleted_at  TEXT
);
INSERT INTO notes_v2 (id, scope, project, path, title, sha256, created_at, updated_at, deleted_at)
    SELECT id, scope, project, path, title, sha256, created_at, updated_at, deleted_at FROM notes;
DROP TABLE notes;
ALTER TABLE notes_v2 RENAME TO notes;
CREATE UNIQUE INDEX notes_live_path ON notes (scope, COALESCE(project, ''), path)
    WHERE deleted_at IS NULL;
CREATE INDEX notes_project ON notes (project);

ALTER TABLE note_versions ADD COLUMN action TEXT NOT NULL DEFAULT 'edit'
    CHECK (action IN ('create', 'edit', 'rename', 'delete', 'restore'));
ALTER TABLE note_versions ADD COLUMN path TEXT;

DROP TRIGGER note_versions_only_redaction;
CREATE TRIGGER note_versions_only_redaction BEFORE UPDATE ON note_versions
WHEN NOT (NEW.content IS NULL AND OLD.content IS NOT NULL
          AND NEW.redacted_at IS NOT NULL AND NEW.redacted_by IS NOT NULL
          AND NEW.seq = OLD.seq AND NEW.note_id = OLD.note_id AND NEW.version = OLD.version
          AND NEW.sha256 = OLD.sha256 AND NEW.author = OLD.author AND NEW.at = OLD.at
          AND NEW.action = OLD.action AND NEW.path IS OLD.path)
BEGIN SELECT RAISE(ABORT, 'note_versions is append-only: only redaction may change a version'); END;
