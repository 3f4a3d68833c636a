-- The injection log (DESIGN §1.6, §4): every turn note asked for, what it showed and why,
-- and people's labels on shown entries for the next ranker training. The prompt is the
-- user's words (scrubbed, cut short): Clear empties all three tables.

CREATE TABLE injections (
    turn           TEXT    NOT NULL PRIMARY KEY,
    at             TEXT    NOT NULL,
    framework      TEXT    NOT NULL,
    session_id     TEXT,
    project        TEXT,
    prompt         TEXT    NOT NULL,
    shown          INTEGER NOT NULL,
    bar            REAL    NOT NULL,
    judged_by      TEXT    NOT NULL,
    silent_because TEXT,
    latency_ms     INTEGER NOT NULL,
    feature_names  TEXT    NOT NULL,
    entries        TEXT    NOT NULL
);
CREATE INDEX injections_at ON injections (at);

-- Each entry a note showed: how often an earlier thing was shown is a ranker input.
CREATE TABLE injection_shown (
    turn     TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    PRIMARY KEY (turn, entry_id)
);
CREATE INDEX injection_shown_entry ON injection_shown (entry_id);

CREATE TABLE note_labels (
    turn     TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    label    TEXT NOT NULL CHECK (label IN ('useful', 'not_useful')),
    at       TEXT NOT NULL,
    PRIMARY KEY (turn, entry_id)
);
CREATE INDEX note_labels_entry ON note_labels (entry_id);
