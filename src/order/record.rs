//! One JSON run record per probe, written next to the probe's log and report: what ran
//! (argv, seed, order), what it showed (outcome, signature, message) and how it ended
//! (exit status, duration). Written atomically (temporary file, then rename), so a record
//! that exists is whole.
//!
//! The fields are those of the run records `candor compare` keeps under `.candor/runs/`
//! (test, side, commit, seed, fixture hash, outcome, signature, message, duration, argv,
//! exit status), with `side` = `order` and the probe's own fields after them.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::results::Outcome;

/// The record of one probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeRecord {
    /// The test investigated.
    pub test: String,
    /// Always `order`: the run was a probe of `candor order`.
    pub side: &'static str,
    /// The commit the working copy was at, when known.
    pub commit: Option<String>,
    /// The seed as the runner took it (`--randomly-seed=N`, `-shuffle=N`); `None` when it
    /// took none.
    pub seed: Option<String>,
    /// The fixtures' hash; `None`: `candor order` does not hash fixtures.
    pub fixture_hash: Option<String>,
    /// The test's outcome; `None` when the report does not hold it.
    pub outcome: Option<Outcome>,
    /// Its failure's signature.
    pub signature: Option<String>,
    /// Its failure's message.
    pub message: Option<String>,
    /// Wall time of the runner process, in seconds.
    pub duration_seconds: f64,
    /// Exactly what ran.
    pub argv: Vec<String>,
    /// The runner's exit status (128+N for signal N).
    pub exit_status: i32,
    /// Whether the time limit stopped it.
    pub timed_out: bool,
    /// The probe's number in the investigation.
    pub probe: u32,
    /// Why it ran (`alone`, `context`, `bisect`, …).
    pub purpose: &'static str,
    /// The tests run before the test, as asked (empty alone).
    pub tests_before: Vec<String>,
    /// The tests that did run before it, as the report shows.
    pub ran_before: Vec<String>,
    /// Each repetition's outcome, for a repeated run.
    pub repetitions: Vec<Outcome>,
    /// The runner's log.
    pub log: PathBuf,
    /// The runner's report.
    pub report: PathBuf,
}

/// Writes `record` as `path`, whole or not at all.
pub fn write(record: &ProbeRecord, path: &Path) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    serde_json::to_writer_pretty(&mut file, record)?;
    file.write_all(b"\n")?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}
