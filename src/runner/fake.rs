//! A scripted executor for statistics tests only: it never starts a process, it hands out
//! outcomes written in advance and writes their output where a real runner would. Use it
//! to test code that judges many runs (rates, sequential tests, budgets) fast and
//! deterministically; never to test an adapter or the process layer, which must run for
//! real.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;

use super::process::{Executor, Exit, Invocation, ProcessError, ProcessOutcome, StdoutTo};

/// One scripted run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeRun {
    /// How the pretend child ends.
    pub exit: Exit,
    /// Whether it pretends to have been stopped by the timeout.
    pub timed_out: bool,
    /// The duration it reports.
    pub duration: Duration,
    /// Written to the stdout file, or to the log when stdout goes to the log.
    pub stdout: Vec<u8>,
    /// Written to the invocation's report path, when it has one.
    pub report: Option<Vec<u8>>,
}

impl FakeRun {
    /// A run that exits with `code` after one second, printing nothing.
    pub fn exits(code: i32) -> Self {
        FakeRun {
            exit: Exit::Code(code),
            timed_out: false,
            duration: Duration::from_secs(1),
            stdout: Vec::new(),
            report: None,
        }
    }

    /// The same run, writing `stdout` to its stdout.
    #[must_use]
    pub fn with_stdout(mut self, stdout: impl Into<Vec<u8>>) -> Self {
        self.stdout = stdout.into();
        self
    }

    /// The same run, writing `report` to the invocation's report path.
    #[must_use]
    pub fn with_report(mut self, report: impl Into<Vec<u8>>) -> Self {
        self.report = Some(report.into());
        self
    }
}

/// For statistics tests only: returns scripted outcomes in order and remembers every
/// invocation it was given. Running out of script is an error, so a test notices when the
/// code under test runs more than it expected.
#[derive(Debug, Default)]
pub struct FakeExecutor {
    script: Mutex<VecDeque<FakeRun>>,
    seen: Mutex<Vec<Invocation>>,
}

impl FakeExecutor {
    /// An executor that plays `script` in order.
    pub fn new(script: impl IntoIterator<Item = FakeRun>) -> Self {
        FakeExecutor {
            script: Mutex::new(script.into_iter().collect()),
            seen: Mutex::new(Vec::new()),
        }
    }

    /// Every invocation executed so far, in order.
    pub fn invocations(&self) -> Vec<Invocation> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many scripted runs are left.
    pub fn remaining(&self) -> usize {
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Executor for FakeExecutor {
    fn execute(&self, invocation: &Invocation) -> Result<ProcessOutcome, ProcessError> {
        let program = invocation
            .argv
            .first()
            .ok_or(ProcessError::EmptyArgv)?
            .clone();
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(invocation.clone());
        let Some(run) = self
            .script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
        else {
            return Err(ProcessError::Spawn {
                program,
                cwd: invocation.cwd.clone(),
                source: io::Error::other("the fake executor's script has no run left"),
            });
        };
        let stdout_path = match &invocation.stdout {
            StdoutTo::Log => &invocation.log,
            StdoutTo::File(path) => path,
        };
        write(stdout_path, &run.stdout)?;
        if stdout_path != &invocation.log {
            write(&invocation.log, b"")?;
        }
        if let (Some(path), Some(report)) = (&invocation.report, &run.report) {
            write(path, report)?;
            // A pytest session that wrote its report ended, and candor's isolation probe
            // lists what it imported: here one module of the run's own tree.
            if let Some((_, probe)) = invocation
                .env_set
                .iter()
                .find(|(name, _)| name == super::isolation::PROBE_DIR_VARIABLE)
            {
                let own = invocation.cwd.join("conftest.py");
                write(
                    &Path::new(probe).join("imports-1.tsv"),
                    format!("conftest\t{}\n", own.display()).as_bytes(),
                )?;
            }
        }
        Ok(ProcessOutcome {
            started_at: Timestamp::UNIX_EPOCH,
            duration: run.duration,
            exit: run.exit,
            timed_out: run.timed_out,
        })
    }
}

fn write(path: &Path, content: &[u8]) -> Result<(), ProcessError> {
    let result = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => std::fs::create_dir_all(parent),
        None => Ok(()),
    }
    .and_then(|()| std::fs::write(path, content));
    result.map_err(|source| ProcessError::Io {
        what: "write",
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_runs_are_played_in_order_and_then_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fake = FakeExecutor::new([
            FakeRun::exits(1).with_stdout("{\"Action\":\"fail\"}\n"),
            FakeRun::exits(0).with_report("<testsuites/>"),
        ]);
        let first = Invocation::new(vec!["go".into()], dir.path(), dir.path().join("1.log"))
            .stdout_to(dir.path().join("1.jsonl"));
        let second = Invocation::new(vec!["pytest".into()], dir.path(), dir.path().join("2.log"))
            .report_at(dir.path().join("2.xml"));

        let outcome = fake.execute(&first).expect("scripted");
        assert_eq!(outcome.exit_code(), 1);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("1.jsonl"))
                .ok()
                .as_deref(),
            Some("{\"Action\":\"fail\"}\n")
        );
        assert!(fake.execute(&second).expect("scripted").success());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("2.xml"))
                .ok()
                .as_deref(),
            Some("<testsuites/>")
        );
        assert_eq!(fake.remaining(), 0);
        assert!(fake.execute(&first).is_err(), "the script is exhausted");
        assert_eq!(fake.invocations().len(), 3);
    }
}
