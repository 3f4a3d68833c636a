-- Which captured requests distillation has read, and in which window. Derived state: Clear
-- empties it with the logs; a rebuild may read a request again.
CREATE TABLE distilled (
    record_id TEXT    NOT NULL PRIMARY KEY,
    rev       INTEGER NOT NULL,
    window    TEXT    NOT NULL,
    at        TEXT    NOT NULL,
    items     INTEGER NOT NULL
);
CREATE INDEX distilled_window ON distilled (window);
