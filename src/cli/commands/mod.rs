//! One module per command; each takes its settings and a printer and returns the exit
//! code, or a [`CliError`] that ends it. A moved command only opens what its workflow in
//! [`crate::app`] needs, picks the sink, calls the workflow and finishes the sink.

mod agents;
mod classify;
mod clean;
mod compare;
mod demo;
mod freeze;
mod gate;
mod history;
mod ingest;
mod init;
mod ledger;
mod lint;
mod lint_diff;
mod lock;
mod order;
mod reliability;
mod report;
mod rerun;
mod show;
mod test;
mod tests;
mod triage;
mod verdicts;

use std::time::Duration;

use super::error::CliError;
use super::output::Printer;
use super::settings::{Command, Context, Settings};
use crate::app::counted;
use crate::app::{Clock, Ports};
use crate::events::EventSink;
use crate::history::{HistoryStore, Location, PgStore, SqliteStore};
use crate::runner::process::SystemExecutor;

/// Runs the command the settings name. `context` is what the settings were resolved
/// against; only `demo` needs it, to resolve the commands it runs in its own repository.
pub fn run(
    settings: &Settings,
    context: &Context<'_>,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    // The default history lives under `.candor`; a symlink there must not carry it (or
    // the runs beside it) out of the repository. A `--db` outside it is the user's choice,
    // and a PostgreSQL history is no file at all.
    if let Location::Sqlite(path) = &settings.db {
        crate::confine::check_write_if_under(&settings.repo_root, path)?;
    }
    match &settings.command {
        Command::Ingest(ingest) => ingest::run(ingest, settings, printer),
        Command::Tests(tests) => tests::run(tests, settings, printer),
        Command::Reliability(reliability) => reliability::run(reliability, settings, printer),
        Command::Init(init) => init::run(init, &settings.repo_root, printer),
        Command::Clean(clean) => clean::run(*clean, settings, printer),
        Command::Show(show) => show::run(show, settings, printer),
        Command::Triage(triage) => triage::run(triage, settings, printer),
        Command::Rerun(rerun) => rerun::run(rerun, settings, printer),
        Command::Gate(gate) => gate::run(gate, settings, printer),
        Command::Compare(compare) => compare::run(compare, settings, printer),
        Command::Repro(repro) => compare::repro(repro, settings, printer),
        Command::Classify(classify) => classify::run(classify, settings, printer),
        Command::LedgerStats => ledger::run(settings, printer),
        Command::HistoryCopy { from, to } => history::copy(from, to, settings, printer),
        Command::HistoryPrune { older_than, now } => {
            history::prune(older_than, *now, settings, printer)
        }
        Command::LintSummary(lint) => lint::run(lint, settings, printer),
        Command::Test(test) => test::run(test, settings, printer),
        Command::Demo(demo) => demo::run(demo, context, settings.today, printer),
        Command::LintDiff(lint) => lint_diff::run(lint, settings, printer),
        Command::Lock(lock) => lock::run(*lock, settings, printer),
        Command::FreezeCheck => freeze::run(settings, printer),
        Command::Order(order) => order::run(order, settings, printer),
        Command::Agents(agents) => agents::run(agents, &settings.repo_root, printer),
        Command::Mcp(mcp) => crate::mcp::serve(*mcp, context),
        Command::Report(report) => report::run(
            report,
            &settings.db,
            &settings.repo_root,
            settings.today,
            printer,
        ),
    }
}

/// How long a command waits for another candor that holds the history before giving up:
/// long enough for a concurrent ingest of a large file, short enough to notice a stuck one.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether a command may start a new history or needs one that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Open {
    /// `ingest`: create the database (and its folder) when missing.
    CreateIfMissing,
    /// Commands that only read: a missing database is an error, not an empty history,
    /// so that a mistyped `--db` does not look like "no tests".
    Existing,
}

pub(crate) fn open_store(db: &Location, mode: Open) -> Result<Box<dyn HistoryStore>, CliError> {
    match db {
        Location::Sqlite(path) => {
            if mode == Open::Existing && !path.exists() {
                return Err(CliError::NoHistory { path: path.clone() });
            }
            match SqliteStore::open(path, BUSY_TIMEOUT) {
                Ok(store) => Ok(Box::new(store)),
                // A read-only copy (a CI artifact, a mounted volume): read it as it is. Only
                // for commands that need an existing history; `ingest` must write.
                Err(error) if mode == Open::Existing && error.is_unwritable() => {
                    match SqliteStore::open_read_only(path, BUSY_TIMEOUT) {
                        Ok(store) => Ok(Box::new(store)),
                        Err(_) => Err(error.into()),
                    }
                }
                Err(error) => Err(error.into()),
            }
        }
        // A server's database exists or the connection fails; an empty one is a history
        // that holds nothing yet, which its schema (created on first use) says.
        Location::Postgres(text) => Ok(Box::new(PgStore::open(&Location::pg_target(text)?)?)),
    }
}

/// The command line's clock: the system's instant, the day the settings resolved
/// (`CANDOR_TODAY` may pin it).
impl Clock for Settings {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::now()
    }

    fn today(&self) -> jiff::civil::Date {
        self.today
    }
}

/// The real ports: the repository root, child processes, the system clock, `events`.
fn ports<'a>(settings: &'a Settings, events: &'a mut dyn EventSink) -> Ports<'a> {
    Ports {
        root: &settings.repo_root,
        executor: &SystemExecutor,
        clock: settings,
        events,
    }
}
