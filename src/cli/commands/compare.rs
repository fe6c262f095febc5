//! `candor compare` and `candor repro`: the I/O around [`crate::compare`] — the merge
//! base's worktree under `.candor/worktrees`, one runner process per run on each side, a
//! run record and a history run for each, the ticket on same-rate, the output.

use crate::history::Location;
use std::path::{Path, PathBuf};

use jiff::civil::Date;
use serde::Serialize;

use super::running::{RunPlace, run_record, scratch};
use super::{Open, open_store};
use crate::classify::{Classified, classify};
use crate::cli::error::CliError;
use crate::cli::output::{Printer, terminal_safe};
use crate::cli::settings::{CompareSettings, ReproSettings, Workspace};
use crate::compare::ticket::{self, FirstFailure, Ticket};
use crate::compare::{
    self, CompareVerdict, Measurement, ReproVerdict, SideSummary, repro_verdict, run_seed,
};
use crate::exit_codes;
use crate::git::Git;
use crate::history::{HistoryStore, Source};
use crate::policy::Config;
use crate::records::{self, RunRecord, Side};
use crate::reliability::ReliabilityFile;
use crate::results::{Outcome, ParseOptions};
use crate::runner::process::SystemExecutor;
use crate::runner::{self, Adapter, RunOptions, RunReport, SeedSupport};
use crate::stats::sequential::{Design, Tally, detectable_increase};

/// Where candor keeps the merge base's worktrees, relative to the repository root: one
/// folder per run (`base-XXXXXX`), removed when the run ends, so that two runs at once
/// never check out over each other.
pub(super) const WORKTREES_DIR: &str = ".candor/worktrees";

/// The merge base's worktree of one run: removed (folder and git's registration) when
/// dropped, whether the run finished or failed.
struct BaseWorktree {
    repo_root: PathBuf,
    path: PathBuf,
}

impl BaseWorktree {
    /// A fresh worktree of `commit` in a folder no other run uses.
    fn check_out(repo_root: &Path, commit: &str) -> Result<BaseWorktree, CliError> {
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
        let worktree = BaseWorktree {
            repo_root: repo_root.to_owned(),
            path,
        };
        Git::new(repo_root).checkout_worktree(&worktree.path, commit)?;
        Ok(worktree)
    }
}

impl Drop for BaseWorktree {
    fn drop(&mut self) {
        // Best effort: a worktree left behind is listed by `git worktree list`.
        let _ = Git::new(&self.repo_root).remove_worktree(&self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The merge base of HEAD with `against` (default: the default branch).
fn resolve_base(
    repo_root: &Path,
    workspace: &Workspace,
    against: Option<&str>,
) -> Result<(String, String), CliError> {
    let head = workspace.commit.clone().ok_or(CliError::NoCommit)?;
    let git = Git::new(repo_root);
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
struct SideRoot {
    root: PathBuf,
    commit: String,
    scratch: PathBuf,
}

/// Runs the test on either side and records each run.
struct Bench<'a> {
    test: &'a str,
    adapter: Box<dyn Adapter>,
    executor: SystemExecutor,
    timeout: std::time::Duration,
    grace: std::time::Duration,
    base: SideRoot,
    branch: SideRoot,
    records_dir: PathBuf,
    /// `[lane] fixtures`, hashed into every run record, relative to a side's root.
    fixtures: PathBuf,
    store: Box<dyn HistoryStore>,
    workspace: &'a Workspace,
    first_failures: Vec<(Side, FirstFailure)>,
    /// Keeps the base's worktree for as long as the bench runs.
    _worktree: BaseWorktree,
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
    fn run(&mut self, side: Side, sequence: u32, seed: Option<u64>) -> Result<RunRecord, CliError> {
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
            &self.executor,
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
                    failure,
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
        let mut run = super::running::new_run(self.workspace, report, Source::Compare);
        run.commit = Some(self.side(side).commit.clone());
        if side == Side::Base {
            run.branch = None;
        }
        crate::ingest::ingest_file(&mut *self.store, &report.report, &run, parse)
            .map_err(CliError::Results)?;
        Ok(())
    }
}

/// Sets up both sides for `compare` and `repro`: the policy, HEAD and its merge base
/// with `against`, the base's worktree, the runner and the history.
fn prepare<'a>(
    test: &'a str,
    against: Option<&str>,
    repo_root: &Path,
    db: &Location,
    workspace: &'a Workspace,
    what: &str,
) -> Result<(Bench<'a>, Config), CliError> {
    let config = Config::load(repo_root)?;
    let (base_commit, head) = resolve_base(repo_root, workspace, against)?;
    let base_commit = base_commit.as_str();
    let head = head.as_str();
    // A same-rate verdict writes its ticket at the end; a folder that leads out of the
    // repository is refused before any run, not after them.
    crate::confine::check_write(repo_root, &config.compare.tickets)?;
    let worktree = BaseWorktree::check_out(repo_root, base_commit)?;
    let dir = scratch(repo_root, what)?;
    let executor = SystemExecutor;
    let adapter = {
        let context = runner::Context::new(repo_root, dir.join("probe"), &executor);
        runner::adapter(&config.runner, &context)?
    };
    let store = open_store(db, Open::CreateIfMissing)?;
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

#[derive(Serialize)]
struct CompareLine<'a> {
    test: &'a str,
    verdict: CompareVerdict,
    base: &'a SideSummary,
    branch: &'a SideSummary,
    p_value: f64,
    stopped: compare::Stop,
    runs: u32,
    alpha: f64,
    max_runs_per_side: u32,
    detectable_increase: Option<f64>,
    /// What the design protects; null where it has no meaning (both sides failed every
    /// run: no rise is possible; the branch failed less: the question is a drop).
    protection: Option<compare::Protection>,
    /// The branch failed less: the drop and the runs that would show it; null otherwise.
    drop: Option<compare::Drop>,
    /// Suite runs (ci or local) of the test in the history at the branch's commit.
    suite_history: SuiteHistory,
    seed: u64,
    runner: &'static str,
    seed_controls: &'static str,
    buckets: Vec<Classified>,
    ticket: Option<PathBuf>,
    records: PathBuf,
    advice: String,
    /// The order investigation run when isolation did not explain a red seen in a suite
    /// run (docs/order.md); null otherwise.
    order: Option<&'a crate::order::Finding>,
}

/// `candor compare`. The merge base's worktree is this run's own and goes with it.
pub(super) fn run(
    settings: &CompareSettings,
    db: &Location,
    repo_root: &Path,
    today: Date,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    compare(settings, db, repo_root, today, printer)
}

fn compare(
    settings: &CompareSettings,
    db: &Location,
    repo_root: &Path,
    today: Date,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let workspace = &settings.workspace;
    let (mut bench, config) = prepare(
        &settings.test_id,
        settings.base.as_deref(),
        repo_root,
        db,
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
    printer.progress(&format!(
        "comparing {} on the merge base {} and the branch {} with {runner_name}, seed {seed}",
        terminal_safe(&settings.test_id),
        short(&base_commit),
        short(&head),
    ))?;
    let bar = printer.progress_bar(u64::from(design.max_runs()) * 2);
    let measured = compare::measure(
        &design,
        |side, sequence| {
            let run_seed = takes_seed.then(|| run_seed(seed, sequence));
            let record = bench.run(side, sequence, run_seed);
            bar.inc(1);
            record
        },
        |base, branch| {
            bar.set_message(format!(
                "base {}/{} red, branch {}/{} red",
                base.failures, base.runs, branch.failures, branch.runs
            ));
        },
    );
    bar.finish_and_clear();
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
        match suite_context(
            &bench, repo_root, workspace, seed, &config, &wanted, printer,
        ) {
            Ok(finding) => finding,
            Err(error) => {
                printer.warning(&format!(
                    "the red seen in a suite run was not rerun in its order: {error}"
                ))?;
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
    let meaningful = meaningful_protection(verdict, protection);
    if printer.is_json() {
        printer.json(
            "compare",
            &CompareLine {
                test: &settings.test_id,
                verdict,
                base: &base_summary,
                branch: &branch_summary,
                p_value: measured.p_value,
                stopped: measured.stop,
                runs: measured.runs(),
                alpha,
                max_runs_per_side: design.max_runs(),
                detectable_increase: detectable,
                protection: meaningful,
                drop,
                suite_history,
                seed,
                runner: runner_name,
                seed_controls,
                buckets,
                ticket: ticket.clone(),
                records: records_dir,
                advice,
                order: order.as_ref(),
            },
        )?;
    } else {
        print_human(
            printer,
            &settings.test_id,
            &measured,
            (&base_summary, &branch_summary),
            (detectable, meaningful),
            seed,
            (order.as_ref(), &advice),
            ticket.as_deref(),
            &records_dir,
        )?;
    }
    Ok(if verdict.is_negative() {
        exit_codes::NEGATIVE
    } else {
        exit_codes::OK
    })
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the output needs them all"
)]
fn print_human(
    printer: &mut Printer,
    test: &str,
    measured: &Measurement,
    (base, branch): (&SideSummary, &SideSummary),
    (detectable, protection): (Option<f64>, Option<compare::Protection>),
    seed: u64,
    (order, advice): (Option<&crate::order::Finding>, &str),
    ticket: Option<&Path>,
    records_dir: &Path,
) -> Result<(), CliError> {
    let verdict = measured.verdict();
    let side_text = |name: &str, side: &SideSummary| {
        format!(
            "{name} {} failed {}/{}{}",
            side.commit.as_deref().map_or("?", short),
            side.failures,
            side.runs,
            match (side.rate, side.interval) {
                (Some(rate), Some(i)) => format!(
                    " ({:.1}%, 95% {:.1}–{:.1}%)",
                    rate * 100.0,
                    i.low * 100.0,
                    i.high * 100.0
                ),
                _ => String::new(),
            }
        )
    };
    printer.line(&format!("{}: {}", verdict.as_str(), terminal_safe(test)))?;
    // What the suite's order showed leads: it can overturn what isolation suggests.
    if let Some(finding) = order {
        print_order(printer, finding)?;
    }
    printer.line(&format!("  {}", side_text("merge base", base)))?;
    printer.line(&format!("  {}", side_text("branch", branch)))?;
    let stopped = match measured.stop {
        compare::Stop::Efficacy => "stopped early: the evidence crossed the boundary",
        compare::Stop::Futility => "stopped early: a large increase is ruled out",
        compare::Stop::Exhausted => "every planned run made",
    };
    printer.line(&format!(
        "  one-sided p = {:.4} after {} runs ({stopped}); seed {seed} replays them with --seed {seed}",
        measured.p_value,
        measured.runs()
    ))?;
    if let Some(protection) = protection {
        printer.line(&format!(
            "  the design behind this call catches a rise from {:.0}% to {:.0}% failures {:.0}% of the time",
            protection.from * 100.0,
            protection.to * 100.0,
            protection.power * 100.0
        ))?;
        match detectable {
            Some(increase) => printer.line(&format!(
                "  as one fixed test, these runs would have caught an increase of {:.0} points or more with 80% power",
                increase * 100.0
            ))?,
            None => printer.line(
                "  as one fixed test, these runs are too few to catch any increase with 80% power",
            )?,
        }
    }
    if verdict == CompareVerdict::SameRate && branch.rate > base.rate {
        printer.line(
            "  the branch failed more often in these runs, though not enough to call it: more --runs would tell",
        )?;
    }
    printer.line(&terminal_safe(advice))?;
    if let Some(ticket) = ticket {
        printer.line(&format!("ticket: {}", ticket.display()))?;
    }
    printer.info(&format!("records: {}", records_dir.display()))?;
    Ok(())
}

/// Suite runs of the test at the branch's commit, from the history.
#[derive(Debug, Clone, Copy, Default, Serialize)]
struct SuiteHistory {
    /// Suite runs in which it passed.
    green: u32,
    /// Suite runs in which it failed.
    red: u32,
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
    repo_root: &Path,
    workspace: &Workspace,
    seed: u64,
    config: &Config,
    wanted: &SuiteWanted<'_>,
    printer: &mut Printer,
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
        Some(run) => printer.progress(&format!(
            "isolation does not explain the outcome of suite run #{}: rerunning {} in that order",
            run.id,
            terminal_safe(bench.test)
        ))?,
        None => printer.progress(&format!(
            "fails alone on both sides: rerunning {} in the runner's order before advising",
            terminal_safe(bench.test)
        ))?,
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
    let dir = scratch(repo_root, "order")?;
    let setup = crate::order::Setup {
        adapter: &*bench.adapter,
        executor: &bench.executor,
        repo_root,
        dir: &dir,
        timeout: config.runner.timeout,
        grace: config.runner.grace,
        parse,
        commit: workspace.commit.as_deref(),
        fixtures: &config.lane.fixtures,
    };
    let (request, _dropped) = crate::order::build_request(&setup, bench.test, recorded)?;
    let clock = crate::order::SystemClock::start();
    let plan = crate::order::Plan::new(seed, ORDER_BUDGET);
    let finding = crate::order::investigate(&setup, &request, &plan, &clock, &mut |_, _| {})?;
    Ok(Some(finding))
}

fn print_order(printer: &mut Printer, finding: &crate::order::Finding) -> Result<(), CliError> {
    let verdict = &finding.investigation.verdict;
    let culprits = verdict.culprits();
    let named = if culprits.is_empty() {
        String::new()
    } else {
        format!(" ({})", culprits.join(", "))
    };
    printer.line(&terminal_safe(&format!(
        "  in its suite's order: {}{named}",
        verdict.as_str()
    )))?;
    for state in &finding.shared_state {
        printer.line(&format!(
            "    shared state: {}",
            terminal_safe(&state.to_string())
        ))?;
    }
    if let Some(fix) = &finding.suggested_fix {
        printer.line(&format!("    suggested fix: {}", terminal_safe(fix)))?;
    }
    if let Some(reproduction) = &finding.reproduction {
        printer.line(&format!(
            "    reproduce: {}",
            terminal_safe(&crate::order::explain::shell_words(reproduction))
        ))?;
    }
    Ok(())
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

#[derive(Serialize)]
struct ReproLine<'a> {
    test: &'a str,
    verdict: ReproVerdict,
    seed: u64,
    seed_applied: bool,
    seed_controls: &'static str,
    base: SideSummary,
    branch: SideSummary,
    receipt: String,
    records: PathBuf,
}

/// `candor repro`, in its own worktree of the merge base as `compare`.
pub(super) fn repro(
    settings: &ReproSettings,
    db: &Location,
    repo_root: &Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    check_repro(settings, db, repo_root, printer)
}

fn check_repro(
    settings: &ReproSettings,
    db: &Location,
    repo_root: &Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let workspace = &settings.workspace;
    let (mut bench, _) = prepare(
        &settings.test_id,
        settings.base.as_deref(),
        repo_root,
        db,
        workspace,
        "repro",
    )?;
    let (base_commit, head) = (bench.base.commit.clone(), bench.branch.commit.clone());
    let (seed_applied, seed_controls) = match bench.adapter.seed_support() {
        SeedSupport::Controls(what) => (true, what),
        SeedSupport::None(why) => (false, why),
    };
    let seed = settings.seed;
    let bar = printer.progress_bar(u64::from(settings.runs) * 2);
    let mut records = Vec::new();
    let mut sequence = 0;
    for _ in 0..settings.runs {
        for side in [Side::Base, Side::Branch] {
            sequence += 1;
            let record = bench.run(side, sequence, seed_applied.then_some(seed));
            bar.inc(1);
            records.push(record.inspect_err(|_| bar.finish_and_clear())?);
        }
    }
    bar.finish_and_clear();
    let tally = |side| {
        let mine = records.iter().filter(|r| r.side == side);
        Tally {
            runs: u32::try_from(mine.clone().count()).unwrap_or(u32::MAX),
            failures: u32::try_from(mine.filter(|r| r.failed()).count()).unwrap_or(u32::MAX),
        }
    };
    let (base, branch) = (tally(Side::Base), tally(Side::Branch));
    let verdict = repro_verdict(base, branch);
    let receipt = match verdict {
        ReproVerdict::Confirmed => format!(
            "repro confirmed: `{}` with seed {seed} fails on the merge base {} ({}/{} runs) and passes on the branch {} ({}/{} runs) [candor repro]",
            settings.test_id,
            short(&base_commit),
            base.failures,
            base.runs,
            short(&head),
            branch.runs - branch.failures,
            branch.runs,
        ),
        ReproVerdict::BaseDidNotFail => format!(
            "repro not confirmed: with seed {seed} the merge base {} passed {} of {} runs; the seed does not reproduce the failure",
            short(&base_commit),
            base.runs - base.failures,
            base.runs
        ),
        ReproVerdict::BranchFailed => format!(
            "repro not confirmed: with seed {seed} the branch {} failed {} of {} runs; the fix does not hold",
            short(&head),
            branch.failures,
            branch.runs
        ),
        ReproVerdict::Neither => format!(
            "repro not confirmed: with seed {seed} the merge base failed {}/{} and the branch failed {}/{}",
            base.failures, base.runs, branch.failures, branch.runs
        ),
    };
    let records_dir = bench.records_dir.clone();
    if printer.is_json() {
        printer.json(
            "repro",
            &ReproLine {
                test: &settings.test_id,
                verdict,
                seed,
                seed_applied,
                seed_controls,
                base: SideSummary::of(&records, Side::Base, base),
                branch: SideSummary::of(&records, Side::Branch, branch),
                receipt,
                records: records_dir,
            },
        )?;
    } else {
        printer.line(&terminal_safe(&receipt))?;
        let applies = if seed_applied {
            format!("the seed fixes: {seed_controls}")
        } else {
            format!("the seed was not applied: {seed_controls}")
        };
        printer.line(&format!("  {} ({})", applies, bench.adapter.kind()))?;
        printer.info(&format!("records: {}", records_dir.display()))?;
    }
    Ok(if verdict == ReproVerdict::Confirmed {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}
