//! `candor demo`: the story of `app::demo` told step by step. Each step is a real candor
//! command, resolved against the temporary repository as if typed there, with the history
//! in its default place.

use jiff::civil::Date;
use serde::Serialize;

use clap::Parser as _;

use crate::app::demo::{build_repository, demo_error, steps, write_summaries};
use crate::cli::args::RawArgs;
use crate::cli::error::CliError;
use crate::cli::output::Printer;
use crate::cli::settings::{Context, DemoSettings, Settings};
use crate::env_vars::EnvVars;
use crate::exit_codes;

/// `{"type":"demo-step"}` before each step's own lines.
#[derive(Serialize)]
struct StepLine<'a> {
    step: usize,
    says: &'a str,
    argv: &'a [String],
}

/// `{"type":"demo-exit"}` after them.
#[derive(Serialize)]
struct ExitLine {
    step: usize,
    exit: u8,
    expected: u8,
}

pub(super) fn run(
    settings: &DemoSettings,
    context: &Context<'_>,
    today: Date,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let temp = tempfile::Builder::new()
        .prefix("candor-demo-")
        .tempdir()
        .map_err(|source| demo_error("create a temporary directory", source))?;
    let repo = temp.path().join("shop");
    build_repository(&repo, today)?;
    let human = !printer.is_json();
    if human {
        printer.info(&format!(
            "A shop in a git repository at {}: branch `agent/lowercase-codes` holds one commit under review, on top of `main`.\nThe first step builds the shop with cargo, which takes a few seconds.",
            repo.display()
        ))?;
    }

    // Each step sees this process's environment, but never a history chosen for another
    // repository: the demo's lives in its own `.candor/history.db`.
    let env = |name: &str| {
        if name == EnvVars::CANDOR_DB {
            None
        } else {
            (context.env)(name)
        }
    };
    let here = Context {
        cwd: repo.clone(),
        env: &env,
        stdout_is_terminal: context.stdout_is_terminal,
        stderr_is_terminal: context.stderr_is_terminal,
        now: context.now,
    };
    let mut surprises = Vec::new();
    for (number, step) in steps().into_iter().enumerate() {
        let number = number + 1;
        if step.says.contains("summary-draft.md") {
            write_summaries(&repo)?;
        }
        if printer.is_json() {
            printer.json(
                "demo-step",
                &StepLine {
                    step: number,
                    says: step.says,
                    argv: &step.args,
                },
            )?;
        } else {
            printer.info("")?;
            printer.info(&format!("# {}", step.says))?;
            printer.info(&format!("$ candor {}", step.args.join(" ")))?;
        }
        let exit = run_step(&step.args, &here, printer)?;
        if printer.is_json() {
            printer.json(
                "demo-exit",
                &ExitLine {
                    step: number,
                    exit,
                    expected: step.expected,
                },
            )?;
        } else {
            printer.info(&format!("(exit {exit})"))?;
        }
        if exit == exit_codes::USAGE_OR_INPUT {
            // The step could not run (no cargo, say): the rest would only repeat it.
            printer.warning(&format!(
                "the demo stopped at step {number}: `candor {}` could not run",
                step.args.join(" ")
            ))?;
            return Ok(exit_codes::USAGE_OR_INPUT);
        }
        if exit != step.expected {
            surprises.push(format!(
                "step {number} (`candor {}`) exited {exit}, the demo expected {}",
                step.args.join(" "),
                step.expected
            ));
        }
    }
    if settings.keep {
        let kept = temp.keep().join("shop");
        if human {
            printer.info(&format!("\nThe repository is kept at {}", kept.display()))?;
        } else {
            printer.json("demo-kept", &serde_json::json!({ "repository": kept }))?;
        }
    }
    for surprise in &surprises {
        printer.warning(surprise)?;
    }
    Ok(if surprises.is_empty() {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}

/// Runs one step as candor would run it typed in the repository; an error is printed as
/// candor prints errors, and is the step's exit code.
fn run_step(args: &[String], here: &Context<'_>, printer: &mut Printer) -> Result<u8, CliError> {
    let raw =
        RawArgs::try_parse_from(std::iter::once("candor".to_owned()).chain(args.iter().cloned()))
            .map_err(|error| demo_error("read its own command line", error))?;
    let settings = Settings::resolve(raw, here);
    for warning in &settings.warnings {
        printer.warning(warning)?;
    }
    match super::run(&settings, here, printer) {
        Ok(code) => Ok(code),
        Err(error) => {
            printer.error(&error, error.hint().as_deref())?;
            Ok(exit_codes::USAGE_OR_INPUT)
        }
    }
}
