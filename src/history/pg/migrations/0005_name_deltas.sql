-- candor's PostgreSQL history, schema 5 (issue #17, pgconc2): the names an ingest adds
-- are appended to the name index as one delta row of their own instead of merged into
-- every `test_name_index` row their hashes fall in (with hashes spread evenly, every
-- row: the whole index rewritten by each job adding names, one job after another under
-- the names lock). A lookup reads the base row its hash falls in and every delta row;
-- the writer whose delta would make the deltas hold more entries than the base merges
-- them all into the base and deletes them, in its names transaction under the lock
-- (docs/postgres.md, "Ingest").
--
-- first_id: the first test id of the names the row indexes (ids are handed out under
--   the names lock, so rows never share one).
-- entries: (name hash i64, test id u32) little-endian, sorted, as test_name_index's.
CREATE TABLE test_name_delta (
    first_id  bigint PRIMARY KEY,
    entries   bytea NOT NULL
);
ALTER TABLE test_name_delta ALTER COLUMN entries SET STORAGE EXTERNAL;
