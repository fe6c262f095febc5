//! The application layer: one public function per workflow (test, triage, rerun, ingest,
//! …), taking resolved settings and injected [`Ports`], returning a result value and
//! emitting [`crate::events::Event`]s. A workflow never prints, never reads environment
//! variables or the terminal: the command line (or a test, or a server) decides those and
//! hands in what they decided.
//!
//! Which ports go where (docs/architecture.md, "The application layer"):
//! - [`Ports`] holds what nearly every workflow uses: the repository root, the clock and the
//!   event sink, and the runner's [`Executor`] (the real one spawns processes; tests give
//!   [`crate::runner::fake::FakeExecutor`]).
//! - The [`HistoryStore`](crate::history::HistoryStore) and the
//!   [`PolicySource`](crate::policy::PolicySource) are plain parameters of the workflows
//!   that read them, so a workflow that needs no history cannot open one by accident, and
//!   the caller chooses where policy comes from (the work tree or the merge base).
//! - git is a plain parameter too, as [`crate::git::Repository`], of the workflows that
//!   read commits (`compare`, `repro`, `gate`): [`crate::git::Git`] on [`Ports::root`], or
//!   a fake whose commits are maps of files (`fakes`).
//! - A budget inside a workflow is a [`Lap`] of the clock: the time since it started.

pub mod classify;
pub mod clean;
pub mod compare;
mod concurrent;
pub mod counted;
pub mod demo;
pub mod error;
pub mod freeze;
pub mod gate;
pub mod history;
pub mod ingest;
pub mod ledger;
pub mod lint;
pub mod lint_diff;
pub mod lock;
pub mod order;
pub mod reliability;
pub mod report;
pub mod repro;
pub mod rerun;
pub mod running;
pub mod show;
pub mod test;
pub mod tests;
pub mod triage;
pub mod verdicts;

#[cfg(test)]
mod fakes;

use std::path::Path;

use jiff::Timestamp;
use jiff::civil::Date;

pub use self::error::AppError;
use crate::events::{Event, EventSink, Message, Progress, Step, Text};
use crate::runner::process::Executor;

/// Refuses `command` while the repository is in the middle of a rebase, merge,
/// cherry-pick or revert (docs/gate.md, "An unfinished git operation"): HEAD
/// is then a commit being replayed or a half-done state, not the change, and a verdict
/// would describe it. Called before anything is run or written.
pub(crate) fn refuse_unfinished(
    git: &dyn crate::git::Repository,
    command: &'static str,
) -> Result<(), AppError> {
    match git.unfinished_operation()? {
        Some(operation) => Err(AppError::Unfinished { operation, command }),
        None => Ok(()),
    }
}

/// The first `len` characters of an id (sha, signature).
pub fn short(id: &str, len: usize) -> &str {
    id.char_indices().nth(len).map_or(id, |(end, _)| &id[..end])
}

/// What time it is, for the workflows that stamp or judge by date.
pub trait Clock {
    /// The instant now.
    fn now(&self) -> Timestamp;
    /// The day the policy is judged on (freezes, fingerprint expiry, the ledger's budget
    /// window), in UTC; the command line may pin it (`CANDOR_TODAY`).
    fn today(&self) -> Date;
}

/// The system's clock with the day the caller resolved.
#[derive(Debug, Clone, Copy)]
pub struct WallClock {
    /// The day.
    pub today: Date,
}

impl Clock for WallClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }

    fn today(&self) -> Date {
        self.today
    }
}

/// A clock that stands still, for tests.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock {
    /// The instant.
    pub now: Timestamp,
    /// The day.
    pub today: Date,
}

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        self.now
    }

    fn today(&self) -> Date {
        self.today
    }
}

/// The ports every workflow takes.
pub struct Ports<'a> {
    /// The repository root (the current directory outside a repository).
    pub root: &'a Path,
    /// Runs the test runner's processes.
    pub executor: &'a dyn Executor,
    /// What time it is.
    pub clock: &'a dyn Clock,
    /// Where events go.
    pub events: &'a mut dyn EventSink,
}

impl Ports<'_> {
    /// Emits an event.
    #[expect(
        clippy::needless_pass_by_value,
        reason = "workflows build the event in the call"
    )]
    pub fn emit(&mut self, event: Event) {
        self.events.emit(&event);
    }

    /// `warning: message`.
    pub fn warning(&mut self, message: impl Into<String>) {
        self.emit(Event::Warning(Message {
            message: message.into(),
        }));
    }

    /// `note: message`.
    pub fn note(&mut self, message: impl Into<String>) {
        self.emit(Event::Note(Message {
            message: message.into(),
        }));
    }

    /// A result line for people (printed under `--quiet` too).
    pub fn say(&mut self, message: impl Into<String>) {
        self.emit(Event::Text(Text {
            message: message.into(),
            detail: false,
        }));
    }

    /// A detail line for people (left out under `--quiet`).
    pub fn tell(&mut self, message: impl Into<String>) {
        self.emit(Event::Text(Text {
            message: message.into(),
            detail: true,
        }));
    }

    /// A progress line for long work.
    pub fn progress(&mut self, message: impl Into<String>) {
        self.emit(Event::Progress(Progress {
            message: message.into(),
            step: None,
        }));
    }

    /// A counted step of long work: `done` of `total`.
    pub fn step(&mut self, message: impl Into<String>, done: u64, total: u64) {
        self.emit(Event::Progress(Progress {
            message: message.into(),
            step: Some(Step { done, total }),
        }));
    }

    /// Whether the reader went away (see [`EventSink::closed`]).
    pub fn closed(&self) -> bool {
        self.events.closed()
    }
}

/// The history, opened when a workflow first needs it: a lane that stores nothing
/// creates no database and connects to no server.
pub struct History {
    location: crate::history::Location,
    store: Option<Box<dyn crate::history::HistoryStore>>,
}

impl History {
    /// The history at `location`, not opened yet.
    pub fn at(location: crate::history::Location) -> History {
        History {
            location,
            store: None,
        }
    }

    /// The store, created when missing.
    pub fn create(
        &mut self,
    ) -> Result<&mut (dyn crate::history::HistoryStore + 'static), AppError> {
        use crate::cli::commands::{Open, open_store};
        if self.store.is_none() {
            self.store = Some(open_store(&self.location, Open::CreateIfMissing)?);
        }
        Ok(self.store.as_deref_mut().expect("opened above"))
    }

    /// The store when one exists; `None` when there is no history yet.
    pub fn existing(
        &mut self,
    ) -> Result<Option<&mut (dyn crate::history::HistoryStore + 'static)>, AppError> {
        use crate::cli::commands::{Open, open_store};
        if self.store.is_none() {
            if !self.location.exists() {
                return Ok(None);
            }
            self.store = Some(open_store(&self.location, Open::Existing)?);
        }
        Ok(self.store.as_deref_mut())
    }
}

/// The time since a workflow's stage started on a [`Clock`]: the budgets of the lane and
/// of an order investigation (`order::driver::Clock`).
pub struct Lap<'a> {
    clock: &'a dyn Clock,
    start: Timestamp,
}

impl<'a> Lap<'a> {
    /// Starts now on `clock`.
    pub fn start(clock: &'a dyn Clock) -> Lap<'a> {
        Lap {
            clock,
            start: clock.now(),
        }
    }
}

impl crate::order::driver::Clock for Lap<'_> {
    fn elapsed(&self) -> std::time::Duration {
        let span = self.clock.now().duration_since(self.start);
        std::time::Duration::try_from(span).unwrap_or_default()
    }
}
