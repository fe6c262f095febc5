//! Issue #17, what was left open: the CI identity of a run (provider, repository, build
//! id, job, attempt) stored by both stores, shown by `ingest` and `show`, kept by
//! `history copy` and by the schema migrations; and the connection conventions
//! (`.pgpass` with libpq's mode check, `service=`) against a real server that asks for a
//! password. SQLite parts always run; PostgreSQL parts use `CANDOR_TEST_PG` (see
//! `pg_support`) and are skipped with one line without it.

use crate::pg_support;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use candor::history::{CiRun, HistoryStore, SqliteStore};
use pg_support::Schema;
use serde_json::Value;

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

fn candor(dir: &Path, db: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_candor"));
    command
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("TZ", "UTC")
        .env("CANDOR_DB", db)
        .stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("run candor")
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// A JUnit file of `tests` cases; `failing` of them fail (the first ones).
fn junit(dir: &Path, name: &str, tests: usize, failing: usize) -> PathBuf {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites><testsuite name=\"pytest\" timestamp=\"2026-11-20T10:00:00\">\n",
    );
    for i in 0..tests {
        let _ = write!(
            xml,
            "<testcase classname=\"tests.test_ci\" name=\"test_{i}\" file=\"tests/test_ci.py\" time=\"0.01\">"
        );
        if i < failing {
            xml.push_str("<failure message=\"boom\">AssertionError</failure>");
        }
        xml.push_str("</testcase>\n");
    }
    xml.push_str("</testsuite></testsuites>\n");
    let path = dir.join(name);
    std::fs::write(&path, xml).unwrap();
    path
}

/// GitHub Actions' variables for attempt `attempt` of workflow run 4242.
fn github(attempt: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_SHA", SHA),
        ("GITHUB_REF_NAME", "main"),
        ("GITHUB_REF_TYPE", "branch"),
        ("GITHUB_JOB", "unit"),
        ("GITHUB_REPOSITORY", "acme/shop"),
        ("GITHUB_RUN_ID", "4242"),
        ("GITHUB_RUN_ATTEMPT", attempt),
    ]
}

fn ci_json(attempt: u32) -> Value {
    serde_json::json!({
        "provider": "github-actions",
        "repository": "acme/shop",
        "run_id": "4242",
        "job": "unit",
        "attempt": attempt,
    })
}

fn ci_run(attempt: u32) -> CiRun {
    CiRun::new(Some("acme/shop".into()), Some("4242".into()), Some(attempt))
}

/// The whole story on one store, `db`: attempt 1 uploads; the upload is retried (same
/// content, same attempt) and the job re-run (attempt 2) gives the same content: one
/// run, which keeps attempt 1; attempt 2 with other results is a second run with
/// attempt 2. `ingest` and `show` print the identity.
fn ci_identity_story(dir: &Path, db: &str) -> Vec<i64> {
    let first = junit(dir, "attempt1.xml", 6, 2);
    let second = junit(dir, "attempt2.xml", 6, 0);
    let ingest = |file: &Path, attempt: &'static str| {
        let ran = candor(
            dir,
            db,
            &["--format", "json", "ingest", file.to_str().unwrap()],
            &github(attempt),
        );
        assert_eq!(ran.status.code(), Some(0), "{db}: {}", text(&ran));
        json_lines(&ran).remove(0)
    };
    let stored = ingest(&first, "1");
    assert_eq!(stored["status"], "stored", "{db}: {stored}");
    assert_eq!(stored["ci"], ci_json(1), "{db}: {stored}");
    let retried = ingest(&first, "1");
    assert_eq!(retried["status"], "already-stored", "{db}: {retried}");
    assert_eq!(retried["run_id"], stored["run_id"], "{db}: {retried}");
    let rerun_same = ingest(&first, "2");
    assert_eq!(rerun_same["status"], "already-stored", "{db}: {rerun_same}");
    assert_eq!(rerun_same["run_id"], stored["run_id"], "{db}: {rerun_same}");
    let rerun = ingest(&second, "2");
    assert_eq!(rerun["status"], "stored", "{db}: {rerun}");
    assert_ne!(rerun["run_id"], stored["run_id"], "{db}: {rerun}");
    assert_eq!(rerun["ci"], ci_json(2), "{db}: {rerun}");

    let shown = candor(
        dir,
        db,
        &["--format", "json", "show", "tests/test_ci.py::test_0"],
        &[],
    );
    assert_eq!(shown.status.code(), Some(0), "{db}: {}", text(&shown));
    let lines = json_lines(&shown);
    let cis: Vec<&Value> = lines.iter().map(|line| &line["ci"]).collect();
    assert_eq!(cis, [&ci_json(2), &ci_json(1)], "{db}: newest first");

    // Outside CI the identity is null, not an empty object.
    let local = junit(dir, "local.xml", 2, 0);
    let ran = candor(
        dir,
        db,
        &["--format", "json", "ingest", local.to_str().unwrap()],
        &[],
    );
    assert_eq!(ran.status.code(), Some(0), "{db}: {}", text(&ran));
    assert_eq!(json_lines(&ran)[0]["ci"], Value::Null, "{db}");
    vec![
        stored["run_id"].as_i64().unwrap(),
        rerun["run_id"].as_i64().unwrap(),
    ]
}

/// Issue #17 item 1 (CI identity), SQLite.
#[test]
fn sqlite_stores_the_ci_identity_and_one_run_per_content() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let ids = ci_identity_story(dir.path(), db.to_str().unwrap());
    let store = SqliteStore::open(&db, Duration::from_secs(5)).unwrap();
    assert_eq!(store.runs(10).unwrap().len(), 3);
    assert_eq!(store.run(ids[0]).unwrap().unwrap().run.ci_run, ci_run(1));
    assert_eq!(store.run(ids[1]).unwrap().unwrap().run.ci_run, ci_run(2));
}

/// Issue #17 item 1 (CI identity), PostgreSQL, and `history copy` both ways keeps it.
#[test]
fn postgres_stores_the_ci_identity_and_history_copy_keeps_it() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ids = ci_identity_story(dir.path(), &schema.url);
    let store = schema.open();
    assert_eq!(store.runs(10).unwrap().len(), 3);
    assert_eq!(store.run(ids[0]).unwrap().unwrap().run.ci_run, ci_run(1));
    assert_eq!(store.run(ids[1]).unwrap().unwrap().run.ci_run, ci_run(2));

    let back = dir.path().join("back.db");
    let back = back.to_str().unwrap();
    let copied = candor(
        dir.path(),
        "unused.db",
        &["history", "copy", "--from", &schema.url, "--to", back],
        &[],
    );
    assert_eq!(copied.status.code(), Some(0), "{}", text(&copied));
    let again = Schema::new(&pg_support::server().unwrap());
    let copied = candor(
        dir.path(),
        "unused.db",
        &["history", "copy", "--from", back, "--to", &again.url],
        &[],
    );
    assert_eq!(copied.status.code(), Some(0), "{}", text(&copied));
    let runs = |store: &dyn HistoryStore| {
        let mut runs: Vec<(String, CiRun, Option<String>)> = store
            .runs(10)
            .unwrap()
            .into_iter()
            .map(|r| (r.content_key, r.run.ci_run, r.run.ci_provider))
            .collect();
        runs.sort_by(|a, b| a.0.cmp(&b.0));
        runs
    };
    let original = runs(&store);
    assert_eq!(
        original.iter().filter(|r| !r.1.is_empty()).count(),
        2,
        "{original:?}"
    );
    assert_eq!(
        runs(&SqliteStore::open(Path::new(back), Duration::from_secs(5)).unwrap()),
        original
    );
    assert_eq!(runs(&again.open()), original);
}

/// Issue #17 item 1: a history written by schema 1 (before the CI identity) is migrated
/// in place; its runs read back with no identity, new ones carry theirs.
#[test]
fn a_schema_1_postgres_history_gains_the_ci_columns() {
    let Some(schema) = Schema::on_test_server() else {
        return;
    };
    let mut client = schema.client();
    client
        .batch_execute(include_str!(
            "../../src/history/pg/migrations/0001_init.sql"
        ))
        .unwrap();
    client
        .batch_execute(
            "CREATE TABLE candor_schema (version bigint NOT NULL);
             INSERT INTO candor_schema VALUES (1);
             INSERT INTO runs (content_key, started_us, source, ci_provider, job, ci,
                 executions, red) VALUES ('old', 1790000000000000, 'ci', 'github-actions',
                 'unit', true, 0, 0);",
        )
        .unwrap();
    let store = schema.open();
    assert_eq!(
        store.schema_version().unwrap(),
        5,
        "migrated through the CI columns to the packed layout, packed names and name deltas"
    );
    let runs = store.runs(10).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].run.ci_run, CiRun::default());
    assert_eq!(runs[0].run.ci_provider.as_deref(), Some("github-actions"));
}

/// A cluster of the test's own that asks every login for a password (SCRAM), stopped
/// when dropped.
struct PasswordCluster {
    dir: tempfile::TempDir,
    url: String,
    password: String,
}

impl PasswordCluster {
    fn start() -> PasswordCluster {
        let dir = tempfile::Builder::new()
            .prefix("cpgpw")
            .tempdir_in("/tmp")
            .unwrap();
        let out = Command::new("bash")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/pg-cluster"))
            .arg("start-password")
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        let password = std::fs::read_to_string(dir.path().join("password"))
            .unwrap()
            .trim()
            .to_owned();
        PasswordCluster { dir, url, password }
    }
}

impl Drop for PasswordCluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/pg-cluster"))
            .arg("stop")
            .arg(self.dir.path())
            .output();
    }
}

#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Issue #17 item 3: against a server that wants a password, the password comes from
/// `.pgpass` (`PGPASSFILE`) as libpq finds it, a file group or others may read is passed
/// over with a message that says so, and `service=` names the server through the service
/// file.
#[cfg(unix)]
#[test]
fn pgpass_and_service_files_log_in_to_a_server_that_wants_a_password() {
    if pg_support::server().is_none() {
        return;
    }
    let cluster = PasswordCluster::start();
    let dir = tempfile::tempdir().unwrap();
    let file = junit(dir.path(), "r.xml", 4, 1);
    let file = file.to_str().unwrap();
    let socket = cluster.dir.path().display().to_string();
    let url = cluster.url.clone();

    let none = candor(dir.path(), &url, &["ingest", file], &[]);
    assert_eq!(none.status.code(), Some(2), "{}", text(&none));

    let pgpass = dir.path().join("pgpass");
    std::fs::write(
        &pgpass,
        format!(
            "# candor's test\nlocalhost:5432:other:candor:wrong\nlocalhost:5432:postgres:candor:{}\n",
            cluster.password
        ),
    )
    .unwrap();
    let passfile = pgpass.to_str().unwrap();
    chmod(&pgpass, 0o644);
    let loose = candor(
        dir.path(),
        &url,
        &["ingest", file],
        &[("PGPASSFILE", passfile)],
    );
    assert_eq!(loose.status.code(), Some(2), "{}", text(&loose));
    let said = text(&loose);
    assert!(
        said.contains(passfile) && said.contains("chmod 600"),
        "{said}"
    );

    chmod(&pgpass, 0o600);
    let logged_in = candor(
        dir.path(),
        &url,
        &["ingest", file],
        &[("PGPASSFILE", passfile)],
    );
    assert_eq!(logged_in.status.code(), Some(0), "{}", text(&logged_in));

    // ~/.pgpass when PGPASSFILE is unset (HOME is the temp folder).
    std::fs::copy(&pgpass, dir.path().join(".pgpass")).unwrap();
    chmod(&dir.path().join(".pgpass"), 0o600);
    let services = dir.path().join("services.conf");
    std::fs::write(
        &services,
        format!("[history]\nhost={socket}\nuser=candor\ndbname=postgres\nsslmode=disable\n"),
    )
    .unwrap();
    let by_service = candor(
        dir.path(),
        "service=history",
        &["--format", "json", "tests"],
        &[("PGSERVICEFILE", services.to_str().unwrap())],
    );
    assert_eq!(by_service.status.code(), Some(0), "{}", text(&by_service));
    let lines = json_lines(&by_service);
    assert!(
        lines
            .iter()
            .any(|line| line["id"] == "tests/test_ci.py::test_0"),
        "{}",
        text(&by_service)
    );
    let unknown = candor(
        dir.path(),
        "service=nope",
        &["tests"],
        &[("PGSERVICEFILE", services.to_str().unwrap())],
    );
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown));
    assert!(
        text(&unknown).contains("service `nope` is not defined"),
        "{}",
        text(&unknown)
    );
}
