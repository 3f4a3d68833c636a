-- Sleep, the nightly tidy-up (DESIGN §1.4). Derived state: Clear empties both tables with the
-- logs, and a sleep rebuilds them from the logs.

-- Each active item's priority (importance × recency × use) at the last sleep, for search.
CREATE TABLE item_scores (
    item_id   TEXT    NOT NULL PRIMARY KEY,
    priority  REAL    NOT NULL,
    used      INTEGER NOT NULL,
    scored_at TEXT    NOT NULL
);

-- One dated timeline per subject (a project, or the machine for items with no project),
-- rewritten only when the hash of the subject's active items changes.
CREATE TABLE profiles (
    kind       TEXT    NOT NULL CHECK (kind IN ('project', 'machine')),
    subject    TEXT    NOT NULL,
    summary    TEXT    NOT NULL,
    timeline   TEXT    NOT NULL,
    items_hash TEXT    NOT NULL,
    item_count INTEGER NOT NULL,
    updated_at TEXT    NOT NULL,
    PRIMARY KEY (kind, subject)
);
