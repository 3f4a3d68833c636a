-- Cairn store, schema 1. Forward-only: never edit a shipped migration; add a new one.
--
-- The short-term log (records, chunks) and the long-term log (item_events) are append-only.
-- The database itself refuses UPDATE and DELETE on them; the one exception is Clear, which
-- opens the guard inside its own transaction.

CREATE TABLE log_guard (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    clearing INTEGER NOT NULL DEFAULT 0 CHECK (clearing IN (0, 1))
);
INSERT INTO log_guard (id, clearing) VALUES (1, 0);

-- Short-term log: one row per captured request (a newer revision of the same request, when
-- the turn went on after it was first read, is a new row with a higher rev).
CREATE TABLE records (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT    NOT NULL,
    rev         INTEGER NOT NULL DEFAULT 0,
    framework   TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    project     TEXT,
    cwd         TEXT,
    model       TEXT,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('success', 'error', 'interrupted', 'unknown')),
    started_at  TEXT    NOT NULL,
    ended_at    TEXT,
    captured_at TEXT    NOT NULL,
    request     TEXT    NOT NULL,
    text        TEXT    NOT NULL,
    content     TEXT    NOT NULL,
    source      TEXT,
    UNIQUE (id, rev)
);
CREATE INDEX records_session ON records (framework, session_id, started_at);
CREATE INDEX records_project ON records (project, started_at);
CREATE INDEX records_started ON records (started_at);

-- The latest revision of each record.
CREATE VIEW records_current AS
    SELECT r.* FROM records r
    WHERE r.rev = (SELECT MAX(r2.rev) FROM records r2 WHERE r2.id = r.id);

-- Search chunks of long records (the record itself stays whole).
CREATE TABLE chunks (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    record_id TEXT    NOT NULL,
    rev       INTEGER NOT NULL DEFAULT 0,
    ord       INTEGER NOT NULL,
    start     INTEGER NOT NULL,
    text      TEXT    NOT NULL,
    UNIQUE (record_id, rev, ord)
);

-- Long-term log: every event carries the item's whole state after it.
CREATE TABLE item_events (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id TEXT NOT NULL,
    kind    TEXT NOT NULL CHECK (kind IN ('created', 'merged', 'updated', 'superseded', 'archived', 'restored', 'used')),
    at      TEXT NOT NULL,
    state   TEXT NOT NULL,
    reason  TEXT
);
CREATE INDEX item_events_item ON item_events (item_id, seq);

-- The current state of each item: its latest event.
CREATE VIEW items_current AS
    SELECT e.* FROM item_events e
    WHERE e.seq = (SELECT MAX(e2.seq) FROM item_events e2 WHERE e2.item_id = e.item_id);

CREATE TRIGGER records_append_only_update BEFORE UPDATE ON records
BEGIN SELECT RAISE(ABORT, 'records is append-only: UPDATE refused'); END;
CREATE TRIGGER records_append_only_delete BEFORE DELETE ON records
WHEN (SELECT clearing FROM log_guard WHERE id = 1) = 0
BEGIN SELECT RAISE(ABORT, 'records is append-only: DELETE refused (only Clear may delete)'); END;

CREATE TRIGGER chunks_append_only_update BEFORE UPDATE ON chunks
BEGIN SELECT RAISE(ABORT, 'chunks is append-only: UPDATE refused'); END;
CREATE TRIGGER chunks_append_only_delete BEFORE DELETE ON chunks
WHEN (SELECT clearing FROM log_guard WHERE id = 1) = 0
BEGIN SELECT RAISE(ABORT, 'chunks is append-only: DELETE refused (only Clear may delete)'); END;

CREATE TRIGGER item_events_append_only_update BEFORE UPDATE ON item_events
BEGIN SELECT RAISE(ABORT, 'item_events is append-only: UPDATE refused'); END;
CREATE TRIGGER item_events_append_only_delete BEFORE DELETE ON item_events
WHEN (SELECT clearing FROM log_guard WHERE id = 1) = 0
BEGIN SELECT RAISE(ABORT, 'item_events is append-only: DELETE refused (only Clear may delete)'); END;

-- Edges of the concept graph (derived; rebuilt by the nightly tidy-up).
CREATE TABLE relations (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    from_id    TEXT NOT NULL,
    to_id      TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('related', 'supersedes', 'contradicts')),
    weight     REAL NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (from_id, to_id, kind)
);
CREATE INDEX relations_to ON relations (to_id);

-- Embeddings kept with the logs, so the index is rebuilt without a model call.
CREATE TABLE vectors (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    owner_id   TEXT    NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('summary', 'chunk', 'cue')),
    ord        INTEGER NOT NULL,
    model      TEXT    NOT NULL,
    dim        INTEGER NOT NULL,
    data       BLOB    NOT NULL,
    created_at TEXT    NOT NULL,
    UNIQUE (owner_id, kind, ord, model)
);
CREATE INDEX vectors_model ON vectors (model);

-- Where each session file or store was read up to.
CREATE TABLE capture_cursors (
    source     TEXT    NOT NULL,
    path       TEXT    NOT NULL,
    file_key   TEXT,
    size       INTEGER NOT NULL DEFAULT 0,
    offset     INTEGER NOT NULL DEFAULT 0,
    mtime      TEXT,
    high_water TEXT,
    state      TEXT,
    updated_at TEXT    NOT NULL,
    PRIMARY KEY (source, path)
);

-- Persisted state changed at run time (the memory switch, preferences). Config is a file.
CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- Titled Markdown notes (the files live under the notes root; this is their metadata).
CREATE TABLE notes (
    id         TEXT PRIMARY KEY,
    scope      TEXT NOT NULL CHECK (scope IN ('user', 'project')),
    project    TEXT,
    path       TEXT NOT NULL,
    title      TEXT NOT NULL,
    sha256     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted_at TEXT,
    UNIQUE (scope, project, path)
);

-- Every version of every note. Append-only, except that a version may be redacted: its
-- content stripped, who and when kept.
CREATE TABLE note_versions (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    note_id     TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    sha256      TEXT    NOT NULL,
    content     TEXT,
    author      TEXT    NOT NULL,
    at          TEXT    NOT NULL,
    redacted_at TEXT,
    redacted_by TEXT,
    UNIQUE (note_id, version)
);
CREATE TRIGGER note_versions_only_redaction BEFORE UPDATE ON note_versions
WHEN NOT (NEW.content IS NULL AND OLD.content IS NOT NULL
          AND NEW.redacted_at IS NOT NULL AND NEW.redacted_by IS NOT NULL
          AND NEW.seq = OLD.seq AND NEW.note_id = OLD.note_id AND NEW.version = OLD.version
          AND NEW.sha256 = OLD.sha256 AND NEW.author = OLD.author AND NEW.at = OLD.at)
BEGIN SELECT RAISE(ABORT, 'note_versions is append-only: only redaction may change a version'); END;
CREATE TRIGGER note_versions_append_only_delete BEFORE DELETE ON note_versions
WHEN (SELECT clearing FROM log_guard WHERE id = 1) = 0
BEGIN SELECT RAISE(ABORT, 'note_versions is append-only: DELETE refused (only Clear may delete)'); END;

-- What happened to the store itself (clears, rebuilds). Never holds remembered content.
CREATE TABLE journal (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    at     TEXT NOT NULL,
    kind   TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TRIGGER journal_append_only_update BEFORE UPDATE ON journal
BEGIN SELECT RAISE(ABORT, 'journal is append-only: UPDATE refused'); END;
CREATE TRIGGER journal_append_only_delete BEFORE DELETE ON journal
BEGIN SELECT RAISE(ABORT, 'journal is append-only: DELETE refused'); END;
