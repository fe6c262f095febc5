//! TODO(ingest): stub so the CLI compiles; the real ingest core replaces this file. It
//! mirrors the real one's interface as far as the CLI uses it.

use std::path::{Path, PathBuf};

use crate::history::{HistoryError, HistoryStore, IngestReport, NewRun};
use crate::results::{ParseError, ParseOptions, ParseSummary, Position};

/// What ingesting one file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileIngest {
    /// The file, as given.
    pub path: PathBuf,
    /// What the store did.
    pub report: IngestReport,
    /// What the parser saw: format, producer, executions read, warnings.
    pub summary: ParseSummary,
    /// The key the run was stored (or found) under.
    pub content_key: String,
}

/// Why a file could not be ingested.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// Opening or reading the file failed.
    #[error("could not read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The content is damaged or not results candor reads.
    #[error("{}:{error}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's error.
        error: ParseError,
    },
    /// The history refused the run.
    #[error(transparent)]
    Store(#[from] HistoryError),
}

impl IngestError {
    /// What the reader should do next.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            IngestError::Read { .. } => Some("check that the file exists and is readable"),
            IngestError::Parse { error, .. } => Some(error.hint()),
            IngestError::Store(_) => None,
        }
    }

    /// Where in the file the problem is.
    pub fn position(&self) -> Option<Position> {
        match self {
            IngestError::Parse { error, .. } => error.position(),
            _ => None,
        }
    }
}

/// Why the command-line inputs could not be turned into files.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A path that is neither a file, a folder nor a glob pattern.
    #[error("{path} does not exist")]
    Missing {
        /// As given.
        path: String,
    },
}

/// Streams, hashes and commits one file all-or-nothing.
pub fn ingest_file(
    store: &mut dyn HistoryStore,
    path: &Path,
    run: &NewRun,
    options: &ParseOptions,
) -> Result<FileIngest, IngestError> {
    let _ = (store, run, options);
    Err(IngestError::Read {
        path: path.to_owned(),
        source: std::io::Error::other("ingest is not implemented yet"),
    })
}

/// Expands files, directories and glob patterns into result files.
pub fn expand_inputs(inputs: &[String]) -> Result<Vec<PathBuf>, InputError> {
    inputs
        .iter()
        .map(|input| {
            let path = PathBuf::from(input);
            if path.exists() {
                Ok(path)
            } else {
                Err(InputError::Missing {
                    path: input.clone(),
                })
            }
        })
        .collect()
}
