-- The review inbox's log (issue: keep memory clean): every action taken on an entry — merge,
-- supersede, archive, keep — with what it changed, so it can be undone. The item states it
-- keeps are remembered content: Clear empties it.

CREATE TABLE review_actions (
    id        TEXT NOT NULL PRIMARY KEY,
    at        TEXT NOT NULL,
    entry     TEXT NOT NULL,
    category  TEXT NOT NULL,
    action    TEXT NOT NULL,
    summary   TEXT NOT NULL,
    detail    TEXT NOT NULL,
    undone_at TEXT
);
CREATE INDEX review_actions_at ON review_actions (at);
CREATE INDEX review_actions_entry ON review_actions (entry);

-- Records a review archived as duplicates: kept whole in the log, left out of search and the
-- turn note until the archive is undone. Ids only; Clear empties it with the records.
CREATE TABLE hidden_records (
    id  TEXT NOT NULL PRIMARY KEY,
    at  TEXT NOT NULL,
    why TEXT NOT NULL
);
