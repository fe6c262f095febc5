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
//! - git is [`crate::git::Git`] on [`Ports::root`].

pub mod clean;
pub mod counted;
pub mod error;
pub mod ingest;
pub mod rerun;
pub mod running;
pub mod test;
pub mod triage;
pub mod verdicts;

use std::path::Path;

use jiff::Timestamp;
use jiff::civil::Date;

pub use self::error::AppError;
use crate::events::{Event, EventSink, Message, Progress, Step, Text};
use crate::runner::process::Executor;

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
