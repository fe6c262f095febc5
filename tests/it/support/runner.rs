//! Helpers shared by the runner tests: a fresh copy of a fixture project per test, the
//! hostile ids, and reading a report back through the real parsers.

#![allow(dead_code, reason = "each test crate uses a different subset")]

use std::path::{Path, PathBuf};
use std::time::Duration;

use candor::results::{Outcome, ParseOptions, parse_all};
use candor::runner::{RunReport, RunnerError};

/// Test ids that a shell would turn into commands. Each must reach the runner as one
/// literal argument; none may create a `pwned` file. (No `rm -rf`: if the code under test
/// were wrong, the test must not be able to destroy anything.)
pub const HOSTILE: [&str; 4] = [
    "x; touch pwned",
    "$(touch pwned)",
    "`touch pwned`",
    "x && touch pwned || touch pwned",
];

/// Generous enough for a cold build of a fixture on a busy two-core machine; it only
/// stops a hung runner from hanging the test suite.
pub const TIMEOUT: Option<Duration> = Some(Duration::from_secs(300));

/// A temporary directory holding a copy of `tests/fixtures/runner/<name>` at
/// `<temp>/repo`, and an empty `<temp>/scratch`.
pub struct Fixture {
    pub temp: tempfile::TempDir,
    pub repo: PathBuf,
    pub scratch: PathBuf,
}

pub fn fixture(name: &str) -> Fixture {
    let temp = tempfile::tempdir().expect("a temp dir");
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runner")
        .join(name);
    let repo = temp.path().join("repo");
    copy_dir(&source, &repo);
    let scratch = temp.path().join("scratch");
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    Fixture {
        temp,
        repo,
        scratch,
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy");
    for entry in std::fs::read_dir(from).expect("read the fixture") {
        let entry = entry.expect("a fixture entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a fixture file");
        }
    }
}

/// Every file under `dir` whose name starts with `pwned`.
pub fn pwned_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(pwned_files(&path));
        } else if entry.file_name().to_string_lossy().starts_with("pwned") {
            found.push(path);
        }
    }
    found
}

/// The report read through `results::parse_all`, as sorted (id, outcome) pairs.
pub fn outcomes(report: &RunReport) -> Vec<(String, Outcome)> {
    let file = std::fs::File::open(&report.report)
        .unwrap_or_else(|e| panic!("open the report {}: {e}", report.report.display()));
    let (executions, _) = parse_all(file, &ParseOptions::default())
        .unwrap_or_else(|e| panic!("parse the report {}: {e}", report.report.display()));
    let mut pairs: Vec<(String, Outcome)> = executions
        .into_iter()
        .map(|e| (e.test_id, e.outcome))
        .collect();
    pairs.sort();
    pairs
}

/// Expected (id, outcome) pairs, sorted.
pub fn expected(pairs: &[(&str, Outcome)]) -> Vec<(String, Outcome)> {
    let mut pairs: Vec<(String, Outcome)> =
        pairs.iter().map(|(id, o)| ((*id).to_owned(), *o)).collect();
    pairs.sort();
    pairs
}

/// Every log of a run, concatenated, for assertions on what the runner said.
pub fn logs(report: &RunReport) -> String {
    report
        .invocations
        .iter()
        .map(|i| std::fs::read_to_string(&i.log).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether some recorded argv holds `element` as one whole argument.
pub fn argv_holds(report: &RunReport, element: &str) -> bool {
    report
        .invocations
        .iter()
        .any(|i| i.argv.iter().any(|a| a == element))
}

/// Every argv a run's children received: from the report, or, for a runner that could not
/// run, from the `# argv:` header of the log its error names.
pub fn ran_argvs(result: &Result<RunReport, RunnerError>) -> Vec<Vec<String>> {
    match result {
        Ok(report) => report.invocations.iter().map(|i| i.argv.clone()).collect(),
        Err(RunnerError::CouldNotRun(not_run)) => {
            let log = std::fs::read_to_string(&not_run.log)
                .unwrap_or_else(|e| panic!("the log {}: {e}", not_run.log.display()));
            log.lines()
                .filter_map(|line| line.strip_prefix("# argv: "))
                .map(|json| serde_json::from_str(json).expect("argv is JSON"))
                .collect()
        }
        Err(other) => panic!("neither a run nor a runner that could not run: {other}"),
    }
}

/// The error of a runner that could not run, or a panic naming what came instead.
pub fn not_run(result: &Result<RunReport, RunnerError>) -> &candor::runner::NotRun {
    match result {
        Err(RunnerError::CouldNotRun(not_run)) => not_run,
        other => panic!("expected a runner that could not run: {other:?}"),
    }
}
