//! Probes as real runs: each one through the runner adapter in a fresh process, its log
//! and report in `probe/NNN/`, its run record (`crate::records`, side `probe`) in
//! `records/NNN-probe.record.json` of the investigation's directory, with what is left of
//! the budget as its time limit.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::driver::{Observation, Probe, ProbeKind, Prober};
use super::prefix::is_repetition_of;
use crate::records::{self, RunRecord, SCHEMA, Side};
use crate::results::{self, Execution, Outcome, ParseOptions};
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
    /// The investigation's directory.
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
    /// The fixtures' hash, for the records (`records::fixture_hash`).
    pub fixture_hash: Option<String>,
}

impl Prober for RunnerProber<'_> {
    type Error = RunnerError;

    fn run(&mut self, probe: &Probe) -> Result<Observation, RunnerError> {
        let scratch = self.dir.join("probe").join(format!("{:03}", probe.number));
        fs_err::create_dir_all(&scratch)?;
        let context = runner::Context::new(&self.repo_root, &scratch, self.executor)
            .with_timeout(Some(self.timeout.min(probe.time_limit)), self.grace);
        let options = RunOptions {
            seed: Some(probe.seed),
        };
        let test = self.test.clone();
        let report = match &probe.kind {
            ProbeKind::Alone => self.adapter.run_one(&context, &test, options)?,
            ProbeKind::Unseeded => self.adapter.run_unseeded(&context, &test)?,
            ProbeKind::Ordered(before) => {
                let mut tests = before.clone();
                tests.push(test.clone());
                self.adapter
                    .run_ordered(&context, &tests, Arrangement::AsGiven, options)?
            }
            ProbeKind::Shuffled(all) => self.adapter.run_ordered(
                &context,
                all,
                Arrangement::Shuffled(probe.seed),
                options,
            )?,
            ProbeKind::Repeated(count) => self
                .adapter
                .run_repeated(&context, &test, *count, options)?,
        };
        let executions = read_report(&report.report, &self.parse);
        let mut observed = observe(&executions, &test, |id| self.adapter.selection_unit(id));
        let invocation = report.invocations.first();
        observed.timed_out = report.timed_out();
        observed.argv = invocation.map(|i| i.argv.clone()).unwrap_or_default();
        observed.log = invocation.map(|i| i.log.clone());
        let mut record = RunRecord {
            schema: SCHEMA.to_owned(),
            test: test.clone(),
            side: Side::Probe,
            sequence: probe.number,
            commit: self.commit.clone(),
            seed: report.seed.as_ref().map(|s| s.value),
            fixture_hash: self.fixture_hash.clone(),
            outcome: Outcome::Error,
            found: false,
            signature: None,
            exception: None,
            message: None,
            failing_line: None,
            duration_seconds: None,
            wall_seconds: report
                .invocations
                .iter()
                .map(|i| i.outcome.duration.as_secs_f64())
                .sum(),
            argv: observed.argv.clone(),
            workers: report.workers,
            exit_status: report.exit_code(),
            timed_out: observed.timed_out,
            started_at: invocation.map_or_else(jiff::Timestamp::now, |i| i.outcome.started_at),
            log: observed.log.clone().unwrap_or_default(),
            report: report.report.clone(),
            new_test: false,
        };
        // A repeated run's record is about its first red repetition, if any.
        let instances: Vec<&Execution> = executions
            .iter()
            .filter(|e| e.test_id == test || is_repetition_of(&e.test_id, &test))
            .collect();
        let shown = instances
            .iter()
            .find(|e| e.outcome.is_red())
            .or_else(|| instances.first())
            .copied();
        record.set_execution(shown);
        observed.record = Some(records::write(&self.dir.join("records"), &record)?);
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
/// and the tests before it, each as the unit a run selects (`unit`: go's subtests are
/// their top-level test), so that bisection never probes a subtest apart from its parent.
pub fn observe(executions: &[Execution], test: &str, unit: impl Fn(&str) -> String) -> Observation {
    let is_test = |e: &Execution| e.test_id == test || is_repetition_of(&e.test_id, test);
    let mine: Vec<&Execution> = executions.iter().filter(|e| is_test(e)).collect();
    let before = super::prefix::tests_before(executions, test, |_| true, unit).unwrap_or_default();
    let failure = mine
        .iter()
        .find(|e| e.outcome.is_red())
        .and_then(|e| e.failure.as_deref().cloned());
    Observation {
        outcome: mine.first().map(|e| e.outcome),
        before,
        repetitions: mine.iter().map(|e| e.outcome).collect(),
        failure,
        ..Observation::default()
    }
}
