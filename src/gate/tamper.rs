//! Judging a change with the base's tests, and checking each runner report against the
//! run. Pure: the head's collection, the head's replays and the base-version runs come in;
//! what the change weakened, removed or hid comes out.
//!
//! For every test module the change touched, the lane also runs the **base's version** of
//! that module (with the base's conftest files and runner settings) against the head's
//! code. A test that passes in the head's version and fails in the base's is a weakened
//! test (an assertion loosened, an exception caught, an early return): the change made the
//! test agree with the code instead of the other way round. Every test the base's version
//! has must still be collected at the head, or it is a removed test. A touched test module
//! that collects nothing at the head hides whatever it held. The first two need a human's
//! approval; the last always rejects.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::results::Outcome;

/// A test file the change modified or deleted, at both ends: what the lanes judge by
/// text (`rust_base`, `js_base`) where the base's version is not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileTexts {
    /// The file, repository-relative.
    pub path: String,
    /// Its text at the base.
    pub base_text: String,
    /// Its text at the head (`None`: deleted).
    pub head_text: Option<String>,
}

/// One run of a test module's base version against the head's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseRun {
    /// The module.
    pub file: String,
    /// The runner's exit code (`None`: not run, the lane's time ran out).
    pub exit_code: Option<i32>,
    /// Each test the report holds, with its outcome.
    pub outcomes: BTreeMap<String, Outcome>,
    /// What the runner's own output says against the report (a changed log, pytest's
    /// summary line counting more red tests than the report holds), in a sentence.
    pub report_contradicted: Option<String>,
}

/// A test the change weakened: green in the head's version, red in the base's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct Weakened {
    /// The test (or the module, when the base's version could not run at all).
    pub test: String,
    /// How the base's version ended.
    pub base_outcome: String,
}

/// What judging the change with the base's tests found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BaseJudgement {
    /// Modules whose base version ran.
    pub files: Vec<String>,
    /// Tests green at the head and red in the base's version.
    pub weakened: Vec<Weakened>,
    /// Tests the base's version has that the head no longer collects.
    pub removed: Vec<String>,
    /// Touched test modules that collect nothing at the head.
    pub collect_nothing: Vec<String>,
    /// Base-version runs the lane's time stopped.
    pub not_run: u32,
}

impl BaseJudgement {
    /// Says each test of `listed` weakened because of `said`, or `unlisted` (`file::name`,
    /// a helper or a test the head lists under no id) when `listed` is empty.
    pub fn weaken(&mut self, listed: &[&str], unlisted: String, said: &str) {
        let weakened = |test: String| Weakened {
            test,
            base_outcome: said.to_owned(),
        };
        if listed.is_empty() {
            self.weakened.push(weakened(unlisted));
        } else {
            self.weakened
                .extend(listed.iter().map(|id| weakened((*id).to_owned())));
        }
    }
}

/// Judges the change. `touched_modules` are the pytest modules the change added, modified
/// or deleted; `head_ids` the head's collection; `head_green` the touched tests whose
/// every replay ended green; `runs` one base-version run per module that existed at the
/// base.
pub fn judge(
    touched_modules: &[String],
    head_ids: &BTreeSet<String>,
    head_green: &BTreeSet<String>,
    deleted: &BTreeSet<String>,
    runs: &[BaseRun],
) -> BaseJudgement {
    let in_file = |id: &str, file: &str| id.split_once("::").is_some_and(|(f, _)| f == file);
    let mut judgement = BaseJudgement::default();
    for file in touched_modules {
        if !deleted.contains(file) && !head_ids.iter().any(|id| in_file(id, file)) {
            judgement.collect_nothing.push(file.clone());
        }
    }
    for run in runs {
        judgement.files.push(run.file.clone());
        let Some(exit_code) = run.exit_code else {
            judgement.not_run += 1;
            continue;
        };
        let base_ids: Vec<&String> = run
            .outcomes
            .keys()
            .filter(|id| in_file(id, &run.file))
            .collect();
        // pytest's 5: the base's version holds no test, so there is nothing to keep.
        if base_ids.is_empty() && exit_code != 5 {
            judgement.weakened.push(Weakened {
                test: run.file.clone(),
                base_outcome: format!(
                    "the base's version did not run against the head's code (exit code {exit_code})"
                ),
            });
            continue;
        }
        // The report holds the base's tests all green, yet the runner said otherwise: its
        // status (pytest's 5 is "no tests") or its own summary line. The report was
        // rewritten, or something else failed the run; either way it cannot clear them.
        let unexplained = if let Some(said) = &run.report_contradicted {
            Some(said.clone())
        } else {
            (!matches!(exit_code, 0 | 5)
                && base_ids.iter().all(|id| !run.outcomes[id.as_str()].is_red()))
            .then(|| {
                format!(
                    "the runner exited {exit_code} while the report holds no red test of the base's version"
                )
            })
        };
        if let Some(said) = unexplained {
            judgement.weakened.push(Weakened {
                test: run.file.clone(),
                base_outcome: said,
            });
            continue;
        }
        for id in base_ids {
            if !head_ids.contains(id.as_str()) {
                judgement.removed.push(id.clone());
                continue;
            }
            let outcome = run.outcomes[id];
            if outcome.is_red() && head_green.contains(id.as_str()) {
                judgement.weakened.push(Weakened {
                    test: id.clone(),
                    base_outcome: outcome.as_str().to_owned(),
                });
            }
        }
    }
    judgement.weakened.sort();
    judgement.removed.sort();
    judgement
}

/// What a replay's report failed to account for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Unaccounted {
    /// The test the replay ran.
    pub test: String,
    /// Which replay, from 1.
    pub replay: u32,
    /// What is wrong.
    pub problem: String,
}

/// Checks one replay's report against the run: the runner exited 0 without a report, the
/// report lacks the test it was asked to run, it holds a test the collection never listed,
/// or it says the test passed while the runner said otherwise. `report` is `None` when the
/// runner wrote no readable report.
pub fn account(
    test: &str,
    replay: u32,
    exit_code: i32,
    timed_out: bool,
    report: Option<&BTreeMap<String, Outcome>>,
    collected: &BTreeSet<String>,
) -> Option<Unaccounted> {
    let problem = |problem: String| {
        Some(Unaccounted {
            test: test.to_owned(),
            replay,
            problem,
        })
    };
    if timed_out {
        return None;
    }
    let Some(report) = report else {
        return if exit_code == 0 {
            problem("the runner exited 0 without writing its report".to_owned())
        } else {
            None
        };
    };
    if let Some(stranger) = report.keys().find(|id| !listed(collected, id)) {
        return problem(format!(
            "the report holds {stranger}, which the collection never listed"
        ));
    }
    match report.get(test) {
        None if exit_code == 0 => problem(
            "the report holds fewer tests than were collected: the test is missing".to_owned(),
        ),
        Some(outcome) if !outcome.is_red() && *outcome != Outcome::Skip && exit_code != 0 => {
            problem(format!(
                "the report says {} while the runner exited {exit_code}",
                outcome.as_str()
            ))
        }
        _ => None,
    }
}

/// Whether the collection listed `id`, or the test it is a subtest of: go lists its
/// top-level tests only, and a report names their subtests `pkg::TestT/case` (found with
/// go tests in the lane, #15 item 1: every go test with subtests was unaccounted).
fn listed(collected: &BTreeSet<String>, id: &str) -> bool {
    collected.contains(id)
        || id
            .match_indices('/')
            .any(|(at, _)| collected.contains(&id[..at]))
}

/// Checks one batched replay's report (several tests, one runner process) against the
/// run, test by test: as [`account`], except that one red test explains a non-zero exit
/// for the whole batch. A test the report lacks while the runner exited non-zero is not
/// found here: its record is red (`error`), so the lane replays it alone to find out.
pub fn account_batch(
    tests: &[String],
    replay: u32,
    exit_code: i32,
    timed_out: bool,
    report: Option<&BTreeMap<String, Outcome>>,
    collected: &BTreeSet<String>,
) -> Vec<Unaccounted> {
    let problem = |test: &String, problem: String| Unaccounted {
        test: test.clone(),
        replay,
        problem,
    };
    if timed_out {
        return Vec::new();
    }
    let Some(report) = report else {
        return if exit_code == 0 {
            tests
                .iter()
                .map(|t| {
                    problem(
                        t,
                        "the runner exited 0 without writing its report".to_owned(),
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
    };
    if let Some(stranger) = report.keys().find(|id| !listed(collected, id)) {
        return tests
            .iter()
            .map(|t| {
                problem(
                    t,
                    format!("the report holds {stranger}, which the collection never listed"),
                )
            })
            .collect();
    }
    let explained = tests
        .iter()
        .any(|t| report.get(t).is_none_or(|outcome| outcome.is_red()));
    tests
        .iter()
        .filter_map(|test| match report.get(test) {
            None if exit_code == 0 => Some(problem(
                test,
                "the report holds fewer tests than were collected: the test is missing".to_owned(),
            )),
            Some(outcome)
                if !outcome.is_red()
                    && *outcome != Outcome::Skip
                    && exit_code != 0
                    && !explained =>
            {
                Some(problem(
                    test,
                    format!(
                        "the report says {} for every test of its batch while the runner exited {exit_code}",
                        outcome.as_str()
                    ),
                ))
            }
            _ => None,
        })
        .collect()
}

/// One of pytest's summary lines that counts failed tests or errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PytestSummary {
    /// The line, as pytest printed it (colours taken out).
    pub line: String,
    /// Tests whose call failed (`N failed`).
    pub failed: u64,
    /// Errors in setup, teardown or collection (`N error(s)`).
    pub errors: u64,
}

impl PytestSummary {
    /// Whether the line counts more red than a report that holds `reds` red tests can
    /// account for: each failed test is a red test case in the report, and errors need
    /// at least one (pytest may count a test's failure and its teardown's error apart).
    pub fn exceeds(&self, reds: usize) -> bool {
        self.failed > reds as u64 || (self.errors > 0 && reds == 0)
    }
}

/// pytest's summary lines in a run's log that count failed tests or errors
/// (`=== 1 failed, 1 passed in 0.05s ===`, `1 error in 0.10s` under `-q`). pytest prints
/// them before the process ends; what the code under test does at exit (rewrite the
/// report, set its own status) cannot take them back, so a report with fewer red tests
/// than such a line counts was rewritten. Empty when pytest printed none (`-qq`,
/// `-p no:terminal`) or counted no red.
pub fn pytest_summaries(log: &str) -> Vec<PytestSummary> {
    static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^=*\s*((?:\d+ (?:failed|passed|skipped|deselected|xfailed|xpassed|errors?|warnings?|rerun|subtests? \w+)(?:, )?)+) in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?\s*=*\s*$",
        )
        .expect("the summary pattern is valid")
    });
    static COUNT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|, )(\d+) (failed|errors?)\b").expect("the count pattern is valid")
    });
    log.lines()
        .filter_map(|line| {
            let line = strip_colours(line.trim_end_matches('\r'));
            let counts = SUMMARY.captures(&line)?.get(1)?.as_str().to_owned();
            let mut summary = PytestSummary {
                line: line.trim().to_owned(),
                failed: 0,
                errors: 0,
            };
            for found in COUNT.captures_iter(&counts) {
                let number: u64 = found[1].parse().unwrap_or(u64::MAX);
                if &found[2] == "failed" {
                    summary.failed = summary.failed.saturating_add(number);
                } else {
                    summary.errors = summary.errors.saturating_add(number);
                }
            }
            (summary.failed > 0 || summary.errors > 0).then_some(summary)
        })
        .collect()
}

/// A line without its terminal colour codes (`PY_COLORS=1`, `--color=yes`).
fn strip_colours(line: &str) -> std::borrow::Cow<'_, str> {
    static COLOUR: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\x1b\[[0-9;]*m").expect("the colour pattern is valid"));
    COLOUR.replace_all(line, "")
}

/// What one function or test of the test code checks, read from its body outside comments
/// and literals (`rust_base`, `js_base`). Bodies of one name add up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FnChecks {
    /// How many times each check appears (Rust: a macro whose name holds `assert`,
    /// `panic!`, `unreachable!`, `.unwrap()`, `.expect(…)`…; JavaScript: `expect(`,
    /// `assert(`, `assert.equal(`, `.should`).
    pub checks: BTreeMap<String, usize>,
    /// `return`s in the body: one before a check lets the test end before it.
    pub returns: usize,
    /// Rust attributes inside the body (`#[cfg(any())]` on a statement takes it out of the
    /// build).
    pub attributes: usize,
    /// Branches that never run: `if false`, `while false`, `if !true`.
    pub never_branches: usize,
}

/// How the head's version of a function or test checks less than the base's, in words; `None`
/// when it checks at least as much.
pub fn fewer_checks(base: &FnChecks, head: &FnChecks) -> Option<String> {
    let mut said = Vec::new();
    for (check, &before) in &base.checks {
        let after = head.checks.get(check).copied().unwrap_or(0);
        if after < before {
            said.push(format!("`{check}` {before} → {after}"));
        }
    }
    let gained = |what: &str, before: usize, after: usize, said: &mut Vec<String>| {
        if after > before {
            said.push(format!("{what} {before} → {after}"));
        }
    };
    gained("`return`", base.returns, head.returns, &mut said);
    gained(
        "attributes in its body",
        base.attributes,
        head.attributes,
        &mut said,
    );
    gained(
        "branches that never run",
        base.never_branches,
        head.never_branches,
        &mut said,
    );
    (!said.is_empty()).then(|| format!("checks less than the base's version: {}", said.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pytest's summary lines counting a red test are found in every spelling pytest
    /// prints them, with their counts; green summaries, test output that only looks like
    /// one, and logs without one are not.
    #[test]
    fn pytest_s_own_summary_lines_count_the_red() {
        let red = [
            (
                "============ 1 failed, 1 passed in 0.05s ============",
                1,
                0,
            ),
            ("1 failed, 1 passed in 0.05s", 1, 0),
            ("=== 2 errors in 0.10s ===", 0, 2),
            ("=== 1 passed, 1 error in 0.10s ===", 0, 1),
            (
                "=== 3 failed, 10 passed, 2 skipped, 4 warnings in 61.23s (0:01:01) ===",
                3,
                0,
            ),
            ("=== 1 failed, 2 errors in 0.10s ===", 1, 2),
            (
                "\x1b[31m=== \x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m1 passed\x1b[0m\x1b[31m in 0.05s\x1b[0m\x1b[31m ===\x1b[0m",
                1,
                0,
            ),
        ];
        for (line, failed, errors) in red {
            let log = format!("# argv: python3 -m pytest\n.F\n{line}\n# exit status 0\n");
            let found = pytest_summaries(&log);
            assert_eq!(found.len(), 1, "{line:?}");
            assert_eq!(
                (found[0].failed, found[0].errors),
                (failed, errors),
                "{line:?}"
            );
        }
        let not_red = [
            "============ 2 passed in 0.05s ============",
            "2 passed, 1 skipped, 3 warnings in 0.10s",
            "=== no tests ran in 0.01s ===",
            "=== 2 passed, 0 failed in 0.01s ===",
            "print: 1 failed attempt in 3s, retrying",
            "=== 1 failed, 1 passed ===",
            "",
        ];
        for line in not_red {
            assert!(pytest_summaries(line).is_empty(), "{line:?}");
        }
        let printed_twice = pytest_summaries(
            "collected 2 items\n\n.F\n=== 1 failed, 1 passed in 0.05s ===\n2 passed in 0.01s\n",
        );
        assert_eq!(
            printed_twice
                .iter()
                .map(|s| s.line.as_str())
                .collect::<Vec<_>>(),
            ["=== 1 failed, 1 passed in 0.05s ==="],
            "a green line printed after the red one does not hide it"
        );
    }

    /// A report accounts for a summary when it holds at least as many red tests as the
    /// line counts failed, and at least one when it counts errors.
    #[test]
    fn a_summary_exceeds_a_report_with_fewer_red_tests() {
        let summary = |failed, errors| PytestSummary {
            line: String::new(),
            failed,
            errors,
        };
        assert!(summary(1, 0).exceeds(0));
        assert!(
            summary(2, 0).exceeds(1),
            "one red kept, the other struck out"
        );
        assert!(!summary(2, 0).exceeds(2));
        assert!(summary(0, 1).exceeds(0));
        assert!(
            !summary(1, 1).exceeds(1),
            "a failure and its teardown's error: one test"
        );
    }

    /// #15 item 1: go's subtests are in the report, not in the listing.
    #[test]
    fn a_subtest_of_a_listed_test_is_listed_and_a_stranger_is_not() {
        let collected = set(&["m/a::TestTable", "tests/t.py::test_x"]);
        assert!(listed(&collected, "m/a::TestTable"));
        assert!(listed(&collected, "m/a::TestTable/[z]$"));
        assert!(listed(&collected, "m/a::TestTable/x/y"));
        assert!(!listed(&collected, "m/a::TestTableX/y"));
        assert!(!listed(&collected, "m/a::TestOther/y"));
        assert!(!listed(&collected, "tests/t.py::test_y"));
    }

    fn set(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| (*s).to_owned()).collect()
    }

    fn outcomes(pairs: &[(&str, Outcome)]) -> BTreeMap<String, Outcome> {
        pairs.iter().map(|(id, o)| ((*id).to_owned(), *o)).collect()
    }

    const A: &str = "tests/test_a.py::test_total";
    const B: &str = "tests/test_a.py::test_empty";

    /// #15 item 1: a batched report is checked test by test; one red test explains the
    /// batch's exit code, a missing one under exit 0 is unaccounted.
    #[test]
    fn a_batched_report_accounts_for_each_of_its_tests() {
        let collected = set(&[A, B]);
        let both = [A.to_owned(), B.to_owned()];
        let red_and_green = outcomes(&[(A, Outcome::Fail), (B, Outcome::Pass)]);
        assert!(account_batch(&both, 1, 1, false, Some(&red_and_green), &collected).is_empty());
        let one_missing = outcomes(&[(A, Outcome::Pass)]);
        let found = account_batch(&both, 2, 0, false, Some(&one_missing), &collected);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].test.as_str(), found[0].replay), (B, 2));
        // Missing under a non-zero exit: red, replayed alone, not unaccounted here.
        assert!(account_batch(&both, 1, 1, false, Some(&one_missing), &collected).is_empty());
        let all_green = outcomes(&[(A, Outcome::Pass), (B, Outcome::Pass)]);
        assert_eq!(
            account_batch(&both, 1, 1, false, Some(&all_green), &collected).len(),
            2
        );
        assert_eq!(account_batch(&both, 1, 0, false, None, &collected).len(), 2);
        let stranger = outcomes(&[
            (A, Outcome::Pass),
            (B, Outcome::Pass),
            ("x::y", Outcome::Pass),
        ]);
        assert_eq!(
            account_batch(&both, 1, 0, false, Some(&stranger), &collected).len(),
            2
        );
    }

    #[test]
    fn weakened_removed_and_empty_modules_are_found() {
        let modules = ["tests/test_a.py".to_owned(), "tests/test_new.py".to_owned()];
        let runs = [BaseRun {
            file: "tests/test_a.py".into(),
            exit_code: Some(1),
            outcomes: outcomes(&[(A, Outcome::Fail), (B, Outcome::Pass)]),
            report_contradicted: None,
        }];
        // test_empty removed at the head, test_total green at the head but red at the base.
        let judgement = judge(&modules, &set(&[A]), &set(&[A]), &BTreeSet::new(), &runs);
        assert_eq!(judgement.weakened[0].test, A);
        assert_eq!(judgement.removed, [B]);
        assert_eq!(judgement.collect_nothing, ["tests/test_new.py"]);
        // A test red at both ends is the replays' business, not a weakening.
        let red = judge(
            &modules[..1],
            &set(&[A, B]),
            &set(&[B]),
            &BTreeSet::new(),
            &runs,
        );
        assert!(red.weakened.is_empty() && red.removed.is_empty(), "{red:?}");
        // A base version that cannot even run against the head's code is a weakening.
        let broken = [BaseRun {
            file: "tests/test_a.py".into(),
            exit_code: Some(2),
            outcomes: BTreeMap::new(),
            report_contradicted: None,
        }];
        // The module's one test, green at the head.
        let judged = |runs: &[BaseRun]| {
            judge(
                &modules[..1],
                &set(&[A]),
                &set(&[A]),
                &BTreeSet::new(),
                runs,
            )
        };
        assert_eq!(judged(&broken).weakened[0].test, "tests/test_a.py");
        // A base version whose report holds its tests green while the runner exited 1, or
        // while pytest's own summary counted a failure, cannot clear them: its report was
        // rewritten (or something else failed the run).
        let green_report = outcomes(&[(A, Outcome::Pass)]);
        let unexplained = [
            BaseRun {
                file: "tests/test_a.py".into(),
                exit_code: Some(1),
                outcomes: green_report.clone(),
                report_contradicted: None,
            },
            BaseRun {
                file: "tests/test_a.py".into(),
                exit_code: Some(0),
                outcomes: green_report.clone(),
                report_contradicted: Some("pytest's own summary says `1 failed in 0.01s`".into()),
            },
        ];
        for run in unexplained {
            let judgement = judged(std::slice::from_ref(&run));
            assert_eq!(judgement.weakened.len(), 1, "{run:?}");
            assert_eq!(judgement.weakened[0].test, "tests/test_a.py", "{run:?}");
        }
        let explained = BaseRun {
            file: "tests/test_a.py".into(),
            exit_code: Some(0),
            outcomes: green_report,
            report_contradicted: None,
        };
        let judgement = judged(&[explained]);
        assert!(judgement.weakened.is_empty(), "{judgement:?}");
    }

    #[test]
    fn reports_that_do_not_account_for_the_run_are_found() {
        let collected = set(&[A, B]);
        assert!(account(A, 1, 0, false, None, &collected).is_some());
        assert!(account(A, 1, 1, false, None, &collected).is_none());
        let empty = BTreeMap::new();
        assert!(account(A, 1, 0, false, Some(&empty), &collected).is_some());
        let stranger = outcomes(&[(A, Outcome::Pass), ("tests/x.py::test_fake", Outcome::Pass)]);
        assert!(
            account(A, 1, 0, false, Some(&stranger), &collected)
                .unwrap()
                .problem
                .contains("never listed")
        );
        let passed = outcomes(&[(A, Outcome::Pass)]);
        assert!(account(A, 1, 1, false, Some(&passed), &collected).is_some());
        assert!(account(A, 1, 0, false, Some(&passed), &collected).is_none());
    }
}
