//! Running one child process for a runner: argv only (never a shell), stdin closed, stdout
//! and stderr drained concurrently into one log, the child in its own process group, and a
//! timeout that sends SIGTERM to the group, waits a grace period, then SIGKILL. Knows
//! nothing about any runner; adapters describe what to run as an [`Invocation`].

use std::io::{self, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::Serialize;

use crate::exit_codes::SIGNAL_BASE;

/// Variables that point git at another repository. A runner's tests that call git must see
/// the repository they run in, not the one candor was started from (a hook, a worktree).
pub const GIT_VARIABLES: [&str; 3] = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"];

/// How long the runner gets between SIGTERM and SIGKILL unless the caller says otherwise.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);

/// How long descendants may hold the output pipes open after the runner itself exited
/// before their process group is killed. Without a bound, a test that leaks a background
/// server would keep candor waiting forever.
pub const LINGER: Duration = Duration::from_secs(1);

/// Where the child's stdout goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StdoutTo {
    /// Into the log, interleaved with stderr.
    Log,
    /// Into its own file: the runner writes its machine-readable report to stdout (`go
    /// test -json`), or a probe's answer is read back.
    File(PathBuf),
}

/// One child process to run, described completely so it can be recorded and replayed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Invocation {
    /// Program and arguments, each element one argument exactly as the child receives it.
    pub argv: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Variables set for the child, on top of candor's environment.
    pub env_set: Vec<(String, String)>,
    /// Variables removed from the child's environment (besides [`GIT_VARIABLES`], which
    /// are always removed).
    pub env_remove: Vec<String>,
    /// The log file: a header naming argv, cwd and start time, then the child's output.
    pub log: PathBuf,
    /// Where stdout goes.
    pub stdout: StdoutTo,
    /// Where the runner writes its machine-readable report when argv names the path
    /// (`--junitxml=PATH`); recorded, and written by the fake executor.
    pub report: Option<PathBuf>,
    /// Wall-clock limit; `None` waits as long as the child runs.
    pub timeout: Option<Duration>,
    /// Time between SIGTERM and SIGKILL once the timeout passed.
    pub grace: Duration,
}

impl Invocation {
    /// An invocation with no environment changes, stdout into the log and no timeout.
    pub fn new(argv: Vec<String>, cwd: impl Into<PathBuf>, log: impl Into<PathBuf>) -> Self {
        Invocation {
            argv,
            cwd: cwd.into(),
            env_set: Vec::new(),
            env_remove: Vec::new(),
            log: log.into(),
            stdout: StdoutTo::Log,
            report: None,
            timeout: None,
            grace: DEFAULT_GRACE,
        }
    }

    /// Sets a variable for the child.
    #[must_use]
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env_set.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Removes a variable from the child's environment.
    #[must_use]
    pub fn env_remove(mut self, name: &str) -> Self {
        self.env_remove.push(name.to_owned());
        self
    }

    /// Sends stdout to its own file.
    #[must_use]
    pub fn stdout_to(mut self, path: impl Into<PathBuf>) -> Self {
        self.stdout = StdoutTo::File(path.into());
        self
    }

    /// Records where the runner writes its report.
    #[must_use]
    pub fn report_at(mut self, path: impl Into<PathBuf>) -> Self {
        self.report = Some(path.into());
        self
    }

    /// Limits the run's wall-clock time.
    #[must_use]
    pub fn timeout(mut self, timeout: Option<Duration>, grace: Duration) -> Self {
        self.timeout = timeout;
        self.grace = grace;
        self
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
}

/// What happened to one child process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessOutcome {
    /// When the child was started.
    pub started_at: Timestamp,
    /// Wall-clock time until the runner itself exited.
    pub duration: Duration,
    /// How it ended.
    pub exit: Exit,
    /// Whether candor stopped it because the timeout passed.
    pub timed_out: bool,
}

impl ProcessOutcome {
    /// The exit code, with a signal N reported as 128+N as shells do.
    pub fn exit_code(&self) -> i32 {
        match self.exit {
            Exit::Code(code) => code,
            Exit::Signal(signal) => i32::from(SIGNAL_BASE).saturating_add(signal),
        }
    }

    /// The signal that killed the child, if one did.
    pub fn signal(&self) -> Option<i32> {
        match self.exit {
            Exit::Signal(signal) => Some(signal),
            Exit::Code(_) => None,
        }
    }

    /// Exited with code 0 in time.
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0) && !self.timed_out
    }
}

/// Why a child could not be run or watched.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// argv was empty.
    #[error("an empty command: nothing to run")]
    EmptyArgv,
    /// The program could not be started (not found, not executable, bad cwd).
    #[error("could not start `{program}` in {cwd}")]
    Spawn {
        /// The program, `argv[0]`.
        program: String,
        /// The working directory it was to run in.
        cwd: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// [`cancel_children`] stopped the child, or came before it could start.
    #[error("cancelled: the run was stopped before it finished")]
    Cancelled,
    /// The log or the stdout file could not be written, or waiting failed.
    #[error("could not {what} {}", path.display())]
    Io {
        /// What was being done, as a verb phrase.
        what: &'static str,
        /// The file involved.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

/// The process-wide stop: the process groups of the children running now, and whether
/// [`cancel_children`] was called since [`allow_children`].
struct Stop {
    stopped: bool,
    groups: Vec<Pid>,
}

static STOP: Mutex<Stop> = Mutex::new(Stop {
    stopped: false,
    groups: Vec::new(),
});

fn stop_state() -> std::sync::MutexGuard<'static, Stop> {
    STOP.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Stops every child this process is running: SIGKILL to each one's process group, and
/// no new child starts until [`allow_children`]. The waits see the children end and
/// return [`ProcessError::Cancelled`], so the command unwinds as from any runner error
/// (worktrees removed by their guards, a pending ledger line left pending). For the MCP
/// server, which runs one command at a time and stops it when its caller cancels.
pub fn cancel_children() {
    let mut stop = stop_state();
    stop.stopped = true;
    for group in &stop.groups {
        signal_group(Some(*group), Signal::SIGKILL);
    }
}

/// Lets children start again after [`cancel_children`].
pub fn allow_children() {
    stop_state().stopped = false;
}

/// Registers a started child's group with the stop; kills it at once when the stop came
/// between the check before spawning and now.
fn register(group: Option<Pid>) {
    let Some(group) = group else { return };
    let mut stop = stop_state();
    if stop.stopped {
        signal_group(Some(group), Signal::SIGKILL);
    }
    stop.groups.push(group);
}

/// Takes a finished child's group off the stop; whether the stop ended it.
fn unregister(group: Option<Pid>) -> bool {
    let mut stop = stop_state();
    if let Some(group) = group {
        stop.groups.retain(|g| *g != group);
    }
    stop.stopped
}

/// Runs invocations. Adapters go through this trait so that statistics can be tested on
/// scripted outcomes ([`super::fake::FakeExecutor`]) instead of real runs.
pub trait Executor: Send + Sync {
    /// Runs one child to its end (or its timeout) and says how it ended.
    fn execute(&self, invocation: &Invocation) -> Result<ProcessOutcome, ProcessError>;
}

/// The real executor: spawns child processes.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemExecutor;

impl Executor for SystemExecutor {
    fn execute(&self, invocation: &Invocation) -> Result<ProcessOutcome, ProcessError> {
        let (program, args) = invocation
            .argv
            .split_first()
            .ok_or(ProcessError::EmptyArgv)?;
        let log_path = &invocation.log;
        let io_error = |what: &'static str, path: &Path| {
            let path = path.to_owned();
            move |source| ProcessError::Io { what, path, source }
        };
        let mut log = LogFile {
            file: create_file(log_path).map_err(io_error("create the log", log_path))?,
            digest: blake3::Hasher::new(),
        };
        let started_at = Timestamp::now();
        write_header(&mut log, invocation, started_at)
            .map_err(io_error("write the log", log_path))?;
        let log = Arc::new(Mutex::new(log));
        // The stdout file is a runner's report (go's events): digested as the log is.
        let stdout_file = match &invocation.stdout {
            StdoutTo::Log => None,
            StdoutTo::File(path) => Some((
                path.clone(),
                Arc::new(Mutex::new(LogFile {
                    file: create_file(path).map_err(io_error("create the stdout file", path))?,
                    digest: blake3::Hasher::new(),
                })),
            )),
        };
        let stdout_sink: Box<dyn Write + Send> = match &stdout_file {
            None => Box::new(SharedLog(Arc::clone(&log))),
            Some((_, file)) => Box::new(SharedLog(Arc::clone(file))),
        };

        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(&invocation.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        for name in GIT_VARIABLES
            .iter()
            .copied()
            .chain(invocation.env_remove.iter().map(String::as_str))
        {
            command.env_remove(name);
        }
        for (name, value) in &invocation.env_set {
            command.env(name, value);
        }
        if stop_state().stopped {
            return Err(ProcessError::Cancelled);
        }
        let clock = Instant::now();
        let mut child = command.spawn().map_err(|source| ProcessError::Spawn {
            program: program.clone(),
            cwd: invocation.cwd.clone(),
            source,
        })?;
        // A pid fits in pid_t on every unix; 0 would make killpg signal candor's own group.
        let group = i32::try_from(child.id())
            .ok()
            .filter(|pid| *pid > 0)
            .map(Pid::from_raw);
        register(group);

        let (drained_tx, drained_rx) = mpsc::channel();
        if let Some(stdout) = child.stdout.take() {
            spawn_drain(stdout, stdout_sink, drained_tx.clone());
        }
        if let Some(stderr) = child.stderr.take() {
            spawn_drain(stderr, Box::new(SharedLog(Arc::clone(&log))), drained_tx);
        }
        let (exited_tx, exited_rx) = mpsc::channel();
        thread::spawn(move || {
            // The receiver is gone only if execute() already returned; nothing to tell.
            let _ = exited_tx.send(child.wait());
        });

        let waited = wait(&exited_rx, group, invocation.timeout, invocation.grace);
        let duration = clock.elapsed();
        let (drain_note, drained) = finish_draining(&drained_rx, group);
        let cancelled = unregister(group);
        let (status, timed_out) = waited.map_err(io_error("wait for", Path::new(program)))?;

        let outcome = ProcessOutcome {
            started_at,
            duration,
            exit: exit_of(status),
            timed_out,
        };
        let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
        write_footer(&mut *log, &outcome, drain_note)
            .map_err(io_error("write the log", log_path))?;
        // A drain still running may write more: its files are left unknown, not wrong.
        if drained {
            let mut written = written_logs()
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            written.insert(log_path.clone(), log.digest.finalize());
            if let Some((path, file)) = &stdout_file {
                let file = file.lock().unwrap_or_else(PoisonError::into_inner);
                written.insert(path.clone(), file.digest.finalize());
            }
        }
        if cancelled {
            return Err(ProcessError::Cancelled);
        }
        Ok(outcome)
    }
}

fn create_file(path: &Path) -> io::Result<std::fs::File> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::File::create(path)
}

fn write_header(
    log: &mut impl Write,
    invocation: &Invocation,
    started_at: Timestamp,
) -> io::Result<()> {
    // argv as a JSON array: one element per argument, quoting unambiguous.
    let argv = serde_json::to_string(&invocation.argv).unwrap_or_default();
    writeln!(log, "# candor runner log")?;
    writeln!(log, "# argv: {argv}")?;
    writeln!(log, "# cwd: {}", invocation.cwd.display())?;
    writeln!(log, "# started: {started_at}")?;
    let removed: Vec<&str> = GIT_VARIABLES
        .iter()
        .copied()
        .chain(invocation.env_remove.iter().map(String::as_str))
        .collect();
    writeln!(log, "# env removed: {}", removed.join(" "))?;
    for (name, value) in &invocation.env_set {
        writeln!(log, "# env set: {name}={value}")?;
    }
    if let StdoutTo::File(path) = &invocation.stdout {
        writeln!(log, "# stdout: written to {}", path.display())?;
    }
    if let Some(report) = &invocation.report {
        writeln!(log, "# report: {}", report.display())?;
    }
    if let Some(timeout) = invocation.timeout {
        writeln!(
            log,
            "# timeout: {:.3}s, then SIGTERM, {:.3}s grace, then SIGKILL",
            timeout.as_secs_f64(),
            invocation.grace.as_secs_f64()
        )?;
    }
    log.flush()
}

fn write_footer(
    log: &mut impl Write,
    outcome: &ProcessOutcome,
    drain_note: Option<&str>,
) -> io::Result<()> {
    if let Some(note) = drain_note {
        writeln!(log, "\n# {note}")?;
    }
    let how = match outcome.exit {
        Exit::Code(code) => format!("exit code {code}"),
        Exit::Signal(signal) => format!(
            "killed by signal {signal} (exit code {})",
            outcome.exit_code()
        ),
    };
    let timed_out = if outcome.timed_out { ", timed out" } else { "" };
    writeln!(
        log,
        "\n# ended: {how} after {:.3}s{timed_out}",
        outcome.duration.as_secs_f64()
    )?;
    log.flush()
}

/// A runner's log as candor writes it: the file, and a digest of every byte written to
/// it. The tests' own process can find its run's log beside the report it was told to
/// write, and rewrite both before it ends; [`log_as_written`] tells.
struct LogFile {
    file: std::fs::File,
    digest: blake3::Hasher,
}

impl Write for LogFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.file.write(buf)?;
        self.digest.update(&buf[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// The digest of each log this process wrote, by path.
fn written_logs() -> &'static Mutex<std::collections::HashMap<PathBuf, blake3::Hash>> {
    static WRITTEN: std::sync::OnceLock<Mutex<std::collections::HashMap<PathBuf, blake3::Hash>>> =
        std::sync::OnceLock::new();
    WRITTEN.get_or_init(Default::default)
}

/// Whether the log (or stdout file) at `path` still holds exactly what candor wrote to it;
/// `None` for one this process did not write (a fake executor's, an earlier run's, one a
/// drain may still be writing) or cannot read.
pub fn log_as_written(path: &Path) -> Option<bool> {
    let expected = *written_logs()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(path)?;
    let bytes = std::fs::read(path).ok()?;
    Some(blake3::hash(&bytes) == expected)
}

/// The log shared by the stdout and stderr drains; each chunk is written whole.
struct SharedLog(Arc<Mutex<LogFile>>);

impl Write for SharedLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .flush()
    }
}

/// Copies a pipe into a sink until end of file. The pipe is read to its end even when the
/// sink fails, so that the child never blocks on a full pipe; the first error is reported.
fn spawn_drain(
    mut pipe: impl Read + Send + 'static,
    mut sink: Box<dyn Write + Send>,
    done: mpsc::Sender<io::Result<()>>,
) {
    thread::spawn(move || {
        let mut buffer = vec![0_u8; 64 * 1024];
        let mut first_error = None;
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => {
                    if first_error.is_none() {
                        first_error = sink.write_all(&buffer[..read]).err();
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    first_error.get_or_insert(error);
                    break;
                }
            }
        }
        if first_error.is_none() {
            first_error = sink.flush().err();
        }
        let _ = done.send(first_error.map_or(Ok(()), Err));
    });
}

/// Waits for the child, enforcing the timeout: SIGTERM to the group, the grace period,
/// then SIGKILL. Blocks on the waiter thread's channel, never polls.
fn wait(
    exited: &Receiver<io::Result<ExitStatus>>,
    group: Option<Pid>,
    timeout: Option<Duration>,
    grace: Duration,
) -> io::Result<(ExitStatus, bool)> {
    let Some(timeout) = timeout else {
        return Ok((receive(exited)?, false));
    };
    match exited.recv_timeout(timeout) {
        Ok(status) => return Ok((status?, false)),
        Err(RecvTimeoutError::Disconnected) => return Err(waiter_gone()),
        Err(RecvTimeoutError::Timeout) => {}
    }
    signal_group(group, Signal::SIGTERM);
    match exited.recv_timeout(grace) {
        Ok(status) => return Ok((status?, true)),
        Err(RecvTimeoutError::Disconnected) => return Err(waiter_gone()),
        Err(RecvTimeoutError::Timeout) => {}
    }
    signal_group(group, Signal::SIGKILL);
    Ok((receive(exited)?, true))
}

fn receive(exited: &Receiver<io::Result<ExitStatus>>) -> io::Result<ExitStatus> {
    exited.recv().map_err(|_| waiter_gone())?
}

fn waiter_gone() -> io::Error {
    io::Error::other("the thread waiting for the child ended without a status")
}

/// Waits for both drains. Descendants still holding the pipes after [`LINGER`] are killed
/// with their group; a descendant that left the group (a daemon) is abandoned after one
/// more [`LINGER`], its later output lost. Returns a note for the log when either happened.
/// Waits for both drains to reach the end of their pipes; a note for the log when they
/// did not at once, and whether they did at all (a drain still running may write more).
fn finish_draining(
    drained: &Receiver<io::Result<()>>,
    group: Option<Pid>,
) -> (Option<&'static str>, bool) {
    let mut open = 2;
    let mut note = None;
    for attempt in 0..2 {
        let deadline = Instant::now() + LINGER;
        while open > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            match drained.recv_timeout(left) {
                // A drain's own write error already stopped its copying; the log says
                // what it could.
                Ok(_) => open -= 1,
                Err(RecvTimeoutError::Disconnected) => return (note, true),
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
        if open == 0 {
            return (note, true);
        }
        if attempt == 0 {
            signal_group(group, Signal::SIGKILL);
            note = Some(
                "descendants kept the output open after the runner exited; their process group was killed",
            );
        }
    }
    (
        Some(
            "a descendant outside the process group kept the output open; its later output is not in this log",
        ),
        false,
    )
}

fn signal_group(group: Option<Pid>, signal: Signal) {
    if let Some(group) = group {
        // ESRCH: the group is already gone, which is what we wanted.
        let _ = killpg(group, signal);
    }
}

fn exit_of(status: ExitStatus) -> Exit {
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        // Stopped or continued statuses are not returned by wait(); treat as a failure.
        (None, None) => Exit::Code(-1),
    }
}
