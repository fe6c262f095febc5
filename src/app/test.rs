//! `candor test [-- ARGV...]`, the front door: runs the suite through the runner's adapter
//! (retries and caches off, a recorded seed, machine-readable results in
//! `.candor/runs/test-*/`), stores the report as a `ci` or `local` run, gives every red
//! test its verdict and says what to do next. Exits by the triage rule.

use std::path::PathBuf;
use std::time::Instant;

use super::running::{scratch, store_report};
use super::verdicts::{Judge, Judged, Origin, Red, emit_verdicts, exit_code, run_conditions};
use super::{AppError, Ports};
use crate::cli::settings::TestSettings;
use crate::events::{Event, TestRunEvent};
use crate::exit_codes;
use crate::history::{HistoryStore, Location, Source};
use crate::runner::{self, RunOptions, RunnerConfig};

/// Runs the suite, stores its report in the history `open` gives (opened only once the
/// suite ran, so a slow suite does not hold the history), and judges every red test.
pub fn run(
    settings: &TestSettings,
    open: impl FnOnce() -> Result<Box<dyn HistoryStore>, AppError>,
    db: &Location,
    ports: &mut Ports<'_>,
) -> Result<u8, AppError> {
    let workspace = &settings.workspace;
    // A broken policy stops the command before the suite runs, not after.
    let judge = Judge::load(
        ports.root,
        workspace,
        settings.policy,
        false,
        ports.clock.today(),
    )?;
    let runner_config = &judge.config.runner;
    let context = runner::Context::new(ports.root, scratch(ports.root, "test")?, ports.executor)
        .with_timeout(Some(runner_config.timeout), runner_config.grace)
        .with_remembered_probes();
    let config = with_argv(&judge.config.runner, &settings.argv, &context)?;
    let adapter = runner::adapter(&config, &context)?;

    ports.progress(format!("running the suite with {}…", adapter.kind()));
    let clock = Instant::now();
    let report = adapter.run_suite(
        &context,
        RunOptions {
            seed: settings.seed,
        },
    )?;
    ports.progress(format!(
        "the suite ran in {:.1}s",
        clock.elapsed().as_secs_f64()
    ));
    for warning in &report.warnings {
        ports.warning(warning);
    }

    let mut store = open()?;
    let source = if workspace.ci.detected {
        Source::Ci
    } else {
        Source::Local
    };
    let stored = store_report(&mut *store, workspace, &report, source)?;
    let run_id = stored.report.run_id;
    let logs: Vec<PathBuf> = report.invocations.iter().map(|i| i.log.clone()).collect();
    ports.emit(Event::TestRun(TestRunEvent {
        runner: report.runner.as_str().to_owned(),
        argv: report.invocations.iter().map(|i| i.argv.clone()).collect(),
        seed: report.seed.as_ref().map(|seed| seed.argument.clone()),
        workers: report.workers,
        exit_code: report.exit_code(),
        run_id,
        tests: stored.report.tests,
        red: stored.report.red,
        report: report.report.clone(),
        logs: logs.clone(),
        seed_value: report.seed.as_ref().map(|seed| seed.value),
    }));

    let run = store
        .run(run_id)?
        .ok_or_else(|| AppError::NoRuns { path: db.shown() })?;
    let conditions = run_conditions(&run.run);
    let history = judge.history(&*store, workspace);
    let judged: Vec<Judged> = store
        .run_failures(run_id)?
        .into_iter()
        .filter(|stored| stored.execution.outcome.is_red())
        .map(|stored| {
            judge.judge_with(
                Red {
                    test_id: stored.execution.test_id,
                    outcome: stored.execution.outcome,
                    failure: stored.execution.failure.map(|failure| *failure),
                    conditions: conditions.clone(),
                    origin: Origin::Run(run_id),
                },
                &history,
            )
        })
        .collect::<Result<_, _>>()?;
    judge.emit_source(ports);
    emit_verdicts(ports, &judged);
    if judged.is_empty() && report.exit_code() != 0 {
        // A runner that failed without reporting a red test failed somewhere no verdict
        // reaches (a build, a collection error, a crash): that is not green.
        ports.warning(format!(
            "the runner exited with code {} but reported no red test; its log says why: {}",
            report.exit_code(),
            logs.first()
                .map_or_else(String::new, |log| log.display().to_string())
        ));
        return Ok(exit_codes::USAGE_OR_INPUT);
    }
    Ok(exit_code(&judged))
}

/// `[runner]` with ARGV appended to its command (the runner's usual command when
/// `[runner]` gives none, which needs the kind, detected when not given).
fn with_argv(
    config: &RunnerConfig,
    argv: &[String],
    context: &runner::Context<'_>,
) -> Result<RunnerConfig, AppError> {
    if argv.is_empty() {
        return Ok(config.clone());
    }
    let kind = match config.kind {
        Some(kind) => kind,
        None => runner::detect(context)?,
    };
    let mut command = config
        .command
        .clone()
        .unwrap_or_else(|| kind.default_command());
    command.extend(argv.iter().cloned());
    Ok(RunnerConfig {
        kind: Some(kind),
        command: Some(command),
        ..config.clone()
    })
}
