//! The history stores against real databases: round trips, idempotency, all-or-nothing
//! sessions, retries, the refusals on open, locking and migrations. The store contract
//! (every question answered as the model answers it) runs on a SQLite file and on a
//! PostgreSQL server (`CANDOR_TEST_PG`) alike: one body, two instantiations.

use crate::pg_support;
use crate::proptest_support::proptest_config;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use candor::history::{
    Conditions, HistoryError, HistoryStore, NewRun, PgStore, RunContent, Source, SqliteStore,
    StoredExecution, TestSummary, TestWindow, WindowEntry,
    sqlite::{SCHEMA_VERSION, Tuning},
};
use candor::results::{Execution, Failure, Frame, Outcome};
use jiff::Timestamp;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

const TIMEOUT: Duration = Duration::from_secs(5);

fn db_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("history.db")
}

fn open(path: &Path) -> SqliteStore {
    SqliteStore::open(path, TIMEOUT).expect("open the history")
}

/// Which store a contract test runs on.
#[derive(Debug, Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

/// A store under test with what it lives in (a temporary folder or a schema of its own).
enum Store {
    // The folder and the schema are held only to be removed when the store goes.
    Sqlite(SqliteStore, #[allow(dead_code)] tempfile::TempDir),
    Postgres(PgStore, #[allow(dead_code)] pg_support::Schema),
}

impl Store {
    /// A fresh, empty store; `None` for PostgreSQL without a test server (skipped).
    fn new(backend: Backend) -> Option<Store> {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                Some(Store::Sqlite(open(&db_path(&dir)), dir))
            }
            Backend::Postgres => {
                let schema = pg_support::Schema::on_test_server()?;
                Some(Store::Postgres(schema.open(), schema))
            }
        }
    }

    /// The store's own invariants beyond what the questions show (SQLite's packed
    /// layout; PostgreSQL's are constraints the server enforces).
    fn check(&self) {
        if let Store::Sqlite(store, _) = self {
            store.check().unwrap();
        }
    }

    /// SQLite's memory limits; PostgreSQL has none to shrink.
    fn set_tuning(&mut self, tuning: Tuning) {
        if let Store::Sqlite(store, _) = self {
            store.set_tuning(tuning);
        }
    }
}

impl std::ops::Deref for Store {
    type Target = dyn HistoryStore;
    fn deref(&self) -> &Self::Target {
        match self {
            Store::Sqlite(store, _) => store,
            Store::Postgres(store, _) => store,
        }
    }
}

impl std::ops::DerefMut for Store {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Store::Sqlite(store, _) => store,
            Store::Postgres(store, _) => store,
        }
    }
}

/// Runs each named contract test, a `fn(Backend)`, on both stores.
macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[test] fn $name() { super::$name(super::Backend::Sqlite) } )*
        }
        mod postgres {
            $( #[test] fn $name() { super::$name(super::Backend::Postgres) } )*
        }
    };
}

on_both_stores!(
    the_same_content_key_twice_adds_nothing,
    a_dropped_session_stores_nothing,
    retries_in_one_run_merge_into_one_execution,
    retries_merge_wherever_they_fall_among_grouped_writes,
    runs_and_executions_come_newest_first_by_start_not_by_ingest_order,
    windows_hold_the_last_runs_of_each_test_skips_excluded,
    summaries_count_runs_failures_and_skips,
    tests_on_both_sides_of_a_block_boundary_keep_their_own_histories,
    a_backfilled_run_lands_in_start_order_in_every_window,
    retries_reach_back_into_blocks_and_details_already_written,
    ingesting_a_large_run_twice_adds_nothing_the_second_time,
    a_name_is_stored_once_however_many_runs_and_orders_bring_it,
    red_seconds_agrees_with_the_failures_it_sums,
);

fn run_at(second: i64) -> NewRun {
    NewRun {
        commit: Some(format!("c{second}")),
        branch: Some("main".into()),
        merge_base: None,
        started_at: Timestamp::from_second(1_700_000_000 + second).unwrap(),
        source: Source::Ci,
        ci_provider: Some("github-actions".into()),
        job: Some("test".into()),
        // Both stores keep the CI identity (#17 item 1): the property test below compares
        // the stored run with this one field by field.
        ci_run: candor::history::CiRun::new(
            Some("acme/shop".into()),
            Some(format!("run-{second}")),
            Some(2),
        ),
        workers: Some(4),
        seed: None,
        conditions: Conditions {
            ci: true,
            runner: Some("pytest".into()),
            os: Some("linux".into()),
        },
        format: None,
        producer: None,
        source_path: Some("results.xml".into()),
    }
}

fn content(key: &str) -> RunContent {
    RunContent {
        content_key: key.into(),
        format: Some("junit".into()),
        producer: Some("pytest".into()),
    }
}

fn failure(message: &str) -> Failure {
    let frame = Frame {
        file: "tests/test_x.py".into(),
        line: Some(12),
        function: Some("test_x".into()),
    };
    Failure {
        exception: Some("AssertionError".into()),
        message: message.into(),
        text: format!("Traceback\n  {message}"),
        frames: vec![frame.clone()],
        failing_frame: Some(frame),
    }
}

fn failed(test_id: &str, message: &str) -> Execution {
    let mut execution = Execution::new(test_id, Outcome::Fail);
    execution.failure = Some(Box::new(failure(message)));
    execution
}

/// Stores one run holding `executions`; returns its id.
fn store_run(
    store: &mut dyn HistoryStore,
    run: &NewRun,
    key: &str,
    executions: Vec<Execution>,
) -> i64 {
    let mut session = store.begin_ingest(run).unwrap();
    for execution in executions {
        session.add(execution).unwrap();
    }
    let report = session.commit(&content(key)).unwrap();
    assert!(report.added);
    report.run_id
}

/// Merges repeated ids the way the store must: first-seen order, later attempts absorbed.
fn merged(executions: &[Execution]) -> Vec<Execution> {
    let mut order: Vec<Execution> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for execution in executions {
        if let Some(&at) = index.get(&execution.test_id) {
            order[at].absorb_retry(execution.clone());
        } else {
            index.insert(execution.test_id.clone(), order.len());
            order.push(execution.clone());
        }
    }
    order
}

fn text() -> impl Strategy<Value = String> {
    // Any characters, including newlines and NUL, which SQLite text must keep.
    "(?s).{0,40}"
}

fn frame() -> impl Strategy<Value = Frame> {
    (text(), any::<Option<u32>>(), proptest::option::of(text())).prop_map(
        |(file, line, function)| Frame {
            file,
            line,
            function,
        },
    )
}

fn failure_strategy() -> impl Strategy<Value = Failure> {
    (
        proptest::option::of(text()),
        text(),
        text(),
        proptest::collection::vec(frame(), 0..4),
        proptest::option::of(frame()),
    )
        .prop_map(
            |(exception, message, text, frames, failing_frame)| Failure {
                exception,
                message,
                text,
                frames,
                failing_frame,
            },
        )
}

fn execution() -> impl Strategy<Value = Execution> {
    (
        // A small id space, so that retries (repeated ids) happen often.
        "[a-e]{1,2}(::t[0-9])?",
        proptest::sample::select(Outcome::ALL.to_vec()),
        proptest::option::of(0.0..1.0e6f64),
        1..4u32,
        proptest::option::of(failure_strategy()),
        (
            proptest::option::of(text()),
            proptest::option::of(text()),
            any::<Option<u32>>(),
            proptest::option::of(text()),
            proptest::option::of(text()),
        ),
    )
        .prop_map(
            |(test_id, outcome, duration, attempts, failure, (skip, file, line, out, err))| {
                Execution {
                    test_id,
                    outcome,
                    duration,
                    attempts,
                    failure: failure.map(Box::new),
                    skip_message: skip,
                    file,
                    line,
                    stdout: out,
                    stderr: err,
                }
            },
        )
}

fn new_run() -> impl Strategy<Value = NewRun> {
    let optional = || proptest::option::of(text());
    (
        (optional(), optional(), optional()),
        // Microseconds anywhere in jiff's range: what the store keeps exactly.
        -377_705_116_800_000_000i64..=253_402_207_200_000_000i64,
        proptest::sample::select(Source::ALL.to_vec()),
        (optional(), optional(), any::<Option<u32>>(), optional()),
        (any::<bool>(), optional(), optional()),
        (optional(), optional(), optional()),
        (optional(), optional(), any::<Option<u32>>()),
    )
        .prop_map(
            |(
                (commit, branch, merge_base),
                micros,
                source,
                (ci_provider, job, workers, seed),
                (ci, runner, os),
                (format, producer, source_path),
                (repository, ci_run_id, attempt),
            )| NewRun {
                commit,
                branch,
                merge_base,
                started_at: Timestamp::from_microsecond(micros).unwrap(),
                source,
                ci_provider,
                job,
                ci_run: candor::history::CiRun::new(repository, ci_run_id, attempt),
                workers,
                seed,
                conditions: Conditions { ci, runner, os },
                format,
                producer,
                source_path,
            },
        )
}

proptest! {
    #![proptest_config(proptest_config(48))]

    /// What goes in comes back: every execution (retries merged), its failure with frames,
    /// its signature, and the run.
    #[test]
    fn executions_and_runs_round_trip(
        run in new_run(),
        executions in proptest::collection::vec(execution(), 0..60),
    ) {
        round_trip(Backend::Sqlite, &run, executions)?;
    }

    /// The same on PostgreSQL.
    #[test]
    fn executions_and_runs_round_trip_on_postgres(
        run in new_run(),
        executions in proptest::collection::vec(execution(), 0..60),
    ) {
        round_trip(Backend::Postgres, &run, executions)?;
    }
}

fn round_trip(
    backend: Backend,
    run: &NewRun,
    executions: Vec<Execution>,
) -> Result<(), TestCaseError> {
    let Some(mut store) = Store::new(backend) else {
        return Ok(());
    };
    let expected = merged(&executions);

    let mut session = store.begin_ingest(run).unwrap();
    for execution in executions {
        session.add(execution).unwrap();
    }
    let content = RunContent {
        content_key: "k".into(),
        format: run.format.clone(),
        producer: run.producer.clone(),
    };
    let report = session.commit(&content).unwrap();
    prop_assert!(report.added);
    prop_assert_eq!(report.tests, expected.len() as u64);
    prop_assert_eq!(
        report.red,
        expected.iter().filter(|e| e.outcome.is_red()).count() as u64
    );

    for want in &expected {
        let stored = store.executions(&want.test_id, 10).unwrap();
        prop_assert_eq!(stored.len(), 1);
        let got = &stored[0];
        prop_assert_eq!(&got.execution, want);
        prop_assert_eq!(&got.signature, &want.signature());
        prop_assert_eq!(got.run_id, report.run_id);
        prop_assert_eq!(got.started_at, run.started_at);
        prop_assert_eq!(&got.commit, &run.commit);
        prop_assert_eq!(got.source, run.source);
    }

    let mut failing: Vec<&Execution> = expected
        .iter()
        .filter(|e| e.outcome.failed_at_least_once())
        .collect();
    failing.sort_by(|a, b| a.test_id.cmp(&b.test_id));
    let stored_failing = store.run_failures(report.run_id).unwrap();
    let got: Vec<&Execution> = stored_failing.iter().map(|s| &s.execution).collect();
    prop_assert_eq!(got, failing);

    let runs = store.runs(10).unwrap();
    prop_assert_eq!(runs.len(), 1);
    prop_assert_eq!(&runs[0].run, run);
    prop_assert_eq!(runs[0].executions, report.tests);
    prop_assert_eq!(&runs[0].content_key, "k");
    let by_id = store.run(report.run_id).unwrap();
    prop_assert_eq!(by_id.as_ref(), Some(&runs[0]));
    Ok(())
}

fn the_same_content_key_twice_adds_nothing(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    let first = store_run(
        &mut *store,
        &run_at(0),
        "key",
        vec![failed("a", "boom"), Execution::new("b", Outcome::Pass)],
    );

    let mut again = store.begin_ingest(&run_at(0)).unwrap();
    again.add(Execution::new("a", Outcome::Pass)).unwrap();
    again.add(Execution::new("c", Outcome::Pass)).unwrap();
    let report = again.commit(&content("key")).unwrap();

    assert!(!report.added);
    assert_eq!(report.run_id, first);
    assert_eq!(
        (report.tests, report.red),
        (2, 1),
        "the existing run's counts"
    );
    assert_eq!(store.runs(10).unwrap().len(), 1);
    assert_eq!(store.executions("a", 10).unwrap().len(), 1);
    assert_eq!(
        store.executions("a", 10).unwrap()[0].execution.outcome,
        Outcome::Fail
    );
    assert!(
        store.executions("c", 10).unwrap().is_empty(),
        "c was rolled back"
    );
    assert_eq!(store.tests(false).unwrap().len(), 2);
}

fn a_dropped_session_stores_nothing(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    store_run(
        &mut *store,
        &run_at(0),
        "earlier",
        vec![Execution::new("kept", Outcome::Pass)],
    );

    let mut session = store.begin_ingest(&run_at(1)).unwrap();
    for n in 0..1000 {
        session
            .add(failed(&format!("t{n}"), "half a file"))
            .unwrap();
    }
    session.add(Execution::new("kept", Outcome::Fail)).unwrap();
    // A parser error midway: the caller drops the session without committing.
    drop(session);

    assert_eq!(store.runs(10).unwrap().len(), 1);
    let tests = store.tests(false).unwrap();
    assert_eq!(tests.len(), 1, "no test row of the dropped run survives");
    assert_eq!(tests[0].test_id, "kept");
    assert_eq!(tests[0].runs, 1);
    assert!(store.executions("t0", 10).unwrap().is_empty());

    // The store is usable afterwards, and the next run gets the tests afresh.
    store_run(&mut *store, &run_at(2), "later", vec![failed("t0", "x")]);
    assert_eq!(store.executions("t0", 10).unwrap().len(), 1);
}

fn retries_in_one_run_merge_into_one_execution(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    let mut session = store.begin_ingest(&run_at(0)).unwrap();
    session.add(failed("flaky", "first attempt")).unwrap();
    session.add(Execution::new("flaky", Outcome::Pass)).unwrap();
    session
        .add(Execution::new("broken", Outcome::Pass))
        .unwrap();
    session.add(failed("broken", "second attempt")).unwrap();
    session.add(failed("stays-red", "one")).unwrap();
    session.add(failed("stays-red", "two")).unwrap();
    let report = session.commit(&content("k")).unwrap();

    assert_eq!(report.tests, 3);
    assert_eq!(report.red, 2, "broken and stays-red; flaky passed on retry");
    let flaky = &store.executions("flaky", 10).unwrap()[0];
    assert_eq!(flaky.execution.outcome, Outcome::FlakyPass);
    assert_eq!(flaky.execution.attempts, 2);
    let kept = flaky.execution.failure.as_ref().unwrap();
    assert_eq!(kept.message, "first attempt");
    assert_eq!(flaky.signature.as_deref(), Some(kept.signature().as_str()));
    let broken = &store.executions("broken", 10).unwrap()[0].execution;
    assert_eq!(broken.outcome, Outcome::Fail);
    assert_eq!(broken.failure.as_ref().unwrap().message, "second attempt");
    let stays = &store.executions("stays-red", 10).unwrap()[0].execution;
    assert_eq!((stays.outcome, stays.attempts), (Outcome::Fail, 2));
    assert_eq!(stays.failure.as_ref().unwrap().message, "one");
    assert_eq!(store.run(report.run_id).unwrap().unwrap().red, 2);
}

/// A store may hold executions back and write them in groups; retries that arrive while
/// their first attempt is held back, right after a group was written, or long after must
/// all merge, and every test must be stored once.
fn retries_merge_wherever_they_fall_among_grouped_writes(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    let mut executions: Vec<Execution> = Vec::new();
    for n in 0..150 {
        let mut execution = Execution::new(format!("t{n:03}"), Outcome::Pass);
        execution.file = Some(format!("tests/t{n}.py"));
        execution.line = Some(n);
        execution.duration = Some(f64::from(n) / 8.0);
        executions.push(execution);
        // Retries of the test just seen, of one a few back, and of the very first.
        match n {
            2 | 15 | 16 | 17 | 63 | 64 | 149 => {
                executions.push(failed(&format!("t{n:03}"), "again"));
            }
            40 | 100 => executions.push(Execution::new(format!("t{:03}", n - 5), Outcome::Skip)),
            90 => executions.push(failed("t000", "late")),
            _ => {}
        }
    }
    let expected = merged(&executions);
    assert_eq!(expected.len(), 150);
    let run = store_run(&mut *store, &run_at(0), "k", executions);
    let stored = store.run(run).unwrap().unwrap();
    assert_eq!(stored.executions, 150);
    assert_eq!(
        stored.red,
        expected.iter().filter(|e| e.outcome.is_red()).count() as u64
    );
    for want in &expected {
        let got = store.executions(&want.test_id, 10).unwrap();
        assert_eq!(got.len(), 1, "{}", want.test_id);
        assert_eq!(&got[0].execution, want);
    }
}

#[test]
fn a_file_that_is_not_sqlite_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    fs_err::write(
        &path,
        "<testsuites>this is a results file, not a database</testsuites>\n".repeat(20),
    )
    .unwrap();
    let error = SqliteStore::open(&path, TIMEOUT).err().expect("refused");
    assert!(
        matches!(&error, HistoryError::NotADatabase { path: p } if *p == path),
        "{error:?}"
    );
    assert!(error.to_string().ends_with("is not a SQLite database"));
}

#[test]
fn a_database_from_a_newer_candor_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    drop(open(&path));
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.pragma_update(None, "user_version", SCHEMA_VERSION + 7)
        .unwrap();
    drop(raw);

    let error = SqliteStore::open(&path, TIMEOUT).err().expect("refused");
    match error {
        HistoryError::TooNew {
            found, supported, ..
        } => assert_eq!((found, supported), (SCHEMA_VERSION + 7, SCHEMA_VERSION)),
        other => panic!("expected TooNew, got {other:?}"),
    }
    let raw = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = raw
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION + 7);
}

#[test]
fn an_ingest_waits_for_a_writer_only_as_long_as_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let timeout = Duration::from_millis(50);
    // A history that exists: a new file keeps the rollback journal, which does not let
    // readers past a writer, until its first store closes.
    drop(open(&path));
    let mut store = SqliteStore::open(&path, timeout).unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();

    let started = Instant::now();
    let error = store.begin_ingest(&run_at(0)).err().expect("locked");
    assert!(
        matches!(&error, HistoryError::Locked { timeout: t, .. } if *t == timeout),
        "{error:?}"
    );
    assert!(
        started.elapsed() >= timeout,
        "it waited the busy timeout first"
    );
    assert!(error.to_string().contains("stayed locked"), "{error}");

    // Readers are not blocked by a writer (WAL), and once the writer is gone, ingest works.
    assert!(store.runs(1).unwrap().is_empty());
    other.execute_batch("ROLLBACK").unwrap();
    store_run(
        &mut store,
        &run_at(0),
        "k",
        vec![Execution::new("a", Outcome::Pass)],
    );
}

#[test]
fn opening_a_database_another_process_holds_exclusively_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    // A database still in rollback-journal mode, held by an exclusive transaction: even
    // reading its version must wait.
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch("CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);")
        .unwrap();
    let error = SqliteStore::open(&path, Duration::from_millis(20))
        .err()
        .expect("locked");
    assert!(matches!(error, HistoryError::Locked { .. }), "{error:?}");
}

#[test]
fn reopening_migrates_nothing_and_keeps_the_history() {
    let dir = tempfile::tempdir().unwrap();
    // In a folder that does not exist yet.
    let path = dir.path().join("nested/.candor/history.db");
    {
        let mut store = open(&path);
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        store_run(&mut store, &run_at(0), "k", vec![failed("a", "boom")]);
    }
    for _ in 0..2 {
        let store = open(&path);
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(store.runs(10).unwrap().len(), 1);
        assert_eq!(
            store.executions("a", 10).unwrap()[0].execution,
            failed("a", "boom")
        );
    }
    let raw = rusqlite::Connection::open(&path).unwrap();
    let mode: String = raw
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

/// Issue 15 item 5: a new history's first ingest is written in the rollback journal,
/// whose pages are written once where the WAL writes them twice; meanwhile another store
/// opens the file without waiting and reads only what is committed, a session dropped
/// before its commit leaves nothing, and the file is in WAL mode once the stores close.
#[test]
fn a_new_history_is_written_without_the_wal_and_switches_to_it_on_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let wal = dir.path().join("history.db-wal");
    let journal_mode = || -> String {
        rusqlite::Connection::open(&path)
            .unwrap()
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap()
    };
    let mut store = open(&path);
    {
        let mut session = store.begin_ingest(&run_at(0)).unwrap();
        session.add(failed("gone", "never committed")).unwrap();
    }
    let mut session = store.begin_ingest(&run_at(1)).unwrap();
    for i in 0..600 {
        session.add(failed(&format!("t{i}"), "boom")).unwrap();
    }
    // Another process during the first ingest: it opens without waiting and sees the
    // history as last committed (empty).
    let reader = SqliteStore::open(&path, Duration::ZERO).expect("opens during the ingest");
    assert!(reader.runs(10).unwrap().is_empty());
    assert!(!wal.exists(), "the first ingest writes no WAL");
    session.commit(&content("k")).unwrap();
    assert!(!wal.exists(), "the first ingest writes no WAL");
    assert_eq!(reader.runs(10).unwrap().len(), 1);
    assert_eq!(reader.tests(false).unwrap().len(), 600);
    assert!(reader.executions("gone", 10).unwrap().is_empty());
    reader.check().unwrap();
    drop(reader);
    drop(store);
    assert_eq!(journal_mode(), "wal");
    let store = open(&path);
    assert_eq!(store.runs(10).unwrap().len(), 1);
    store.check().unwrap();
}

fn runs_and_executions_come_newest_first_by_start_not_by_ingest_order(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    // Backfill: the newest run is ingested first.
    let newest = store_run(
        &mut *store,
        &run_at(30),
        "c",
        vec![Execution::new("t", Outcome::Pass)],
    );
    let oldest = store_run(&mut *store, &run_at(10), "a", vec![failed("t", "old")]);
    let middle = store_run(
        &mut *store,
        &run_at(20),
        "b",
        vec![Execution::new("t", Outcome::Skip)],
    );

    let ids: Vec<i64> = store.runs(10).unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![newest, middle, oldest]);
    let ids: Vec<i64> = store.runs(2).unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![newest, middle]);
    let ids: Vec<i64> = store
        .executions("t", 10)
        .unwrap()
        .iter()
        .map(|e| e.run_id)
        .collect();
    assert_eq!(ids, vec![newest, middle, oldest]);
    assert_eq!(store.executions("t", 1).unwrap()[0].run_id, newest);
    assert!(store.executions("unknown", 10).unwrap().is_empty());
    assert!(store.run(newest + oldest + middle).unwrap().is_none());
}

fn windows_hold_the_last_runs_of_each_test_skips_excluded(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    let mut ids_by_second = Vec::new();
    // Ingested out of order; "b" skipped in the newest run, "a" failing at second 3.
    for second in [4, 1, 3, 0, 2] {
        let outcome_a = if second == 3 {
            failed("a", "x")
        } else {
            Execution::new("a", Outcome::Pass)
        };
        let outcome_b = Execution::new(
            "b",
            if second == 4 {
                Outcome::Skip
            } else {
                Outcome::Pass
            },
        );
        let id = store_run(
            &mut *store,
            &run_at(second),
            &format!("k{second}"),
            vec![outcome_b, outcome_a],
        );
        ids_by_second.push((second, id));
    }
    ids_by_second.sort_unstable();
    let run_of = |second: i64| ids_by_second[second as usize].1;

    let mut windows = Vec::new();
    store
        .windows(3, &mut |window| windows.push(window))
        .unwrap();
    assert_eq!(windows.len(), 2);
    assert_eq!(windows[0].test_id, "a");
    let a: Vec<(i64, Outcome)> = windows[0]
        .entries
        .iter()
        .map(|e| (e.run_id, e.outcome))
        .collect();
    assert_eq!(
        a,
        vec![
            (run_of(4), Outcome::Pass),
            (run_of(3), Outcome::Fail),
            (run_of(2), Outcome::Pass)
        ]
    );
    assert_eq!(windows[1].test_id, "b");
    let b: Vec<i64> = windows[1].entries.iter().map(|e| e.run_id).collect();
    assert_eq!(
        b,
        vec![run_of(3), run_of(2), run_of(1)],
        "the skip is not a run"
    );
    assert_eq!(windows[1].entries[0].started_at, run_at(3).started_at);
}

fn summaries_count_runs_failures_and_skips(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    store_run(
        &mut *store,
        &run_at(0),
        "0",
        vec![
            failed("red-then-skipped", "x"),
            Execution::new("green", Outcome::Pass),
        ],
    );
    store_run(
        &mut *store,
        &run_at(1),
        "1",
        vec![
            Execution::new("red-then-skipped", Outcome::Skip),
            Execution::new("green", Outcome::FlakyPass),
            failed("new-red", "y"),
        ],
    );

    let all = store.tests(false).unwrap();
    let ids: Vec<&str> = all.iter().map(|t| t.test_id.as_str()).collect();
    assert_eq!(ids, vec!["green", "new-red", "red-then-skipped"]);
    let green = &all[0];
    assert_eq!((green.runs, green.failures, green.skips), (2, 1, 0));
    assert_eq!(green.last_failure, Some(run_at(1).started_at));
    assert_eq!(green.pass_rate(), Some(0.5));
    let skipped = &all[2];
    assert_eq!((skipped.runs, skipped.failures, skipped.skips), (1, 1, 1));
    assert_eq!(skipped.last_seen, run_at(1).started_at);
    assert_eq!(skipped.last_failure, Some(run_at(0).started_at));

    let failing: Vec<String> = store
        .tests(true)
        .unwrap()
        .into_iter()
        .map(|t| t.test_id)
        .collect();
    assert_eq!(
        failing,
        vec!["new-red", "red-then-skipped"],
        "latest run that ran was red"
    );
}

/// Measures the ingest rate of `CANDOR_MEASURE_EXECUTIONS` (default 200,000) realistic
/// executions and the peak memory; run with
/// `cargo test --release --test it -- --ignored --nocapture history::measure_`.
#[test]
#[ignore = "measurement, not a check: run on demand in release mode"]
fn measure_ingest_of_200k_executions() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(&db_path(&dir));
    let count: u32 = std::env::var("CANDOR_MEASURE_EXECUTIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let cpu = thread_cpu_seconds();
    let signatures = (0..count).filter_map(|n| realistic(n).signature()).count();
    eprintln!(
        "building the executions alone ({signatures} signatures): {:.2} s CPU",
        thread_cpu_seconds() - cpu
    );
    for (attempt, key) in ["first", "second"].into_iter().enumerate() {
        let started = Instant::now();
        let cpu = thread_cpu_seconds();
        let mut session = store.begin_ingest(&run_at(attempt as i64)).unwrap();
        for n in 0..count {
            session.add(realistic(n)).unwrap();
        }
        session.commit(&content(key)).unwrap();
        let wall = started.elapsed().as_secs_f64();
        let cpu = thread_cpu_seconds() - cpu;
        let tests = if attempt == 0 {
            "new tests"
        } else {
            "known tests"
        };
        eprintln!(
            "{key} run ({tests}): {count} executions in {wall:.2} s wall, {cpu:.2} s CPU \
             = {:.0}/s of CPU; peak RSS {} KiB",
            f64::from(count) / cpu,
            peak_rss_kib()
        );
    }
}

/// Builds a history of `CANDOR_MEASURE_RUNS` (default 50) runs of 200,000 tests and
/// times reading every test's last 200 executions. With `CANDOR_MEASURE_DB` set, the
/// history is kept in that file and reused when it exists.
#[test]
#[ignore = "measurement, not a check: run on demand in release mode"]
fn measure_windows_over_10m_executions() {
    let runs: i64 = std::env::var("CANDOR_MEASURE_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let path = std::env::var_os("CANDOR_MEASURE_DB").map_or_else(|| db_path(&dir), PathBuf::from);
    if !path.exists() {
        let mut store = open(&path);
        let count = 200_000;
        let started = Instant::now();
        for run in 0..runs {
            // Runs are ingested in an order unrelated to their start times.
            let second = (run * 7919) % runs;
            let mut session = store.begin_ingest(&run_at(second)).unwrap();
            for n in 0..count {
                session.add(realistic(n)).unwrap();
            }
            session.commit(&content(&format!("k{run}"))).unwrap();
        }
        eprintln!(
            "built {} executions in {:.1} s",
            i64::from(count) * runs,
            started.elapsed().as_secs_f64()
        );
    }
    let store = open(&path);

    let started = Instant::now();
    let cpu = thread_cpu_seconds();
    let (mut tests, mut entries) = (0u64, 0u64);
    store
        .windows(200, &mut |window| {
            tests += 1;
            entries += window.entries.len() as u64;
        })
        .unwrap();
    eprintln!(
        "windows(200): {tests} tests, {entries} entries in {:.2} s wall, {:.2} s CPU; \
         peak RSS {} KiB",
        started.elapsed().as_secs_f64(),
        thread_cpu_seconds() - cpu,
        peak_rss_kib()
    );
    let started = Instant::now();
    let cpu = thread_cpu_seconds();
    let summaries = store.tests(false).unwrap();
    eprintln!(
        "tests(): {} summaries in {:.2} s wall, {:.2} s CPU",
        summaries.len(),
        started.elapsed().as_secs_f64(),
        thread_cpu_seconds() - cpu
    );
    let size = fs_err::metadata(&path).unwrap().len();
    eprintln!("database: {} MiB", size / (1024 * 1024));
}

/// A JUnit-like test case: 5% fail with a Java stack trace, some print output.
fn realistic(n: u32) -> Execution {
    let test_id = format!(
        "com.example.service{}.Handler{}Test::testCase{n}",
        n % 40,
        n % 2000
    );
    let mut execution = Execution::new(test_id, Outcome::Pass);
    execution.duration = Some(f64::from(n % 1000) / 250.0);
    if n % 20 == 7 {
        execution.outcome = Outcome::Fail;
        let frames: Vec<Frame> = (0..12)
            .map(|depth| Frame {
                file: format!(
                    "src/main/java/com/example/service{}/Handler{depth}.java",
                    n % 40
                ),
                line: Some(40 + depth),
                function: Some(format!("com.example.Handler{depth}.handle")),
            })
            .collect();
        let text = frames
            .iter()
            .map(|f| {
                format!(
                    "\tat {}({}:{})",
                    f.function.as_deref().unwrap_or(""),
                    f.file,
                    f.line.unwrap_or(0)
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        execution.failure = Some(Box::new(Failure {
            exception: Some("java.lang.AssertionError".into()),
            message: format!("expected:<{n}> but was:<{}>", n + 1),
            text: format!(
                "java.lang.AssertionError: expected:<{n}> but was:<{}>\n{text}",
                n + 1
            ),
            failing_frame: frames.first().cloned(),
            frames,
        }));
        execution.stdout = Some("connecting to localhost:5432\n".repeat(8));
    } else if n % 50 == 3 {
        execution.outcome = Outcome::Skip;
        execution.skip_message = Some("requires docker".into());
    }
    execution
}

/// CPU time of this thread: wall time means little on a shared machine.
fn thread_cpu_seconds() -> f64 {
    fs_err::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|stat| stat.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |nanoseconds| nanoseconds / 1e9)
}

fn peak_rss_kib() -> u64 {
    fs_err::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// What the store must answer, worked out directly from the runs as they went in.
mod model {
    use super::*;

    pub struct Run {
        pub id: i64,
        pub new: NewRun,
        /// Retries merged, first-seen order, with signatures.
        pub executions: Vec<Execution>,
    }

    fn key(run: &Run) -> (Timestamp, i64) {
        (run.new.started_at, run.id)
    }

    /// Every (run, execution) of `test`, newest first.
    fn history<'a>(runs: &'a [Run], test: &str) -> Vec<(&'a Run, &'a Execution)> {
        let mut found: Vec<(&Run, &Execution)> = runs
            .iter()
            .filter_map(|run| {
                run.executions
                    .iter()
                    .find(|e| e.test_id == test)
                    .map(|e| (run, e))
            })
            .collect();
        found.sort_by_key(|(run, _)| std::cmp::Reverse(key(run)));
        found
    }

    pub fn names(runs: &[Run]) -> Vec<String> {
        let mut names: Vec<String> = runs
            .iter()
            .flat_map(|run| run.executions.iter().map(|e| e.test_id.clone()))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    pub fn executions(runs: &[Run], test: &str, limit: usize) -> Vec<StoredExecution> {
        history(runs, test)
            .into_iter()
            .take(limit)
            .map(|(run, execution)| StoredExecution {
                run_id: run.id,
                started_at: run.new.started_at,
                commit: run.new.commit.clone(),
                branch: run.new.branch.clone(),
                source: run.new.source,
                execution: execution.clone(),
                signature: execution.signature(),
            })
            .collect()
    }

    pub fn windows(runs: &[Run], size: usize) -> Vec<TestWindow> {
        names(runs)
            .into_iter()
            .filter_map(|test| {
                let entries: Vec<WindowEntry> = history(runs, &test)
                    .into_iter()
                    .filter(|(_, e)| e.outcome != Outcome::Skip)
                    .take(size)
                    .map(|(run, e)| WindowEntry {
                        run_id: run.id,
                        started_at: run.new.started_at,
                        outcome: e.outcome,
                    })
                    .collect();
                (!entries.is_empty()).then_some(TestWindow {
                    test_id: test,
                    entries,
                })
            })
            .collect()
    }

    pub fn tests(runs: &[Run], failing_only: bool) -> Vec<TestSummary> {
        names(runs)
            .into_iter()
            .filter_map(|test| {
                let history = history(runs, &test);
                let ran: Vec<_> = history
                    .iter()
                    .filter(|(_, e)| e.outcome != Outcome::Skip)
                    .collect();
                let failed: Vec<_> = history
                    .iter()
                    .filter(|(_, e)| e.outcome.failed_at_least_once())
                    .collect();
                if failing_only && !ran.first().is_some_and(|(_, e)| e.outcome.is_red()) {
                    return None;
                }
                Some(TestSummary {
                    runs: ran.len() as u64,
                    failures: failed.len() as u64,
                    skips: (history.len() - ran.len()) as u64,
                    last_failure: failed.first().map(|(run, _)| run.new.started_at),
                    last_seen: history.first()?.0.new.started_at,
                    test_id: test,
                })
            })
            .collect()
    }

    pub fn run_failures(runs: &[Run], id: i64) -> Vec<StoredExecution> {
        let Some(run) = runs.iter().find(|run| run.id == id) else {
            return Vec::new();
        };
        let mut failed: Vec<StoredExecution> = run
            .executions
            .iter()
            .filter(|e| e.outcome.failed_at_least_once())
            .map(|execution| StoredExecution {
                run_id: run.id,
                started_at: run.new.started_at,
                commit: run.new.commit.clone(),
                branch: run.new.branch.clone(),
                source: run.new.source,
                execution: execution.clone(),
                signature: execution.signature(),
            })
            .collect();
        failed.sort_by(|a, b| a.execution.test_id.cmp(&b.execution.test_id));
        failed
    }
}

/// Checks every question the store answers against [`model`], and the store's own
/// invariants.
fn assert_answers_as_the_model(store: &Store, runs: &[model::Run]) {
    store.check();
    assert_eq!(store.tests(false).unwrap(), model::tests(runs, false));
    assert_eq!(store.tests(true).unwrap(), model::tests(runs, true));
    for size in [1, 3, 1000] {
        let mut windows = Vec::new();
        store
            .windows(size, &mut |window| windows.push(window))
            .unwrap();
        assert_eq!(windows, model::windows(runs, size), "windows({size})");
    }
    // Counting a subset of the runs (as reliability counts the default branch's) answers
    // as the model does over that subset alone (issue 12 item 5).
    let subset: Vec<model::Run> = runs
        .iter()
        .filter(|run| run.id % 2 == 1)
        .map(|run| model::Run {
            id: run.id,
            new: run.new.clone(),
            executions: run.executions.clone(),
        })
        .collect();
    let ids: std::collections::HashSet<i64> = subset.iter().map(|run| run.id).collect();
    assert_eq!(
        store.tests_in(false, Some(&ids)).unwrap(),
        model::tests(&subset, false)
    );
    assert_eq!(
        store.tests_in(true, Some(&ids)).unwrap(),
        model::tests(&subset, true)
    );
    for size in [1, 3, 1000] {
        let mut windows = Vec::new();
        store
            .windows_in(size, Some(&ids), &mut |window| windows.push(window))
            .unwrap();
        assert_eq!(windows, model::windows(&subset, size), "windows_in({size})");
    }
    for test in model::names(runs) {
        assert_eq!(
            store.executions(&test, usize::MAX).unwrap(),
            model::executions(runs, &test, usize::MAX),
            "{test}"
        );
        assert_eq!(
            store.executions(&test, 2).unwrap(),
            model::executions(runs, &test, 2),
            "{test}"
        );
    }
    for run in runs {
        assert_eq!(
            store.run_failures(run.id).unwrap(),
            model::run_failures(runs, run.id)
        );
        let stored = store.run(run.id).unwrap().unwrap();
        assert_eq!(stored.run, run.new);
        assert_eq!(stored.executions, run.executions.len() as u64);
    }
    let mut order: Vec<(Timestamp, i64)> = runs.iter().map(|r| (r.new.started_at, r.id)).collect();
    order.sort_by(|a, b| b.cmp(a));
    let stored: Vec<(Timestamp, i64)> = store
        .runs(usize::MAX)
        .unwrap()
        .iter()
        .map(|r| (r.run.started_at, r.id))
        .collect();
    assert_eq!(stored, order);
}

/// Stores `executions` as one run and records it for the model.
fn store_and_model(
    store: &mut Store,
    runs: &mut Vec<model::Run>,
    run: NewRun,
    executions: Vec<Execution>,
) {
    let expected = merged(&executions);
    let key = format!("run-{}", runs.len());
    let id = store_run(&mut **store, &run, &key, executions);
    let mut run = run;
    run.format = Some("junit".into());
    run.producer = Some("pytest".into());
    runs.push(model::Run {
        id,
        new: run,
        executions: expected,
    });
}

/// Limits so small that a few hundred executions reach every path that writes or reads
/// early: blocks written and read back, parts of details, the name cache, several merges
/// into the name index, the filter, windows in many passes.
fn tiny_tuning() -> Tuning {
    Tuning {
        open_blocks: 2,
        details_held: 300,
        details_part_bytes: 200,
        name_cache_bytes: 2_000,
        new_names_merged: 50,
        filter_after: 5,
        filter_capacity: 10,
        window_entries_per_pass: 40,
    }
}

/// A pool of names spanning three blocks of 256.
const POOL: usize = 700;

fn pooled_name(index: usize) -> String {
    format!(
        "tests/pkg{}/test_m{}.py::T::test_{index}",
        index % 5,
        index % 37
    )
}

fn pooled_execution() -> impl Strategy<Value = Execution> {
    (
        0..POOL,
        proptest::sample::select(Outcome::ALL.to_vec()),
        proptest::option::of(0.0..100.0f64),
        1..3u32,
        proptest::option::of(failure_strategy()),
        (
            proptest::option::of(text()),
            any::<Option<u32>>(),
            proptest::option::of(text()),
        ),
    )
        .prop_map(
            |(index, outcome, duration, attempts, failure, (file, line, stdout))| Execution {
                test_id: pooled_name(index),
                outcome,
                duration,
                attempts,
                failure: failure.map(Box::new),
                skip_message: (outcome == Outcome::Skip).then(|| "skipped".into()),
                file,
                line,
                stdout,
                stderr: None,
            },
        )
}

/// Runs whose starts (seconds) may tie and go backwards, each a shuffled mix of the pool
/// with retries, some runs holding a test that others do not.
fn runs_strategy() -> impl Strategy<Value = Vec<(i64, Vec<Execution>)>> {
    proptest::collection::vec(
        (
            0..4i64,
            proptest::collection::vec(pooled_execution(), 0..400),
        ),
        1..4,
    )
}

proptest! {
    #![proptest_config(proptest_config(12))]

    /// Several runs over three blocks, in any order, with retries: every question is
    /// answered as the model of the same runs answers it.
    #[test]
    fn a_history_of_several_runs_answers_as_its_model(runs in runs_strategy()) {
        several_runs(Backend::Sqlite, runs);
    }

    /// The same on PostgreSQL.
    #[test]
    fn a_history_of_several_runs_answers_as_its_model_on_postgres(runs in runs_strategy()) {
        several_runs(Backend::Postgres, runs);
    }

    /// The same with every memory limit tiny, so that each path that writes early or
    /// reads back is taken.
    #[test]
    fn a_history_stored_with_tiny_limits_answers_as_its_model(runs in runs_strategy()) {
        let mut store = Store::new(Backend::Sqlite).unwrap();
        store.set_tuning(tiny_tuning());
        let mut model = Vec::new();
        for (second, executions) in runs {
            store_and_model(&mut store, &mut model, run_at(second), executions);
        }
        assert_answers_as_the_model(&store, &model);
        // Read with the default limits too: what is stored does not depend on them.
        store.set_tuning(Tuning::default());
        assert_answers_as_the_model(&store, &model);
    }
}

fn several_runs(backend: Backend, runs: Vec<(i64, Vec<Execution>)>) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    let mut model = Vec::new();
    for (second, executions) in runs {
        store_and_model(&mut store, &mut model, run_at(second), executions);
    }
    assert_answers_as_the_model(&store, &model);
}

fn passing(index: usize) -> Execution {
    let mut execution = Execution::new(pooled_name(index), Outcome::Pass);
    execution.duration = Some(index as f64 / 100.0);
    execution.file = Some(format!("tests/pkg{}/test_m{}.py", index % 5, index % 37));
    execution.line = Some(index as u32);
    execution
}

fn tests_on_both_sides_of_a_block_boundary_keep_their_own_histories(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    let mut runs = Vec::new();
    // Ids 0..600 (blocks 0, 1 and part of 2) in the first run; later runs hold only the
    // tests around the boundaries, some failing.
    store_and_model(
        &mut store,
        &mut runs,
        run_at(0),
        (0..600).map(passing).collect(),
    );
    let around: Vec<usize> = [254, 255, 256, 257, 510, 511, 512, 513].into();
    for second in 1..4 {
        let executions = around
            .iter()
            .map(|&index| {
                if (index + second as usize).is_multiple_of(3) {
                    failed(&pooled_name(index), "boundary")
                } else {
                    passing(index)
                }
            })
            .collect();
        store_and_model(&mut store, &mut runs, run_at(second), executions);
    }
    assert_answers_as_the_model(&store, &runs);
    assert_eq!(store.executions(&pooled_name(255), 10).unwrap().len(), 4);
    assert_eq!(store.executions(&pooled_name(300), 10).unwrap().len(), 1);
}

fn a_backfilled_run_lands_in_start_order_in_every_window(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    let mut runs = Vec::new();
    for second in [10, 20, 30] {
        store_and_model(
            &mut store,
            &mut runs,
            run_at(second),
            (0..300).map(passing).collect(),
        );
    }
    // An old artifact arrives late, failing everything; and one at the same start as an
    // existing run, which orders by id after it.
    let old: Vec<Execution> = (0..300).map(|i| failed(&pooled_name(i), "old")).collect();
    store_and_model(&mut store, &mut runs, run_at(5), old);
    let tie: Vec<Execution> = (0..300)
        .step_by(7)
        .map(|i| failed(&pooled_name(i), "tie"))
        .collect();
    store_and_model(&mut store, &mut runs, run_at(20), tie);
    assert_answers_as_the_model(&store, &runs);
    let history = store.executions(&pooled_name(0), 10).unwrap();
    let starts: Vec<i64> = history
        .iter()
        .map(|e| e.started_at.as_second() - 1_700_000_000)
        .collect();
    assert_eq!(starts, vec![30, 20, 20, 10, 5]);
    assert_eq!(
        history[1].run_id, runs[4].id,
        "the later id first among equal starts"
    );
}

fn retries_reach_back_into_blocks_and_details_already_written(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    store.set_tuning(Tuning {
        details_part_bytes: 100,
        ..Tuning::default()
    });
    let mut runs = Vec::new();
    // 600 tests in order: blocks 0 and 1 fill and are written before the retries come;
    // every failure's details make their own row.
    let mut executions: Vec<Execution> = (0..600)
        .map(|i| {
            if i % 50 == 3 {
                failed(&pooled_name(i), "first")
            } else {
                passing(i)
            }
        })
        .collect();
    for index in [3, 53, 255, 256, 303, 511, 599] {
        executions.push(if index % 2 == 0 {
            failed(&pooled_name(index), "retry")
        } else {
            passing(index)
        });
    }
    store_and_model(&mut store, &mut runs, run_at(0), executions);
    assert_answers_as_the_model(&store, &runs);
    let flaky = &store.executions(&pooled_name(3), 1).unwrap()[0].execution;
    assert_eq!((flaky.outcome, flaky.attempts), (Outcome::FlakyPass, 2));
    assert_eq!(flaky.failure.as_ref().unwrap().message, "first");
}

fn ingesting_a_large_run_twice_adds_nothing_the_second_time(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    let mut runs = Vec::new();
    let executions: Vec<Execution> = (0..POOL)
        .map(|i| {
            if i % 9 == 0 {
                failed(&pooled_name(i), "x")
            } else {
                passing(i)
            }
        })
        .collect();
    store_and_model(&mut store, &mut runs, run_at(0), executions.clone());
    let mut again = store.begin_ingest(&run_at(0)).unwrap();
    for execution in executions {
        again.add(execution).unwrap();
    }
    // New tests too: rolled back with the rest.
    again
        .add(Execution::new("brand new", Outcome::Pass))
        .unwrap();
    let report = again.commit(&content("run-0")).unwrap();
    assert!(!report.added);
    assert_eq!(report.run_id, runs[0].id);
    assert_answers_as_the_model(&store, &runs);
    assert!(store.executions("brand new", 10).unwrap().is_empty());
}

fn a_name_is_stored_once_however_many_runs_and_orders_bring_it(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    let mut runs = Vec::new();
    // Forward, backward, interleaved with new names, and a small run that looks names up
    // before the filter exists.
    store_and_model(
        &mut store,
        &mut runs,
        run_at(0),
        (0..400).map(passing).collect(),
    );
    store_and_model(
        &mut store,
        &mut runs,
        run_at(1),
        (0..POOL).rev().map(passing).collect(),
    );
    store_and_model(
        &mut store,
        &mut runs,
        run_at(2),
        vec![passing(5), passing(650)],
    );
    store_and_model(
        &mut store,
        &mut runs,
        run_at(3),
        (0..POOL).filter(|i| i % 3 != 0).map(passing).collect(),
    );
    store.check();
    assert_eq!(store.tests(false).unwrap().len(), POOL);
    assert_answers_as_the_model(&store, &runs);
}

/// `red_seconds` reads only the entries (SQLite) or sums on the server (PostgreSQL); it
/// must agree with summing `run_failures`, which reads the details (what the trait's
/// default does), across blocks and outcomes.
fn red_seconds_agrees_with_the_failures_it_sums(backend: Backend) {
    let Some(mut store) = Store::new(backend) else {
        return;
    };
    let outcomes = [
        Outcome::Pass,
        Outcome::Fail,
        Outcome::Error,
        Outcome::FlakyPass,
        Outcome::Skip,
    ];
    let mut session = store.begin_ingest(&red_seconds_run()).unwrap();
    for i in 0..700u32 {
        let mut execution = Execution::new(format!("t::{i:04}"), outcomes[i as usize % 5]);
        execution.duration = (i % 7 != 0).then_some(f64::from(i) / 8.0);
        session.add(execution).unwrap();
    }
    let report = session
        .commit(&RunContent {
            content_key: "red-seconds".into(),
            format: None,
            producer: None,
        })
        .unwrap();
    let summed: f64 = store
        .run_failures(report.run_id)
        .unwrap()
        .iter()
        .filter_map(|stored| stored.execution.duration)
        .sum();
    assert!(summed > 0.0);
    assert!((store.red_seconds(report.run_id).unwrap() - summed).abs() < 1e-9);
    assert!(
        (store.red_seconds(report.run_id + 1).unwrap()).abs() < f64::EPSILON,
        "no such run"
    );
}

fn red_seconds_run() -> NewRun {
    NewRun {
        commit: Some("a".repeat(40)),
        branch: Some("main".into()),
        merge_base: None,
        started_at: jiff::Timestamp::from_second(1_780_000_000).unwrap(),
        source: Source::Ci,
        ci_provider: None,
        job: None,
        ci_run: candor::history::CiRun::default(),
        workers: None,
        seed: None,
        conditions: candor::history::Conditions::default(),
        format: None,
        producer: None,
        source_path: None,
    }
}
