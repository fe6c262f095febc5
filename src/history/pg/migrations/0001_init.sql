-- candor's PostgreSQL history, schema 1. Shipped migrations are never edited; a change
-- is a new numbered file. Text that may hold any character (NUL included: test names,
-- file names, messages, commits and branches as the result files spelled them) is bytea
-- holding UTF-8; read it with convert_from(column, 'UTF8'). Times are microseconds since
-- the Unix epoch (bigint): they cover every time candor keeps, which timestamptz does not
-- (its range starts at 4713 BC); to_timestamp(started_us / 1e6) shows one.

CREATE TABLE runs (
    id           bigserial PRIMARY KEY,
    -- sha256 of the file and the run's identity (docs/history.md): the same upload twice,
    -- or a retried upload, is one run.
    content_key  text NOT NULL UNIQUE,
    commit_sha   bytea,
    branch       bytea,
    merge_base   bytea,
    started_us   bigint NOT NULL,
    source       text NOT NULL,
    ci_provider  bytea,
    job          bytea,
    workers      bigint,
    seed         bytea,
    ci           boolean NOT NULL,
    runner       bytea,
    os           bytea,
    format       bytea,
    producer     bytea,
    source_path  bytea,
    executions   bigint NOT NULL,
    red          bigint NOT NULL,
    ingested_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX runs_in_order ON runs (started_us DESC, id DESC);

-- Tests, found by the XXH64 of their name; the name settles a collision.
CREATE TABLE tests (
    id         bigserial PRIMARY KEY,
    name_hash  bigint NOT NULL,
    name       bytea NOT NULL,
    UNIQUE (name_hash, name)
);

-- One row per test per run, partitioned by the run's start, a month per partition
-- (created on demand, listed in candor_partitions), so that retention drops whole
-- partitions. outcome: 0 pass, 1 fail, 2 error, 3 skip, 4 flaky-pass. details: the
-- failure, skip message and captured output, LZ4-compressed JSON, NULL when none.
CREATE TABLE executions (
    run_id      bigint NOT NULL,
    test_id     bigint NOT NULL,
    started_us  bigint NOT NULL,
    outcome     smallint NOT NULL,
    attempts    bigint NOT NULL,
    duration    double precision,
    file        bytea,
    line        bigint,
    signature   bytea,
    details     bytea,
    PRIMARY KEY (run_id, test_id, started_us)
) PARTITION BY RANGE (started_us);
-- A test's history newest first (show, windows, summaries), outcome included so the
-- questions over every test read the index only.
CREATE INDEX executions_by_test ON executions (test_id, started_us DESC, run_id DESC) INCLUDE (outcome);

CREATE TABLE candor_partitions (
    name      text PRIMARY KEY,
    lower_us  bigint NOT NULL,
    upper_us  bigint
);
