//! Probes as real runs: each one through the runner adapter in a fresh process, in its
//! own directory (`NNN-purpose/`) holding the runner's log, its report and the run
//! record, with what is left of the budget as its time limit.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::driver::{Observation, Probe, ProbeKind, Prober};
use super::prefix::is_repetition_of;
use super::record::{self, ProbeRecord};
use crate::results::{self, Execution, ParseOptions};
use crate::runner::process::Executor;
use crate::runner::{self, Adapter, Arrangement, RunOptions, RunnerError};

/// Runs probes with a runner adapter.
pub struct RunnerProber<'a> {
    /// The adapter.
    pub adapter: &'a dyn Adapter,
    /// Runs the children.
    pub executor: &'a dyn Executor,
    /// The repository root; every run happens there.
    pub repo_root: PathBuf,
    /// The investigation's directory; each probe gets a subdirectory.
    pub dir: PathBuf,
    /// The longest a probe may run however much budget is left (`[runner]
    /// timeout_seconds`).
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// What the result parsers need.
    pub parse: ParseOptions,
    /// The test investigated.
    pub test: String,
    /// The commit, for the records.
    pub commit: Option<String>,
}

impl Prober for RunnerProber<'_> {
    type Error = RunnerError;

    fn run(&mut self, probe: &Probe) -> Result<Observation, RunnerError> {
        let dir = self
            .dir
            .join(format!("{:03}-{}", probe.number, probe.purpose.as_str()));
        fs_err::create_dir_all(&dir)?;
        let context = runner::Context::new(&self.repo_root, &dir, self.executor)
            .with_timeout(Some(self.timeout.min(probe.time_limit)), self.grace);
        let options = RunOptions {
            seed: Some(probe.seed),
        };
        let test = self.test.clone();
        let with_test = |before: &[String]| {
            let mut tests = before.to_vec();
            tests.push(test.clone());
            tests
        };
        let (report, tests_before) = match &probe.kind {
            ProbeKind::Alone => (self.adapter.run_one(&context, &test, options)?, Vec::new()),
            ProbeKind::Ordered(before) => (
                self.adapter.run_ordered(
                    &context,
                    &with_test(before),
                    Arrangement::AsGiven,
                    options,
                )?,
                before.clone(),
            ),
            ProbeKind::Shuffled(all) => (
                self.adapter.run_ordered(
                    &context,
                    all,
                    Arrangement::Shuffled(probe.seed),
                    options,
                )?,
                Vec::new(),
            ),
            ProbeKind::Repeated(count) => (
                self.adapter
                    .run_repeated(&context, &test, *count, options)?,
                Vec::new(),
            ),
        };
        let executions = read_report(&report.report, &self.parse);
        let mut observed = observe(&executions, &test);
        let invocation = report.invocations.last();
        observed.timed_out = report.timed_out();
        observed.argv = invocation.map(|i| i.argv.clone()).unwrap_or_default();
        observed.log = invocation.map(|i| i.log.clone());
        let record_path = dir.join("record.json");
        let record = ProbeRecord {
            test: test.clone(),
            side: "order",
            commit: self.commit.clone(),
            seed: report.seed.as_ref().map(|s| s.argument.clone()),
            fixture_hash: None,
            outcome: observed.outcome,
            signature: observed.failure.as_ref().map(results::Failure::signature),
            message: observed.failure.as_ref().map(|f| f.message.clone()),
            duration_seconds: report
                .invocations
                .iter()
                .map(|i| i.outcome.duration.as_secs_f64())
                .sum(),
            argv: observed.argv.clone(),
            exit_status: report.exit_code(),
            timed_out: observed.timed_out,
            probe: probe.number,
            purpose: probe.purpose.as_str(),
            tests_before,
            ran_before: observed.before.clone(),
            repetitions: observed.repetitions.clone(),
            log: observed.log.clone().unwrap_or_default(),
            report: report.report.clone(),
        };
        record::write(&record, &record_path)?;
        observed.record = Some(record_path);
        Ok(observed)
    }
}

/// The report's executions in file order, repeats kept; none when it is missing or
/// unreadable (the log says why, and the test's outcome is then unknown).
fn read_report(path: &Path, parse: &ParseOptions) -> Vec<Execution> {
    let Ok(file) = fs_err::File::open(path) else {
        return Vec::new();
    };
    let mut executions = Vec::new();
    let parsed = results::parse(file, parse, &mut |execution| {
        executions.push(execution);
        Ok(())
    });
    if parsed.is_err() {
        return Vec::new();
    }
    executions
}

/// What the executions say about `test`: its first outcome and failure, its repetitions,
/// and the tests before it.
pub fn observe(executions: &[Execution], test: &str) -> Observation {
    let is_test = |e: &Execution| e.test_id == test || is_repetition_of(&e.test_id, test);
    let mine: Vec<&Execution> = executions.iter().filter(|e| is_test(e)).collect();
    let before = super::prefix::tests_before(executions, test, |_| true).unwrap_or_default();
    let failure = mine
        .iter()
        .find(|e| e.outcome.is_red())
        .and_then(|e| e.failure.clone());
    Observation {
        outcome: mine.first().map(|e| e.outcome),
        before,
        repetitions: mine.iter().map(|e| e.outcome).collect(),
        failure,
        ..Observation::default()
    }
}
