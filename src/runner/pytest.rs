//! The pytest adapter: JUnit XML (`xunit1`, whose `file` attribute spells module paths
//! exactly; the ids come from the collected module, `results::ids::pytest`), node ids after `--` so that no id is read as an option, rerunfailures and the
//! cache off, pytest-randomly's seed when it is installed.
//!
//! For `candor order`: pytest runs node ids given on the command line in the order given
//! (checked by `tests/it/order.rs`), so an ordered run names its tests in order; with
//! pytest-randomly installed it passes `--randomly-dont-reorganize`, which keeps that
//! order while the seed still reseeds `random` before each test, and a shuffled run is
//! pytest-randomly's own shuffle. A repeated run is pytest-repeat's `--count` when
//! pytest-repeat is installed. A `-n` (pytest-xdist) in the prefix is overridden by
//! `-n 0`: spread over workers, the tests would not share one process.

use std::path::Path;

use super::isolation;
use super::probe_cache;
use super::{
    Adapter, Arrangement, Context, GivenOrder, ListedTest, OrderSupport, RunOptions, RunReport,
    RunnerError, RunnerKind, Seed, SeedSupport, available_parallelism, option_value, strings,
};
use crate::results::Format;

const SEED_CONTROLS: &str = "pytest-randomly's seed fixes the shuffled order of modules, classes and tests and reseeds Python's `random` (and Faker, factory_boy and NumPy when installed) before each test; it does not fix hash randomization, threads or the clock";

const NO_SEED: &str =
    "without pytest-randomly pytest runs tests in collection order, so there is no seed to record";

/// pytest through a command prefix (`python3 -m pytest` unless `[runner] command` says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pytest {
    prefix: Vec<String>,
    randomly: bool,
    repeat: bool,
    /// Whether pytest-cov is installed: a run of chosen tests turns it off (`--no-cov`).
    cov: bool,
    /// Whether `randomly` and `repeat` are a remembered answer (`probe_cache`) rather than
    /// this run's own probe.
    remembered: bool,
}

/// Which tests a run selects, and how.
enum Selection<'a> {
    Suite,
    /// The suite without collecting these files (`--ignore`).
    SuiteWithout(&'a [String]),
    One(&'a str),
    Ordered(&'a [String], Arrangement),
    Repeated(&'a str, u32),
    /// One test with pytest-randomly turned off: no reseeding, no seed.
    Unseeded(&'a str),
}

impl Selection<'_> {
    /// Whether the run must stay in one process: the point of ordered and repeated runs.
    fn one_process(&self) -> bool {
        matches!(self, Selection::Ordered(..) | Selection::Repeated(..))
    }

    /// Whether every test is collected: a coverage threshold is the whole suite's.
    fn whole_suite(&self) -> bool {
        match self {
            Selection::Suite => true,
            Selection::SuiteWithout(files) => files.is_empty(),
            _ => false,
        }
    }
}

impl Pytest {
    /// An adapter with a known answer to "is pytest-randomly installed".
    pub fn new(command: Option<Vec<String>>, randomly: bool) -> Self {
        Pytest {
            prefix: command.unwrap_or_else(|| RunnerKind::Pytest.default_command()),
            randomly,
            repeat: false,
            cov: false,
            remembered: false,
        }
    }

    /// The same adapter with a known answer to "is pytest-repeat installed".
    #[must_use]
    pub fn with_repeat(mut self, repeat: bool) -> Self {
        self.repeat = repeat;
        self
    }

    /// An adapter that asks pytest itself (`pytest -VV` lists registered plugins) whether
    /// pytest-randomly is there, through the same prefix the runs use, so a virtualenv
    /// behind `uv run` is the one asked.
    pub fn probe(command: Option<Vec<String>>, context: &Context<'_>) -> Result<Self, RunnerError> {
        let mut adapter = Pytest::new(command, false);
        let versions = adapter.versions(context)?;
        adapter.read_plugins(&versions);
        Ok(adapter)
    }

    /// [`Pytest::probe`], answered from `.candor/cache/pytest-probe.json` while nothing the
    /// answer depends on has changed (`probe_cache`), and remembered there after a probe.
    /// Runs of a remembered answer turn pytest-randomly off by name when it was not there
    /// (`-p no:randomly`), so that a plugin installed since cannot shuffle a run whose seed
    /// candor does not record; and a run that pytest refuses as a usage error (exit 4: the
    /// options of a plugin removed since) is probed afresh and run again.
    pub fn probe_remembered(
        command: Option<Vec<String>>,
        context: &Context<'_>,
    ) -> Result<Self, RunnerError> {
        let mut adapter = Pytest::new(command, false);
        if let Some(versions) = probe_cache::lookup(&context.repo_root, &adapter.prefix) {
            adapter.read_plugins(&versions);
            adapter.remembered = true;
            return Ok(adapter);
        }
        let versions = adapter.versions(context)?;
        probe_cache::store(&context.repo_root, &adapter.prefix, &versions);
        adapter.read_plugins(&versions);
        Ok(adapter)
    }

    /// `pytest -VV`'s output through the adapter's prefix.
    fn versions(&self, context: &Context<'_>) -> Result<String, RunnerError> {
        let mut argv = self.prefix.clone();
        argv.push("-VV".to_owned());
        context.probe("pytest-version", argv, &[])
    }

    /// Which of the plugins candor uses `pytest -VV` lists.
    fn read_plugins(&mut self, versions: &str) {
        // `pytest-cov-7.1.0 at …`: the name, a dash and a version, so that `pytest-cover`
        // is not taken for `pytest-cov`.
        let lists = |plugin: &str| {
            versions.lines().any(|line| {
                line.trim_start()
                    .strip_prefix(plugin)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
            })
        };
        self.randomly = lists("pytest-randomly");
        self.repeat = lists("pytest-repeat");
        self.cov = lists("pytest-cov");
    }

    /// Whether repeated runs can use pytest-repeat's `--count`.
    pub fn has_repeat(&self) -> bool {
        self.repeat
    }

    /// Whether runs pass a pytest-randomly seed.
    pub fn has_randomly(&self) -> bool {
        self.randomly
    }

    fn run(
        &self,
        context: &Context<'_>,
        selection: &Selection<'_>,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let report = context.scratch_path("pytest-junit.xml");
        let (mut argv, seed) = self.argv(selection, options, Some(&report))?;
        let mut invocation_env = Vec::new();
        let probe = match &context.isolation {
            Some(isolation) => {
                let probe = context.scratch_path("isolation-probe");
                fs_err::create_dir_all(&probe)?;
                fs_err::write(
                    probe.join(format!("{}.py", isolation::PROBE_MODULE)),
                    isolation::PROBE_SOURCE,
                )?;
                let at = self.prefix.len();
                argv.splice(
                    at..at,
                    ["-p".to_owned(), isolation::PROBE_MODULE.to_owned()],
                );
                invocation_env.push((
                    crate::env_vars::EnvVars::PYTHONPATH.to_owned(),
                    python_path(&isolation.own, &probe),
                ));
                invocation_env.push((
                    isolation::PROBE_DIR_VARIABLE.to_owned(),
                    probe.to_string_lossy().into_owned(),
                ));
                Some(probe)
            }
            None => None,
        };
        let mut invocation = context
            .invocation("pytest", argv)
            .env_remove("PYTEST_ADDOPTS")
            .report_at(&report);
        for (name, value) in &invocation_env {
            invocation = invocation.env(name, value);
        }
        let record = context.run(invocation)?;
        if self.remembered && !record.outcome.timed_out && record.outcome.exit_code() == 4 {
            // The remembered plugins may be gone (their options refused): ask pytest again.
            probe_cache::forget(&context.repo_root);
            let fresh = Pytest::probe_remembered(Some(self.prefix.clone()), context)?;
            return fresh.run(context, selection, options);
        }
        context.check_ran(RunnerKind::Pytest, &record, &report)?;
        let run = RunReport {
            runner: RunnerKind::Pytest,
            report,
            format: Some(Format::Junit),
            seed,
            workers: if selection.one_process() {
                Some(1)
            } else {
                self.workers()
            },
            invocations: vec![record],
            warnings: Vec::new(),
        };
        context.check_frames(&run)?;
        if let (Some(isolation), Some(probe)) = (&context.isolation, probe) {
            check_imports(isolation, &probe, &run)?;
        }
        Ok(run)
    }

    /// The command line of a run, and the seed it passes; the report options only when
    /// there is a report to write (a command for a person to paste has none).
    fn argv(
        &self,
        selection: &Selection<'_>,
        options: RunOptions,
        report: Option<&Path>,
    ) -> Result<(Vec<String>, Option<Seed>), RunnerError> {
        let mut argv = self.prefix.clone();
        argv.extend(strings(&[
            "-p",
            "no:cacheprovider",
            "-p",
            "no:rerunfailures",
        ]));
        if let Some(report) = report {
            argv.extend(strings(&["-o", "junit_family=xunit1"]));
            argv.push(format!("--junitxml={}", report.display()));
        }
        let value = match selection {
            Selection::Ordered(_, Arrangement::Shuffled(seed)) => *seed,
            _ => options.seed(),
        };
        let reseeds = self.randomly && !matches!(selection, Selection::Unseeded(_));
        if self.randomly && !reseeds || self.remembered && !self.randomly {
            argv.extend(strings(&["-p", "no:randomly"]));
        }
        let seed = reseeds.then(|| {
            let argument = format!("--randomly-seed={value}");
            argv.extend(strings(&["-p", "randomly"]));
            argv.push(argument.clone());
            Seed {
                value,
                argument,
                controls: SEED_CONTROLS,
            }
        });
        let mut ids: Vec<&str> = Vec::new();
        match selection {
            Selection::Suite => {}
            Selection::SuiteWithout(files) => {
                // `--ignore=PATH` leaves a file uncollected, so never imported: its
                // module-level code cannot reach the other tests.
                argv.extend(files.iter().map(|file| format!("--ignore={file}")));
            }
            Selection::One(id) => ids.push(id),
            Selection::Unseeded(id) => {
                if !self.randomly {
                    return Err(RunnerError::Unsupported {
                        kind: RunnerKind::Pytest,
                        what: "turn off a reseeding that pytest-randomly is not there to do",
                    });
                }
                ids.push(id);
            }
            Selection::Ordered(given, arrangement) => {
                if *arrangement == Arrangement::AsGiven && self.randomly {
                    argv.push("--randomly-dont-reorganize".to_owned());
                }
                if given.is_empty() {
                    return Err(RunnerError::NotATestId {
                        id: String::new(),
                        kind: RunnerKind::Pytest,
                        reason: "an ordered run needs at least one test".to_owned(),
                    });
                }
                if matches!(arrangement, Arrangement::Shuffled(_)) && !self.randomly {
                    return Err(RunnerError::Unsupported {
                        kind: RunnerKind::Pytest,
                        what: "shuffle without pytest-randomly",
                    });
                }
                ids.extend(given.iter().map(String::as_str));
            }
            Selection::Repeated(id, count) => {
                if !self.repeat {
                    return Err(RunnerError::Unsupported {
                        kind: RunnerKind::Pytest,
                        what: "repeat a test inside one process without pytest-repeat",
                    });
                }
                if self.randomly {
                    argv.push("--randomly-dont-reorganize".to_owned());
                }
                argv.push(format!("--count={count}"));
                ids.push(id);
            }
        }
        // A coverage threshold (`--cov-fail-under` in addopts) is the whole suite's: a run
        // of chosen tests cannot meet it, and pytest-cov then ends the run with status 1,
        // which the lane reads as a report that does not account for the run.
        if self.cov && !selection.whole_suite() {
            argv.push("--no-cov".to_owned());
        }
        if selection.one_process() && self.workers() != Some(1) {
            argv.extend(strings(&["-n", "0"]));
        }
        if !ids.is_empty() {
            // After `--`, an id such as `-p evil` is a path to pytest, never an option.
            argv.push("--".to_owned());
            for id in ids {
                check_node_id(id)?;
                argv.push(id.to_owned());
            }
        }
        Ok((argv, seed))
    }

    /// pytest-xdist's `-n` from the prefix (`auto` and `logical` taken as the machine's
    /// parallelism, which is what xdist uses without psutil); one worker without it.
    /// `-n` hidden in an ini file's `addopts` is not seen.
    fn workers(&self) -> Option<u32> {
        match option_value(&self.prefix, &["-n", "--numprocesses"], true) {
            None => Some(1),
            Some("auto" | "logical") => available_parallelism(),
            // xdist's `-n 0` runs in the main process.
            Some(count) => count.parse::<u32>().ok().map(|n| n.max(1)),
        }
    }
}

impl Adapter for Pytest {
    fn kind(&self) -> RunnerKind {
        RunnerKind::Pytest
    }

    fn seed_support(&self) -> SeedSupport {
        if self.randomly {
            SeedSupport::Controls(SEED_CONTROLS)
        } else {
            SeedSupport::None(NO_SEED)
        }
    }

    fn run_suite(
        &self,
        context: &Context<'_>,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Selection::Suite, options)
    }

    fn run_suite_without(
        &self,
        context: &Context<'_>,
        options: RunOptions,
        files: &[String],
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Selection::SuiteWithout(files), options)
    }

    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Selection::One(test_id), options)
    }

    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        let mut argv = self.prefix.clone();
        // Without pytest-randomly the listing is collection order, the order pytest runs
        // the suite in when nothing shuffles it: `candor order`'s default context.
        argv.extend(strings(&[
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
        ]));
        // Exit code 5: nothing collected, an empty list rather than a failure.
        let output = context.probe("pytest-collect", argv, &[5])?;
        Ok(parse_collection(&output))
    }

    fn order_support(&self) -> OrderSupport {
        OrderSupport {
            given: GivenOrder::Kept,
            shuffles: self.randomly,
            repeats: self.repeat,
            seed_reseeds_tests: self.randomly,
            unseeded: self.randomly,
        }
    }

    fn process_scope<'t>(&self, _test_id: &'t str) -> Option<&'t str> {
        // One session, one process (xdist is turned off for ordered runs).
        Some("")
    }

    fn run_ordered(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        arrangement: Arrangement,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Selection::Ordered(test_ids, arrangement), options)
    }

    fn ordered_command(
        &self,
        test_ids: &[String],
        arrangement: Arrangement,
        options: RunOptions,
    ) -> Result<Vec<String>, RunnerError> {
        let selection = Selection::Ordered(test_ids, arrangement);
        Ok(self.argv(&selection, options, None)?.0)
    }

    fn batches(&self) -> bool {
        true
    }

    /// An ordered run as given: the node ids in that order in one session (`-n 0`, and
    /// `--randomly-dont-reorganize` with pytest-randomly, whose seed still reseeds `random`
    /// before each test exactly as in a replay of the test alone).
    fn run_batch(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run_ordered(context, test_ids, Arrangement::AsGiven, options)
    }

    fn run_unseeded(&self, context: &Context<'_>, test_id: &str) -> Result<RunReport, RunnerError> {
        self.run(
            context,
            &Selection::Unseeded(test_id),
            RunOptions::default(),
        )
    }

    fn unseeded_command(&self, test_id: &str) -> Result<Vec<String>, RunnerError> {
        let selection = Selection::Unseeded(test_id);
        Ok(self.argv(&selection, RunOptions::default(), None)?.0)
    }

    fn run_repeated(
        &self,
        context: &Context<'_>,
        test_id: &str,
        count: u32,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Selection::Repeated(test_id, count), options)
    }

    fn repeated_command(
        &self,
        test_id: &str,
        count: u32,
        options: RunOptions,
    ) -> Result<Vec<String>, RunnerError> {
        Ok(self
            .argv(&Selection::Repeated(test_id, count), options, None)?
            .0)
    }
}

/// `PYTHONPATH` for one side's run: the side's source roots first, then the isolation
/// probe, then whatever candor's own environment had.
fn python_path(own: &Path, probe: &Path) -> String {
    let read = |name: &str| fs_err::read_to_string(own.join(name)).ok();
    let mut parts: Vec<String> = isolation::python_source_roots(own, &read)
        .iter()
        .chain(std::iter::once(&probe.to_path_buf()))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Ok(inherited) = std::env::var(crate::env_vars::EnvVars::PYTHONPATH)
        && !inherited.is_empty()
    {
        parts.push(inherited);
    }
    parts.join(":")
}

/// The isolation probe's lists of imported modules: none may come from another side's
/// tree, and the side's own packages must come from its own tree.
fn check_imports(
    isolation: &isolation::Isolation,
    probe: &Path,
    run: &RunReport,
) -> Result<(), RunnerError> {
    let mut listing = String::new();
    for entry in fs_err::read_dir(probe)?.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with("imports-") {
            listing.push_str(&fs_err::read_to_string(entry.path())?);
        }
    }
    if listing.is_empty() {
        // A run that wrote its report ended its session, and the probe writes there.
        return Err(RunnerError::CouldNotRun(Box::new(super::NotRun {
            apart: Vec::new(),
            runner: RunnerKind::Pytest,
            why: format!(
                "its session ended without candor's isolation probe listing the imported modules ({})",
                probe.display()
            ),
            quoted: Vec::new(),
            log: run
                .invocations
                .first()
                .map(|i| i.log.clone())
                .unwrap_or_default(),
            unknown_test: false,
        })));
    }
    let read = |name: &str| fs_err::read_to_string(isolation.own.join(name)).ok();
    let roots = isolation::python_source_roots(&isolation.own, &read);
    let packages = isolation::python_packages(&isolation.own, &roots);
    isolation
        .check_imports(&listing, &packages)
        .map_err(|crossing| RunnerError::OtherSide(Box::new(crossing)))
}

/// Refuses what pytest would not read as one node id.
fn check_node_id(test_id: &str) -> Result<(), RunnerError> {
    let not_an_id = |reason: &str| RunnerError::NotATestId {
        id: test_id.to_owned(),
        kind: RunnerKind::Pytest,
        reason: reason.to_owned(),
    };
    if test_id.trim().is_empty() {
        return Err(not_an_id(
            "it is empty, which pytest reads as the whole suite",
        ));
    }
    // Node ids are paths. pytest scans every argument for `-p` before it parses the
    // command line, `--` or not, so `-p evil` would import a module named `evil`.
    if test_id.starts_with('-') {
        return Err(not_an_id(
            "it starts with `-`, which pytest would read as an option even after `--`",
        ));
    }
    Ok(())
}

/// Node ids from `pytest --collect-only -q`: one per line until the first blank line,
/// then a summary. Every item's node id has a `::`; the part before it is the file.
fn parse_collection(output: &str) -> Vec<ListedTest> {
    output
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| {
            let (file, _) = line.split_once("::")?;
            Some(ListedTest {
                id: line.to_owned(),
                file: Some(file.to_owned()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection_output_gives_ids_and_files() {
        let output = "tests/test_a.py::test_one\ntests/test_a.py::TestC::test_two[1-x]\n\n2 tests collected in 0.01s\n";
        assert_eq!(
            parse_collection(output),
            vec![
                ListedTest {
                    id: "tests/test_a.py::test_one".into(),
                    file: Some("tests/test_a.py".into()),
                },
                ListedTest {
                    id: "tests/test_a.py::TestC::test_two[1-x]".into(),
                    file: Some("tests/test_a.py".into()),
                },
            ]
        );
        assert!(parse_collection("no tests collected in 0.00s\n").is_empty());
    }

    /// With pytest-cov installed, a run of chosen tests turns it off (a whole-suite
    /// coverage threshold fails every partial run) and the whole suite's run keeps it.
    #[test]
    fn runs_of_chosen_tests_turn_pytest_cov_off() {
        let mut adapter = Pytest::new(Some(strings(&["pytest"])), false);
        let versions = "This is pytest version 9.2.0, imported from /py/pytest/__init__.py\nregistered third-party plugins:\n  pytest-cov-7.1.0 at /py/pytest_cov/plugin.py\n";
        let argv = |adapter: &Pytest, selection: &Selection<'_>| {
            adapter
                .argv(selection, RunOptions::default(), None)
                .unwrap()
                .0
        };
        let ids = ["tests/test_a.py::test_one".to_owned()];
        let no_cov = |argv: &[String]| argv.iter().any(|a| a == "--no-cov");
        assert!(
            !no_cov(&argv(&adapter, &Selection::One(&ids[0]))),
            "not installed"
        );
        adapter.read_plugins(&versions.replace("pytest-cov-7.1.0", "pytest-cover-3.0.0"));
        assert!(
            !no_cov(&argv(&adapter, &Selection::One(&ids[0]))),
            "pytest-cover is not pytest-cov"
        );
        adapter.read_plugins(versions);
        assert!(no_cov(&argv(&adapter, &Selection::One(&ids[0]))));
        assert!(no_cov(&argv(
            &adapter,
            &Selection::Ordered(&ids, Arrangement::AsGiven)
        )));
        assert!(!no_cov(&argv(&adapter, &Selection::Suite)));
        let one = argv(&adapter, &Selection::One(&ids[0]));
        let separator = one.iter().position(|a| a == "--").unwrap();
        assert!(
            one[..separator].contains(&"--no-cov".to_owned()),
            "an option, before the ids: {one:?}"
        );
    }

    #[test]
    fn workers_follow_xdist() {
        let adapter = |prefix: &[&str]| Pytest::new(Some(strings(prefix)), false);
        assert_eq!(adapter(&["pytest"]).workers(), Some(1));
        assert_eq!(adapter(&["pytest", "-n", "4"]).workers(), Some(4));
        assert_eq!(adapter(&["pytest", "-n0"]).workers(), Some(1));
        assert_eq!(
            adapter(&["pytest", "-n", "auto"]).workers(),
            available_parallelism()
        );
    }
}
