//! Reliability tiers end to end: generated histories replayed run by run into a real SQLite
//! history, the reliability file evaluated, written and read back every 25 runs.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use candor::history::{Conditions, HistoryStore, NewRun, RunContent, Source, SqliteStore};
use candor::reliability::{ReliabilityFile, evaluate_history, write_atomic};
use candor::results::{Execution, Outcome};
use candor::stats::tiers::{Tier, TierPolicy};
use jiff::Timestamp;
use proptest::test_runner::{RngAlgorithm, TestRng};
use rand_core_compat::next_below;

/// The seed of every generated history here; printed so a failure can be replayed.
const SEED: u64 = 20_261_129;

/// A seeded ChaCha stream from proptest's own RNG, so no extra dependency is needed.
mod rand_core_compat {
    use proptest::prelude::RngCore;
    use proptest::test_runner::TestRng;

    /// A uniform draw in `0..bound` (bound is small here, so modulo bias is negligible
    /// next to the 2^64 range).
    pub fn next_below(rng: &mut TestRng, bound: u64) -> u64 {
        rng.next_u64() % bound
    }
}

fn rng(seed: u64) -> TestRng {
    eprintln!("history seed {seed}");
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

fn run(number: u32) -> NewRun {
    NewRun {
        commit: Some(format!("{number:040x}")),
        branch: Some("main".into()),
        merge_base: None,
        started_at: Timestamp::from_second(1_780_000_000 + i64::from(number) * 3_600).unwrap(),
        source: Source::Ci,
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

/// A simulated test: its id and how often it fails, as `failures` in `out_of` runs.
struct Simulated {
    id: &'static str,
    failures: u64,
    out_of: u64,
}

const TESTS: [Simulated; 3] = [
    Simulated {
        id: "tests/test_pool.py::test_checkout_under_load",
        failures: 1,
        out_of: 7,
    },
    Simulated {
        id: "tests/test_cache.py::test_eviction",
        failures: 3,
        out_of: 100,
    },
    Simulated {
        id: "tests/test_money.py::test_rounding",
        failures: 0,
        out_of: 1,
    },
];

fn ingest_run(store: &mut SqliteStore, number: u32, rng: &mut TestRng) {
    let mut session = store.begin_ingest(&run(number)).unwrap();
    for test in &TESTS {
        let failed = next_below(rng, test.out_of) < test.failures;
        let outcome = if failed { Outcome::Fail } else { Outcome::Pass };
        session.add(Execution::new(test.id, outcome)).unwrap();
    }
    session
        .commit(&RunContent {
            content_key: format!("run-{number}"),
            format: None,
            producer: None,
        })
        .unwrap();
}

/// Replays `runs` runs, evaluating and rewriting the file after every `every` runs, and
/// returns each test's tier at each evaluation.
fn replay(dir: &Path, runs: u32, every: u32) -> Vec<(u32, Vec<Tier>)> {
    let mut store = SqliteStore::open(dir.join("history.db"), Duration::from_secs(5)).unwrap();
    let file = dir.join(".ci/test-reliability.yaml");
    let policy = TierPolicy::default();
    let mut rng = rng(SEED);
    let mut checkpoints = Vec::new();
    for number in 1..=runs {
        ingest_run(&mut store, number, &mut rng);
        if number % every == 0 {
            let previous = ReliabilityFile::load(&file).unwrap();
            let evaluation = evaluate_history(&store, &previous, &policy).unwrap();
            write_atomic(&file, &evaluation.file.render(&policy)).unwrap();
            let tiers = TESTS
                .iter()
                .map(|t| {
                    evaluation
                        .file
                        .tests
                        .iter()
                        .find(|e| e.id == t.id)
                        .unwrap()
                        .tier
                })
                .collect();
            checkpoints.push((number, tiers));
        }
    }
    checkpoints
}

fn first_at(checkpoints: &[(u32, Vec<Tier>)], test: usize, tier: Tier) -> Option<u32> {
    checkpoints
        .iter()
        .find(|(_, tiers)| tiers[test] == tier)
        .map(|(run, _)| *run)
}

/// The Markdown table docs/reliability.md shows.
fn table(checkpoints: &[(u32, Vec<Tier>)]) -> String {
    let mut out = String::from(
        "| after run | fails 1 in 7 | fails 3% | never fails |\n| --- | --- | --- | --- |\n",
    );
    let mut last: Option<&Vec<Tier>> = None;
    for (run, tiers) in checkpoints {
        // Only the rows where something moved, plus the first and the last.
        if last == Some(tiers) && *run != checkpoints.last().unwrap().0 {
            continue;
        }
        let _ = writeln!(
            out,
            "| {run} | {} | {} | {} |",
            tiers[0], tiers[1], tiers[2]
        );
        last = Some(tiers);
    }
    out
}

#[test]
fn replayed_histories_end_in_the_tiers_their_failure_rates_earn() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoints = replay(dir.path(), 400, 25);
    let rendered = table(&checkpoints);
    eprintln!("{rendered}");

    // Everyone starts at the default tier, probation.
    assert_eq!(checkpoints[0].0, 25);
    assert!(
        checkpoints[0].1.iter().all(|t| *t <= Tier::Probation),
        "{rendered}"
    );

    // 1 in 7: quarantined early (one drop, on the first evaluation with 20+ runs over
    // budget) and never back.
    let quarantined = first_at(&checkpoints, 0, Tier::Quarantined).expect("1-in-7 is quarantined");
    assert!(quarantined <= 50, "{rendered}");
    assert!(
        checkpoints
            .iter()
            .filter(|(run, _)| *run >= quarantined)
            .all(|(_, t)| t[0] == Tier::Quarantined)
    );

    // 3%: probation or lower at the end, never trusted.
    assert!(
        checkpoints.iter().all(|(_, t)| t[1] <= Tier::Probation),
        "{rendered}"
    );
    assert!(checkpoints.last().unwrap().1[1] <= Tier::Probation);

    // Never failing: trusted exactly when a full window (200 runs) inside the budget has
    // been seen, not a checkpoint earlier.
    assert_eq!(
        first_at(&checkpoints, 2, Tier::Trusted),
        Some(200),
        "{rendered}"
    );
    assert!(
        checkpoints
            .iter()
            .filter(|(run, _)| *run < 200)
            .all(|(_, t)| t[2] == Tier::Probation)
    );

    // docs/reliability.md shows this very table.
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reliability.md"))
            .unwrap();
    assert!(
        docs.contains(&rendered),
        "docs/reliability.md must show the simulation table:\n{rendered}"
    );
}

#[test]
fn the_same_history_and_previous_file_give_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut store =
        SqliteStore::open(dir.path().join("history.db"), Duration::from_secs(5)).unwrap();
    let mut rng = rng(SEED + 1);
    for number in 1..=60 {
        ingest_run(&mut store, number, &mut rng);
    }
    let policy = TierPolicy::default();
    let previous = ReliabilityFile::parse(
        "tests:\n  - id: tests/test_cache.py::test_eviction\n    tier: trusted\n    owner: cache-team\n    note: \"watch: eviction races\"\n    runbook: {url: 'https://wiki/cache'}\n  - id: tests/test_removed.py::test_gone\n    tier: quarantined\n    ticket: PLAT-9\n",
        Path::new("previous.yaml"),
    )
    .unwrap();
    let first = evaluate_history(&store, &previous, &policy)
        .unwrap()
        .file
        .render(&policy);
    let second = evaluate_history(&store, &previous, &policy)
        .unwrap()
        .file
        .render(&policy);
    assert_eq!(first, second);
    // Human fields survive, unknown ones too; the vanished test stays, marked stale.
    assert!(first.contains("    owner: cache-team\n"), "{first}");
    assert!(
        first.contains("    note: 'watch: eviction races'\n"),
        "{first}"
    );
    assert!(
        first.contains("    runbook:\n      url: https://wiki/cache\n"),
        "{first}"
    );
    assert!(
        first.contains("  - id: tests/test_removed.py::test_gone\n    tier: quarantined\n"),
        "{first}"
    );
    assert!(
        first.contains("    stale: true\n    ticket: PLAT-9\n"),
        "{first}"
    );
}

#[test]
fn a_failed_write_leaves_the_old_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("test-reliability.yaml");
    std::fs::write(&file, "tests: []\n").unwrap();
    // A directory where the temporary file's rename target is: the rename fails.
    let blocked = dir.path().join("blocked");
    std::fs::create_dir(&blocked).unwrap();
    std::fs::write(blocked.join("keep"), "x").unwrap();
    assert!(write_atomic(&blocked, "new").is_err());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "tests: []\n");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        2,
        "no temporary file left behind: {leftovers:?}"
    );
}
