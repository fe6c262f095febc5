//! Helpers shared by the JavaScript runner tests (`tests/it/js_<runner>.rs`): a fresh copy of
//! `tests/fixtures/js/<runner>` per test, made a git repository, whose `node_modules` is a
//! symbolic link to the fixture's own (installed by `npm ci` from the committed
//! package-lock.json; `.ci/run` does it). A link, not an install per test: `npm ci` takes
//! seconds per copy, a link nothing, and jest does not crawl into a linked folder.
//!
//! The fixtures' flaky test draws from a seeded sequence: `CANDOR_FIXTURE_SEED` and a
//! counter file `CANDOR_FIXTURE_COUNTER` (outside the repository) make its n-th run's
//! outcome [`flaky_fails`]`(seed, n)`.

#![allow(dead_code, reason = "each test crate uses a different subset")]

use std::path::{Path, PathBuf};

use crate::triage_support::{Suite, git};

/// The variables the fixtures' flaky test reads.
pub const SEED_VARIABLE: &str = "CANDOR_FIXTURE_SEED";
/// The counter file's variable.
pub const COUNTER_VARIABLE: &str = "CANDOR_FIXTURE_COUNTER";

/// The fixture project of `runner`, copied without its `node_modules`, which is linked.
/// Panics, saying what to run, when the fixture's packages are not installed.
pub fn project(runner: &str) -> Suite {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/js")
        .join(runner);
    let modules = source.join("node_modules");
    assert!(
        modules.join(".bin").is_dir(),
        "{} is not installed: run `npm ci` in {} (.ci/run does)",
        modules.display(),
        source.display()
    );
    let temp = tempfile::tempdir().expect("a temp dir");
    let repo = temp.path().join("repo");
    copy_without_modules(&source, &repo);
    std::os::unix::fs::symlink(&modules, repo.join("node_modules")).expect("link node_modules");
    std::fs::write(repo.join(".gitignore"), "node_modules\n.candor/\n").expect("write .gitignore");
    git(&repo, &["init", "--quiet", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "--quiet", "-m", "the fixture"]);
    git(&repo, &["checkout", "--quiet", "-b", "change"]);
    Suite { temp, repo }
}

fn copy_without_modules(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy");
    for entry in std::fs::read_dir(from).expect("read the fixture") {
        let entry = entry.expect("a fixture entry");
        if entry.file_name() == "node_modules" {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_without_modules(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a fixture file");
        }
    }
}

/// Commits everything in the repository.
pub fn commit(suite: &Suite, message: &str) {
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", message]);
}

/// The flaky test's variables for `seed`, with the counter in the suite's temp folder.
pub fn flaky_vars(suite: &Suite, seed: u32) -> Vec<(String, String)> {
    vec![
        (SEED_VARIABLE.to_owned(), seed.to_string()),
        (
            COUNTER_VARIABLE.to_owned(),
            counter(suite).display().to_string(),
        ),
    ]
}

/// The counter file of the suite's flaky test.
pub fn counter(suite: &Suite) -> PathBuf {
    suite.temp.path().join("flaky-counter")
}

/// mulberry32, as the fixtures' flaky.js computes it.
fn mulberry32(a: i64) -> f64 {
    #[expect(clippy::cast_possible_truncation, reason = "JavaScript's `a |= 0`")]
    let a = (a as i32)
        .wrapping_add(0x6d2b_79f5_u32.cast_signed())
        .cast_unsigned();
    let mut t = (a ^ (a >> 15)).wrapping_mul(1 | a);
    t = t.wrapping_add((t ^ (t >> 7)).wrapping_mul(0x3d | t)) ^ t;
    f64::from(t ^ (t >> 14)) / 4_294_967_296.0
}

/// Whether the flaky test's `n`-th run (from 0) under `seed` fails: about 1 in 4.
pub fn flaky_fails(seed: u32, n: u32) -> bool {
    mulberry32(i64::from(seed) * 7919 + i64::from(n)) < 0.25
}

/// `vars` as the `&[(&str, &str)]` that `Suite::candor` takes.
pub fn borrowed(vars: &[(String, String)]) -> Vec<(&str, &str)> {
    vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}
