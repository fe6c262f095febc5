//! What the commands that run tests share: a scratch directory under `.candor/runs` kept
//! for its logs, a runner's report stored in the history as a run, and one run of one test
//! turned into a run record (`compare`, `repro`, the gate's replays).

use std::path::{Path, PathBuf};

use super::AppError as CliError;
use crate::cli::settings::Workspace;
use crate::history::{Conditions, HistoryStore, NewRun, Source};
use crate::ingest::{self, FileIngest};
use crate::records::{self, RunRecord, SCHEMA, Side};
use crate::results::{Execution, Outcome, ParseOptions, parse_all};
use crate::runner::RunReport;

/// Where runs keep their reports and logs, relative to the repository root.
pub const RUNS_DIR: &str = ".candor/runs";

/// A fresh directory `.candor/runs/<what>-XXXXXX` that outlives the command: its logs are
/// what a reader opens when a run went wrong. Older folders the `[runs]` retention rule
/// lets go are removed first.
pub fn scratch(repo_root: &Path, what: &str) -> Result<PathBuf, CliError> {
    let runs = crate::confine::check_write(repo_root, Path::new(RUNS_DIR))?;
    let write_error = |source| CliError::Write {
        path: runs.clone(),
        source,
    };
    super::clean::prune(repo_root);
    fs_err::create_dir_all(&runs).map_err(write_error)?;
    let dir = tempfile::Builder::new()
        .prefix(&format!("{what}-"))
        .tempdir_in(&runs)
        .map_err(write_error)?;
    Ok(dir.keep())
}

/// The run a runner's report is stored as.
pub fn new_run(workspace: &Workspace, report: &RunReport, source: Source) -> NewRun {
    let started_at = report
        .invocations
        .first()
        .map_or_else(jiff::Timestamp::now, |i| i.outcome.started_at);
    NewRun {
        commit: workspace.commit.clone(),
        branch: workspace.branch.clone(),
        merge_base: workspace.merge_base.clone(),
        started_at,
        source,
        ci_provider: workspace.ci.provider.map(|p| p.as_str().to_owned()),
        job: workspace.ci.job.clone(),
        ci_run: crate::history::CiRun::new(
            workspace.ci.repository.clone(),
            workspace.ci.run_id.clone(),
            workspace.ci.attempt,
        ),
        workers: report.workers,
        seed: report.seed.as_ref().map(|seed| seed.argument.clone()),
        conditions: Conditions {
            ci: workspace.ci.detected,
            runner: Some(report.runner.as_str().to_owned()),
            os: Some(std::env::consts::OS.to_owned()),
        },
        format: report.format.map(|format| format.as_str().to_owned()),
        producer: None,
        source_path: Some(report.report.display().to_string()),
    }
}

/// Stores the report as one run. A report the runner never wrote (or left empty) is
/// [`CliError::NoReport`], naming the logs that say why.
pub fn store_report(
    store: &mut dyn HistoryStore,
    workspace: &Workspace,
    report: &RunReport,
    source: Source,
) -> Result<FileIngest, CliError> {
    let written = fs_err::metadata(&report.report).is_ok_and(|m| m.len() > 0);
    if !written {
        return Err(CliError::NoReport {
            report: report.report.clone(),
            logs: report.invocations.iter().map(|i| i.log.clone()).collect(),
        });
    }
    let run = new_run(workspace, report, source);
    ingest::ingest_file(store, &report.report, &run, &workspace.parse).map_err(CliError::Results)
}

/// Where and what one run of one test was.
pub struct RunPlace<'a> {
    /// The test.
    pub test: &'a str,
    /// Which side or kind of run.
    pub side: Side,
    /// Its sequence number.
    pub sequence: u32,
    /// The tree it ran in.
    pub root: &'a Path,
    /// That tree's commit.
    pub commit: &'a str,
    /// The fixtures folder hashed into the record, relative to `root`.
    pub fixtures: &'a Path,
    /// Whether the change added the test.
    pub new_test: bool,
}

/// The run record of one run, and the test's execution when the report holds it.
pub fn run_record(
    place: &RunPlace<'_>,
    report: &RunReport,
    parse: &ParseOptions,
) -> Result<(RunRecord, Option<Execution>), CliError> {
    let fixture_hash = records::fixture_hash(place.root, place.fixtures)?;
    let execution = fs_err::File::open(&report.report)
        .ok()
        .and_then(|file| parse_all(file, parse).ok())
        .and_then(|(executions, _)| executions.into_iter().find(|e| e.test_id == place.test));
    let first = report.invocations.first();
    let mut record = RunRecord {
        schema: SCHEMA.to_owned(),
        test: place.test.to_owned(),
        side: place.side,
        sequence: place.sequence,
        commit: Some(place.commit.to_owned()),
        seed: report.seed.as_ref().map(|s| s.value),
        fixture_hash,
        outcome: Outcome::Error,
        found: false,
        signature: None,
        exception: None,
        message: None,
        failing_line: None,
        duration_seconds: None,
        wall_seconds: report
            .invocations
            .iter()
            .map(|i| i.outcome.duration.as_secs_f64())
            .sum(),
        argv: first.map(|i| i.argv.clone()).unwrap_or_default(),
        workers: report.workers,
        exit_status: report.exit_code(),
        timed_out: report.timed_out(),
        started_at: first.map_or_else(jiff::Timestamp::now, |i| i.outcome.started_at),
        log: first.map(|i| i.log.clone()).unwrap_or_default(),
        report: report.report.clone(),
        new_test: place.new_test,
    };
    record.set_execution(execution.as_ref());
    Ok((record, execution))
}
