-- Cairn store, schema 4: who made a request.
--
-- The author of a record's request when its source names one (a speaker of a conversation);
-- NULL for an agent's own user. Search indexes it with the record's text, so a question that
-- names a person finds what that person said.
ALTER TABLE records ADD COLUMN author TEXT;
