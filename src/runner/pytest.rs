//! The pytest adapter: JUnit XML (`xunit1`, which carries the `file` attribute the ids
//! need), node ids after `--` so that no id is read as an option, rerunfailures and the
//! cache off, pytest-randomly's seed when it is installed.

use super::{
    Adapter, Context, ListedTest, RunOptions, RunReport, RunnerError, RunnerKind, Seed,
    SeedSupport, available_parallelism, option_value, strings,
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
}

impl Pytest {
    /// An adapter with a known answer to "is pytest-randomly installed".
    pub fn new(command: Option<Vec<String>>, randomly: bool) -> Self {
        Pytest {
            prefix: command.unwrap_or_else(|| RunnerKind::Pytest.default_command()),
            randomly,
        }
    }

    /// An adapter that asks pytest itself (`pytest -VV` lists registered plugins) whether
    /// pytest-randomly is there, through the same prefix the runs use, so a virtualenv
    /// behind `uv run` is the one asked.
    pub fn probe(command: Option<Vec<String>>, context: &Context<'_>) -> Result<Self, RunnerError> {
        let mut adapter = Pytest::new(command, false);
        let mut argv = adapter.prefix.clone();
        argv.push("-VV".to_owned());
        let versions = context.probe("pytest-version", argv, &[])?;
        adapter.randomly = versions
            .lines()
            .any(|line| line.trim_start().starts_with("pytest-randomly"));
        Ok(adapter)
    }

    /// Whether runs pass a pytest-randomly seed.
    pub fn has_randomly(&self) -> bool {
        self.randomly
    }

    fn run(
        &self,
        context: &Context<'_>,
        node_id: Option<&str>,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let report = context.scratch_path("pytest-junit.xml");
        let mut argv = self.prefix.clone();
        argv.extend(strings(&[
            "-p",
            "no:cacheprovider",
            "-p",
            "no:rerunfailures",
            "-o",
            "junit_family=xunit1",
        ]));
        argv.push(format!("--junitxml={}", report.display()));
        let seed = self.randomly.then(|| {
            let value = options.seed();
            let argument = format!("--randomly-seed={value}");
            argv.extend(strings(&["-p", "randomly"]));
            argv.push(argument.clone());
            Seed {
                value,
                argument,
                controls: SEED_CONTROLS,
            }
        });
        if let Some(node_id) = node_id {
            // After `--`, an id such as `-p evil` is a path to pytest, never an option.
            argv.push("--".to_owned());
            argv.push(node_id.to_owned());
        }
        let invocation = context
            .invocation("pytest", argv)
            .env_remove("PYTEST_ADDOPTS")
            .report_at(&report);
        let record = context.run(invocation)?;
        Ok(RunReport {
            runner: RunnerKind::Pytest,
            report,
            format: Some(Format::Junit),
            seed,
            workers: self.workers(),
            invocations: vec![record],
        })
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
        self.run(context, None, options)
    }

    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
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
        self.run(context, Some(test_id), options)
    }

    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        let mut argv = self.prefix.clone();
        argv.extend(strings(&["--collect-only", "-q", "-p", "no:cacheprovider"]));
        // Exit code 5: nothing collected, an empty list rather than a failure.
        let output = context.probe("pytest-collect", argv, &[5])?;
        Ok(parse_collection(&output))
    }
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
