//! `candor gate`: the merge lane — the change and the base's policy from git, the
//! touched tests from the runner's listing, the replays (one runner process each, pinned
//! seed and environment, inside the lane's time), the report and the step summary. The
//! verdict itself is `gate::lane::lane_verdict`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{History, Lap, Ports};
use crate::app::running::{RunPlace, run_record, scratch};
use crate::classify::{Classified, classify};
use crate::cli::error::CliError;
use crate::cli::settings::GateSettings;
use crate::events::{Event, GateEvent, GateReport};
use crate::gate::base_skips::{self, AtMergeBase, SkipJudgement};
use crate::gate::diff::{Diff, FileStatus};
use crate::gate::human_owned::OwnedChange;
use crate::gate::infrastructure::InfraChange;
use crate::gate::infrastructure::InfraKind;
use crate::gate::lane::{
    self, LaneFindings, LaneVerdict, ReplayRun, ReplayScope, Replayed, SCHEMA, ScoreReport,
    SkippedAsAtBase, SuiteRun, TouchedReport, deterministic, lane_verdict,
};
use crate::gate::locks::Drift;
use crate::gate::pytest_files::PythonTestFiles;
use crate::gate::receipts::{self, Receipt};
use crate::gate::rules::Finding;
use crate::gate::tamper::{self, BaseJudgement, BaseRun, Unaccounted};
use crate::gate::touched::{ChangedTestFile, TouchedTest, touched_tests};
use crate::gate::{self, files};
use crate::git::Repository;
use crate::history::Source;
use crate::order::driver::Clock;
use crate::policy::{Config, ReplayMode};
use crate::records::{self, RunRecord, Side};
use crate::results::{Outcome, ParseOptions, parse_all};
use crate::runner::process::Executor;
use crate::runner::{self, Adapter, RunOptions, RunReport, SeedSupport};

/// What the lane decided and everything its report holds; [`Lane::score_report`] is
/// `score-report.json`, already written to [`Lane::report_path`].
#[derive(Debug, Clone)]
pub struct Lane {
    /// The base commit.
    pub base: String,
    /// The head commit.
    pub head: String,
    /// Accept or reject, the reasons and the approvals.
    pub verdict: LaneVerdict,
    /// The replays' classification.
    pub classified: Vec<Classified>,
    /// What was run.
    pub replayed: Replayed,
    /// The whole suite's run, when the lane made one.
    pub suite: Option<SuiteRun>,
    /// `[lane] min_replays`.
    pub min_replays: u32,
    /// The replays' seed.
    pub seed: Option<u64>,
    /// `[lane] max_wall_seconds`.
    pub max_wall_seconds: u32,
    /// The lane's own time.
    pub wall_seconds: f64,
    /// The listing's time.
    pub listing_seconds: Option<f64>,
    /// The touched tests and their buckets.
    pub touched: Vec<TouchedReport>,
    /// Touched tests skipped in every replay as the merge base skips them.
    pub skipped_as_at_base: Vec<SkippedAsAtBase>,
    /// Every replay.
    pub runs: Vec<ReplayRun>,
    /// How the replays were batched; `None` when each ran in its own process.
    pub batching: Option<lane::Batching>,
    /// The diff rules' findings.
    pub findings: Vec<Finding>,
    /// Fixtures that differ from their lock.
    pub fixture_drift: Vec<Drift>,
    /// Human-owned files the change edited.
    pub human_owned: Vec<OwnedChange>,
    /// Test infrastructure the change edited.
    pub test_infrastructure: Vec<InfraChange>,
    /// Data files no lock covers.
    pub unlocked_data: Vec<String>,
    /// Replays whose report did not account for the run.
    pub unaccounted: Vec<Unaccounted>,
    /// The base's version of the touched modules against the head's code.
    pub base_judgement: Option<BaseJudgement>,
    /// Its time.
    pub base_version_seconds: Option<f64>,
    /// The ledger lines the change appended, checked.
    pub receipts: Vec<Receipt>,
    /// Freezes in force for tests the change did not touch.
    pub freezes_in_force: Vec<String>,
    /// Where the report was written.
    pub report_path: PathBuf,
}

impl Lane {
    /// `score-report.json`'s content.
    pub fn score_report(&self) -> ScoreReport<'_> {
        ScoreReport {
            schema: SCHEMA,
            lane: "merge",
            flake_budget: 0,
            base: &self.base,
            head: &self.head,
            pass: self.verdict.pass,
            deterministic: deterministic(&self.classified),
            reasons: &self.verdict.reasons,
            replayed: &self.replayed,
            suite: self.suite.as_ref(),
            min_replays: self.min_replays,
            seed: self.seed,
            max_wall_seconds: self.max_wall_seconds,
            wall_seconds: self.wall_seconds,
            listing_seconds: self.listing_seconds,
            touched: &self.touched,
            skipped_as_at_base: &self.skipped_as_at_base,
            runs: &self.runs,
            batching: self.batching.as_ref(),
            findings: &self.findings,
            fixture_drift: &self.fixture_drift,
            human_owned: &self.human_owned,
            approvals: &self.verdict.approvals,
            test_infrastructure: &self.test_infrastructure,
            unlocked_data: &self.unlocked_data,
            unaccounted: &self.unaccounted,
            base_judgement: self.base_judgement.as_ref(),
            base_version_seconds: self.base_version_seconds,
            receipts: &self.receipts,
            freezes_in_force: self.freezes_in_force.clone(),
        }
    }
}

/// `candor gate`: judges the change from `settings.change.base` to its head in the merge
/// lane, writes `score-report.json` (and the step summary), and returns the lane.
pub fn gate(
    settings: &GateSettings,
    ports: &mut Ports<'_>,
    git: &dyn Repository,
    history: &mut History,
) -> Result<Lane, CliError> {
    // Mid-rebase (or merge, cherry-pick, …) HEAD is not the change: the lane's verdict
    // would describe a commit being replayed. Before anything is run or written.
    super::refuse_unfinished(git, "gate")?;
    let today = ports.clock.today();
    let started = Lap::start(ports.clock);
    let repo_root = ports.root;
    // Refused before any replay: the report must not follow a symlink out (#14 item 8).
    crate::confine::check_write_if_under(repo_root, &settings.report)?;
    let head = settings.change.head.clone().map_err(CliError::NoChange)?;
    let base = settings.change.base.clone().map_err(CliError::NoChange)?;
    let policy = gate::base_policy(git, &base)?;
    let diff = gate::read_change(git, &base, &head)?;
    let human_owned = gate::human_owned_changes(git, &base, &head, &policy, &diff)?;
    let test_files = gate::python_test_files(git, &base)?;
    let findings = gate::lint(git, &base, &head, &diff, &policy, &test_files)?;
    let candidates = test_file_candidates(&diff, &test_files);
    let lane_files = gate::LaneFiles::read(git, &base, &head, &policy.lane, &candidates)?;
    let fixture_drift = gate::fixture_drift_in(&lane_files)?;
    let cassettes = gate::cassette_check_in(&lane_files)?;
    let infrastructure = gate::infrastructure_changes(git, &base, &head, &policy, &diff)?;
    let unlocked_data = gate::unlocked_data(git, &lane_files, &policy.lane, &diff)?;
    let receipts = check_receipts(git, &base, &head, &policy, &diff, history)?;
    let modules = touched_modules(git, &base, &head, &diff, &test_files)?;

    let changed = changed_test_files(&lane_files, &candidates);
    let mode = policy.lane.replay;
    let runs_anything = mode == ReplayMode::All || !changed.is_empty();
    // Taken before any runner process starts: what differs from HEAD after the runs and
    // did not before, the runs wrote (a build script or a test rewriting a test file).
    let changed_before_runs = if runs_anything {
        let changed = git.changed_tracked_files()?;
        if !changed.is_empty() {
            ports.warning(
                "tracked files differ from HEAD: the replays run the working tree, the report judges HEAD; commit or stash first",
            );
        }
        Some(changed)
    } else {
        None
    };
    let lane_time = Duration::from_secs(u64::from(policy.lane.max_wall_seconds));
    let jobs = settings
        .jobs
        .or(policy.lane.jobs)
        .or_else(|| {
            std::thread::available_parallelism()
                .ok()
                .and_then(|n| u32::try_from(n.get()).ok())
        })
        .unwrap_or(1);
    let mut replays = Replays::default();
    let mut touched = Vec::new();
    let mut listing_seconds = None;
    let mut suite = None;
    let mut suite_left = 0;
    let mut base_judgement = None;
    let mut base_version_seconds = None;
    let mut skipped = Vec::new();
    let mut skipped_as_at_base = Vec::new();
    let mut suite_skips: Vec<(String, Option<String>)> = Vec::new();
    let mut skipped_in_suite = Vec::new();
    let mut vanished = Vec::new();
    let mut vanished_cause = None;
    // Test files whose base version is judged by text (Rust) or run (go) need the
    // listing even when nothing else would run: a deleted test file is in neither.
    let rust_changed = judged_by_text(
        git,
        &base,
        &head,
        &diff,
        &changed,
        |path| Path::new(path).extension().is_some_and(|e| e == "rs"),
        gate::rust_base::has_test_code,
    )?;
    let js_changed = judged_by_text(
        git,
        &base,
        &head,
        &diff,
        &changed,
        |path| {
            files::Language::of(path) == Some(files::Language::JavaScript)
                && files::is_test_file(path)
        },
        |_, text| !gate::js_base::test_titles(text).is_empty(),
    )?;
    let go_changed = diff
        .files
        .iter()
        .any(|f| f.status != FileStatus::Added && gate::go_base::is_go_test_file(&f.path));
    if runs_anything
        || !modules.touched.is_empty()
        || !rust_changed.is_empty()
        || !js_changed.is_empty()
        || go_changed
    {
        let dir = scratch(repo_root, "gate")?;
        let record_files = RecordFiles::start(dir.join("records"));
        let executor = ports.executor;
        let listing_context = runner::Context::new(repo_root, dir.join("listing"), executor)
            .with_timeout(Some(policy.runner.timeout), policy.runner.grace)
            .with_pinned_environment();
        ports.progress("listing the tests…");
        let listing_started = Lap::start(ports.clock);
        // The infrastructure the base's version runs with: the base's, except the plugin
        // list (its own rule judges that).
        let restore: Vec<String> = infrastructure
            .iter()
            .filter(|c| c.kind != InfraKind::PluginList)
            .map(|c| c.path.clone())
            .collect();
        // With a second worker, the base's version of the touched modules runs beside the
        // listing: it needs the runner's adapter, not the listing (issue #15).
        let (adapter, listed, beside) = runner::adapter_and_listing(
            &policy.runner,
            &listing_context,
            jobs > 1,
            |adapter| -> Result<Option<(BaseTree, Option<BaseBatchRun>)>, CliError> {
                if !judges_base(adapter, &modules) {
                    return Ok(None);
                }
                let base_plan = BasePlan {
                    git,
                    base: &base,
                    head: &head,
                    adapter,
                    executor,
                    dir: &dir,
                    seed: lane_seed(adapter, &base),
                    policy: &policy,
                    lane_time,
                    started: &started,
                };
                let tree = base_version_tree(&base_plan, &modules.existed, &restore)?;
                let batch = (adapter.batches() && !modules.existed.is_empty())
                    .then(|| run_base_batch(&base_plan, tree.tree(), &modules.existed))
                    .flatten();
                Ok(Some((tree, batch)))
            },
        )?;
        let (mut base_tree, mut base_batch_beside) = match beside.transpose()?.flatten() {
            Some((tree, batch)) => (Some(tree), batch),
            None => (None, None),
        };
        let listed = match listed {
            Ok(listed) => listed,
            // The change edited what runs the tests and the runner now cannot list them:
            // the change is refused for that edit; there is nothing to replay.
            Err(error) if !infrastructure.is_empty() && settings.approved_by.is_none() => {
                ports.warning(format!(
                    "the runner could not list the tests after the change's test-infrastructure edits: {error}"
                ));
                Vec::new()
            }
            Err(error) => {
                if let Some(tree) = base_tree.take() {
                    tree.remove(git)?;
                }
                return Err(error.into());
            }
        };
        listing_seconds = Some(listing_started.elapsed().as_secs_f64());
        touched = touched_tests(adapter.kind(), &listed, &changed);
        if matches!(
            adapter.kind(),
            runner::RunnerKind::Cargo | runner::RunnerKind::Nextest
        ) && !rust_changed.is_empty()
        {
            let kind = adapter.kind();
            base_judgement = Some(gate::rust_base::judge(&rust_changed, |path| {
                gate::touched::ids_in_unit_of(kind, &listed, path)
            }));
        }
        if adapter.kind().is_javascript() && !js_changed.is_empty() {
            let kind = adapter.kind();
            base_judgement = Some(gate::js_base::judge(&js_changed, |path| {
                gate::touched::ids_in_unit_of(kind, &listed, path)
            }));
        }
        let collected: BTreeSet<String> = listed.iter().map(|t| t.id.clone()).collect();
        let seed = lane_seed(&*adapter, &base);
        let plan = ReplayPlan {
            adapter: &*adapter,
            records: &record_files,
            executor,
            repo_root,
            dir: &dir,
            head: &head,
            seed,
            policy: &policy,
            lane_time,
            started: &started,
            collected: &collected,
            argv_budget: BATCH_ARGV_BYTES,
            jobs,
            suite_ran_alone: false,
            base: None,
        };
        let suite_without = modules.left_out_of_the_suite(&collected);
        let mut suite_stream = None;
        if mode == ReplayMode::All {
            // Frozen tests the change did not touch keep their freeze in the whole suite's
            // run; a touched one is judged by its replays whatever its freeze says.
            let frozen: Vec<String> = gate::freeze::in_force(&policy.freezes, today, |test| {
                touched.iter().any(|t| t.id == test)
            })
            .into_iter()
            .map(|freeze| freeze.test.clone())
            .collect();
            ports.progress("running the whole suite once…");
            let ran = run_whole_suite(&plan, &frozen, &suite_without)?;
            match ran {
                Some((run, ran, skipped_in_suite)) => {
                    suite_skips = skipped_in_suite;
                    if let Err(said) = &ran {
                        ports.warning(format!(
                            "the whole suite could not run at HEAD, so the lane ran nothing: {said}"
                        ));
                    }
                    if let Ok(report) = ran {
                        for warning in &report.warnings {
                            ports.warning(warning);
                        }
                        // A run the runner's clock stopped reports only what ran before.
                        if !report.timed_out() {
                            suite_stream = Some(report.report.clone());
                        }
                        store_gate_report(
                            history,
                            settings,
                            &GateRun {
                                report: &report.report,
                                commit: &head,
                                started_at: report_started(&report),
                                seed: plan.seed,
                                workers: report.workers,
                            },
                            repo_root,
                        )?;
                    }
                    suite = Some(run);
                }
                None => suite_left = 1,
            }
        }
        let base_plan = BasePlan {
            git,
            base: &base,
            head: &head,
            adapter: &*adapter,
            executor,
            dir: &dir,
            seed,
            policy: &policy,
            lane_time,
            started: &started,
        };
        // Not made beside the listing (one worker): the base's version is made ready
        // now, so that its one batch can run beside the head's rounds.
        if base_tree.is_none() && judges_base(&*adapter, &modules) {
            base_tree = Some(base_version_tree(&base_plan, &modules.existed, &restore)?);
        }
        let batches_base =
            plan.adapter.batches() && modules.existed.len() >= 2 && base_batch_beside.is_none();
        let plan = ReplayPlan {
            // The suite's run left the change's pytest modules out: it saw none of their
            // tests.
            suite_ran_alone: suite.is_some() && suite_without.is_empty(),
            base: base_tree
                .as_ref()
                .filter(|_| batches_base)
                .map(|tree| BaseBatch {
                    tree: tree.tree(),
                    files: &modules.existed,
                }),
            ..plan
        };
        let replayed = replay(&plan, &touched, ports).and_then(|mut replays| {
            store_replays(history, settings, &replays.reports, repo_root)?;
            if adapter.kind() == runner::RunnerKind::Go {
                let head_green = green_in_every_replay(&replays.records);
                if let Some((judgement, processes, seconds)) =
                    go_base_version(&base_plan, repo_root, &diff, &collected, &head_green, ports)?
                {
                    base_version_seconds = Some(seconds);
                    if let Some(batching) = &mut replays.batching {
                        batching.base_version_processes = Some(processes);
                    }
                    base_judgement = Some(judgement);
                }
            }
            let Some(tree) = &base_tree else {
                return Ok(replays);
            };
            let batch = match replays.base_version.take().or(base_batch_beside.take()) {
                Some(batch) => Some(batch),
                None if batches_base => {
                    ports.progress("replaying the base's version of the touched test modules…");
                    run_base_batch(&base_plan, tree.tree(), &modules.existed)
                }
                None => {
                    ports.progress("replaying the base's version of the touched test modules…");
                    None
                }
            };
            let (runs, processes, seconds) =
                base_version_alone(&base_plan, tree.tree(), &modules.existed, batch)?;
            base_version_seconds = Some(seconds);
            if let Some(batching) = &mut replays.batching {
                batching.base_version_processes = Some(processes);
            }
            let head_green = green_in_every_replay(&replays.records);
            base_judgement = Some(tamper::judge(
                &modules.touched,
                &collected,
                &head_green,
                &modules.deleted,
                &runs,
            ));
            Ok(replays)
        });
        if let Some(tree) = base_tree {
            tree.remove(git)?;
        }
        let written = record_files.finish();
        replays = replayed?;
        written?;
        let skipped_at_head = skipped_in_every_replay(&touched, &replays.records);
        if !skipped_at_head.is_empty() {
            ports.progress("running the skipped touched tests at the merge base…");
            let head_reasons = skip_reasons(&skipped_at_head, &replays.records, repo_root);
            let judged =
                skips_at_merge_base(&base_plan, repo_root, &skipped_at_head, &head_reasons)?;
            for skip in judged {
                match skip.judgement {
                    SkipJudgement::AsAtBase => skipped_as_at_base.push(SkippedAsAtBase {
                        test: skip.test,
                        reason: skip.head_reason,
                    }),
                    SkipJudgement::Refused(said) => skipped.push((skip.test, Some(said))),
                }
            }
        }
        // The untouched tests the whole suite's run skipped: a change to the code under
        // test can make a test's own skip condition true (`skipif(not features.TAXES)`)
        // beside a regression, and the suite's run is green. Each is run at the merge
        // base; one that ran there, or skipped for another reason, the change made skip.
        // A test the merge base does not have is new, not silenced. cargo and nextest
        // skip only what `#[ignore]` marks, which the diff rules read.
        let judged_at_base = !matches!(
            adapter.kind(),
            runner::RunnerKind::Cargo | runner::RunnerKind::Nextest
        );
        let untouched_skips: Vec<&(String, Option<String>)> = suite_skips
            .iter()
            .filter(|(test, _)| !touched.iter().any(|t| &t.id == test))
            .collect();
        if judged_at_base && !untouched_skips.is_empty() {
            ports.progress("running the tests the whole suite's run skipped at the merge base…");
            let tests: Vec<String> = untouched_skips
                .iter()
                .map(|(test, _)| test.clone())
                .collect();
            let head_reasons: BTreeMap<String, Option<String>> =
                untouched_skips.into_iter().cloned().collect();
            for skip in skips_at_merge_base(&base_plan, repo_root, &tests, &head_reasons)? {
                if let (SkipJudgement::Refused(said), false) = (skip.judgement, skip.missing) {
                    skipped_in_suite.push((skip.test, said));
                }
            }
        }
        // Tests the merge base collects that the head does not, in files the change did
        // not touch: the code under test generates them (a `parametrize` list read from
        // it, `it.each` over the code's table), and a case taken out of the list is a test
        // taken out. Not go's and libtest's: their tests are functions in the test files.
        let generates_tests =
            adapter.kind() == runner::RunnerKind::Pytest || adapter.kind().is_javascript();
        if suite.is_some() && generates_tests && !collected.is_empty() {
            ports.progress("listing the tests at the merge base…");
            match listed_at_merge_base(&base_plan, repo_root, |context| {
                base_plan.adapter.list(context)
            }) {
                Ok(at_base) => {
                    vanished = gate::touched::vanished(&at_base, &collected, &diff);
                }
                Err(said) => ports.warning(format!(
                    "the merge base's tests could not be listed, so tests the change's code no longer generates are not judged: {said}"
                )),
            }
        }
        // go: a test the base's files define that the whole suite's run never reported
        // (a test binary ended before its tests by an `os.Exit` in an `init()` or a
        // `TestMain` without `m.Run`, a package taken out of `./...`), whose file and
        // function the change kept, and that the merge base lists.
        if adapter.kind() == runner::RunnerKind::Go
            && let Some(stream) = &suite_stream
        {
            let removed: BTreeSet<String> = base_judgement
                .as_ref()
                .map(|judgement| judgement.removed.iter().cloned().collect())
                .unwrap_or_default();
            if let Some(gone) = go_tests_vanished(
                &base_plan, repo_root, &diff, stream, &collected, &removed, ports,
            )? {
                vanished = gone.tests;
                vanished_cause = Some(gone.cause);
            }
        }
    }
    if let Some(before) = &changed_before_runs {
        let written: Vec<String> = git
            .changed_tracked_files()?
            .into_iter()
            .filter(|path| !before.contains(path))
            // cargo brings a lock file up to date with the manifest the change committed;
            // which versions it records hides no test.
            .filter(|path| files::file_name(path) != "Cargo.lock")
            .collect();
        if !written.is_empty() {
            replays.unaccounted.push(Unaccounted {
                test: "the lane's runs".to_owned(),
                replay: 0,
                problem: format!(
                    "they changed tracked files the change does not: {} (a build script, a test or the code under test wrote them, so the runs judged files the change does not show)",
                    written.join(", ")
                ),
            });
        }
    }
    replays.left += suite_left;

    let classified = classify(&replays.records);
    let verdict = lane_verdict(&LaneFindings {
        findings: &findings,
        fixture_drift: &fixture_drift,
        cassettes: Some(&cassettes),
        human_owned: &human_owned,
        approved_by: settings.approved_by.as_deref(),
        replays: &classified,
        skipped: &skipped,
        skipped_in_suite: &skipped_in_suite,
        vanished: &vanished,
        vanished_cause: vanished_cause.as_deref(),
        suite: suite.as_ref(),
        replays_left: replays.left + base_judgement.as_ref().map_or(0, |j| j.not_run),
        max_wall_seconds: policy.lane.max_wall_seconds,
        infrastructure: &infrastructure,
        unlocked_data: &unlocked_data,
        unaccounted: &replays.unaccounted,
        base_judgement: base_judgement.as_ref(),
        receipts: &receipts,
    });
    let touched_reports: Vec<TouchedReport> = touched
        .iter()
        .map(|test| TouchedReport {
            test: test.clone(),
            bucket: classified
                .iter()
                .find(|c| c.test == test.id)
                .map(|c| c.bucket),
        })
        .collect();
    let runs: Vec<ReplayRun> = replays
        .records
        .iter()
        .zip(&replays.batches)
        .map(|(record, batch)| ReplayRun {
            test: record.test.clone(),
            replay: record.sequence,
            seed: record.seed,
            outcome: record.outcome,
            exit_code: record.exit_status,
            seconds: record.wall_seconds,
            log: record.log.display().to_string(),
            batch: *batch,
        })
        .collect();
    let touched_ids: Vec<&str> = touched.iter().map(|t| t.id.as_str()).collect();
    let replayed = lane::replayed(
        ReplayScope {
            mode,
            changed_test_files: changed.len(),
            touched_tests: touched.len(),
            min_replays: policy.lane.min_replays,
        },
        suite.as_ref(),
        &runs,
    );
    let lane = Lane {
        base,
        head,
        verdict,
        replayed,
        suite,
        min_replays: policy.lane.min_replays,
        seed: replays.seed,
        max_wall_seconds: policy.lane.max_wall_seconds,
        wall_seconds: started.elapsed().as_secs_f64(),
        listing_seconds,
        touched: touched_reports,
        skipped_as_at_base,
        runs,
        batching: replays.batching,
        findings,
        fixture_drift,
        human_owned,
        test_infrastructure: infrastructure,
        unlocked_data,
        unaccounted: replays.unaccounted,
        base_judgement,
        base_version_seconds,
        receipts,
        freezes_in_force: gate::freeze::in_force(&policy.freezes, today, |test| {
            touched_ids.contains(&test)
        })
        .into_iter()
        .map(|freeze| freeze.test.clone())
        .collect(),
        classified,
        report_path: settings.report.clone(),
    };
    write_report(&settings.report, &lane.score_report())?;
    if let Some(summary) = &settings.step_summary {
        append_summary(summary, &lane::markdown(&lane.score_report()))?;
    }
    ports.emit(Event::Gate(GateEvent {
        report: GateReport::from(&lane.score_report()),
        report_path: lane.report_path.clone(),
    }));
    Ok(lane)
}

/// Whether the lane judges the base's version of the touched test modules against the
/// head's code (the tamper checks of issue #14): pytest modules the change touched.
fn judges_base(adapter: &dyn runner::Adapter, modules: &Modules) -> bool {
    adapter.kind() == runner::RunnerKind::Pytest && !modules.touched.is_empty()
}

/// The lane's pinned seed when the runner can take one.
fn lane_seed(adapter: &dyn runner::Adapter, base: &str) -> Option<u64> {
    match adapter.seed_support() {
        SeedSupport::Controls(_) => Some(pinned_seed(base)),
        SeedSupport::None(_) => None,
    }
}

/// The seed every replay of this change is pinned to, below 2^32 for every runner: from
/// the merge base's sha, the same for every commit of a change, so pushing a new commit
/// (an amended message, a whitespace edit) cannot shop for a seed under which seeded
/// randomness or a shuffled order happens to pass; the same for every change on that
/// base, so a seed that makes a base test fail fails them all alike.
fn pinned_seed(base: &str) -> u64 {
    u64::from_str_radix(base.get(..8).unwrap_or("0"), 16).unwrap_or(0) % (1 << 32)
}

/// Test files the change added or modified (text, not deleted), each with whether the base
/// may have it (it was not added).
fn test_file_candidates<'d>(diff: &'d Diff, test_files: &PythonTestFiles) -> Vec<(&'d str, bool)> {
    diff.files
        .iter()
        .filter(|file| {
            !file.binary
                && file.status != FileStatus::Deleted
                && test_files.is_test_file(&file.path)
        })
        .map(|file| (file.path.as_str(), file.status != FileStatus::Added))
        .collect()
}

/// Test files the change added or modified, with their text at both ends, as the lane
/// read them with its other files (one listing an end, one read for all).
fn changed_test_files(
    lane_files: &gate::LaneFiles,
    candidates: &[(&str, bool)],
) -> Vec<ChangedTestFile> {
    let text = |bytes: Option<&[u8]>| bytes.map(|b| String::from_utf8_lossy(b).into_owned());
    candidates
        .iter()
        .filter_map(|&(path, existed)| {
            let head_text = text(lane_files.show(gate::End::Head, path))?;
            let base_text = existed
                .then(|| text(lane_files.show(gate::End::Base, path)))
                .flatten();
            Some(ChangedTestFile {
                path: path.to_owned(),
                head_text,
                base_text,
            })
        })
        .collect()
}

struct ReplayPlan<'a> {
    adapter: &'a dyn Adapter,
    /// Writes the replays' record files.
    records: &'a RecordFiles,
    executor: &'a dyn Executor,
    repo_root: &'a Path,
    dir: &'a Path,
    head: &'a str,
    seed: Option<u64>,
    policy: &'a Config,
    lane_time: Duration,
    started: &'a dyn Clock,
    /// The head's collection, which every replay's report must stay within.
    collected: &'a BTreeSet<String>,
    /// [`BATCH_ARGV_BYTES`], smaller in tests.
    argv_budget: usize,
    /// Runner processes at once (`--jobs`, `[lane] jobs`, else the CPUs available).
    jobs: u32,
    /// Whether the whole suite's run, with nothing beside it, ran every touched test.
    suite_ran_alone: bool,
    /// The base's version to run as one batch beside the rounds.
    base: Option<BaseBatch<'a>>,
}

impl ReplayPlan<'_> {
    /// The round that runs with no other process beside it, when processes run at once
    /// and no whole-suite run already saw each touched test alone: the last, or for a
    /// runner with an order of its own round 1, its fewest processes (one per process
    /// scope, where a separated round has several), so that the start-ups the lane waits
    /// for one after another are fewest and the other rounds' many small processes fill
    /// the workers (issue #15).
    fn solo_round(&self) -> Option<u32> {
        (self.jobs > 1 && !self.suite_ran_alone).then(|| match self.adapter.batch_ordering() {
            runner::BatchOrdering::Fixed(_) => 1,
            _ => self.policy.lane.min_replays,
        })
    }
}

/// Bytes of test ids one batched replay puts on its command line (each id with its NUL
/// and its argv pointer): far below Linux's `ARG_MAX` (2 MiB, shared with the
/// environment), so the runner's own options and a large CI environment still fit.
const BATCH_ARGV_BYTES: usize = 128 * 1024;

#[derive(Default)]
struct Replays {
    /// The replays the lane judges, test by test.
    records: Vec<RunRecord>,
    /// For each of `records`, the batch of its round it ran in; `None`: alone.
    batches: Vec<Option<u32>>,
    /// Replays whose report did not account for the run.
    unaccounted: Vec<Unaccounted>,
    /// Replays not made because the lane's time ran out.
    left: u32,
    seed: Option<u64>,
    /// How the replays were batched; `None` when every replay ran alone.
    batching: Option<lane::Batching>,
    /// Every runner report the replays left, once each (a batch's report holds many
    /// tests), for the history.
    reports: Vec<RunRecord>,
    /// The base's version's batch, when it ran beside the rounds.
    base_version: Option<BaseBatchRun>,
}

/// The replays' record files (`records/NNN-replay.record.json`), written on a thread of
/// their own as the rounds' records are made: each is a new file, and creating 120 of them
/// (40 touched tests, 3 rounds) took the lane 15–45 ms between its rounds and after the
/// last one, where the next round's runner processes or the history's writes can go on
/// meanwhile (issue #15). The lane waits for every file before it writes its report; the
/// first that could not be written fails the lane as a write in place did.
struct RecordFiles {
    dir: PathBuf,
    sender: std::sync::mpsc::Sender<RunRecord>,
    writer: std::thread::JoinHandle<std::io::Result<()>>,
}

impl RecordFiles {
    fn start(dir: PathBuf) -> RecordFiles {
        let (sender, receiver) = std::sync::mpsc::channel::<RunRecord>();
        let target = dir.clone();
        let writer = std::thread::spawn(move || {
            let mut outcome = Ok(());
            // Every record is taken, a failed write or not, so that the lane never blocks.
            for record in receiver {
                if outcome.is_ok() {
                    outcome = records::write(&target, &record).map(|_| ());
                }
            }
            outcome
        });
        RecordFiles {
            dir,
            sender,
            writer,
        }
    }

    /// Queues `record` for its file.
    fn write(&self, record: RunRecord) {
        // The writer ends only after `finish` drops the sender, so this cannot fail.
        let _ = self.sender.send(record);
    }

    /// Waits until every queued record is in its file.
    fn finish(self) -> Result<(), CliError> {
        let RecordFiles {
            dir,
            sender,
            writer,
        } = self;
        drop(sender);
        let outcome = writer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        outcome.map_err(|source| CliError::Write { path: dir, source })
    }
}

/// Where the replays stand: record files written, test replays made out of `total`.
struct Tally {
    written: u32,
    total: u32,
}

/// Every touched test `min_replays` times, same seed, pinned environment, ignoring
/// freezes, quarantine and tiers. Each process gets at most the lane's time left. Where
/// the runner runs several tests in one process in the order given (`Adapter::batches`)
/// and there are at least two rounds, each round is one process for all the touched tests
/// (split by the command line's size), forward and reversed in turn; a test red (or
/// missing) in any batched replay is then replayed alone `min_replays` times and judged
/// by those (docs/gate.md, "Batched replays").
fn replay(
    plan: &ReplayPlan<'_>,
    touched: &[TouchedTest],
    ports: &mut Ports<'_>,
) -> Result<Replays, CliError> {
    let min_replays = plan.policy.lane.min_replays;
    let total = u32::try_from(touched.len())
        .unwrap_or(u32::MAX)
        .saturating_mul(min_replays);
    let mut replays = Replays {
        seed: plan.seed,
        ..Replays::default()
    };
    let mut tally = Tally { written: 0, total };
    let batched = plan.adapter.batches() && min_replays >= 2 && touched.len() >= 2;
    if !batched {
        let all: Vec<&TouchedTest> = touched.iter().collect();
        let records = replay_alone(plan, &all, ports, &mut replays.unaccounted, &mut tally)?;
        replays.left = total.saturating_sub(u32::try_from(records.len()).unwrap_or(u32::MAX));
        replays.reports.clone_from(&records);
        replays.batches = vec![None; records.len()];
        replays.records = records;
        return Ok(replays);
    }
    let mut rounds = replay_batched(plan, touched, ports, &mut replays.unaccounted, &mut tally)?;
    replays.base_version = rounds.base_version.take();
    let mut to_replay_alone: BTreeSet<&str> = rounds
        .records
        .iter()
        .filter(|(record, _)| record.outcome.is_red())
        .map(|(record, _)| record.test.as_str())
        .collect();
    to_replay_alone.extend(rounds.could_not_run.iter().map(String::as_str));
    let alone_tests: Vec<&TouchedTest> = touched
        .iter()
        .filter(|t| to_replay_alone.contains(t.id.as_str()))
        .collect();
    if !alone_tests.is_empty() {
        ports.progress(format!(
            "replaying alone the {} test(s) red in a batch…",
            alone_tests.len()
        ));
    }
    let alone = replay_alone(
        plan,
        &alone_tests,
        ports,
        &mut replays.unaccounted,
        &mut tally,
    )?;
    let mut order_dependent = Vec::new();
    let mut never_reached = Vec::new();
    for test in &alone_tests {
        let outcomes: Vec<Outcome> = alone
            .iter()
            .filter(|r| r.test == test.id)
            .map(|r| r.outcome)
            .collect();
        let green_alone = u32::try_from(outcomes.len()).unwrap_or(0) == min_replays
            && outcomes.iter().all(|o| !o.is_red());
        let Some((red, batch)) = rounds
            .records
            .iter()
            .find(|(r, _)| r.test == test.id && r.outcome.is_red())
        else {
            continue;
        };
        if !green_alone {
            continue;
        }
        // Not in its batch's report: the runner's process ended before it started (another
        // test's panic or exit). It did nothing there, so nothing about its order is known.
        if !red.found {
            never_reached.push(format!("{} (round {})", test.id, red.sequence));
            continue;
        }
        let red_round = rounds.rounds.iter().find(|r| r.round == red.sequence);
        let batch_order = red_round
            .and_then(|round| round.batches.get(*batch as usize - 1))
            .map(|b| b.tests.clone())
            .unwrap_or_default();
        let next = format!(
            "candor order {}",
            crate::quote::shell_command(&[test.id.as_str()])
        );
        let beside_others = red_round.is_some_and(|round| {
            round
                .batches
                .get(*batch as usize - 1)
                .is_some_and(|b| b.beside_others)
        });
        let beside = if beside_others {
            " (other runner processes of the lane ran beside it: it may depend on them instead)"
        } else {
            ""
        };
        ports.warning(format!(
            "{} is order-dependent in its batch: {} in round {} after {} other test(s) of the batch{beside}, green in each of {min_replays} replays alone; it is judged by the replays alone (to find what it depends on: {next})",
            test.id,
            red.outcome.as_str(),
            red.sequence,
            batch_order.iter().position(|t| *t == test.id).unwrap_or(0),
        ));
        order_dependent.push(lane::OrderDependent {
            test: test.id.clone(),
            round: red.sequence,
            batch_order,
            batched: red.outcome,
            alone: outcomes,
            next,
            beside_others,
        });
    }
    if !never_reached.is_empty() {
        ports.note(format!(
            "{} touched test(s) did not run in their batch, whose runner process ended before them: {}; each is judged by its replays alone, all green",
            never_reached.len(),
            never_reached.join(", ")
        ));
    }
    // The lane judges each test by its batched replays, or, when it went alone, by those.
    for (record, batch) in &rounds.records {
        replays.reports.push(record.clone());
        if !to_replay_alone.contains(record.test.as_str()) {
            replays.records.push(record.clone());
            replays.batches.push(Some(*batch));
        }
    }
    for record in alone {
        replays.reports.push(record.clone());
        replays.records.push(record);
        replays.batches.push(None);
    }
    // Test by test, as the replays one process each are listed.
    let place = |test: &str| touched.iter().position(|t| t.id == test);
    let mut order: Vec<usize> = (0..replays.records.len()).collect();
    order.sort_by_key(|&i| {
        (
            place(&replays.records[i].test),
            replays.batches[i].is_none(),
            replays.records[i].sequence,
        )
    });
    replays.records = order.iter().map(|&i| replays.records[i].clone()).collect();
    replays.batches = order.iter().map(|&i| replays.batches[i]).collect();
    replays.left = total.saturating_sub(u32::try_from(replays.records.len()).unwrap_or(u32::MAX));
    replays.batching = Some(lane::Batching {
        argv_budget: plan.argv_budget,
        rounds: rounds.rounds,
        replayed_alone: alone_tests.iter().map(|t| t.id.clone()).collect(),
        order_dependent,
        base_version_processes: None,
        jobs: plan.jobs,
        parallel: if rounds.beside_others {
            lane::Parallel::Rounds
        } else {
            lane::Parallel::Sequential
        },
        solo_round: rounds.solo_round.filter(|_| rounds.beside_others),
    });
    Ok(replays)
}

/// `ids` in batches whose command-line cost (each id, its NUL and its argv pointer) stays
/// within `budget`, in order; an id larger than the budget is a batch of its own.
fn split_batches(ids: &[String], budget: usize) -> Vec<Vec<String>> {
    let cost = |id: &String| id.len() + 1 + std::mem::size_of::<usize>();
    let mut batches: Vec<Vec<String>> = Vec::new();
    let mut used = 0;
    for id in ids {
        match batches.last_mut() {
            Some(batch) if used + cost(id) <= budget => batch.push(id.clone()),
            _ => {
                batches.push(vec![id.clone()]);
                used = 0;
            }
        }
        used += cost(id);
    }
    batches
}

/// The batched rounds' replays.
#[derive(Default)]
struct BatchedRounds {
    /// Each test's batched replays (the record's sequence is its round), with the batch
    /// of the round it ran in, from 1.
    records: Vec<(RunRecord, u32)>,
    rounds: Vec<lane::BatchRound>,
    /// Tests of a batch the runner could not run: replayed alone, where the runner says
    /// which of them it could not run.
    could_not_run: BTreeSet<String>,
    /// The base's version's batch, when it ran beside the rounds.
    base_version: Option<BaseBatchRun>,
    /// The round that ran with no other process beside it.
    solo_round: Option<u32>,
    /// Whether the other rounds ran beside each other.
    beside_others: bool,
}

/// The base's version of the touched modules in one runner process.
struct BaseBatchRun {
    report: Result<RunReport, runner::RunnerError>,
}

/// The base's version of the touched modules, ready in its worktree, for the batched
/// rounds to run beside them.
struct BaseBatch<'a> {
    /// The head's worktree with the base's modules put back.
    tree: &'a Path,
    /// The modules.
    files: &'a [String],
}

/// A runner process of the batched replays: a batch of a round, or the base's version of
/// the touched modules.
enum LaneTask {
    Round {
        round: u32,
        /// The batch's place in its round, from 1.
        number: u32,
        batch: Vec<String>,
    },
    BaseVersion,
}

/// A task ready to run: its context, within the lane's time left when it started, and
/// whether that time (not the runner's own limit) bounds it.
struct Started<'c> {
    context: runner::Context<'c>,
    lane_bound: bool,
}

fn replay_batched(
    plan: &ReplayPlan<'_>,
    touched: &[TouchedTest],
    ports: &mut Ports<'_>,
    unaccounted: &mut Vec<Unaccounted>,
    tally: &mut Tally,
) -> Result<BatchedRounds, CliError> {
    let forward: Vec<String> = touched.iter().map(|t| t.id.clone()).collect();
    let new_tests: BTreeSet<&str> = touched
        .iter()
        .filter(|t| t.new)
        .map(|t| t.id.as_str())
        .collect();
    let batches = split_batches(&forward, plan.argv_budget);
    let min_replays = plan.policy.lane.min_replays;
    let arrangements: Vec<(lane::BatchOrder, Vec<Vec<String>>)> = (1..=min_replays)
        .map(|round| {
            arrange_round(
                plan.adapter,
                round,
                min_replays,
                &forward,
                &batches,
                plan.argv_budget,
            )
        })
        .collect();
    let mut out = BatchedRounds::default();
    for (round, (order, _)) in (1..).zip(&arrangements) {
        out.rounds.push(lane::BatchRound {
            round,
            order: *order,
            batches: Vec::new(),
        });
    }
    let tasks_of = |rounds: &mut dyn Iterator<Item = u32>| -> Vec<LaneTask> {
        rounds
            .flat_map(|round| {
                let arranged = arrangements[round as usize - 1].1.clone();
                arranged
                    .into_iter()
                    .enumerate()
                    .map(move |(index, batch)| LaneTask::Round {
                        round,
                        number: u32::try_from(index + 1).unwrap_or(u32::MAX),
                        batch,
                    })
            })
            .collect()
    };
    // With processes at once, one round runs with nothing beside it unless the whole
    // suite's run (alone too) already saw every touched test: a test green only while
    // another process runs beside it is red there, then red alone, and rejected.
    let solo = plan.solo_round();
    let mut together = tasks_of(&mut (1..=min_replays).filter(|round| Some(*round) != solo));
    if plan.base.is_some() {
        together.push(LaneTask::BaseVersion);
    }
    let beside_others = plan.jobs > 1 && together.len() > 1;
    let mut made = 0u32;
    let mut lane_ran_out = false;
    // What the runner threads share: nothing of the plan's clock or ports.
    let (adapter, seed) = (plan.adapter, plan.seed);
    let base_files = plan.base.as_ref().map(|base| base.files);
    let alone = (
        solo.map_or_else(Vec::new, |round| tasks_of(&mut (round..=round))),
        1,
        false,
    );
    let side_by_side = (together, plan.jobs, true);
    // The solo round in its place: first when it is round 1.
    let phases = if solo == Some(1) {
        [alone, side_by_side]
    } else {
        [side_by_side, alone]
    };
    for (tasks, workers, beside) in phases {
        if lane_ran_out {
            break;
        }
        let labels: Vec<Option<(u32, u32, Vec<String>)>> = tasks
            .iter()
            .map(|task| match task {
                LaneTask::Round {
                    round,
                    number,
                    batch,
                } => Some((*round, *number, batch.clone())),
                LaneTask::BaseVersion => None,
            })
            .collect();
        let results = super::concurrent::run(
            tasks,
            workers as usize,
            |task| {
                let left = plan.lane_time.saturating_sub(plan.started.elapsed());
                if left.is_zero() {
                    return None;
                }
                let (dir, root) = match task {
                    LaneTask::Round {
                        round,
                        number,
                        batch,
                    } => {
                        ports.step(
                            format!(
                                "replay {round}: {} touched test(s) in one process",
                                batch.len()
                            ),
                            u64::from(made),
                            u64::from(tally.total),
                        );
                        (
                            plan.dir.join(format!("round-{round}-{number:03}")),
                            plan.repo_root,
                        )
                    }
                    LaneTask::BaseVersion => {
                        ports.progress("replaying the base's version of the touched test modules…");
                        let base = plan.base.as_ref()?;
                        (plan.dir.join("base-version").join("batch"), base.tree)
                    }
                };
                Some(Started {
                    context: runner::Context::new(root, dir, plan.executor)
                        .with_timeout(
                            Some(plan.policy.runner.timeout.min(left)),
                            plan.policy.runner.grace,
                        )
                        .with_pinned_environment(),
                    lane_bound: left < plan.policy.runner.timeout,
                })
            },
            |task, ready: Started<'_>| {
                let options = RunOptions { seed };
                let report = match (&task, base_files) {
                    (LaneTask::Round { batch, .. }, _) => {
                        adapter.run_batch(&ready.context, batch, options)
                    }
                    (LaneTask::BaseVersion, Some(files)) => {
                        adapter.run_batch(&ready.context, files, options)
                    }
                    (LaneTask::BaseVersion, None) => Err(runner::RunnerError::Unsupported {
                        kind: adapter.kind(),
                        what: "run a base version it was not given",
                    }),
                };
                (report, ready.lane_bound)
            },
        );
        if results.iter().any(Option::is_none) {
            lane_ran_out = true;
        }
        for (label, result) in labels.into_iter().zip(results) {
            let Some((report, lane_bound)) = result else {
                continue;
            };
            let Some((round, number, batch)) = label else {
                out.base_version = Some(BaseBatchRun { report });
                continue;
            };
            let mut concurrent = beside && beside_others;
            let (batch, report, lane_bound) = match report {
                Ok(report) => (batch, report, lane_bound),
                // One test's module may not import: each test of the batch is replayed
                // alone, where the runner says which of them it could not run.
                Err(runner::RunnerError::CouldNotRun(not_run)) => {
                    let rest: Vec<String> = batch
                        .iter()
                        .filter(|test| !not_run.apart.contains(test))
                        .cloned()
                        .collect();
                    let only_some = rest.len() < batch.len() && !rest.is_empty();
                    out.could_not_run.extend(
                        batch
                            .iter()
                            .filter(|test| !only_some || not_run.apart.contains(test))
                            .cloned(),
                    );
                    out.rounds[round as usize - 1]
                        .batches
                        .push(refused_batch(batch, &not_run, concurrent));
                    if !only_some {
                        continue;
                    }
                    // The runner named the tests no selection can run with others (two
                    // tests under one id): they go alone, the rest of the batch runs
                    // again without them, one process, nothing beside it.
                    concurrent = false;
                    match replay_rest(plan, round, number, &rest) {
                        None => {
                            lane_ran_out = true;
                            continue;
                        }
                        Some((Ok(report), lane_bound)) => (rest, report, lane_bound),
                        Some((Err(runner::RunnerError::CouldNotRun(again)), _)) => {
                            out.could_not_run.extend(rest.iter().cloned());
                            out.rounds[round as usize - 1]
                                .batches
                                .push(refused_batch(rest, &again, false));
                            continue;
                        }
                        Some((Err(error), _)) => return Err(error.into()),
                    }
                }
                Err(error) => return Err(error.into()),
            };
            // Stopped by the lane's clock: replays not made, not red ones.
            if report.timed_out() && lane_bound {
                lane_ran_out = true;
                continue;
            }
            let (count, ran) = record_batch(
                plan,
                &mut out,
                unaccounted,
                tally,
                &new_tests,
                round,
                number,
                &batch,
                &report,
            )?;
            made += count;
            let current = &mut out.rounds[round as usize - 1];
            // A runner that keeps no order given: the batch as it ran, never as asked.
            let tests = if matches!(
                current.order,
                lane::BatchOrder::Forward | lane::BatchOrder::Reversed
            ) {
                batch.clone()
            } else {
                ran
            };
            current.batches.push(lane::BatchRun {
                tests,
                workers: report.workers,
                processes: u32::try_from(report.invocations.len()).unwrap_or(u32::MAX),
                exit_code: Some(report.exit_code()),
                seconds: report
                    .invocations
                    .iter()
                    .map(|i| i.outcome.duration.as_secs_f64())
                    .sum(),
                log: report
                    .invocations
                    .first()
                    .map(|i| i.log.display().to_string())
                    .unwrap_or_default(),
                beside_others: concurrent,
            });
            ports.step(
                format!(
                    "replay {round}: {} touched test(s) in one process",
                    batch.len()
                ),
                u64::from(made),
                u64::from(tally.total),
            );
        }
    }
    out.rounds.retain(|round| !round.batches.is_empty());
    out.solo_round = solo;
    out.beside_others = beside_others;
    Ok(out)
}

/// A batch the runner refused to run as one selection, as the report lists it.
fn refused_batch(
    tests: Vec<String>,
    not_run: &runner::NotRun,
    beside_others: bool,
) -> lane::BatchRun {
    lane::BatchRun {
        tests,
        workers: None,
        processes: 1,
        exit_code: None,
        seconds: 0.0,
        log: not_run.log.display().to_string(),
        beside_others,
    }
}

/// Runs `rest`, what is left of round `round`'s batch `number` once the tests the runner
/// could not select with others are taken out, in one process with nothing beside it;
/// `None` when the lane has no time left for it.
fn replay_rest(
    plan: &ReplayPlan<'_>,
    round: u32,
    number: u32,
    rest: &[String],
) -> Option<(Result<RunReport, runner::RunnerError>, bool)> {
    let left = plan.lane_time.saturating_sub(plan.started.elapsed());
    if left.is_zero() {
        return None;
    }
    let context = runner::Context::new(
        plan.repo_root,
        plan.dir.join(format!("round-{round}-{number:03}-rest")),
        plan.executor,
    )
    .with_timeout(
        Some(plan.policy.runner.timeout.min(left)),
        plan.policy.runner.grace,
    )
    .with_pinned_environment();
    let report = plan
        .adapter
        .run_batch(&context, rest, RunOptions { seed: plan.seed });
    Some((report, left < plan.policy.runner.timeout))
}

/// A round's order and its batches. Where the runner keeps the order given
/// ([`runner::BatchOrdering::Kept`]), the listing's order, reversed every other round.
/// Where it runs each test in its own process, the listing's order every round: nothing
/// to reverse. Where it runs a batch in an order of its own, round 1 is that order, and
/// the later rounds split each process's tests ([`separated`]) so that every two tests
/// that shared a process in round 1 run apart in one of them: a test that passes only
/// after another touched test ran is red there (docs/gate.md, "Batched replays").
fn arrange_round(
    adapter: &dyn Adapter,
    round: u32,
    min_replays: u32,
    forward: &[String],
    batches: &[Vec<String>],
    budget: usize,
) -> (lane::BatchOrder, Vec<Vec<String>>) {
    match adapter.batch_ordering() {
        runner::BatchOrdering::Kept if round.is_multiple_of(2) => (
            lane::BatchOrder::Reversed,
            batches
                .iter()
                .rev()
                .map(|b| b.iter().rev().cloned().collect())
                .collect(),
        ),
        runner::BatchOrdering::Kept => (lane::BatchOrder::Forward, batches.to_vec()),
        runner::BatchOrdering::Isolated(_) => (lane::BatchOrder::Isolated, batches.to_vec()),
        runner::BatchOrdering::Fixed(_) if round == 1 => (lane::BatchOrder::Own, batches.to_vec()),
        runner::BatchOrdering::Fixed(_) => {
            // Tests whose scope the runner cannot tell may share a process: one scope.
            let scope = |id: &String| adapter.process_scope(id).unwrap_or("").to_owned();
            let parts = separated(forward, &scope, round - 2, min_replays - 1);
            let arranged = parts
                .iter()
                .flat_map(|part| split_batches(part, budget))
                .collect();
            (lane::BatchOrder::Separated, arranged)
        }
    }
}

/// The parts of `ids` in separated round `digit` (from 0) of `rounds`: within each
/// scope, a test's place in base `s` (the least `s` with `s^rounds` at least the
/// scope's size) has `rounds` digits, and the part is the digit of this round. Two tests
/// of one scope differ in some digit, so they are in different parts in some round; the
/// parts of different scopes are merged, as they never share a process.
fn separated(
    ids: &[String],
    scope: &dyn Fn(&String) -> String,
    digit: u32,
    rounds: u32,
) -> Vec<Vec<String>> {
    let mut scopes: Vec<(String, Vec<String>)> = Vec::new();
    for id in ids {
        let key = scope(id);
        match scopes.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(id.clone()),
            None => scopes.push((key, vec![id.clone()])),
        }
    }
    let mut parts: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (_, members) in &scopes {
        let size = members.len();
        let mut base = 2usize;
        while base.checked_pow(rounds.max(1)).is_some_and(|p| p < size) {
            base += 1;
        }
        for (place, id) in members.iter().enumerate() {
            let part = place / base.pow(digit) % base;
            parts.entry(part).or_default().push(id.clone());
        }
    }
    parts.into_values().collect()
}

/// Checks a batch's report against the run, writes a record file per test and keeps the
/// records; how many, and the batch's tests in the order the report lists them.
#[allow(clippy::too_many_arguments)]
fn record_batch(
    plan: &ReplayPlan<'_>,
    out: &mut BatchedRounds,
    unaccounted: &mut Vec<Unaccounted>,
    tally: &mut Tally,
    new_tests: &BTreeSet<&str>,
    round: u32,
    number: u32,
    batch: &[String],
    report: &RunReport,
) -> Result<(u32, Vec<String>), CliError> {
    let parse = ParseOptions {
        repo_root: Some(plan.repo_root.to_string_lossy().into_owned()),
        ..ParseOptions::default()
    };
    let outcomes = report_outcomes(&report.report, &parse);
    unaccounted.extend(tamper::account_batch(
        batch,
        round,
        report.exit_code(),
        report.timed_out(),
        outcomes.as_ref(),
        plan.collected,
    ));
    if let Some(found) =
        replay_contradicted(plan.adapter.kind(), report, outcomes.as_ref(), batch, round)
    {
        unaccounted.extend(batch.iter().map(|test| Unaccounted {
            test: test.clone(),
            ..found.clone()
        }));
    }
    let (records, ran) = batch_records(plan, batch, round, new_tests, report, &parse)?;
    let mut made = 0;
    for record in records {
        tally.written += 1;
        let file_record = RunRecord {
            sequence: tally.written,
            ..record.clone()
        };
        plan.records.write(file_record);
        out.records.push((record, number));
        made += 1;
    }
    Ok((made, ran))
}

/// One run record per test of a batch, from the batch's one report (read once), and the
/// batch's tests in the order the report lists them (those it lacks last).
fn batch_records(
    plan: &ReplayPlan<'_>,
    batch: &[String],
    round: u32,
    new_tests: &BTreeSet<&str>,
    report: &RunReport,
    parse: &ParseOptions,
) -> Result<(Vec<RunRecord>, Vec<String>), CliError> {
    let Some(first) = batch.first() else {
        return Ok((Vec::new(), Vec::new()));
    };
    let (blank, _) = run_record(
        &RunPlace {
            test: first,
            side: Side::Replay,
            sequence: round,
            root: plan.repo_root,
            commit: plan.head,
            fixtures: &plan.policy.lane.fixtures,
            new_test: new_tests.contains(first.as_str()),
        },
        report,
        parse,
    )?;
    let executions: Vec<crate::results::Execution> = fs_err::File::open(&report.report)
        .ok()
        .and_then(|file| parse_all(file, parse).ok())
        .map(|(executions, _)| executions)
        .unwrap_or_default();
    let mut ran = batch.to_vec();
    ran.sort_by_key(|test| {
        executions
            .iter()
            .position(|e| e.test_id == *test)
            .unwrap_or(usize::MAX)
    });
    let records = batch
        .iter()
        .map(|test| {
            let mut record = RunRecord {
                test: test.clone(),
                new_test: new_tests.contains(test.as_str()),
                signature: None,
                exception: None,
                message: None,
                failing_line: None,
                duration_seconds: None,
                ..blank.clone()
            };
            // The first execution of the test, as a replay alone reads its report.
            record.set_execution(executions.iter().find(|e| e.test_id == *test));
            record
        })
        .collect();
    Ok((records, ran))
}

/// Replays each of `tests` `min_replays` times, one runner process each; the records
/// made, in order. Stops where the lane's time runs out.
fn replay_alone(
    plan: &ReplayPlan<'_>,
    tests: &[&TouchedTest],
    ports: &mut Ports<'_>,
    unaccounted: &mut Vec<Unaccounted>,
    tally: &mut Tally,
) -> Result<Vec<RunRecord>, CliError> {
    let min_replays = plan.policy.lane.min_replays;
    let parse = ParseOptions {
        repo_root: Some(plan.repo_root.to_string_lossy().into_owned()),
        ..ParseOptions::default()
    };
    let mut made_records = Vec::new();
    'tests: for test in tests {
        for replay in 1..=min_replays {
            let left = plan.lane_time.saturating_sub(plan.started.elapsed());
            if left.is_zero() {
                break 'tests;
            }
            let done = u32::try_from(made_records.len()).unwrap_or(u32::MAX);
            ports.step(
                format!("replay {replay} of {}", test.id),
                u64::from(done),
                u64::from(tally.total),
            );
            let context = runner::Context::new(
                plan.repo_root,
                plan.dir.join(format!("{:03}", tally.written + 1)),
                plan.executor,
            )
            .with_timeout(
                Some(plan.policy.runner.timeout.min(left)),
                plan.policy.runner.grace,
            )
            .with_pinned_environment();
            let lane_bound = left < plan.policy.runner.timeout;
            let report =
                match plan
                    .adapter
                    .run_one(&context, &test.id, RunOptions { seed: plan.seed })
                {
                    Ok(report) => report,
                    // The change left the runner unable to run this replay (it exits 0 before
                    // writing its report, crashes at import, does not build): its report does
                    // not account for the test, and the lane rejects with the runner's words.
                    Err(runner::RunnerError::CouldNotRun(not_run)) => {
                        unaccounted.push(tamper::Unaccounted {
                            test: test.id.clone(),
                            replay,
                            problem: format!("the runner could not run it: {}", not_run.why),
                        });
                        continue;
                    }
                    Err(error) => return Err(error.into()),
                };
            let (mut record, _) = run_record(
                &RunPlace {
                    test: &test.id,
                    side: Side::Replay,
                    sequence: replay,
                    root: plan.repo_root,
                    commit: plan.head,
                    fixtures: &plan.policy.lane.fixtures,
                    new_test: test.new,
                },
                &report,
                &parse,
            )?;
            // Stopped by the lane's clock, not by the runner's own limit: a replay not made,
            // not a red one.
            if record.timed_out && lane_bound {
                break 'tests;
            }
            let outcomes = report_outcomes(&report.report, &parse);
            if let Some(problem) = tamper::account(
                &test.id,
                replay,
                record.exit_status,
                record.timed_out,
                outcomes.as_ref(),
                plan.collected,
            )
            .or_else(|| {
                replay_contradicted(
                    plan.adapter.kind(),
                    &report,
                    outcomes.as_ref(),
                    std::slice::from_ref(&test.id),
                    replay,
                )
            }) {
                unaccounted.push(problem);
            }
            // Record files are numbered by their place in the whole lane.
            tally.written += 1;
            let file_record = RunRecord {
                sequence: tally.written,
                ..record.clone()
            };
            plan.records.write(file_record);
            record.sequence = replay;
            made_records.push(record);
            let done = u32::try_from(made_records.len()).unwrap_or(u32::MAX);
            ports.step(
                format!("replay {replay} of {}", test.id),
                u64::from(done),
                u64::from(tally.total),
            );
        }
    }
    Ok(made_records)
}

/// The whole suite's run, its report (or why there is none) and the tests it skipped,
/// each with the runner's reason, frozen ones left out.
type SuiteOutcome = (
    SuiteRun,
    Result<RunReport, String>,
    Vec<(String, Option<String>)>,
);

/// The whole suite once, inside the lane's time, with the replays' seed and pinned
/// environment. `None` when the lane's clock ran out before or during it: a run not made,
/// not a red one. A runner that wrote no results is an error (exit 2), never a red suite.
///
/// The change's own test files (`without`) are left out where the runner can: the
/// untouched tests are judged as the base's tests against the head's code, which the
/// change's tests, judged by their replays, cannot reach.
fn run_whole_suite(
    plan: &ReplayPlan<'_>,
    frozen: &[String],
    without: &[String],
) -> Result<Option<SuiteOutcome>, CliError> {
    let left = plan.lane_time.saturating_sub(plan.started.elapsed());
    if left.is_zero() {
        return Ok(None);
    }
    let context = runner::Context::new(plan.repo_root, plan.dir.join("suite"), plan.executor)
        .with_timeout(
            Some(plan.policy.runner.timeout.min(left)),
            plan.policy.runner.grace,
        )
        .with_pinned_environment();
    let lane_bound = left < plan.policy.runner.timeout;
    let report =
        match plan
            .adapter
            .run_suite_without(&context, RunOptions { seed: plan.seed }, without)
        {
            Ok(report) => report,
            // The change under judgment left the runner unable to run the suite at HEAD (it
            // collects nothing, ends the process early, crashes at import, does not build):
            // the lane ran nothing, and a lane that ran nothing accepts nothing. The change is
            // rejected with the runner's own words, and the other rules still name what the
            // change did; it is not an input error of the lane's.
            Err(runner::RunnerError::CouldNotRun(not_run)) => {
                return Ok(Some((
                    SuiteRun {
                        tests: 0,
                        failed: Vec::new(),
                        excused: Vec::new(),
                        exit_code: if not_run.ran_no_test() { 5 } else { -1 },
                        log: not_run.log.display().to_string(),
                        report_contradicted: None,
                        left_out: without.to_vec(),
                    },
                    Err(not_run.to_string()),
                    Vec::new(),
                )));
            }
            Err(error) => return Err(error.into()),
        };
    if report.timed_out() && lane_bound {
        return Ok(None);
    }
    let logs = || report.invocations.iter().map(|i| i.log.clone()).collect();
    if !fs_err::metadata(&report.report).is_ok_and(|m| m.len() > 0) {
        return Err(CliError::NoReport {
            report: report.report.clone(),
            logs: logs(),
        });
    }
    let parse = ParseOptions {
        repo_root: Some(plan.repo_root.to_string_lossy().into_owned()),
        ..ParseOptions::default()
    };
    let file = fs_err::File::open(&report.report).map_err(|source| CliError::Read {
        path: report.report.clone(),
        source,
    })?;
    let (executions, _) = parse_all(file, &parse).map_err(|error| {
        CliError::Results(crate::ingest::IngestError::Parse {
            path: report.report.clone(),
            error,
        })
    })?;
    let mut failed = Vec::new();
    let mut excused = Vec::new();
    let mut skipped = Vec::new();
    for execution in &executions {
        if execution.outcome == Outcome::Skip && !frozen.contains(&execution.test_id) {
            skipped.push((execution.test_id.clone(), execution.skip_message.clone()));
        }
        if execution.outcome.is_red() {
            if frozen.contains(&execution.test_id) {
                excused.push(execution.test_id.clone());
            } else {
                failed.push(execution.test_id.clone());
            }
        }
    }
    failed.sort();
    excused.sort();
    let report_contradicted =
        report_contradicted(plan.adapter.kind(), &report, failed.len() + excused.len());
    let run = SuiteRun {
        tests: u32::try_from(executions.len()).unwrap_or(u32::MAX),
        failed,
        excused,
        exit_code: report.exit_code(),
        log: report
            .invocations
            .first()
            .map(|i| i.log.display().to_string())
            .unwrap_or_default(),
        report_contradicted,
        left_out: without.to_vec(),
    };
    Ok(Some((run, Ok(report), skipped)))
}

/// What the runner's own output says against its report, in a sentence; `None` when
/// nothing does. A log or a stdout report (go's) changed since candor wrote it (the tests'
/// own process can find them beside the report it was given), and for pytest a summary
/// line counting more red tests than the report holds among those the run was asked to
/// run (`reds`; `tamper::pytest_summaries`): pytest prints it before the process ends,
/// and the report can be rewritten after.
fn report_contradicted(
    kind: runner::RunnerKind,
    report: &RunReport,
    reds: usize,
) -> Option<String> {
    // go's report is its stdout, a file candor writes as it writes the logs.
    if runner::process::log_as_written(&report.report) == Some(false) {
        return Some(format!(
            "its report {} was changed after candor wrote it",
            report.report.display()
        ));
    }
    report.invocations.iter().find_map(|invocation| {
        if runner::process::log_as_written(&invocation.log) == Some(false) {
            return Some(format!(
                "its log {} was changed after candor wrote it",
                invocation.log.display()
            ));
        }
        if kind != runner::RunnerKind::Pytest {
            return None;
        }
        let bytes = fs_err::read(&invocation.log).ok()?;
        tamper::pytest_summaries(&String::from_utf8_lossy(&bytes))
            .into_iter()
            .find(|summary| summary.exceeds(reds))
            .map(|summary| {
                format!(
                    "pytest's own summary says `{}` while its report holds {reds} red test(s) of those it ran",
                    summary.line
                )
            })
    })
}

/// The unaccounted entry for a replay of `tests` whose report the runner's own output
/// contradicts ([`report_contradicted`]).
fn replay_contradicted(
    kind: runner::RunnerKind,
    report: &RunReport,
    outcomes: Option<&BTreeMap<String, Outcome>>,
    tests: &[String],
    replay: u32,
) -> Option<Unaccounted> {
    let reds = tests
        .iter()
        .filter(|test| {
            outcomes
                .and_then(|o| o.get(test.as_str()))
                .is_some_and(|outcome| outcome.is_red())
        })
        .count();
    Some(Unaccounted {
        test: tests.first().cloned().unwrap_or_default(),
        replay,
        problem: report_contradicted(kind, report, reds)?,
    })
}

fn report_started(report: &RunReport) -> jiff::Timestamp {
    report
        .invocations
        .first()
        .map_or_else(jiff::Timestamp::now, |i| i.outcome.started_at)
}

/// Every test in a runner's report with its outcome; `None` when there is no report or it
/// cannot be read (an empty file included: pytest writes its report whole, at the end).
fn report_outcomes(path: &Path, parse: &ParseOptions) -> Option<BTreeMap<String, Outcome>> {
    let file = fs_err::File::open(path).ok()?;
    if file.metadata().ok()?.len() == 0 {
        return None;
    }
    let (executions, _) = parse_all(file, parse).ok()?;
    Some(
        executions
            .into_iter()
            .map(|e| (e.test_id, e.outcome))
            .collect(),
    )
}

/// The touched tests replayed, yet run by no replay: every one was a skip.
fn skipped_in_every_replay(touched: &[TouchedTest], records: &[RunRecord]) -> Vec<String> {
    // What `classify` leaves out (skips, probes) is what judges nothing.
    let ran = |r: &RunRecord| r.outcome != Outcome::Skip && r.side != Side::Probe;
    touched
        .iter()
        .filter(|t| records.iter().any(|r| r.test == t.id))
        .filter(|t| !records.iter().any(|r| r.test == t.id && ran(r)))
        .map(|t| t.id.clone())
        .collect()
}

/// Tests skipped at the head (`skipped`, with their reasons there in `head_reasons`), run
/// once more in a worktree of the merge base — its code, tests and settings, each side's
/// own code as `compare` runs it — and judged by `gate::base_skips`. One runner process
/// for all where the runner batches (one each if the batch cannot run: a test the base
/// does not have).
fn skips_at_merge_base(
    plan: &BasePlan<'_>,
    repo_root: &Path,
    skipped: &[String],
    head_reasons: &BTreeMap<String, Option<String>>,
) -> Result<Vec<SkipAtBase>, CliError> {
    let worktree = merge_base_worktree(plan, repo_root)?;
    let at_base = run_at_merge_base(plan, repo_root, worktree.tree(), skipped);
    let base_root = worktree.tree().to_string_lossy().into_owned();
    worktree.remove(plan.git)?;
    let head_root = repo_root.to_string_lossy();
    Ok(skipped
        .iter()
        .map(|test| {
            let head_reason = head_reasons.get(test).cloned().flatten();
            let there = at_base.get(test).cloned().unwrap_or(AtMergeBase::Missing);
            SkipAtBase {
                test: test.clone(),
                judgement: base_skips::judge(
                    head_reason.as_deref(),
                    &there,
                    &head_root,
                    &base_root,
                ),
                missing: there == AtMergeBase::Missing,
                head_reason,
            }
        })
        .collect())
}

/// The tests the merge base's checkout collects, listed there by `list` as the head's
/// are, its code kept from the head's (`with_isolation`); why not, when the runner could
/// not.
fn listed_at_merge_base(
    plan: &BasePlan<'_>,
    repo_root: &Path,
    list: impl FnOnce(&runner::Context<'_>) -> Result<Vec<runner::ListedTest>, runner::RunnerError>,
) -> Result<Vec<String>, String> {
    let left = plan.lane_time.saturating_sub(plan.started.elapsed());
    if left.is_zero() {
        return Err("the lane's time ran out first".to_owned());
    }
    let worktree = merge_base_worktree(plan, repo_root).map_err(|e| e.to_string())?;
    let foreign = [repo_root.to_path_buf()];
    let context = runner::Context::new(
        worktree.tree(),
        plan.dir.join("merge-base-listing"),
        plan.executor,
    )
    .with_timeout(
        Some(plan.policy.runner.timeout.min(left)),
        plan.policy.runner.grace,
    )
    .with_pinned_environment()
    .with_isolation(&foreign);
    let listed = list(&context);
    worktree.remove(plan.git).map_err(|e| e.to_string())?;
    Ok(listed
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|test| test.id)
        .collect())
}

/// A test skipped at the head, judged by its run at the merge base.
struct SkipAtBase {
    test: String,
    /// The runner's reason at the head.
    head_reason: Option<String>,
    judgement: SkipJudgement,
    /// The merge base has no such test.
    missing: bool,
}

/// How each of `tests` fared in the merge base's worktree `tree`.
fn run_at_merge_base(
    plan: &BasePlan<'_>,
    repo_root: &Path,
    tree: &Path,
    tests: &[String],
) -> BTreeMap<String, AtMergeBase> {
    let parse = ParseOptions {
        repo_root: Some(tree.to_string_lossy().into_owned()),
        ..ParseOptions::default()
    };
    let foreign = [repo_root.to_path_buf()];
    // Each selected test's fate, or the one fate of all when the run gave no report.
    let run =
        |selected: &[String], name: &str| -> Result<BTreeMap<String, AtMergeBase>, AtMergeBase> {
            let left = plan.lane_time.saturating_sub(plan.started.elapsed());
            if left.is_zero() {
                return Err(AtMergeBase::NotRun(
                    "the lane's time ran out first".to_owned(),
                ));
            }
            let context =
                runner::Context::new(tree, plan.dir.join("merge-base").join(name), plan.executor)
                    .with_timeout(
                        Some(plan.policy.runner.timeout.min(left)),
                        plan.policy.runner.grace,
                    )
                    .with_pinned_environment()
                    .with_isolation(&foreign)
                    .with_cargo_target(tree.join("target"));
            let options = RunOptions { seed: plan.seed };
            let report = match selected {
                [one] => plan.adapter.run_one(&context, one, options),
                many => plan.adapter.run_batch(&context, many, options),
            }
            .map_err(|error| match error {
                runner::RunnerError::CouldNotRun(not_run) if not_run.unknown_test => {
                    AtMergeBase::Missing
                }
                error => AtMergeBase::NotRun(error.to_string()),
            })?;
            if report.timed_out() {
                return Err(AtMergeBase::NotRun("its run timed out".to_owned()));
            }
            let not_read = |error: String| AtMergeBase::NotRun(format!("its report: {error}"));
            let file = fs_err::File::open(&report.report).map_err(|e| not_read(e.to_string()))?;
            let (executions, _) = parse_all(file, &parse).map_err(|e| not_read(e.to_string()))?;
            Ok(selected
                .iter()
                .map(|test| {
                    let at_base = match executions.iter().find(|e| &e.test_id == test) {
                        Some(e) if e.outcome == Outcome::Skip => {
                            AtMergeBase::Skipped(e.skip_message.clone())
                        }
                        Some(e) => AtMergeBase::Ran(e.outcome),
                        None => AtMergeBase::Missing,
                    };
                    (test.clone(), at_base)
                })
                .collect())
        };
    if tests.len() > 1
        && plan.adapter.batches()
        && let Ok(all) = run(tests, "batch")
    {
        return all;
    }
    tests
        .iter()
        .enumerate()
        .map(|(index, test)| {
            let at_base = match run(std::slice::from_ref(test), &format!("{:03}", index + 1)) {
                Ok(mut one) => one.remove(test).unwrap_or(AtMergeBase::Missing),
                Err(fate) => fate,
            };
            (test.clone(), at_base)
        })
        .collect()
}

/// Each test's skip reason in the first replay report that holds it; a batch's report
/// is read once for all the skipped tests it holds.
fn skip_reasons(
    tests: &[String],
    records: &[RunRecord],
    repo_root: &Path,
) -> BTreeMap<String, Option<String>> {
    let parse = ParseOptions {
        repo_root: Some(repo_root.to_string_lossy().into_owned()),
        ..ParseOptions::default()
    };
    let mut by_report: BTreeMap<&Path, Vec<&String>> = BTreeMap::new();
    for test in tests {
        if let Some(record) = records.iter().find(|r| &r.test == test) {
            by_report.entry(&record.report).or_default().push(test);
        }
    }
    let mut reasons = BTreeMap::new();
    for (report, held) in by_report {
        let Ok(file) = fs_err::File::open(report) else {
            continue;
        };
        let Ok((executions, _)) = parse_all(file, &parse) else {
            continue;
        };
        for test in held {
            let reason = executions
                .iter()
                .find(|e| &e.test_id == test)
                .and_then(|e| e.skip_message.clone());
            reasons.insert(test.clone(), reason);
        }
    }
    reasons
}

/// The touched tests whose replays all ended green.
fn green_in_every_replay(records: &[RunRecord]) -> BTreeSet<String> {
    classify(records)
        .iter()
        .filter(|c| !c.bucket.is_red())
        .map(|c| c.test.clone())
        .collect()
}

/// The base's version of the go test files the change modified or deleted, run against
/// the head's code (issue #14 item 1 for go; `gate::go_base`): in each package folder
/// they are in, every `_test.go` file the change touched goes back as the base has it
/// (one the change added is left out) through `go test -overlay`, in the work tree
/// itself, and every test those base files define runs in one batch, pinned as the
/// replays are. `None` when the change modified or deleted no go test file. The
/// judgement, the runner processes it took and their time.
fn go_base_version(
    plan: &BasePlan<'_>,
    repo_root: &Path,
    diff: &Diff,
    collected: &BTreeSet<String>,
    head_green: &BTreeSet<String>,
    ports: &mut Ports<'_>,
) -> Result<Option<(BaseJudgement, u32, f64)>, CliError> {
    use gate::go_base::{self, BaseGoFile, BaseGoRun};
    let go_files: Vec<_> = diff
        .files
        .iter()
        .filter(|file| go_base::is_go_test_file(&file.path))
        .collect();
    let folders: BTreeSet<&str> = go_files
        .iter()
        .filter(|file| file.status != FileStatus::Added)
        .map(|file| go_base::folder_of(&file.path))
        .collect();
    if folders.is_empty() {
        return Ok(None);
    }
    ports.progress("replaying the base's version of the touched go test files…");
    let in_folders: Vec<_> = go_files
        .into_iter()
        .filter(|file| folders.contains(go_base::folder_of(&file.path)))
        .collect();
    let older: Vec<&str> = in_folders
        .iter()
        .filter(|file| file.status != FileStatus::Added)
        .map(|file| file.path.as_str())
        .collect();
    let mut at_base = plan.git.show_many(plan.base, &older)?.into_iter();
    let folder = plan.dir.join("base-version").join("go-files");
    fs_err::create_dir_all(&folder).map_err(|source| CliError::Write {
        path: folder.clone(),
        source,
    })?;
    let root = std::path::absolute(repo_root).map_err(|source| CliError::Write {
        path: repo_root.to_path_buf(),
        source,
    })?;
    let mut replace = Vec::new();
    let mut files = Vec::new();
    for (index, file) in in_folders.iter().enumerate() {
        let at = root.join(&file.path).to_string_lossy().into_owned();
        if file.status == FileStatus::Added {
            replace.push((at, None));
            continue;
        }
        let bytes = at_base.next().flatten().unwrap_or_default();
        let copy = folder.join(format!("{}_test.go", index + 1));
        fs_err::write(&copy, &bytes).map_err(|source| CliError::Write {
            path: copy.clone(),
            source,
        })?;
        replace.push((at, Some(copy.to_string_lossy().into_owned())));
        let package = go_package(repo_root, go_base::folder_of(&file.path));
        let text = String::from_utf8_lossy(&bytes);
        let tests = go_base::test_names(&text)
            .iter()
            .map(|name| crate::results::ids::go(&package, name))
            .collect();
        files.push(BaseGoFile {
            path: file.path.clone(),
            package,
            tests,
            support: go_base::is_support(&text),
            // The work tree's, which the replays ran (a deleted file defines nothing); a
            // file whose build constraints changed counts as defining nothing, or a
            // `//go:build never` would hide its tests while they still read as defined.
            head_defines: fs_err::read_to_string(repo_root.join(&file.path))
                .ok()
                .filter(|head| {
                    go_base::build_constraints(head) == go_base::build_constraints(&text)
                })
                .map(|head| go_base::test_names(&head))
                .unwrap_or_default(),
        });
    }
    let ids: Vec<String> = files.iter().flat_map(|f| f.tests.iter().cloned()).collect();
    if ids.is_empty() {
        return Ok(Some((
            go_base::judge(
                &files,
                collected,
                head_green,
                &BaseGoRun::Ran(BTreeMap::new()),
            ),
            0,
            0.0,
        )));
    }
    let overlay = plan.dir.join("base-version").join("go-overlay.json");
    fs_err::write(&overlay, go_base::overlay_json(&replace)).map_err(|source| CliError::Write {
        path: overlay.clone(),
        source,
    })?;
    let left = plan.lane_time.saturating_sub(plan.started.elapsed());
    if left.is_zero() {
        return Ok(Some((
            go_base::judge(&files, collected, head_green, &BaseGoRun::NotRun),
            0,
            0.0,
        )));
    }
    let mut command = plan
        .policy
        .runner
        .command
        .clone()
        .unwrap_or_else(|| runner::RunnerKind::Go.default_command());
    // vet reads the files on disk, not the overlay (go 1.19: "open a_test.go: no such
    // file" for a file only the overlay has); the head's build already ran it.
    command.push("-vet=off".to_owned());
    command.push(format!(
        "-overlay={}",
        std::path::absolute(&overlay).unwrap_or(overlay).display()
    ));
    let context = base_context(plan, repo_root, left, "go");
    // Run once, so through one `go test` that links each package once beside the
    // others, not through a `go test -c` per package as the head's rounds are.
    let go = runner::GoTest::new(Some(command));
    let parse = ParseOptions {
        repo_root: Some(repo_root.to_string_lossy().into_owned()),
        ..ParseOptions::default()
    };
    let (run, processes, seconds) =
        match go.run_batch_through_go(&context, &ids, RunOptions { seed: plan.seed }) {
            Ok(report) => {
                let processes = u32::try_from(report.invocations.len()).unwrap_or(u32::MAX);
                let outcomes = report_outcomes(&report.report, &parse).unwrap_or_default();
                (
                    BaseGoRun::Ran(outcomes),
                    processes,
                    process_seconds(&report),
                )
            }
            Err(runner::RunnerError::CouldNotRun(not_run)) => {
                let said = not_run.quoted.first().map_or_else(
                    || not_run.why.clone(),
                    |line| format!("{} ({line})", not_run.why),
                );
                (BaseGoRun::CouldNotRun(said), 1, 0.0)
            }
            Err(error) => return Err(error.into()),
        };
    Ok(Some((
        go_base::judge(&files, collected, head_green, &run),
        processes,
        seconds,
    )))
}

/// go tests the merge base runs that the head's whole suite never reported
/// (`gate::go_vanished`): every test the base's `_test.go` files define (read with one
/// `ls-tree` and one `cat-file`, no build) that the suite's `go test -json` stream
/// (`stream`) has no event of, whose file the change kept and still defines it, and that
/// the base's version of a touched file did not already name removed (`removed`). Only
/// when there are such tests is the merge base checked out and **their packages** listed
/// there (their test binaries built: a test behind a build tag the lane does not set is
/// not run at the base either, and is not the change's). `collected` is the head's
/// listing, for the cause.
fn go_tests_vanished(
    plan: &BasePlan<'_>,
    repo_root: &Path,
    diff: &Diff,
    stream: &Path,
    collected: &BTreeSet<String>,
    removed: &BTreeSet<String>,
    ports: &mut Ports<'_>,
) -> Result<Option<gate::go_vanished::Vanished>, CliError> {
    use gate::go_base;
    use gate::go_vanished::{self, AtHead};
    let text = fs_err::read(stream).map_err(|source| CliError::Read {
        path: stream.to_path_buf(),
        source,
    })?;
    let runs = go_vanished::package_runs(&String::from_utf8_lossy(&text));
    let reported = go_vanished::reported_ids(&runs);
    let tree: Vec<_> = plan
        .git
        .tree_files(plan.base, "")?
        .into_iter()
        .filter(|file| {
            go_base::is_go_test_file(&file.path) || files::file_name(&file.path) == "go.mod"
        })
        .collect();
    let oids: Vec<String> = tree.iter().map(|file| file.oid.clone()).collect();
    let mut texts = vec![String::new(); tree.len()];
    plan.git.read_blobs(&oids, &mut |index, bytes| {
        texts[index] = String::from_utf8_lossy(bytes).into_owned();
    })?;
    let mut test_files = Vec::new();
    let mut modules = BTreeMap::new();
    for (file, text) in tree.iter().zip(texts) {
        if go_base::is_go_test_file(&file.path) {
            test_files.push((file.path.clone(), text));
        } else if let Some(module) = go_base::module_path(&text) {
            modules.insert(go_base::folder_of(&file.path).to_owned(), module);
        }
    }
    let base_files = go_vanished::base_test_files(&test_files, &modules);
    let modified: Vec<&str> = diff
        .files
        .iter()
        .filter(|f| f.status == FileStatus::Modified && go_base::is_go_test_file(&f.path))
        .map(|f| f.path.as_str())
        .collect();
    let heads: BTreeMap<&str, Vec<String>> = modified
        .iter()
        .zip(plan.git.show_many(plan.head, &modified)?)
        .map(|(path, bytes)| {
            let text = String::from_utf8_lossy(&bytes.unwrap_or_default()).into_owned();
            (*path, go_base::test_names(&text))
        })
        .collect();
    let at_head = |path: &str| {
        if diff
            .files
            .iter()
            .any(|f| f.path == path && f.status == FileStatus::Deleted)
        {
            return AtHead::Gone;
        }
        match heads.get(path) {
            Some(names) => AtHead::Defines(names.clone()),
            None => AtHead::Defines(
                base_files
                    .iter()
                    .find(|f| f.path == path)
                    .map(|f| f.tests.clone())
                    .unwrap_or_default(),
            ),
        }
    };
    let unreported = go_vanished::unreported(&base_files, &reported, at_head, removed);
    if unreported.is_empty() {
        return Ok(None);
    }
    ports.progress("listing the go tests the head never ran at the merge base…");
    let packages: Vec<String> = unreported
        .iter()
        .map(|test| test.package.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let go = runner::GoTest::new(plan.policy.runner.command.clone());
    let at_base = listed_at_merge_base(plan, repo_root, |context| {
        go.list_packages(context, &packages)
    })
    .map(|listed| listed.into_iter().collect::<BTreeSet<String>>());
    Ok(go_vanished::judge(
        &unreported,
        at_base.as_ref().map_err(String::as_str),
        &runs,
        collected,
    ))
}

/// The files the change modified or deleted that `picked` keeps and whose base text
/// `defines_tests` (given the path and the text), at both ends (`gate::rust_base`, `gate::js_base`), reusing the texts
/// the touched test files were read with.
fn judged_by_text(
    git: &dyn Repository,
    base: &str,
    head: &str,
    diff: &Diff,
    changed: &[ChangedTestFile],
    picked: impl Fn(&str) -> bool,
    defines_tests: impl Fn(&str, &str) -> bool,
) -> Result<Vec<tamper::FileTexts>, CliError> {
    let older: Vec<&gate::diff::ChangedFile> = diff
        .files
        .iter()
        .filter(|f| !f.binary && f.status != FileStatus::Added && picked(&f.path))
        .collect();
    let unread: Vec<&str> = older
        .iter()
        .filter(|f| !changed.iter().any(|c| c.path == f.path))
        .map(|f| f.path.as_str())
        .collect();
    let text = |bytes: Option<Vec<u8>>| bytes.map(|b| String::from_utf8_lossy(&b).into_owned());
    let mut at_base = git.show_many(base, &unread)?.into_iter();
    let mut at_head = git.show_many(head, &unread)?.into_iter();
    let mut files = Vec::new();
    for file in older {
        let (base_text, head_text) = match changed.iter().find(|c| c.path == file.path) {
            Some(read) => (read.base_text.clone(), Some(read.head_text.clone())),
            None => (
                text(at_base.next().flatten()),
                text(at_head.next().flatten()),
            ),
        };
        let Some(base_text) = base_text else {
            continue;
        };
        if !defines_tests(&file.path, &base_text) {
            continue;
        }
        files.push(tamper::FileTexts {
            path: file.path.clone(),
            base_text,
            head_text,
        });
    }
    Ok(files)
}

/// The import path of the go package in `folder` (repository-relative), from the work
/// tree's `go.mod` files ([`gate::go_base::package_in`]).
fn go_package(repo_root: &Path, folder: &str) -> String {
    gate::go_base::package_in(folder, |at| {
        let text = fs_err::read_to_string(repo_root.join(at).join("go.mod")).ok()?;
        gate::go_base::module_path(&text)
    })
}

/// The pytest modules the change touched: by pytest's default names and the base's
/// `python_files`.
struct Modules {
    /// Added, modified or deleted.
    touched: Vec<String>,
    /// Those the base has (modified or deleted): their base version is replayed.
    existed: Vec<String>,
    /// Those the change deleted.
    deleted: BTreeSet<String>,
}

impl Modules {
    /// What the whole suite's run leaves out: the touched modules the head has (added or
    /// modified), when the head collects any test outside them. When it does not, there is
    /// no untouched test to keep apart, and a run of nothing would read as a lane that ran
    /// nothing.
    fn left_out_of_the_suite(&self, collected: &BTreeSet<String>) -> Vec<String> {
        let at_head: Vec<String> = self
            .touched
            .iter()
            .filter(|module| !self.deleted.contains(*module))
            .cloned()
            .collect();
        let in_file = |id: &str, file: &str| {
            id.strip_prefix(file)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        };
        let untouched = collected
            .iter()
            .any(|id| !at_head.iter().any(|file| in_file(id, file)));
        if untouched { at_head } else { Vec::new() }
    }
}

/// A module named a test module by the base's `python_files` alone counts when one of its
/// ends defines a test ([`gate::pytest_files::defines_tests`]).
fn touched_modules(
    git: &dyn Repository,
    base: &str,
    head: &str,
    diff: &Diff,
    test_files: &PythonTestFiles,
) -> Result<Modules, CliError> {
    let by_configuration: Vec<&str> = diff
        .files
        .iter()
        .map(|file| file.path.as_str())
        .filter(|path| test_files.named_by_configuration_only(path))
        .collect();
    let mut holding_tests = BTreeSet::new();
    if !by_configuration.is_empty() {
        let at_base = git.show_many(base, &by_configuration)?;
        let at_head = git.show_many(head, &by_configuration)?;
        for (path, (before, after)) in by_configuration.iter().zip(at_base.iter().zip(&at_head)) {
            let defines = |bytes: &Option<Vec<u8>>| {
                bytes
                    .as_ref()
                    .is_some_and(|b| gate::pytest_files::defines_tests(&String::from_utf8_lossy(b)))
            };
            if defines(before) || defines(after) {
                holding_tests.insert(*path);
            }
        }
    }
    let mut modules = Modules {
        touched: Vec::new(),
        existed: Vec::new(),
        deleted: BTreeSet::new(),
    };
    for file in &diff.files {
        let module = if test_files.named_by_configuration_only(&file.path) {
            holding_tests.contains(file.path.as_str())
        } else {
            test_files.is_test_module(&file.path)
        };
        if !module {
            continue;
        }
        modules.touched.push(file.path.clone());
        if file.status != FileStatus::Added {
            modules.existed.push(file.path.clone());
        }
        if file.status == FileStatus::Deleted {
            modules.deleted.insert(file.path.clone());
        }
    }
    Ok(modules)
}

struct BasePlan<'a> {
    git: &'a dyn Repository,
    base: &'a str,
    head: &'a str,
    adapter: &'a dyn Adapter,
    executor: &'a dyn Executor,
    dir: &'a Path,
    seed: Option<u64>,
    policy: &'a Config,
    lane_time: Duration,
    started: &'a dyn Clock,
}

/// A throw-away worktree of the head (outside the repository, so no conftest above it
/// applies) where the base's version of the touched modules runs against the head's code.
struct BaseTree {
    _holder: tempfile::TempDir,
    tree: PathBuf,
}

impl BaseTree {
    fn tree(&self) -> &Path {
        &self.tree
    }

    fn remove(self, git: &dyn Repository) -> Result<(), CliError> {
        git.remove_worktree(&self.tree)?;
        Ok(())
    }
}

/// A worktree of the merge base in which its tests can run: the repository's installed
/// JavaScript packages (`node_modules`, which git does not hold) linked in, as the
/// isolation rule treats them, belonging to no side. Without them every bare `import`
/// of a package fails there, and a test would read as not run at the merge base.
fn merge_base_worktree(plan: &BasePlan<'_>, repo_root: &Path) -> Result<BaseTree, CliError> {
    let worktree = worktree_at(plan.git, plan.base, "candor-merge-base-")?;
    let installed = repo_root.join("node_modules");
    let link = worktree.tree().join("node_modules");
    if installed.is_dir() && fs_err::symlink_metadata(&link).is_err() {
        std::os::unix::fs::symlink(&installed, &link).map_err(|source| CliError::Write {
            path: link.clone(),
            source,
        })?;
    }
    Ok(worktree)
}

/// A throw-away worktree of `commit` in a new temporary folder named from `prefix`.
fn worktree_at(git: &dyn Repository, commit: &str, prefix: &str) -> Result<BaseTree, CliError> {
    let holder = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|source| CliError::Write {
            path: std::env::temp_dir(),
            source,
        })?;
    let tree = holder.path().join("tree");
    git.checkout_worktree(&tree, commit)?;
    Ok(BaseTree {
        _holder: holder,
        tree,
    })
}

/// The head's worktree with each module in `files` and the changed test infrastructure
/// (`restore`) put back as the base has them.
fn base_version_tree(
    plan: &BasePlan<'_>,
    files: &[String],
    restore: &[String],
) -> Result<BaseTree, CliError> {
    let base_tree = worktree_at(plan.git, plan.head, "candor-base-tests-")?;
    if let Err(error) = overlay(plan, base_tree.tree(), files, restore) {
        base_tree.remove(plan.git)?;
        return Err(error);
    }
    Ok(base_tree)
}

fn overlay(
    plan: &BasePlan<'_>,
    tree: &Path,
    files: &[String],
    restore: &[String],
) -> Result<(), CliError> {
    for path in files.iter().chain(restore) {
        let target = tree.join(path);
        let write_error = |source| CliError::Write {
            path: target.clone(),
            source,
        };
        // A symlink (the change may have made the module one) is replaced, not followed.
        if fs_err::symlink_metadata(&target).is_ok() {
            fs_err::remove_file(&target).map_err(write_error)?;
        }
        if let Some(bytes) = plan.git.show(plan.base, path)? {
            if let Some(parent) = target.parent() {
                fs_err::create_dir_all(parent).map_err(write_error)?;
            }
            fs_err::write(&target, bytes).map_err(write_error)?;
        }
    }
    Ok(())
}

/// The base's version of every module in `files` in one runner process, when the lane
/// has time for it (the rounds did not run it beside them).
fn run_base_batch(plan: &BasePlan<'_>, tree: &Path, files: &[String]) -> Option<BaseBatchRun> {
    let left = plan.lane_time.saturating_sub(plan.started.elapsed());
    if left.is_zero() {
        return None;
    }
    let context = base_context(plan, tree, left, "batch");
    Some(BaseBatchRun {
        report: plan
            .adapter
            .run_batch(&context, files, RunOptions { seed: plan.seed }),
    })
}

/// Judges the base's version of each module in `files` by the batch's run (`batch`) where
/// it was green, and runs every other module alone: a module red or empty in the batch, or
/// a batch that ended with anything but exit 0 or 1 (a collection error stops pytest for
/// all), so a batch cannot make a good change look weakened. The runs, the runner
/// processes they took and their time.
fn base_version_alone(
    plan: &BasePlan<'_>,
    tree: &Path,
    files: &[String],
    batch: Option<BaseBatchRun>,
) -> Result<(Vec<BaseRun>, u32, f64), CliError> {
    let parse = ParseOptions {
        repo_root: Some(tree.to_string_lossy().into_owned()),
        ..ParseOptions::default()
    };
    let mut processes = 0;
    let mut seconds = 0.0;
    let mut batched: BTreeMap<String, BaseRun> = BTreeMap::new();
    if let Some(batch) = batch {
        processes += 1;
        match batch.report {
            Ok(report) => {
                seconds += process_seconds(&report);
                let outcomes = report_outcomes(&report.report, &parse).unwrap_or_default();
                let reds = outcomes.values().filter(|o| o.is_red()).count();
                // A status no red test explains, or a pytest summary beyond the report's
                // reds, is a batch whose report cannot be trusted: its files run alone.
                let explained = match report.exit_code() {
                    0 => true,
                    1 => reds > 0,
                    _ => false,
                } && report_contradicted(plan.adapter.kind(), &report, reds)
                    .is_none();
                if !report.timed_out() && explained {
                    for file in files {
                        let in_file = |id: &String| {
                            id.split_once("::").is_some_and(|(f, _)| f == file.as_str())
                        };
                        let mine: BTreeMap<String, Outcome> = outcomes
                            .iter()
                            .filter(|(id, _)| in_file(id))
                            .map(|(id, outcome)| (id.clone(), *outcome))
                            .collect();
                        // All green: nothing a batch could have made red needs a look alone.
                        if !mine.is_empty() && mine.values().all(|o| !o.is_red()) {
                            batched.insert(
                                file.clone(),
                                BaseRun {
                                    file: file.clone(),
                                    exit_code: Some(0),
                                    outcomes: mine,
                                    report_contradicted: None,
                                },
                            );
                        }
                    }
                }
            }
            Err(runner::RunnerError::CouldNotRun(_)) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let mut runs = Vec::new();
    for file in files {
        if let Some(run) = batched.remove(file) {
            runs.push(run);
            continue;
        }
        let left = plan.lane_time.saturating_sub(plan.started.elapsed());
        if left.is_zero() {
            runs.push(BaseRun {
                file: file.clone(),
                exit_code: None,
                outcomes: BTreeMap::new(),
                report_contradicted: None,
            });
            continue;
        }
        let context = base_context(plan, tree, left, &format!("{:03}", processes + 1));
        processes += 1;
        let report = plan
            .adapter
            .run_one(&context, file, RunOptions { seed: plan.seed })?;
        seconds += process_seconds(&report);
        let lane_bound = left < plan.policy.runner.timeout;
        let outcomes = report_outcomes(&report.report, &parse).unwrap_or_default();
        let reds = outcomes.values().filter(|o| o.is_red()).count();
        runs.push(BaseRun {
            file: file.clone(),
            exit_code: (!(report.timed_out() && lane_bound)).then(|| report.exit_code()),
            report_contradicted: report_contradicted(plan.adapter.kind(), &report, reds),
            outcomes,
        });
    }
    Ok((runs, processes, seconds))
}

/// A report's runner processes' wall time.
fn process_seconds(report: &RunReport) -> f64 {
    report
        .invocations
        .iter()
        .map(|i| i.outcome.duration.as_secs_f64())
        .sum()
}

/// A base-version run's context: in the worktree, within the lane's time `left`.
fn base_context<'a>(
    plan: &BasePlan<'a>,
    tree: &Path,
    left: Duration,
    name: &str,
) -> runner::Context<'a> {
    runner::Context::new(
        tree,
        plan.dir.join("base-version").join(name),
        plan.executor,
    )
    .with_timeout(
        Some(plan.policy.runner.timeout.min(left)),
        plan.policy.runner.grace,
    )
    .with_pinned_environment()
}

/// Ledger lines the change appended, each checked against the history's reruns. Without
/// a history every appended line is unverified. A ledger the change rewrote is the
/// human-owned check's business; only appended lines are receipts.
fn check_receipts(
    git: &dyn Repository,
    base: &str,
    head: &str,
    policy: &Config,
    diff: &Diff,
    history: &mut History,
) -> Result<Vec<Receipt>, CliError> {
    let Some(ledger) = files::repository_relative(&policy.rerun.ledger) else {
        return Ok(Vec::new());
    };
    if !diff.touches(&ledger) {
        return Ok(Vec::new());
    }
    let read = |revision: &str| -> Result<String, CliError> {
        Ok(git
            .show(revision, &ledger)?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default())
    };
    let (base_text, head_text) = (read(base)?, read(head)?);
    if crate::ledger::is_append_only(&base_text, &head_text).is_err() {
        return Ok(Vec::new());
    }
    let store = history.existing()?;
    let mut found = Vec::new();
    for (line, text) in receipts::appended(&base_text, &head_text) {
        // An old receipt copied again is not a new rerun.
        if let Some(copied) = base_text.lines().position(|old| old == text) {
            found.push(Receipt {
                line,
                text: text.to_owned(),
                verified: false,
                problem: Some(format!(
                    "a copy of line {} of the base's ledger, not a new rerun",
                    copied + 1
                )),
            });
            continue;
        }
        let stored = match (&store, receipts::test_of(text)) {
            (Some(store), Some(test)) => store.executions(&test, 1000)?,
            _ => Vec::new(),
        };
        found.push(receipts::verify(line, text, &stored));
    }
    Ok(found)
}

/// Stores each replay's report in the history as a `gate` run, a batch's once.
fn store_replays(
    history: &mut History,
    settings: &GateSettings,
    records: &[RunRecord],
    repo_root: &Path,
) -> Result<(), CliError> {
    let mut stored = BTreeSet::new();
    for record in records {
        if !stored.insert(&record.report)
            || !fs_err::metadata(&record.report).is_ok_and(|m| m.len() > 0)
        {
            continue;
        }
        store_gate_report(
            history,
            settings,
            &GateRun {
                report: &record.report,
                commit: record.commit.as_deref().unwrap_or_default(),
                started_at: record.started_at,
                seed: record.seed,
                workers: record.workers,
            },
            repo_root,
        )?;
    }
    Ok(())
}

/// One runner report of the lane, and what the history keeps of the run that made it.
#[derive(Clone, Copy)]
struct GateRun<'a> {
    report: &'a Path,
    commit: &'a str,
    started_at: jiff::Timestamp,
    seed: Option<u64>,
    /// The runner's own parallelism in that process.
    workers: Option<u32>,
}

/// Stores one runner report of the lane in the history as a `gate` run.
fn store_gate_report(
    history: &mut History,
    settings: &GateSettings,
    run: &GateRun<'_>,
    repo_root: &Path,
) -> Result<(), CliError> {
    let GateRun {
        report,
        commit,
        started_at,
        seed,
        workers,
    } = *run;
    let store = history.create()?;
    let parse = ParseOptions {
        repo_root: Some(repo_root.to_string_lossy().into_owned()),
        ..ParseOptions::default()
    };
    let run = crate::history::NewRun {
        commit: Some(commit.to_owned()).filter(|c| !c.is_empty()),
        branch: settings.workspace.branch.clone(),
        merge_base: settings.change.base.clone().ok(),
        started_at,
        source: Source::Gate,
        ci_provider: settings
            .workspace
            .ci
            .provider
            .map(|p| p.as_str().to_owned()),
        job: settings.workspace.ci.job.clone(),
        ci_run: crate::history::CiRun::new(
            settings.workspace.ci.repository.clone(),
            settings.workspace.ci.run_id.clone(),
            settings.workspace.ci.attempt,
        ),
        workers,
        seed: seed.map(|s| s.to_string()),
        conditions: crate::history::Conditions {
            ci: settings.workspace.ci.detected,
            runner: None,
            os: Some(std::env::consts::OS.to_owned()),
        },
        format: None,
        producer: None,
        source_path: Some(report.display().to_string()),
    };
    crate::ingest::ingest_file(store, report, &run, &parse).map_err(CliError::Results)?;
    Ok(())
}

fn write_report(path: &Path, report: &ScoreReport<'_>) -> Result<(), CliError> {
    let write_error = |source| CliError::Write {
        path: path.to_owned(),
        source,
    };
    let mut text = serde_json::to_string_pretty(report).map_err(|e| write_error(e.into()))?;
    text.push('\n');
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    fs_err::create_dir_all(&dir).map_err(write_error)?;
    let mut file = tempfile::NamedTempFile::new_in(&dir).map_err(write_error)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(write_error)?;
    file.persist(path).map_err(|e| write_error(e.error))?;
    Ok(())
}

fn append_summary(path: &Path, markdown: &str) -> Result<(), CliError> {
    use std::io::Write as _;
    let write_error = |source| CliError::Write {
        path: path.to_owned(),
        source,
    };
    let mut file = fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(write_error)?;
    file.write_all(markdown.as_bytes()).map_err(write_error)?;
    Ok(())
}

/// #13 item 4: the merge lane in milliseconds, with the fake executor playing pytest (its
/// version, its collection, each replay's JUnit report), a fake git holding the base and
/// the head, and a clock that moves only when read.
#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::app::Ports;
    use crate::app::fakes::{FakeGit, Scene, TickingClock, junit, said, steps, tree, workspace};
    use crate::cli::settings::LintDiffSettings;
    use crate::events::Collected;
    use crate::gate::lane::Reason;
    use crate::runner::fake::{FakeExecutor, FakeRun};

    const BASE: &str = "base0000000000000000000000000000000000000";
    const HEAD: &str = "head0000000000000000000000000000000000000";
    const OLD: &str = "tests/test_pool.py::test_checkout";
    const NEW: &str = "tests/test_pool.py::test_new";
    const POLICY: &str = r#"
[runner]
kind = "pytest"

[lane]
replay = "touched"
min_replays = 3
max_wall_seconds = 180
"#;
    const BEFORE: &str = "def test_checkout():\n    assert True\n";
    const AFTER: &str =
        "def test_checkout():\n    assert True\n\n\ndef test_new():\n    assert True\n";

    /// pytest's version and collection, before any replay.
    fn listing() -> Vec<FakeRun> {
        vec![
            FakeRun::exits(0).with_stdout("pytest 8.3.3\n"),
            FakeRun::exits(0).with_stdout(format!("{OLD}\n{NEW}\n\n2 tests collected in 0.01s\n")),
        ]
    }

    fn replay(test: &str, outcome: &str) -> FakeRun {
        FakeRun::exits(i32::from(outcome == "fail")).with_report(junit(&[(test, outcome)]))
    }

    /// One batched replay: every case in one report, exit 1 when one failed.
    fn batch(cases: &[(&str, &str)]) -> FakeRun {
        let failed = cases.iter().any(|(_, outcome)| *outcome == "fail");
        FakeRun::exits(i32::from(failed)).with_report(junit(cases))
    }

    /// The lane over the change that adds `test_new`, with `script` after the listing and
    /// a clock moving `tick` per reading.
    fn lane_with(script: Vec<FakeRun>, tick: Duration) -> (Lane, Collected, FakeExecutor, Scene) {
        lane_over(BEFORE, AFTER, listing(), script, tick)
    }

    /// The lane over a change of `tests/test_pool.py` from `before` to `after`, the runner
    /// answering `listing` then `script`.
    fn lane_over(
        before: &str,
        after: &str,
        listing: Vec<FakeRun>,
        script: Vec<FakeRun>,
        tick: Duration,
    ) -> (Lane, Collected, FakeExecutor, Scene) {
        let executor = FakeExecutor::new(listing.into_iter().chain(script));
        let (lane, events, scene) = lane_in(
            &[("tests/test_pool.py", before)],
            &[("tests/test_pool.py", after)],
            &executor,
            tick,
            1,
        );
        (lane, events, executor, scene)
    }

    /// The lane over a change from the `base` files to the `head` files (`POLICY` beside
    /// them), `executor` playing the runner, at most `jobs` runner processes at once.
    fn lane_in(
        base: &[(&str, &str)],
        head: &[(&str, &str)],
        executor: &dyn crate::runner::process::Executor,
        tick: Duration,
        jobs: u32,
    ) -> (Lane, Collected, Scene) {
        let with_policy = |files: &[(&str, &str)]| {
            let mut all = vec![("candor.toml", POLICY)];
            all.extend_from_slice(files);
            tree(&all)
        };
        let (base, head) = (with_policy(base), with_policy(head));
        let scene = Scene::new(&head);
        let git = FakeGit {
            commits: [(BASE.to_owned(), base), (HEAD.to_owned(), head)].into(),
            ..FakeGit::default()
        };
        let clock = TickingClock::new(tick);
        let mut events = Collected::default();
        let settings = GateSettings {
            change: LintDiffSettings {
                base: Ok(BASE.to_owned()),
                head: Ok(HEAD.to_owned()),
            },
            report: scene.root.join("score-report.json"),
            approved_by: None,
            step_summary: None,
            workspace: workspace(HEAD),
            jobs: Some(jobs),
        };
        let mut history = scene.history();
        let lane = gate(
            &settings,
            &mut Ports {
                root: &scene.root,
                executor,
                clock: &clock,
                events: &mut events,
            },
            &git,
            &mut history,
        )
        .unwrap_or_else(|error| panic!("{error}"));
        (lane, events, scene)
    }

    /// The report on disk says what the returned lane says.
    fn assert_written(lane: &Lane) {
        let text = std::fs::read_to_string(&lane.report_path).unwrap_or_default();
        let written: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(
            written["pass"],
            serde_json::json!(lane.verdict.pass),
            "{text}"
        );
        assert_eq!(
            written["runs"].as_array().map(Vec::len),
            Some(lane.runs.len())
        );
    }

    fn replays_of(lane: &Lane, test: &str) -> Vec<Outcome> {
        lane.runs
            .iter()
            .filter(|r| r.test == test)
            .map(|r| r.outcome)
            .collect()
    }

    /// The base's version of the module, against the head's code.
    fn base_version() -> FakeRun {
        FakeRun::exits(0).with_report(junit(&[(OLD, "pass")]))
    }

    /// The test ids a replay's runner was given, in order (after pytest's `--`).
    fn given(invocation: &crate::runner::process::Invocation) -> Vec<String> {
        invocation
            .argv
            .iter()
            .skip_while(|a| *a != "--")
            .skip(1)
            .cloned()
            .collect()
    }

    #[test]
    fn a_touched_test_red_in_one_replay_of_three_rejects_the_change() {
        let script = vec![
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            batch(&[(NEW, "fail"), (OLD, "pass")]),
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            // Red in a batch: replayed alone, and red there too.
            replay(NEW, "pass"),
            replay(NEW, "fail"),
            replay(NEW, "pass"),
            base_version(),
        ];
        let (lane, events, executor, _scene) = lane_with(script, Duration::from_millis(1));
        assert!(!lane.verdict.pass);
        assert!(
            lane.verdict.reasons.iter().any(|reason| matches!(
                reason,
                Reason::ReplayFailed { test, failures: 1, replays: 3, .. } if test == NEW
            )),
            "{:?}",
            lane.verdict.reasons
        );
        assert_eq!(
            replays_of(&lane, NEW),
            [Outcome::Pass, Outcome::Fail, Outcome::Pass]
        );
        assert!(
            lane.runs
                .iter()
                .filter(|r| r.test == NEW)
                .all(|r| r.batch.is_none()),
            "judged by the replays alone"
        );
        assert_eq!(lane.touched.iter().filter(|t| t.test.new).count(), 1);
        assert_eq!(executor.remaining(), 0);
        assert_eq!(
            said(&events),
            [
                ("progress", "listing the tests…".to_owned()),
                (
                    "progress",
                    "replaying alone the 1 test(s) red in a batch…".to_owned()
                ),
                (
                    "progress",
                    "replaying the base's version of the touched test modules…".to_owned()
                ),
            ]
        );
        assert_eq!(
            steps(&events).len(),
            12,
            "a step before and after each of the three batches and the three replays alone"
        );
        let batching = lane.batching.as_ref().expect("batched");
        assert_eq!(batching.replayed_alone, [NEW]);
        assert!(batching.order_dependent.is_empty(), "red alone too");
        match events.events.last() {
            Some(crate::events::Event::Gate(gate)) => {
                assert!(!gate.report.pass);
                assert_eq!(gate.report_path, lane.report_path);
            }
            other => panic!("the lane's report is the last event, not {other:?}"),
        }
        assert_written(&lane);
    }

    /// The lane over a change whose new test skips in every replay, the merge base's
    /// worktree answering `at_merge_base`; the lane and the merge base's one invocation.
    fn skipped_at_head(
        at_merge_base: FakeRun,
    ) -> (Lane, crate::runner::process::Invocation, Scene) {
        let script = vec![
            batch(&[(OLD, "pass"), (NEW, "skip")]),
            batch(&[(NEW, "skip"), (OLD, "pass")]),
            batch(&[(OLD, "pass"), (NEW, "skip")]),
            base_version(),
            at_merge_base,
        ];
        let (lane, _notes, executor, scene) = lane_with(script, Duration::from_millis(1));
        assert_eq!(replays_of(&lane, NEW), [Outcome::Skip; 3]);
        assert_eq!(executor.remaining(), 0);
        let at_base = executor.invocations().pop().expect("the merge base's run");
        assert_eq!(given(&at_base), [NEW], "only the skipped test runs there");
        assert_ne!(at_base.cwd, scene.root, "in the merge base's worktree");
        assert!(
            !at_base.cwd.exists(),
            "the merge base's worktree is removed after its run"
        );
        assert_written(&lane);
        (lane, at_base, scene)
    }

    #[test]
    fn a_touched_test_skipped_in_every_replay_rejects_the_change() {
        let (lane, _, _) = skipped_at_head(FakeRun::exits(0).with_report(junit(&[(NEW, "pass")])));
        assert!(!lane.verdict.pass);
        assert!(
            lane.verdict.reasons.contains(&Reason::ReplaySkipped {
                test: NEW.to_owned(),
                merge_base: Some("the merge base runs it (pass): the change made it skip".into()),
            }),
            "{:?}",
            lane.verdict.reasons
        );
        assert!(lane.skipped_as_at_base.is_empty());
    }

    #[test]
    fn a_touched_test_the_merge_base_skips_for_the_same_reason_is_reported_not_refused() {
        let (lane, _, _) = skipped_at_head(FakeRun::exits(0).with_report(junit(&[(NEW, "skip")])));
        assert!(
            !lane
                .verdict
                .reasons
                .iter()
                .any(|r| matches!(r, Reason::ReplaySkipped { .. })),
            "{:?}",
            lane.verdict.reasons
        );
        assert_eq!(
            lane.skipped_as_at_base,
            [SkippedAsAtBase {
                test: NEW.to_owned(),
                reason: Some("not today".to_owned())
            }]
        );
        let report = serde_json::to_value(lane.score_report()).expect("the report");
        assert_eq!(
            report["skipped_as_at_base"][0]["test"],
            serde_json::json!(NEW),
            "{report}"
        );
        assert!(lane::markdown(&lane.score_report()).contains(
            "`tests/test_pool.py::test_new` is skipped here as at the merge base (not today)"
        ));
    }

    #[test]
    fn the_replays_the_lane_has_no_time_for_are_not_made_and_reject_the_change() {
        // Read once to start, twice for the listing; then before each round: 120 s and
        // 160 s leave time, 200 s does not (max_wall_seconds = 180).
        let script = vec![
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            batch(&[(NEW, "pass"), (OLD, "pass")]),
        ];
        let (lane, _notes, executor, _scene) = lane_with(script, Duration::from_secs(40));
        assert_eq!(lane.runs.len(), 4, "two rounds of two tests");
        assert_eq!(
            executor.invocations().len(),
            4,
            "version, listing, two rounds"
        );
        assert!(!lane.verdict.pass);
        assert!(
            lane.verdict.reasons.iter().any(|reason| matches!(
                reason,
                Reason::OutOfTime { max_wall_seconds: 180, replays_left } if *replays_left >= 2
            )),
            "{:?}",
            lane.verdict.reasons
        );
        assert_written(&lane);
    }

    #[test]
    fn three_green_replays_of_every_touched_test_accept_the_change() {
        let script = vec![
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            batch(&[(NEW, "pass"), (OLD, "pass")]),
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            base_version(),
        ];
        let (lane, _notes, _executor, _scene) = lane_with(script, Duration::from_millis(1));
        assert!(lane.verdict.pass, "{:?}", lane.verdict.reasons);
        assert_written(&lane);
    }

    /// #15 item 1: N touched tests, one runner process per round (and one for the base's
    /// version), not one per test; every other round reversed (item 2).
    #[test]
    fn each_round_replays_every_touched_test_in_one_runner_process() {
        let script = vec![
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            batch(&[(NEW, "pass"), (OLD, "pass")]),
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            base_version(),
        ];
        let (lane, _notes, executor, _scene) = lane_with(script, Duration::from_millis(1));
        let invocations = executor.invocations();
        assert_eq!(
            invocations.len(),
            2 + 3 + 1,
            "version, listing, three rounds, the base's version"
        );
        let rounds: Vec<Vec<String>> = invocations[2..5].iter().map(given).collect();
        assert_eq!(
            rounds,
            [
                vec![OLD.to_owned(), NEW.to_owned()],
                vec![NEW.to_owned(), OLD.to_owned()],
                vec![OLD.to_owned(), NEW.to_owned()],
            ]
        );
        assert_eq!(replays_of(&lane, OLD), [Outcome::Pass; 3]);
        assert_eq!(replays_of(&lane, NEW), [Outcome::Pass; 3]);
        let batching = lane.batching.as_ref().expect("batched");
        assert_eq!(batching.rounds.len(), 3);
        assert_eq!(
            batching
                .rounds
                .iter()
                .map(|r| (r.order, r.batches.len()))
                .collect::<Vec<_>>(),
            [
                (lane::BatchOrder::Forward, 1),
                (lane::BatchOrder::Reversed, 1),
                (lane::BatchOrder::Forward, 1)
            ]
        );
        assert_eq!(batching.rounds[1].batches[0].tests, rounds[1]);
        assert_eq!(batching.rounds[0].batches[0].workers, Some(1));
        assert_eq!(batching.base_version_processes, Some(1));
        assert!(lane.runs.iter().all(|r| r.batch == Some(1)));
        let text = std::fs::read_to_string(&lane.report_path).unwrap_or_default();
        let written: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(
            written["batching"]["rounds"][1]["order"], "reversed",
            "{text}"
        );
    }

    /// #15 item 1: more test ids than one command line should carry are split into
    /// several batches a round, and no test is lost.
    #[test]
    fn touched_tests_beyond_the_argv_budget_split_into_batches_and_none_is_lost() {
        // Three tests of 50,000-byte names beside `test_checkout`: two of them fit in
        // 128 KiB, the third goes with `test_checkout` into a second batch.
        let names: Vec<String> = ["a", "b", "c"]
            .iter()
            .map(|c| format!("test_{}", c.repeat(50_000)))
            .collect();
        let ids: Vec<String> = names
            .iter()
            .map(|n| format!("tests/test_pool.py::{n}"))
            .collect();
        let mut after = BEFORE.to_owned();
        for name in &names {
            after.push_str("\n\ndef ");
            after.push_str(name);
            after.push_str("():\n    assert True\n");
        }
        let listing = vec![
            FakeRun::exits(0).with_stdout("pytest 8.3.3\n"),
            FakeRun::exits(0)
                .with_stdout(format!("{}\n{OLD}\n\n4 tests collected\n", ids.join("\n"))),
        ];
        // In id order, as the touched tests come: `…test_ccc…` before `…test_checkout`.
        let all: Vec<&str> = ids
            .iter()
            .map(String::as_str)
            .chain(std::iter::once(OLD))
            .collect();
        let green = |order: &[usize]| {
            let cases: Vec<(&str, &str)> = order.iter().map(|&i| (all[i], "pass")).collect();
            batch(&cases)
        };
        let script = vec![
            green(&[0, 1]),
            green(&[2, 3]),
            green(&[3, 2]),
            green(&[1, 0]),
            green(&[0, 1]),
            green(&[2, 3]),
            base_version(),
        ];
        let (lane, _notes, executor, _scene) =
            lane_over(BEFORE, &after, listing, script, Duration::from_millis(1));
        assert_eq!(executor.remaining(), 0, "{:?}", lane.verdict.reasons);
        let batching = lane.batching.as_ref().expect("batched");
        for round in &batching.rounds {
            assert_eq!(round.batches.len(), 2, "round {}", round.round);
            let mut seen: Vec<&str> = round
                .batches
                .iter()
                .flat_map(|b| b.tests.iter().map(String::as_str))
                .collect();
            seen.sort_unstable();
            let mut expected = all.clone();
            expected.sort_unstable();
            assert_eq!(seen, expected, "round {}", round.round);
        }
        for id in &ids {
            assert_eq!(replays_of(&lane, id), [Outcome::Pass; 3]);
        }
        assert!(lane.verdict.pass, "{:?}", lane.verdict.reasons);
    }

    /// #15 item 1: a batch whose runner exits 0 with a report that lacks one of its tests
    /// does not account for that test: rejected, never accepted on the others' word.
    #[test]
    fn a_test_missing_from_a_batch_report_is_unaccounted_not_accepted() {
        let script = vec![
            batch(&[(OLD, "pass")]),
            batch(&[(NEW, "pass"), (OLD, "pass")]),
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            // Missing counts as red: replayed alone.
            replay(NEW, "pass"),
            replay(NEW, "pass"),
            replay(NEW, "pass"),
            base_version(),
        ];
        let (lane, _notes, executor, _scene) = lane_with(script, Duration::from_millis(1));
        assert_eq!(executor.remaining(), 0);
        assert!(!lane.verdict.pass);
        assert!(
            lane.verdict.reasons.iter().any(|reason| matches!(
                reason,
                Reason::ReportUnaccounted { test, .. } if test == NEW
            )),
            "{:?}",
            lane.verdict.reasons
        );
        assert_eq!(
            lane.unaccounted
                .iter()
                .map(|u| (u.test.as_str(), u.replay))
                .collect::<Vec<_>>(),
            [(NEW, 1)]
        );
    }

    /// #15 item 2: red in a batch, green in every replay alone: order-dependent in the
    /// batch, with the batch's order as evidence, and judged by the replays alone.
    #[test]
    fn batched_red_and_alone_green_is_order_dependent_and_judged_alone() {
        let script = vec![
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            batch(&[(NEW, "pass"), (OLD, "fail")]),
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            replay(OLD, "pass"),
            replay(OLD, "pass"),
            replay(OLD, "pass"),
            base_version(),
        ];
        let (lane, events, executor, _scene) = lane_with(script, Duration::from_millis(1));
        assert_eq!(executor.remaining(), 0);
        assert!(lane.verdict.pass, "{:?}", lane.verdict.reasons);
        assert_eq!(replays_of(&lane, OLD), [Outcome::Pass; 3]);
        let batching = lane.batching.as_ref().expect("batched");
        assert_eq!(batching.order_dependent.len(), 1);
        let dependent = &batching.order_dependent[0];
        assert_eq!(dependent.test, OLD);
        assert_eq!(dependent.round, 2);
        assert_eq!(dependent.batch_order, [NEW, OLD]);
        assert_eq!(dependent.batched, Outcome::Fail);
        assert_eq!(dependent.alone, [Outcome::Pass; 3]);
        assert!(
            dependent.next.starts_with("candor order "),
            "{}",
            dependent.next
        );
        assert!(
            said(&events)
                .iter()
                .any(|(kind, text)| *kind == "warning" && text.contains("order-dependent")),
            "{:?}",
            said(&events)
        );
    }

    /// A test its batch never reached (another test's panic ended the runner's process
    /// first: seen on google/uuid, whose shuffled suite panics midway) did not run there:
    /// replayed alone and judged by those, but not called order-dependent.
    #[test]
    fn a_test_its_batch_never_reached_is_judged_alone_not_called_order_dependent() {
        let script = vec![
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            // The reversed round's process ends at OLD's failure, before NEW starts.
            batch(&[(OLD, "fail")]),
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            replay(OLD, "pass"),
            replay(OLD, "pass"),
            replay(OLD, "pass"),
            replay(NEW, "pass"),
            replay(NEW, "pass"),
            replay(NEW, "pass"),
            base_version(),
        ];
        let (lane, events, executor, _scene) = lane_with(script, Duration::from_millis(1));
        assert_eq!(executor.remaining(), 0);
        assert!(lane.verdict.pass, "{:?}", lane.verdict.reasons);
        let batching = lane.batching.as_ref().expect("batched");
        assert_eq!(batching.replayed_alone, [OLD, NEW]);
        let dependent: Vec<&str> = batching
            .order_dependent
            .iter()
            .map(|d| d.test.as_str())
            .collect();
        assert_eq!(dependent, [OLD], "only the test that ran red in its batch");
        assert_eq!(replays_of(&lane, NEW), [Outcome::Pass; 3]);
        let said = said(&events);
        assert!(
            said.iter().any(|(kind, text)| *kind == "note"
                && text.contains(&format!("did not run in their batch, whose runner process ended before them: {NEW} (round 2)"))),
            "{said:?}"
        );
        assert!(
            !said.iter().any(|(kind, text)| *kind == "warning"
                && text.starts_with(&format!("{NEW} is order-dependent"))),
            "{said:?}"
        );
    }

    /// #15 item 2, the adversary's case: a test that passes only after another touched
    /// test ran before it passes the forward round; the reversed round runs it first, it
    /// goes red, and alone it is red every time: rejected.
    #[test]
    fn a_test_green_only_after_another_in_its_batch_is_not_accepted() {
        let script = vec![
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            batch(&[(NEW, "fail"), (OLD, "pass")]),
            batch(&[(OLD, "pass"), (NEW, "pass")]),
            replay(NEW, "fail"),
            replay(NEW, "fail"),
            replay(NEW, "fail"),
            base_version(),
        ];
        let (lane, _notes, _executor, _scene) = lane_with(script, Duration::from_millis(1));
        assert!(!lane.verdict.pass);
        assert_eq!(replays_of(&lane, NEW), [Outcome::Fail; 3]);
        assert!(
            lane.batching
                .as_ref()
                .is_some_and(|b| b.order_dependent.is_empty())
        );
    }

    #[test]
    fn batches_keep_order_and_split_at_the_budget() {
        let ids: Vec<String> = ["aaaa", "bb", "cccccc", "d"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let cost = |id: &str| id.len() + 1 + std::mem::size_of::<usize>();
        let budget = cost("cccccc") + cost("d");
        assert_eq!(
            split_batches(&ids, budget),
            [vec!["aaaa", "bb"], vec!["cccccc", "d"]]
        );
        // An id beyond the budget is a batch of its own, never dropped.
        assert_eq!(
            split_batches(&ids, 1),
            [["aaaa"], ["bb"], ["cccccc"], ["d"]]
        );
        assert_eq!(split_batches(&ids, 1 << 20), std::slice::from_ref(&ids));
        assert!(split_batches(&[], 10).is_empty());
    }

    const MORE: &str = "tests/test_more.py::test_more";

    /// One runner process as [`Sharing`] saw it.
    #[derive(Debug, Clone)]
    struct Seen {
        /// Its scratch folder's name (`round-1-001`, `base-version`, `001`, `listing`).
        place: String,
        /// The test ids (or modules) after `--`.
        given: Vec<String>,
        /// Whether any other runner process ran at any moment of its life.
        beside: bool,
    }

    /// Plays pytest by argv (its version, the collection, batches, replays alone, the
    /// base's version) and notes which processes overlapped another. The processes of
    /// each group of `meet` places wait for each other (bounded: a lane that runs them one
    /// at a time fails the test rather than hanging it), so that they surely overlap.
    struct Sharing<F> {
        outcome: F,
        meet: &'static [&'static [&'static str]],
        state: std::sync::Mutex<(Vec<usize>, Vec<Seen>)>,
        changed: std::sync::Condvar,
        most: std::sync::atomic::AtomicUsize,
    }

    impl<F: Fn(&str, &Seen) -> &'static str + Send + Sync> Sharing<F> {
        fn new(meet: &'static [&'static [&'static str]], outcome: F) -> Self {
            Sharing {
                outcome,
                meet,
                state: std::sync::Mutex::new((Vec::new(), Vec::new())),
                changed: std::sync::Condvar::new(),
                most: std::sync::atomic::AtomicUsize::new(0),
            }
        }

        /// The most runner processes that ran at once.
        fn most(&self) -> usize {
            self.most.load(std::sync::atomic::Ordering::SeqCst)
        }

        fn seen(&self) -> Vec<Seen> {
            self.state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .1
                .clone()
        }

        fn place(invocation: &crate::runner::process::Invocation) -> String {
            if invocation.argv.iter().any(|a| a == "-VV") {
                return "probe".to_owned();
            }
            let folder = invocation.log.parent().unwrap_or(Path::new(""));
            if folder.components().any(|c| c.as_os_str() == "base-version") {
                return "base-version".to_owned();
            }
            folder
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        }
    }

    impl<F: Fn(&str, &Seen) -> &'static str + Send + Sync> crate::runner::process::Executor
        for Sharing<F>
    {
        fn execute(
            &self,
            invocation: &crate::runner::process::Invocation,
        ) -> Result<crate::runner::process::ProcessOutcome, crate::runner::process::ProcessError>
        {
            let place = Self::place(invocation);
            let lock = || {
                self.state
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
            };
            let mut state = lock();
            let me = state.1.len();
            let beside = !state.0.is_empty();
            for &other in &state.0.clone() {
                state.1[other].beside = true;
            }
            state.1.push(Seen {
                place: place.clone(),
                given: given(invocation),
                beside,
            });
            state.0.push(me);
            self.most
                .fetch_max(state.0.len(), std::sync::atomic::Ordering::SeqCst);
            self.changed.notify_all();
            let group = self
                .meet
                .iter()
                .find(|group| group.iter().any(|p| place.starts_with(p)));
            if let Some(group) = group {
                // Until every one of its group has arrived (the first may see the last
                // already gone when it wakes).
                let meeting = |state: &mut (Vec<usize>, Vec<Seen>)| {
                    state
                        .1
                        .iter()
                        .filter(|seen| group.iter().any(|p| seen.place.starts_with(p)))
                        .count()
                        < group.len()
                };
                state = self
                    .changed
                    .wait_timeout_while(state, Duration::from_secs(30), meeting)
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .0;
            }
            let seen = state.1[me].clone();
            drop(state);
            let argv = &invocation.argv;
            let (stdout, report, code) = if argv.iter().any(|a| a == "-VV") {
                ("pytest 8.3.3\n".to_owned(), None, 0)
            } else if argv.iter().any(|a| a == "--collect-only") {
                (
                    format!("{MORE}\n{OLD}\n{NEW}\n\n3 tests collected in 0.01s\n"),
                    None,
                    0,
                )
            } else {
                let ids: Vec<String> = seen
                    .given
                    .iter()
                    .flat_map(|given| match given.as_str() {
                        "tests/test_pool.py" => vec![OLD.to_owned()],
                        "tests/test_more.py" => vec![MORE.to_owned()],
                        id => vec![id.to_owned()],
                    })
                    .collect();
                let cases: Vec<(&str, &str)> = ids
                    .iter()
                    .map(|id| (id.as_str(), (self.outcome)(id, &seen)))
                    .collect();
                let failed = cases.iter().any(|(_, o)| *o == "fail");
                (String::new(), Some(junit(&cases)), i32::from(failed))
            };
            let write = |path: &Path, text: &str| {
                std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))
                    .and_then(|()| std::fs::write(path, text))
                    .map_err(|source| crate::runner::process::ProcessError::Io {
                        what: "write",
                        path: path.to_owned(),
                        source,
                    })
            };
            match &invocation.stdout {
                crate::runner::process::StdoutTo::Log => write(&invocation.log, &stdout)?,
                crate::runner::process::StdoutTo::File(path) => {
                    write(path, &stdout)?;
                    write(&invocation.log, "")?;
                }
            }
            if let (Some(path), Some(report)) = (&invocation.report, &report) {
                write(path, report)?;
            }
            let mut state = lock();
            state.0.retain(|&i| i != me);
            drop(state);
            Ok(crate::runner::process::ProcessOutcome {
                started_at: jiff::Timestamp::UNIX_EPOCH,
                duration: Duration::from_millis(10),
                exit: crate::runner::process::Exit::Code(code),
                timed_out: false,
            })
        }
    }

    const MORE_BEFORE: &str = "def test_more():\n    assert 1\n";
    const MORE_AFTER: &str = "def test_more():\n    assert 2\n";

    /// The lane over a change of two modules (both with a base version), `jobs` processes
    /// at once, the runner played by `executor`.
    fn two_modules(
        executor: &dyn crate::runner::process::Executor,
        tick: Duration,
        jobs: u32,
    ) -> (Lane, Collected, Scene) {
        lane_in(
            &[
                ("tests/test_pool.py", BEFORE),
                ("tests/test_more.py", MORE_BEFORE),
            ],
            &[
                ("tests/test_pool.py", AFTER),
                ("tests/test_more.py", MORE_AFTER),
            ],
            executor,
            tick,
            jobs,
        )
    }

    fn places(seen: &[Seen]) -> Vec<(&str, bool)> {
        seen.iter().map(|s| (s.place.as_str(), s.beside)).collect()
    }

    /// #15 item 3: with two jobs, the probe and then the base's version beside the
    /// listing, the first two rounds side by side, the last round with nothing beside it;
    /// recorded in the report.
    #[test]
    fn rounds_run_side_by_side_up_to_the_jobs_and_the_last_round_alone() {
        let executor = Sharing::new(
            &[&["listing", "base-version"], &["round-1-", "round-2-"]],
            |_, _| "pass",
        );
        let (lane, _events, _scene) = two_modules(&executor, Duration::from_millis(1), 2);
        assert!(lane.verdict.pass, "{:?}", lane.verdict.reasons);
        let seen = executor.seen();
        assert_eq!(executor.most(), 2, "never more than the jobs: {seen:#?}");
        let at = |place: &str| seen.iter().position(|s| s.place == place);
        assert!(
            at("probe") < at("base-version") && at("base-version") < at("round-1-001"),
            "the base's version after the probe, before the rounds: {seen:#?}"
        );
        let mut before_rounds: Vec<&str> = seen[..3].iter().map(|s| s.place.as_str()).collect();
        before_rounds.sort_unstable();
        assert_eq!(before_rounds, ["base-version", "listing", "probe"]);
        assert!(
            seen[..3]
                .iter()
                .filter(|s| s.place != "probe")
                .all(|s| s.beside),
            "the base's version beside the listing: {seen:#?}"
        );
        let mut rounds = places(&seen[3..5]);
        rounds.sort_unstable();
        assert_eq!(
            rounds,
            [("round-1-001", true), ("round-2-001", true)],
            "{seen:#?}"
        );
        assert_eq!(places(&seen[5..]), [("round-3-001", false)], "{seen:#?}");
        let batching = lane.batching.as_ref().expect("batched");
        assert_eq!(batching.jobs, 2);
        assert_eq!(batching.parallel, lane::Parallel::Rounds);
        assert_eq!(batching.solo_round, Some(3));
        assert_eq!(
            batching
                .rounds
                .iter()
                .map(|r| (r.round, r.batches[0].beside_others))
                .collect::<Vec<_>>(),
            [(1, true), (2, true), (3, false)]
        );
        assert_eq!(batching.base_version_processes, Some(1));
        assert!(
            batching
                .summary()
                .contains("up to 2 runner processes at once, round 3 with nothing beside it"),
            "{}",
            batching.summary()
        );
        let text = std::fs::read_to_string(&lane.report_path).unwrap_or_default();
        let written: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(written["batching"]["parallel"], "rounds", "{text}");
        assert_eq!(written["batching"]["jobs"], 2, "{text}");
        assert_eq!(written["batching"]["solo_round"], 3, "{text}");
    }

    /// #15 item 3: `jobs = 1` runs one runner process at a time, in the order of old.
    #[test]
    fn one_job_runs_one_process_at_a_time() {
        let executor = Sharing::new(&[], |_, _| "pass");
        let (lane, _events, _scene) = two_modules(&executor, Duration::from_millis(1), 1);
        assert!(lane.verdict.pass, "{:?}", lane.verdict.reasons);
        let seen = executor.seen();
        assert!(seen.iter().all(|s| !s.beside), "{seen:#?}");
        assert_eq!(
            seen.iter().map(|s| s.place.as_str()).collect::<Vec<_>>(),
            [
                "probe",
                "listing",
                "round-1-001",
                "round-2-001",
                "round-3-001",
                "base-version"
            ]
        );
        let batching = lane.batching.as_ref().expect("batched");
        assert_eq!(
            (batching.jobs, batching.parallel, batching.solo_round),
            (1, lane::Parallel::Sequential, None)
        );
        assert!(
            batching.summary().ends_with("one runner process at a time"),
            "{}",
            batching.summary()
        );
    }

    /// #15 item 3, the adversary's case: a test green only while another runner process
    /// runs beside it (it reads what another process leaves while it runs) is green in the
    /// rounds side by side, red in the last round with nothing beside it, and red in every
    /// replay alone: rejected.
    #[test]
    fn a_test_green_only_beside_another_process_is_not_accepted() {
        let executor = Sharing::new(&[&["round-1-", "round-2-"]], |id, seen| {
            if id == NEW && !seen.beside {
                "fail"
            } else {
                "pass"
            }
        });
        let (lane, _events, _scene) = two_modules(&executor, Duration::from_millis(1), 2);
        assert!(!lane.verdict.pass);
        assert!(
            lane.verdict.reasons.iter().any(|reason| matches!(
                reason,
                Reason::ReplayFailed { test, failures: 3, replays: 3, .. } if test == NEW
            )),
            "{:?}",
            lane.verdict.reasons
        );
        let seen = executor.seen();
        let greens_beside = seen
            .iter()
            .filter(|s| {
                s.place.starts_with("round-") && s.beside && s.given.contains(&NEW.to_owned())
            })
            .count();
        assert_eq!(
            greens_beside, 2,
            "green in both rounds side by side: {seen:#?}"
        );
    }

    /// #15 item 3: a test red only because another process ran beside it (two processes
    /// writing one fixed path) is replayed alone with nothing beside it, green there, and
    /// a good change is accepted; the replays alone never overlap anything.
    #[test]
    fn a_test_red_only_beside_another_process_is_judged_alone_and_alone_means_alone() {
        let executor = Sharing::new(&[&["round-1-", "round-2-"]], |id, seen| {
            if id == MORE && seen.beside {
                "fail"
            } else {
                "pass"
            }
        });
        let (lane, events, _scene) = two_modules(&executor, Duration::from_millis(1), 2);
        assert!(lane.verdict.pass, "{:?}", lane.verdict.reasons);
        let seen = executor.seen();
        let alone: Vec<&Seen> = seen
            .iter()
            .filter(|s| s.place.chars().all(|c| c.is_ascii_digit()))
            .collect();
        assert_eq!(alone.len(), 3, "{seen:#?}");
        assert!(
            alone.iter().all(|s| !s.beside && s.given == [MORE]),
            "{seen:#?}"
        );
        assert_eq!(replays_of(&lane, MORE), [Outcome::Pass; 3]);
        let batching = lane.batching.as_ref().expect("batched");
        assert_eq!(batching.replayed_alone, [MORE]);
        let dependent = &batching.order_dependent[0];
        assert!(dependent.beside_others);
        assert!(
            said(&events).iter().any(|(kind, text)| *kind == "warning"
                && text.contains("other runner processes of the lane ran beside it")),
            "{:?}",
            said(&events)
        );
    }

    /// #15 item 3: with processes at once, "no time left" is the lane's deadline passed
    /// when a process would start: processes already started run (each limited to the time
    /// left when it started), none starts after; the replays not made reject the change.
    #[test]
    fn with_rounds_side_by_side_no_process_starts_after_the_deadline() {
        // Each clock reading moves 40 s: read once to start, twice for the listing and
        // once before the base's version (beside the listing), then before each round
        // starts: round 1 at 160 s; round 2 would start at 200 s, past the 180 s.
        let executor = Sharing::new(&[], |_, _| "pass");
        let (lane, _events, _scene) = two_modules(&executor, Duration::from_secs(40), 2);
        let seen = executor.seen();
        assert_eq!(
            seen.iter()
                .filter(|s| s.place.starts_with("round-"))
                .map(|s| s.place.as_str())
                .collect::<Vec<_>>(),
            ["round-1-001"],
            "{seen:#?}"
        );
        assert!(seen.iter().any(|s| s.place == "base-version"), "{seen:#?}");
        assert!(!lane.verdict.pass);
        assert!(
            lane.verdict.reasons.iter().any(|reason| matches!(
                reason,
                Reason::OutOfTime { max_wall_seconds: 180, replays_left } if *replays_left >= 6
            )),
            "{:?}",
            lane.verdict.reasons
        );
        assert_eq!(lane.runs.len(), 3, "one round of three tests");
    }

    /// #15 item 1, runners that keep no order given (libtest, go): the separated rounds
    /// put every two tests of one scope apart at least once, whatever the scope sizes
    /// and round counts, and every test runs once per round.
    #[test]
    fn separated_rounds_part_every_two_tests_of_a_scope() {
        for rounds in 1..=4u32 {
            for sizes in [vec![1usize], vec![2], vec![10, 10, 10, 10], vec![7, 1, 30]] {
                let ids: Vec<String> = sizes
                    .iter()
                    .enumerate()
                    .flat_map(|(scope, &n)| (0..n).map(move |i| format!("s{scope}::t{i}")))
                    .collect();
                let scope = |id: &String| id.split("::").next().unwrap_or("").to_owned();
                let parts: Vec<Vec<Vec<String>>> = (0..rounds)
                    .map(|digit| separated(&ids, &scope, digit, rounds))
                    .collect();
                for round in &parts {
                    let mut all: Vec<&String> = round.iter().flatten().collect();
                    all.sort();
                    let mut want: Vec<&String> = ids.iter().collect();
                    want.sort();
                    assert_eq!(all, want, "rounds {rounds}, sizes {sizes:?}");
                }
                for a in &ids {
                    for b in ids.iter().filter(|b| *b != a && scope(b) == scope(a)) {
                        let apart = parts.iter().any(|round| {
                            !round
                                .iter()
                                .any(|part| part.contains(a) && part.contains(b))
                        });
                        assert!(apart, "{a} and {b}: rounds {rounds}, sizes {sizes:?}");
                    }
                }
                if rounds == 2 && sizes == [10, 10, 10, 10] {
                    // √10 → base 4: 4 processes, then 3, not 10.
                    assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), [4, 3]);
                }
            }
        }
    }
}
