-- 0001: the first schema of candor's history.
--
-- Times are microseconds since the Unix epoch (UTC), the precision PostgreSQL's
-- timestamptz keeps as well. Outcomes are stored as codes, the index in
-- `Outcome::ALL`: 0 pass, 1 fail, 2 error, 3 skip, 4 flaky-pass.
--
-- Run order is (started_at, id), not id alone: ids follow ingest order, and ingest
-- order is not history order when old CI artifacts are backfilled or jobs upload late.
-- To make "a test's last N executions" an index range scan with a LIMIT, every
-- execution carries a copy of its run's started_at (run_started_at), which never
-- changes once the run is written.

CREATE TABLE tests (
    id      INTEGER PRIMARY KEY,
    test_id TEXT NOT NULL UNIQUE
);

CREATE TABLE runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    commit_sha  TEXT,
    branch      TEXT,
    merge_base  TEXT,
    started_at  INTEGER NOT NULL,
    source      TEXT NOT NULL CHECK (source IN ('ci', 'local', 'rerun', 'compare', 'gate')),
    ci_provider TEXT,
    job         TEXT,
    workers     INTEGER,
    seed        TEXT,
    ci          INTEGER NOT NULL CHECK (ci IN (0, 1)),
    runner      TEXT,
    os          TEXT,
    format      TEXT,
    producer    TEXT,
    source_path TEXT,
    -- NULL only inside the ingest transaction still writing the run; set at commit.
    content_key TEXT UNIQUE,
    tests       INTEGER NOT NULL DEFAULT 0,
    red         INTEGER NOT NULL DEFAULT 0,
    ingested_at INTEGER NOT NULL
);

-- Runs newest first.
CREATE INDEX runs_by_start ON runs (started_at, id);

-- One narrow row per test per run: what questions over many tests read. Keyed by run
-- then test, which detects a retry of the same test in the same run at insert time,
-- serves a run's own executions and the cascade when a run is deleted, and is where a
-- run's rows are appended (test ids follow the order tests were first seen).
CREATE TABLE executions (
    run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    test           INTEGER NOT NULL REFERENCES tests (id),
    run_started_at INTEGER NOT NULL,
    outcome        INTEGER NOT NULL CHECK (outcome BETWEEN 0 AND 4),
    duration       REAL,
    attempts       INTEGER NOT NULL,
    file           TEXT,
    line           INTEGER,
    PRIMARY KEY (run_id, test)
) WITHOUT ROWID;

-- A test's executions in run order. Covering for the questions asked of every test at
-- once (summaries, reliability windows).
CREATE INDEX executions_by_test ON executions (test, run_started_at, run_id, outcome);

-- What only some executions have: a failure, a skip message, captured output. Kept apart
-- so that the executions rows stay narrow: most executions pass silently, and the
-- questions over many tests never read these texts.
CREATE TABLE execution_details (
    run_id        INTEGER NOT NULL,
    test          INTEGER NOT NULL,
    signature     TEXT,
    exception     TEXT,
    -- NOT NULL exactly when the execution has a failure.
    message       TEXT,
    failure_text  TEXT,
    frames        TEXT, -- JSON array of {file, line, function}
    failing_frame TEXT, -- JSON {file, line, function}
    skip_message  TEXT,
    stdout        TEXT,
    stderr        TEXT,
    UNIQUE (run_id, test),
    FOREIGN KEY (run_id, test) REFERENCES executions (run_id, test) ON DELETE CASCADE
);
