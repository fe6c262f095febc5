//! The PostgreSQL history's migration 3 (issue #17, item 1 of the packed layout): a
//! populated schema-2 history (one row per execution, monthly partitions of `executions`)
//! is packed into `execution_blocks` in place when candor opens it, and afterwards answers
//! every question exactly as a SQLite history holding the same runs does.
//!
//! The schema-2 history is written here as the schema-2 store wrote it: its two shipped
//! migration files, and the rows it inserted (names by XXH64, details as LZ4-compressed
//! JSON, month partitions listed in `candor_partitions`).

use crate::pg_support;

use std::collections::HashSet;

use candor::history::{
    Conditions, HistoryStore, NewRun, RunContent, Source, SqliteStore, TestWindow,
};
use candor::results::{Execution, Failure, Frame, Outcome};
use jiff::Timestamp;
use pg_support::Schema;

const SCHEMA_1: &str = include_str!("../../src/history/pg/migrations/0001_init.sql");
const SCHEMA_2: &str = include_str!("../../src/history/pg/migrations/0002_ci_run.sql");

/// 2026-10-20 and 2026-11-20 (two month partitions), seconds since the epoch.
const OCTOBER: i64 = 1_792_483_200;
const NOVEMBER: i64 = 1_795_161_600;

fn new_run(started: i64, job: &str) -> NewRun {
    NewRun {
        commit: Some(format!("c{started}")),
        branch: Some(if started % 2 == 0 { "main" } else { "feature" }.into()),
        merge_base: None,
        started_at: Timestamp::from_second(started).unwrap(),
        source: Source::Ci,
        ci_provider: Some("github-actions".into()),
        job: Some(job.into()),
        ci_run: candor::history::CiRun::new(Some("o/r".into()), Some("77".into()), Some(1)),
        workers: Some(2),
        seed: None,
        conditions: Conditions {
            ci: true,
            runner: Some("pytest".into()),
            os: Some("linux".into()),
        },
        format: Some("junit".into()),
        producer: None,
        source_path: Some("report.xml".into()),
    }
}

/// Run `run`'s execution of test `test`, if the test is in that run: 600 tests over
/// three blocks, some in some runs only, failures with frames, skips, captured output,
/// a flaky pass, and durations that are and are not whole milliseconds.
fn execution(run: usize, test: usize) -> Option<Execution> {
    if test >= 500 && run.is_multiple_of(3) {
        return None;
    }
    let name = format!("tests/test_m{}.py::test_{test:03}", test % 7);
    let outcome = match (run * 7 + test) % 23 {
        0 | 5 => Outcome::Fail,
        1 => Outcome::Error,
        2 => Outcome::Skip,
        3 => Outcome::FlakyPass,
        _ => Outcome::Pass,
    };
    let mut execution = Execution::new(name, outcome);
    execution.duration = match test % 4 {
        0 => None,
        1 => Some(0.25),
        2 => Some(1.0 / 3.0),
        _ => Some(12.5),
    };
    execution.attempts = if outcome == Outcome::FlakyPass { 2 } else { 1 };
    execution.file = (!test.is_multiple_of(5)).then(|| format!("tests/test_m{}.py", test % 7));
    execution.line = (!test.is_multiple_of(3)).then(|| u32::try_from(test).unwrap());
    if outcome.is_red() || outcome == Outcome::FlakyPass {
        let frame = Frame {
            file: "tests/test_m.py".into(),
            line: Some(u32::try_from(test).unwrap()),
            function: Some(format!("test_{test}")),
        };
        execution.failure = Some(Box::new(Failure {
            exception: Some("AssertionError".into()),
            message: format!("assert {test} == {run}"),
            text: format!("Traceback\n  line {test}\nAssertionError: {run}"),
            frames: vec![frame.clone()],
            failing_frame: Some(frame),
        }));
    }
    if outcome == Outcome::Skip {
        execution.skip_message = Some(format!("skipped in run {run}"));
    }
    if test.is_multiple_of(11) {
        execution.stdout = Some(format!("out {run} {test}"));
    }
    Some(execution)
}

/// Seven runs, stored out of start order, two of them starting at the same second, over
/// two months.
fn runs() -> Vec<(NewRun, String, Vec<Execution>)> {
    let starts = [
        NOVEMBER + 50,
        OCTOBER + 10,
        NOVEMBER + 20,
        OCTOBER + 10,
        NOVEMBER + 90,
        OCTOBER + 400,
        NOVEMBER + 20,
    ];
    starts
        .iter()
        .enumerate()
        .map(|(run, &started)| {
            let executions = (0..600).filter_map(|test| execution(run, test)).collect();
            (
                new_run(started, &format!("job{run}")),
                format!("key{run}"),
                executions,
            )
        })
        .collect()
}

/// What the schema-2 store kept beside an execution's narrow columns.
#[derive(serde::Serialize)]
struct Details<'a> {
    failure: Option<&'a Failure>,
    skip_message: Option<&'a String>,
    stdout: Option<&'a String>,
    stderr: Option<&'a String>,
}

fn details(execution: &Execution) -> Option<Vec<u8>> {
    if execution.failure.is_none()
        && execution.skip_message.is_none()
        && execution.stdout.is_none()
        && execution.stderr.is_none()
    {
        return None;
    }
    let json = serde_json::to_vec(&Details {
        failure: execution.failure.as_deref(),
        skip_message: execution.skip_message.as_ref(),
        stdout: execution.stdout.as_ref(),
        stderr: execution.stderr.as_ref(),
    })
    .unwrap();
    Some(lz4_flex::compress_prepend_size(&json))
}

fn outcome_code(outcome: Outcome) -> i16 {
    match outcome {
        Outcome::Pass => 0,
        Outcome::Fail => 1,
        Outcome::Error => 2,
        Outcome::Skip => 3,
        Outcome::FlakyPass => 4,
    }
}

/// Writes `runs` into `schema` as the schema-2 store did.
fn write_schema_two(schema: &Schema, runs: &[(NewRun, String, Vec<Execution>)]) {
    let mut client = schema.client();
    let mut tx = client.transaction().unwrap();
    tx.batch_execute(SCHEMA_1).unwrap();
    tx.batch_execute(SCHEMA_2).unwrap();
    tx.batch_execute(
        "CREATE TABLE candor_schema (version bigint NOT NULL); \
         INSERT INTO candor_schema VALUES (2); \
         CREATE TABLE executions_2026_10 PARTITION OF executions \
           FOR VALUES FROM (1790812800000000) TO (1793491200000000); \
         CREATE TABLE executions_2026_11 PARTITION OF executions \
           FOR VALUES FROM (1793491200000000) TO (1796083200000000); \
         INSERT INTO candor_partitions VALUES \
           ('executions_2026_10', 1790812800000000, 1793491200000000), \
           ('executions_2026_11', 1793491200000000, 1796083200000000);",
    )
    .unwrap();
    for (run, key, executions) in runs {
        let started = run.started_at.as_microsecond();
        let red = executions.iter().filter(|e| e.outcome.is_red()).count();
        let id: i64 = tx
            .query_one(
                "INSERT INTO runs (content_key, commit_sha, branch, started_us, source, \
                 ci_provider, job, workers, ci, runner, os, format, source_path, executions, red, \
                 ci_repository, ci_run_id, ci_attempt) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, \
                 $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) RETURNING id",
                &[
                    key,
                    &run.commit.as_deref().map(str::as_bytes),
                    &run.branch.as_deref().map(str::as_bytes),
                    &started,
                    &run.source.as_str(),
                    &run.ci_provider.as_deref().map(str::as_bytes),
                    &run.job.as_deref().map(str::as_bytes),
                    &run.workers.map(i64::from),
                    &run.conditions.ci,
                    &run.conditions.runner.as_deref().map(str::as_bytes),
                    &run.conditions.os.as_deref().map(str::as_bytes),
                    &run.format.as_deref().map(str::as_bytes),
                    &run.source_path.as_deref().map(str::as_bytes),
                    &i64::try_from(executions.len()).unwrap(),
                    &i64::try_from(red).unwrap(),
                    &run.ci_run.repository.as_deref().map(str::as_bytes),
                    &run.ci_run.run_id.as_deref().map(str::as_bytes),
                    &run.ci_run.attempt.map(i64::from),
                ],
            )
            .unwrap()
            .get(0);
        for execution in executions {
            let name = execution.test_id.as_bytes();
            let hash = xxhash_rust::xxh64::xxh64(name, 0).cast_signed();
            tx.execute(
                "INSERT INTO tests (name_hash, name) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&hash, &name],
            )
            .unwrap();
            tx.execute(
                "INSERT INTO executions (run_id, test_id, started_us, outcome, attempts, \
                 duration, file, line, signature, details) SELECT $1, id, $2, $3, $4, $5, $6, \
                 $7, $8, $9 FROM tests WHERE name_hash = $10 AND name = $11",
                &[
                    &id,
                    &started,
                    &outcome_code(execution.outcome),
                    &i64::from(execution.attempts),
                    &execution.duration,
                    &execution.file.as_deref().map(str::as_bytes),
                    &execution.line.map(i64::from),
                    &execution.signature().as_deref().map(str::as_bytes),
                    &details(execution),
                    &hash,
                    &name,
                ],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

fn windows(store: &dyn HistoryStore, size: usize, runs: Option<&HashSet<i64>>) -> Vec<TestWindow> {
    let mut found = Vec::new();
    store
        .windows_in(size, runs, &mut |window| found.push(window))
        .unwrap();
    found
}

/// Every question, asked of both stores, answers the same.
fn assert_same_answers(pg: &dyn HistoryStore, sqlite: &dyn HistoryStore, names: &[String]) {
    assert_eq!(pg.runs(100).unwrap(), sqlite.runs(100).unwrap());
    let ids: Vec<i64> = sqlite.runs(100).unwrap().iter().map(|r| r.id).collect();
    for &id in &ids {
        assert_eq!(pg.run(id).unwrap(), sqlite.run(id).unwrap(), "run {id}");
        assert_eq!(
            pg.run_failures(id).unwrap(),
            sqlite.run_failures(id).unwrap(),
            "failures of run {id}"
        );
        assert_eq!(
            pg.run_executions(id).unwrap(),
            sqlite.run_executions(id).unwrap(),
            "executions of run {id}"
        );
        let (a, b) = (pg.red_seconds(id).unwrap(), sqlite.red_seconds(id).unwrap());
        assert!((a - b).abs() < 1e-9, "red seconds of run {id}: {a} vs {b}");
    }
    for failing in [false, true] {
        assert_eq!(pg.tests(failing).unwrap(), sqlite.tests(failing).unwrap());
    }
    let some: HashSet<i64> = ids.iter().copied().filter(|id| id % 2 == 1).collect();
    assert_eq!(
        pg.tests_in(false, Some(&some)).unwrap(),
        sqlite.tests_in(false, Some(&some)).unwrap()
    );
    for size in [1, 3, usize::MAX] {
        assert_eq!(
            windows(pg, size, None),
            windows(sqlite, size, None),
            "size {size}"
        );
        assert_eq!(
            windows(pg, size, Some(&some)),
            windows(sqlite, size, Some(&some)),
            "size {size} over some runs"
        );
    }
    for name in names {
        for limit in [2, 100] {
            assert_eq!(
                pg.executions(name, limit).unwrap(),
                sqlite.executions(name, limit).unwrap(),
                "{name}, {limit}"
            );
        }
    }
}

#[test]
fn a_populated_schema_2_history_is_packed_in_place_and_answers_as_before() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let runs = runs();
    write_schema_two(&schema, &runs);

    let dir = tempfile::tempdir().unwrap();
    let mut sqlite = SqliteStore::open(
        dir.path().join("history.db"),
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    for (run, key, executions) in &runs {
        let mut session = sqlite.begin_ingest(run).unwrap();
        for execution in executions {
            session.add(execution.clone()).unwrap();
        }
        let content = RunContent {
            content_key: key.clone(),
            format: run.format.clone(),
            producer: None,
        };
        assert!(session.commit(&content).unwrap().added);
    }

    let mut client = schema.client();
    // One block row per run and block of 256 test ids that the run has a test in.
    let blocks: i64 = client
        .query_one(
            "SELECT count(*) FROM (SELECT DISTINCT run_id, test_id / 256 FROM executions) b",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(blocks > 7 * 2, "{blocks}: the tests span blocks");
    // Ids schema 2 never handed out (the sequence values its `ON CONFLICT` inserts
    // consumed): schema 4 keeps every id, the holes as names nothing points to.
    let (tests, last): (i64, i64) = client
        .query_one("SELECT count(*), max(id) FROM tests", &[])
        .map(|row| (row.get(0), row.get(1)))
        .unwrap();
    assert!(
        last > tests + 256,
        "{last} {tests}: the ids have holes, some a block long"
    );
    let mut pg = schema.open();
    assert_eq!(pg.schema_version().unwrap(), 5);
    let left: bool = client
        .query_one("SELECT to_regclass('tests') IS NULL", &[])
        .unwrap()
        .get(0);
    assert!(left, "the schema-3 tests table is dropped");
    let indexed: i64 = client
        .query_one(
            "SELECT sum(length(entries) / 12)::bigint FROM test_name_index",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(indexed, tests, "every name indexed, no hole");
    let left: bool = client
        .query_one("SELECT to_regclass('executions') IS NULL", &[])
        .unwrap()
        .get(0);
    assert!(left, "the schema-2 executions table is dropped");
    let partitions: Vec<String> = client
        .query("SELECT name FROM candor_partitions ORDER BY name", &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(
        partitions,
        ["execution_blocks_2026_10", "execution_blocks_2026_11"]
    );
    let rows: i64 = client
        .query_one("SELECT count(*) FROM execution_blocks", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, blocks);

    let names: Vec<String> = (0..600)
        .map(|test| format!("tests/test_m{}.py::test_{test:03}", test % 7))
        .chain(["not/a/test".to_owned()])
        .collect();
    assert_same_answers(&pg, &sqlite, &names);

    // The migrated history takes new runs and answers for them too.
    let (run, _, executions) = &runs[4];
    let mut later = run.clone();
    later.started_at = Timestamp::from_second(NOVEMBER + 1000).unwrap();
    for store in [&mut pg as &mut dyn HistoryStore, &mut sqlite] {
        let mut session = store.begin_ingest(&later).unwrap();
        for execution in executions.iter().rev() {
            session.add(execution.clone()).unwrap();
        }
        let content = RunContent {
            content_key: "after".into(),
            format: None,
            producer: None,
        };
        assert!(session.commit(&content).unwrap().added);
    }
    assert_same_answers(&pg, &sqlite, &names);

    // And opening it again migrates nothing.
    drop(pg);
    let again = schema.open();
    assert_eq!(again.schema_version().unwrap(), 5);
    assert_eq!(again.runs(100).unwrap().len(), 8);

    // Retention drops the migrated month whole.
    let (dropped, removed) = again
        .prune(Timestamp::from_second(1_793_491_200).unwrap())
        .unwrap();
    assert_eq!(dropped, ["execution_blocks_2026_10"]);
    assert_eq!(removed, 3);
    assert_eq!(again.runs(100).unwrap().len(), 5);
}
