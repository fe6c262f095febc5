//! The merge lane's verdict — accept or reject, and every reason — and the
//! `score-report.json` it is written as (schema `candor.score-report.v1`,
//! docs/score-report.md), with the Markdown summary for a CI step summary. Pure: every
//! step's findings come in; `lane_verdict` is where the gate decides.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;

use super::CassetteCheck;
use super::human_owned::OwnedChange;
use super::infrastructure::InfraChange;
use super::locks::Drift;
use super::receipts::Receipt;
use super::rules::Finding;
use super::tamper::{BaseJudgement, Unaccounted};
use super::touched::TouchedTest;
use crate::classify::{Bucket, Classified};
use crate::policy::ReplayMode;

/// The report's schema name; bumped on any change a reader could trip on.
pub const SCHEMA: &str = "candor.score-report.v1";

/// Why the lane rejects (or, for approvals, what it let through).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Reason {
    /// The change modifies files humans own, without an approval.
    HumanOwnedFilesChanged {
        /// The files.
        paths: Vec<String>,
    },
    /// Added lines break diff rules.
    DiffRules {
        /// How many findings.
        findings: usize,
    },
    /// Fixture files changed while their lock did not.
    FixtureDrift {
        /// The drifted files.
        paths: Vec<String>,
    },
    /// Cassettes that are not valid `cassette.v1`.
    InvalidCassettes {
        /// The files.
        paths: Vec<String>,
    },
    /// Cassettes deleted or unpinned, without an approval.
    CassettesLost {
        /// The cassettes.
        paths: Vec<String>,
    },
    /// Cassettes changed while their lock did not.
    CassetteDrift {
        /// The cassettes.
        paths: Vec<String>,
    },
    /// A touched test failed a replay.
    ReplayFailed {
        /// The test.
        test: String,
        /// The classifier's bucket.
        bucket: Bucket,
        /// Failures among the replays.
        failures: u32,
        /// Replays run.
        replays: u32,
    },
    /// A touched test was skipped in every replay: it proves nothing and hides whatever it
    /// would find. Not a reason when the merge base's own checkout skips it for the same
    /// reason ([`SkippedAsAtBase`]).
    ReplaySkipped {
        /// The test.
        test: String,
        /// What its run at the merge base showed; absent when the lane did not get to run
        /// it there.
        #[serde(skip_serializing_if = "Option::is_none")]
        merge_base: Option<String>,
    },
    /// An untouched test the whole suite's run skipped that the merge base runs, or skips
    /// for another reason: the change made its skip condition true (a flag in the code
    /// under test that a `skipif` reads), and a skipped test checks nothing.
    SuiteSkipped {
        /// The test.
        test: String,
        /// What its run at the merge base showed.
        merge_base: String,
    },
    /// The whole suite's run (`[lane] replay = "all"`) had red tests the change is not
    /// excused for.
    SuiteFailed {
        /// The red tests, in id order.
        tests: Vec<String>,
    },
    /// The whole suite's run ran no test: a lane that ran nothing accepts nothing.
    SuiteRanNothing,
    /// Test infrastructure (conftest, runner settings, plugin lists, test-support code, the
    /// data the tests read) changed, without an approval.
    TestInfrastructureChanged {
        /// The files.
        paths: Vec<String>,
    },
    /// Data files under test folders added or edited without the fixture lock pinning
    /// them.
    UnlockedDataFiles {
        /// The files.
        paths: Vec<String>,
    },
    /// A replay's report does not account for every collected test.
    ReportUnaccounted {
        /// The test replayed.
        test: String,
        /// What the report got wrong.
        problem: String,
    },
    /// Tests green in the head's version fail in the base's version, without an approval.
    #[serde(rename = "weakened-test")]
    WeakenedTests {
        /// The tests (or modules whose base version could not run).
        tests: Vec<String>,
    },
    /// Tests the base collected in a touched module that the head does not, without an
    /// approval.
    TestsRemoved {
        /// The tests.
        tests: Vec<String>,
    },
    /// Tests the merge base collects, in files the change did not touch, that the head
    /// does not collect, without an approval: the code under test generates them (a
    /// `parametrize` list it holds), and the change took them out. For go, tests the merge
    /// base lists that the head's whole suite never ran, their files and functions kept
    /// (a test binary ended before its tests, a package out of `./...`).
    TestsVanished {
        /// The tests.
        tests: Vec<String>,
        /// What most likely took them away, per package (go); absent for pytest and the
        /// JavaScript runners, whose tests the code under test generates.
        #[serde(skip_serializing_if = "Option::is_none")]
        cause: Option<String>,
    },
    /// Touched test modules that collect nothing.
    CollectsNothing {
        /// The modules.
        files: Vec<String>,
    },
    /// Ledger lines the change appended that no stored rerun backs, without an approval.
    #[serde(rename = "unverified-receipt")]
    UnverifiedReceipts {
        /// 1-based lines of the head's ledger.
        lines: Vec<usize>,
    },
    /// The lane ran out of wall-clock time before every replay was made.
    OutOfTime {
        /// The lane's limit, in seconds.
        max_wall_seconds: u32,
        /// Replays not made.
        replays_left: u32,
    },
}

impl Reason {
    /// One line for people.
    pub fn describe(&self) -> String {
        match self {
            Reason::HumanOwnedFilesChanged { paths } => format!(
                "human-owned files changed: {} (a human's --approved-by is needed)",
                paths.join(", ")
            ),
            Reason::DiffRules { findings } => {
                format!("{findings} added line(s) break the diff rules")
            }
            Reason::FixtureDrift { paths } => format!(
                "fixture-drift: {} changed while the fixture lock did not",
                paths.join(", ")
            ),
            Reason::InvalidCassettes { paths } => {
                format!("invalid cassettes: {}", paths.join(", "))
            }
            Reason::CassettesLost { paths } => format!(
                "cassettes deleted or unpinned without approval: {}",
                paths.join(", ")
            ),
            Reason::CassetteDrift { paths } => format!(
                "cassettes changed while the cassette lock did not: {}",
                paths.join(", ")
            ),
            Reason::ReplayFailed {
                test,
                bucket,
                failures,
                replays,
            } => {
                let gap = if *bucket == Bucket::Noise {
                    " — mixed outcomes under one seed: a cassette gap"
                } else {
                    ""
                };
                format!(
                    "{test} failed {failures} of {replays} replays: {}{gap}",
                    bucket.as_str()
                )
            }
            Reason::ReplaySkipped { test, merge_base } => {
                let base = merge_base
                    .as_ref()
                    .map_or_else(String::new, |said| format!(" ({said})"));
                format!("{test} was skipped in every replay: a touched test must run{base}")
            }
            Reason::SuiteSkipped { test, merge_base } => format!(
                "{test} was skipped in the whole suite's run, not as at the merge base ({merge_base})"
            ),
            Reason::SuiteFailed { tests } => {
                let named = first_few(tests);
                format!(
                    "the whole suite's run failed {} test(s): {named}",
                    tests.len()
                )
            }
            Reason::SuiteRanNothing => {
                "the whole suite's run ran no test: a lane that ran nothing accepts nothing"
                    .to_owned()
            }
            Reason::TestInfrastructureChanged { paths } => format!(
                "test-infrastructure changed: {} (conftest, runner settings, plugin lists, test-support code and the data tests read are human-owned; --approved-by is needed)",
                paths.join(", ")
            ),
            Reason::UnlockedDataFiles { paths } => format!(
                "unlocked-data: {} added or edited under a test folder while the fixture lock does not pin it",
                paths.join(", ")
            ),
            Reason::ReportUnaccounted { test, problem } => format!(
                "report-unaccounted: the runner's report does not account for every collected test ({test}: {problem})"
            ),
            Reason::WeakenedTests { tests } => format!(
                "weakened-test: {} pass(es) in the head's version and fail(s) in the base's version against the head's code (--approved-by is needed)",
                tests.join(", ")
            ),
            Reason::TestsRemoved { tests } => format!(
                "tests-removed: {} collected at the base, gone at the head (--approved-by is needed)",
                tests.join(", ")
            ),
            Reason::TestsVanished { tests, cause: None } => {
                let named = first_few(tests);
                format!(
                    "tests-vanished: {named} collected at the merge base, not at the head, their files untouched: the change's code no longer generates them (--approved-by is needed)"
                )
            }
            Reason::TestsVanished {
                tests,
                cause: Some(cause),
            } => {
                let named = first_few(tests);
                format!(
                    "tests-vanished: {named} run at the merge base, never at the head, their files and functions kept: {cause} (--approved-by is needed)"
                )
            }
            Reason::CollectsNothing { files } => format!(
                "collects-nothing: the touched test module(s) {} collect no test",
                files.join(", ")
            ),
            Reason::UnverifiedReceipts { lines } => format!(
                "unverified-receipt: ledger line(s) {} appended by the change match no stored `candor rerun` (--approved-by is needed)",
                lines
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Reason::OutOfTime {
                max_wall_seconds,
                replays_left,
            } => format!(
                "out of time: the lane's {max_wall_seconds} s ran out with {replays_left} replay(s) left"
            ),
        }
    }
}

/// An approval the report records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Approval {
    /// Who approved (a human's CI label).
    pub by: String,
    /// What the approval let through.
    pub approved: Vec<String>,
}

/// Everything the lane found, step by step.
#[derive(Debug, Clone, Default)]
pub struct LaneFindings<'a> {
    /// Diff rules.
    pub findings: &'a [Finding],
    /// Fixture drift against an unchanged lock.
    pub fixture_drift: &'a [Drift],
    /// The cassette step.
    pub cassettes: Option<&'a CassetteCheck>,
    /// Human-owned files the change touches.
    pub human_owned: &'a [OwnedChange],
    /// `--approved-by`.
    pub approved_by: Option<&'a str>,
    /// Each touched test's replays, classified.
    pub replays: &'a [Classified],
    /// Touched tests skipped in every replay and not as the merge base skips them, each
    /// with what the merge base showed.
    pub skipped: &'a [(String, Option<String>)],
    /// Untouched tests the whole suite's run skipped that the merge base runs (or skips
    /// for another reason), each with what the merge base showed.
    pub skipped_in_suite: &'a [(String, String)],
    /// Tests the merge base collects that the head does not, in files the change did not
    /// touch (the code under test generates them); for go, those the head never ran.
    pub vanished: &'a [String],
    /// For go, what most likely took [`LaneFindings::vanished`] away.
    pub vanished_cause: Option<&'a str>,
    /// The whole suite's run, when `[lane] replay = "all"` made it.
    pub suite: Option<&'a SuiteRun>,
    /// Replays not made because time ran out (0: all made).
    pub replays_left: u32,
    /// Test-infrastructure changes.
    pub infrastructure: &'a [InfraChange],
    /// Unlocked data files under test folders.
    pub unlocked_data: &'a [String],
    /// Replays whose report does not account for the run.
    pub unaccounted: &'a [Unaccounted],
    /// The change judged with the base's tests.
    pub base_judgement: Option<&'a BaseJudgement>,
    /// Ledger lines the change appended, checked against the history.
    pub receipts: &'a [Receipt],
    /// The lane's time limit.
    pub max_wall_seconds: u32,
}

/// The lane's decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LaneVerdict {
    /// Accepted: no reason to reject.
    pub pass: bool,
    /// Why not, in the order the steps run.
    pub reasons: Vec<Reason>,
    /// What `--approved-by` let through.
    pub approvals: Vec<Approval>,
}

/// Accept or reject. Zero flake budget: any failed replay rejects; approvals cover only
/// human-owned files and cassette losses, never a red replay or a diff rule.
pub fn lane_verdict(found: &LaneFindings<'_>) -> LaneVerdict {
    let mut reasons = Vec::new();
    let mut approved = Vec::new();
    let owned: Vec<String> = found.human_owned.iter().map(|c| c.path.clone()).collect();
    if !owned.is_empty() {
        if found.approved_by.is_some() {
            approved.extend(owned);
        } else {
            reasons.push(Reason::HumanOwnedFilesChanged { paths: owned });
        }
    }
    let infrastructure: Vec<String> = found
        .infrastructure
        .iter()
        .map(|c| c.path.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if !infrastructure.is_empty() {
        if found.approved_by.is_some() {
            approved.extend(infrastructure);
        } else {
            reasons.push(Reason::TestInfrastructureChanged {
                paths: infrastructure,
            });
        }
    }
    if !found.findings.is_empty() {
        reasons.push(Reason::DiffRules {
            findings: found.findings.len(),
        });
    }
    if !found.fixture_drift.is_empty() {
        reasons.push(Reason::FixtureDrift {
            paths: found.fixture_drift.iter().map(|d| d.path.clone()).collect(),
        });
    }
    if let Some(cassettes) = found.cassettes {
        if !cassettes.invalid.is_empty() {
            reasons.push(Reason::InvalidCassettes {
                paths: cassettes
                    .invalid
                    .iter()
                    .map(|e| e.path.display().to_string())
                    .collect(),
            });
        }
        if !cassettes.drift.is_empty() {
            reasons.push(Reason::CassetteDrift {
                paths: cassettes.drift.iter().map(|d| d.path.clone()).collect(),
            });
        }
        let lost: Vec<String> = cassettes.losses.iter().map(|l| l.path.clone()).collect();
        if !lost.is_empty() {
            if found.approved_by.is_some() {
                approved.extend(lost);
            } else {
                reasons.push(Reason::CassettesLost { paths: lost });
            }
        }
    }
    for test in found.replays {
        if test.bucket.is_red() {
            reasons.push(Reason::ReplayFailed {
                test: test.test.clone(),
                bucket: test.bucket,
                failures: test.failures,
                replays: test.runs,
            });
        }
    }
    for (test, merge_base) in found.skipped {
        reasons.push(Reason::ReplaySkipped {
            test: test.clone(),
            merge_base: merge_base.clone(),
        });
    }
    for (test, merge_base) in found.skipped_in_suite {
        reasons.push(Reason::SuiteSkipped {
            test: test.clone(),
            merge_base: merge_base.clone(),
        });
    }
    if let Some(suite) = found.suite {
        // A touched test red in its replays is already a reason; one red only in the
        // suite's run (it fails beside the others) is this one.
        let failed: Vec<String> = suite
            .failed
            .iter()
            .filter(|test| {
                !found
                    .replays
                    .iter()
                    .any(|c| &c.test == *test && c.bucket.is_red())
            })
            .cloned()
            .collect();
        if !failed.is_empty() {
            reasons.push(Reason::SuiteFailed { tests: failed });
        } else if suite.tests == 0 {
            reasons.push(Reason::SuiteRanNothing);
        } else if suite.exit_code != 0 && suite.failed.is_empty() && suite.excused.is_empty() {
            // The status is the runner's word, the report a file the tests' process can
            // rewrite before it ends (an `atexit` hook in the code under test turned a red
            // report green and walked through the lane). A failing status with no red
            // test to explain it is refused, whatever failed: a rewritten report, a
            // coverage threshold, a crash at exit.
            reasons.push(Reason::ReportUnaccounted {
                test: "the whole suite's run".to_owned(),
                problem: format!(
                    "the runner exited {} while its report holds no red test; its log says why: {}",
                    suite.exit_code, suite.log
                ),
            });
        }
        if let Some(said) = &suite.report_contradicted {
            // The runner's own output, written before the process ended, against a report
            // rewritten after (and the status too, or it alone would tell).
            reasons.push(Reason::ReportUnaccounted {
                test: "the whole suite's run".to_owned(),
                problem: said.clone(),
            });
        }
    }
    if !found.unlocked_data.is_empty() {
        reasons.push(Reason::UnlockedDataFiles {
            paths: found.unlocked_data.to_vec(),
        });
    }
    if let Some(first) = found.unaccounted.first() {
        reasons.push(Reason::ReportUnaccounted {
            test: first.test.clone(),
            problem: first.problem.clone(),
        });
    }
    if !found.vanished.is_empty() {
        if found.approved_by.is_some() {
            approved.extend(found.vanished.iter().cloned());
        } else {
            reasons.push(Reason::TestsVanished {
                tests: found.vanished.to_vec(),
                cause: found.vanished_cause.map(str::to_owned),
            });
        }
    }
    if let Some(judgement) = found.base_judgement {
        let mut approvable = |items: Vec<String>, reason: fn(Vec<String>) -> Reason| {
            if items.is_empty() {
                return;
            }
            if found.approved_by.is_some() {
                approved.extend(items);
            } else {
                reasons.push(reason(items));
            }
        };
        approvable(
            judgement.weakened.iter().map(|w| w.test.clone()).collect(),
            |tests| Reason::WeakenedTests { tests },
        );
        approvable(judgement.removed.clone(), |tests| Reason::TestsRemoved {
            tests,
        });
        if !judgement.collect_nothing.is_empty() {
            reasons.push(Reason::CollectsNothing {
                files: judgement.collect_nothing.clone(),
            });
        }
    }
    let unverified: Vec<usize> = found
        .receipts
        .iter()
        .filter(|r| !r.verified)
        .map(|r| r.line)
        .collect();
    if !unverified.is_empty() {
        if found.approved_by.is_some() {
            approved.extend(unverified.iter().map(|line| format!("ledger line {line}")));
        } else {
            reasons.push(Reason::UnverifiedReceipts { lines: unverified });
        }
    }
    if found.replays_left > 0 {
        reasons.push(Reason::OutOfTime {
            max_wall_seconds: found.max_wall_seconds,
            replays_left: found.replays_left,
        });
    }
    let approvals = match found.approved_by {
        Some(by) if !approved.is_empty() => vec![Approval {
            by: by.to_owned(),
            approved,
        }],
        _ => Vec::new(),
    };
    LaneVerdict {
        pass: reasons.is_empty(),
        reasons,
        approvals,
    }
}

/// The whole suite's one run in the lane (`[lane] replay = "all"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SuiteRun {
    /// Tests the run reported (skipped ones included).
    pub tests: u32,
    /// Red tests the change is not excused for, in id order.
    pub failed: Vec<String>,
    /// Red tests a freeze in force (read at the base) excuses, in id order.
    pub excused: Vec<String>,
    /// The runner's exit code.
    pub exit_code: i32,
    /// The runner's log.
    pub log: String,
    /// What the runner's own output says against the report, in a sentence: its log
    /// changed since candor wrote it, or pytest's summary line counting more red tests
    /// than the report holds (`gate::tamper::pytest_summaries`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report_contradicted: Option<String>,
    /// The change's test files the run left out (judged by their replays), so that
    /// nothing in them reaches the untouched tests; absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

/// How many tests the lane ran and how: the report's `replayed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Replayed {
    /// `[lane] replay`, as read at the base.
    #[schemars(schema_with = "crate::events::replay_mode_schema")]
    pub mode: ReplayMode,
    /// Tests the whole suite's run reported; `None` when the suite was not run.
    pub suite_tests: Option<u32>,
    /// Touched tests replayed (at least once).
    pub touched_tests: u32,
    /// Replays of touched tests made.
    pub replays: u32,
    /// The same in one sentence, as the human output prints it.
    pub summary: String,
}

/// What the change gave the lane to replay, for [`replayed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayScope {
    /// `[lane] replay`.
    pub mode: ReplayMode,
    /// Test files the change added or modified.
    pub changed_test_files: usize,
    /// Tests the runner lists in them.
    pub touched_tests: usize,
    /// Replays asked of each touched test.
    pub min_replays: u32,
}

/// Says how many tests the lane ran and how, zero included: never a silent accept.
pub fn replayed(scope: ReplayScope, suite: Option<&SuiteRun>, runs: &[ReplayRun]) -> Replayed {
    let mut replayed_tests: Vec<&str> = runs.iter().map(|r| r.test.as_str()).collect();
    replayed_tests.sort_unstable();
    replayed_tests.dedup();
    let touched_tests = u32::try_from(replayed_tests.len()).unwrap_or(u32::MAX);
    let replays = u32::try_from(runs.len()).unwrap_or(u32::MAX);
    let touched_part = if touched_tests > 0 {
        format!(
            "{touched_tests} touched test(s) replayed {} time(s) each ({replays} replays)",
            scope.min_replays
        )
    } else if scope.changed_test_files == 0 {
        "0 tests replayed: the change touched no test file".to_owned()
    } else if scope.touched_tests == 0 {
        format!(
            "0 tests replayed: the {} changed test file(s) hold no test the runner lists",
            scope.changed_test_files
        )
    } else {
        "0 tests replayed: time ran out first".to_owned()
    };
    let summary = match (scope.mode, suite) {
        (ReplayMode::All, Some(suite)) => format!(
            "the whole suite ran once ({} test(s), {} red); {touched_part}",
            suite.tests,
            suite.failed.len() + suite.excused.len()
        ),
        (ReplayMode::All, None) => {
            format!("the whole suite did not run: time ran out first; {touched_part}")
        }
        (ReplayMode::Touched, _) => {
            format!("{touched_part} (replay = \"touched\": the rest of the suite was not run)")
        }
    };
    Replayed {
        mode: scope.mode,
        suite_tests: suite.map(|s| s.tests),
        touched_tests,
        replays,
        summary,
    }
}

/// One replay in the report.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ReplayRun {
    /// The test.
    pub test: String,
    /// Which replay, from 1.
    pub replay: u32,
    /// The pinned seed, where the runner takes one.
    pub seed: Option<u64>,
    /// The test's outcome.
    pub outcome: crate::results::Outcome,
    /// The runner's exit code.
    pub exit_code: i32,
    /// The runner's wall time.
    pub seconds: f64,
    /// The runner's log.
    pub log: String,
    /// The batch of its round it ran in, from 1; absent when it ran alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<u32>,
}

/// How the replays were batched (`score-report.json`'s `batching`): one runner process
/// per round for the touched tests (split by the command line's size), the order reversed
/// every other round, and which tests were then replayed alone.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Batching {
    /// Most bytes of test ids (with their argv overhead) one process gets on its command
    /// line; more tests than that are split into several batches.
    pub argv_budget: usize,
    /// Each round, in order.
    pub rounds: Vec<BatchRound>,
    /// Touched tests red (or missing) in a batched replay, or in a batch the runner could
    /// not run: each was replayed alone `min_replays` times and is judged by those.
    pub replayed_alone: Vec<String>,
    /// Tests red in a batch and green in every replay alone.
    pub order_dependent: Vec<OrderDependent>,
    /// Runner processes the base's version of the touched modules ran in; `None` when it
    /// did not run.
    pub base_version_processes: Option<u32>,
    /// Most runner processes the lane ran at once (`--jobs`, `[lane] jobs`, else the CPUs
    /// available to candor).
    pub jobs: u32,
    /// Whether rounds (and the base's version) ran beside each other.
    pub parallel: Parallel,
    /// With rounds in parallel, the round that ran with no other process beside it (the
    /// last; none when the whole suite's run, alone, already ran every touched test).
    pub solo_round: Option<u32>,
}

/// How the lane's replay processes shared the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Parallel {
    /// One runner process at a time.
    Sequential,
    /// Rounds (and the base's version) as runner processes side by side, each process
    /// running its tests one at a time; replays alone never beside anything.
    Rounds,
}

/// One replay round of the touched tests.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BatchRound {
    /// The round, from 1.
    pub round: u32,
    /// `forward` (the listing's order), `reversed`, or where the runner keeps no order
    /// given, `own`, `separated` or `isolated`.
    pub order: BatchOrder,
    /// Its runner processes, in order.
    pub batches: Vec<BatchRun>,
}

/// The order of a round's tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BatchOrder {
    /// The runner's listing order.
    Forward,
    /// The listing's order reversed: every test that ran after another in a forward
    /// round runs before it here.
    Reversed,
    /// The runner's own order (libtest's, go's, the JavaScript runners' definition
    /// order), which no order given changes: each batch's tests are listed in the order
    /// they ran.
    Own,
    /// The runner's own order, the tests of each process split over several processes
    /// so that every two tests that shared a process in the first round run apart in
    /// one of these rounds: the reversal's guarantee where no reversal can be made.
    Separated,
    /// Each test in its own process (nextest): no test runs after another in one.
    Isolated,
}

impl BatchOrder {
    /// The spelling in `score-report.json` and the human output.
    pub fn as_str(self) -> &'static str {
        match self {
            BatchOrder::Forward => "forward",
            BatchOrder::Reversed => "reversed",
            BatchOrder::Own => "own",
            BatchOrder::Separated => "separated",
            BatchOrder::Isolated => "isolated",
        }
    }
}

/// One runner process of a round.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BatchRun {
    /// The tests, in the order they ran.
    pub tests: Vec<String>,
    /// Tests that may run at once in the process, as the runner says.
    pub workers: Option<u32>,
    /// The runner processes it took: one, or for cargo one per test target, for go one
    /// more per package run again with its own names (`go test -run` is one pattern for
    /// all packages).
    pub processes: u32,
    /// The runner's exit code; `None` when it could not run (its tests were replayed
    /// alone).
    pub exit_code: Option<i32>,
    /// The runner's wall time.
    pub seconds: f64,
    /// The runner's log.
    pub log: String,
    /// Whether other runner processes of the lane ran beside it.
    pub beside_others: bool,
}

/// A test whose outcome depends on the tests run before it in its batch.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct OrderDependent {
    /// The test.
    pub test: String,
    /// The round it was red in.
    pub round: u32,
    /// Its batch, in the order it ran: the evidence.
    pub batch_order: Vec<String>,
    /// Its outcome in that batch.
    pub batched: crate::results::Outcome,
    /// Its outcomes alone, by which it is judged.
    pub alone: Vec<crate::results::Outcome>,
    /// What to run to find the test it depends on.
    pub next: String,
    /// Whether other runner processes ran beside the batch it was red in (it may depend
    /// on them rather than on its batch's order).
    pub beside_others: bool,
}

impl Batching {
    /// The batching in one sentence, as the human output and the step summary print it.
    pub fn summary(&self) -> String {
        let processes: u32 = self
            .rounds
            .iter()
            .flat_map(|r| r.batches.iter())
            .map(|b| b.processes)
            .sum();
        let sizes: BTreeSet<usize> = self
            .rounds
            .iter()
            .flat_map(|r| r.batches.iter().map(|b| b.tests.len()))
            .collect();
        let sizes: Vec<String> = sizes.iter().map(ToString::to_string).collect();
        let orders: Vec<&str> = self.rounds.iter().map(|r| r.order.as_str()).collect();
        let workers: BTreeSet<String> = self
            .rounds
            .iter()
            .flat_map(|r| r.batches.iter())
            .map(|b| {
                b.workers
                    .map_or_else(|| "unknown".to_owned(), |w| w.to_string())
            })
            .collect();
        let mut summary = format!(
            "{} round(s) in {processes} runner process(es) ({} test(s) per process; order {}; workers {})",
            self.rounds.len(),
            sizes.join(" or "),
            orders.join(", "),
            workers.into_iter().collect::<Vec<_>>().join(" or "),
        );
        if !self.replayed_alone.is_empty() {
            let _ = write!(
                summary,
                "; {} test(s) red in a batch replayed alone",
                self.replayed_alone.len()
            );
        }
        if !self.order_dependent.is_empty() {
            let _ = write!(
                summary,
                ", {} of them order-dependent in the batch",
                self.order_dependent.len()
            );
        }
        if let Some(processes) = self.base_version_processes {
            let _ = write!(
                summary,
                "; the base's version in {processes} runner process(es)"
            );
        }
        match (self.parallel, self.solo_round) {
            (Parallel::Rounds, Some(round)) => {
                let _ = write!(
                    summary,
                    "; up to {} runner processes at once, round {round} with nothing beside it",
                    self.jobs
                );
            }
            (Parallel::Rounds, None) => {
                let _ = write!(
                    summary,
                    "; up to {} runner processes at once (the whole suite's run ran alone)",
                    self.jobs
                );
            }
            (Parallel::Sequential, _) => summary.push_str("; one runner process at a time"),
        }
        summary
    }
}

/// A touched test skipped in every replay that the merge base's own checkout skips for the
/// same reason: the change did not make it skip, so the lane reports it and does not
/// refuse (docs/gate.md, step 10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SkippedAsAtBase {
    /// The test.
    pub test: String,
    /// The runner's reason for the skip, as the head's replay gave it.
    pub reason: Option<String>,
}

/// A touched test in the report.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TouchedReport {
    /// The test and its file; `new` when the change added it (untrusted).
    #[serde(flatten)]
    pub test: TouchedTest,
    /// Its bucket after the replays; `None` when time ran out before any.
    pub bucket: Option<Bucket>,
}

/// `score-report.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreReport<'a> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// Always `merge`.
    pub lane: &'static str,
    /// Always 0: the lane allows no flake.
    pub flake_budget: u32,
    /// The merge base the policy was read from.
    pub base: &'a str,
    /// The commit judged.
    pub head: &'a str,
    /// Accepted.
    pub pass: bool,
    /// Every touched test gave the same outcome in every replay.
    pub deterministic: bool,
    /// Why not, in order.
    pub reasons: &'a [Reason],
    /// How many tests the lane ran and how (`[lane] replay`), zero said plainly.
    pub replayed: &'a Replayed,
    /// The whole suite's one run; `None` when `replay = "touched"` or time ran out first.
    pub suite: Option<&'a SuiteRun>,
    /// The replays per test.
    pub min_replays: u32,
    /// The seed every replay was pinned to.
    pub seed: Option<u64>,
    /// The lane's limit and the time it took.
    pub max_wall_seconds: u32,
    /// Seconds the whole gate took.
    pub wall_seconds: f64,
    /// Seconds the runner's probe (which plugins it has) and its listing of the tests took
    /// (runner processes, like the replays); `None` when no test file changed.
    pub listing_seconds: Option<f64>,
    /// Tests the change touched.
    pub touched: &'a [TouchedReport],
    /// Touched tests skipped in every replay as the merge base skips them: not run, not
    /// refused.
    pub skipped_as_at_base: &'a [SkippedAsAtBase],
    /// Every replay.
    pub runs: &'a [ReplayRun],
    /// How the replays were batched; absent when each ran in its own process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batching: Option<&'a Batching>,
    /// Diff-rule findings.
    pub findings: &'a [Finding],
    /// Fixture drift against an unchanged lock.
    pub fixture_drift: &'a [Drift],
    /// Human-owned files the change touches (approved or not).
    pub human_owned: &'a [OwnedChange],
    /// Approvals given.
    pub approvals: &'a [Approval],
    /// Test-infrastructure changes (approved or not).
    pub test_infrastructure: &'a [InfraChange],
    /// Data files under test folders the fixture lock does not pin.
    pub unlocked_data: &'a [String],
    /// Replays whose report did not account for the run.
    pub unaccounted: &'a [Unaccounted],
    /// The change judged with the base's tests; `None` when no pytest module was touched.
    pub base_judgement: Option<&'a BaseJudgement>,
    /// Seconds the base-version replay took (its worktree and runner processes).
    pub base_version_seconds: Option<f64>,
    /// Ledger lines the change appended, each checked against the history.
    pub receipts: &'a [Receipt],
    /// Freezes in force for tests the change did not touch.
    pub freezes_in_force: Vec<String>,
}

/// Whether every test's replays agree.
pub fn deterministic(replays: &[Classified]) -> bool {
    replays
        .iter()
        .all(|t| t.failures == 0 || t.failures == t.runs)
}

/// The Markdown summary for `$GITHUB_STEP_SUMMARY`.
pub fn markdown(report: &ScoreReport<'_>) -> String {
    let mut out = String::new();
    let verdict = if report.pass { "accepted" } else { "rejected" };
    let _ = writeln!(out, "### candor gate: {verdict}");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Merge lane, flake budget 0. Base `{}`, head `{}`; policy read from the base.",
        short(report.base),
        short(report.head)
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "Ran: {}.", escape(&report.replayed.summary));
    let _ = writeln!(out);
    if let Some(batching) = report.batching {
        let _ = writeln!(out, "Batched: {}.", escape(&batching.summary()));
        let _ = writeln!(out);
        for dependent in &batching.order_dependent {
            let _ = writeln!(
                out,
                "- order-dependent in its batch: `{}` was {} in round {} and green alone; judged alone (`{}`)",
                dependent.test.replace('`', "'"),
                dependent.batched.as_str(),
                dependent.round,
                dependent.next.replace('`', "'"),
            );
        }
        if !batching.order_dependent.is_empty() {
            let _ = writeln!(out);
        }
    }
    if !report.reasons.is_empty() {
        let _ = writeln!(out, "**Why rejected**");
        let _ = writeln!(out);
        for reason in report.reasons {
            let _ = writeln!(out, "- {}", escape(&reason.describe()));
        }
        let _ = writeln!(out);
    }
    if !report.touched.is_empty() {
        let _ = writeln!(
            out,
            "| touched test | new | replays (seed {}) |",
            report
                .seed
                .map_or_else(|| "none".to_owned(), |s| s.to_string())
        );
        let _ = writeln!(out, "| --- | --- | --- |");
        for touched in report.touched {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                touched.test.id.replace('`', "'").replace('|', "\\|"),
                if touched.test.new {
                    "yes (untrusted)"
                } else {
                    "no"
                },
                touched.bucket.map_or("not run", Bucket::as_str)
            );
        }
        let _ = writeln!(out);
    }
    for skipped in report.skipped_as_at_base {
        let _ = writeln!(
            out,
            "- not run: `{}` is skipped here as at the merge base ({})",
            skipped.test.replace('`', "'"),
            escape(skipped.reason.as_deref().unwrap_or("no reason given"))
        );
    }
    for finding in report.findings {
        let _ = writeln!(
            out,
            "- `{}:{}` {}: {}",
            finding.file.replace('`', "'"),
            finding.line,
            finding.rule,
            escape(&finding.reason)
        );
    }
    for approval in report.approvals {
        let _ = writeln!(
            out,
            "- approved by {}: {}",
            escape(&approval.by),
            escape(&approval.approved.join(", "))
        );
    }
    out
}

/// Text from the change (test ids, paths, messages) made inert in Markdown: no table
/// cell breaks, no HTML, no links or images, no emphasis.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '|' | '[' | ']' | '(' | ')' | '!' | '*' | '_' | '`' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// The first five of `tests`, and how many more.
fn first_few(tests: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut named = tests
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if tests.len() > SHOWN {
        let _ = write!(named, " and {} more", tests.len() - SHOWN);
    }
    named
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classified(test: &str, bucket: Bucket, runs: u32, failures: u32) -> Classified {
        Classified {
            test: test.to_owned(),
            side: None,
            bucket,
            spend: bucket.spend(),
            reason: String::new(),
            runs,
            failures,
        }
    }

    #[test]
    fn a_clean_change_passes_and_any_red_replay_rejects() {
        let green = [classified("t", Bucket::StablePass, 3, 0)];
        let clean = lane_verdict(&LaneFindings {
            replays: &green,
            ..LaneFindings::default()
        });
        assert!(clean.pass, "{clean:?}");
        let flaky = [classified("t", Bucket::Noise, 3, 1)];
        let verdict = lane_verdict(&LaneFindings {
            replays: &flaky,
            ..LaneFindings::default()
        });
        assert!(!verdict.pass);
        assert!(verdict.reasons[0].describe().contains("a cassette gap"));
        assert!(!deterministic(&flaky) && deterministic(&green));
    }

    #[test]
    fn approval_covers_human_owned_files_but_never_a_red_replay() {
        let owned = [OwnedChange {
            path: "candor.toml".to_owned(),
            role: super::super::human_owned::Role::Policy,
            status: super::super::diff::FileStatus::Modified,
            ledger_line: None,
        }];
        let red = [classified("t", Bucket::InvariantMiss, 3, 3)];
        let unapproved = lane_verdict(&LaneFindings {
            human_owned: &owned,
            ..LaneFindings::default()
        });
        assert_eq!(
            unapproved.reasons,
            [Reason::HumanOwnedFilesChanged {
                paths: vec!["candor.toml".to_owned()]
            }]
        );
        let approved = lane_verdict(&LaneFindings {
            human_owned: &owned,
            approved_by: Some("alice"),
            replays: &red,
            ..LaneFindings::default()
        });
        assert!(!approved.pass);
        assert_eq!(approved.approvals[0].approved, ["candor.toml"]);
        assert!(matches!(approved.reasons[0], Reason::ReplayFailed { .. }));
    }

    #[test]
    fn text_from_the_change_is_inert_in_the_summary() {
        assert_eq!(
            escape("t[1] | ![x](http://e) <b>"),
            "t\\[1\\] \\| \\!\\[x\\]\\(http://e\\) &lt;b>"
        );
    }

    #[test]
    fn a_touched_test_skipped_in_every_replay_rejects() {
        let skipped = [(
            "t".to_owned(),
            Some("the merge base runs it (pass): the change made it skip".to_owned()),
        )];
        let verdict = lane_verdict(&LaneFindings {
            skipped: &skipped,
            ..LaneFindings::default()
        });
        assert_eq!(
            verdict.reasons,
            [Reason::ReplaySkipped {
                test: "t".into(),
                merge_base: skipped[0].1.clone()
            }]
        );
        assert_eq!(
            verdict.reasons[0].describe(),
            "t was skipped in every replay: a touched test must run (the merge base runs it (pass): the change made it skip)"
        );
    }

    #[test]
    fn an_untouched_test_the_change_made_skip_in_the_suite_rejects() {
        let skipped = [(
            "tests/test_tax.py::test_with_tax".to_owned(),
            "the merge base runs it (pass): the change made it skip".to_owned(),
        )];
        let verdict = lane_verdict(&LaneFindings {
            skipped_in_suite: &skipped,
            ..LaneFindings::default()
        });
        assert!(!verdict.pass);
        assert_eq!(
            verdict.reasons[0].describe(),
            "tests/test_tax.py::test_with_tax was skipped in the whole suite's run, not as at the merge base (the merge base runs it (pass): the change made it skip)"
        );
    }

    #[test]
    fn tests_the_code_no_longer_generates_reject_unless_approved() {
        let vanished = ["tests/test_tax.py::test_with_tax[reduced]".to_owned()];
        let verdict = lane_verdict(&LaneFindings {
            vanished: &vanished,
            ..LaneFindings::default()
        });
        assert_eq!(
            verdict.reasons,
            [Reason::TestsVanished {
                tests: vanished.to_vec(),
                cause: None,
            }]
        );
        let approved = lane_verdict(&LaneFindings {
            vanished: &vanished,
            approved_by: Some("alice"),
            ..LaneFindings::default()
        });
        assert!(approved.pass, "{approved:?}");
        assert_eq!(approved.approvals[0].approved, vanished);
    }

    #[test]
    fn go_tests_the_head_never_ran_say_why() {
        let vanished = ["m/b::TestTwice".to_owned()];
        let verdict = lane_verdict(&LaneFindings {
            vanished: &vanished,
            vanished_cause: Some("m/b: its test binary ended with status 0 before any test ran"),
            ..LaneFindings::default()
        });
        assert!(!verdict.pass);
        assert_eq!(
            verdict.reasons[0].describe(),
            "tests-vanished: m/b::TestTwice run at the merge base, never at the head, their files and functions kept: m/b: its test binary ended with status 0 before any test ran (--approved-by is needed)"
        );
    }

    #[test]
    fn running_out_of_time_rejects() {
        let verdict = lane_verdict(&LaneFindings {
            replays_left: 2,
            max_wall_seconds: 180,
            ..LaneFindings::default()
        });
        assert!(!verdict.pass);
        assert!(verdict.reasons[0].describe().starts_with("out of time"));
    }

    fn suite(tests: u32, failed: &[&str]) -> SuiteRun {
        SuiteRun {
            tests,
            failed: failed.iter().map(|t| (*t).to_owned()).collect(),
            excused: Vec::new(),
            exit_code: i32::from(!failed.is_empty()),
            log: String::new(),
            report_contradicted: None,
            left_out: Vec::new(),
        }
    }

    /// Issue #12 item 6: the lane always says how many tests it ran, zero plainly.
    #[test]
    fn the_report_says_how_many_tests_ran_and_how_zero_included() {
        let scope = |mode, changed_test_files, touched_tests| ReplayScope {
            mode,
            changed_test_files,
            touched_tests,
            min_replays: 3,
        };
        let none = replayed(scope(ReplayMode::Touched, 0, 0), None, &[]);
        assert_eq!(
            none.summary,
            "0 tests replayed: the change touched no test file (replay = \"touched\": the rest of the suite was not run)"
        );
        assert_eq!(
            (none.suite_tests, none.touched_tests, none.replays),
            (None, 0, 0)
        );
        let listed_none = replayed(scope(ReplayMode::All, 2, 0), Some(&suite(7, &[])), &[]);
        assert_eq!(
            listed_none.summary,
            "the whole suite ran once (7 test(s), 0 red); 0 tests replayed: the 2 changed test file(s) hold no test the runner lists"
        );
        let out_of_time = replayed(scope(ReplayMode::All, 0, 0), None, &[]);
        assert!(
            out_of_time
                .summary
                .starts_with("the whole suite did not run: time ran out first")
        );
    }

    #[test]
    fn a_red_suite_rejects_once_per_test_and_an_empty_one_rejects_too() {
        let red_replays = [classified("touched", Bucket::InvariantMiss, 3, 3)];
        let broken = suite(9, &["other", "touched"]);
        let verdict = lane_verdict(&LaneFindings {
            replays: &red_replays,
            suite: Some(&broken),
            ..LaneFindings::default()
        });
        // `touched` is rejected by its replays; the suite's reason names the rest.
        assert_eq!(
            verdict.reasons[1],
            Reason::SuiteFailed {
                tests: vec!["other".to_owned()]
            }
        );
        let green_replays = [classified("touched", Bucket::StablePass, 3, 0)];
        let beside = suite(9, &["touched"]);
        let verdict = lane_verdict(&LaneFindings {
            replays: &green_replays,
            suite: Some(&beside),
            ..LaneFindings::default()
        });
        assert_eq!(
            verdict.reasons,
            [Reason::SuiteFailed {
                tests: vec!["touched".to_owned()]
            }],
            "red beside the suite, green alone: still a failure"
        );
        let empty = suite(0, &[]);
        let verdict = lane_verdict(&LaneFindings {
            suite: Some(&empty),
            ..LaneFindings::default()
        });
        assert_eq!(verdict.reasons, [Reason::SuiteRanNothing]);
        let many = suite(9, &["a", "b", "c", "d", "e", "f", "g"]);
        let verdict = lane_verdict(&LaneFindings {
            suite: Some(&many),
            ..LaneFindings::default()
        });
        assert_eq!(
            verdict.reasons[0].describe(),
            "the whole suite's run failed 7 test(s): a, b, c, d, e and 2 more"
        );
    }

    /// A failing status beside a report with no red test is refused: the report is a file
    /// the tests' process can rewrite, the status is not. A status a red or excused test
    /// explains, and a green run, are not this reason.
    #[test]
    fn a_suite_that_exits_non_zero_with_a_green_report_is_unaccounted() {
        let unexplained = SuiteRun {
            exit_code: 1,
            ..suite(9, &[])
        };
        let verdict = lane_verdict(&LaneFindings {
            suite: Some(&unexplained),
            ..LaneFindings::default()
        });
        assert!(!verdict.pass);
        assert!(
            matches!(
                &verdict.reasons[..],
                [Reason::ReportUnaccounted { test, problem }]
                    if test == "the whole suite's run" && problem.contains("exited 1")
            ),
            "{:?}",
            verdict.reasons
        );
        let excused = SuiteRun {
            exit_code: 1,
            excused: vec!["frozen".to_owned()],
            ..suite(9, &[])
        };
        let verdict = lane_verdict(&LaneFindings {
            suite: Some(&excused),
            ..LaneFindings::default()
        });
        assert!(verdict.pass, "{:?}", verdict.reasons);
        let red = SuiteRun {
            exit_code: 1,
            ..suite(9, &["a"])
        };
        let verdict = lane_verdict(&LaneFindings {
            suite: Some(&red),
            ..LaneFindings::default()
        });
        assert!(
            !verdict
                .reasons
                .iter()
                .any(|r| matches!(r, Reason::ReportUnaccounted { .. })),
            "{:?}",
            verdict.reasons
        );
        let green = suite(9, &[]);
        let verdict = lane_verdict(&LaneFindings {
            suite: Some(&green),
            ..LaneFindings::default()
        });
        assert!(verdict.pass, "{:?}", verdict.reasons);
        let contradicted = SuiteRun {
            report_contradicted: Some(
                "pytest's own summary says `=== 1 failed, 1 passed in 0.05s ===`".to_owned(),
            ),
            ..suite(9, &[])
        };
        let verdict = lane_verdict(&LaneFindings {
            suite: Some(&contradicted),
            ..LaneFindings::default()
        });
        assert!(
            matches!(
                &verdict.reasons[..],
                [Reason::ReportUnaccounted { problem, .. }] if problem.contains("1 failed, 1 passed")
            ),
            "status 0, report green, pytest's own line red: {:?}",
            verdict.reasons
        );
    }
}
