//! Errors that end a workflow, each with the hint that tells the reader what to do next.
//! Failures of a single input file are not here: `ingest` reports them and goes on.

use std::path::PathBuf;

use crate::history::HistoryError;
use crate::ingest::{IngestError, InputError};
use crate::ledger::LedgerError;
use crate::runner::RunnerError;

/// Why a command stopped. Every one of them exits with
/// [`crate::exit_codes::USAGE_OR_INPUT`].
#[derive(Debug, thiserror::Error)]
pub enum AppError {
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
    /// `history prune --older-than` got something that is not a positive age.
    #[error("--older-than {given}: {reason}")]
    BadAge {
        /// The age as given.
        given: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `history prune` on a store that has no partitions to drop.
    #[error("{} is a SQLite history; prune drops the monthly partitions of a PostgreSQL history", path.display())]
    PruneNeedsPostgres {
        /// The history.
        path: PathBuf,
    },
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
    /// A result file to triage could not be read.
    #[error(transparent)]
    Results(IngestError),
    /// `triage` without files found no run to triage.
    #[error("no run to triage in {}", path.display())]
    NoRuns {
        /// The history.
        path: PathBuf,
    },
    /// The ledger is damaged or could not be written.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The runner could not be chosen, started or asked.
    #[error(transparent)]
    Runner(#[from] RunnerError),
    /// The runner ended without writing the report candor asked for.
    #[error("the runner wrote no results to {}", report.display())]
    NoReport {
        /// Where the report was to be.
        report: PathBuf,
        /// The runner's logs.
        logs: Vec<PathBuf>,
    },
    /// `rerun` outside a repository with a commit: a ledger line names the commit.
    #[error("no commit to record: a rerun's ledger line names the commit it reran")]
    NoCommit,
    /// `--change` named no commit.
    #[error("{0}")]
    BadChange(String),
    /// `rerun` found no red execution of the test.
    #[error("no red execution of `{id}` in the history")]
    NoRedExecution {
        /// The test.
        id: String,
    },
    /// A file to read could not be read.
    #[error("could not read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The demo could not set up its repository.
    #[error("the demo could not {what}")]
    Demo {
        /// What it was doing.
        what: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// `compare` and `repro` found no merge base to measure against.
    #[error("no merge base of HEAD with {against}")]
    NoMergeBase {
        /// The branch or commit it was taken with.
        against: String,
    },
    /// git failed while candor prepared the merge base's worktree.
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    /// The test is not in the runner's report on one side.
    #[error(
        "the runner ran no test `{test}` on the {side} ({commit}){}",
        crate::runner::ran::quoted_suffix(said)
    )]
    TestMissing {
        /// The test.
        test: String,
        /// `base` or `branch`.
        side: &'static str,
        /// The side's commit.
        commit: String,
        /// The run's log.
        log: PathBuf,
        /// What the runner said about the id, when it said something.
        said: Vec<String>,
    },
    /// One side of `compare` or `repro` could not be measured: its runner could not run,
    /// or it ran the other side's code. No verdict; that run is not stored.
    #[error(
        "the {side} ({commit}) could not be measured: the comparison has no verdict, and this run was not stored"
    )]
    SideNotMeasured {
        /// `base` or `branch`.
        side: &'static str,
        /// The side's commit.
        commit: String,
        /// Why.
        #[source]
        source: RunnerError,
    },
    /// The test was skipped on one side: nothing to measure.
    #[error("`{test}` was skipped on the {side}; a skipped run measures nothing")]
    TestSkipped {
        /// The test.
        test: String,
        /// `base` or `branch`.
        side: &'static str,
        /// The run's log.
        log: PathBuf,
    },
    /// Run records could not be read.
    #[error(transparent)]
    Records(#[from] crate::records::RecordError),
    /// Writing the output failed for another reason than the reader going away.
    #[error("could not write the output")]
    Output(#[from] std::io::Error),
    /// A merge-lane step could not read what it needs.
    #[error(transparent)]
    Gate(#[from] crate::gate::GateError),
    /// `lint diff` found no commits to compare.
    #[error("cannot tell which change to check: {0}")]
    NoChange(String),
    /// The repository is in the middle of a rebase, merge, cherry-pick, revert or
    /// sequence of them: HEAD is not the change a verdict would describe.
    #[error(
        "the repository is in the middle of {}: HEAD is not a finished commit of the change, so `candor {command}` cannot judge it; nothing was run or written",
        operation.described()
    )]
    Unfinished {
        /// What git is in the middle of.
        operation: crate::git::Operation,
        /// The command refused.
        command: &'static str,
    },
    /// Files under a lane folder could not be read.
    #[error(transparent)]
    ReadFiles(#[from] crate::gate::locks::ReadError),
    /// `lock cassettes` found cassettes that are not valid (each was printed).
    #[error("{count} {} not valid cassette.v1; nothing was written", if *count == 1 { "cassette is" } else { "cassettes are" })]
    InvalidCassettes {
        /// How many.
        count: usize,
    },
    /// `order --from` names a results file that does not hold the test.
    #[error("`{id}` is not in {}", file.display())]
    NotInResults {
        /// The test.
        id: String,
        /// The file.
        file: PathBuf,
    },
    /// A write would leave the repository (a `..`, or a symlink out of it).
    #[error(transparent)]
    Confine(#[from] crate::confine::ConfineError),
    /// The policy could not be read from where it is taken.
    #[error(transparent)]
    Policy(#[from] crate::policy::PolicyError),
    /// `rerun --policy worktree`: a rerun spends a budget the change must not set itself.
    #[error(
        "`candor rerun` refuses --policy worktree: a rerun is judged by the merge base's policy, never the change's"
    )]
    RerunWorktreePolicy,
    /// `rerun` in a repository where HEAD has no merge base to take the policy from.
    #[error("no merge base to read the rerun policy from: {0}")]
    NoPolicyBase(String),
    /// A path candor will not write or remove through.
    #[error("{} {why}", path.display())]
    Unsafe {
        /// The path.
        path: PathBuf,
        /// Why not.
        why: &'static str,
    },
    /// An instruction file's candor block cannot be found unambiguously.
    #[error("{}:{source}", path.display())]
    AgentsMarkers {
        /// The file.
        path: PathBuf,
        /// Where the markers go wrong.
        source: crate::agents::SpliceError,
    },
    /// `order` found that the test does not run alone.
    #[error(
        "`{id}` did not run: the runner's reports do not hold it{}",
        crate::runner::ran::quoted_suffix(said)
    )]
    TestDidNotRun {
        /// The test.
        id: String,
        /// The first probe's log.
        log: Option<PathBuf>,
        /// What the runner said about the id, when it said something.
        said: Vec<String>,
    },
}

impl AppError {
    /// What to do next, when candor can tell.
    pub fn hint(&self) -> Option<String> {
        match self {
            AppError::CurrentDir(_) => Some("run candor from a directory that exists".into()),
            AppError::NoHistory { .. } => Some(
                "store results first with `candor ingest FILE...`, or point --db (or CANDOR_DB) at an existing history"
                    .into(),
            ),
            AppError::History(error) => history_hint(error),
            AppError::BadAge { .. } => Some(
                "give a positive age in days, weeks or months: --older-than 180d, 26w or '6 months'".into(),
            ),
            AppError::PruneNeedsPostgres { .. } => Some(
                "a SQLite history is one machine's file: start a fresh one (move it aside) to drop its past".into(),
            ),
            AppError::UnknownTest { closest, .. } if closest.is_empty() => {
                Some("`candor tests` lists every test id the history knows".into())
            }
            AppError::UnknownTest { closest, .. } => {
                let quoted: Vec<String> = closest.iter().map(|id| format!("`{id}`")).collect();
                Some(format!("did you mean {}?", quoted.join(", ")))
            }
            AppError::Inputs(_) => {
                Some("give result files, directories that hold them, or glob patterns".into())
            }
            AppError::Config(error) => Some(error.hint()),
            AppError::ReliabilityFile(error) => Some(error.hint().to_owned()),
            AppError::Write { .. } => {
                Some("check that the folder exists and can be written; nothing was changed".into())
            }
            AppError::AgentsMarkers { .. } => Some(
                "leave one `<!-- candor:begin -->` line and one `<!-- candor:end -->` line after it (or neither), then run `candor agents` again; nothing was written".into(),
            ),
            AppError::Unsafe { .. } => Some(
                "make it a real folder of the repository (or remove it), then run the command again"
                    .into(),
            ),
            AppError::ConfigExists { .. } => Some(
                "edit it by hand, compare with `candor init --print`, or replace it with `candor init --force`"
                    .into(),
            ),
            AppError::Results(error) => error.hint().map(str::to_owned),
            AppError::NoRuns { .. } => Some(
                "run the suite with `candor test`, store results with `candor ingest FILE...`, or give result files to `candor triage`".into(),
            ),
            AppError::Ledger(error) => Some(error.hint().to_owned()),
            AppError::Runner(RunnerError::Process(
                crate::runner::process::ProcessError::Spawn { program, .. },
            )) => Some(format!(
                "install `{program}` or put it on PATH, or name the command in candor.toml's [runner] (docs/configuration.md)"
            )),
            AppError::Runner(error) | AppError::SideNotMeasured { source: error, .. }
                if runner_hint(error).is_some() =>
            {
                runner_hint(error)
            }
            AppError::SideNotMeasured { .. } => Some(
                "the runner's logs are under .candor/runs; fix what it said on that side, then compare again".into(),
            ),
            AppError::Runner(RunnerError::NotATestId { .. }) => Some(
                "give the id as `candor tests` lists it; the runner must be the one that ran it".into(),
            ),
            AppError::Runner(_) => Some(
                "set [runner] kind and command in candor.toml (docs/configuration.md); the runner's logs are under .candor/runs".into(),
            ),
            AppError::NoReport { logs, .. } => Some(match logs.first() {
                Some(log) => format!("the runner's log says why: {}", log.display()),
                None => "the runner did not start".into(),
            }),
            AppError::NoCommit => {
                Some("run it in a git repository with at least one commit".into())
            }
            AppError::BadChange(_) => {
                Some("give the change's base commit, or leave --change out to use the merge base".into())
            }
            AppError::NoRedExecution { .. } => Some(
                "only a red test can be rerun: `candor tests --failing` lists the tests whose latest run was red".into(),
            ),
            AppError::Read { .. } => Some("check that the file exists and is readable".into()),
            AppError::Demo { .. } => Some(
                "the demo needs git and cargo on PATH and a writable temporary directory".into(),
            ),
            AppError::NoMergeBase { .. } => Some(
                "fetch the base branch (a shallow clone may lack it) or name one with --base".into(),
            ),
            AppError::Git(_) => Some(
                "check the repository with `git worktree list`; candor's worktree is under .candor/worktrees and can be removed".into(),
            ),
            AppError::TestMissing { log, side, .. } => Some(format!(
                "check the id with `candor tests`; a test the change adds does not exist on the base, so there is nothing to compare ({side} log: {})",
                log.display()
            )),
            AppError::TestSkipped { log, .. } => Some(format!(
                "remove the skip, or compare a test that runs; log: {}",
                log.display()
            )),
            AppError::Records(_) => Some(
                "give `.record.json` files written by candor compare, repro or the gate, or the folders under .candor/runs that hold them".into(),
            ),
            AppError::Output(_) => None,
            AppError::Gate(error) => error.hint(),
            AppError::NoChange(_) => Some(
                "run it in a git repository on the change's branch, or name the base with --base REF".into(),
            ),
            AppError::Unfinished { operation, command } => Some(format!(
                "{}, then run `candor {command}` again",
                operation.way_out()
            )),
            AppError::ReadFiles(_) => Some("check that the folder is readable".into()),
            AppError::InvalidCassettes { .. } => Some(
                "fix each cassette named above or record it again; docs/gate.md describes cassette.v1".into(),
            ),
            AppError::NotInResults { .. } => Some(
                "give the results file of a run that ran the test, under the id the file uses (`candor tests` lists ids)".into(),
            ),
            AppError::Confine(error) => Some(error.hint().to_owned()),
            AppError::Policy(error) => Some(format!(
                "{} (the policy is read from the merge base; fix it there, or use --policy worktree to judge by the work tree's)",
                error.hint()
            )),
            AppError::RerunWorktreePolicy => Some(
                "commit the policy change and have it merged, or use `candor triage --policy worktree` to see the local verdict".into(),
            ),
            AppError::NoPolicyBase(_) => Some(
                "name the change's base with --change COMMIT (or fetch the default branch, origin/HEAD, main or master)".into(),
            ),
            AppError::TestDidNotRun { log, .. } => Some(match log {
                Some(log) => format!(
                    "check the id (`candor tests` lists them); the runner's log says what it ran: {}",
                    log.display()
                ),
                None => "check the id (`candor tests` lists them)".into(),
            }),
        }
    }
}

/// The next step for a runner that could not run or ran the other side's code.
fn runner_hint(error: &RunnerError) -> Option<String> {
    match error {
        RunnerError::CouldNotRun(not_run) if not_run.unknown_test => Some(format!(
            "check the id with `candor tests`; this run was not judged or stored (log: {})",
            not_run.log.display()
        )),
        RunnerError::CouldNotRun(not_run) => Some(format!(
            "this is not a red test: fix what {} said, then run again; this run was not judged or stored (log: {})",
            not_run.runner,
            not_run.log.display()
        )),
        RunnerError::OtherSide(crossing) => Some(format!(
            "each side must run its own code (for Python, candor puts the side's source roots first on PYTHONPATH: {}); find what points the run at the other tree (an editable install's .pth file, a conftest.py or an absolute `pythonpath` that edits sys.path, an absolute path dependency) and make it relative to the tree, then run again (docs/compare.md)",
            crossing.own.display()
        )),
        _ => None,
    }
}

/// The next step for a store failure.
pub fn history_hint(error: &HistoryError) -> Option<String> {
    let hint = match error {
        HistoryError::NotADatabase { .. } => {
            "point --db (or CANDOR_DB) at a candor history, or move this file out of the way"
        }
        HistoryError::TooNew { .. } => {
            "upgrade candor to use this history; this version leaves it untouched"
        }
        HistoryError::Locked { .. } => {
            "another candor is writing to it; run this again when that one is done"
        }
        HistoryError::Io { .. } => {
            "check that the folder can be created and written, or choose another with --db"
        }
        HistoryError::Database { .. } => return None,
        HistoryError::BadTarget { .. } => {
            "fix --db (or CANDOR_DB): postgres://USER@HOST:PORT/DB, a key=value string, or service=NAME (docs/postgres.md)"
        }
        HistoryError::Server { code, message, .. } => {
            return Some(server_hint(code.as_deref(), message));
        }
    };
    Some(hint.to_owned())
}

/// The next step for a PostgreSQL failure, by SQLSTATE (or, without one, the connection's
/// fate). Nothing of an unfinished ingest is stored, so "again" is always safe.
fn server_hint(code: Option<&str>, message: &str) -> String {
    match code {
        Some("42501") => format!(
            "the role candor connects as lacks a privilege ({message}); grant it as docs/postgres.md (Roles) shows: a writer needs SELECT and INSERT on runs, tests and executions and USAGE on their sequences, and only the tables' owner creates a new month's partition or prunes"
        ),
        Some("57014") => "a statement ran past statement_timeout; raise it for candor's role (ALTER ROLE … SET statement_timeout = '5min') and run the command again: nothing of it was stored".into(),
        Some("57P01" | "57P02" | "57P03") => "the server shut down or restarted; nothing of this command was stored: run it again once the server is up".into(),
        Some("28P01" | "28000") => "check the user and password (in the URL, PGUSER/PGPASSWORD, or the service file)".into(),
        Some("3D000") => "the database does not exist: create it (createdb NAME) or fix the database name in --db".into(),
        Some("53300") => "the server has no connection to spare; raise max_connections or use a pooler, then run it again".into(),
        Some(_) => "see the server's message; nothing of an unfinished ingest was stored".into(),
        None if message.contains("certificate") || message.contains("UnknownIssuer") => "check sslmode and sslrootcert (the PEM file of the CA that signed the server's certificate), and that the host in --db is a name the certificate holds (docs/postgres.md, TLS)".into(),
        None if message.starts_with("could not connect") => "check the host and port in --db (or CANDOR_DB, PGHOST, PGPORT) and that the server runs and accepts connections".into(),
        None => "the connection broke; nothing of an unfinished ingest was stored: run the command again".into(),
    }
}
