-- Cairn store, schema 10: where a record sits in its session, read from an index alone.
--
-- The retriever scores each candidate with the requests just before and after it in its
-- session. This index holds what that look-up reads (the session, the time, the id and
-- revision, the author), so it never reads a record's text, and each neighbour is one seek
-- instead of a pass over the whole session.
CREATE INDEX IF NOT EXISTS records_place
    ON records (framework, session_id, started_at, id, rev, author);
