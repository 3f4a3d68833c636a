-- Cairn store, schema 11: what became of each entry a turn note showed.
--
-- Once the agent's answer to a noted turn is captured, the service decides for each shown
-- entry whether the answer used it (it reused a rare identifier the entry's text holds, or
-- the agent opened the entry with Cairn's `open` tool) or ignored it: one outcome per turn
-- and entry, never changed. A person's label (note_labels) wins over it where both exist.
-- What the note said of each entry is kept with the showing, so the decision reads what the
-- agent read. Cairn's words from scrubbed records only: Clear empties both tables.
ALTER TABLE injection_shown ADD COLUMN text TEXT;

CREATE TABLE note_outcomes (
    turn     TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    outcome  TEXT NOT NULL CHECK (outcome IN ('used', 'ignored')),
    because  TEXT,
    at       TEXT NOT NULL,
    PRIMARY KEY (turn, entry_id)
);
CREATE INDEX note_outcomes_entry ON note_outcomes (entry_id);
