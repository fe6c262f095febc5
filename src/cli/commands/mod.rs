//! One module per command; each takes its settings and a printer and returns the exit
//! code, or a [`CliError`] that ends it.

mod ingest;
mod show;
mod tests;

use std::path::Path;

use super::error::CliError;
use super::output::Printer;
use super::settings::{Command, Settings};
use crate::history::{HistoryError, HistoryStore};

/// Runs the command the settings name.
pub fn run(settings: &Settings, printer: &mut Printer) -> Result<u8, CliError> {
    match &settings.command {
        Command::Ingest(ingest) => ingest::run(ingest, &settings.db, printer),
        Command::Tests(tests) => tests::run(tests, &settings.db, printer),
        Command::Show(show) => show::run(show, &settings.db, printer),
    }
}

/// Whether a command may start a new history or needs one that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// `ingest`: create the database (and its folder) when missing.
    CreateIfMissing,
    /// Commands that only read: a missing database is an error, not an empty history,
    /// so that a mistyped `--db` does not look like "no tests".
    Existing,
}

fn open_store(db: &Path, mode: Open) -> Result<Box<dyn HistoryStore>, CliError> {
    if mode == Open::Existing && !db.exists() {
        return Err(CliError::NoHistory {
            path: db.to_owned(),
        });
    }
    // TODO(store): SqliteStore::open once the store lands.
    Err(CliError::History(HistoryError::Database {
        path: db.to_owned(),
        source: "the SQLite store is not in this build yet".into(),
    }))
}
