//! `candor demo` from start to end: a real git repository, a real cargo build, every
//! verdict, a rerun with its receipt, the refusals, the statistics and the summary lint,
//! each step exiting as the story says.

use crate::triage_support;

use triage_support::empty;

#[test]
fn the_demo_shows_every_verdict_and_every_refusal() {
    let here = empty();
    let ran = here.candor(
        &["demo", "--format", "json", "--keep"],
        &[("CANDOR_TODAY", "2026-10-07")],
    );
    assert_eq!(ran.exit, 0, "every step as expected: {ran:?}");
    let lines = ran.json();
    let exits: Vec<(i64, i64)> = lines
        .iter()
        .filter(|line| line["type"] == "demo-exit")
        .map(|line| {
            (
                line["exit"].as_i64().unwrap_or(-1),
                line["expected"].as_i64().unwrap_or(-2),
            )
        })
        .collect();
    assert_eq!(exits.len(), 8, "{ran:?}");
    assert!(
        exits.iter().all(|(exit, expected)| exit == expected),
        "{exits:?}"
    );

    // Verdicts per step: the lines between one demo-step and the next.
    let mut steps: Vec<Vec<String>> = Vec::new();
    for line in &lines {
        match line["type"].as_str() {
            Some("demo-step") => steps.push(Vec::new()),
            Some("verdict") => {
                if let Some(step) = steps.last_mut() {
                    step.push(format!(
                        "{} {}",
                        line["verdict"].as_str().unwrap_or_default(),
                        line["test"].as_str().unwrap_or_default()
                    ));
                }
            }
            _ => {}
        }
    }
    assert_eq!(
        steps[0],
        [
            "known-flake shop::checkout::tests::completes_within_deadline",
            "regression shop::discount::tests::applies_the_percentage",
            "unverified shop::plugins::tests::starts_empty",
            "expired shop::receipts::tests::prints_the_total",
            "not-evidence shop::search::tests::suggests_while_typing",
        ]
    );
    assert!(
        steps[3].contains(
            &"budget-exceeded shop::checkout::tests::completes_within_deadline".to_owned()
        ),
        "{:?}",
        steps[3]
    );
    let reruns: Vec<(&str, &str)> = lines
        .iter()
        .filter(|line| line["type"] == "rerun")
        .map(|line| {
            (
                line["status"].as_str().unwrap_or_default(),
                line["verdict"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        reruns,
        [
            ("ran", "known-flake"),
            ("refused", "regression"),
            ("refused", "budget-exceeded")
        ]
    );

    // The kept repository: the ledger holds the two earlier reruns and the demo's own.
    let kept = lines
        .iter()
        .find(|line| line["type"] == "demo-kept")
        .and_then(|line| line["repository"].as_str())
        .map(std::path::PathBuf::from)
        .expect("the kept repository");
    let ledger = std::fs::read_to_string(kept.join(".flake-ledger.tsv")).expect("a ledger");
    let outcomes: Vec<&str> = ledger
        .lines()
        .skip(1)
        .filter_map(|line| line.rsplit('\t').next())
        .collect();
    assert_eq!(
        outcomes,
        ["pending", "pass", "pending", "pass", "pending", "pass"]
    );
    assert!(
        ledger
            .lines()
            .last()
            .unwrap_or_default()
            .starts_with("2026-10-07\t")
    );
    std::fs::remove_dir_all(kept.parent().expect("the temp dir")).expect("clean up");
}
