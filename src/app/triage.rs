//! `candor triage [RESULT_FILE...]`: one verdict per red test, read from result files
//! (which are not stored: `candor ingest` and `candor test` store) or from the latest run
//! in the history that is not a rerun. Each verdict also says what the history holds about
//! the test at the merge base, on the default branch and on the change.

use super::verdicts::{
    Judge, Judged, Origin, Red, emit_verdicts, exit_code, run_conditions, runner_name,
};
use super::{AppError as CliError, Ports};
use crate::cli::settings::TriageSettings;
use crate::history::{HistoryStore, Location, Source};
use crate::ingest::{IngestError, parse_failure};
use crate::policy::RunConditions;
use crate::results::parse_all;

/// Judges the red tests of `settings.files`, or without files those of the newest run in
/// the history `open` gives once the policy is read (`db` names it in errors). With a
/// history, each verdict weighs it.
pub fn run(
    settings: &TriageSettings,
    open: impl FnOnce() -> Result<Option<Box<dyn HistoryStore>>, CliError>,
    db: &Location,
    ports: &mut Ports<'_>,
) -> Result<u8, CliError> {
    let judge = Judge::load(
        ports.root,
        &settings.workspace,
        settings.policy,
        false,
        ports.clock.today(),
    )?;
    let store = open()?;
    let store = store.as_deref();
    let reds = match (store, settings.files.is_empty()) {
        (Some(store), true) => reds_in_history(store, db)?,
        _ => reds_in_files(settings)?,
    };
    let judged: Vec<Judged> = match store {
        Some(store) => {
            let history = judge.history(store, &settings.workspace);
            reds.into_iter()
                .map(|red| judge.judge_with(red, &history))
                .collect::<Result<_, _>>()?
        }
        None => reds.into_iter().map(|red| judge.judge(red)).collect(),
    };
    judge.emit_source(ports);
    emit_verdicts(ports, &judged);
    Ok(exit_code(&judged))
}

/// The red tests of each file, in file order, under the conditions of this machine (CI or
/// not, OS) and `--workers`; the runner is `--runner`, else the tool that wrote the file.
/// (The file cannot always say: candor's cargo adapter writes libtest JSON under the test
/// names nextest's libtest JSON uses, and it reads as nextest's.)
pub fn reds_in_files(settings: &TriageSettings) -> Result<Vec<Red>, CliError> {
    let workspace = &settings.workspace;
    let mut reds = Vec::new();
    for path in &settings.files {
        let file = fs_err::File::open(path).map_err(|source| {
            CliError::Results(IngestError::Read {
                path: path.clone(),
                source,
            })
        })?;
        let (executions, summary) = parse_all(file, &workspace.parse)
            .map_err(|error| CliError::Results(parse_failure(path, error)))?;
        let conditions = RunConditions {
            ci: Some(workspace.ci.detected),
            workers: settings.workers,
            runner: settings
                .runner
                .clone()
                .or_else(|| summary.producer.as_deref().map(runner_name)),
            os: Some(std::env::consts::OS.to_owned()),
        };
        reds.extend(
            executions
                .into_iter()
                .filter(|execution| execution.outcome.is_red())
                .map(|execution| Red {
                    test_id: execution.test_id,
                    outcome: execution.outcome,
                    failure: execution.failure.map(|failure| *failure),
                    conditions: conditions.clone(),
                    origin: Origin::File(path.clone()),
                }),
        );
    }
    Ok(reds)
}

/// The red tests of the newest run that is not a rerun (a rerun's result is reported by
/// `candor rerun` itself).
pub fn reds_in_history(store: &dyn HistoryStore, db: &Location) -> Result<Vec<Red>, CliError> {
    let run = store
        .runs(usize::MAX)?
        .into_iter()
        .find(|run| run.run.source != Source::Rerun)
        .ok_or_else(|| CliError::NoRuns { path: db.shown() })?;
    let conditions = run_conditions(&run.run);
    Ok(store
        .run_failures(run.id)?
        .into_iter()
        .filter(|stored| stored.execution.outcome.is_red())
        .map(|stored| Red {
            test_id: stored.execution.test_id,
            outcome: stored.execution.outcome,
            failure: stored.execution.failure.map(|failure| *failure),
            conditions: conditions.clone(),
            origin: Origin::Run(run.id),
        })
        .collect())
}
