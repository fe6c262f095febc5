//! A generated, seeded history for `candor report`: tests with failure rates from never to
//! always, failures with messages, frames and durations, flaky passes, runs on two
//! branches and a few reruns, stored in a real SQLite file; plus a candor.toml with a
//! fingerprint, the reliability file evaluated from the history, and a ledger.
//! Shared by tests/it/report.rs and benches/report.rs.

use std::path::Path;
use std::time::Duration;

use candor::history::{Conditions, HistoryStore, NewRun, RunContent, Source, SqliteStore};
use candor::reliability::{ReliabilityFile, evaluate_history, write_atomic};
use candor::results::{Execution, Failure, Frame, Outcome};
use candor::stats::tiers::TierPolicy;
use jiff::Timestamp;
use proptest::prelude::RngCore;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// The shape of a generated history.
pub struct Shape {
    /// Tests.
    pub tests: usize,
    /// Runs.
    pub runs: usize,
    /// The RNG seed (print it).
    pub seed: u64,
}

/// Failure rates, per mille, that tests are given in turn: most never fail.
const RATES: [u64; 10] = [0, 0, 0, 0, 0, 10, 50, 143, 300, 1000];

/// The id of test `i`.
pub fn test_id(i: usize) -> String {
    format!("tests/test_mod{:03}.py::test_case_{i:05}", i % 97)
}

fn rate(i: usize) -> u64 {
    RATES[i % RATES.len()]
}

fn rng(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

fn run(number: usize, source: Source, branch: &str) -> NewRun {
    NewRun {
        commit: Some(format!("{:040x}", number / 3)),
        branch: Some(branch.to_owned()),
        merge_base: None,
        started_at: Timestamp::from_second(1_780_000_000 + number as i64 * 3_600).unwrap(),
        source,
        ci_provider: Some("github-actions".into()),
        job: Some("test".into()),
        ci_run: candor::history::CiRun::default(),
        workers: Some(4),
        seed: None,
        conditions: Conditions {
            ci: true,
            runner: Some("pytest".into()),
            os: Some("linux".into()),
        },
        format: Some("junit".into()),
        producer: Some("pytest".into()),
        source_path: None,
    }
}

fn failure(i: usize, draw: u64) -> Failure {
    let file = format!("tests/test_mod{:03}.py", i % 97);
    let (exception, message, line) = if draw.is_multiple_of(4) {
        ("AssertionError", format!("assert {} == 3", draw % 7), 40)
    } else {
        (
            "TimeoutError",
            format!(
                "timed out after {}ms waiting for port {}",
                100 + draw % 50,
                8000 + draw % 9
            ),
            12,
        )
    };
    let frame = Frame {
        file: file.clone(),
        line: Some(line),
        function: Some(format!("test_case_{i:05}")),
    };
    Failure {
        exception: Some(exception.to_owned()),
        message: message.clone(),
        text: format!("{file}:{line}: in test_case_{i:05}\nE   {exception}: {message}"),
        frames: vec![frame.clone()],
        failing_frame: Some(frame),
    }
}

/// Writes the history to `dir/.candor/history.db`, and candor.toml, the reliability file
/// and the ledger into `dir`.
pub fn generate(dir: &Path, shape: &Shape) {
    let mut store =
        SqliteStore::open(dir.join(".candor/history.db"), Duration::from_secs(30)).unwrap();
    let mut rng = rng(shape.seed);
    for number in 0..shape.runs {
        let branch = if number % 10 == 9 { "feature" } else { "main" };
        let mut session = store
            .begin_ingest(&run(number, Source::Ci, branch))
            .unwrap();
        for i in 0..shape.tests {
            let draw = rng.next_u64();
            let red = draw % 1000 < rate(i);
            let outcome = match (red, draw % 13) {
                (false, _) => Outcome::Pass,
                (true, 0) => Outcome::FlakyPass,
                (true, 1) => Outcome::Error,
                (true, _) => Outcome::Fail,
            };
            let mut execution = Execution::new(test_id(i), outcome);
            execution.duration = Some(0.01 + (draw >> 20) as f64 % 500.0 / 1000.0);
            if outcome != Outcome::Pass {
                execution.failure = Some(Box::new(failure(i, draw >> 8)));
            }
            session.add(execution).unwrap();
        }
        session
            .commit(&RunContent {
                content_key: format!("run-{number}"),
                format: Some("junit".into()),
                producer: Some("pytest".into()),
            })
            .unwrap();
    }
    // One rerun of the flakiest-rated test, stored as a rerun run.
    let flaky = test_id(7);
    let mut session = store
        .begin_ingest(&run(shape.runs, Source::Rerun, "main"))
        .unwrap();
    let mut rerun = Execution::new(&flaky, Outcome::Pass);
    rerun.duration = Some(0.25);
    session.add(rerun).unwrap();
    session
        .commit(&RunContent {
            content_key: "rerun".into(),
            format: Some("junit".into()),
            producer: Some("pytest".into()),
        })
        .unwrap();

    std::fs::write(
        dir.join("candor.toml"),
        format!(
            r#"[[fingerprint]]
id = "FP-001"
test = "{flaky}"
exception = "TimeoutError"
message_regex = 'timed out after \d+ms waiting for port \d+'
frame = "tests/test_mod007.py:12"
conditions = {{}}
last_seen = 2026-11-20
owner = "@platform"
"#
        ),
    )
    .unwrap();
    let policy = TierPolicy::default();
    let evaluation = evaluate_history(&store, &ReliabilityFile::default(), &policy).unwrap();
    write_atomic(
        &dir.join(".ci/test-reliability.yaml"),
        &evaluation.file.render(&policy),
    )
    .unwrap();
    std::fs::write(
        dir.join(".flake-ledger.tsv"),
        format!(
            "# date\tsha\ttest_id\tfp\tfirst_fail_sha256\tseed\tworkers\tattempts\toutcome\n\
             2026-11-30\t{:07x}\t{flaky}\tFP-001\t{}\t-\t4\t2\tpass\n",
            shape.runs / 3,
            "ab".repeat(32)
        ),
    )
    .unwrap();
}
