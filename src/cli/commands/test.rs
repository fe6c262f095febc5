//! `candor test [-- ARGV...]`, the front door: runs the suite through the runner's adapter
//! (retries and caches off, a recorded seed, machine-readable results in
//! `.candor/runs/test-*/`), stores the report as a `ci` or `local` run, gives every red
//! test its verdict and says what to do next. Exits by the triage rule.

use crate::history::Location;
use std::path::{Path, PathBuf};
use std::time::Instant;

use jiff::civil::Date;
use serde::Serialize;

use super::running::{scratch, store_report};
use super::verdicts::{
    Judge, Judged, Origin, Red, exit_code, print_next_steps, print_summary, print_verdict,
    run_conditions,
};
use super::{Open, open_store};
use crate::cli::error::CliError;
use crate::cli::output::Printer;
use crate::cli::settings::TestSettings;
use crate::exit_codes;
use crate::history::Source;
use crate::runner::process::SystemExecutor;
use crate::runner::{self, RunOptions, RunnerConfig};

/// `{"type":"test-run"}`: see docs/json-output.md.
#[derive(Serialize)]
struct RunLine<'a> {
    runner: &'static str,
    argv: Vec<&'a [String]>,
    seed: Option<&'a str>,
    workers: Option<u32>,
    exit_code: i32,
    run_id: i64,
    tests: u64,
    red: u64,
    report: &'a Path,
    logs: Vec<&'a Path>,
}

pub(super) fn run(
    settings: &TestSettings,
    db: &Location,
    repo_root: &Path,
    today: Date,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let workspace = &settings.workspace;
    // A broken policy stops the command before the suite runs, not after.
    let judge = Judge::load(repo_root, workspace, settings.policy, false, today)?;
    let executor = SystemExecutor;
    let runner_config = &judge.config.runner;
    let context = runner::Context::new(repo_root, scratch(repo_root, "test")?, &executor)
        .with_timeout(Some(runner_config.timeout), runner_config.grace);
    let config = with_argv(&judge.config.runner, &settings.argv, &context)?;
    let adapter = runner::adapter(&config, &context)?;

    printer.progress(&format!("running the suite with {}…", adapter.kind()))?;
    let clock = Instant::now();
    let report = adapter.run_suite(
        &context,
        RunOptions {
            seed: settings.seed,
        },
    )?;
    printer.progress(&format!(
        "the suite ran in {:.1}s",
        clock.elapsed().as_secs_f64()
    ))?;

    let mut store = open_store(db, Open::CreateIfMissing)?;
    let source = if workspace.ci.detected {
        Source::Ci
    } else {
        Source::Local
    };
    let stored = store_report(&mut *store, workspace, &report, source)?;
    let run_id = stored.report.run_id;
    let logs: Vec<&Path> = report.invocations.iter().map(|i| i.log.as_path()).collect();
    let seed = report.seed.as_ref().map(|seed| seed.argument.as_str());
    if printer.is_json() {
        printer.json(
            "test-run",
            &RunLine {
                runner: report.runner.as_str(),
                argv: report
                    .invocations
                    .iter()
                    .map(|i| i.argv.as_slice())
                    .collect(),
                seed,
                workers: report.workers,
                exit_code: report.exit_code(),
                run_id,
                tests: stored.report.tests,
                red: stored.report.red,
                report: &report.report,
                logs: logs.clone(),
            },
        )?;
    } else {
        let mut details = Vec::new();
        if let Some(seed) = &report.seed {
            details.push(format!("seed {}", seed.value));
        }
        if let Some(workers) = report.workers {
            details.push(plural(u64::from(workers), "worker"));
        }
        let details = if details.is_empty() {
            String::new()
        } else {
            format!(" ({})", details.join(", "))
        };
        let scratch_dir = logs
            .first()
            .and_then(|log| log.parent())
            .map_or_else(PathBuf::new, Path::to_path_buf);
        printer.info(&format!(
            "ran the suite with {}{details}: {}, {} red; stored as run #{run_id}, logs in {}",
            report.runner,
            plural(stored.report.tests, "test"),
            stored.report.red,
            scratch_dir.display()
        ))?;
    }

    let run = store
        .run(run_id)?
        .ok_or_else(|| CliError::NoRuns { path: db.shown() })?;
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
                    failure: stored.execution.failure,
                    conditions: conditions.clone(),
                    origin: Origin::Run(run_id),
                },
                &history,
            )
        })
        .collect::<Result<_, _>>()?;
    judge.print_source(printer)?;
    for one in &judged {
        print_verdict(printer, one)?;
    }
    print_summary(printer, &judged)?;
    print_next_steps(printer, &judged)?;
    if judged.is_empty() && report.exit_code() != 0 {
        // A runner that failed without reporting a red test failed somewhere no verdict
        // reaches (a build, a collection error, a crash): that is not green.
        printer.warning(&format!(
            "the runner exited with code {} but reported no red test; its log says why: {}",
            report.exit_code(),
            logs.first()
                .map_or_else(String::new, |log| log.display().to_string())
        ))?;
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
) -> Result<RunnerConfig, CliError> {
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

fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
