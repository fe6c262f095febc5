//! Running a setup command in a bench's generated repository, shared by the gate and
//! compare benches: quiet, with a fixed git identity, and fatal when it fails.

use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `program` with `args` in `dir`; panics when it fails, since a bench on a broken
/// setup measures nothing.
pub fn run(dir: &Path, program: &str, args: &[&str]) {
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@example.invalid")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@example.invalid")
        .stdout(Stdio::null())
        .status()
        .expect("the program runs");
    assert!(status.success(), "{program} {args:?}");
}
