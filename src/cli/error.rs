//! Errors that end a command, each with the hint that tells the reader what to do next.
//! Failures of a single input file are not here: `ingest` reports them and goes on.

use std::path::PathBuf;

use crate::history::HistoryError;
use crate::ingest::InputError;

/// Why a command stopped. Every one of them exits with
/// [`crate::exit_codes::USAGE_OR_INPUT`].
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The current directory is gone or unreadable.
    #[error("could not read the current directory")]
    CurrentDir(#[source] std::io::Error),
    /// A command that reads the history found none.
    #[error("no history at {}", path.display())]
    NoHistory {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The store failed.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// `show` was asked for a test the history has never seen.
    #[error("no test `{id}` in the history")]
    UnknownTest {
        /// The id as given.
        id: String,
        /// Known ids that look like it, closest first.
        closest: Vec<String>,
    },
    /// `ingest` could not turn its arguments into files.
    #[error(transparent)]
    Inputs(InputError),
    /// candor.toml is broken.
    #[error(transparent)]
    Config(#[from] crate::policy::ConfigError),
    /// The reliability file is broken.
    #[error(transparent)]
    ReliabilityFile(#[from] crate::reliability::FileError),
    /// A file candor writes could not be written; the old one, if any, is untouched.
    #[error("could not write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `init` found a candor.toml already.
    #[error("{} exists already", path.display())]
    ConfigExists {
        /// The file.
        path: PathBuf,
    },
    /// Writing the output failed for another reason than the reader going away.
    #[error("could not write the output")]
    Output(#[from] std::io::Error),
}

impl CliError {
    /// What to do next, when candor can tell.
    pub fn hint(&self) -> Option<String> {
        match self {
            CliError::CurrentDir(_) => Some("run candor from a directory that exists".into()),
            CliError::NoHistory { .. } => Some(
                "store results first with `candor ingest FILE...`, or point --db (or CANDOR_DB) at an existing history"
                    .into(),
            ),
            CliError::History(error) => history_hint(error).map(str::to_owned),
            CliError::UnknownTest { closest, .. } if closest.is_empty() => {
                Some("`candor tests` lists every test id the history knows".into())
            }
            CliError::UnknownTest { closest, .. } => {
                let quoted: Vec<String> = closest.iter().map(|id| format!("`{id}`")).collect();
                Some(format!("did you mean {}?", quoted.join(", ")))
            }
            CliError::Inputs(_) => {
                Some("give result files, directories that hold them, or glob patterns".into())
            }
            CliError::Config(error) => Some(error.hint()),
            CliError::ReliabilityFile(error) => Some(error.hint().to_owned()),
            CliError::Write { .. } => {
                Some("check that the folder exists and can be written; nothing was changed".into())
            }
            CliError::ConfigExists { .. } => Some(
                "edit it by hand, compare with `candor init --print`, or replace it with `candor init --force`"
                    .into(),
            ),
            CliError::Output(_) => None,
        }
    }
}

/// The next step for a store failure.
pub fn history_hint(error: &HistoryError) -> Option<&'static str> {
    match error {
        HistoryError::NotADatabase { .. } => {
            Some("point --db (or CANDOR_DB) at a candor history, or move this file out of the way")
        }
        HistoryError::TooNew { .. } => {
            Some("upgrade candor to use this history; this version leaves it untouched")
        }
        HistoryError::Locked { .. } => {
            Some("another candor is writing to it; run this again when that one is done")
        }
        HistoryError::Io { .. } => {
            Some("check that the folder can be created and written, or choose another with --db")
        }
        HistoryError::Database { .. } => None,
    }
}
