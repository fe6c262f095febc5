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
    let mut arguments = std::env::args_os().skip(1);
    if arguments.next().as_deref() == Some(crate::runner::go_keep::KEEPER_ARGUMENT.as_ref()) {
        return ExitCode::from(crate::runner::go_keep::keep(&arguments.collect::<Vec<_>>()));
    }
    if let Some(rustdoc) = std::env::var_os(crate::env_vars::EnvVars::CANDOR_AS_RUSTDOC) {
        return ExitCode::from(crate::runner::be_rustdoc(
            &rustdoc,
            std::env::args_os().skip(1),
        ));
    }
    if let Ok(program) = std::env::current_exe() {
        crate::runner::set_own_program(program);
    }
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

/// What one command run in-process ([`run_captured`]) printed.
#[derive(Debug, Clone)]
pub struct Captured {
    /// The exit code the command would have ended with.
    pub code: u8,
    /// Its JSON lines (docs/json-output.md), in order.
    pub events: Vec<serde_json::Value>,
    /// What it wrote to stderr: warnings, notes, and the error that stopped it.
    pub stderr: String,
}

/// Runs `args` (after `candor`) as the command line would, with JSON output captured
/// instead of printed and progress handed to `progress`: the same argument checks, the
/// same settings, the same entry point. A command line clap refuses is the `Err`.
pub fn run_captured(
    args: &[String],
    context: &Context<'_>,
    progress: Option<output::ProgressSink>,
) -> Result<Captured, clap::Error> {
    let command_line = ["candor", "--format", "json", "--color", "never"]
        .into_iter()
        .map(str::to_owned)
        .chain(args.iter().cloned());
    let raw = RawArgs::try_parse_from(command_line)?;
    let settings = Settings::resolve(raw, context);
    let out = SharedBuffer::default();
    let err = SharedBuffer::default();
    let mut printer = Printer::new(
        Box::new(out.clone()),
        Box::new(err.clone()),
        settings.output.clone(),
    );
    if let Some(sink) = progress {
        printer = printer.with_progress_sink(sink);
    }
    let code = execute(&settings, context, &mut printer);
    drop(printer);
    let events = out
        .text()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|_| serde_json::json!({ "type": "text", "text": line }))
        })
        .collect();
    Ok(Captured {
        code,
        events,
        stderr: err.text(),
    })
}

/// An in-memory stdout or stderr for [`run_captured`].
#[derive(Clone, Default)]
struct SharedBuffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl SharedBuffer {
    fn text(&self) -> String {
        let bytes = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl std::io::Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
