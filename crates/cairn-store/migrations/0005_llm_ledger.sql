-- The ledger of model calls: one row per call Cairn made to a model provider. It holds what
-- a call cost and how it ended, never what was said. Clear keeps it (it remembers nothing),
-- so a day's budget stays spent.
CREATE TABLE llm_calls (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    at            TEXT    NOT NULL,
    provider      TEXT    NOT NULL,
    model         TEXT    NOT NULL,
    purpose       TEXT    NOT NULL,
    outcome       TEXT    NOT NULL CHECK (outcome IN ('ok', 'invalid', 'failed', 'timeout', 'over_budget')),
    attempts      INTEGER NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd      REAL,
    duration_ms   INTEGER NOT NULL,
    error         TEXT
);
CREATE INDEX llm_calls_at ON llm_calls (at);
