//! Run records: one JSON object per run of one test that `compare`, `repro`, the gate's
//! replays and order probes make, written under `.candor/runs/` and read back by
//! `classify`. The schema (`candor.run-record.v1`, docs/run-records.md) is the contract
//! between those commands; this module owns it, its file layout and its reading errors.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::results::{Execution, Outcome};

/// The `schema` every record carries; a reader refuses any other.
pub const SCHEMA: &str = "candor.run-record.v1";

/// Which side of a comparison, or which kind of run, a record belongs to.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// The merge base, in candor's worktree.
    Base,
    /// The branch: the user's working tree.
    Branch,
    /// A merge-lane replay of a touched test.
    Replay,
    /// One probe of an order investigation.
    Probe,
}

impl Side {
    /// The spelling in records and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::Branch => "branch",
            Side::Replay => "replay",
            Side::Probe => "probe",
        }
    }
}

/// One run of one test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The test's canonical id.
    pub test: String,
    /// Which side or kind of run.
    pub side: Side,
    /// Its position among the runs of the same command, from 1.
    pub sequence: u32,
    /// The commit the run's tree was at; `None` outside git.
    pub commit: Option<String>,
    /// The seed passed to the runner; `None` when the runner takes none.
    pub seed: Option<u64>,
    /// sha256 over the fixture files the run saw (docs/run-records.md); `None` when the
    /// repository has no fixtures directory.
    pub fixture_hash: Option<String>,
    /// The test's outcome; `error` when the report does not hold the test.
    pub outcome: Outcome,
    /// Whether the runner's report held the test at all.
    pub found: bool,
    /// The failure's signature, for a red outcome with a failure.
    pub signature: Option<String>,
    /// The failure's exception type.
    pub exception: Option<String>,
    /// The failure's one-line message.
    pub message: Option<String>,
    /// The source line the runner showed failing (pytest's `>` line), when its report
    /// holds one: the assertion the message's values came from (`assert 0.09 < elapsed
    /// < 0.11` behind `assert 0.2 < 0.11`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failing_line: Option<String>,
    /// The test's own duration as the runner reported it, in seconds.
    pub duration_seconds: Option<f64>,
    /// The runner process's wall time, in seconds.
    pub wall_seconds: f64,
    /// Exactly the arguments the runner received.
    pub argv: Vec<String>,
    /// How many tests the runner process could run at once (its own parallelism, as
    /// the run's report says it); absent in records written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u32>,
    /// The runner's exit status (128+N for a signal).
    pub exit_status: i32,
    /// Whether the time limit stopped it.
    pub timed_out: bool,
    /// When the run started.
    pub started_at: Timestamp,
    /// The runner's log.
    pub log: PathBuf,
    /// The runner's machine-readable report.
    pub report: PathBuf,
    /// Whether the change under test added this test (a green on it proves little).
    #[serde(default)]
    pub new_test: bool,
}

impl RunRecord {
    /// Whether the run counts as a failure: fail or error.
    pub fn failed(&self) -> bool {
        self.outcome.is_red()
    }

    /// Fills the outcome fields from the test's execution in the report, or marks it
    /// missing.
    pub fn set_execution(&mut self, execution: Option<&Execution>) {
        let Some(execution) = execution else {
            self.found = false;
            self.outcome = Outcome::Error;
            self.message = Some("the runner's report does not hold this test".to_owned());
            return;
        };
        self.found = true;
        self.outcome = execution.outcome;
        self.duration_seconds = execution.duration;
        if let Some(failure) = &execution.failure {
            self.signature = Some(failure.signature());
            self.exception.clone_from(&failure.exception);
            self.message = Some(failure.message.clone());
            self.failing_line = failing_line(&failure.text);
        }
    }
}

/// pytest marks the failing source line with `>` in its long traceback; the last one is
/// the assertion that failed (earlier ones are calls into it).
fn failing_line(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix('>'))
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .map(str::to_owned)
}

/// Why records could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file or directory could not be read.
    #[error("could not read {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not a run record.
    #[error("{}:{line}: not a run record: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Nothing to read.
    #[error("{}: no run records found (record files end in .record.json)", path.display())]
    Empty {
        /// The path given.
        path: PathBuf,
    },
}

/// The file name extension of record files.
pub const RECORD_SUFFIX: &str = ".record.json";

/// Writes one record as `<dir>/<sequence>-<side>.record.json`, atomically, and returns its
/// path.
pub fn write(dir: &Path, record: &RunRecord) -> std::io::Result<PathBuf> {
    fs_err::create_dir_all(dir)?;
    let path = dir.join(format!(
        "{:03}-{}{RECORD_SUFFIX}",
        record.sequence,
        record.side.as_str()
    ));
    let mut text = serde_json::to_string(record).map_err(std::io::Error::other)?;
    text.push('\n');
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut file, text.as_bytes())?;
    file.persist(&path).map_err(|e| e.error)?;
    Ok(path)
}

/// Reads records from files (one JSON object per line) and directories (every
/// `*.record.json` below them, in path order).
pub fn read_all(paths: &[PathBuf]) -> Result<Vec<RunRecord>, RecordError> {
    let mut records = Vec::new();
    for path in paths {
        let io = |source| RecordError::Io {
            path: path.clone(),
            source,
        };
        let files = if path.is_dir() {
            let mut files = Vec::new();
            collect_record_files(path, &mut files).map_err(io)?;
            files.sort();
            if files.is_empty() {
                return Err(RecordError::Empty { path: path.clone() });
            }
            files
        } else {
            vec![path.clone()]
        };
        for file in files {
            read_file(&file, &mut records)?;
        }
    }
    Ok(records)
}

fn collect_record_files(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            collect_record_files(&path, files)?;
        } else if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(RECORD_SUFFIX))
        {
            files.push(path);
        }
    }
    Ok(())
}

fn read_file(path: &Path, records: &mut Vec<RunRecord>) -> Result<(), RecordError> {
    let file = fs_err::File::open(path).map_err(|source| RecordError::Io {
        path: path.to_owned(),
        source,
    })?;
    let before = records.len();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let invalid = |message: String| RecordError::Invalid {
            path: path.to_owned(),
            line: index + 1,
            message,
        };
        let line = line.map_err(|e| invalid(e.to_string()))?;
        if line.trim().is_empty() {
            continue;
        }
        let record: RunRecord = serde_json::from_str(&line).map_err(|e| invalid(e.to_string()))?;
        if record.schema != SCHEMA {
            return Err(invalid(format!(
                "schema `{}`, this candor reads `{SCHEMA}`",
                record.schema
            )));
        }
        records.push(record);
    }
    if records.len() == before {
        return Err(RecordError::Empty {
            path: path.to_owned(),
        });
    }
    Ok(())
}

/// sha256 over every file under `folder` (repository-relative) in the tree at `root`: for
/// each file in path order, its repository-relative path, NUL, its sha256 and a newline,
/// with the files hashed as the fixture lock hashes them (`file_hashes::hash_folder`:
/// symbolic links by their target, never followed). `None` when the folder does not exist.
pub fn fixture_hash(
    root: &Path,
    folder: &Path,
) -> Result<Option<String>, crate::file_hashes::ReadError> {
    if !root.join(folder).is_dir() {
        return Ok(None);
    }
    let folder = folder.to_string_lossy().replace('\\', "/");
    let files = crate::file_hashes::hash_folder(root, folder.trim_end_matches('/'))?;
    let mut combined = Sha256::new();
    for (path, digest) in files {
        combined.update(path.as_bytes());
        combined.update([0]);
        combined.update(digest.as_bytes());
        combined.update(b"\n");
    }
    Ok(Some(hex::encode(combined.finalize())))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn record(side: Side, sequence: u32, outcome: Outcome) -> RunRecord {
        RunRecord {
            schema: SCHEMA.to_owned(),
            test: "tests/test_a.py::test_a".to_owned(),
            side,
            sequence,
            commit: Some("a".repeat(40)),
            seed: Some(7),
            fixture_hash: None,
            outcome,
            found: true,
            signature: None,
            exception: None,
            message: None,
            failing_line: None,
            duration_seconds: Some(0.01),
            wall_seconds: 0.3,
            argv: vec!["pytest".to_owned()],
            workers: Some(1),
            exit_status: 0,
            timed_out: false,
            started_at: Timestamp::UNIX_EPOCH,
            log: PathBuf::from("log"),
            report: PathBuf::from("report.xml"),
            new_test: false,
        }
    }

    #[test]
    fn records_round_trip_through_files_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let first = record(Side::Base, 1, Outcome::Pass);
        let second = record(Side::Branch, 2, Outcome::Fail);
        write(dir.path(), &first).unwrap();
        let path = write(dir.path(), &second).unwrap();
        assert!(path.ends_with("002-branch.record.json"));
        let read = read_all(&[dir.path().to_owned()]).unwrap();
        assert_eq!(read, vec![first, second.clone()]);
        assert_eq!(read_all(&[path]).unwrap(), vec![second]);
    }

    #[test]
    fn bad_records_are_located() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.record.json");
        let good = serde_json::to_string(&record(Side::Base, 1, Outcome::Pass)).unwrap();
        fs_err::write(&path, format!("{good}\n{{\"schema\":1}}\n")).unwrap();
        let error = read_all(&[path]).unwrap_err().to_string();
        assert!(
            error.contains("x.record.json:2: not a run record"),
            "{error}"
        );
        let other = good.replace(SCHEMA, "candor.run-record.v9");
        let path = dir.path().join("y.record.json");
        fs_err::write(&path, other).unwrap();
        let error = read_all(&[path]).unwrap_err().to_string();
        assert!(error.contains("schema `candor.run-record.v9`"), "{error}");
        let empty = tempfile::tempdir().unwrap();
        let error = read_all(&[empty.path().to_owned()]).unwrap_err();
        assert!(matches!(error, RecordError::Empty { .. }));
    }

    #[test]
    fn the_fixture_hash_moves_with_any_file_and_is_stable_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let folder = Path::new("f");
        assert_eq!(fixture_hash(root, Path::new("missing")).unwrap(), None);
        fs_err::create_dir_all(root.join("f/sub")).unwrap();
        fs_err::write(root.join("f/a.json"), "{}").unwrap();
        fs_err::write(root.join("f/sub/b.txt"), "b").unwrap();
        let first = fixture_hash(root, folder).unwrap().unwrap();
        assert_eq!(fixture_hash(root, folder).unwrap().unwrap(), first);
        fs_err::write(root.join("f/sub/b.txt"), "c").unwrap();
        let changed = fixture_hash(root, folder).unwrap().unwrap();
        assert_ne!(changed, first);
        fs_err::rename(root.join("f/sub/b.txt"), root.join("f/b.txt")).unwrap();
        assert_ne!(fixture_hash(root, folder).unwrap().unwrap(), changed);
    }
}
