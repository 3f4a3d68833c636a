-- Cairn store, schema 12: an owner's vectors found in one seek.
--
-- Every read of an owner's vectors names the model too (a record's neighbours scored at
-- search time, a record's vectors checked before it is embedded again, an item's vectors put
-- in the index, the summaries reconcile and sleep compare). With no statistics, SQLite took
-- the index on the model alone for these, which holds every vector of that model: each read
-- walked all of them. At 250,000 vectors a read of 400 owners took 185 ms; through this index
-- it takes 1 ms. Counting a model's record vectors reads this index alone.
CREATE INDEX IF NOT EXISTS vectors_owner ON vectors (model, owner_id);
