//! The merge lane's parts on real git repositories holding real pytest suites: the diff
//! rules through `candor lint diff`, the fixture lock through `candor lock fixtures` and
//! `gate::fixture_drift`, cassettes, human-owned files and the ledger through
//! `gate::human_owned_changes`, and freezes through `candor freeze check`. Each test builds
//! its own repository in a temporary directory.

use crate::triage_support;

use std::process::Command;

use candor::gate::cassettes::{LossKind, Pin};
use candor::gate::diff::FileStatus;
use candor::gate::human_owned::Role;
use candor::gate::locks::DriftKind;
use candor::gate::{self, GateError};
use candor::git::{Git, GitError};
use triage_support::{Ran, Suite, empty, git};

/// A pytest suite whose cart total reads a price fixture.
const CART_TEST: &str = "import json
from pathlib import Path

FIXTURES = Path(__file__).parent / \"fixtures\"


def total(items):
    prices = json.loads((FIXTURES / \"prices.json\").read_text())
    return sum(prices[item] for item in items)


def test_total():
    assert total([\"apple\", \"pear\"]) == 8


def test_empty():
    assert total([]) == 0
";

const PRICES: &str = "{\"apple\": 3, \"pear\": 5}\n";

fn ledger_line(date: &str, sha: &str) -> String {
    format!(
        "{date}\t{sha}\ttests/test_cart.py::test_total\tFP-001\t{}\trs=118204\t4\t2\tpass\n",
        "9e1c".repeat(16)
    )
}

/// A pytest suite committed on `main` with `candor_toml`, its fixture lock written by
/// `candor lock fixtures`, and a branch `change` checked out. Returns the base commit.
fn pytest_repo(candor_toml: &str) -> (Suite, String) {
    let suite = empty();
    suite.write("candor.toml", candor_toml);
    suite.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    );
    suite.write("tests/test_cart.py", CART_TEST);
    suite.write("tests/fixtures/prices.json", PRICES);
    suite.write(
        ".flake-ledger.tsv",
        &format!(
            "{}\n{}{}",
            candor::ledger::HEADER,
            ledger_line("2026-10-06", "a41f9c2"),
            ledger_line("2026-10-07", "b52e0d3")
        ),
    );
    suite.write(".gitignore", ".candor/\n__pycache__/\n.pytest_cache/\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    let locked = suite.candor(&["lock", "fixtures"], &[]);
    assert_eq!(locked.exit, 0, "{locked:?}");
    let base = commit(&suite, "the suite");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    (suite, base)
}

fn commit(suite: &Suite, message: &str) -> String {
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", message]);
    git(&suite.repo, &["rev-parse", "HEAD"])
}

/// Runs the suite with pytest; whether it passed.
fn pytest_passes(suite: &Suite) -> bool {
    let output = Command::new("python3")
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
        ])
        .current_dir(&suite.repo)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    output.status.success()
}

fn lint(suite: &Suite, args: &[&str]) -> Ran {
    let mut all = vec!["lint", "diff"];
    all.extend_from_slice(args);
    suite.candor(&all, &[])
}

fn read(suite: &Suite, path: &str) -> String {
    std::fs::read_to_string(suite.repo.join(path)).expect("the file exists")
}

/// The 1-based line of the first line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|line| line.contains(needle))
        .expect("the needle is there")
        + 1
}

#[test]
fn a_flaky_mark_added_to_a_test_is_refused() {
    let (suite, base) = pytest_repo("");
    let flaky = CART_TEST
        .replacen("import json\n", "import json\n\nimport pytest\n", 1)
        .replacen(
            "def test_total():",
            "@pytest.mark.flaky(reruns=3)\ndef test_total():",
            1,
        );
    suite.write("tests/test_cart.py", &flaky);
    let head = commit(&suite, "retry the total");
    let mark_line = line_of(&flaky, "mark.flaky");

    let ran = lint(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert!(
        ran.stdout.contains(&format!(
            "tests/test_cart.py:{mark_line}: forbidden-mark: `mark.flaky` reruns"
        )),
        "{ran:?}"
    );
    let json = lint(&suite, &["--format", "json"]);
    assert_eq!(json.exit, 1, "{json:?}");
    let findings = json.lines_of("finding");
    let [finding] = findings.as_slice() else {
        panic!("one finding: {json:?}");
    };
    assert_eq!(finding["file"], "tests/test_cart.py");
    assert_eq!(finding["line"], mark_line);
    assert_eq!(finding["rule"], "forbidden-mark");
    assert_eq!(finding["kind"], "mark");
    let summary = &json.lines_of("lint-diff")[0];
    assert_eq!(summary["base"], base.as_str());
    assert_eq!(summary["head"], head.as_str());

    // Taking the mark out again leaves a change with nothing to refuse.
    suite.write("tests/test_cart.py", &CART_TEST.replace("== 8", "== 3 + 5"));
    commit(&suite, "no retry after all");
    let clean = lint(&suite, &[]);
    assert_eq!(clean.exit, 0, "{clean:?}");
    assert!(clean.stdout.contains("no findings"), "{clean:?}");
}

#[test]
fn a_fixture_edited_without_its_lock_is_drift_even_with_the_suite_green() {
    let (suite, base) = pytest_repo("");
    assert!(pytest_passes(&suite), "the base suite passes");
    suite.write(
        "tests/fixtures/prices.json",
        "{\"apple\": 3, \"pear\": 5, \"plum\": 7}\n",
    );
    suite.write("tests/fixtures/extra.csv", "a,b\n");
    let head = commit(&suite, "more prices");
    assert!(pytest_passes(&suite), "the change's suite passes too");

    let repo = Git::new(&suite.repo);
    let policy = gate::base_policy(&repo, &base).expect("the base policy");
    let drift = gate::fixture_drift(&repo, &head, &policy.lane).expect("hashes");
    let kinds: Vec<_> = drift.iter().map(|d| (d.path.as_str(), d.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("tests/fixtures/extra.csv", DriftKind::Added),
            ("tests/fixtures/prices.json", DriftKind::Changed),
        ]
    );
    assert!(
        gate::fixture_drift(&repo, &base, &policy.lane)
            .expect("hashes")
            .is_empty()
    );

    let check = suite.candor(&["lock", "fixtures", "--check"], &[]);
    assert_eq!(check.exit, 1, "{check:?}");
    assert!(
        check
            .stdout
            .contains("tests/fixtures/prices.json: changed, and the lock was not"),
        "{check:?}"
    );
    let lock_before = read(&suite, "tests/fixtures.lock.json");

    // Refreshing the lock ends the drift, and makes the lock a human-owned change.
    let wrote = suite.candor(&["lock", "fixtures", "--format", "json"], &[]);
    assert_eq!(wrote.exit, 0, "{wrote:?}");
    assert_eq!(wrote.lines_of("lock")[0]["files"], 2);
    assert_ne!(read(&suite, "tests/fixtures.lock.json"), lock_before);
    let relocked = commit(&suite, "relock");
    assert!(
        gate::fixture_drift(&repo, &relocked, &policy.lane)
            .expect("hashes")
            .is_empty()
    );
    assert_eq!(suite.candor(&["lock", "fixtures", "--check"], &[]).exit, 0);
    let diff = gate::read_change(&repo, &base, &relocked).expect("the diff");
    let owned = gate::human_owned_changes(&repo, &base, &relocked, &policy, &diff).expect("read");
    let owned: Vec<_> = owned.iter().map(|c| (c.path.as_str(), c.role)).collect();
    assert_eq!(owned, [("tests/fixtures.lock.json", Role::FixtureLock)]);

    // A deleted fixture is drift too.
    std::fs::remove_file(suite.repo.join("tests/fixtures/extra.csv")).expect("delete");
    let deleted = commit(&suite, "drop the csv");
    let drift = gate::fixture_drift(&repo, &deleted, &policy.lane).expect("hashes");
    assert_eq!(drift.len(), 1);
    assert_eq!(drift[0].kind, DriftKind::Removed);
}

#[test]
fn a_freeze_added_to_candor_toml_is_a_human_owned_change() {
    let (suite, base) = pytest_repo("[lane]\nmin_replays = 3\n");
    let repo = Git::new(&suite.repo);
    suite.write("tests/test_more.py", "def test_more():\n    assert True\n");
    let tests_only = commit(&suite, "a test");
    let policy = gate::base_policy(&repo, &base).expect("the base policy");
    let diff = gate::read_change(&repo, &base, &tests_only).expect("the diff");
    assert!(
        gate::human_owned_changes(&repo, &base, &tests_only, &policy, &diff)
            .expect("read")
            .is_empty()
    );

    let mut toml = read(&suite, "candor.toml");
    toml.push_str("\n[[freeze]]\ntest = \"tests/test_cart.py::test_total\"\nowner = \"agent\"\nexpires = 2099-01-01\nticket = \"NONE-1\"\n");
    suite.write("candor.toml", &toml);
    let frozen = commit(&suite, "freeze the total");
    let diff = gate::read_change(&repo, &base, &frozen).expect("the diff");
    let owned = gate::human_owned_changes(&repo, &base, &frozen, &policy, &diff).expect("read");
    let owned: Vec<_> = owned
        .iter()
        .map(|c| (c.path.as_str(), c.role, c.status))
        .collect();
    assert_eq!(owned, [("candor.toml", Role::Policy, FileStatus::Modified)]);
    // The base's policy has no freeze: the change's own does not count.
    assert!(
        gate::base_policy(&repo, &base)
            .expect("policy")
            .freezes
            .is_empty()
    );
    assert_eq!(
        gate::base_policy(&repo, &frozen)
            .expect("policy")
            .freezes
            .len(),
        1
    );
}

#[test]
fn a_deleted_ledger_line_is_flagged_and_an_appended_one_is_not() {
    let (suite, base) = pytest_repo("");
    let repo = Git::new(&suite.repo);
    let policy = gate::base_policy(&repo, &base).expect("the base policy");
    let original = read(&suite, ".flake-ledger.tsv");

    suite.write(
        ".flake-ledger.tsv",
        &format!("{original}{}", ledger_line("2026-10-08", "c63f1e4")),
    );
    let appended = commit(&suite, "a rerun");
    let diff = gate::read_change(&repo, &base, &appended).expect("the diff");
    assert!(
        gate::human_owned_changes(&repo, &base, &appended, &policy, &diff)
            .expect("read")
            .is_empty(),
        "appending is allowed"
    );

    let first_entry = ledger_line("2026-10-06", "a41f9c2");
    suite.write(".flake-ledger.tsv", &original.replace(&first_entry, ""));
    let deleted = commit(&suite, "forget a rerun");
    let diff = gate::read_change(&repo, &base, &deleted).expect("the diff");
    let owned = gate::human_owned_changes(&repo, &base, &deleted, &policy, &diff).expect("read");
    let [change] = owned.as_slice() else {
        panic!("{owned:?}");
    };
    assert_eq!(
        (change.path.as_str(), change.role),
        (".flake-ledger.tsv", Role::Ledger)
    );
    let edit = change.ledger_line.as_ref().expect("the first altered line");
    assert_eq!(edit.line, 2);
    assert_eq!(edit.old, first_entry.trim_end());
}

#[test]
fn time_sleep_in_a_test_is_refused_only_when_the_base_turns_the_preset_on() {
    let sleepy = CART_TEST
        .replacen("import json\n", "import json\nimport time\n", 1)
        .replacen(
            "def test_empty():\n",
            "def test_empty():\n    time.sleep(0.01)\n",
            1,
        );

    let (suite, _) = pytest_repo("[lane]\npresets = [\"no-sleep-wait\"]\n");
    suite.write("tests/test_cart.py", &sleepy);
    commit(&suite, "wait a little");
    let ran = lint(&suite, &["--format", "json"]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    let findings = ran.lines_of("finding");
    let [finding] = findings.as_slice() else {
        panic!("{ran:?}");
    };
    assert_eq!(finding["rule"], "no-sleep-wait");
    assert_eq!(finding["kind"], "preset");
    assert_eq!(finding["line"], line_of(&sleepy, "time.sleep"));

    // The change turning the preset on itself does not count: policy comes from the base.
    let (suite, _) = pytest_repo("");
    suite.write("candor.toml", "[lane]\npresets = [\"no-sleep-wait\"]\n");
    suite.write("tests/test_cart.py", &sleepy);
    commit(&suite, "wait a little, and police it");
    let ran = lint(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
}

#[test]
fn the_bases_bans_apply_with_their_message_and_source() {
    let (suite, base) = pytest_repo(
        "[[ban]]\nid = \"no-live-prices\"\npaths = [\"tests/**/*.py\"]\npattern = 'requests\\.get\\('\nmessage = \"Read prices from tests/fixtures/prices.json\"\nsource = \"INC-42, 2026-09\"\n",
    );
    suite.write(
        "tests/test_live.py",
        "import requests\n\n\ndef test_live():\n    assert requests.get(\"https://prices.example.invalid\").ok\n",
    );
    suite.write("src/fetch.py", "import requests\nrequests.get('x')\n");
    commit(&suite, "live prices");
    let ran = lint(&suite, &["--base", "main"]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert!(
        ran.stdout.contains("tests/test_live.py:5: no-live-prices: Read prices from tests/fixtures/prices.json (from INC-42, 2026-09)"),
        "{ran:?}"
    );
    assert!(!ran.stdout.contains("src/fetch.py"), "{ran:?}");
    // `--base` is a merge base: what main gains after the fork is not the change's.
    git(&suite.repo, &["checkout", "--quiet", "main"]);
    suite.write(
        "tests/test_cart.py",
        &CART_TEST.replace("test_empty", "test_nothing"),
    );
    commit(&suite, "main moves on");
    git(&suite.repo, &["checkout", "--quiet", "change"]);
    let json = lint(&suite, &["--base", "main", "--format", "json"]);
    assert_eq!(json.lines_of("lint-diff")[0]["base"], base.as_str());
    assert_eq!(json.lines_of("finding").len(), 1, "{json:?}");
}

#[test]
fn an_expired_freeze_fails_freeze_check() {
    let (suite, _) = pytest_repo("");
    suite.write(
        "tests/test_cart.py",
        &CART_TEST
            .replacen("import json\n", "import json\n\nimport pytest\n", 1)
            .replacen(
                "def test_total():",
                "@pytest.mark.skip(reason=\"prices feed, PLAT-7\")\ndef test_total():",
                1,
            ),
    );
    suite.tier("tests/test_cart.py::test_empty", "quarantined");
    suite.write(
        "candor.toml",
        "[[freeze]]\ntest = \"tests/test_cart.py::test_total\"\nowner = \"platform\"\nexpires = 2026-12-15\nticket = \"PLAT-7\"\n\n[[freeze]]\ntest = \"tests/test_cart.py::test_empty\"\nowner = \"platform\"\nexpires = 2026-12-20\nreplay = \"tests/replays/empty.json\"\n",
    );
    assert!(pytest_passes(&suite), "the skipped suite is green");

    let before = suite.candor(&["freeze", "check"], &[("CANDOR_TODAY", "2026-12-14")]);
    assert_eq!(before.exit, 0, "{before:?}");
    assert!(
        before
            .stdout
            .contains("expiring tests/test_cart.py::test_total"),
        "{before:?}"
    );

    let after = suite.candor(&["freeze", "check"], &[("CANDOR_TODAY", "2026-12-16")]);
    assert_eq!(after.exit, 1, "{after:?}");
    assert!(
        after.stdout.contains("expired  tests/test_cart.py::test_total  expired 2026-12-15 (yesterday); held: `mark.skip` at tests/test_cart.py:"),
        "{after:?}"
    );
    assert!(
        after
            .stdout
            .contains("expiring tests/test_cart.py::test_empty"),
        "{after:?}"
    );

    let json = suite.candor(
        &["freeze", "check", "--format", "json"],
        &[("CANDOR_TODAY", "2026-12-21")],
    );
    assert_eq!(json.exit, 1, "{json:?}");
    let freezes = json.lines_of("freeze");
    assert_eq!(freezes[0]["state"], "expired");
    assert_eq!(freezes[0]["skip_mark"]["mark"], "mark.skip");
    assert_eq!(freezes[1]["state"], "expired", "quarantined holds it too");
    assert_eq!(freezes[1]["quarantined"], true);
    assert_eq!(json.lines_of("freeze-check")[0]["expired"], 2);

    // Once the skip is gone and the tier is back, an old freeze only lapses.
    suite.write("tests/test_cart.py", CART_TEST);
    suite.tier("tests/test_cart.py::test_empty", "trusted");
    let lapsed = suite.candor(&["freeze", "check"], &[("CANDOR_TODAY", "2026-12-21")]);
    assert_eq!(lapsed.exit, 0, "{lapsed:?}");
    assert!(lapsed.stdout.contains("lapsed"), "{lapsed:?}");
}

#[test]
fn a_freeze_without_an_expiry_is_a_configuration_error() {
    let suite = empty();
    suite.write(
        "candor.toml",
        "[lane]\nmin_replays = 3\n\n[[freeze]]\ntest = \"tests/test_a.py::test_a\"\nowner = \"platform\"\nticket = \"PLAT-1\"\n",
    );
    let ran = suite.candor(&["freeze", "check"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("candor.toml:4:"), "{ran:?}");
    assert!(ran.stderr.contains("has no `expires`"), "{ran:?}");
}

const CASSETTE: &str = r#"{
  "schema": "cassette.v1",
  "test": "tests/test_cart.py::test_total",
  "clock": "2026-10-07T08:00:00Z",
  "rng_seed": 7,
  "fs": {"tests/fixtures/prices.json": "0000000000000000000000000000000000000000000000000000000000000000"},
  "http": []
}
"#;

#[test]
fn cassettes_deleted_or_unpinned_are_losses_and_bad_ones_are_located() {
    let suite = empty();
    suite.write("tests/test_cart.py", CART_TEST);
    suite.write("tests/cassettes/total.json", CASSETTE);
    suite.write(
        "tests/cassettes/empty.json",
        &CASSETTE.replace("test_total", "test_empty"),
    );
    suite.write("tests/cassettes/README.md", "not a cassette\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    let locked = suite.candor(&["lock", "cassettes", "--format", "json"], &[]);
    assert_eq!(locked.exit, 0, "{locked:?}");
    assert_eq!(locked.lines_of("lock")[0]["files"], 2);
    let base = commit(&suite, "cassettes");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);

    std::fs::remove_file(suite.repo.join("tests/cassettes/empty.json")).expect("delete");
    suite.write(
        "tests/cassettes/total.json",
        &CASSETTE.replace("\"2026-10-07T08:00:00Z\"", "null"),
    );
    let head = commit(&suite, "unpin");
    let repo = Git::new(&suite.repo);
    let policy = gate::base_policy(&repo, &base).expect("the default policy");
    let check = gate::cassette_check(&repo, &base, &head, &policy.lane).expect("read");
    assert!(check.invalid.is_empty());
    let losses: Vec<_> = check
        .losses
        .iter()
        .map(|l| (l.path.as_str(), l.kind))
        .collect();
    assert_eq!(
        losses,
        [
            ("tests/cassettes/empty.json", LossKind::Deleted),
            (
                "tests/cassettes/total.json",
                LossKind::PinRemoved(Pin::Clock)
            ),
        ]
    );
    let drift: Vec<_> = check
        .drift
        .iter()
        .map(|d| (d.path.as_str(), d.kind))
        .collect();
    assert_eq!(
        drift,
        [
            ("tests/cassettes/empty.json", DriftKind::Removed),
            ("tests/cassettes/total.json", DriftKind::Changed),
        ]
    );

    let lock_before = read(&suite, "tests/cassettes.lock.json");
    suite.write(
        "tests/cassettes/total.json",
        &CASSETTE.replace("\"rng_seed\": 7", "\"rng_seed\": \"7\""),
    );
    let ran = suite.candor(&["lock", "cassettes"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr.contains("tests/cassettes/total.json:5:"),
        "{ran:?}"
    );
    assert!(
        ran.stderr
            .contains("1 cassette is not valid cassette.v1; nothing was written"),
        "{ran:?}"
    );
    assert_eq!(read(&suite, "tests/cassettes.lock.json"), lock_before);
}

#[test]
fn odd_paths_binary_files_and_missing_newlines_in_a_real_diff() {
    let (suite, base) = pytest_repo("");
    suite.write(
        "tests/test spaced é.py",
        "import pytest\n\n@pytest.mark.skip\ndef test_x():\n    pass",
    );
    std::fs::write(
        suite.repo.join("tests/blob.bin"),
        [0u8, 159, 146, 150, 0, 1],
    )
    .expect("write");
    suite.write(
        "tests/tab\there.py",
        "def test_t():\n    pytest.skip('x')\n",
    );
    std::fs::remove_file(suite.repo.join("pyproject.toml")).expect("delete");
    let head = commit(&suite, "odd files");
    let repo = Git::new(&suite.repo);
    let diff = gate::read_change(&repo, &base, &head).expect("the diff");
    let files: Vec<_> = diff
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status, f.binary, f.added.len()))
        .collect();
    assert_eq!(
        files,
        [
            ("pyproject.toml", FileStatus::Deleted, false, 0),
            ("tests/blob.bin", FileStatus::Added, true, 0),
            ("tests/tab\there.py", FileStatus::Added, false, 2),
            ("tests/test spaced é.py", FileStatus::Added, false, 5),
        ]
    );
    let ran = lint(&suite, &["--format", "json"]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    let places: Vec<_> = ran
        .lines_of("finding")
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap_or("").to_owned(),
                f["line"].as_u64(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            ("tests/tab\there.py".to_owned(), Some(2)),
            ("tests/test spaced é.py".to_owned(), Some(3)),
        ]
    );
}

#[test]
fn git_show_reads_a_file_at_a_revision_or_says_there_is_none() {
    let (suite, base) = pytest_repo("");
    let repo = Git::new(&suite.repo);
    let prices = repo
        .show(&base, "tests/fixtures/prices.json")
        .expect("git runs");
    assert_eq!(prices.as_deref(), Some(PRICES.as_bytes()));
    assert_eq!(
        repo.show(&base, "tests/missing.py").expect("git runs"),
        None
    );
    assert_eq!(
        repo.show(&base, "tests").expect("git runs"),
        None,
        "a folder"
    );
    assert!(matches!(
        repo.show("0000000000000000000000000000000000000000", "candor.toml"),
        Err(GitError::UnknownRevision { .. })
    ));
    assert!(matches!(
        gate::read_change(&repo, "no-such-ref", &base),
        Err(GateError::Git(GitError::UnknownRevision { .. }))
    ));
}

#[test]
fn lint_diff_without_a_change_to_check_is_a_usage_error() {
    let outside = empty();
    let ran = outside.candor(&["lint", "diff"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("not in a git repository"), "{ran:?}");
    let (suite, _) = pytest_repo("");
    let ran = lint(&suite, &["--base", "no-such-branch"]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr.contains("--base no-such-branch names no commit"),
        "{ran:?}"
    );
    // A base whose candor.toml is broken cannot judge anything.
    git(&suite.repo, &["checkout", "--quiet", "main"]);
    suite.write("candor.toml", "[lane]\npresets = [\"no-sleeping\"]\n");
    let broken = commit(&suite, "a broken policy");
    git(&suite.repo, &["checkout", "--quiet", "-B", "change"]);
    suite.write("tests/test_more.py", "def test_more():\n    assert True\n");
    commit(&suite, "a test");
    let ran = lint(&suite, &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr
            .contains(&format!("{}:candor.toml:2:", &broken[..12])),
        "{ran:?}"
    );
    assert!(ran.stderr.contains("no-sleeping"), "{ran:?}");
}
