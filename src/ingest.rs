//! TODO(ingest): stub so the CLI compiles; the real ingest core replaces this file.

use std::path::{Path, PathBuf};

use crate::history::{HistoryError, HistoryStore, IngestReport, NewRun};
use crate::results::{Format, ParseError, ParseOptions};

/// What ingesting one file did.
#[derive(Debug)]
pub struct FileIngest {
    /// The file.
    pub path: PathBuf,
    /// The format read.
    pub format: Format,
    /// The producing tool, when known.
    pub producer: Option<String>,
    /// What the store did.
    pub report: IngestReport,
    /// What was tolerated.
    pub warnings: Vec<String>,
}

/// Why a file was not ingested.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The file is not results candor reads, or is damaged.
    #[error("{path}:{source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with a line and column.
        #[source]
        source: ParseError,
    },
    /// Reading the file failed.
    #[error("could not read {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The store refused.
    #[error("could not store {path}")]
    Store {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: HistoryError,
    },
    /// A pattern or path matched no file.
    #[error("{input}: no such file")]
    NoMatch {
        /// The pattern or path as given.
        input: String,
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
    Err(IngestError::Io {
        path: path.to_owned(),
        source: std::io::Error::other("ingest is not implemented yet"),
    })
}

/// Expands files, directories and glob patterns into result files.
pub fn expand_inputs(inputs: &[String]) -> Result<Vec<PathBuf>, IngestError> {
    Ok(inputs.iter().map(PathBuf::from).collect())
}
