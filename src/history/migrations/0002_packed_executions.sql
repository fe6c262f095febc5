-- 0002: executions packed per run in blocks of test ids, and test names found by a hash.
-- docs/storage-layout.md says why and what each question reads.
--
-- Run by `migrate::pack_executions`, which renames the schema-1 tables `tests`,
-- `executions` and `execution_details` to `*_1` first, creates these, copies the rows
-- across (the names, hashes and blobs are made in Rust; test ids are renumbered from 0
-- in their order), and drops the old tables.

-- The test dictionary. Ids are dense, from 0, in the order tests were first seen, which
-- is what makes a run's tests fall into few blocks. The names of ids block * 256 to
-- block * 256 + 255 are one row (format: `packed::encode_names`), so adding a test
-- appends to a blob instead of inserting a row and an index entry.
CREATE TABLE test_names (
    block INTEGER PRIMARY KEY,
    names BLOB NOT NULL
);

-- Names are found by their hash: XXH64 of the UTF-8 name, seed 0, as a signed integer.
-- The entries (hash, test id) sorted by hash, cut into rows of at most 512; a row holds
-- the hashes from its `first_hash` up to the next row's (the first row's is the smallest
-- integer). An ingest merges its new tests in once, rather than inserting an index
-- entry per test at a random place. Two names may share a hash: a lookup compares the
-- names too.
--
-- Nothing in SQL keeps names unique. The ingest is the only writer of these two tables,
-- and under the write lock it looks every name up before adding it;
-- `SqliteStore::check` verifies that no name is stored twice and that the index holds
-- every test exactly once.
CREATE TABLE test_name_index (
    first_hash INTEGER PRIMARY KEY,
    entries    BLOB NOT NULL
);

-- One run's executions of one block of 256 test ids (block = test / 256): for each test
-- the outcome, duration, attempts, file and line (format: `packed::BlockBuilder`). Keyed
-- by run then block, so that an ingest appends and a run's executions are one range.
CREATE TABLE execution_blocks (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    block   INTEGER NOT NULL,
    entries BLOB NOT NULL,
    PRIMARY KEY (run_id, block)
) WITHOUT ROWID;

-- The outcomes of the same executions, half a byte per test, keyed by block then run
-- order (start, then run id), for the questions over every test's history: a block's
-- rows newest first are every one of its tests' windows at once. Deleting a run scans
-- this table (no index leads with run_id), which retention can afford.
CREATE TABLE outcome_blocks (
    block          INTEGER NOT NULL,
    run_started_at INTEGER NOT NULL,
    run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    outcomes       BLOB NOT NULL,
    PRIMARY KEY (block, run_started_at, run_id)
) WITHOUT ROWID;

-- What only some executions have: a failure, a skip message, captured output. For one
-- run's tests of one block, in parts of about 256 KiB (format: `packed::put_details`),
-- so that reading one execution's reads little more than its own; a block's entries
-- name the row each execution's details are in. A few percent of executions have any,
-- and they are most of the bytes. Rows are appended in ingest order; deleting a run
-- scans this table (no index leads with run_id), which retention can afford or avoid by
-- deleting the rows its blocks name.
CREATE TABLE execution_details (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    details BLOB NOT NULL
);
