//! Ingesting result files end to end into a real SQLite history: idempotency by content
//! key, all-or-nothing on bad input, errors that name the file and position, and the
//! expansion of command-line inputs.
//!
//! Tests marked `needs the real JUnit parser` exercise the streaming parser from the
//! `junit` branch; on a branch where `results::junit` is still the stub they are ignored.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use candor::history::{Conditions, HistoryError, HistoryStore, NewRun, Source, SqliteStore};
use candor::ingest::{
    CONTENT_KEY_VERSION, IngestError, InputError, content_key, expand_inputs, ingest_file,
};
use candor::results::{Outcome, ParseError, ParseOptions, Position};
use jiff::Timestamp;

const JUNIT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="pytest" tests="3" failures="1" errors="0" skipped="0">
    <testcase classname="tests.test_math" name="test_add" file="tests/test_math.py" time="0.010"/>
    <testcase classname="tests.test_math" name="test_sub" file="tests/test_math.py" time="0.020">
      <failure message="assert 1 == 2" type="AssertionError">def test_sub():
&gt;       assert 1 == 2
E       assert 1 == 2

tests/test_math.py:9: AssertionError</failure>
    </testcase>
    <testcase classname="tests.test_math" name="test_mul" file="tests/test_math.py" time="0.030"/>
  </testsuite>
</testsuites>
"#;

fn run(commit: &str) -> NewRun {
    NewRun {
        commit: Some(commit.into()),
        branch: Some("main".into()),
        merge_base: None,
        started_at: Timestamp::from_second(1_700_000_000).unwrap(),
        source: Source::Ci,
        ci_provider: None,
        job: Some("unit".into()),
        ci_run: candor::history::CiRun::default(),
        workers: None,
        seed: None,
        conditions: Conditions::default(),
        format: None,
        producer: None,
        source_path: Some("results.xml".into()),
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    store: SqliteStore,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store =
            SqliteStore::open(dir.path().join("history.db"), Duration::from_secs(5)).unwrap();
        Fixture { dir, store }
    }

    fn file(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(name);
        fs_err::write(&path, content).unwrap();
        path
    }

    fn ingest(
        &mut self,
        path: &Path,
        run: &NewRun,
    ) -> Result<candor::ingest::FileIngest, IngestError> {
        ingest_file(&mut self.store, path, run, &ParseOptions::default())
    }

    fn assert_nothing_stored(&self) {
        assert!(self.store.runs(10).unwrap().is_empty(), "no run was stored");
        assert!(
            self.store.tests(false).unwrap().is_empty(),
            "no test was stored"
        );
    }
}

#[test]
fn the_same_file_for_the_same_run_is_stored_once() {
    let mut fixture = Fixture::new();
    let path = fixture.file("results.xml", JUNIT);

    let first = fixture.ingest(&path, &run("abc")).unwrap();
    let second = fixture.ingest(&path, &run("abc")).unwrap();

    assert!(first.report.added);
    assert!(!second.report.added);
    assert_eq!(second.report.run_id, first.report.run_id);
    assert_eq!(second.content_key, first.content_key);
    let file_digest: [u8; 32] = blake3::hash(JUNIT.as_bytes()).into();
    assert_eq!(first.content_key, content_key(&run("abc"), &file_digest));
    let runs = fixture.store.runs(10).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].content_key, first.content_key);
    assert_eq!(
        runs[0].run.format.as_deref(),
        Some("junit"),
        "from what the parser saw"
    );
}

#[test]
fn the_same_file_for_another_commit_job_or_source_is_another_run() {
    let mut fixture = Fixture::new();
    let path = fixture.file("results.xml", JUNIT);
    let base = run("abc");
    assert!(fixture.ingest(&path, &base).unwrap().report.added);

    let other_commit = run("def");
    let other_job = NewRun {
        job: Some("integration".into()),
        ..run("abc")
    };
    let other_source = NewRun {
        source: Source::Local,
        ..run("abc")
    };
    for other in [&other_commit, &other_job, &other_source] {
        assert!(
            fixture.ingest(&path, other).unwrap().report.added,
            "{other:?}"
        );
    }
    // Branch, time and path are not the run's identity: a moved or re-downloaded file is
    // the same run.
    let same = NewRun {
        branch: Some("feature".into()),
        started_at: Timestamp::from_second(1_800_000_000).unwrap(),
        source_path: Some("elsewhere/results.xml".into()),
        ..run("abc")
    };
    assert!(!fixture.ingest(&path, &same).unwrap().report.added);
    assert_eq!(fixture.store.runs(10).unwrap().len(), 4);
}

#[test]
fn the_content_key_is_the_documented_recipe() {
    // docs/history.md's recipe, version 2: BLAKE3 of the file, BLAKE3 of the JSON.
    assert_eq!(CONTENT_KEY_VERSION, "candor/content-key/2");
    let file_digest: [u8; 32] = blake3::hash(b"<testsuite/>").into();
    let identity = format!(
        r#"["candor/content-key/2","abc",null,"rerun","{}"]"#,
        hex::encode(file_digest)
    );
    let expected = blake3::hash(identity.as_bytes()).to_hex().to_string();
    let rerun = NewRun {
        job: None,
        source: Source::Rerun,
        ..run("abc")
    };
    assert_eq!(content_key(&rerun, &file_digest), expected);
    // Quoting keeps fields apart: a commit cannot pose as a commit plus a job.
    let sneaky = NewRun {
        commit: Some(r#"abc","unit"#.into()),
        job: None,
        ..run("abc")
    };
    assert_ne!(
        content_key(&sneaky, &file_digest),
        content_key(&run("abc"), &file_digest)
    );
}

#[test]
fn an_empty_file_is_refused_at_its_start_and_nothing_is_stored() {
    let mut fixture = Fixture::new();
    let path = fixture.file("empty.xml", "");
    let error = fixture.ingest(&path, &run("abc")).unwrap_err();

    assert!(
        matches!(
            &error,
            IngestError::Parse {
                error: ParseError::NotResults { .. },
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        error.position(),
        Some(Position::LineColumn { line: 1, column: 1 })
    );
    let shown = error.to_string();
    assert!(
        shown.starts_with(&format!("{}:1:1: ", path.display())),
        "{shown}"
    );
    assert!(error.hint().is_some_and(|hint| hint.contains("JUnit XML")));
    fixture.assert_nothing_stored();
}

#[test]
fn a_json_report_of_another_tool_is_refused_and_nothing_is_stored() {
    let mut fixture = Fixture::new();
    let path = fixture.file(
        "mocha.json",
        "{\n  \"stats\": {\"tests\": 1},\n  \"tests\": []\n}\n",
    );
    let error = fixture.ingest(&path, &run("abc")).unwrap_err();
    assert!(
        matches!(
            &error,
            IngestError::Parse {
                error: ParseError::NotResults { .. },
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("a JSON document"), "{error}");
    fixture.assert_nothing_stored();
}

#[test]
fn a_missing_file_is_a_read_error() {
    let mut fixture = Fixture::new();
    let path = fixture.dir.path().join("absent.xml");
    let error = fixture.ingest(&path, &run("abc")).unwrap_err();
    assert!(
        matches!(&error, IngestError::Read { path: p, .. } if *p == path),
        "{error:?}"
    );
    assert!(error.hint().is_some());
    fixture.assert_nothing_stored();
}

#[test]
fn a_locked_history_is_reported_as_the_store_s_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let mut store = SqliteStore::open(&db, Duration::from_millis(20)).unwrap();
    let other = rusqlite::Connection::open(&db).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let path = dir.path().join("results.xml");
    fs_err::write(&path, JUNIT).unwrap();

    let error = ingest_file(&mut store, &path, &run("abc"), &ParseOptions::default()).unwrap_err();
    assert!(
        matches!(error, IngestError::Store(HistoryError::Locked { .. })),
        "{error:?}"
    );
}

#[test]
fn a_junit_file_is_stored_with_its_failure() {
    let mut fixture = Fixture::new();
    let path = fixture.file("results.xml", JUNIT);
    let ingest = fixture.ingest(&path, &run("abc")).unwrap();
    assert_eq!((ingest.report.tests, ingest.report.red), (3, 1));
    assert_eq!(ingest.summary.executions, 3);
    let failures = fixture.store.run_failures(ingest.report.run_id).unwrap();
    assert_eq!(failures.len(), 1);
    let failed = &failures[0].execution;
    assert_eq!(failed.test_id, "tests/test_math.py::test_sub");
    assert_eq!(failed.outcome, Outcome::Fail);
    assert_eq!(failed.failure.as_ref().unwrap().message, "assert 1 == 2");
}

#[test]
fn a_file_cut_short_stores_nothing_and_names_the_line() {
    let mut fixture = Fixture::new();
    // Cut inside the third test case, after two were handed to the store.
    let cut = JUNIT.find(r#"name="test_mul""#).unwrap();
    let path = fixture.file("cut.xml", &JUNIT[..cut]);
    let error = fixture.ingest(&path, &run("abc")).unwrap_err();

    assert!(
        matches!(
            &error,
            IngestError::Parse {
                error: ParseError::Syntax { .. },
                ..
            }
        ),
        "{error:?}"
    );
    let Some(Position::LineColumn { line, .. }) = error.position() else {
        panic!("expected a line and column: {error:?}");
    };
    assert_eq!(line, 12, "where the file ends, inside the third test case");
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}:{line}:", path.display()))
    );
    fixture.assert_nothing_stored();
}

#[test]
fn a_store_refusing_an_execution_midway_stores_nothing() {
    let mut fixture = Fixture::new();
    // A real constraint of the real database refuses the second block of 256 test cases,
    // which the store writes once it is full: the first block is already written when it
    // happens, and 88 test cases are still to come.
    let raw = rusqlite::Connection::open(fixture.store.path()).unwrap();
    raw.execute_batch(
        "CREATE TRIGGER refuse_second_block BEFORE INSERT ON execution_blocks WHEN NEW.block = 1
         BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END;",
    )
    .unwrap();
    drop(raw);
    let cases = (0..600).fold(String::new(), |mut cases, n| {
        let _ = writeln!(
            cases,
            "<testcase classname=\"tests.test_many\" name=\"test_{n}\" time=\"0.001\"/>"
        );
        cases
    });
    let junit = format!(
        "<testsuites><testsuite name=\"s\" tests=\"600\">\n{cases}</testsuite></testsuites>\n"
    );
    let path = fixture.file("results.xml", junit);
    let error = fixture.ingest(&path, &run("abc")).unwrap_err();
    assert!(
        matches!(error, IngestError::Store(HistoryError::Database { .. })),
        "{error:?}"
    );
    fixture.assert_nothing_stored();
}

mod inputs {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "b/z.xml",
            "b/a.json",
            "a.xml",
            "c/d/e.log",
            ".hidden/x.xml",
            "b/.DS_Store",
        ] {
            let path = dir.path().join(file);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, "x").unwrap();
        }
        dir
    }

    fn relative(dir: &Path, files: &[PathBuf]) -> Vec<String> {
        files
            .iter()
            .map(|f| {
                f.strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect()
    }

    fn arg(path: &Path) -> String {
        path.to_str().unwrap().to_owned()
    }

    #[test]
    fn folders_are_walked_recursively_in_name_order_skipping_hidden_entries() {
        let dir = tree();
        let files = expand_inputs(&[arg(dir.path())]).unwrap();
        assert_eq!(
            relative(dir.path(), &files),
            vec!["a.xml", "b/a.json", "b/z.xml", "c/d/e.log"]
        );
    }

    #[test]
    fn files_are_taken_as_given_even_hidden_and_listed_once() {
        let dir = tree();
        let hidden = dir.path().join(".hidden/x.xml");
        let files = expand_inputs(&[arg(&hidden), arg(dir.path()), arg(&hidden)]).unwrap();
        assert_eq!(
            relative(dir.path(), &files),
            vec![".hidden/x.xml", "a.xml", "b/a.json", "b/z.xml", "c/d/e.log"]
        );
    }

    #[test]
    fn glob_patterns_expand_and_must_match() {
        let dir = tree();
        let files = expand_inputs(&[format!("{}/**/*.xml", arg(dir.path()))]).unwrap();
        assert_eq!(relative(dir.path(), &files), vec!["a.xml", "b/z.xml"]);

        let pattern = format!("{}/*.trx", arg(dir.path()));
        let error = expand_inputs(std::slice::from_ref(&pattern)).unwrap_err();
        assert!(
            matches!(&error, InputError::NoMatch { pattern: p } if *p == pattern),
            "{error:?}"
        );
        assert!(error.to_string().ends_with("matched no file"));
    }

    #[test]
    fn a_missing_path_and_a_broken_pattern_are_errors() {
        let dir = tree();
        let missing = arg(&dir.path().join("nope.xml"));
        assert!(matches!(
            expand_inputs(&[missing]).unwrap_err(),
            InputError::Missing { .. }
        ));
        let broken = format!("{}/[.xml", arg(dir.path()));
        assert!(matches!(
            expand_inputs(&[broken]).unwrap_err(),
            InputError::BadPattern { .. }
        ));
    }
}

#[test]
fn a_run_starts_when_its_file_says_it_did() {
    let mut fixture = Fixture::new();
    let stamped = JUNIT.replace(
        r#"<testsuite name="pytest""#,
        r#"<testsuite timestamp="2026-10-06T09:14:02" name="pytest""#,
    );
    let path = fixture.file("stamped.xml", stamped);
    let ingest = fixture.ingest(&path, &run("abc")).unwrap();
    let stored = fixture.store.run(ingest.report.run_id).unwrap().unwrap();
    assert_eq!(stored.run.started_at.to_string(), "2026-10-06T09:14:02Z");
    // Without a timestamp in the file, the caller's time stands.
    let path = fixture.file("plain.xml", JUNIT);
    let ingest = fixture.ingest(&path, &run("def")).unwrap();
    let stored = fixture.store.run(ingest.report.run_id).unwrap().unwrap();
    assert_eq!(stored.run.started_at, run("def").started_at);
}
