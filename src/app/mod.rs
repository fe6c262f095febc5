//! The workflows, one public function each, over injected ports: the runner's executor,
//! git, the history, a clock, the repository root and where progress goes. A workflow
//! returns a result value and never prints, never reads an environment variable or the
//! terminal: `cli` resolves the settings, hands the real ports in and renders the result;
//! a test hands fakes in (`fakes`) and checks the value and what was emitted.

pub mod compare;
pub mod demo;
pub mod gate;
pub mod order;
pub mod report;
pub mod repro;

#[cfg(test)]
mod fakes;

use std::path::Path;
use std::time::Duration;

use crate::cli::commands::{Open, open_store};
use crate::cli::error::CliError;
use crate::git::Repository;
use crate::history::{HistoryStore, Location};
pub use crate::order::driver::{Clock, SystemClock};
use crate::runner::process::Executor;

/// What a workflow says while it works, before its result: progress for a reader
/// waiting on long work, and warnings that do not stop it.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// A progress line.
    Progress(String),
    /// Something the reader must know; the work goes on.
    Warning(String),
    /// Long work: `done` of `total` steps, with what is being done.
    Step {
        /// Steps done.
        done: u64,
        /// Steps planned.
        total: u64,
        /// What is going on.
        message: String,
    },
    /// The long work is over (a progress bar is cleared).
    StepsDone,
}

/// Where a workflow's notes go.
pub trait Notes {
    /// Takes one note; an error (the terminal gone) ends the workflow.
    fn note(&mut self, note: Note) -> Result<(), CliError>;
}

impl<F: FnMut(Note) -> Result<(), CliError>> Notes for F {
    fn note(&mut self, note: Note) -> Result<(), CliError> {
        self(note)
    }
}

/// The history, opened when a workflow first needs it: a lane that stores nothing
/// creates no database and connects to no server.
pub struct History {
    location: Location,
    store: Option<Box<dyn HistoryStore>>,
}

impl History {
    /// The history at `location`, not opened yet.
    pub fn at(location: Location) -> History {
        History {
            location,
            store: None,
        }
    }

    /// The store, created when missing.
    pub fn create(&mut self) -> Result<&mut (dyn HistoryStore + 'static), CliError> {
        if self.store.is_none() {
            self.store = Some(open_store(&self.location, Open::CreateIfMissing)?);
        }
        Ok(self.store.as_deref_mut().expect("opened above"))
    }

    /// The store when one exists; `None` when there is no history yet.
    pub fn existing(&mut self) -> Result<Option<&mut (dyn HistoryStore + 'static)>, CliError> {
        if self.store.is_none() {
            if !self.location.exists() {
                return Ok(None);
            }
            self.store = Some(open_store(&self.location, Open::Existing)?);
        }
        Ok(self.store.as_deref_mut())
    }
}

/// The ports every workflow that runs tests takes.
pub struct Ports<'a> {
    /// The repository's work tree.
    pub repo_root: &'a Path,
    /// Runs the runner's children.
    pub executor: &'a dyn Executor,
    /// Answers about commits.
    pub git: &'a dyn Repository,
    /// Measures the time budgets.
    pub clock: &'a dyn Clock,
    /// Where progress and warnings go.
    pub notes: &'a mut dyn Notes,
}

impl Ports<'_> {
    fn progress(&mut self, text: impl Into<String>) -> Result<(), CliError> {
        self.notes.note(Note::Progress(text.into()))
    }

    fn warning(&mut self, text: impl Into<String>) -> Result<(), CliError> {
        self.notes.note(Note::Warning(text.into()))
    }

    fn step(&mut self, done: u64, total: u64, message: impl Into<String>) -> Result<(), CliError> {
        self.notes.note(Note::Step {
            done,
            total,
            message: message.into(),
        })
    }
}

/// A clock that starts at another's present: the budget of a stage inside a workflow.
pub struct Lap<'a> {
    clock: &'a dyn Clock,
    start: Duration,
}

impl<'a> Lap<'a> {
    /// Starts now on `clock`.
    pub fn start(clock: &'a dyn Clock) -> Lap<'a> {
        Lap {
            clock,
            start: clock.elapsed(),
        }
    }
}

impl Clock for Lap<'_> {
    fn elapsed(&self) -> Duration {
        self.clock.elapsed().saturating_sub(self.start)
    }
}

/// A commit's first twelve characters, as every output shows it.
pub(crate) fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}
