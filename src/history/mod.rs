//! The test history: runs and their executions, behind [`HistoryStore`] so that the
//! embedded SQLite store and a shared PostgreSQL store answer the same questions.
//!
//! Nothing here parses result files or judges tests; callers hand in executions and read
//! back rows.

mod packed;
pub mod pg;
pub mod sqlite;

use std::collections::HashSet;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::results::{Execution, Outcome};

pub use pg::PgStore;
pub use sqlite::SqliteStore;

/// Where a history is: a SQLite file (the default) or a PostgreSQL database.
#[derive(Clone)]
pub enum Location {
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL database: the URL or `key=value` string as given, completed from the
    /// service file and the `PG*` variables when it is opened ([`pg::Target::parse`]).
    Postgres(String),
}

impl Location {
    /// Reads a `--db`/`CANDOR_DB` value: a PostgreSQL URL or connection string names a
    /// server, anything else a file relative to `cwd`.
    pub fn parse(value: &std::ffi::OsStr, cwd: &std::path::Path) -> Location {
        match value.to_str() {
            Some(text) if pg::target::is_postgres(text) => Location::Postgres(text.to_owned()),
            _ => Location::Sqlite(cwd.join(value)),
        }
    }

    /// The PostgreSQL target, completed from the process's `PG*` variables.
    pub fn pg_target(text: &str) -> Result<pg::Target, HistoryError> {
        pg::Target::parse(text, &|name| std::env::var(name).ok()).map_err(|e| {
            HistoryError::BadTarget {
                target: pg::target::redact(text),
                reason: e.reason,
            }
        })
    }

    /// Whether there is a history to read: the file exists, or a server is named (a
    /// PostgreSQL history is read whenever one is chosen; an unreachable server is an
    /// error, not an empty history).
    pub fn exists(&self) -> bool {
        match self {
            Location::Sqlite(path) => path.exists(),
            Location::Postgres(_) => true,
        }
    }

    /// What messages call it: the file, or the server's address without its password.
    pub fn shown(&self) -> PathBuf {
        PathBuf::from(self.to_string())
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(text) => f.write_str(&pg::target::redact(text)),
        }
    }
}

/// Where a run came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// A CI job's own run of the suite.
    Ci,
    /// A developer's (or agent's) run on their machine.
    Local,
    /// `candor rerun`.
    Rerun,
    /// `candor compare`.
    Compare,
    /// `candor gate` replays.
    Gate,
}

impl Source {
    /// Every source, in storage order.
    pub const ALL: [Source; 5] = [
        Source::Ci,
        Source::Local,
        Source::Rerun,
        Source::Compare,
        Source::Gate,
    ];

    /// The stable spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Ci => "ci",
            Source::Local => "local",
            Source::Rerun => "rerun",
            Source::Compare => "compare",
            Source::Gate => "gate",
        }
    }

    /// Parses the stable spelling.
    pub fn from_str_opt(text: &str) -> Option<Source> {
        Source::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The conditions a run happened under; fingerprints match on them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conditions {
    /// Whether it ran under CI.
    pub ci: bool,
    /// The runner (`pytest`, `cargo`, `nextest`, `go`, or the producing tool of a file).
    pub runner: Option<String>,
    /// Operating system (`linux`, `macos`, `windows`).
    pub os: Option<String>,
}

/// Which CI build a run came from, beside its provider and job: so that the runs of one
/// build (its jobs, its attempts) can be told apart and found again. Each part is `None`
/// when the service does not say (docs/postgres.md lists what each service gives).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CiRun {
    /// The repository or project, as the service names it (`owner/name`, a URL).
    pub repository: Option<String>,
    /// The service's id of the build (workflow run, pipeline, build).
    pub run_id: Option<String>,
    /// Which attempt of the build, from 1 (a re-run of a GitHub workflow is attempt 2).
    pub attempt: Option<u32>,
}

impl CiRun {
    /// What [`crate::ci_env::CiEnv`] read.
    pub fn new(repository: Option<String>, run_id: Option<String>, attempt: Option<u32>) -> Self {
        CiRun {
            repository,
            run_id,
            attempt,
        }
    }

    /// Whether nothing is known.
    pub fn is_empty(&self) -> bool {
        self.repository.is_none() && self.run_id.is_none() && self.attempt.is_none()
    }
}

/// A run's whole CI identity as the JSON outputs show it (`"ci"` of `ingest` and `show`
/// lines, docs/json-output.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CiIdentity {
    /// `github-actions`, `gitlab-ci`, …
    pub provider: Option<String>,
    /// The repository or project.
    pub repository: Option<String>,
    /// The service's id of the build.
    pub run_id: Option<String>,
    /// The job.
    pub job: Option<String>,
    /// The attempt, from 1.
    pub attempt: Option<u32>,
}

impl NewRun {
    /// The run's CI identity; `None` when nothing of it is known (a local run).
    pub fn ci_identity(&self) -> Option<CiIdentity> {
        let known = self.ci_provider.is_some() || self.job.is_some() || !self.ci_run.is_empty();
        known.then(|| CiIdentity {
            provider: self.ci_provider.clone(),
            repository: self.ci_run.repository.clone(),
            run_id: self.ci_run.run_id.clone(),
            job: self.job.clone(),
            attempt: self.ci_run.attempt,
        })
    }
}

/// Everything known about a run before its executions are stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewRun {
    /// Commit the run tested.
    pub commit: Option<String>,
    /// Branch name.
    pub branch: Option<String>,
    /// Merge base with the default branch, when known.
    pub merge_base: Option<String>,
    /// When the run started (the file's timestamp when it has one, else ingest time).
    /// Stores keep microseconds (PostgreSQL's `timestamptz` precision); finer digits are
    /// dropped. It orders the history, so it is fixed when the ingest begins.
    pub started_at: Timestamp,
    /// Where the run came from.
    pub source: Source,
    /// CI provider (`github-actions`, `gitlab-ci`, …).
    pub ci_provider: Option<String>,
    /// CI job name.
    pub job: Option<String>,
    /// The CI build the run came from: repository, build id and attempt.
    #[serde(default)]
    pub ci_run: CiRun,
    /// Worker (parallelism) count.
    pub workers: Option<u32>,
    /// The seed the run used, as the runner spells it.
    pub seed: Option<String>,
    /// CI or not, runner, OS.
    pub conditions: Conditions,
    /// Format that was read (`junit`, `libtest-json`, `go-test-json`).
    pub format: Option<String>,
    /// Producing tool, when known.
    pub producer: Option<String>,
    /// The file the results came from, as given on the command line.
    pub source_path: Option<String>,
}

/// A stored run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Store-assigned id.
    pub id: i64,
    /// What was known when it was ingested.
    #[serde(flatten)]
    pub run: NewRun,
    /// sha256 of the ingested content together with the run's identity; what makes ingest
    /// idempotent.
    pub content_key: String,
    /// How many distinct tests it holds.
    pub executions: u64,
    /// Of those, how many ended red (fail or error).
    pub red: u64,
}

/// One stored execution with the run it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredExecution {
    /// The run.
    pub run_id: i64,
    /// When the run started.
    pub started_at: Timestamp,
    /// Commit of the run.
    pub commit: Option<String>,
    /// Branch of the run.
    pub branch: Option<String>,
    /// Source of the run.
    pub source: Source,
    /// The execution as ingested (retries merged).
    pub execution: Execution,
    /// The failure's signature, as stored at ingest.
    pub signature: Option<String>,
}

/// One line of `candor tests`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestSummary {
    /// Canonical test id.
    pub test_id: String,
    /// Executions that ran (skips excluded).
    pub runs: u64,
    /// Runs that failed at least once (fail, error or flaky-pass).
    pub failures: u64,
    /// Runs skipped.
    pub skips: u64,
    /// When it last failed.
    pub last_failure: Option<Timestamp>,
    /// When it last appeared in any run.
    pub last_seen: Timestamp,
}

impl TestSummary {
    /// Passing share of the runs, `None` when it never ran.
    pub fn pass_rate(&self) -> Option<f64> {
        (self.runs > 0).then(|| (self.runs - self.failures) as f64 / self.runs as f64)
    }
}

/// One execution as a reliability window sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowEntry {
    /// The run it belongs to.
    pub run_id: i64,
    /// When that run started.
    pub started_at: Timestamp,
    /// The outcome after the run's own retries (never a skip: skips are not runs).
    pub outcome: Outcome,
}

/// A test's most recent executions that ran, newest first in run order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestWindow {
    /// Canonical test id.
    pub test_id: String,
    /// Newest first, ordered by the run's `started_at`, then by run id.
    pub entries: Vec<WindowEntry>,
}

/// What is learned about a run only by reading its file; recorded when the ingest commits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunContent {
    /// What makes the ingest idempotent; see [`crate::ingest::content_key`] for the recipe.
    pub content_key: String,
    /// Format that was read.
    pub format: Option<String>,
    /// Producing tool, when the content said.
    pub producer: Option<String>,
}

/// What one ingest did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IngestReport {
    /// The run's id (the existing run's when nothing was added).
    pub run_id: i64,
    /// False when the same content for the same run was already stored: nothing added.
    pub added: bool,
    /// Distinct tests stored (after merging retries); when nothing was added, what the
    /// existing run holds.
    pub tests: u64,
    /// Of those, how many ended red.
    pub red: u64,
}

/// Failures of the store. Messages are lowercase fragments; the CLI adds hints.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The file is not a database candor can use.
    #[error("{path} is not a SQLite database")]
    NotADatabase {
        /// The database file.
        path: PathBuf,
    },
    /// A newer candor wrote this database.
    #[error("{path} has schema version {found}, newer than the {supported} this candor knows")]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// Version found.
        found: i64,
        /// Newest version this build knows.
        supported: i64,
    },
    /// Another process held the database past the busy timeout.
    #[error("{path} stayed locked by another process for more than {timeout:?}")]
    Locked {
        /// The database file.
        path: PathBuf,
        /// The busy timeout that ran out.
        timeout: Duration,
    },
    /// Any other database error.
    #[error("database error in {path}")]
    Database {
        /// The database file.
        path: PathBuf,
        /// The driver's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The PostgreSQL server refused or failed a request, or could not be reached.
    #[error("{target}: {message}")]
    Server {
        /// The server's address, password hidden.
        target: String,
        /// The server's message, or what happened to the connection.
        message: String,
        /// The SQLSTATE, when the server sent one.
        code: Option<String>,
    },
    /// A `--db` value that names PostgreSQL but cannot be used as given.
    #[error("{target}: {reason}")]
    BadTarget {
        /// The value, password hidden.
        target: String,
        /// What is wrong.
        reason: String,
    },
    /// Creating the database's folder failed.
    #[error("could not create {path}")]
    Io {
        /// What could not be created.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl HistoryError {
    /// Whether SQLite could not open or write the file (`unable to open database file`,
    /// `attempt to write a readonly database`): what a read-only copy of a history gives
    /// a store that wants its `-wal` and `-shm` files.
    pub fn is_unwritable(&self) -> bool {
        let HistoryError::Database { source, .. } = self else {
            return false;
        };
        source
            .downcast_ref::<rusqlite::Error>()
            .and_then(rusqlite::Error::sqlite_error_code)
            .is_some_and(|code| {
                matches!(
                    code,
                    rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly
                )
            })
    }
}

/// A transaction that receives one file's executions. Dropping it without
/// [`IngestSession::commit`] stores nothing. Its memory does not grow with the number of
/// executions.
pub trait IngestSession {
    /// Adds one execution; a repeated test id in the same run is merged as a retry
    /// ([`Execution::absorb_retry`]).
    fn add(&mut self, execution: Execution) -> Result<(), HistoryError> {
        let signature = execution.signature();
        self.add_with_signature(execution, signature)
    }
    /// [`IngestSession::add`] for an execution whose failure signature the caller has
    /// worked out already: `signature` must be `execution.signature()`. A caller that
    /// reads on one thread and stores on another computes it where there is time to
    /// spare.
    fn add_with_signature(
        &mut self,
        execution: Execution,
        signature: Option<String>,
    ) -> Result<(), HistoryError>;
    /// Adds a batch of executions with their signatures, in order: the same as
    /// [`IngestSession::add_with_signature`] on each. A store may look the batch's tests
    /// up together (the SQLite store reaches for every name's place in its tables of
    /// names before it stores the first execution, so that the cache misses overlap
    /// instead of following one another), and may leave what it did not keep of them in
    /// `batch` for the caller to drop (the SQLite store leaves the texts it only read:
    /// whoever allocated them frees them). The caller clears `batch` before reusing it.
    fn add_batch(
        &mut self,
        batch: &mut Vec<(Execution, Option<String>)>,
    ) -> Result<(), HistoryError> {
        batch
            .drain(..)
            .try_for_each(|(execution, signature)| self.add_with_signature(execution, signature))
    }
    /// Commits unless a run with the same `content_key` exists already, in which case the
    /// transaction is rolled back and the report says nothing was added and names the
    /// existing run.
    fn commit(self: Box<Self>, content: &RunContent) -> Result<IngestReport, HistoryError>;
}

/// The questions candor asks of a history, whatever stores it.
pub trait HistoryStore {
    /// Starts storing a run; see [`IngestSession`].
    fn begin_ingest<'a>(
        &'a mut self,
        run: &NewRun,
    ) -> Result<Box<dyn IngestSession + 'a>, HistoryError>;
    /// One summary per test, sorted by id; with `failing_only`, tests whose latest
    /// execution that ran (skips are not runs) was red.
    fn tests(&self, failing_only: bool) -> Result<Vec<TestSummary>, HistoryError> {
        self.tests_in(failing_only, None)
    }
    /// [`HistoryStore::tests`] over the runs whose ids are in `runs` only (`None`: every
    /// run); a test with no execution in those runs is not listed. Reliability counts the
    /// default branch's runs this way (`crate::reliability::BranchSelection`).
    fn tests_in(
        &self,
        failing_only: bool,
        runs: Option<&HashSet<i64>>,
    ) -> Result<Vec<TestSummary>, HistoryError>;
    /// A test's executions, newest first (by the run's `started_at`, then run id), at most
    /// `limit`.
    fn executions(&self, test_id: &str, limit: usize)
    -> Result<Vec<StoredExecution>, HistoryError>;
    /// Runs, newest first (by `started_at`, then id), at most `limit`.
    fn runs(&self, limit: usize) -> Result<Vec<RunRecord>, HistoryError>;
    /// One run, if it exists.
    fn run(&self, run_id: i64) -> Result<Option<RunRecord>, HistoryError>;
    /// Seconds the executions of one run that failed at least once took, summed (what
    /// `candor report` calls time lost to failures). A store may answer it without reading
    /// the failures' details; the default reads them.
    fn red_seconds(&self, run_id: i64) -> Result<f64, HistoryError> {
        Ok(self
            .run_failures(run_id)?
            .iter()
            .filter_map(|stored| stored.execution.duration)
            .sum())
    }
    /// The executions of one run that failed at least once (fail, error, flaky-pass),
    /// sorted by test id: what triage looks at after an ingest.
    fn run_failures(&self, run_id: i64) -> Result<Vec<StoredExecution>, HistoryError>;
    /// Every execution of one run, sorted by test id: what `history copy` moves.
    fn run_executions(&self, run_id: i64) -> Result<Vec<StoredExecution>, HistoryError>;
    /// Every test's window: its last `size` executions that ran (skips excluded), newest
    /// first in run order, handed to `visit` one test at a time in test-id order so that
    /// memory need not hold every window at once, let alone the history. Tests with no
    /// execution that ran are not visited.
    fn windows(&self, size: usize, visit: &mut dyn FnMut(TestWindow)) -> Result<(), HistoryError> {
        self.windows_in(size, None, visit)
    }
    /// [`HistoryStore::windows`] over the runs whose ids are in `runs` only (`None`: every
    /// run): each window is the test's last `size` executions that ran in those runs.
    fn windows_in(
        &self,
        size: usize,
        runs: Option<&HashSet<i64>>,
        visit: &mut dyn FnMut(TestWindow),
    ) -> Result<(), HistoryError>;
}
