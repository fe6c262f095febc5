//! `candor order TEST [--from RESULT_FILE] [--seed N] [--budget-seconds N]`: whether the
//! test's red depends on the tests before it, on the seed, or on running twice in one
//! process (`crate::order`). Every probe is a real run through the runner adapter,
//! logged and recorded under `.candor/runs/order-*/`.
//!
//! Exit codes, as `compare`'s: 0 when a verified order, seed or repeat dependence explains
//! the red (the test's own defect, not the change's); 1 when nothing explains it (fails in
//! every order, not reproduced, flaky alone, not isolated, budget spent first); 2 when the
//! test did not run at all, or on usage and input errors.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::running::scratch;
use crate::classify::Classified;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, Style, terminal_safe};
use crate::cli::settings::OrderSettings;
use crate::exit_codes;
use crate::ingest::{IngestError, parse_failure};
use crate::order::driver::{Investigation, Purpose, Tally};
use crate::order::explain::shell_words;
use crate::order::prefix::{go_shuffle_seed, tests_before};
use crate::order::{self, Finding, Plan, RecordedOrder, SystemClock, Verdict};
use crate::policy::Config;
use crate::results::{self, Execution, Outcome, ParseOptions};
use crate::runner::process::SystemExecutor;
use crate::runner::{self, Adapter};

/// `{"type":"order"}`: see docs/json-output.md.
#[derive(Serialize)]
struct OrderLine<'a> {
    runner: &'static str,
    #[serde(flatten)]
    finding: &'a Finding,
    /// The reproduction joined for a POSIX shell.
    reproduction_command: Option<String>,
    /// Tests of the recorded order left out because the runner no longer lists them or
    /// they run in another process.
    recorded_dropped: usize,
    /// The classifier's bucket, when the verdict explains the red.
    classified: Option<Classified>,
}

pub(super) fn run(
    settings: &OrderSettings,
    repo_root: &Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    // The budget covers everything from here, listing included.
    let clock = SystemClock::start();
    let config = Config::load(repo_root)?;
    let executor = SystemExecutor;
    let dir = scratch(repo_root, "order")?;
    let runner_config = &config.runner;
    let setup_context = runner::Context::new(repo_root, dir.join("setup"), &executor)
        .with_timeout(Some(runner_config.timeout), runner_config.grace);
    let adapter = runner::adapter(runner_config, &setup_context)?;
    let test = settings.test_id.as_str();
    let parse = &settings.workspace.parse;
    let recorded = match &settings.from {
        Some(file) => Some(recorded_order(file, test, &*adapter, parse)?),
        None => None,
    };
    let setup = order::Setup {
        adapter: &*adapter,
        executor: &executor,
        repo_root,
        dir: &dir,
        timeout: runner_config.timeout,
        grace: runner_config.grace,
        parse,
        commit: settings.workspace.commit.as_deref(),
        fixtures: &config.lane.fixtures,
    };
    printer.progress(&format!(
        "listing the tests with {}…",
        adapter.kind().as_str()
    ))?;
    let (request, dropped) = order::build_request(&setup, test, recorded)?;
    let base_seed = settings.seed.unwrap_or_else(crate::runner::pick_seed);
    let plan = Plan::new(base_seed, settings.budget);
    let finding = {
        let mut on_probe = |probe: &order::Probe, observed: &order::Observation| {
            let outcome = observed.outcome.map_or("did not run", |o| o.as_str());
            // A progress line that cannot be written (stderr gone) is no reason to stop
            // the investigation.
            let _ = printer.progress(&format!(
                "probe {} ({}, seed {}): {outcome}",
                probe.number,
                probe.purpose.as_str(),
                probe.seed
            ));
        };
        order::investigate(&setup, &request, &plan, &clock, &mut on_probe).map_err(|error| {
            match error {
                // pytest's `not found`, nextest's `no tests to run`: the id names no test.
                runner::RunnerError::CouldNotRun(not_run) if not_run.unknown_test => {
                    CliError::TestDidNotRun {
                        id: test.to_owned(),
                        log: Some(not_run.log.clone()),
                        said: not_run.quoted.clone(),
                    }
                }
                other => CliError::Runner(other),
            }
        })?
    };
    let investigation = &finding.investigation;
    if investigation.verdict == Verdict::NotRun {
        return Err(CliError::TestDidNotRun {
            id: test.to_owned(),
            log: investigation.probes.iter().find_map(|p| p.log.clone()),
            said: Vec::new(),
        });
    }
    let pasted = finding.reproduction.as_deref().map(shell_words);
    if printer.is_json() {
        printer.json(
            "order",
            &OrderLine {
                runner: adapter.kind().as_str(),
                finding: &finding,
                reproduction_command: pasted,
                recorded_dropped: dropped,
                classified: order::classified(&finding),
            },
        )?;
    } else {
        print_human(printer, &finding, &*adapter, pasted.as_deref(), dropped)?;
    }
    Ok(if investigation.verdict.explains_red() {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}

/// The tests before `test` in the results file that share its process, and the file's
/// seed where the format records it (`go test -json`).
pub(super) fn recorded_order(
    file: &Path,
    test: &str,
    adapter: &dyn Adapter,
    parse: &ParseOptions,
) -> Result<RecordedOrder, CliError> {
    let read_error = |source| {
        CliError::Results(IngestError::Read {
            path: file.to_owned(),
            source,
        })
    };
    let bytes = fs_err::read(file).map_err(read_error)?;
    let mut executions: Vec<Execution> = Vec::new();
    results::parse(bytes.as_slice(), parse, &mut |execution| {
        executions.push(execution);
        Ok(())
    })
    .map_err(|error| CliError::Results(parse_failure(file, error)))?;
    let scope = adapter.process_scope(test);
    let before = tests_before(&executions, test, |id| {
        scope.is_some() && adapter.process_scope(id) == scope
    })
    .ok_or_else(|| CliError::NotInResults {
        id: test.to_owned(),
        file: file.to_owned(),
    })?;
    Ok(RecordedOrder {
        source: format!("the order in {}", file.display()),
        before,
        seed: go_shuffle_seed(&String::from_utf8_lossy(&bytes)),
    })
}

fn tally(tally: Tally) -> String {
    let missing = if tally.missing > 0 {
        format!(" ({} did not run it)", tally.missing)
    } else {
        String::new()
    };
    format!("red {} of {}{missing}", tally.red, tally.runs)
}

fn print_human(
    printer: &mut Printer,
    finding: &Finding,
    adapter: &dyn Adapter,
    pasted: Option<&str>,
    dropped: usize,
) -> Result<(), CliError> {
    let found: &Investigation = &finding.investigation;
    let color = printer.color_stdout();
    printer.line(&format!(
        "order {} ({}, base seed {})",
        terminal_safe(&found.test),
        adapter.kind().as_str(),
        found.base_seed
    ))?;
    printer.line(&format!("  alone: {}", tally(found.alone)))?;
    if let Some(unseeded) = found.unseeded {
        let how = adapter
            .unseeded_command(&found.test)
            .ok()
            .and_then(|argv| {
                argv.iter()
                    .position(|a| a == "no:randomly")
                    .map(|_| " (-p no:randomly)")
            })
            .unwrap_or("");
        printer.line(&format!(
            "  alone without reseeding{how}: {}",
            tally(unseeded)
        ))?;
    }
    if let Some(repeat) = &found.repeat {
        let red = repeat
            .runs
            .iter()
            .filter(|run| run.iter().skip(1).any(|o| o.is_red()))
            .count();
        printer.line(&format!(
            "  repeated {} times in one process: a later repetition red in {red} of {}",
            repeat.count,
            repeat.runs.len()
        ))?;
    }
    if let Some(context) = &found.context {
        printer.line(&format!(
            "  in context: {} ({} tests before it, {}, seed {})",
            tally(context.tally),
            context.tests_before,
            terminal_safe(&context.source),
            context.seed
        ))?;
        if dropped > 0 {
            printer.line(&format!(
                "    {dropped} tests of the recorded order left out: not listed by the runner any more, or run in another process"
            ))?;
        }
    }
    if !found.shuffles.is_empty() {
        let mut runs = Tally::default();
        for shuffle in &found.shuffles {
            runs.runs += u32::from(shuffle.outcome.is_some());
            runs.red += u32::from(shuffle.outcome.is_some_and(Outcome::is_red));
        }
        let seeds: Vec<String> = found.shuffles.iter().map(|s| s.seed.to_string()).collect();
        printer.line(&format!(
            "  shuffled with its file's tests: {} (seeds {})",
            tally(runs),
            seeds.join(", ")
        ))?;
    }
    if let Some(bisection) = &found.bisection {
        printer.line(&format!(
            "  bisection: {} probes over {} tests before it{} (order from the {} run, seed {})",
            bisection.probes,
            bisection.candidates,
            if bisection.interrupted {
                ", stopped"
            } else {
                ""
            },
            bisection.from.as_str(),
            bisection.seed
        ))?;
    }
    if let Some(verification) = &found.verification {
        printer.line(&format!(
            "  verification: culprits then the test {}; the test alone {}{}",
            tally(verification.pair),
            tally(verification.alone),
            if verification.holds {
                ""
            } else {
                " — it does not hold"
            }
        ))?;
    }

    let verdict = &found.verdict;
    let style = if verdict.explains_red() {
        Style::Bold
    } else {
        Style::Red
    };
    printer.line(&format!(
        "verdict: {}",
        style.paint(verdict.as_str(), color)
    ))?;
    match verdict {
        Verdict::OrderDependentVictim { polluters } => {
            for polluter in polluters {
                printer.line(&format!("  polluter: {}", terminal_safe(polluter)))?;
            }
        }
        Verdict::OrderDependentBrittle { state_setters } => {
            for setter in state_setters {
                printer.line(&format!("  state-setter: {}", terminal_safe(setter)))?;
            }
        }
        Verdict::SeedDependent { .. } => {
            if let Some(words) = crate::order::explain::seed_words(found) {
                printer.line(&format!("  {words}"))?;
            }
        }
        Verdict::OrderDependentUnisolated => {
            if let Some(bisection) = found.bisection.as_ref().filter(|b| b.interrupted) {
                printer.line(&format!(
                    "  smallest flipping set observed: {} tests",
                    bisection.culprits.len()
                ))?;
            } else if let runner::GivenOrder::Fixed(why) = adapter.order_support().given {
                printer.line(&format!("  {why}"))?;
            }
        }
        _ => {}
    }
    for state in &finding.shared_state {
        printer.line(&format!(
            "  shared state: {}",
            terminal_safe(&state.to_string())
        ))?;
    }
    if let Some(command) = pasted {
        printer.line(&format!("  reproduce: {}", terminal_safe(command)))?;
    }
    if let Some(fix) = &finding.suggested_fix {
        printer.line(&format!("  suggested fix: {}", terminal_safe(fix)))?;
    }
    let budget = &found.budget;
    if let Some(stage) = budget.exhausted_during {
        printer.line(&format!(
            "budget: spent after {:.0}s of {:.0}s, during the {} stage; the verdict is what was established by then (raise --budget-seconds)",
            budget.spent_seconds,
            budget.limit_seconds,
            stage_name(stage)
        ))?;
    }
    printer.info(&format!(
        "probes: {} in {:.1}s of a {:.0}s budget; logs and run records in {}",
        found.probes.len(),
        budget.spent_seconds,
        budget.limit_seconds,
        display_dir(&finding.dir)
    ))?;
    Ok(())
}

fn stage_name(purpose: Purpose) -> &'static str {
    match purpose {
        Purpose::Alone | Purpose::SeedCheck | Purpose::Unseeded | Purpose::SeedSearch => "alone",
        Purpose::Repeat => "repeat",
        Purpose::Context => "context",
        Purpose::Shuffle | Purpose::Confirm => "shuffle",
        Purpose::Bisect => "bisection",
        Purpose::VerifyPair | Purpose::VerifyAlone => "verification",
    }
}

fn display_dir(dir: &Path) -> String {
    terminal_safe(&PathBuf::from(dir).display().to_string())
}
