//! The command line: clap arguments ([`args`]), resolved once into [`settings`], run by
//! [`commands`], printed through [`output`]. Errors end as `error:` / `Caused by:` /
//! `hint:` on stderr and an exit code from [`crate::exit_codes`].

pub mod args;
pub(crate) mod commands;
pub mod error;
pub mod output;
pub mod settings;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use jiff::Timestamp;

use self::args::RawArgs;
use self::error::CliError;
use self::output::Printer;
use self::settings::{Context, Settings};
use crate::exit_codes;

/// Runs candor with the process's arguments and environment and returns its exit code.
pub fn run() -> ExitCode {
    ExitCode::from(run_to_code())
}

fn run_to_code() -> u8 {
    let raw = match RawArgs::try_parse() {
        Ok(raw) => raw,
        Err(error) => {
            // `--help` and `--version` arrive here too, on stdout, as success; a closed
            // pipe while printing them is no reason to complain.
            let _ = error.print();
            return if error.use_stderr() {
                exit_codes::USAGE_OR_INPUT
            } else {
                exit_codes::OK
            };
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(error) => {
            let error = CliError::CurrentDir(error);
            let mut printer = Printer::stdio(settings::OutputSettings {
                format: settings::OutputFormat::Human,
                color_stdout: false,
                color_stderr: false,
                quiet: false,
                progress: false,
                summarize: false,
            });
            let _ = printer.error(&error, error.hint().as_deref());
            return exit_codes::USAGE_OR_INPUT;
        }
    };
    let env = |name: &str| std::env::var(name).ok();
    let context = Context {
        cwd,
        env: &env,
        stdout_is_terminal: std::io::stdout().is_terminal(),
        stderr_is_terminal: std::io::stderr().is_terminal(),
        now: Timestamp::now(),
    };
    let settings = Settings::resolve(raw, &context);
    let mut printer = Printer::stdio(settings.output.clone());
    execute(&settings, &context, &mut printer)
}

/// Runs resolved settings to an exit code, printing whatever stops the command.
fn execute(settings: &Settings, context: &Context<'_>, printer: &mut Printer) -> u8 {
    let result = settings
        .warnings
        .iter()
        .try_for_each(|warning| printer.warning(warning))
        .map_err(CliError::from)
        .and_then(|()| commands::run(settings, context, printer))
        .and_then(|code| printer.flush().map(|()| code).map_err(CliError::from));
    match result {
        Ok(code) => code,
        Err(error) => {
            // If stderr is gone too there is no one left to tell.
            let _ = printer.error(&error, error.hint().as_deref());
            exit_codes::USAGE_OR_INPUT
        }
    }
}
