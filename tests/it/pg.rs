//! The PostgreSQL store through the CLI and under faults (issue #17): the same answers
//! as SQLite for the same files, one run per content however many jobs upload it at once,
//! clear exit-2 errors for a bad address, a refused connection, a statement timeout and a
//! missing privilege, and nothing half-stored when the server restarts or the connection
//! drops mid-ingest. Tests that need a server use `CANDOR_TEST_PG` (see `pg_support`);
//! the restart test starts a cluster of its own so that it disturbs no other test.

use crate::pg_support;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use candor::history::{
    Conditions, HistoryError, HistoryStore, NewRun, PgStore, RunContent, Source,
};
use candor::results::{Execution, Failure, Outcome};
use jiff::Timestamp;
use pg_support::Schema;

fn candor(dir: &Path, db: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_candor"))
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("TZ", "UTC")
        .env("CANDOR_DB", db)
        .stdin(Stdio::null())
        .output()
        .expect("run candor")
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A JUnit file of `tests` cases from `prefix`, every `fail_every`-th failing, written to
/// `dir/name`.
fn junit(dir: &Path, name: &str, prefix: &str, tests: usize, fail_every: usize) -> PathBuf {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites><testsuite name=\"pytest\" timestamp=\"2026-11-20T10:00:00\">\n",
    );
    for i in 0..tests {
        let _ = write!(
            xml,
            "<testcase classname=\"tests.test_{prefix}\" name=\"test_{i}\" file=\"tests/test_{prefix}.py\" line=\"{i}\" time=\"0.01\">"
        );
        if fail_every > 0 && i % fail_every == 0 {
            let _ = write!(
                xml,
                "<failure message=\"assert {i} == 0\">tests/test_{prefix}.py:{i}: AssertionError</failure>"
            );
        }
        xml.push_str("</testcase>\n");
    }
    xml.push_str("</testsuite></testsuites>\n");
    let path = dir.join(name);
    std::fs::write(&path, xml).unwrap();
    path
}

fn run_at(second: i64, job: &str) -> NewRun {
    NewRun {
        commit: Some("c0".into()),
        branch: Some("main".into()),
        merge_base: None,
        started_at: Timestamp::from_second(1_790_000_000 + second).unwrap(),
        source: Source::Ci,
        ci_provider: Some("github-actions".into()),
        job: Some(job.into()),
        ci_run: candor::history::CiRun::default(),
        workers: None,
        seed: None,
        conditions: Conditions {
            ci: true,
            runner: Some("pytest".into()),
            os: Some("linux".into()),
        },
        format: None,
        producer: None,
        source_path: None,
    }
}

fn content(key: &str) -> RunContent {
    RunContent {
        content_key: key.into(),
        format: Some("junit".into()),
        producer: None,
    }
}

fn failing(name: &str) -> Execution {
    let mut execution = Execution::new(name, Outcome::Fail);
    execution.failure = Some(Box::new(Failure {
        exception: Some("AssertionError".into()),
        message: "boom".into(),
        text: "Traceback\n  boom".into(),
        frames: Vec::new(),
        failing_frame: None,
    }));
    execution
}

#[test]
fn a_wrong_url_is_exit_2_naming_the_parameter_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = junit(dir.path(), "r.xml", "a", 3, 0);
    let ran = candor(
        dir.path(),
        "postgres://ci:secret@db.invalid/h?sslmode=sometimes",
        &["ingest", file.to_str().unwrap()],
    );
    let (_, err) = text(&ran);
    assert_eq!(ran.status.code(), Some(2), "{err}");
    assert!(err.contains("sslmode=sometimes is not one of"), "{err}");
    assert!(!err.contains("secret"), "the password is not shown: {err}");
    assert!(err.contains("hint: fix --db"), "{err}");
    assert!(
        !dir.path().join(".candor").exists(),
        "no SQLite file instead"
    );
}

#[test]
fn a_refused_connection_is_exit_2_with_what_to_check() {
    let dir = tempfile::tempdir().unwrap();
    // A port nobody listens on: taken, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ran = candor(
        dir.path(),
        &format!("postgres://ci@127.0.0.1:{port}/h?sslmode=disable"),
        &["tests"],
    );
    let (out, err) = text(&ran);
    assert_eq!(ran.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("could not connect"), "{err}");
    assert!(err.contains("refused"), "{err}");
    assert!(err.contains("hint: check the host and port"), "{err}");
}

/// #17 item 3: every command answers the same on either store.
#[test]
fn the_cli_answers_the_same_from_postgres_as_from_sqlite() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..3)
        .map(|n| junit(dir.path(), &format!("r{n}.xml"), "m", 40, 3 + n))
        .collect();
    let sqlite = dir.path().join("h.db").display().to_string();
    for db in [&sqlite, &schema.url] {
        for file in &files {
            let ran = candor(
                dir.path(),
                db,
                &[
                    "ingest",
                    "--job",
                    file.to_str().unwrap(),
                    file.to_str().unwrap(),
                ],
            );
            assert_eq!(ran.status.code(), Some(0), "{:?}", text(&ran));
        }
        let again = candor(
            dir.path(),
            db,
            &[
                "ingest",
                "--job",
                files[0].to_str().unwrap(),
                files[0].to_str().unwrap(),
            ],
        );
        assert!(
            text(&again).0.contains("already stored"),
            "{:?}",
            text(&again)
        );
    }
    for args in [
        vec!["tests"],
        vec!["tests", "--failing"],
        vec!["--format", "json", "tests"],
        vec!["show", "tests/test_m.py::test_3"],
        vec!["--format", "json", "show", "tests/test_m.py::test_0"],
        vec!["reliability"],
        vec!["triage"],
    ] {
        let on_sqlite = candor(dir.path(), &sqlite, &args);
        let on_pg = candor(dir.path(), &schema.url, &args);
        // `triage` ends 1 for the regressions it finds; never 2 here.
        assert!(
            matches!(on_sqlite.status.code(), Some(0 | 1)),
            "{args:?}: {:?}",
            text(&on_sqlite)
        );
        assert_eq!(on_sqlite.status.code(), on_pg.status.code(), "{args:?}");
        assert_eq!(text(&on_sqlite), text(&on_pg), "{args:?}");
    }
}

/// #17 item 2: the same upload from many jobs at once is one run; distinct uploads are
/// one run each.
#[test]
fn concurrent_ingests_store_each_run_exactly_once() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let url = schema.url.clone();
    let workers: Vec<_> = (0..8)
        .map(|n| {
            let url = url.clone();
            std::thread::spawn(move || {
                let env = |name: &str| std::env::var(name).ok();
                let target = candor::history::pg::Target::parse(&url, &env).unwrap();
                let mut store = PgStore::open(&target).unwrap();
                // Jobs 0..4 upload the same content; 4..8 their own. All share test names.
                let key = if n < 4 {
                    "same".to_owned()
                } else {
                    format!("own-{n}")
                };
                let mut session = store.begin_ingest(&run_at(n, "unit")).unwrap();
                for i in 0..3000 {
                    let name = format!("shared::test_{i}");
                    session
                        .add(if i % 7 == n as usize {
                            failing(&name)
                        } else {
                            Execution::new(name, Outcome::Pass)
                        })
                        .unwrap();
                }
                session.commit(&content(&key)).unwrap()
            })
        })
        .collect();
    let reports: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    assert_eq!(reports.iter().filter(|r| r.added).count(), 5, "{reports:?}");
    let same: Vec<i64> = reports[..4].iter().map(|r| r.run_id).collect();
    assert!(same.iter().all(|id| *id == same[0]), "{same:?}");
    let store = schema.open();
    assert_eq!(store.runs(100).unwrap().len(), 5);
    let tests = store.tests(false).unwrap();
    assert_eq!(tests.len(), 3000, "each name stored once");
    assert!(
        tests.iter().all(|t| t.runs == 5),
        "every run holds every test once"
    );
}

/// Test names the name index lists, its base rows and its deltas, each entry 12 bytes
/// (hash, id).
fn index_entries(schema: &Schema) -> i64 {
    schema
        .client()
        .query_one(
            "SELECT (SELECT coalesce(sum(length(entries) / 12), 0) FROM test_name_index) \
             + (SELECT coalesce(sum(length(entries) / 12), 0) FROM test_name_delta)",
            &[],
        )
        .unwrap()
        .get(0)
}

/// The name index's shape: (base entries, delta rows, delta entries), and each base
/// row's key with the transaction that wrote it (which a rewrite changes).
fn index_shape(schema: &Schema) -> ((i64, i64, i64), Vec<(i64, String)>) {
    let mut client = schema.client();
    let counts = client
        .query_one(
            "SELECT (SELECT coalesce(sum(length(entries) / 12), 0)::bigint FROM test_name_index), \
             (SELECT count(*) FROM test_name_delta), \
             (SELECT coalesce(sum(length(entries) / 12), 0)::bigint FROM test_name_delta)",
            &[],
        )
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .unwrap();
    let rows = client
        .query(
            "SELECT first_hash, xmin::text FROM test_name_index ORDER BY first_hash",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    (counts, rows)
}

/// Stores one run of `new` new names (`prefix::test_i`) and every name of `known`,
/// each passing; returns the names it added.
fn ingest_names(
    schema: &Schema,
    at: i64,
    prefix: &str,
    new: usize,
    known: &[String],
) -> Vec<String> {
    let added: Vec<String> = (0..new).map(|i| format!("{prefix}::test_{i}")).collect();
    let mut store = schema.open();
    let mut session = store.begin_ingest(&run_at(at, prefix)).unwrap();
    for name in known.iter().chain(&added) {
        session
            .add(Execution::new(name.clone(), Outcome::Pass))
            .unwrap();
    }
    assert!(session.commit(&content(prefix)).unwrap().added);
    added
}

/// #17 pgconc2 (the first upload): a job adding fewer names than the index holds appends
/// them as one delta row and rewrites no base row (so jobs adding names at once no longer
/// rewrite the whole index one after another); every question and the next ingest see
/// base and deltas, each name once; the job whose delta would make the deltas outgrow
/// the base merges them all into it and deletes them.
#[test]
fn new_names_are_appended_as_deltas_and_merged_once_they_outgrow_the_base() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let mut all = ingest_names(&schema, 0, "base", 2000, &[]);
    let ((base, deltas, _), rows) = index_shape(&schema);
    assert_eq!((base, deltas), (2000, 0), "the first names make the base");

    let first = ingest_names(&schema, 1, "first", 600, &all[..100]);
    let second = ingest_names(&schema, 2, "second", 600, &first[..50]);
    let (counts, rows_after) = index_shape(&schema);
    assert_eq!(counts, (2000, 2, 1200), "each job's names in a delta row");
    assert_eq!(rows_after, rows, "no base row rewritten");
    all.extend(first.iter().cloned());
    all.extend(second.iter().cloned());

    // Every name found through base or delta: listed once, each execution in place.
    let store = schema.open();
    let tests = store.tests(false).unwrap();
    assert_eq!(tests.len(), 3200, "each name listed once");
    for (name, runs) in [
        (&all[0], 2),
        (&all[150], 1),
        (&first[10], 2),
        (&second[599], 1),
    ] {
        assert_eq!(store.executions(name, 10).unwrap().len(), runs, "{name}");
    }
    drop(store);
    // A run of every known name adds none.
    ingest_names(&schema, 3, "known", 0, &all);
    let (counts, rows_after) = index_shape(&schema);
    assert_eq!(counts, (2000, 2, 1200), "known names add nothing");
    assert_eq!(rows_after, rows);
    let tests = schema.open().tests(false).unwrap();
    assert_eq!(tests.len(), 3200);

    // 1,200 in deltas and 1,000 more would outgrow the 2,000 of the base: merged.
    let third = ingest_names(&schema, 4, "third", 1000, &second[..10]);
    all.extend(third.iter().cloned());
    let (counts, _) = index_shape(&schema);
    assert_eq!(
        counts,
        (4200, 0, 0),
        "deltas merged into the base and deleted"
    );
    assert_eq!(index_entries(&schema), 4200, "each name indexed once");
    let store = schema.open();
    let tests = store.tests(false).unwrap();
    assert_eq!(tests.len(), 4200, "each name listed once");
    for (name, runs) in [
        (&all[0], 3),
        (&first[599], 2),
        (&second[5], 3),
        (&third[999], 1),
    ] {
        assert_eq!(store.executions(name, 10).unwrap().len(), runs, "{name}");
    }
    drop(store);
    // And the next run of all of them adds none.
    ingest_names(&schema, 5, "again", 0, &all);
    assert_eq!(index_shape(&schema).0, (4200, 0, 0));
    let tests = schema.open().tests(false).unwrap();
    assert_eq!(tests.len(), 4200);
}

/// #17 pgnames item 3: an ingest that found names missing, while another ingest added
/// some of them and committed first, looks again under the names lock at its commit and
/// stores each name once: every test listed once, the shared ones with both runs.
#[test]
fn new_names_another_ingest_is_adding_are_stored_once() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    drop(schema.open());
    let names: Vec<String> = (0..50).map(|i| format!("racing::test_{i}")).collect();
    let mut late_store = schema.open();
    let mut late = late_store.begin_ingest(&run_at(0, "late")).unwrap();
    for name in &names {
        late.add(Execution::new(name.clone(), Outcome::Pass))
            .unwrap();
    }
    // Another job adds every second name (and one of its own) and commits first.
    let mut early_store = schema.open();
    let mut early = early_store.begin_ingest(&run_at(1, "early")).unwrap();
    for name in names.iter().step_by(2) {
        early
            .add(Execution::new(name.clone(), Outcome::Fail))
            .unwrap();
    }
    early
        .add(Execution::new("racing::only_early", Outcome::Pass))
        .unwrap();
    assert!(early.commit(&content("early")).unwrap().added);
    let report = late.commit(&content("late")).unwrap();
    drop(late_store);
    assert!(report.added, "{report:?}");
    assert_eq!(report.tests, 50);
    assert_eq!(index_entries(&schema), 51, "each name indexed once");
    let tests = schema.open().tests(false).unwrap();
    let mut listed: Vec<&str> = tests.iter().map(|t| t.test_id.as_str()).collect();
    listed.sort_unstable();
    let mut expected: Vec<&str> = names.iter().map(String::as_str).collect();
    expected.push("racing::only_early");
    expected.sort_unstable();
    assert_eq!(listed, expected, "each name stored once");
    for (i, name) in names.iter().enumerate() {
        let test = tests.iter().find(|t| &t.test_id == name).unwrap();
        let (runs, failures) = if i % 2 == 0 { (2, 1) } else { (1, 0) };
        assert_eq!((test.runs, test.failures), (runs, failures), "{name}");
    }
}

/// #17 pgnames item 3: new names are added under an advisory lock of their own, taken
/// only by an ingest that has new names: while another transaction holds it, an ingest
/// of known tests stores its run (a `lock_timeout` would fail it if it waited), and an
/// ingest with a new test waits until the lock is released, then stores it once.
#[test]
fn only_an_ingest_with_new_names_takes_the_names_lock() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    {
        let mut store = schema.open();
        let mut session = store.begin_ingest(&run_at(0, "first")).unwrap();
        for i in 0..300 {
            session
                .add(Execution::new(format!("known::test_{i}"), Outcome::Pass))
                .unwrap();
        }
        session.commit(&content("first")).unwrap();
    }
    let mut holder = schema.client();
    let mut held = holder.transaction().unwrap();
    held.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || ' names'))",
        &[&0x6361_6e64_i32],
    )
    .unwrap();
    let env = |name: &str| std::env::var(name).ok();
    let impatient = format!("{}%20-clock_timeout%3D10s", schema.url);
    let mut known =
        PgStore::open(&candor::history::pg::Target::parse(&impatient, &env).unwrap()).unwrap();
    let mut session = known.begin_ingest(&run_at(1, "known")).unwrap();
    for i in (0..300).rev() {
        session
            .add(Execution::new(format!("known::test_{i}"), Outcome::Fail))
            .unwrap();
    }
    let report = session.commit(&content("known")).unwrap();
    assert!(report.added && report.tests == 300, "{report:?}");
    let app = format!("{}_waiter", schema.name);
    let url = format!("{}&application_name={app}", schema.url);
    let worker = std::thread::spawn(move || {
        let target = candor::history::pg::Target::parse(&url, &env).unwrap();
        let mut store = PgStore::open(&target).unwrap();
        let mut session = store.begin_ingest(&run_at(2, "new")).unwrap();
        session
            .add(Execution::new("known::test_7", Outcome::Pass))
            .unwrap();
        session
            .add(Execution::new("brand::new", Outcome::Pass))
            .unwrap();
        session.commit(&content("new")).unwrap()
    });
    assert!(
        pg_support::reaches_wait(&schema.url, &app, "advisory", || worker.is_finished()),
        "the ingest of a new name ended without waiting for the names lock"
    );
    held.commit().unwrap();
    let report = worker.join().unwrap();
    assert!(report.added && report.tests == 2, "{report:?}");
    assert_eq!(index_entries(&schema), 301);
    let tests = schema.open().tests(false).unwrap();
    assert_eq!(tests.len(), 301);
    let seven = tests.iter().find(|t| t.test_id == "known::test_7").unwrap();
    assert_eq!((seven.runs, seven.failures), (3, 1));
}

/// #17 pgconc item 1: an ingest's new names are committed in a short transaction of
/// their own, so the names lock is not held while its run is stored. A run whose insert
/// waits (here behind another transaction's uncommitted run of the same content) holds
/// no lock that another ingest of new names waits for (a `lock_timeout` would fail it if
/// it did); the waiting run's names, committed without it, are listed by no question
/// until its run is stored, then stored once.
#[test]
fn an_ingest_storing_its_run_holds_no_names_lock() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    drop(schema.open());
    let mut holder = schema.client();
    let mut held = holder.transaction().unwrap();
    held.execute(
        "INSERT INTO runs (content_key, started_us, source, ci, executions, red) \
         VALUES ('waiting', 0, 'ci', true, 0, 0)",
        &[],
    )
    .unwrap();
    let app = format!("{}_waiting", schema.name);
    let url = format!("{}&application_name={app}", schema.url);
    let env = |name: &str| std::env::var(name).ok();
    let worker = std::thread::spawn(move || {
        let target = candor::history::pg::Target::parse(&url, &env).unwrap();
        let mut store = PgStore::open(&target).unwrap();
        let mut session = store.begin_ingest(&run_at(0, "waiting")).unwrap();
        for i in 0..600 {
            session
                .add(Execution::new(format!("waiting::test_{i}"), Outcome::Pass))
                .unwrap();
        }
        session.commit(&content("waiting"))
    });
    // Until the server reports the ingest's run insert waiting for the held row.
    assert!(
        pg_support::reaches_wait(&schema.url, &app, "transactionid", || worker.is_finished()),
        "the ingest ended without waiting for the held run: {:?}",
        worker.join()
    );
    assert_eq!(index_entries(&schema), 600, "its names are committed");
    let store = schema.open();
    assert!(store.tests(false).unwrap().is_empty(), "and listed nowhere");
    assert!(store.executions("waiting::test_0", 10).unwrap().is_empty());
    let mut windows = 0;
    store.windows_in(10, None, &mut |_| windows += 1).unwrap();
    assert_eq!(windows, 0);
    drop(store);
    let impatient = format!("{}%20-clock_timeout%3D10s", schema.url);
    let mut other =
        PgStore::open(&candor::history::pg::Target::parse(&impatient, &env).unwrap()).unwrap();
    let mut session = other.begin_ingest(&run_at(1, "other")).unwrap();
    for i in 0..300 {
        session
            .add(Execution::new(format!("other::test_{i}"), Outcome::Fail))
            .unwrap();
    }
    session
        .add(Execution::new("waiting::test_0", Outcome::Fail))
        .unwrap();
    let report = session.commit(&content("other")).unwrap();
    assert!(report.added && report.tests == 301, "{report:?}");
    held.rollback().unwrap();
    let report = worker.join().unwrap().unwrap();
    assert!(report.added && report.tests == 600, "{report:?}");
    assert_eq!(index_entries(&schema), 900, "each name indexed once");
    let tests = schema.open().tests(false).unwrap();
    assert_eq!(tests.len(), 900);
    let shared = tests
        .iter()
        .find(|t| t.test_id == "waiting::test_0")
        .unwrap();
    assert_eq!((shared.runs, shared.failures), (2, 1));
}

/// #17 pgconc item 1: a run whose names were committed but whose own transaction then
/// failed (a statement timeout on its insert) is still all-or-nothing: no run, no test
/// listed, no execution shown; the retried upload finds its names there and stores the
/// run with each name once.
#[test]
fn a_run_failing_after_its_names_committed_stores_nothing_and_its_retry_each_name_once() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ran = ingest_while_runs_is_locked(&schema, dir.path());
    let (out, err) = text(&ran);
    assert_eq!(ran.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("statement timeout"), "{err}");
    assert_eq!(index_entries(&schema), 50, "the names were committed first");
    let store = schema.open();
    assert!(store.runs(10).unwrap().is_empty());
    assert!(store.tests(false).unwrap().is_empty());
    assert!(
        store
            .executions("tests/test_a.py::test_0", 10)
            .unwrap()
            .is_empty()
    );
    drop(store);
    let listed = candor(dir.path(), &schema.url, &["tests"]);
    assert_eq!(listed.status.code(), Some(0), "{:?}", text(&listed));
    assert!(!text(&listed).0.contains("test_a"), "{:?}", text(&listed));

    let file = dir.path().join("r.xml");
    let again = candor(dir.path(), &schema.url, &["ingest", file.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(0), "{:?}", text(&again));
    assert_eq!(index_entries(&schema), 50, "each name indexed once");
    let store = schema.open();
    assert_eq!(store.runs(10).unwrap().len(), 1);
    let tests = store.tests(false).unwrap();
    assert_eq!(tests.len(), 50);
    assert_eq!(tests.iter().map(|t| t.failures).sum::<u64>(), 10);
}

/// #17 item 7: a dropped connection in the middle of the `COPY` stores nothing.
#[test]
fn a_connection_dropped_during_copy_stores_nothing() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let app = format!("{}_victim", schema.name);
    let url = format!("{}&application_name={app}", schema.url);
    let env = |name: &str| std::env::var(name).ok();
    let mut store =
        PgStore::open(&candor::history::pg::Target::parse(&url, &env).unwrap()).unwrap();
    let mut session = store.begin_ingest(&run_at(0, "unit")).unwrap();
    for i in 0..10_000 {
        session
            .add(Execution::new(format!("t{i}"), Outcome::Pass))
            .unwrap();
    }
    let killed: i64 = pg_support::admin(&schema.url)
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
            &[&app],
        )
        .unwrap()
        .get(0);
    assert_eq!(killed, 1);
    let mut failed = None;
    for i in 10_000..20_000 {
        if let Err(error) = session.add(Execution::new(format!("t{i}"), Outcome::Pass)) {
            failed = Some(error);
            break;
        }
    }
    let error = match failed {
        Some(error) => {
            drop(session);
            error
        }
        None => session.commit(&content("k")).expect_err("the commit fails"),
    };
    assert!(matches!(error, HistoryError::Server { .. }), "{error:?}");
    let hint = candor::cli::error::history_hint(&error).unwrap();
    assert!(hint.contains("nothing"), "{error}: {hint}");
    let store = schema.open();
    assert!(store.runs(10).unwrap().is_empty());
    assert!(store.tests(false).unwrap().is_empty());
}

/// `candor ingest` of a 50-test file with a 300 ms `statement_timeout` while another
/// session holds `runs` locked: the open and the names need no lock on `runs`, the run's
/// insert waits for it and times out.
fn ingest_while_runs_is_locked(schema: &Schema, dir: &Path) -> Output {
    let file = junit(dir, "r.xml", "a", 50, 5);
    drop(schema.open()); // the schema exists before the lock is taken
    let mut holder = schema.client();
    let mut lock = holder.transaction().unwrap();
    lock.batch_execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let url = format!(
        "{}&options=-csearch_path%3D{}%20-cstatement_timeout%3D300",
        pg_support::server().unwrap(),
        schema.name
    );
    let ran = candor(dir, &url, &["ingest", file.to_str().unwrap()]);
    lock.rollback().unwrap();
    ran
}

/// #17 item 7: a statement timeout is exit 2 with the next step, and stores nothing.
#[test]
fn a_statement_timeout_is_exit_2_and_stores_nothing() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ran = ingest_while_runs_is_locked(&schema, dir.path());
    let (out, err) = text(&ran);
    assert_eq!(ran.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("statement timeout"), "{err}");
    assert!(err.contains("statement_timeout"), "the hint: {err}");
    assert!(schema.open().runs(10).unwrap().is_empty());
}

/// #17 item 5: a read-only role reads; its ingest fails naming the missing privilege.
#[test]
fn a_read_only_role_reads_and_its_ingest_names_the_missing_privilege() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = junit(dir.path(), "r.xml", "a", 20, 4);
    let ran = candor(dir.path(), &schema.url, &["ingest", file.to_str().unwrap()]);
    assert_eq!(ran.status.code(), Some(0), "{:?}", text(&ran));
    let role = format!("{}_ro", schema.name);
    let mut admin = schema.client();
    admin
        .batch_execute(&format!(
            "CREATE ROLE {role} LOGIN; GRANT USAGE ON SCHEMA {s} TO {role}; \
             GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {role};",
            s = schema.name
        ))
        .unwrap();
    let server = pg_support::server().unwrap();
    let url = pg_support::in_schema(
        &server.replace("user=candor", &format!("user={role}")),
        &schema.name,
    );
    let read = candor(dir.path(), &url, &["tests", "--failing"]);
    // New names are written first (their own transaction), a run of known tests has
    // only its run to write.
    let other = junit(dir.path(), "s.xml", "b", 5, 0);
    let write = candor(dir.path(), &url, &["ingest", other.to_str().unwrap()]);
    let known = junit(dir.path(), "t.xml", "a", 20, 3);
    let write_known = candor(dir.path(), &url, &["ingest", known.to_str().unwrap()]);
    admin
        .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role};"))
        .unwrap();
    assert_eq!(read.status.code(), Some(0), "{:?}", text(&read));
    assert!(
        text(&read).0.contains("tests/test_a.py::test_0"),
        "{:?}",
        text(&read)
    );
    let (out, err) = text(&write);
    assert_eq!(write.status.code(), Some(2), "{out}{err}");
    assert!(
        err.contains("permission denied for table test_names"),
        "{err}"
    );
    assert!(err.contains("lacks a privilege"), "{err}");
    let (out, err) = text(&write_known);
    assert_eq!(write_known.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("permission denied for table runs"), "{err}");
    assert!(err.contains("lacks a privilege"), "{err}");
    assert_eq!(schema.open().runs(10).unwrap().len(), 1);
    assert_eq!(index_entries(&schema), 20);
}

/// #17 pgconc item 1: a writer role that does not own the tables, with the grants
/// docs/postgres.md (Roles) lists and no more, stores a run of new names (its names
/// transaction, then its run's), a run whose few new names go to a delta row (pgconc2),
/// a run too large to hold (the names lock taken while it
/// is read, full blocks sent to its temporary table) and a run of known names.
#[test]
fn a_writer_role_with_the_documented_grants_stores_every_kind_of_run() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    {
        let mut store = schema.open();
        let mut session = store.begin_ingest(&run_at(0, "owner")).unwrap();
        session
            .add(Execution::new("owner::test", Outcome::Pass))
            .unwrap();
        session.commit(&content("owner")).unwrap();
    }
    let role = format!("{}_w", schema.name);
    let mut admin = schema.client();
    admin
        .batch_execute(&format!(
            "CREATE ROLE {role} LOGIN; GRANT USAGE ON SCHEMA {s} TO {role}; \
             GRANT SELECT ON {s}.candor_schema TO {role}; \
             GRANT SELECT, INSERT ON {s}.runs, {s}.execution_blocks, {s}.candor_partitions \
             TO {role}; \
             GRANT SELECT, INSERT, UPDATE ON {s}.test_names, {s}.test_name_index TO {role}; \
             GRANT SELECT, INSERT, DELETE ON {s}.test_name_delta TO {role}; \
             GRANT USAGE ON SEQUENCE {s}.runs_id_seq TO {role};",
            s = schema.name
        ))
        .unwrap();
    let server = pg_support::server().unwrap();
    let url = pg_support::in_schema(
        &server.replace("user=candor", &format!("user={role}")),
        &schema.name,
    );
    let seed: u64 = 0x17_c0c0;
    let stored = std::panic::catch_unwind(|| {
        let env = |name: &str| std::env::var(name).ok();
        let mut store =
            PgStore::open(&candor::history::pg::Target::parse(&url, &env).unwrap()).unwrap();
        let mut reports = Vec::new();
        let mut small = store.begin_ingest(&run_at(1, "small")).unwrap();
        small
            .add(Execution::new("owner::test", Outcome::Fail))
            .unwrap();
        for i in 0..300 {
            small
                .add(Execution::new(format!("writer::test_{i}"), Outcome::Pass))
                .unwrap();
        }
        reports.push(small.commit(&content("small")).unwrap());
        // Fewer new names than the index holds: appended as a delta row (`INSERT`).
        let mut few = store.begin_ingest(&run_at(4, "few")).unwrap();
        for i in 0..100 {
            few.add(Execution::new(format!("writer::few_{i}"), Outcome::Pass))
                .unwrap();
        }
        reports.push(few.commit(&content("few")).unwrap());
        // About 13 MB of failure details that compress by half: past what waits for the
        // commit and what is held of full blocks; its names outgrow the base, so the
        // delta is merged into it (`DELETE` of the delta).
        let mut state = seed;
        let mut large = store.begin_ingest(&run_at(2, "large")).unwrap();
        for i in 0..40_000 {
            let name = format!("writer/large.py::test_{i:05}");
            let execution = if i % 2 == 0 {
                let mut execution = failing(&name);
                if let Some(failure) = &mut execution.failure {
                    failure.text = noise(&mut state, 650);
                }
                execution
            } else {
                Execution::new(name, Outcome::Pass)
            };
            large.add(execution).unwrap();
        }
        reports.push(large.commit(&content("large")).unwrap());
        let mut known = store.begin_ingest(&run_at(3, "known")).unwrap();
        for i in 0..300 {
            known
                .add(Execution::new(format!("writer::test_{i}"), Outcome::Fail))
                .unwrap();
        }
        reports.push(known.commit(&content("known")).unwrap());
        reports
    });
    admin
        .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role};"))
        .unwrap();
    let reports = stored.unwrap_or_else(|_| panic!("seed {seed:#x}"));
    let counts: Vec<(bool, u64, u64)> = reports.iter().map(|r| (r.added, r.tests, r.red)).collect();
    assert_eq!(
        counts,
        [
            (true, 301, 1),
            (true, 100, 0),
            (true, 40_000, 20_000),
            (true, 300, 300)
        ],
        "seed {seed:#x}"
    );
    assert_eq!(index_entries(&schema), 1 + 300 + 100 + 40_000);
    let deltas: i64 = schema
        .client()
        .query_one("SELECT count(*) FROM test_name_delta", &[])
        .unwrap()
        .get(0);
    assert_eq!(deltas, 0, "the delta merged into the base");
    let tests = schema.open().tests(false).unwrap();
    assert_eq!(tests.len(), 1 + 300 + 100 + 40_000);
}

/// A PostgreSQL cluster of the test's own (`.ci/pg-cluster`), stopped when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    url: String,
}

fn cluster_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/pg-cluster")
}

impl Cluster {
    fn start() -> Cluster {
        Cluster::start_as("start")
    }

    fn start_as(how: &str) -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("cpg")
            .tempdir_in("/tmp")
            .unwrap();
        let out = Command::new("bash")
            .arg(cluster_script())
            .arg(how)
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        Cluster { dir, url }
    }

    fn ctl(&self, what: &str) {
        let out = Command::new("bash")
            .arg(cluster_script())
            .arg(what)
            .arg(self.dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(cluster_script())
            .arg("stop")
            .arg(self.dir.path())
            .output();
    }
}

/// #17 item 7: the server restarts while a run is being copied in; the ingest fails, and
/// afterwards the history holds the runs before it and nothing of it.
#[test]
fn a_server_restarted_mid_ingest_leaves_no_partial_run() {
    if pg_support::server().is_none() {
        return;
    }
    let cluster = Cluster::start();
    let env = |name: &str| std::env::var(name).ok();
    let target = candor::history::pg::Target::parse(&cluster.url, &env).unwrap();
    let mut store = PgStore::open(&target).unwrap();
    {
        let mut before = store.begin_ingest(&run_at(0, "unit")).unwrap();
        before.add(failing("kept")).unwrap();
        assert!(before.commit(&content("before")).unwrap().added);
    }
    let mut session = store.begin_ingest(&run_at(1, "unit")).unwrap();
    // More than two COPY batches reach the server before the restart.
    for i in 0..20_000 {
        session
            .add(Execution::new(format!("half::t{i}"), Outcome::Pass))
            .unwrap();
    }
    cluster.ctl("restart");
    let mut failed = None;
    for i in 20_000..40_000 {
        if let Err(error) = session.add(Execution::new(format!("half::t{i}"), Outcome::Pass)) {
            failed = Some(error);
            break;
        }
    }
    let error = match failed {
        Some(error) => {
            drop(session);
            error
        }
        None => session
            .commit(&content("during"))
            .expect_err("the commit fails"),
    };
    assert!(matches!(error, HistoryError::Server { .. }), "{error:?}");
    drop(store);

    let store = PgStore::open(&target).unwrap();
    let runs = store.runs(10).unwrap();
    assert_eq!(runs.len(), 1, "only the run before the restart");
    assert_eq!(runs[0].content_key, "before");
    let tests = store.tests(false).unwrap();
    assert_eq!(
        tests.len(),
        1,
        "no test of the interrupted run: {:?}",
        &tests[..tests.len().min(3)]
    );
    assert!(store.executions("half::t0", 10).unwrap().is_empty());
}

/// #17 item 4: SQLite → PostgreSQL → SQLite, counts equal; again adds nothing; a target
/// holding part of the runs (an interrupted copy) gets only the rest.
#[test]
fn history_copy_moves_every_run_both_ways_idempotently_and_resumes() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("a.db").display().to_string();
    let back = dir.path().join("b.db").display().to_string();
    let files: Vec<PathBuf> = (0..3)
        .map(|n| junit(dir.path(), &format!("r{n}.xml"), &format!("m{n}"), 30, 4))
        .collect();
    for file in &files {
        let ran = candor(dir.path(), &sqlite, &["ingest", file.to_str().unwrap()]);
        assert_eq!(ran.status.code(), Some(0), "{:?}", text(&ran));
    }
    // Part of it is there already, as after an interrupted copy.
    let ran = candor(
        dir.path(),
        &schema.url,
        &["ingest", files[1].to_str().unwrap()],
    );
    assert_eq!(ran.status.code(), Some(0), "{:?}", text(&ran));

    let copy = |from: &str, to: &str| {
        let ran = candor(
            dir.path(),
            "unused.db",
            &[
                "--format", "json", "history", "copy", "--from", from, "--to", to,
            ],
        );
        assert_eq!(ran.status.code(), Some(0), "{:?}", text(&ran));
        let line: serde_json::Value = serde_json::from_str(text(&ran).0.trim()).unwrap();
        line
    };
    let first = copy(&sqlite, &schema.url);
    assert_eq!(first["copied_runs"], 2, "{first}");
    assert_eq!(first["skipped_runs"], 1, "{first}");
    assert_eq!(first["from_runs"], first["to_runs"], "{first}");
    assert_eq!(first["from_executions"], 90, "{first}");
    assert_eq!(first["from_executions"], first["to_executions"], "{first}");
    let again = copy(&sqlite, &schema.url);
    assert_eq!(
        (
            again["copied_runs"].as_u64(),
            again["skipped_runs"].as_u64()
        ),
        (Some(0), Some(3)),
        "{again}"
    );
    let home = copy(&schema.url, &back);
    assert_eq!(home["copied_runs"], 3, "{home}");
    assert_eq!(home["to_executions"], 90, "{home}");
    for args in [vec!["tests"], vec!["show", "tests/test_m2.py::test_4"]] {
        let a = text(&candor(dir.path(), &sqlite, &args));
        assert_eq!(a, text(&candor(dir.path(), &schema.url, &args)), "{args:?}");
        assert_eq!(a, text(&candor(dir.path(), &back, &args)), "{args:?}");
    }
}

/// #17 item 2: retention drops whole monthly partitions and the runs in them; recent
/// months stay; a bad age and a SQLite history are exit 2.
#[test]
fn prune_drops_whole_months_and_keeps_recent_ones() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let mut store = schema.open();
    let old_start = Timestamp::from_second(1_600_000_000).unwrap(); // 2020-09
    let starts = [
        old_start,
        Timestamp::from_second(1_603_000_000).unwrap(), // 2020-10
        Timestamp::now(),
    ];
    for (n, start) in starts.iter().enumerate() {
        let mut run = run_at(0, "unit");
        run.started_at = *start;
        let mut session = store.begin_ingest(&run).unwrap();
        session.add(failing(&format!("t{n}"))).unwrap();
        session
            .add(Execution::new("always", Outcome::Pass))
            .unwrap();
        session.commit(&content(&format!("k{n}"))).unwrap();
    }
    drop(store);
    let dir = tempfile::tempdir().unwrap();
    let bad = candor(
        dir.path(),
        &schema.url,
        &["history", "prune", "--older-than", "soon"],
    );
    assert_eq!(bad.status.code(), Some(2), "{:?}", text(&bad));
    assert!(
        text(&bad).1.contains("--older-than soon"),
        "{:?}",
        text(&bad)
    );
    let on_sqlite = candor(
        dir.path(),
        "h.db",
        &["history", "prune", "--older-than", "180d"],
    );
    assert_eq!(on_sqlite.status.code(), Some(2), "{:?}", text(&on_sqlite));

    assert_eq!(old_months(&schema), 2, "each old month has its table");
    let ran = candor(
        dir.path(),
        &schema.url,
        &["history", "prune", "--older-than", "180d"],
    );
    let (out, err) = text(&ran);
    assert_eq!(ran.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("dropped 2 monthly partitions"), "{out}");
    let store = schema.open();
    let runs = store.runs(10).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].content_key, "k2");
    let names: Vec<String> = store
        .tests(false)
        .unwrap()
        .into_iter()
        .map(|t| t.test_id)
        .collect();
    assert_eq!(names, vec!["always", "t2"]);
    assert_eq!(old_months(&schema), 0, "the old months' tables are gone");
    let again = candor(
        dir.path(),
        &schema.url,
        &["history", "prune", "--older-than", "180d"],
    );
    assert!(
        text(&again).0.contains("nothing to drop"),
        "{:?}",
        text(&again)
    );
}

/// How many month tables of 2020 the schema holds.
fn old_months(schema: &Schema) -> i64 {
    schema
        .client()
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = $1 \
             AND tablename LIKE 'execution\\_blocks\\_2020%'",
            &[&schema.name],
        )
        .unwrap()
        .get(0)
}

/// #17 item 1: TLS through rustls, by `sslmode`: `require` encrypts without checking,
/// `verify-ca` checks the chain, `verify-full` the chain and the host name; a failed
/// check is exit 2 naming the certificate.
#[test]
fn tls_connects_and_checks_the_certificate_as_sslmode_says() {
    if pg_support::server().is_none() {
        return;
    }
    let cluster = Cluster::start_as("start-tls");
    let ca = cluster.dir.path().join("ca.pem");
    let ca = ca.to_str().unwrap();
    let by_ip = cluster.url.replace("localhost", "127.0.0.1");
    let dir = tempfile::tempdir().unwrap();
    let file = junit(dir.path(), "r.xml", "a", 5, 2);
    // The server takes TCP connections over TLS only (hostssl), so a connection that
    // succeeds was encrypted.
    let cases = [
        (
            format!("{by_ip}?sslmode=disable"),
            false,
            "no pg_hba.conf entry",
        ),
        (format!("{by_ip}?sslmode=require"), true, ""),
        (
            format!("{}?sslmode=verify-full&sslrootcert={ca}", cluster.url),
            true,
            "",
        ),
        (
            format!("{by_ip}?sslmode=verify-ca&sslrootcert={ca}"),
            true,
            "",
        ),
        (
            format!("{by_ip}?sslmode=verify-full&sslrootcert={ca}"),
            false,
            "not valid for name",
        ),
        (
            format!("{}?sslmode=verify-full", cluster.url),
            false,
            "UnknownIssuer",
        ),
    ];
    for (url, connects, why) in &cases {
        let ran = candor(dir.path(), url, &["ingest", file.to_str().unwrap()]);
        let (out, err) = text(&ran);
        if *connects {
            assert_eq!(ran.status.code(), Some(0), "{url}: {out}{err}");
        } else {
            assert_eq!(ran.status.code(), Some(2), "{url}: {out}{err}");
            assert!(err.contains(why), "{url}: {err}");
            if *why != "no pg_hba.conf entry" {
                assert!(
                    err.contains("hint: check sslmode and sslrootcert"),
                    "{url}: {err}"
                );
            }
        }
    }
}

/// Text of `len` hex digits from a seeded generator: details LZ4 cannot shrink much.
fn noise(state: &mut u64, len: usize) -> String {
    let mut text = String::with_capacity(len);
    while text.len() < len {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let _ = write!(text, "{:016x}", *state >> 1);
    }
    text.truncate(len);
    text
}

/// #17 pgnames item 5 (memory bound): a run larger than what an ingest holds (here about
/// 16 MB of incompressible failure details over 40,000 new tests) takes the names lock
/// before its commit instead of holding every new test's execution, sends full blocks to
/// its temporary table and takes them out again when a retry of one of their tests comes
/// last; every execution reads back as the SQLite store keeps the same run.
#[test]
fn a_run_larger_than_an_ingest_holds_is_stored_as_sqlite_stores_it() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let seed: u64 = 0x17_5eed;
    println!("seed {seed:#x}");
    let mut state = seed;
    let mut executions = Vec::new();
    for i in 0..40_000 {
        let name = format!("tests/big/test_m{}.py::test_{i:05}", i % 97);
        let mut execution = if i % 3 == 0 {
            let mut execution = failing(&name);
            if let Some(failure) = &mut execution.failure {
                failure.text = noise(&mut state, 400);
            }
            execution
        } else {
            Execution::new(name, Outcome::Pass)
        };
        execution.duration = Some(f64::from(i % 1000) / 1000.0);
        executions.push(execution);
    }
    // Retries of tests in the first blocks, long full and sent away by now.
    for i in [0, 1, 3, 300, 511] {
        let name = format!("tests/big/test_m{}.py::test_{i:05}", i % 97);
        executions.push(Execution::new(name, Outcome::Pass));
    }
    let dir = tempfile::tempdir().unwrap();
    let mut sqlite = candor::history::SqliteStore::open(
        dir.path().join("h.db"),
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    let mut pg = schema.open();
    let mut reports = Vec::new();
    for store in [&mut pg as &mut dyn HistoryStore, &mut sqlite] {
        let mut session = store.begin_ingest(&run_at(0, "big")).unwrap();
        for execution in &executions {
            session.add(execution.clone()).unwrap();
        }
        reports.push(session.commit(&content("big")).unwrap());
    }
    assert_eq!(reports[0].tests, 40_000, "seed {seed:#x}");
    assert_eq!(
        (reports[0].tests, reports[0].red),
        (reports[1].tests, reports[1].red)
    );
    let read = |store: &dyn HistoryStore, run: i64| -> Vec<(Execution, Option<String>)> {
        store
            .run_executions(run)
            .unwrap()
            .into_iter()
            .map(|stored| (stored.execution, stored.signature))
            .collect()
    };
    let from_pg = read(&pg, reports[0].run_id);
    let from_sqlite = read(&sqlite, reports[1].run_id);
    assert_eq!(from_pg.len(), 40_000);
    let flaky = from_pg
        .iter()
        .find(|(e, _)| e.test_id.ends_with("test_00300"))
        .unwrap();
    assert_eq!(flaky.0.outcome, Outcome::FlakyPass, "the retry was merged");
    assert!(from_pg == from_sqlite, "seed {seed:#x}: the stores differ");
    assert_eq!(index_entries(&schema), 40_000);
}
