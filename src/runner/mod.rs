//! Running a repository's tests: one adapter per runner (pytest, cargo test, cargo-nextest,
//! go test, jest, vitest, Playwright Test, mocha, node's test runner, a user's command)
//! that runs the suite or exactly one test with retries and caches off, a recorded seed and
//! a machine-readable report in a scratch directory, and lists the tests under the same
//! canonical ids the result parsers give (`results::ids`). Children run through the
//! [`process`] layer behind the
//! [`Executor`](process::Executor) trait. Reading the reports is `results`' job, deciding
//! anything about them is not this module's, except whether the runner ran at all
//! ([`ran`]: a runner that could not run is an error, never a report of red tests) and,
//! for one side of a comparison, whether it ran that side's own code ([`isolation`]).
//!
//! | runner | suite | one test | retries, caches off | seed | workers | listing |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | pytest | `--junitxml=PATH -o junit_family=xunit1` | node id after `--` (ids starting with `-` refused) | `-p no:rerunfailures`, `PYTEST_ADDOPTS` removed; `-p no:cacheprovider`; `--no-cov` for chosen tests when pytest-cov is there | `-p randomly --randomly-seed=N` when `pytest -VV` lists pytest-randomly | xdist `-n` in the prefix, else 1 | `--collect-only -q`, file = node id's path |
//! | cargo | per test target `cargo test -p P --lib\|--bin N\|--test N -- -Z unstable-options --format json --report-time`, names prefixed with the binary id; then per library `cargo test --doc -p P -- …`, names prefixed with `P::doc` | that target, `--exact -- NAME` (a doc test: `--doc -p P -- ITEM`, the report cut to it) | no retries in libtest; cargo's build cache is not a result cache | `--shuffle-seed N` | `--test-threads`, `RUST_TEST_THREADS`, else CPUs | per target `-- --list --format terse`; integration tests' file from `cargo metadata` |
//! | nextest | JUnit through a generated tool config (profile `candor`, store in scratch) | `-p P --lib\|… -- --exact NAME` | `--retries 0`, profile `retries = 0` | none: nextest has no shuffle | `-j`, `NEXTEST_TEST_THREADS`, else CPUs | `cargo nextest list --message-format json` |
//! | go | `go test -json -count=1 ./...`, stdout is the report | `-run '^Test$/^sub$' PKG`, each level escaped | no retries in go; `-count=1` | `-shuffle=N` | `-p`, `GOMAXPROCS`, else CPUs | `go test -json -list . ./...` (top-level tests, no files) |
//! | command | template without elements naming `{test}` | `{test}` filled in, one pass | the user's business | `{seed}` when the template has it | unknown | not supported |
//! | jest | `--ci --json --testLocationInResults --outputFile=PATH`, read natively (`results::jestjson`) | `--testNamePattern=^…$` (each title escaped for a JavaScript `RegExp`) `--runTestsByPath -- FILE`, the report cut to the test | `jest.retryTimes` is test code: `invocations` read as retries | `--randomize --seed=N` | `--maxWorkers`, `--runInBand`, else CPUs − 1 | a run whose `--testNamePattern=(?!)` runs nothing |
//! | vitest | `run --retry=0 --reporter=default --reporter=json --outputFile.json=PATH`, jest's JSON | `--testNamePattern=^…$` and the file as a path filter (no `-` first) | `--retry=0` | `--sequence.shuffle --sequence.seed=N` | CPUs − 1 | as jest |
//! | playwright | `test --reporter=list,json --output=DIR`, `PLAYWRIGHT_JSON_OUTPUT_FILE=PATH`, read natively (`results::playwrightjson`) | `--workers=1 --project=P --grep=/…$/ /(?:^\|\/)FILE$/`, the report cut to the test | `--retries=0` | none: Playwright has no shuffle | `--workers`/`-j`, else CPUs / 2 | `--list --reporter=json` |
//! | mocha | `--reporter PATH` (candor's reporter, `js_reporter`), jest's JSON | `--grep ^…$` (the full title, each title escaped) `-- FILE` | `--retries 0`; a test's own `this.retries` read as retries | none: mocha has no shuffle | 1 (`--parallel`: `--jobs`, else CPUs − 1) | `--dry-run` |
//! | node | `--test-reporter=PATH --test-reporter-destination=REPORT` (candor's reporter), jest's JSON | `--test-name-pattern=^…$` (own or full name) and the file | none: node has no retries | none: node 20 has no shuffle | `--test-concurrency`, else CPUs − 1 | `--test-name-pattern=(?!)` |
//!
//! All runners side by side, with the ones candor only ingests: docs/runners.md.
//!
//! For `candor order` ([`Adapter::run_ordered`], [`Adapter::run_repeated`],
//! [`Adapter::process_scope`]; docs/order.md):
//!
//! | runner | one process holds | ordered run ("as given") | shuffled run | repeated run |
//! | --- | --- | --- | --- | --- |
//! | pytest | the session (`-n 0` overrides an xdist `-n`) | node ids in the order given after `--`; `--randomly-dont-reorganize` with pytest-randomly, whose seed still reseeds `random` | `-p randomly --randomly-seed=N` (pytest-randomly only) | `--count=N` when `pytest -VV` lists pytest-repeat |
//! | go | one package | `-run '^(A\|B)$' -shuffle=off PKG`: source order, whatever order the ids come in; a subtest runs through its top-level test | `-shuffle=N` | `-count=N` |
//! | mocha | the whole run (every file in one process) | `--grep '^(?:A\|B)$' -- FILES`: file by file, definition order | unsupported | unsupported |
//! | node | one test file (its own process) | `--test-name-pattern=^(?:A\|B)$ FILE`: definition order | unsupported | unsupported |
//! | jest, vitest | one test file (its own module registry) | `--testNamePattern=^(?:A\|B)$ --runTestsByPath -- FILE`: definition order, whatever order the ids come in | `--randomize --seed=N` | unsupported |
//! | playwright | one project's file in one worker (until a test fails) | `--workers=1 --project=P --grep=… FILE`: definition order, whatever order the ids come in | unsupported | unsupported (`--repeat-each` gives each copy its own worker) |
//! | cargo, nextest, command | — | unsupported | unsupported | unsupported |
//!
//! For the merge lane's batched replays ([`Adapter::run_batch`],
//! [`Adapter::batch_ordering`]; docs/runners.md): pytest runs a batch in the order given;
//! cargo (one process per test target, exact filters), go (one `-run` alternation per
//! package), both running test binaries built once per lane (`cargo test --no-run`, `go
//! test -c`) as cargo and `go test` would start them, jest, vitest, mocha, node and Playwright (one title pattern for the
//! whole batch, refused where it ran a test outside the batch in a process one of the
//! batch's shares) in their own order; nextest each test in its own process.

mod cargo;
mod command;
pub mod fake;
mod go;
pub mod go_keep;
pub mod isolation;
mod jest;
mod js_reporter;
mod mocha;
mod nextest;
mod node;
pub mod package_json;
mod playwright;
pub mod probe_cache;
pub mod process;
mod pytest;
pub mod ran;

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::results::Format;
use process::{DEFAULT_GRACE, Executor, Invocation, ProcessError, ProcessOutcome};

pub use cargo::{CargoTest, be_rustdoc};
pub use command::UserCommand;
pub use go::GoTest;
pub use isolation::{Crossing, Isolation};
pub use jest::Jest;
pub use mocha::Mocha;
pub use nextest::Nextest;
pub use node::NodeTest;
pub use playwright::Playwright;
pub use pytest::Pytest;
pub use ran::NotRun;

/// The running `candor` binary, when this process is one: go's keeper of test binaries
/// (`go_keep`) and the stand-in for rustdoc that lets cargo's doc tests report libtest
/// JSON ([`be_rustdoc`]). The library on its own has none.
static OWN_PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Makes `program` (the running `candor` binary) this process's own program.
pub fn set_own_program(program: PathBuf) {
    let _ = OWN_PROGRAM.set(program);
}

/// The running `candor` binary, when [`set_own_program`] named it.
fn own_program() -> Option<&'static Path> {
    OWN_PROGRAM.get().map(PathBuf::as_path)
}

/// The runners candor drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunnerKind {
    /// pytest, reporting JUnit XML.
    Pytest,
    /// `cargo test` (libtest), reporting libtest JSON.
    Cargo,
    /// cargo-nextest, reporting JUnit XML.
    Nextest,
    /// `go test`, reporting `go test -json`.
    Go,
    /// Any command, from an argv template with `{test}`, `{report}` and `{seed}`.
    Command,
    /// jest, reporting jest's JSON.
    Jest,
    /// vitest, reporting jest-compatible JSON.
    Vitest,
    /// Playwright Test, reporting Playwright's JSON.
    Playwright,
    /// mocha, reporting jest-compatible JSON through candor's own reporter.
    Mocha,
    /// node's built-in test runner (`node --test`), reporting jest-compatible JSON
    /// through candor's own reporter.
    Node,
}

impl RunnerKind {
    /// Every kind, in detection order where detection applies.
    pub const ALL: [RunnerKind; 10] = [
        RunnerKind::Pytest,
        RunnerKind::Cargo,
        RunnerKind::Nextest,
        RunnerKind::Go,
        RunnerKind::Command,
        RunnerKind::Jest,
        RunnerKind::Vitest,
        RunnerKind::Playwright,
        RunnerKind::Mocha,
        RunnerKind::Node,
    ];

    /// The spelling used in `candor.toml` and stored with each run.
    pub fn as_str(self) -> &'static str {
        match self {
            RunnerKind::Pytest => "pytest",
            RunnerKind::Cargo => "cargo",
            RunnerKind::Nextest => "nextest",
            RunnerKind::Go => "go",
            RunnerKind::Command => "command",
            RunnerKind::Jest => "jest",
            RunnerKind::Vitest => "vitest",
            RunnerKind::Playwright => "playwright",
            RunnerKind::Mocha => "mocha",
            RunnerKind::Node => "node",
        }
    }

    /// Whether the runner is a JavaScript one, installed in the repository's
    /// `node_modules` (node's test runner is node itself, on `PATH`).
    pub fn is_javascript(self) -> bool {
        matches!(
            self,
            RunnerKind::Jest
                | RunnerKind::Vitest
                | RunnerKind::Playwright
                | RunnerKind::Mocha
                | RunnerKind::Node
        )
    }

    /// Parses the spelling back.
    pub fn from_str_opt(text: &str) -> Option<RunnerKind> {
        RunnerKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// The command prefix used when `[runner] command` does not give one; empty for
    /// `command`, which has no usual command. A JavaScript runner is the repository's own
    /// install (`node_modules/.bin/jest`, resolved against the repository root), never
    /// `npx`, which downloads a package it does not find.
    pub fn default_command(self) -> Vec<String> {
        strings(match self {
            RunnerKind::Pytest => &["python3", "-m", "pytest"],
            RunnerKind::Cargo => &["cargo", "test"],
            RunnerKind::Nextest => &["cargo", "nextest", "run"],
            RunnerKind::Go => &["go", "test"],
            RunnerKind::Command => &[],
            RunnerKind::Jest => &["node_modules/.bin/jest"],
            RunnerKind::Vitest => &["node_modules/.bin/vitest", "run"],
            RunnerKind::Playwright => &["node_modules/.bin/playwright", "test"],
            RunnerKind::Mocha => &["node_modules/.bin/mocha"],
            RunnerKind::Node => &["node", "--test"],
        })
    }
}

impl fmt::Display for RunnerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `candor.toml`'s `[runner]`, as the policy module reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunnerConfig {
    /// Which runner; `None` detects it from the repository's files.
    pub kind: Option<RunnerKind>,
    /// The command prefix (`["uv", "run", "pytest"]`, `["cargo", "test", "--features",
    /// "x"]`), or for `command` the whole argv template. `None`: the runner's usual
    /// command.
    pub command: Option<Vec<String>>,
    /// Wall-clock limit of each runner process `candor test` and `candor rerun` start.
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL once the limit passed.
    pub grace: Duration,
}

impl RunnerConfig {
    /// Default time limit of one runner process: generous for a whole suite, and still a
    /// limit, so a hung test cannot hold a CI job until the CI kills it without a record.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3_600);
    /// Default grace between SIGTERM and SIGKILL.
    pub const DEFAULT_GRACE: Duration = Duration::from_secs(10);
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            kind: None,
            command: None,
            timeout: RunnerConfig::DEFAULT_TIMEOUT,
            grace: RunnerConfig::DEFAULT_GRACE,
        }
    }
}

/// Where and how runs happen: the repository, a scratch directory for reports and logs,
/// the executor and the time limit of each child process.
pub struct Context<'a> {
    /// The repository root; every child runs there.
    pub repo_root: PathBuf,
    /// Where reports, logs and generated configuration go. Created on demand.
    pub scratch: PathBuf,
    /// Runs the children.
    pub executor: &'a dyn Executor,
    /// Wall-clock limit of each child process (a suite of several processes gets it for
    /// each); `None`: no limit.
    pub timeout: Option<Duration>,
    /// Time between SIGTERM and SIGKILL after the timeout.
    pub grace: Duration,
    /// Whether children get the merge lane's pinned environment ([`PINNED_ENVIRONMENT`]).
    pub pinned_environment: bool,
    /// Set when the run is one side of a comparison: the side's own tree and the trees
    /// it must not run code from.
    pub isolation: Option<Isolation>,
    /// Whether a runner's probe may be answered from what an earlier run remembered
    /// ([`probe_cache`]); never for the merge lane, whose work tree is the agent's.
    pub remembered_probes: bool,
    sequence: AtomicU32,
}

/// What the merge lane's replays change in every child's environment, so that nothing
/// the user's shell or CI sets can retry, reorder or reseed a replay: variables that carry
/// runner options are removed, and Python's hash seed is pinned.
pub const PINNED_ENVIRONMENT: PinnedEnvironment = PinnedEnvironment {
    removed: &[
        "PYTEST_ADDOPTS",
        "PYTEST_PLUGINS",
        "GOFLAGS",
        "NEXTEST_RETRIES",
        "NEXTEST_PROFILE",
        "NEXTEST_TEST_THREADS",
        "RUST_TEST_THREADS",
        "RUST_TEST_SHUFFLE",
        "RUST_TEST_SHUFFLE_SEED",
        "CARGO_BUILD_RUSTFLAGS",
        // rustdoc's flags carry the doc tests' runner options (`--test-args --skip sub`).
        "RUSTDOCFLAGS",
        "CARGO_BUILD_RUSTDOCFLAGS",
        "CARGO_ENCODED_RUSTDOCFLAGS",
    ],
    set: &[("PYTHONHASHSEED", "0"), ("PYTHONDONTWRITEBYTECODE", "1")],
};

/// Variables removed from and set in a child's environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinnedEnvironment {
    /// Removed.
    pub removed: &'static [&'static str],
    /// Set, name and value.
    pub set: &'static [(&'static str, &'static str)],
}

impl<'a> Context<'a> {
    /// A context with no timeout and the default grace period.
    pub fn new(
        repo_root: impl Into<PathBuf>,
        scratch: impl Into<PathBuf>,
        executor: &'a dyn Executor,
    ) -> Self {
        Context {
            repo_root: repo_root.into(),
            scratch: scratch.into(),
            executor,
            timeout: None,
            grace: DEFAULT_GRACE,
            pinned_environment: false,
            isolation: None,
            remembered_probes: false,
            sequence: AtomicU32::new(0),
        }
    }

    /// The same context for one side of a comparison: runs use the side's own code, and a
    /// run that used code of a `foreign` tree is refused ([`RunnerError::OtherSide`]).
    #[must_use]
    pub fn with_isolation(mut self, foreign: &[PathBuf]) -> Self {
        self.isolation = Some(Isolation::new(&self.repo_root, foreign));
        self
    }

    /// The same context, building cargo's artifacts into `target` (an isolated side whose
    /// tree is not the configured target folder's: see [`Isolation::cargo_target`]).
    #[must_use]
    pub fn with_cargo_target(mut self, target: PathBuf) -> Self {
        if let Some(isolation) = &mut self.isolation {
            isolation.cargo_target = Some(target);
        }
        self
    }

    /// `CARGO_TARGET_DIR` for an isolated side that builds apart.
    fn cargo_target(&self) -> Option<String> {
        let target = self.isolation.as_ref()?.cargo_target.as_ref()?;
        Some(target.to_string_lossy().into_owned())
    }

    /// The same context, answering a runner's probe from what an earlier run remembered
    /// when nothing it depends on changed ([`probe_cache`]).
    #[must_use]
    pub fn with_remembered_probes(mut self) -> Self {
        self.remembered_probes = true;
        self
    }

    /// The same context with a time limit per child process.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Option<Duration>, grace: Duration) -> Self {
        self.timeout = timeout;
        self.grace = grace;
        self
    }

    /// The same context, giving every child the merge lane's pinned environment.
    #[must_use]
    pub fn with_pinned_environment(mut self) -> Self {
        self.pinned_environment = true;
        self
    }

    /// A fresh path in the scratch directory, numbered so that nothing is overwritten:
    /// `003-name`.
    pub fn scratch_path(&self, name: &str) -> PathBuf {
        let number = self.sequence.fetch_add(1, Ordering::Relaxed) + 1;
        self.scratch.join(format!("{number:03}-{name}"))
    }

    /// An invocation running in the repository root, logging into a fresh scratch file,
    /// under this context's time limit.
    pub fn invocation(&self, name: &str, argv: Vec<String>) -> Invocation {
        let mut invocation = Invocation::new(
            argv,
            &self.repo_root,
            self.scratch_path(&format!("{name}.log")),
        )
        .timeout(self.timeout, self.grace);
        if self.pinned_environment {
            for name in PINNED_ENVIRONMENT.removed {
                invocation = invocation.env_remove(name);
            }
            for (name, value) in PINNED_ENVIRONMENT.set {
                invocation = invocation.env(name, value);
            }
        }
        invocation
    }

    /// Runs an invocation and records it.
    fn run(&self, invocation: Invocation) -> Result<InvocationRecord, RunnerError> {
        let outcome = self.executor.execute(&invocation)?;
        Ok(InvocationRecord {
            argv: invocation.argv,
            log: invocation.log,
            outcome,
        })
    }

    /// Runs a probe whose answer is its stdout, and returns that answer. A probe that fails
    /// is an error naming its log, unless its exit code is in `accepted`.
    fn probe(
        &self,
        name: &str,
        argv: Vec<String>,
        accepted: &[i32],
    ) -> Result<String, RunnerError> {
        let stdout = self.scratch_path(&format!("{name}.stdout"));
        let record = self.run(self.invocation(name, argv).stdout_to(&stdout))?;
        let code = record.outcome.exit_code();
        if code != 0 && !accepted.contains(&code) || record.outcome.timed_out {
            let log = read_log(&record.log);
            let stdout = read_log(&stdout);
            return Err(RunnerError::Probe {
                argv: record.argv.join(" "),
                code,
                quoted: ran::probe_lines(&format!("{log}\n{stdout}")),
                log: record.log,
            });
        }
        read_text(&stdout)
    }

    /// As [`Context::probe`] (exit 0 only), in `cwd` with `env` set: a test binary the
    /// lane built, started as its runner would start it.
    fn probe_in(
        &self,
        name: &str,
        argv: Vec<String>,
        cwd: &Path,
        env: &[(String, String)],
    ) -> Result<String, RunnerError> {
        let stdout = self.scratch_path(&format!("{name}.stdout"));
        let mut invocation = self.invocation(name, argv).stdout_to(&stdout);
        invocation.cwd = cwd.to_path_buf();
        for (variable, value) in env {
            invocation = invocation.env(variable, value);
        }
        let record = self.run(invocation)?;
        if record.outcome.exit_code() != 0 || record.outcome.timed_out {
            let log = read_log(&record.log);
            let stdout = read_log(&stdout);
            return Err(RunnerError::Probe {
                argv: record.argv.join(" "),
                code: record.outcome.exit_code(),
                quoted: ran::probe_lines(&format!("{log}\n{stdout}")),
                log: record.log,
            });
        }
        read_text(&stdout)
    }

    /// Whether a finished child ran, by `kind`'s rule (module [`ran`]); `report` is where
    /// its machine-readable output went.
    #[expect(
        clippy::unused_self,
        reason = "a method of the context, like `check_frames`, so adapters call both alike"
    )]
    fn check_ran(
        &self,
        kind: RunnerKind,
        record: &InvocationRecord,
        report: &Path,
    ) -> Result<(), RunnerError> {
        let log = read_log(&record.log);
        let bytes = fs_err::read(report).unwrap_or_default();
        let finished = ran::Finished {
            exit_code: record.outcome.exit_code(),
            timed_out: record.outcome.timed_out,
            log: &log,
            report: (!bytes.is_empty()).then_some(bytes.as_slice()),
        };
        let verdict = match kind {
            RunnerKind::Pytest => ran::pytest(&finished),
            RunnerKind::Cargo => ran::cargo(&finished),
            RunnerKind::Nextest => ran::nextest(&finished),
            RunnerKind::Go => ran::go(&finished),
            RunnerKind::Command => ran::command(&finished),
            RunnerKind::Jest => ran::jest(&finished),
            RunnerKind::Vitest => ran::vitest(&finished),
            RunnerKind::Playwright => ran::playwright(&finished),
            RunnerKind::Mocha => ran::mocha(&finished),
            RunnerKind::Node => ran::node(&finished),
        };
        match ran::not_run(kind, record.log.clone(), verdict) {
            Some(not_run) => Err(RunnerError::CouldNotRun(Box::new(not_run))),
            None => Ok(()),
        }
    }

    /// Whether a build of test binaries the lane runs itself (`what`, as a reader would
    /// type it) succeeded ([`ran::build`]): else no test of it can run.
    #[expect(
        clippy::unused_self,
        reason = "a method of the context, like `check_ran`, so adapters call both alike"
    )]
    fn check_built(
        &self,
        kind: RunnerKind,
        what: &str,
        record: &InvocationRecord,
    ) -> Result<(), RunnerError> {
        let log = read_log(&record.log);
        let finished = ran::Finished {
            exit_code: record.outcome.exit_code(),
            timed_out: record.outcome.timed_out,
            log: &log,
            report: None,
        };
        match ran::not_run(kind, record.log.clone(), ran::build(kind, what, &finished)) {
            Some(not_run) => Err(RunnerError::CouldNotRun(Box::new(not_run))),
            None => Ok(()),
        }
    }

    /// For one side of a comparison: no failure's frame lies in another side's tree.
    fn check_frames(&self, report: &RunReport) -> Result<(), RunnerError> {
        let Some(isolation) = &self.isolation else {
            return Ok(());
        };
        let Ok(file) = fs_err::File::open(&report.report) else {
            return Ok(());
        };
        // Paths as printed: the check resolves them against the side's tree itself.
        let Ok((executions, _)) =
            crate::results::parse_all(file, &crate::results::ParseOptions::default())
        else {
            return Ok(());
        };
        isolation
            .check_frames(&executions)
            .map_err(|crossing| RunnerError::OtherSide(Box::new(crossing)))
    }
}

/// A log's text: all of it up to [`LOG_READ_BYTES`], else its head and tail, where runners
/// print their errors and summaries.
fn read_log(path: &Path) -> String {
    let Ok(bytes) = fs_err::read(path) else {
        return String::new();
    };
    if bytes.len() <= LOG_READ_BYTES {
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    let half = LOG_READ_BYTES / 2;
    let head = String::from_utf8_lossy(&bytes[..half]);
    let tail = String::from_utf8_lossy(&bytes[bytes.len() - half..]);
    format!("{head}\n{tail}")
}

/// How much of a log is read for the runner's error lines.
const LOG_READ_BYTES: usize = 8 << 20;

fn read_text(path: &Path) -> Result<String, RunnerError> {
    let bytes = fs_err::read(path)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What one run asks for beyond the test selection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// The seed to use where the runner has one; `None`: candor picks one (and records it).
    pub seed: Option<u64>,
}

impl RunOptions {
    fn seed(self) -> u64 {
        self.seed.unwrap_or_else(pick_seed)
    }
}

/// A seed below 2^32: pytest-randomly hands it to NumPy, which refuses larger ones, and
/// every runner accepts it.
pub fn pick_seed() -> u64 {
    RandomState::new().build_hasher().finish() % (1 << 32)
}

/// The seed a run used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Seed {
    /// The number.
    pub value: u64,
    /// The argument that passed it, as the runner spells it (`--randomly-seed=42`).
    pub argument: String,
    /// What the seed fixes and what it does not, in one sentence.
    pub controls: &'static str,
}

/// Whether and how a runner takes a seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SeedSupport {
    /// It takes one; the sentence says what it controls.
    Controls(&'static str),
    /// It has none; the sentence says why and what order tests run in.
    None(&'static str),
}

/// One child process of a run, as it was run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InvocationRecord {
    /// Exactly the arguments the child received.
    pub argv: Vec<String>,
    /// Its log: header, output, how it ended.
    pub log: PathBuf,
    /// How it ended.
    pub outcome: ProcessOutcome,
}

/// What a run produced and how to reproduce it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunReport {
    /// The runner.
    pub runner: RunnerKind,
    /// The machine-readable results (it may be missing or empty when the runner failed
    /// before writing it; the logs say why).
    pub report: PathBuf,
    /// The report's format, when the runner's is known (`None` for a user's command).
    pub format: Option<Format>,
    /// The seed passed to the runner, if it takes one.
    pub seed: Option<Seed>,
    /// How many tests may run at once, as the runner will decide it.
    pub workers: Option<u32>,
    /// Every child process, in order.
    pub invocations: Vec<InvocationRecord>,
    /// What the run left out and why, for the reader (a library whose doc tests cargo
    /// does not run).
    pub warnings: Vec<String>,
}

impl RunReport {
    /// The first non-zero exit code among the invocations (signals as 128+N), or 0.
    pub fn exit_code(&self) -> i32 {
        self.invocations
            .iter()
            .map(|i| i.outcome.exit_code())
            .find(|code| *code != 0)
            .unwrap_or(0)
    }

    /// Whether any invocation was stopped by the timeout.
    pub fn timed_out(&self) -> bool {
        self.invocations.iter().any(|i| i.outcome.timed_out)
    }
}

/// One test a runner can run, under its canonical id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ListedTest {
    /// The canonical id (`results::ids`), the one `run_one` accepts.
    pub id: String,
    /// The file the test is in, relative to the repository root, when the runner says.
    pub file: Option<String>,
}

/// Why a run or a listing could not happen. A test that fails is not an error: that is
/// the report's business.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// A child could not be started or watched.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// Reading a scratch file failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Nothing in the repository says which runner it uses.
    #[error(
        "no test runner found in {}: none of pyproject.toml, pytest.ini, setup.cfg, tox.ini, Cargo.toml, go.mod, or a package.json naming jest, vitest, mocha or `node --test`; set [runner] kind in candor.toml",
        root.display()
    )]
    NotDetected {
        /// The repository root.
        root: PathBuf,
    },
    /// The `[runner]` command cannot be used for this kind.
    #[error("[runner] command for {kind}: {problem}")]
    BadCommand {
        /// The runner kind.
        kind: RunnerKind,
        /// What is wrong.
        problem: String,
    },
    /// A helper command (listing, metadata, a version check) failed.
    #[error("`{argv}` failed with exit code {code} (log: {}){}", log.display(), ran::quoted_suffix(quoted))]
    Probe {
        /// The command, joined with spaces for reading only.
        argv: String,
        /// Its exit code (128+N for a signal).
        code: i32,
        /// Its error lines, as it printed them.
        quoted: Vec<String>,
        /// Its log.
        log: PathBuf,
    },
    /// The runner could not run (a build or collection error, no report, an unknown
    /// test): nothing was run that could be judged.
    #[error("{0}")]
    CouldNotRun(Box<NotRun>),
    /// One side of a comparison ran code of another side's tree.
    #[error(
        "the run in {} used code from outside its own tree: {} is {}",
        .0.own.display(),
        .0.seen_as,
        .0.file.display()
    )]
    OtherSide(Box<Crossing>),
    /// A helper command answered something candor cannot read.
    #[error("could not read the output of `{what}`: {message}")]
    Output {
        /// The command.
        what: String,
        /// What is wrong.
        message: String,
    },
    /// The id cannot name a test of this runner.
    #[error("`{id}` is not a {kind} test id: {reason}")]
    NotATestId {
        /// The id as given.
        id: String,
        /// The runner.
        kind: RunnerKind,
        /// Why.
        reason: String,
    },
    /// The runner cannot do what was asked (listing with a user's command, say).
    #[error("the {kind} runner cannot {what}")]
    Unsupported {
        /// The runner.
        kind: RunnerKind,
        /// What it cannot do.
        what: &'static str,
    },
}

/// One runner: it runs the suite or one test and lists tests. Every method runs its
/// children through the context's executor. `Send + Sync`: the merge lane runs several of
/// its processes at once (`[lane] jobs`).
pub trait Adapter: Send + Sync {
    /// Which runner this is.
    fn kind(&self) -> RunnerKind;

    /// Whether it takes a seed and what the seed controls.
    fn seed_support(&self) -> SeedSupport;

    /// Runs the whole suite.
    fn run_suite(
        &self,
        context: &Context<'_>,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError>;

    /// Runs the whole suite without collecting `files` (repository-relative test files):
    /// the merge lane's run of the tests a change did not touch, which the change's own
    /// test files must not reach. A new pytest module that patches the code under test
    /// when it is imported (`app.cart.total = sum`) made every untouched test agree with a
    /// regression in the whole suite's run. Runners that run each test file apart (jest,
    /// vitest, node's runner) or cannot leave a file out run the whole suite
    /// (docs/gate.md, "The change's test files and the untouched tests").
    fn run_suite_without(
        &self,
        context: &Context<'_>,
        options: RunOptions,
        files: &[String],
    ) -> Result<RunReport, RunnerError> {
        let _ = files;
        self.run_suite(context, options)
    }

    /// Runs exactly one test, named by its canonical id.
    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError>;

    /// Lists the tests, under the canonical ids `run_one` accepts.
    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError>;

    /// What the runner can do for `candor order`: keep an order, shuffle, repeat.
    fn order_support(&self) -> OrderSupport {
        OrderSupport::NONE
    }

    /// Which process a test runs in when the suite runs: tests with the same scope share
    /// one (and its state), tests with different scopes or `None` never do.
    fn process_scope<'t>(&self, _test_id: &'t str) -> Option<&'t str> {
        None
    }

    /// The test a run selects when asked for `test_id`, the unit `candor order` counts
    /// and bisects: the id itself, or for a runner whose subtests run only inside their
    /// parent the top-level test (go's `pkg::TestA` for `pkg::TestA/sub`).
    fn selection_unit(&self, test_id: &str) -> String {
        test_id.to_owned()
    }

    /// Runs several tests in one process, arranged as asked (see
    /// [`OrderSupport::given`] for what "as given" means for this runner). The report
    /// lists them in the order they ran.
    fn run_ordered(
        &self,
        _context: &Context<'_>,
        _test_ids: &[String],
        _arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        Err(RunnerError::Unsupported {
            kind: self.kind(),
            what: "run chosen tests together in one process in a given order",
        })
    }

    /// The command a person pastes to run these tests as [`Adapter::run_ordered`] does,
    /// without candor's report options.
    fn ordered_command(
        &self,
        _test_ids: &[String],
        _arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<Vec<String>, RunnerError> {
        Err(RunnerError::Unsupported {
            kind: self.kind(),
            what: "run chosen tests together in one process in a given order",
        })
    }

    /// The command a person pastes to run one test `count` times in one process as
    /// [`Adapter::run_repeated`] does, without candor's report options.
    fn repeated_command(
        &self,
        _test_id: &str,
        _count: u32,
        _options: RunOptions,
    ) -> Result<Vec<String>, RunnerError> {
        Err(RunnerError::Unsupported {
            kind: self.kind(),
            what: "repeat a test inside one process",
        })
    }

    /// Whether [`Adapter::run_batch`] runs several tests in one process in exactly the
    /// order given, so that the merge lane can replay its touched tests one process per
    /// round (reversing the order every other round) instead of one process per test.
    /// Runners that say no are replayed one process per test.
    fn batches(&self) -> bool {
        false
    }

    /// In what order [`Adapter::run_batch`] runs a batch's tests, and whether they share a
    /// process: the merge lane reverses every other round only where the order given is
    /// kept, and never claims a reversal a runner did not make.
    fn batch_ordering(&self) -> BatchOrdering {
        BatchOrdering::Kept
    }

    /// Runs `test_ids` together (one runner invocation per process the runner needs: a
    /// cargo test target, a go package set), in the order given where
    /// [`Adapter::batch_ordering`] says it is kept, with the seed and the pinned
    /// environment of a replay; the report holds each test's execution. Only where
    /// [`Adapter::batches`] says so.
    fn run_batch(
        &self,
        _context: &Context<'_>,
        _test_ids: &[String],
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        Err(RunnerError::Unsupported {
            kind: self.kind(),
            what: "run several tests in one process in the order given",
        })
    }

    /// Runs one test alone with the runner's reseeding of the tests' randomness turned off
    /// (pytest: `-p no:randomly`); only where [`OrderSupport::unseeded`] says so.
    fn run_unseeded(
        &self,
        _context: &Context<'_>,
        _test_id: &str,
    ) -> Result<RunReport, RunnerError> {
        Err(RunnerError::Unsupported {
            kind: self.kind(),
            what: "run a test without reseeding its randomness",
        })
    }

    /// The command a person pastes to run one test as [`Adapter::run_unseeded`] does.
    fn unseeded_command(&self, _test_id: &str) -> Result<Vec<String>, RunnerError> {
        Err(RunnerError::Unsupported {
            kind: self.kind(),
            what: "run a test without reseeding its randomness",
        })
    }

    /// Runs one test `count` times in one process (pytest-repeat's `--count`, go's
    /// `-count`); the report holds every repetition, in order.
    fn run_repeated(
        &self,
        _context: &Context<'_>,
        _test_id: &str,
        _count: u32,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        Err(RunnerError::Unsupported {
            kind: self.kind(),
            what: "repeat a test inside one process",
        })
    }
}

/// How a runner arranges the tests of a batch ([`Adapter::batch_ordering`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BatchOrdering {
    /// In exactly the order given, in one process (pytest).
    Kept,
    /// In an order of the runner's own, whatever order they are given in, sharing a
    /// process per [`Adapter::process_scope`] (libtest, go); the sentence says which order.
    Fixed(&'static str),
    /// Each test in its own process (nextest): no test can leave state in memory for
    /// another; the sentence says so.
    Isolated(&'static str),
}

/// How the tests of an ordered run are arranged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrangement {
    /// In the order given, or the runner's fixed order where it has one
    /// ([`GivenOrder::Fixed`]).
    AsGiven,
    /// Shuffled by the runner's own seed (`--randomly-seed`, `-shuffle`).
    Shuffled(u64),
}

/// What "as given" means for a runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GivenOrder {
    /// The tests run in exactly the order given.
    Kept,
    /// The tests run in an order of the runner's own; the sentence says which.
    Fixed(&'static str),
    /// The runner cannot run chosen tests together; the sentence says why.
    Unsupported(&'static str),
}

/// What a runner can do for `candor order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OrderSupport {
    /// How [`Adapter::run_ordered`] arranges [`Arrangement::AsGiven`].
    pub given: GivenOrder,
    /// Whether [`Arrangement::Shuffled`] works.
    pub shuffles: bool,
    /// Whether [`Adapter::run_repeated`] works.
    pub repeats: bool,
    /// Whether the seed also reseeds the tests' own randomness (pytest-randomly reseeds
    /// `random` before each test), so that an outcome can follow the seed.
    pub seed_reseeds_tests: bool,
    /// Whether [`Adapter::run_unseeded`] works: the test alone with the reseeding turned
    /// off (pytest's `-p no:randomly`), so a test that fails under almost every seed can
    /// be seen to pass without one.
    pub unseeded: bool,
}

impl OrderSupport {
    /// A runner that can do none of it.
    pub const NONE: OrderSupport = OrderSupport {
        given: GivenOrder::Unsupported(
            "this runner cannot run chosen tests together in one process",
        ),
        shuffles: false,
        repeats: false,
        seed_reseeds_tests: false,
        unseeded: false,
    };
}

/// Builds the adapter `[runner]` asks for, detecting the kind from the repository when it
/// does not say. Probes the runner where its options depend on what is installed
/// (pytest-randomly; whether `cargo nextest` works).
pub fn adapter(
    config: &RunnerConfig,
    context: &Context<'_>,
) -> Result<Box<dyn Adapter>, RunnerError> {
    let kind = match config.kind {
        Some(kind) => kind,
        None => detect(context)?,
    };
    // A JavaScript runner's usual command is a path in the repository: rooted like a
    // user's.
    let command = config
        .command
        .clone()
        .or_else(|| kind.is_javascript().then(|| kind.default_command()))
        .map(|argv| rooted_program(argv, &context.repo_root));
    Ok(match kind {
        RunnerKind::Pytest if context.remembered_probes => {
            Box::new(Pytest::probe_remembered(command, context)?)
        }
        RunnerKind::Pytest => Box::new(Pytest::probe(command, context)?),
        RunnerKind::Cargo => Box::new(CargoTest::new(command)?),
        RunnerKind::Nextest => Box::new(Nextest::new(command)?),
        RunnerKind::Go => Box::new(GoTest::new(command)),
        RunnerKind::Command => Box::new(UserCommand::new(command)?),
        RunnerKind::Jest => Box::new(Jest::probe(command, &context.repo_root)),
        RunnerKind::Vitest => Box::new(Jest::vitest(command)),
        RunnerKind::Playwright => Box::new(Playwright::new(command)),
        RunnerKind::Mocha => Box::new(mocha::mocha(command)),
        RunnerKind::Node => Box::new(node::node_test(command)),
    })
}

/// An adapter, its listing of the tests or why it could not list them, and what the
/// caller's work beside the listing returned (`None` when it did not run there).
pub type AdapterAndListing<T> = (
    Box<dyn Adapter>,
    Result<Vec<ListedTest>, RunnerError>,
    Option<T>,
);

/// The adapter (as [`adapter`] builds it) and its listing of the tests. With `concurrent`,
/// pytest's listing runs beside its plugin probe: `--collect-only` names the same tests
/// whatever the probe finds (it turns pytest-randomly off itself), so the merge lane waits
/// for one pytest start-up instead of two (issue #15). Once the probe has built the
/// adapter, `beside_listing` runs on this thread while the listing goes on (the merge
/// lane's base-version run needs the adapter, not the listing). Other runners, or
/// without `concurrent`, list after building and `beside_listing` is not called.
pub fn adapter_and_listing<T>(
    config: &RunnerConfig,
    context: &Context<'_>,
    concurrent: bool,
    beside_listing: impl FnOnce(&dyn Adapter) -> T,
) -> Result<AdapterAndListing<T>, RunnerError> {
    let kind = match config.kind {
        Some(kind) => Some(kind),
        None if concurrent => Some(detect(context)?),
        None => None,
    };
    let config = &RunnerConfig {
        kind,
        ..config.clone()
    };
    if !(concurrent && kind == Some(RunnerKind::Pytest)) {
        let adapter = adapter(config, context)?;
        let listed = adapter.list(context);
        return Ok((adapter, listed, None));
    }
    let command = config
        .command
        .clone()
        .map(|argv| rooted_program(argv, &context.repo_root));
    let (built, listed) = std::thread::scope(|scope| {
        let listing = scope.spawn(|| Pytest::new(command, false).list(context));
        let built = adapter(config, context).map(|adapter| {
            let beside = beside_listing(&*adapter);
            (adapter, beside)
        });
        let listed = listing
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (built, listed)
    });
    let (adapter, beside) = built?;
    Ok((adapter, listed, Some(beside)))
}

/// A program named by a relative path (`.venv/bin/python`) is the repository's own tool:
/// it is resolved against the repository root, so a run in another folder (the merge
/// base's worktree, which has no ignored files such as a virtualenv) starts the same
/// program. Which code that program imports is the side's own (`isolation`). A bare name
/// (`python3`) is left to `PATH`.
fn rooted_program(mut argv: Vec<String>, repo_root: &Path) -> Vec<String> {
    if let Some(program) = argv.first_mut() {
        let path = Path::new(program.as_str());
        if path.is_relative() && path.components().count() > 1 {
            *program = repo_root.join(path).to_string_lossy().into_owned();
        }
    }
    argv
}

/// Files that say a repository is tested with pytest.
pub const PYTEST_MARKERS: [&str; 4] = ["pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini"];

/// The runner a repository uses, from its files, in this order: a pytest configuration
/// file → pytest; `Cargo.toml` → nextest when `cargo nextest --version` works, else cargo;
/// `go.mod` → go; a `package.json` that names a JavaScript runner, or a
/// `playwright.config.*` ([`package_json::runner_in`]) → that runner.
pub fn detect(context: &Context<'_>) -> Result<RunnerKind, RunnerError> {
    let root = &context.repo_root;
    if PYTEST_MARKERS.iter().any(|name| root.join(name).is_file()) {
        return Ok(RunnerKind::Pytest);
    }
    if root.join("Cargo.toml").is_file() {
        let check = context.invocation(
            "nextest-version",
            strings(&["cargo", "nextest", "--version"]),
        );
        // Not installed is an answer, not an error.
        let installed = context
            .executor
            .execute(&check)
            .is_ok_and(|outcome| outcome.success());
        return Ok(if installed {
            RunnerKind::Nextest
        } else {
            RunnerKind::Cargo
        });
    }
    if root.join("go.mod").is_file() {
        return Ok(RunnerKind::Go);
    }
    if let Some(kind) = package_json::runner_in(root) {
        return Ok(kind);
    }
    Err(RunnerError::NotDetected { root: root.clone() })
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// The machine's parallelism, which is the default worker count of most runners.
fn available_parallelism() -> Option<u32> {
    std::thread::available_parallelism()
        .ok()
        .and_then(|n| u32::try_from(n.get()).ok())
}

/// Runs `work` on each item, up to `workers` at once, the results in the items' order.
pub(super) fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    workers: Option<u32>,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let workers = workers
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(1)
        .clamp(1, items.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else { break };
                    let result = work(item);
                    results.lock().unwrap_or_else(PoisonError::into_inner)[index] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .into_iter()
        .flatten()
        .collect()
}

/// The value of an option in argv before any `--`, spelled `name VALUE`, `name=VALUE` or,
/// when `attached` (clap and argparse short options), `-nVALUE`. The last occurrence wins,
/// as in most parsers.
fn option_value<'a>(argv: &'a [String], names: &[&str], attached: bool) -> Option<&'a str> {
    let mut found = None;
    let mut arguments = argv.iter();
    while let Some(argument) = arguments.next() {
        if argument == "--" {
            break;
        }
        for name in names {
            if argument == name {
                found = arguments.next().map(String::as_str);
            } else if let Some(value) = argument.strip_prefix(name) {
                let short = !name.starts_with("--") && name.len() == 2;
                if let Some(value) = value.strip_prefix('=') {
                    found = Some(value);
                } else if attached && short && !value.is_empty() {
                    found = Some(value);
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(items: &[&str]) -> Vec<String> {
        strings(items)
    }

    /// Found on a real project (a virtualenv under the checkout): the merge base's
    /// worktree has no `.venv`, so `.venv/bin/python` must mean the checkout's.
    #[test]
    fn a_relative_program_path_is_the_repository_s_and_a_bare_name_is_path_s() {
        let root = Path::new("/repo");
        assert_eq!(
            rooted_program(argv(&[".venv/bin/python", "-m", "pytest"]), root),
            argv(&["/repo/.venv/bin/python", "-m", "pytest"])
        );
        assert_eq!(
            rooted_program(argv(&["python3", "-m", "pytest"]), root),
            argv(&["python3", "-m", "pytest"])
        );
        assert_eq!(
            rooted_program(argv(&["/usr/bin/python3"]), root),
            argv(&["/usr/bin/python3"])
        );
        assert!(rooted_program(Vec::new(), root).is_empty());
    }

    #[test]
    fn the_pinned_environment_reaches_every_child_of_a_pinned_context() {
        let executor = fake::FakeExecutor::new([]);
        let dir = std::env::temp_dir();
        let plain = Context::new(&dir, &dir, &executor).invocation("x", argv(&["true"]));
        assert!(plain.env_set.is_empty() && plain.env_remove.is_empty());
        let pinned = Context::new(&dir, &dir, &executor)
            .with_pinned_environment()
            .invocation("x", argv(&["true"]));
        assert!(pinned.env_remove.iter().any(|n| n == "PYTEST_ADDOPTS"));
        assert!(pinned.env_remove.iter().any(|n| n == "GOFLAGS"));
        assert!(
            pinned
                .env_set
                .iter()
                .any(|(n, v)| n == "PYTHONHASHSEED" && v == "0")
        );
    }

    #[test]
    fn work_in_parallel_keeps_the_items_order() {
        let items: Vec<u32> = (0..7).collect();
        assert_eq!(
            in_parallel(&items, Some(3), |n| n * 2),
            [0, 2, 4, 6, 8, 10, 12]
        );
        assert!(in_parallel(&Vec::<u32>::new(), Some(2), |n| *n).is_empty());
    }

    #[test]
    fn option_values_in_every_spelling() {
        let xdist = ["-n", "--numprocesses"];
        assert_eq!(
            option_value(&argv(&["pytest", "-n", "4"]), &xdist, true),
            Some("4")
        );
        assert_eq!(
            option_value(&argv(&["pytest", "-n4"]), &xdist, true),
            Some("4")
        );
        assert_eq!(
            option_value(&argv(&["pytest", "--numprocesses=3"]), &xdist, true),
            Some("3")
        );
        assert_eq!(option_value(&argv(&["pytest", "--nx"]), &xdist, true), None);
        assert_eq!(
            option_value(&argv(&["pytest", "--", "-n", "2"]), &xdist, true),
            None
        );
        assert_eq!(
            option_value(&argv(&["go", "test", "-p=2"]), &["-p"], false),
            Some("2")
        );
        assert_eq!(
            option_value(&argv(&["go", "test", "-parallel", "3"]), &["-p"], false),
            None
        );
    }

    #[test]
    fn picked_seeds_fit_numpy() {
        for _ in 0..100 {
            assert!(pick_seed() < 1 << 32);
        }
    }

    #[test]
    fn kinds_round_trip() {
        for kind in RunnerKind::ALL {
            assert_eq!(RunnerKind::from_str_opt(kind.as_str()), Some(kind));
        }
    }
}
