//! The command line: clap arguments, resolved once into settings, then dispatched.

use std::process::ExitCode;

/// Runs candor with the process's arguments and returns its exit code.
pub fn run() -> ExitCode {
    ExitCode::from(crate::exit_codes::OK)
}
