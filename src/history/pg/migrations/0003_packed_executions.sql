-- candor's PostgreSQL history, schema 3 (issue #17): a run's executions packed per block
-- of 256 test ids, one row per (run, block) instead of one row per execution, in the
-- same encoding as the SQLite store (src/history/packed, docs/storage-layout.md).
-- The rows of schema 2's `executions` are packed into it by the migration's Rust step
-- (`pg::PgStore::pack_executions`), in the same transaction, and `executions` is dropped.
--
-- outcomes: half a byte per slot (slot s in byte s / 2, low half for even s): 0 when the
--   test has no execution in the run, else the outcome code plus one (0 pass, 1 fail,
--   2 error, 3 skip, 4 flaky-pass). What the questions over every test read.
-- entries: format byte, presence bitmap, the block's file table, per present slot its
--   outcome, attempts, duration, file and line (packed::BlockBuilder says every byte).
-- details: per slot that has a failure signature or details: slot (1 byte), then the
--   signature and the LZ4-compressed JSON details each as a little-endian u32 length
--   plus one (0: none) and the bytes; NULL when no execution of the block has either.
CREATE TABLE execution_blocks (
    run_id      bigint NOT NULL,
    block       bigint NOT NULL,
    started_us  bigint NOT NULL,
    outcomes    bytea NOT NULL,
    entries     bytea NOT NULL,
    details     bytea,
    PRIMARY KEY (run_id, block, started_us)
) PARTITION BY RANGE (started_us);
-- A block's rows newest first: a test's history (show) and the windows.
CREATE INDEX execution_blocks_by_block ON execution_blocks (block, started_us DESC, run_id DESC);
-- The wide blobs out of line and uncompressed (they are packed already), so that a scan
-- of outcomes (tests --failing, windows) reads short heap rows. Partitions created later
-- copy the setting from this table.
ALTER TABLE execution_blocks ALTER COLUMN entries SET STORAGE EXTERNAL;
ALTER TABLE execution_blocks ALTER COLUMN details SET STORAGE EXTERNAL;
