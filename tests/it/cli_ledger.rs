//! `candor lint summary` and `candor ledger stats` end to end, on a ledger written the way
//! `candor rerun` writes it (a pending line, then its outcome line).

use crate::triage_support;

use std::fmt::Write as _;

use triage_support::{Suite, empty};

const HEADER: &str =
    "# date\tsha\ttest_id\tfp\tfirst_fail_sha256\tseed\tworkers\tattempts\toutcome";
const WEBHOOK: &str = "tests/test_pay.py::test_webhook";
const POOL: &str = "services/pool::TestCheckout";

/// One rerun: its pending line and its outcome line.
fn rerun(
    date: &str,
    sha: &str,
    test: &str,
    hash: char,
    workers: u32,
    outcome: &str,
) -> [String; 2] {
    let claim = format!(
        "{date}\t{sha}\t{test}\tFP-001\t{}\t4242\t{workers}\t2",
        hash.to_string().repeat(64)
    );
    [format!("{claim}\tpending"), format!("{claim}\t{outcome}")]
}

fn ledger(suite: &Suite, reruns: &[[String; 2]]) -> Vec<String> {
    let mut text = format!("{HEADER}\n");
    let mut outcome_lines = Vec::new();
    for [pending, finished] in reruns {
        let _ = write!(text, "{pending}\n{finished}\n");
        outcome_lines.push(finished.clone());
    }
    suite.write(".flake-ledger.tsv", &text);
    outcome_lines
}

#[test]
fn a_summary_must_quote_the_ledger_line_of_every_rerun_it_claims() {
    let suite = empty();
    let lines = ledger(
        &suite,
        &[rerun("2026-10-06", "a41f9c2", WEBHOOK, 'a', 4, "pass")],
    );
    let receipt = &lines[0];

    suite.write(
        "unbacked.md",
        "Fixed the refund rounding.\n\nThe webhook test is a known intermittent failure\nand passed on rerun. Everything else is green.\n",
    );
    let ran = suite.candor(&["lint", "summary", "unbacked.md"], &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(
        ran.stdout,
        "unbacked.md:3: \"known intermittent\" quotes no ledger line: The webhook test is a known intermittent failure and passed on rerun.\n1 unbacked claim: quote the ledger line of the rerun, verbatim (tabs included), in the sentence that claims it, or take the claim out\n"
    );

    // A quoted line that is not in the ledger: one field changed (the outcome).
    let forged = receipt.replace("\tpass", "\tflaky-pass");
    suite.write(
        "forged.md",
        &format!("The webhook test passed on rerun:\n\n    {forged}\n"),
    );
    let ran = suite.candor(&["lint", "summary", "forged.md", "--format", "json"], &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    let claims = ran.lines_of("unbacked-claim");
    assert_eq!(claims.len(), 1, "{ran:?}");
    assert_eq!(claims[0]["line"], 1);
    assert_eq!(claims[0]["phrase"], "passed on rerun");
    assert_eq!(ran.lines_of("lint-summary")[0]["unbacked"], 1);

    // The pending line is a receipt for nothing: it was written before the rerun ran.
    let pending = receipt.replace("\tpass", "\tpending");
    suite.write(
        "pending.md",
        &format!("The webhook test passed on rerun: `{pending}`\n"),
    );
    assert_eq!(
        suite.candor(&["lint", "summary", "pending.md"], &[]).exit,
        1
    );

    suite.write(
        "backed.md",
        &format!("The webhook test passed on rerun; receipt:\n```\n{receipt}\n```\n\nNothing else failed.\n"),
    );
    let ran = suite.candor(&["lint", "summary", "backed.md"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(
        ran.stdout,
        "backed.md: every rerun claim quotes its ledger line\n"
    );
}

#[test]
fn the_phrases_come_from_candor_toml_and_input_errors_exit_2() {
    let suite = empty();
    ledger(&suite, &[]);
    suite.write(
        "candor.toml",
        "[triage]\nsummary_phrases = [\"green on retry\"]\n",
    );
    suite.write("summary.md", "Known flake. It went green on retry.\n");
    let ran = suite.candor(&["lint", "summary", "summary.md", "--format", "json"], &[]);
    assert_eq!(ran.exit, 1);
    let claims = ran.lines_of("unbacked-claim");
    assert_eq!(claims.len(), 1, "only the configured phrase: {ran:?}");
    assert_eq!(claims[0]["sentence"], "It went green on retry.");

    let ran = suite.candor(&["lint", "summary", "missing.md"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("could not read"), "{ran:?}");
    suite.write(
        ".flake-ledger.tsv",
        &format!("{HEADER}\n2026-10-06\tnot-a-sha"),
    );
    let ran = suite.candor(&["lint", "summary", "summary.md"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains(".flake-ledger.tsv:2:"), "{ran:?}");
}

#[test]
fn ledger_stats_count_reruns_and_flag_the_signs_of_a_real_race() {
    let suite = empty();
    let mut reruns = vec![
        // The same first failure three times: deterministic, not a flake.
        rerun("2026-10-01", "1111111", WEBHOOK, 'a', 2, "pass"),
        rerun("2026-10-02", "2222222", WEBHOOK, 'a', 8, "pass"),
        rerun("2026-10-03", "3333333", WEBHOOK, 'a', 4, "fail"),
    ];
    // Four of five at 8 workers, which the other test never claims.
    for (day, hash) in [("04", 'b'), ("05", 'c'), ("06", 'd'), ("07", 'e')] {
        reruns.push(rerun(
            &format!("2026-10-{day}"),
            "4444444",
            POOL,
            hash,
            8,
            "pass",
        ));
    }
    reruns.push(rerun("2026-10-07", "5555555", POOL, 'f', 2, "pass"));
    ledger(&suite, &reruns);

    let ran = suite.candor(&["ledger", "stats", "--format", "json"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let stats = ran.lines_of("ledger-stats");
    let pool = &stats[0];
    assert_eq!(pool["test"], POOL);
    assert_eq!(pool["entries"], 5, "ten lines, five reruns");
    assert_eq!(pool["distinct_first_failures"], 5);
    assert_eq!(pool["flags"][0]["flag"], "worker-cluster");
    assert_eq!(pool["flags"][0]["workers"], 8);
    let webhook = &stats[1];
    assert_eq!(webhook["entries"], 3);
    assert_eq!(webhook["flags"].as_array().map(Vec::len), Some(1));
    assert_eq!(webhook["flags"][0]["flag"], "same-first-failure");
    assert_eq!(
        webhook["workers"],
        serde_json::json!([
            {"workers": 2, "entries": 1},
            {"workers": 4, "entries": 1},
            {"workers": 8, "entries": 1}
        ])
    );

    let ran = suite.candor(&["ledger", "stats"], &[]);
    insta::assert_snapshot!("ledger_stats_for_people", ran.redacted(&suite));

    let none = empty();
    let ran = none.candor(&["ledger", "stats"], &[]);
    assert_eq!(ran.exit, 0);
    assert!(ran.stdout.starts_with("no reruns in"), "{ran:?}");
}
