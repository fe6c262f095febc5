//! Issue 16 item 9, end to end: result files read without loss, and the errors about
//! them where a script and a person both see them. Each test has its own temporary
//! folder and history.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

fn candor(dir: &Path, db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_candor"))
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("CANDOR_DB", db)
        .output()
        .expect("candor runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn an_rfc_1123_timestamp_is_the_run_s_start_and_go_s_zero_time_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    std::fs::write(
        dir.path().join("dotnet.xml"),
        r#"<testsuite name="s" tests="1" timestamp="Sat, 03 Dec 2022 23:10:07 GMT"><testcase classname="c" name="t"/></testsuite>"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("zero.xml"),
        r#"<testsuite name="s" tests="1" timestamp="0001-01-01T00:00:00Z"><testcase classname="c" name="u"/></testsuite>"#,
    )
    .unwrap();
    let ran = candor(dir.path(), &db, &["ingest", "dotnet.xml", "zero.xml"]);
    assert_eq!(ran.status.code(), Some(0), "{ran:?}");
    let shown = candor(dir.path(), &db, &["show", "c::t", "--format", "json"]);
    assert!(
        text(&shown.stdout).contains("\"started_at\":\"2022-12-03T23:10:07Z\""),
        "{shown:?}"
    );
    let shown = candor(dir.path(), &db, &["show", "c::u", "--format", "json"]);
    let out = text(&shown.stdout);
    assert!(out.contains("\"started_at\":\""), "{shown:?}");
    assert!(!out.contains("\"started_at\":\"0001-"), "{shown:?}");
    assert!(!out.contains("\"started_at\":\"-0001-"), "{shown:?}");
}

#[test]
fn a_file_holding_one_case_of_939_is_stored_with_a_warning_on_stderr_in_json_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    std::fs::write(
        dir.path().join("cut.xml"),
        r#"<testsuites tests="939"><testsuite name="s" tests="939"><testcase classname="c" name="t"/></testsuite></testsuites>"#,
    )
    .unwrap();
    let ran = candor(dir.path(), &db, &["ingest", "cut.xml", "--format", "json"]);
    assert_eq!(ran.status.code(), Some(0), "{ran:?}");
    let warning = "cut.xml: the file's header declares tests=\"939\" but it holds 1 test case(s)";
    assert!(
        text(&ran.stderr).contains(&format!("warning: {warning}")),
        "{ran:?}"
    );
    assert!(
        text(&ran.stdout).contains("declares tests=\\\"939\\\""),
        "{ran:?}"
    );
}

#[test]
fn json_errors_are_on_stderr_and_malformed_json_is_called_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    std::fs::write(dir.path().join("bad.json"), "{\"tests\": [1, 2,\n  }\n").unwrap();
    let ran = candor(dir.path(), &db, &["ingest", "bad.json", "--format", "json"]);
    assert_eq!(ran.status.code(), Some(2), "{ran:?}");
    let stderr = text(&ran.stderr);
    assert!(
        stderr.contains("error: bad.json:2:3: malformed JSON (expected value)"),
        "{ran:?}"
    );
    assert!(!stderr.contains("a JSON document"), "{ran:?}");
    assert!(
        text(&ran.stdout).contains("\"status\":\"failed\""),
        "{ran:?}"
    );
}

#[test]
fn an_empty_folder_is_no_result_files_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    std::fs::create_dir_all(dir.path().join("reports")).unwrap();
    let ran = candor(dir.path(), &db, &["ingest", "reports"]);
    assert_eq!(ran.status.code(), Some(2), "{ran:?}");
    assert!(
        text(&ran.stderr).contains("error: reports holds no result files"),
        "{ran:?}"
    );
    assert!(!db.exists(), "nothing written");
}

/// `candor tests` on a read-only copy of a history: no `-wal` or `-shm` beside it and a
/// folder nobody may write to. Run as an unprivileged user where the tests run as root
/// (root may write anywhere), through `setpriv`.
#[test]
fn a_read_only_copy_of_a_history_can_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("work.db");
    std::fs::write(
        dir.path().join("r.xml"),
        r#"<testsuite name="s" tests="2"><testcase classname="c" name="t"/><testcase classname="c" name="u"><failure message="boom">boom</failure></testcase></testsuite>"#,
    )
    .unwrap();
    let ran = candor(dir.path(), &db, &["ingest", "r.xml"]);
    assert_eq!(ran.status.code(), Some(0), "{ran:?}");
    let copy_dir = dir.path().join("artifact");
    std::fs::create_dir_all(&copy_dir).unwrap();
    let copy = copy_dir.join("history.db");
    std::fs::copy(&db, &copy).unwrap();
    assert!(!copy_dir.join("history.db-wal").exists());
    let mode = |path: &Path, bits| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(bits)).unwrap();
    };
    mode(dir.path(), 0o755);
    mode(&copy, 0o444);
    mode(&copy_dir, 0o555);
    let root = text(&Command::new("id").arg("-u").output().unwrap().stdout).trim() == "0";
    let mut command = if root {
        let mut command = Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        command.arg(env!("CARGO_BIN_EXE_candor"));
        command
    } else {
        Command::new(env!("CARGO_BIN_EXE_candor"))
    };
    let ran = command
        .args(["tests", "--format", "json"])
        .current_dir(&copy_dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("CANDOR_DB", &copy)
        .output()
        .expect("candor runs");
    mode(&copy_dir, 0o755);
    assert_eq!(ran.status.code(), Some(0), "{ran:?}");
    let out = text(&ran.stdout);
    assert!(
        out.contains("\"id\":\"c::t\"") && out.contains("\"id\":\"c::u\""),
        "{ran:?}"
    );
    assert!(!copy_dir.join("history.db-wal").exists());
}
