//! `candor compare`: the merge base's worktree under `.candor/worktrees`, one runner
//! process per run on each side, a run record and a history run for each, the ticket on
//! same-rate, and the order investigation when isolation does not explain a suite's red.
//! The statistics and the verdict are [`crate::compare`]'s.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use jiff::civil::Date;

use super::{History, Lap, Ports, short};
use crate::app::running::{RunPlace, run_record, scratch};
use crate::classify::classify;
use crate::cli::error::CliError;
use crate::cli::output::terminal_safe;
use crate::cli::settings::{CompareSettings, Workspace};
use crate::compare::ticket::{self, FirstFailure, Ticket};
use crate::compare::{self, CompareVerdict, Measurement, SideSummary, run_seed};
use crate::events::{CompareEvent, Event, SuiteHistory};
use crate::git::Repository;
use crate::history::{HistoryStore, Source};
use crate::policy::Config;
use crate::records::{self, RunRecord, Side};
use crate::reliability::ReliabilityFile;
use crate::results::{Outcome, ParseOptions};
use crate::runner::process::Executor;
use crate::runner::{self, Adapter, RunOptions, RunReport, SeedSupport};
use crate::stats::sequential::{Design, detectable_increase};

/// Where candor keeps the merge base's worktrees, relative to the repository root: one
/// folder per run (`base-XXXXXX`), removed when the run ends, so that two runs at once
/// never check out over each other.
pub const WORKTREES_DIR: &str = ".candor/worktrees";

/// The merge base's worktree of one run: removed (folder and git's registration) when
/// dropped, whether the run finished or failed.
pub(crate) struct BaseWorktree<'a> {
    git: &'a dyn Repository,
    pub(crate) path: PathBuf,
}

impl<'a> BaseWorktree<'a> {
    /// A fresh worktree of `commit` in a folder no other run uses.
    fn check_out(
        git: &'a dyn Repository,
        repo_root: &Path,
        commit: &str,
    ) -> Result<BaseWorktree<'a>, CliError> {
        let parent = crate::confine::check_write(repo_root, Path::new(WORKTREES_DIR))?;
        let write_error = |source| CliError::Write {
            path: parent.clone(),
            source,
        };
        fs_err::create_dir_all(&parent).map_err(write_error)?;
        // The random name is reserved by creating it; git fills the empty folder.
        let path = tempfile::Builder::new()
            .prefix("base-")
            .tempdir_in(&parent)
            .map_err(write_error)?
            .keep();
        let worktree = BaseWorktree { git, path };
        git.checkout_worktree(&worktree.path, commit)?;
        Ok(worktree)
    }
}

impl Drop for BaseWorktree<'_> {
    fn drop(&mut self) {
        // Best effort: a worktree left behind is listed by `git worktree list`.
        let _ = self.git.remove_worktree(&self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The merge base of HEAD with `against` (default: the default branch).
fn resolve_base(
    git: &dyn Repository,
    workspace: &Workspace,
    against: Option<&str>,
) -> Result<(String, String), CliError> {
    let head = workspace.commit.clone().ok_or(CliError::NoCommit)?;
    let against = match against {
        Some(given) => given.to_owned(),
        None => git.default_branch()?.ok_or_else(|| CliError::NoMergeBase {
            against: "the default branch (there is no origin/HEAD, main or master)".into(),
        })?,
    };
    let base = git
        .merge_base(&head, &against)?
        .ok_or(CliError::NoMergeBase { against })?;
    Ok((base, head))
}

/// One side: where it runs and what it is.
pub(crate) struct SideRoot {
    pub(crate) root: PathBuf,
    pub(crate) commit: String,
    scratch: PathBuf,
}

/// Runs the test on either side and records each run.
pub(crate) struct Bench<'a> {
    pub(crate) test: &'a str,
    pub(crate) adapter: Box<dyn Adapter>,
    executor: &'a dyn Executor,
    timeout: std::time::Duration,
    grace: std::time::Duration,
    pub(crate) base: SideRoot,
    pub(crate) branch: SideRoot,
    pub(crate) records_dir: PathBuf,
    /// `[lane] fixtures`, hashed into every run record, relative to a side's root.
    fixtures: PathBuf,
    store: &'a mut dyn HistoryStore,
    workspace: &'a Workspace,
    first_failures: Vec<(Side, FirstFailure)>,
    /// Keeps the base's worktree for as long as the bench runs.
    _worktree: BaseWorktree<'a>,
}
impl Bench<'_> {
    fn side(&self, side: Side) -> &SideRoot {
        if side == Side::Base {
            &self.base
        } else {
            &self.branch
        }
    }

    /// One run of the test on `side`: runner process, record file, history run.
    pub(crate) fn run(
        &mut self,
        side: Side,
        sequence: u32,
        seed: Option<u64>,
    ) -> Result<RunRecord, CliError> {
        let root = self.side(side);
        let other = if side == Side::Base {
            &self.branch
        } else {
            &self.base
        };
        // Each run gets its own scratch folder so reports never overwrite each other. Each
        // side runs its own code: a run that used the other side's is refused, not judged.
        let context = runner::Context::new(
            &root.root,
            root.scratch.join(format!("{sequence:03}")),
            self.executor,
        )
        .with_timeout(Some(self.timeout), self.grace)
        .with_isolation(std::slice::from_ref(&other.root));
        // The merge base builds into its own worktree: a target folder shared with the
        // branch (`build.target-dir`, `CARGO_TARGET_DIR`) would hand it the branch's test
        // binaries, which cargo names without their checkout's path.
        let context = if side == Side::Base {
            context.with_cargo_target(root.root.join("target"))
        } else {
            context
        };
        let report = self
            .adapter
            .run_one(&context, self.test, RunOptions { seed })
            .map_err(|error| self.side_error(side, error))?;
        let parse = ParseOptions {
            repo_root: Some(root.root.to_string_lossy().into_owned()),
            ..ParseOptions::default()
        };
        let (record, execution) = run_record(
            &RunPlace {
                test: self.test,
                side,
                sequence,
                root: &root.root,
                commit: &root.commit,
                fixtures: &self.fixtures,
                new_test: false,
            },
            &report,
            &parse,
        )?;
        // Missing from a report the runner wrote in time: the id names no test there. A
        // run that hung or crashed before writing its report is a red run, not that.
        let report_written = fs_err::metadata(&record.report).is_ok_and(|m| m.len() > 0);
        if sequence <= 2 && !record.found && !record.timed_out && report_written {
            return Err(CliError::TestMissing {
                test: self.test.to_owned(),
                side: side.as_str(),
                commit: self.side(side).commit.clone(),
                log: record.log.clone(),
                said: Vec::new(),
            });
        }
        if record.outcome == Outcome::Skip {
            return Err(CliError::TestSkipped {
                test: self.test.to_owned(),
                side: side.as_str(),
                log: record.log.clone(),
            });
        }
        if let Some(failure) = execution.and_then(|e| e.failure)
            && record.failed()
            && !self.first_failures.iter().any(|(s, _)| *s == side)
        {
            self.first_failures.push((
                side,
                FirstFailure {
                    seed,
                    failure: *failure,
                    log: record.log.display().to_string(),
                },
            ));
        }
        records::write(&self.records_dir, &record).map_err(|source| CliError::Write {
            path: self.records_dir.clone(),
            source,
        })?;
        self.store_run(side, &report, &parse)?;
        Ok(record)
    }

    /// A runner error on one side, named with the side: an unknown test is the missing
    /// test it is, anything else says that the side could not be measured.
    fn side_error(&self, side: Side, error: runner::RunnerError) -> CliError {
        let commit = self.side(side).commit.clone();
        match error {
            runner::RunnerError::CouldNotRun(not_run) if not_run.unknown_test => {
                CliError::TestMissing {
                    test: self.test.to_owned(),
                    side: side.as_str(),
                    commit,
                    log: not_run.log.clone(),
                    said: not_run.quoted.clone(),
                }
            }
            source => CliError::SideNotMeasured {
                side: side.as_str(),
                commit,
                source,
            },
        }
    }

    /// Stores the run in the history as source=compare, under its side's commit. A report
    /// the runner never wrote is left out: the record says the test was not found.
    fn store_run(
        &mut self,
        side: Side,
        report: &RunReport,
        parse: &ParseOptions,
    ) -> Result<(), CliError> {
        if !fs_err::metadata(&report.report).is_ok_and(|m| m.len() > 0) {
            return Ok(());
        }
        let mut run = crate::app::running::new_run(self.workspace, report, Source::Compare);
        run.commit = Some(self.side(side).commit.clone());
        if side == Side::Base {
            run.branch = None;
        }
        crate::ingest::ingest_file(self.store, &report.report, &run, parse)
            .map_err(CliError::Results)?;
        Ok(())
    }
}

/// Sets up both sides for `compare` and `repro`: the policy, HEAD and its merge base
/// with `against`, the base's worktree, the runner and the history.
pub(crate) fn prepare<'a>(
    test: &'a str,
    against: Option<&str>,
    (repo_root, executor, git): (&Path, &'a dyn Executor, &'a dyn Repository),
    history: &'a mut History,
    workspace: &'a Workspace,
    what: &'static str,
) -> Result<(Bench<'a>, Config), CliError> {
    // The branch side runs the work tree as HEAD's commit: mid-rebase or mid-merge that
    // is neither the change nor a commit on its branch.
    super::refuse_unfinished(git, what)?;
    let config = Config::load(repo_root)?;
    let (base_commit, head) = resolve_base(git, workspace, against)?;
    let base_commit = base_commit.as_str();
    let head = head.as_str();
    // A same-rate verdict writes its ticket at the end; a folder that leads out of the
    // repository is refused before any run, not after them.
    crate::confine::check_write(repo_root, &config.compare.tickets)?;
    let worktree = BaseWorktree::check_out(git, repo_root, base_commit)?;
    let dir = scratch(repo_root, what)?;
    let adapter = {
        let context = runner::Context::new(repo_root, dir.join("probe"), executor);
        runner::adapter(&config.runner, &context)?
    };
    let store = history.create()?;
    let bench = Bench {
        test,
        adapter,
        executor,
        timeout: config.runner.timeout,
        grace: config.runner.grace,
        base: SideRoot {
            root: worktree.path.clone(),
            commit: base_commit.to_owned(),
            scratch: dir.join("base"),
        },
        branch: SideRoot {
            root: repo_root.to_owned(),
            commit: head.to_owned(),
            scratch: dir.join("branch"),
        },
        records_dir: dir.join("records"),
        fixtures: config.lane.fixtures.clone(),
        store,
        workspace,
        first_failures: Vec::new(),
        _worktree: worktree,
    };
    Ok((bench, config))
}

/// `candor compare`: the test on the merge base and on the branch, interleaved, until
/// the sequential design decides. The merge base's worktree is this run's own and goes
/// with it.
pub fn compare(
    settings: &CompareSettings,
    ports: &mut Ports<'_>,
    git: &dyn Repository,
    history: &mut History,
) -> Result<CompareEvent, CliError> {
    let today = ports.clock.today();
    let workspace = &settings.workspace;
    let repo_root = ports.root;
    let (mut bench, config) = prepare(
        &settings.test_id,
        settings.base.as_deref(),
        (repo_root, ports.executor, git),
        history,
        workspace,
        "compare",
    )?;
    let (base_commit, head) = (bench.base.commit.clone(), bench.branch.commit.clone());
    let runs = settings.runs.unwrap_or(config.compare.runs);
    let alpha = settings.alpha.unwrap_or(config.compare.alpha);
    let look_every = if settings.no_early_stop {
        runs
    } else {
        config.compare.look_every.min(runs)
    };
    let design = Design::new(alpha, runs, look_every, config.compare.min_increase);
    let seed = settings.seed.unwrap_or_else(crate::runner::pick_seed);
    let (takes_seed, seed_controls) = match bench.adapter.seed_support() {
        SeedSupport::Controls(what) => (true, what),
        SeedSupport::None(why) => (false, why),
    };
    let runner_name = bench.adapter.kind().as_str();
    ports.progress(format!(
        "comparing {} on the merge base {} and the branch {} with {runner_name}, seed {seed}",
        terminal_safe(&settings.test_id),
        short(&base_commit, 12),
        short(&head, 12),
    ));
    let total = u64::from(design.max_runs()) * 2;
    let message = RefCell::new(String::new());
    let mut done = 0;
    let measured = compare::measure(
        &design,
        |side, sequence| {
            let run_seed = takes_seed.then(|| run_seed(seed, sequence));
            let record = bench.run(side, sequence, run_seed)?;
            done += 1;
            ports.step(message.borrow().clone(), done, total);
            Ok::<_, CliError>(record)
        },
        |base, branch| {
            *message.borrow_mut() = format!(
                "base {}/{} red, branch {}/{} red",
                base.failures, base.runs, branch.failures, branch.runs
            );
        },
    );
    let measured = measured?;
    let verdict = measured.verdict();
    let base_summary = SideSummary::of(&measured.records, Side::Base, measured.base);
    let branch_summary = SideSummary::of(&measured.records, Side::Branch, measured.branch);
    let runs_per_side = measured.base.runs.min(measured.branch.runs);
    let detectable = detectable_increase(
        measured.base.rate().unwrap_or(0.0),
        runs_per_side,
        design.threshold_at(runs_per_side),
        0.8,
    );
    let protection = compare::Protection::of(&design, measured.base);
    let drop = (verdict == CompareVerdict::FewerFailures)
        .then(|| compare::Drop::of(measured.base, measured.branch, alpha))
        .flatten();
    let suite_history = suite_history(&bench, &head)?;
    let records_dir = bench.records_dir.clone();
    let ticket = if verdict == CompareVerdict::SameRate {
        Some(write_ticket(
            repo_root,
            &config,
            today,
            &bench,
            &measured,
            (&base_summary, &branch_summary),
            (detectable, protection),
        )?)
    } else {
        None
    };
    let order = if matches!(
        verdict,
        CompareVerdict::PassesBoth | CompareVerdict::FailsBoth
    ) {
        // The comparison stands on its own: an investigation the runner cannot do (cargo
        // and nextest have no ordered runs) is reported, not an error that hides it.
        let wanted = SuiteWanted {
            // Failing alone on both sides says nothing of the suite: check its order
            // before advising anything (docs/compare.md).
            always: verdict == CompareVerdict::FailsBoth,
            head: &head,
        };
        match suite_context(&bench, ports, workspace, seed, &config, &wanted) {
            Ok(finding) => finding,
            Err(error) => {
                ports.warning(format!(
                    "the red seen in a suite run was not rerun in its order: {error}"
                ));
                None
            }
        }
    } else {
        None
    };
    let buckets = classify(
        &measured
            .records
            .iter()
            .filter(|r| r.side == Side::Branch)
            .cloned()
            .collect::<Vec<_>>(),
    );
    let timing = classify(&measured.records)
        .iter()
        .any(|c| c.bucket == crate::classify::Bucket::TimingSensitive);
    let advice = advise(&Advising {
        verdict,
        drop: drop.as_ref(),
        alpha,
        order: order.as_ref(),
        suite_history: &suite_history,
        timing,
        seed: (!takes_seed).then_some(seed_controls),
    });
    let found = CompareEvent {
        test: settings.test_id.clone(),
        verdict,
        base: base_summary,
        branch: branch_summary,
        p_value: measured.p_value,
        stopped: measured.stop,
        runs: measured.runs(),
        alpha,
        max_runs_per_side: design.max_runs(),
        detectable_increase: detectable,
        protection: meaningful_protection(verdict, protection),
        drop,
        suite_history,
        seed,
        runner: runner_name.to_owned(),
        seed_controls: seed_controls.to_owned(),
        buckets,
        ticket,
        records: records_dir,
        advice,
        order,
    };
    ports.emit(Event::Compare(found.clone()));
    Ok(found)
}

/// A suite run is a ci or local run of more than this one test.
fn is_suite_run(bench: &Bench<'_>, run_id: i64) -> bool {
    matches!(bench.store.run(run_id), Ok(Some(run)) if run.executions > 1)
}

/// How the test fared in suite runs at `head`.
fn suite_history(bench: &Bench<'_>, head: &str) -> Result<SuiteHistory, CliError> {
    let mut history = SuiteHistory::default();
    for stored in bench.store.executions(bench.test, 200)? {
        let outcome = stored.execution.outcome;
        if !matches!(stored.source, Source::Ci | Source::Local)
            || stored.commit.as_deref() != Some(head)
            || outcome == Outcome::Skip
            || !is_suite_run(bench, stored.run_id)
        {
            continue;
        }
        if outcome.is_red() {
            history.red += 1;
        } else {
            history.green += 1;
        }
    }
    Ok(history)
}

/// The advice's inputs.
struct Advising<'a> {
    verdict: CompareVerdict,
    drop: Option<&'a compare::Drop>,
    alpha: f64,
    order: Option<&'a crate::order::Finding>,
    suite_history: &'a SuiteHistory,
    timing: bool,
    /// Why the runner takes no seed, when it takes none.
    seed: Option<&'static str>,
}

/// What the reader does next. The verdict's own sentence, unless something the
/// comparison learned contradicts it: the suite's order explains the red, the history
/// has the test green in its suite at this commit, the assertion is on wall time, or the
/// runner has no seed to pin.
fn advise(advising: &Advising<'_>) -> String {
    let verdict = advising.verdict;
    let explained = advising
        .order
        .map(|f| &f.investigation.verdict)
        .filter(|v| v.explains_red());
    let named = |order: &crate::order::Verdict| {
        let culprits = order.culprits();
        if culprits.is_empty() {
            order.as_str().to_owned()
        } else {
            format!("{} ({})", order.as_str(), culprits.join(", "))
        }
    };
    match verdict {
        CompareVerdict::FewerFailures => advising.drop.map_or_else(
            || verdict.advice().to_owned(),
            |d| d.sentence(advising.alpha),
        ),
        CompareVerdict::FailsBoth => {
            if let Some(order) = explained {
                return format!(
                    "fails alone on both sides, but its suite's order explains it: {}; the test's own defect, neither this change nor a broken base: fix the test (the suggested fix above)",
                    named(order)
                );
            }
            let green = advising.suite_history.green;
            if green > 0 {
                let found = advising.order.map_or_else(
                    || "the order was not investigated".to_owned(),
                    |f| {
                        format!(
                            "the order investigation found {}",
                            f.investigation.verdict.as_str()
                        )
                    },
                );
                return format!(
                    "fails alone on both sides, but passed in {green} suite run(s) at this commit: it depends on what runs before it ({found}); not this change, and not yet a report against the base: rerun it in its suite's order (candor order --from the green run's results file)"
                );
            }
            if advising.timing {
                let pin = advising.seed.map_or_else(String::new, |why| {
                    format!("; no seed exists to pin ({why}), so pinning is impossible")
                });
                return format!(
                    "timing-sensitive on both sides: the failing assertion compares a measured time against a bound, so the machine's load decides it, not this change{pin}; fix the test's clock, and rerun on an idle machine before reporting it against the base"
                );
            }
            verdict.advice().to_owned()
        }
        CompareVerdict::PassesBoth => {
            if let Some(order) = explained {
                return format!(
                    "no failure in isolation, but its suite's order explains the red: {}; the test's own defect, not this change: fix the test (the suggested fix above)",
                    named(order)
                );
            }
            match advising.seed {
                Some(why) => format!(
                    "no failure reproduced in isolation, and no seed exists to pin ({why}): rerun it in its suite (candor order); write nothing yet"
                ),
                None => verdict.advice().to_owned(),
            }
        }
        _ => verdict.advice().to_owned(),
    }
}

/// The protection line only where a rise is the question and one is possible: not when
/// both sides failed every run (nothing can rise above 100%), not on a drop.
fn meaningful_protection(
    verdict: CompareVerdict,
    protection: compare::Protection,
) -> Option<compare::Protection> {
    let applies = matches!(
        verdict,
        CompareVerdict::SameRate | CompareVerdict::PassesBoth
    );
    (applies && protection.to > protection.from).then_some(protection)
}

/// Which suite run's order to rerun.
struct SuiteWanted<'a> {
    /// Investigate even without a red suite run in the history (the runner's listing
    /// order then), preferring a green suite run at `head`.
    always: bool,
    /// The branch's commit.
    head: &'a str,
}

/// How long the order investigation compare starts may take.
const ORDER_BUDGET: std::time::Duration = std::time::Duration::from_secs(600);

/// When isolation does not explain a red the history saw in a suite run (a run of more
/// than this test, from CI or `candor test`), the order investigation on the branch: the
/// run's own order when its results file is still there, else the runner's.
fn suite_context(
    bench: &Bench<'_>,
    ports: &mut Ports<'_>,
    workspace: &Workspace,
    seed: u64,
    config: &Config,
    wanted: &SuiteWanted<'_>,
) -> Result<Option<crate::order::Finding>, CliError> {
    let executions = bench.store.executions(bench.test, 200)?;
    let suite_run = |green_at_head: bool| {
        executions
            .iter()
            .filter(|e| matches!(e.source, Source::Ci | Source::Local))
            .filter(|e| {
                if green_at_head {
                    e.execution.outcome == Outcome::Pass && e.commit.as_deref() == Some(wanted.head)
                } else {
                    e.execution.outcome.is_red()
                }
            })
            .find_map(|e| {
                bench
                    .store
                    .run(e.run_id)
                    .ok()
                    .flatten()
                    .filter(|run| run.executions > 1)
            })
    };
    // Failing alone, a test that passes in its suite passes after something: the green
    // run's order is the one to bisect.
    let chosen = if wanted.always {
        suite_run(true).or_else(|| suite_run(false))
    } else {
        suite_run(false)
    };
    if chosen.is_none() && !wanted.always {
        return Ok(None);
    }
    // Without a suite run to follow, a runner that cannot run tests together has no
    // order to check: its alone stage would only repeat what the comparison measured.
    if chosen.is_none()
        && matches!(
            bench.adapter.order_support().given,
            runner::GivenOrder::Unsupported(_)
        )
    {
        return Ok(None);
    }
    match &chosen {
        Some(run) => ports.progress(format!(
            "isolation does not explain the outcome of suite run #{}: rerunning {} in that order",
            run.id,
            terminal_safe(bench.test)
        )),
        None => ports.progress(format!(
            "fails alone on both sides: rerunning {} in the runner's order before advising",
            terminal_safe(bench.test)
        )),
    }
    let parse = &workspace.parse;
    let recorded = chosen
        .as_ref()
        .and_then(|run| run.run.source_path.as_deref())
        .map(Path::new)
        .filter(|path| path.is_file())
        .and_then(|path| {
            super::order::recorded_order(path, bench.test, &*bench.adapter, parse).ok()
        });
    let repo_root = ports.root;
    let dir = scratch(repo_root, "order")?;
    let setup = crate::order::Setup {
        adapter: &*bench.adapter,
        executor: bench.executor,
        repo_root,
        dir: &dir,
        timeout: config.runner.timeout,
        grace: config.runner.grace,
        parse,
        commit: workspace.commit.as_deref(),
        fixtures: &config.lane.fixtures,
    };
    let (request, _dropped) = crate::order::build_request(&setup, bench.test, recorded)?;
    let clock = Lap::start(ports.clock);
    let plan = crate::order::Plan::new(seed, ORDER_BUDGET);
    let finding = crate::order::investigate(&setup, &request, &plan, &clock, &mut |_, _| {})?;
    Ok(Some(finding))
}

fn write_ticket(
    repo_root: &Path,
    config: &Config,
    today: Date,
    bench: &Bench<'_>,
    measured: &Measurement,
    (base, branch): (&SideSummary, &SideSummary),
    (detectable, protection): (Option<f64>, compare::Protection),
) -> Result<PathBuf, CliError> {
    let test = bench.test;
    let history = bench
        .store
        .executions(test, config.reliability.tiers.window_runs)
        .ok()
        .map(|executions| {
            // Suite runs only: the comparison's own runs are the measurement, not history.
            let counted: Vec<_> = executions
                .iter()
                .filter(|e| matches!(e.source, Source::Ci | Source::Local))
                .filter(|e| e.execution.outcome != Outcome::Skip)
                .collect();
            let failures = counted
                .iter()
                .filter(|e| e.execution.outcome.is_red())
                .count();
            (failures as u64, counted.len() as u64)
        });
    let tier = ReliabilityFile::load(&repo_root.join(&config.reliability.file))
        .ok()
        .and_then(|file| crate::triage::tier_of(&file, test));
    let fingerprint_id = next_fingerprint_id(config);
    let first = |side| {
        bench
            .first_failures
            .iter()
            .find(|(s, _)| *s == side)
            .map(|(_, f)| f)
    };
    let records_dir = bench.records_dir.display().to_string();
    let markdown = ticket::render(&Ticket {
        test,
        today,
        base,
        branch,
        p_value: measured.p_value,
        detectable_increase: detectable,
        protection,
        base_failure: first(Side::Base),
        branch_failure: first(Side::Branch),
        records_dir: &records_dir,
        history,
        tier,
        fingerprint_id: &fingerprint_id,
    });
    let dir = crate::confine::check_write(repo_root, &config.compare.tickets)?;
    let write_error = |source| CliError::Write {
        path: dir.clone(),
        source,
    };
    fs_err::create_dir_all(&dir).map_err(write_error)?;
    let slug: String = test
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(80)
        .collect();
    let mut file = tempfile::NamedTempFile::new_in(&dir).map_err(write_error)?;
    std::io::Write::write_all(&mut file, markdown.as_bytes()).map_err(write_error)?;
    // Never over another ticket, even one written meanwhile by another candor.
    let mut n = 1;
    let path = loop {
        let candidate = if n == 1 {
            dir.join(format!("{today}-{slug}.md"))
        } else {
            dir.join(format!("{today}-{slug}-{n}.md"))
        };
        match file.persist_noclobber(&candidate) {
            Ok(_) => break candidate,
            Err(error) if error.error.kind() == std::io::ErrorKind::AlreadyExists => {
                file = error.file;
                n += 1;
            }
            Err(error) => return Err(write_error(error.error)),
        }
    };
    Ok(path
        .strip_prefix(repo_root)
        .map(Path::to_owned)
        .unwrap_or(path))
}

/// The next free `FP-NNN` among the configured fingerprints.
fn next_fingerprint_id(config: &Config) -> String {
    let highest = config
        .fingerprints
        .iter()
        .filter_map(|f| f.id.strip_prefix("FP-")?.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    format!("FP-{:03}", highest + 1)
}

/// #13 item 4: `compare` in milliseconds, with the fake executor (the `command` runner,
/// each run's JUnit report scripted), a fake git whose merge base is checked out into the
/// test's folder, and a history in a SQLite file there.
#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::app::fakes::{FakeGit, Scene, TickingClock, junit, said, steps, tree, workspace};
    use crate::events::Collected;
    use crate::runner::fake::{FakeExecutor, FakeRun};

    const TEST: &str = "tests/test_pool.py::test_checkout";
    const BASE: &str = "base0000000000000000000000000000000000000";
    const HEAD: &str = "head0000000000000000000000000000000000000";
    const POLICY: &str = r#"
[runner]
kind = "command"
command = ["fake-runner", "{test}", "--report={report}", "--seed={seed}"]

[compare]
runs = 12
"#;

    /// One run: red or green in its report, or stopped by the timeout before writing one.
    #[derive(Clone, Copy)]
    enum Run {
        Green,
        Red,
        Hangs,
    }

    fn fake_run(run: Run) -> FakeRun {
        match run {
            Run::Green => FakeRun::exits(0).with_report(junit(&[(TEST, "pass")])),
            Run::Red => FakeRun::exits(1).with_report(junit(&[(TEST, "fail")])),
            Run::Hangs => FakeRun {
                timed_out: true,
                ..FakeRun::exits(-1)
            },
        }
    }

    /// The comparison with `base(n)` and `branch(n)` deciding the n-th run of each side
    /// (from 1), and what it emitted.
    fn compare_with(
        base: impl Fn(u32) -> Run,
        branch: impl Fn(u32) -> Run,
    ) -> (
        Result<CompareEvent, CliError>,
        Collected,
        FakeExecutor,
        Scene,
        FakeGit,
    ) {
        let files = tree(&[
            ("candor.toml", POLICY),
            ("tests/test_pool.py", "def test_checkout(): pass\n"),
        ]);
        let scene = Scene::new(&files);
        let git = FakeGit {
            commits: [(BASE.to_owned(), files.clone()), (HEAD.to_owned(), files)].into(),
            default_branch: Some("main".to_owned()),
            merge_base: Some(BASE.to_owned()),
            ..FakeGit::default()
        };
        // Interleaved as `compare::measure` runs them: base, branch, base, …
        let script = (1..=12).flat_map(|n| [fake_run(base(n)), fake_run(branch(n))]);
        let executor = FakeExecutor::new(script);
        let clock = TickingClock::new(Duration::from_secs(1));
        let mut events = Collected::default();
        let settings = CompareSettings {
            test_id: TEST.to_owned(),
            base: None,
            runs: None,
            alpha: None,
            no_early_stop: false,
            seed: Some(7),
            workspace: workspace(HEAD),
        };
        let mut history = scene.history();
        let found = compare(
            &settings,
            &mut Ports {
                root: &scene.root,
                executor: &executor,
                clock: &clock,
                events: &mut events,
            },
            &git,
            &mut history,
        );
        (found, events, executor, scene, git)
    }

    /// What every comparison emits: the progress line first, a step per run, the
    /// comparison itself last.
    fn assert_events(events: &Collected, found: &CompareEvent) {
        assert_eq!(
            said(events),
            [(
                "progress",
                format!(
                    "comparing {TEST} on the merge base {} and the branch {} with command, seed 7",
                    &BASE[..12],
                    &HEAD[..12]
                )
            )],
        );
        let done: Vec<u64> = steps(events)
            .into_iter()
            .map(|(done, total)| {
                assert_eq!(total, 24);
                done
            })
            .collect();
        assert_eq!(done, (1..=u64::from(found.runs)).collect::<Vec<_>>());
        match events.events.last() {
            Some(crate::events::Event::Compare(last)) => {
                assert_eq!(last.verdict, found.verdict);
                assert_eq!(last.records, found.records);
            }
            other => panic!("the comparison is the last event, not {other:?}"),
        }
    }

    #[test]
    fn a_test_red_on_every_branch_run_and_green_on_the_base_is_a_deterministic_regression() {
        let (found, events, executor, scene, git) = compare_with(|_| Run::Green, |_| Run::Red);
        let found = found.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(found.verdict, CompareVerdict::DeterministicRegression);
        assert_eq!(found.stopped, compare::Stop::Efficacy);
        assert_eq!(
            (found.base.failures, found.branch.failures),
            (0, found.branch.runs)
        );
        assert!(found.runs < 24, "stopped early: {}", found.runs);
        assert_eq!(found.base.commit.as_deref(), Some(BASE));
        assert_eq!(found.branch.commit.as_deref(), Some(HEAD));
        assert_eq!(found.ticket, None);
        assert_events(&events, &found);
        // One process per run, each with its own seed from the base seed.
        let invocations = executor.invocations();
        assert_eq!(invocations.len(), found.runs as usize);
        assert!(
            invocations[0]
                .argv
                .contains(&format!("--seed={}", run_seed(7, 1)))
        );
        // The base ran in its own worktree, gone with the comparison.
        assert!(
            invocations[0]
                .cwd
                .starts_with(scene.root.join(WORKTREES_DIR))
        );
        assert_eq!(invocations[1].cwd, scene.root);
        assert!(git.worktrees.lock().is_ok_and(|w| w.is_empty()));
        assert!(!invocations[0].cwd.exists());
        // A run record per run.
        let records = std::fs::read_dir(&found.records).map_or(0, Iterator::count);
        assert_eq!(records, found.runs as usize);
    }

    #[test]
    fn a_branch_that_fails_more_but_not_always_is_branch_worse() {
        let (found, events, ..) = compare_with(
            |_| Run::Green,
            |n| if n == 1 { Run::Green } else { Run::Red },
        );
        let found = found.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(found.verdict, CompareVerdict::BranchWorse);
        assert_eq!(found.stopped, compare::Stop::Efficacy);
        assert_eq!(found.base.failures, 0);
        assert_eq!(found.branch.failures, found.branch.runs - 1);
        assert_events(&events, &found);
    }

    #[test]
    fn the_same_rate_on_both_sides_writes_the_ticket() {
        let alternate = |n: u32| {
            if n.is_multiple_of(2) {
                Run::Red
            } else {
                Run::Green
            }
        };
        let (found, events, _, scene, _) = compare_with(alternate, alternate);
        let found = found.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(found.verdict, CompareVerdict::SameRate);
        assert_eq!(found.base.failures, found.branch.failures);
        let ticket = found.ticket.clone().unwrap_or_default();
        let text = std::fs::read_to_string(scene.root.join(&ticket)).unwrap_or_default();
        assert!(text.contains(TEST), "{ticket:?}: {text}");
        assert!(found.protection.is_some());
        assert_events(&events, &found);
    }

    #[test]
    fn runs_stopped_by_the_timeout_are_red_runs_not_a_missing_test() {
        let (found, events, _executor, _scene, _git) = compare_with(|_| Run::Green, |_| Run::Hangs);
        let found = found.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(found.verdict, CompareVerdict::DeterministicRegression);
        let records: Vec<RunRecord> = std::fs::read_dir(&found.records)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
            .filter_map(|text| serde_json::from_str(&text).ok())
            .collect();
        assert_eq!(records.len(), found.runs as usize);
        for record in &records {
            assert_eq!(record.timed_out, record.side == Side::Branch, "{record:?}");
            assert_eq!(record.failed(), record.side == Side::Branch, "{record:?}");
        }
        assert_events(&events, &found);
    }
}
