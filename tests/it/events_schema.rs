//! Issue #13 item 2: the JSON Schema of candor's lines cannot drift from the code. The
//! committed `docs/events.schema.json` equals the one generated from `candor::events`, and
//! every line the commands print with `--format json` validates against it.

use crate::triage_support;

use std::collections::BTreeSet;
use std::path::Path;

use triage_support::{TODAY, suite};

/// (b): regenerate with `cargo run --example events_schema > docs/events.schema.json`.
#[test]
fn the_committed_schema_is_the_generated_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/events.schema.json");
    let committed =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let generated = candor::events::schema_text();
    assert!(
        committed == generated,
        "{} is not the schema the code generates: run `cargo run --example events_schema > docs/events.schema.json` and commit it\n--- first difference at line {}",
        path.display(),
        committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || committed.lines().count().min(generated.lines().count()) + 1,
                |i| i + 1
            )
    );
}

/// (a): every command that needs no runner, with `--format json`, in one small git
/// repository; `Suite::candor` validates each line against the committed schema (the
/// runner-driven commands are validated the same way in their own tests: rerun, test,
/// compare, order, gate). Each command must also print the line types it documents.
#[test]
fn every_command_prints_lines_the_schema_accepts() {
    let suite = suite("pytest");
    suite.write(
        "candor.toml",
        "[[freeze]]\ntest = \"tests/test_webhook.py::test_refund\"\nowner = \"@qa\"\nexpires = 2026-10-09\nticket = \"QA-1\"\n",
    );
    suite.tier("tests/test_webhook.py::test_payment_webhook", "probation");
    suite.write("README.md", "Known flake. It went green on retry.\n");
    suite.write("bad.xml", "<testsuite><testcase name=\"t\">\n");
    suite.write("tests/fixtures/data.json", "{}\n");
    suite.git_with_change();
    let red = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/app/rerun_red.xml");
    let red = red.to_str().expect("a UTF-8 path");
    let vars = [("CANDOR_TODAY", TODAY)];
    let history = suite.temp.path().join("history.db");
    let history = history.to_str().expect("a UTF-8 path");
    let other_db = suite.temp.path().join("copy.db");
    let other_db = other_db.to_str().expect("a UTF-8 path");
    let runs: Vec<(Vec<&str>, &[&str])> = vec![
        (
            vec!["ingest", red, "--commit", "abc1234", "--branch", "main"],
            &["ingest", "summary"],
        ),
        (vec!["ingest", "bad.xml"], &["ingest", "summary"]),
        (vec!["tests"], &["counted", "test"]),
        (
            vec!["show", "tests/test_webhook.py::test_payment_webhook"],
            &["execution"],
        ),
        (vec!["reliability"], &["reliability", "reliability-summary"]),
        (
            vec!["triage", red],
            &["policy", "verdict", "triage-summary"],
        ),
        (vec!["triage"], &["policy", "verdict", "triage-summary"]),
        (vec!["ledger", "stats"], &[]),
        (
            vec!["lint", "summary", "README.md"],
            &["unbacked-claim", "lint-summary"],
        ),
        (vec!["lint", "diff", "--base", "main"], &["lint-diff"]),
        (vec!["lock", "fixtures"], &["lock"]),
        (vec!["freeze", "check"], &["freeze", "freeze-check"]),
        (vec!["clean", "--dry-run"], &["clean"]),
        (
            vec!["history", "copy", "--from", history, "--to", other_db],
            &["history-copy"],
        ),
    ];
    for (args, kinds) in runs {
        let mut argv = args.clone();
        argv.extend(["--format", "json"]);
        let ran = suite.candor(&argv, &vars);
        assert!(ran.exit <= 2, "{args:?}: {ran:?}");
        let seen: BTreeSet<String> = ran
            .json()
            .iter()
            .map(|line| line["type"].as_str().unwrap_or_default().to_owned())
            .collect();
        for kind in kinds {
            assert!(
                seen.contains(*kind),
                "{args:?} printed no `{kind}` line: {ran:?}"
            );
        }
    }
    // `init` last: it writes candor.toml.
    std::fs::remove_file(suite.repo.join("candor.toml")).expect("remove candor.toml");
    let ran = suite.candor(&["init", "--format", "json"], &vars);
    assert_eq!(ran.lines_of("init").len(), 1, "{ran:?}");
}
