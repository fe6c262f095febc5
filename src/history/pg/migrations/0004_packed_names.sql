-- candor's PostgreSQL history, schema 4 (issue #17): test names packed per block of 256
-- test ids and found through a hash index packed a few hundred entries per row, as the
-- SQLite store keeps them (src/history/packed, docs/storage-layout.md), instead of a row
-- and a unique B-tree entry per name in `tests`. The names of schema 3's `tests` are
-- packed into them by the migration's Rust step (`pg::names::pack_names`), in the same
-- transaction, and `tests` is dropped. Test ids keep their values: an id schema 3 never
-- handed out (a sequence value a rolled-back ingest consumed) is a hole, stored as an
-- empty name that no index entry points to.
--
-- names: the names of tests `block * 256 ..`, in id order: format byte, then one LZ4
--   block of the names front-coded (packed::encode_names).
-- entries: (name hash i64, test id u32) little-endian, sorted, at most 512 per row; a
--   row holds the hashes from its first_hash up to the next row's first_hash
--   (packed::encode_index).
CREATE TABLE test_names (
    block  bigint PRIMARY KEY,
    names  bytea NOT NULL
);
CREATE TABLE test_name_index (
    first_hash  bigint PRIMARY KEY,
    entries     bytea NOT NULL
);
-- Packed already: kept out of line without a second compression.
ALTER TABLE test_names ALTER COLUMN names SET STORAGE EXTERNAL;
ALTER TABLE test_name_index ALTER COLUMN entries SET STORAGE EXTERNAL;
