//! Migrating a history written by an older candor: a schema-1 database, made by the
//! schema-1 store itself, opens under the current schema and answers every query exactly
//! as the schema-1 store answered it.
//!
//! `tests/data/history-0001/history.db` and `answers.json` beside it were made by
//! [`make_fixture`] at commit 77119b2, the last commit whose store wrote schema 1:
//!
//! ```sh
//! CANDOR_FIXTURE_DIR=tests/data/history-0001 cargo test --test it -- --ignored history_migration::make_fixture
//! ```
//!
//! Run at a later commit, the same function makes a database of that commit's schema,
//! which is how a fixture for the next migration is made.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use candor::history::{
    Conditions, HistoryStore, NewRun, RunContent, RunRecord, Source, SqliteStore, StoredExecution,
    TestSummary, TestWindow,
};
use candor::results::{Execution, Failure, Frame, Outcome};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

const TIMEOUT: Duration = Duration::from_secs(5);

/// Everything the store answers about the fixture's history.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Answers {
    runs: Vec<RunRecord>,
    run_by_id: Vec<Option<RunRecord>>,
    run_failures: Vec<Vec<StoredExecution>>,
    tests: Vec<TestSummary>,
    failing_tests: Vec<TestSummary>,
    windows_1: Vec<TestWindow>,
    windows_3: Vec<TestWindow>,
    windows_all: Vec<TestWindow>,
    /// Every test's executions, in test-id order.
    executions: Vec<Vec<StoredExecution>>,
    unknown_test: Vec<StoredExecution>,
}

fn answers(store: &SqliteStore) -> Answers {
    let runs = store.runs(usize::MAX).unwrap();
    let mut ids: Vec<i64> = runs.iter().map(|run| run.id).collect();
    ids.push(ids.iter().max().copied().unwrap_or(0) + 1);
    let tests = store.tests(false).unwrap();
    let windows = |size| {
        let mut all = Vec::new();
        store.windows(size, &mut |window| all.push(window)).unwrap();
        all
    };
    Answers {
        run_by_id: ids.iter().map(|&id| store.run(id).unwrap()).collect(),
        run_failures: ids
            .iter()
            .map(|&id| store.run_failures(id).unwrap())
            .collect(),
        failing_tests: store.tests(true).unwrap(),
        windows_1: windows(1),
        windows_3: windows(3),
        windows_all: windows(usize::MAX),
        executions: tests
            .iter()
            .map(|test| store.executions(&test.test_id, usize::MAX).unwrap())
            .collect(),
        unknown_test: store.executions("no/such::test", 10).unwrap(),
        runs,
        tests,
    }
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/history-0001")
}

/// SplitMix64: a seeded, portable generator, so the fixture is the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

fn run(second: i64, job: &str) -> NewRun {
    NewRun {
        commit: Some(format!("c{second}")),
        branch: Some(if second % 2 == 0 { "main" } else { "topic" }.into()),
        merge_base: (second % 3 == 0).then(|| "f00d".repeat(10)),
        started_at: Timestamp::from_second(1_700_000_000 + second).unwrap(),
        source: Source::ALL[second.unsigned_abs() as usize % Source::ALL.len()],
        ci_provider: Some("github-actions".into()),
        job: Some(job.into()),
        ci_run: candor::history::CiRun::default(),
        workers: Some(4),
        seed: (second % 2 == 1).then(|| format!("{second}")),
        conditions: Conditions {
            ci: true,
            runner: Some("pytest".into()),
            os: Some("linux".into()),
        },
        format: None,
        producer: None,
        source_path: Some(format!("results-{second}.xml")),
    }
}

fn execution(rng: &mut Rng, test: usize) -> Execution {
    let id = format!(
        "tests/pkg{}/test_m{}.py::T::test_{test}",
        test % 7,
        test % 23
    );
    let roll = rng.below(100);
    let outcome = match roll {
        0..=79 => Outcome::Pass,
        80..=87 => Outcome::Fail,
        88..=90 => Outcome::Error,
        _ => Outcome::Skip,
    };
    let mut execution = Execution::new(id, outcome);
    execution.duration = (rng.below(10) != 0).then(|| rng.below(5_000_000) as f64 / 1e6);
    execution.file =
        (rng.below(10) != 0).then(|| format!("tests/pkg{}/test_m{}.py", test % 7, test % 23));
    execution.line = (rng.below(4) != 0).then(|| (test * 3 % 1000) as u32);
    if outcome.is_red() {
        let frame = Frame {
            file: format!("src/mod{}.py", test % 5),
            line: Some((test % 300) as u32),
            function: Some(format!("f{}", test % 11)),
        };
        execution.failure = Some(Box::new(Failure {
            exception: (rng.below(5) != 0).then(|| "AssertionError".into()),
            message: format!("assert {} == {}", rng.below(100), rng.below(100)),
            text: format!("Traceback\n  File \"x.py\", line {test}\nAssertionError"),
            frames: vec![frame.clone(); (test % 3) + 1],
            failing_frame: test.is_multiple_of(2).then_some(frame),
        }));
    }
    if outcome == Outcome::Skip && rng.below(2) == 0 {
        execution.skip_message = Some("needs docker".into());
    }
    if rng.below(20) == 0 {
        execution.stdout = Some(format!("out {test}\n"));
    }
    if rng.below(40) == 0 {
        execution.stderr = Some(format!("err {test}\n"));
    }
    execution
}

/// Writes the fixture's history through the store of the commit it runs at: 600 tests
/// (more than two blocks of 256), runs ingested out of start order, two runs with the same
/// start, tests present in some runs only, retries, skips, failures with details.
#[test]
#[ignore = "makes the fixture: run on demand, see the module documentation"]
fn make_fixture() {
    let dir = std::env::var_os("CANDOR_FIXTURE_DIR").map_or_else(fixture_dir, PathBuf::from);
    fs_err::create_dir_all(&dir).unwrap();
    let path = dir.join("history.db");
    let _ = fs_err::remove_file(&path);
    let mut rng = Rng(0x0001_F1C5);
    {
        let mut store = SqliteStore::open(&path, TIMEOUT).unwrap();
        // Start seconds in ingest order: backfilled runs, and 40 twice.
        for (number, second) in [30i64, 10, 40, 20, 40, 0, 50].into_iter().enumerate() {
            let job = format!("job-{number}");
            let mut session = store.begin_ingest(&run(second, &job)).unwrap();
            let tests: Vec<usize> = match number {
                // Only the second block's tests, in reverse.
                1 => (256..512).rev().collect(),
                // Every other test, then a few new ones.
                3 => (0..600).step_by(2).chain(600..620).collect(),
                // A small rerun.
                6 => vec![3, 300, 590, 3],
                _ => (0..600).collect(),
            };
            let mut last = Vec::new();
            for &test in &tests {
                session.add(execution(&mut rng, test)).unwrap();
                if rng.below(30) == 0 {
                    last.push(test);
                }
            }
            // Retries, some long after the first attempt, some across blocks.
            for test in last {
                session.add(execution(&mut rng, test)).unwrap();
            }
            let content = RunContent {
                content_key: format!("key-{number}"),
                format: Some("junit".into()),
                producer: Some("pytest".into()),
            };
            assert!(session.commit(&content).unwrap().added);
        }
    }
    // One file, no WAL beside it.
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.pragma_update(None, "journal_mode", "delete").unwrap();
    drop(raw);
    let store = SqliteStore::open(&path, TIMEOUT).unwrap();
    let answers = answers(&store);
    drop(store);
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.pragma_update(None, "journal_mode", "delete").unwrap();
    drop(raw);
    fs_err::write(
        dir.join("answers.json"),
        serde_json::to_string(&answers).unwrap(),
    )
    .unwrap();
}

fn schema_version(path: &Path) -> i64 {
    let raw = rusqlite::Connection::open(path).unwrap();
    raw.pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap()
}

#[test]
fn a_schema_1_history_migrates_and_answers_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    fs_err::copy(fixture_dir().join("history.db"), &path).unwrap();
    assert_eq!(
        schema_version(&path),
        1,
        "the fixture is a schema-1 database"
    );
    let expected: Answers =
        serde_json::from_str(&fs_err::read_to_string(fixture_dir().join("answers.json")).unwrap())
            .unwrap();
    // The fixture spans several blocks and holds what the answers must cover.
    assert!(expected.tests.len() > 512, "{}", expected.tests.len());
    assert!(
        expected
            .executions
            .iter()
            .any(|e| e.iter().any(|s| s.execution.attempts > 1))
    );

    let store = SqliteStore::open(&path, TIMEOUT).unwrap();
    assert_eq!(
        store.schema_version().unwrap(),
        candor::history::sqlite::SCHEMA_VERSION
    );
    let got = answers(&store);
    assert_eq!(got.runs, expected.runs);
    assert_eq!(got.run_by_id, expected.run_by_id);
    assert_eq!(got.run_failures, expected.run_failures);
    assert_eq!(got.tests, expected.tests);
    assert_eq!(got.failing_tests, expected.failing_tests);
    assert_eq!(got.windows_1, expected.windows_1);
    assert_eq!(got.windows_3, expected.windows_3);
    assert_eq!(got.windows_all, expected.windows_all);
    for (got, want) in got.executions.iter().zip(&expected.executions) {
        assert_eq!(got, want);
    }
    for (test, want) in expected.tests.iter().zip(&expected.executions) {
        let first_two = store.executions(&test.test_id, 2).unwrap();
        assert_eq!(first_two, want[..want.len().min(2)]);
    }
    assert_eq!(got.unknown_test, expected.unknown_test);
    drop(store);

    // Opening again migrates nothing and answers the same.
    let store = SqliteStore::open(&path, TIMEOUT).unwrap();
    assert_eq!(answers(&store), expected);
    let ids: BTreeSet<String> = expected.tests.iter().map(|t| t.test_id.clone()).collect();
    assert_eq!(ids.len(), expected.tests.len());
}

/// The format byte of every block of names, in block order.
fn name_packings(path: &Path) -> Vec<u8> {
    let raw = rusqlite::Connection::open(path).unwrap();
    let mut statement = raw
        .prepare("SELECT substr(names, 1, 1) FROM test_names ORDER BY block")
        .unwrap();
    statement
        .query_map([], |row| row.get::<_, Vec<u8>>(0))
        .unwrap()
        .map(|byte| byte.unwrap()[0])
        .collect()
}

/// Schema 4 stores new blocks of names front-coded without LZ4; the blocks the migration
/// packed with LZ4 stay as they are. Both are read alike: the last block, part full,
/// grows in the new packing; a name in either kind of block is found rather than added
/// again; and the layout checks out.
#[test]
fn names_packed_with_lz4_and_front_coded_are_read_alike() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    fs_err::copy(fixture_dir().join("history.db"), &path).unwrap();
    let mut store = SqliteStore::open(&path, TIMEOUT).unwrap();
    let known = store.tests(false).unwrap().len();
    assert_eq!(known, 620, "the fixture's tests");
    assert_eq!(
        name_packings(&path),
        [1, 1, 1],
        "LZ4, as migration 0002 packs them"
    );

    let mut rng = Rng(0x0004_F2C0);
    for (number, tests) in [(0, 0..1000), (1, 0..1000)] {
        let mut session = store.begin_ingest(&run(60 + number, "job-new")).unwrap();
        for test in tests {
            session.add(execution(&mut rng, test)).unwrap();
        }
        let content = RunContent {
            content_key: format!("new-key-{number}"),
            format: Some("junit".into()),
            producer: Some("pytest".into()),
        };
        let report = session.commit(&content).unwrap();
        assert_eq!(report.tests, 1000);
        assert_eq!(
            store.tests(false).unwrap().len(),
            1000,
            "ingest {number}: every name found once, whichever its block's packing"
        );
    }
    assert_eq!(
        name_packings(&path),
        [1, 1, 2, 2],
        "the part-full block rewritten and the new one front-coded"
    );
    store.check().unwrap();
    let names: BTreeSet<String> = store
        .tests(false)
        .unwrap()
        .into_iter()
        .map(|test| test.test_id)
        .collect();
    for test in [0, 511, 512, 619, 620, 999] {
        let id = execution(&mut rng, test).test_id;
        assert!(names.contains(&id), "{id}");
    }
}
