//! The `candor` binary: everything lives in the library; this only turns its result into
//! an exit code.

fn main() -> std::process::ExitCode {
    candor::cli::run()
}
