//! The ledger file through the public API: real processes appending at once, file round
//! trips, budgets, the append-only check and the summary lint on a ledger written to disk.

use crate::proptest_support::proptest_config;
use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use candor::ledger::summary::lint_summary;
use candor::ledger::{
    HEADER, LEDGER_FILE, Ledger, LedgerEntry, LedgerError, append, is_append_only,
};
use candor::policy::{RerunConfig, TriageConfig};
use candor::results::Outcome;
use jiff::civil::Date;
use proptest::prelude::*;

/// Set in a child process: `<ledger path>|<child number>|<lines to append>`.
const CHILD_VAR: &str = "CANDOR_TEST_LEDGER_CHILD";
const CHILDREN: usize = 8;
const LINES_PER_CHILD: usize = 40;

fn entry(test_id: &str, seed: &str) -> LedgerEntry {
    LedgerEntry {
        date: Date::constant(2026, 10, 6),
        sha: "a41f9c2".to_owned(),
        test_id: test_id.to_owned(),
        fingerprint: "FP-001".to_owned(),
        first_fail_sha256: "9e1c".repeat(16),
        seed: Some(seed.to_owned()),
        workers: Some(4),
        attempts: 2,
        outcome: Outcome::Pass.into(),
    }
}

/// Not a test of its own: the body of each child process that
/// `eight_processes_appending_at_once_never_tear_or_lose_a_line` starts.
#[test]
#[ignore = "run as a child process by eight_processes_appending_at_once_never_tear_or_lose_a_line"]
fn child_appends_lines() {
    let Ok(spec) = std::env::var(CHILD_VAR) else {
        return;
    };
    let mut parts = spec.split('|');
    let (Some(path), Some(child), Some(lines)) = (parts.next(), parts.next(), parts.next()) else {
        panic!("{CHILD_VAR} is {spec:?}, expected <path>|<child>|<lines>");
    };
    let lines: usize = lines.parse().expect("a line count");
    // The start line: the parent closes every child's stdin once all are running, so
    // they race for the missing file together rather than one by one as they were spawned.
    let mut go = Vec::new();
    std::io::stdin()
        .read_to_end(&mut go)
        .expect("wait for the start");
    for k in 0..lines {
        // One append per line: as many chances to interleave as possible.
        let line = entry(
            &format!("tests/child_{child}.py::test_line_{k}"),
            &format!("child={child};k={k}"),
        );
        append(Path::new(path), &[line]).expect("append");
    }
}

#[test]
fn eight_processes_appending_at_once_never_tear_or_lose_a_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The file does not exist yet: every child races to create it with its header.
    let path = dir.path().join(LEDGER_FILE);
    let exe = std::env::current_exe().expect("the test binary");
    // libtest names a test by its module path without the crate's name (`ledger::…` in
    // the one `it` binary): `--exact` needs that whole name.
    let (_, module) = module_path!()
        .split_once("::")
        .expect("this file is a module of the it binary");
    let child_test = format!("{module}::child_appends_lines");
    let mut children: Vec<_> = (0..CHILDREN)
        .map(|child| {
            Command::new(&exe)
                .args([
                    "--exact",
                    &child_test,
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(
                    CHILD_VAR,
                    format!("{}|{child}|{LINES_PER_CHILD}", path.display()),
                )
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn the test binary")
        })
        .collect();
    for process in &mut children {
        drop(process.stdin.take());
    }
    for (child, process) in children.into_iter().enumerate() {
        let output = process.wait_with_output().expect("child ran");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "child {child} failed: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("1 passed"),
            "child {child} did not run the appender: {stdout}"
        );
    }
    let text = std::fs::read_to_string(&path).expect("the ledger exists");
    assert_eq!(text.matches(HEADER).count(), 1, "one header");
    let ledger = Ledger::parse(&text, &path).expect("every line whole");
    assert_eq!(ledger.lines.len(), CHILDREN * LINES_PER_CHILD);
    let seeds: BTreeSet<String> = ledger.entries().filter_map(|e| e.seed.clone()).collect();
    let expected: BTreeSet<String> = (0..CHILDREN)
        .flat_map(|child| (0..LINES_PER_CHILD).map(move |k| format!("child={child};k={k}")))
        .collect();
    assert_eq!(seeds, expected, "no line lost or duplicated");
    // Each child's own lines stay in its order.
    for child in 0..CHILDREN {
        let order: Vec<String> = ledger
            .entries()
            .filter(|e| e.test_id.starts_with(&format!("tests/child_{child}.py")))
            .map(|e| e.test_id.clone())
            .collect();
        let sorted: Vec<String> = (0..LINES_PER_CHILD)
            .map(|k| format!("tests/child_{child}.py::test_line_{k}"))
            .collect();
        assert_eq!(order, sorted, "child {child}");
    }
}

fn ledger_path() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(LEDGER_FILE);
    (dir, path)
}

#[test]
fn a_missing_ledger_is_empty_and_appending_keeps_old_lines_byte_for_byte() {
    let (_dir, path) = ledger_path();
    assert_eq!(
        Ledger::load(&path).expect("missing is empty"),
        Ledger::default()
    );
    append(&path, &[entry("tests/a.py::test_a", "1")]).expect("first append");
    let before = std::fs::read_to_string(&path).expect("read");
    append(
        &path,
        &[
            entry("tests/b.py::test_b", "2"),
            entry("tests/c.py::test_c", "3"),
        ],
    )
    .expect("second append");
    let after = std::fs::read_to_string(&path).expect("read");
    assert_eq!(is_append_only(&before, &after), Ok(()));
    assert!(
        is_append_only(&after, &before).is_err(),
        "lines were removed"
    );
    let ledger = Ledger::load(&path).expect("parses");
    let ids: Vec<&str> = ledger.entries().map(|e| e.test_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "tests/a.py::test_a",
            "tests/b.py::test_b",
            "tests/c.py::test_c"
        ]
    );
    assert_eq!(
        ledger.lines.iter().map(|l| l.number).collect::<Vec<_>>(),
        [2, 3, 4]
    );
}

#[test]
fn a_hand_edited_ledger_is_refused_with_its_line() {
    let (_dir, path) = ledger_path();
    append(&path, &[entry("tests/a.py::test_a", "1")]).expect("append");
    let text = std::fs::read_to_string(&path).expect("read");
    let edited = text.replace("\tpass\n", "\tPASS\n");
    std::fs::write(&path, &edited).expect("edit");
    let error = Ledger::load(&path).expect_err("refused");
    let LedgerError::Line { line, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(*line, 2);
    assert!(error.to_string().contains("outcome"), "{error}");
    assert!(is_append_only(&text, &edited).is_err());
}

#[test]
fn budget_from_a_ledger_on_disk() {
    let (_dir, path) = ledger_path();
    let test = "tests/payments/test_webhook.py::test_payment_webhook";
    let on = |date: Date, sha: &str, attempts: u32| LedgerEntry {
        date,
        sha: sha.to_owned(),
        attempts,
        ..entry(test, "rs=1")
    };
    append(
        &path,
        &[
            on(Date::constant(2026, 9, 1), "1111111", 2),
            on(Date::constant(2026, 10, 5), "2222222", 2),
            on(Date::constant(2026, 10, 6), "3333333", 2),
        ],
    )
    .expect("append");
    let ledger = Ledger::load(&path).expect("parses");
    let rerun = RerunConfig::default();
    let budget = ledger.budget(
        test,
        Date::constant(2026, 10, 8),
        &["3333333abcdef"],
        &rerun,
    );
    assert_eq!(budget.entries_in_window, 2);
    assert_eq!(budget.attempts_in_change, 2);
    let fresh = ledger.budget(test, Date::constant(2026, 10, 8), &["4444444"], &rerun);
    assert_eq!(fresh.attempts_in_change, 1);
}

#[test]
fn summary_lint_against_a_ledger_on_disk() {
    let (_dir, path) = ledger_path();
    let receipt = entry(
        "tests/payments/test_webhook.py::test_payment_webhook",
        "rs=118204",
    );
    append(&path, std::slice::from_ref(&receipt)).expect("append");
    let ledger = Ledger::load(&path).expect("parses");
    let line = receipt.to_line().expect("renders");
    let summary = format!(
        "## Summary\n\
         Fixed the rounding bug.\n\
         test_payment_webhook passed on rerun:\n\
         `{line}`\n\
         \n\
         test_refund is a known intermittent failure, so I ignored it.\n"
    );
    let claims =
        lint_summary(&summary, &ledger, &TriageConfig::default().summary_phrases).expect("lint");
    assert_eq!(claims.len(), 1, "{claims:?}");
    assert_eq!(claims[0].line, 6);
    assert_eq!(claims[0].phrase, "known intermittent");
    assert_eq!(
        claims[0].sentence,
        "test_refund is a known intermittent failure, so I ignored it."
    );
}

fn arbitrary_entry() -> impl Strategy<Value = LedgerEntry> {
    (
        (2000i16..=2100, 1i8..=12, 1i8..=28),
        "[0-9a-f]{7,40}",
        "[^\t\n\r]{1,60}",
        prop::option::of("[^\t\n\r-][^\t\n\r]{0,20}"),
        prop::option::of(1u32..=512),
        1u32..=9,
        prop::sample::select(Outcome::ALL.to_vec()),
    )
        .prop_map(
            |((y, m, d), sha, test_id, seed, workers, attempts, outcome)| LedgerEntry {
                date: Date::new(y, m, d).expect("valid by construction"),
                sha,
                test_id,
                fingerprint: "FP-001".to_owned(),
                first_fail_sha256: "0123456789abcdef".repeat(4),
                seed,
                workers,
                attempts,
                outcome: outcome.into(),
            },
        )
}

proptest! {
    #![proptest_config(proptest_config(48))]

    /// What is appended is what is read back, in order, and the file only ever grows.
    #[test]
    fn appended_entries_read_back_unchanged(
        batches in prop::collection::vec(prop::collection::vec(arbitrary_entry(), 1..4), 1..4),
    ) {
        let (_dir, path) = ledger_path();
        let mut previous = String::new();
        for batch in &batches {
            append(&path, batch).expect("append");
            let now = std::fs::read_to_string(&path).expect("read");
            prop_assert_eq!(is_append_only(&previous, &now), Ok(()));
            previous = now;
        }
        let ledger = Ledger::load(&path).expect("parses");
        let read: Vec<&LedgerEntry> = ledger.entries().collect();
        let written: Vec<&LedgerEntry> = batches.iter().flatten().collect();
        prop_assert_eq!(read, written);
        for line in &ledger.lines {
            prop_assert!(ledger.contains_line(&line.text));
            prop_assert_eq!(&line.entry.to_line().expect("renders"), &line.text);
        }
    }
}

/// The race the lock exists for: appenders that all find the file missing must still
/// write one header between them. Threads start closer together than processes, and
/// each round races on a fresh file.
#[test]
fn appenders_racing_to_create_the_ledger_write_one_header() {
    const ROUNDS: usize = 30;
    let dir = tempfile::tempdir().expect("temp dir");
    for round in 0..ROUNDS {
        let path = dir.path().join(format!("round-{round}.tsv"));
        let start = std::sync::Barrier::new(CHILDREN);
        std::thread::scope(|scope| {
            for child in 0..CHILDREN {
                let (path, start) = (&path, &start);
                scope.spawn(move || {
                    start.wait();
                    append(path, &[entry(&format!("tests/t{child}.py::t"), "1")]).expect("append");
                });
            }
        });
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text.matches(HEADER).count(), 1, "round {round}:\n{text}");
        let ledger = Ledger::parse(&text, &path).expect("whole lines");
        assert_eq!(ledger.lines.len(), CHILDREN, "round {round}");
    }
}
