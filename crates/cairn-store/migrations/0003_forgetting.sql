-- Cairn store, schema 3: forgetting that sticks.
--
-- The ids of the records a Clear removed. A record id is a hash of (framework, session id,
-- message id) and holds no content; capture skips these ids for good, so a rewritten session
-- file or a store re-read from scratch never brings a cleared record back. Clear itself never
-- empties this table.
CREATE TABLE forgotten (
    id  TEXT PRIMARY KEY,
    at  TEXT NOT NULL
) WITHOUT ROWID;
