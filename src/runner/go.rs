//! The go test adapter: `go test -json` with stdout captured as the report, `-count=1` so
//! no cached result stands in for a run, `-shuffle=N` as the seed, and one test selected
//! by an anchored, escaped `-run` pattern per subtest level.

use super::{
    Adapter, Context, ListedTest, RunOptions, RunReport, RunnerError, RunnerKind, Seed,
    SeedSupport, available_parallelism, option_value, strings,
};
use crate::results::{Format, ids};

const SEED_CONTROLS: &str = "go's -shuffle seed fixes the order in which each package's top-level tests and benchmarks start; it does not fix goroutine scheduling, the interleaving of t.Parallel tests, map iteration order or the order packages run in";

/// Every package of the module.
const ALL_PACKAGES: &str = "./...";

/// `go test` through a command prefix (`go test` unless `[runner] command` says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoTest {
    prefix: Vec<String>,
}

impl GoTest {
    /// The adapter for a prefix.
    pub fn new(command: Option<Vec<String>>) -> Self {
        GoTest {
            prefix: command.unwrap_or_else(|| RunnerKind::Go.default_command()),
        }
    }

    fn run(
        &self,
        context: &Context<'_>,
        selection: Option<(String, &str)>,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let report = context.scratch_path("go-test.jsonl");
        let value = options.seed();
        let argument = format!("-shuffle={value}");
        let mut argv = self.prefix.clone();
        argv.extend(strings(&["-json", "-count=1"]));
        argv.push(argument.clone());
        match selection {
            Some((pattern, package)) => {
                argv.push("-run".to_owned());
                argv.push(pattern);
                argv.push(package.to_owned());
            }
            None => argv.push(ALL_PACKAGES.to_owned()),
        }
        let invocation = context.invocation("go-test", argv).stdout_to(&report);
        let record = context.run(invocation)?;
        Ok(RunReport {
            runner: RunnerKind::Go,
            report,
            format: Some(Format::GoTestJson),
            seed: Some(Seed {
                value,
                argument,
                controls: SEED_CONTROLS,
            }),
            workers: self.workers(),
            invocations: vec![record],
        })
    }

    /// `-p` from the prefix (packages tested at once), else `GOMAXPROCS`, else the
    /// machine's parallelism, which is go's default for `-p`. Tests inside one package
    /// that call t.Parallel are bounded by `-parallel`, which defaults to the same.
    fn workers(&self) -> Option<u32> {
        option_value(&self.prefix, &["-p"], false)
            .map(str::to_owned)
            .or_else(|| std::env::var(crate::env_vars::EnvVars::GOMAXPROCS).ok())
            .and_then(|value| value.parse().ok())
            .or_else(available_parallelism)
    }
}

impl Adapter for GoTest {
    fn kind(&self) -> RunnerKind {
        RunnerKind::Go
    }

    fn seed_support(&self) -> SeedSupport {
        SeedSupport::Controls(SEED_CONTROLS)
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
        let (package, test) = split_id(test_id)?;
        self.run(context, Some((run_pattern(test), package)), options)
    }

    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        let mut argv = self.prefix.clone();
        argv.extend(strings(&["-json", "-list", ".", ALL_PACKAGES]));
        let output = context.probe("go-list", argv, &[])?;
        parse_listing(&output)
    }
}

/// `pkg/path::TestName/sub` into the package and the test path; an id without `::` is a
/// test looked for in every package.
fn split_id(test_id: &str) -> Result<(&str, &str), RunnerError> {
    let not_an_id = |reason: &str| RunnerError::NotATestId {
        id: test_id.to_owned(),
        kind: RunnerKind::Go,
        reason: reason.to_owned(),
    };
    let (package, test) = test_id.split_once("::").unwrap_or((ALL_PACKAGES, test_id));
    if package.is_empty() || package.starts_with('-') {
        // `go test` would read a leading dash as a flag.
        return Err(not_an_id("the package part is empty or starts with `-`"));
    }
    if test.is_empty() {
        return Err(not_an_id("the test name is empty"));
    }
    Ok((package, test))
}

/// The `-run` pattern that matches exactly one test path: `go test` splits the pattern at
/// unbracketed slashes and matches each level separately, so each level is escaped and
/// anchored on its own (`^TestTable$/^large_case$`).
fn run_pattern(test: &str) -> String {
    test.split('/')
        .map(|level| format!("^{}$", regex::escape(level)))
        .collect::<Vec<_>>()
        .join("/")
}

/// Test names from `go test -json -list .`: output lines of each package that are
/// top-level tests, examples or fuzz targets (benchmarks do not run without `-bench`).
fn parse_listing(output: &str) -> Result<Vec<ListedTest>, RunnerError> {
    #[derive(serde::Deserialize)]
    struct Event {
        #[serde(rename = "Action")]
        action: String,
        #[serde(rename = "Package", default)]
        package: String,
        #[serde(rename = "Output", default)]
        output: String,
    }
    let mut tests = Vec::new();
    for line in output.lines().filter(|line| line.starts_with('{')) {
        let event: Event = serde_json::from_str(line).map_err(|error| RunnerError::Output {
            what: "go test -json -list".to_owned(),
            message: error.to_string(),
        })?;
        let name = event.output.trim();
        let runnable = ["Test", "Example", "Fuzz"]
            .iter()
            .any(|prefix| name.starts_with(prefix));
        if event.action == "output" && runnable && !name.contains(char::is_whitespace) {
            tests.push(ListedTest {
                id: ids::go(&event.package, name),
                file: None,
            });
        }
    }
    Ok(tests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_patterns_anchor_and_escape_each_level() {
        assert_eq!(
            run_pattern("TestTable/large_case"),
            "^TestTable$/^large_case$"
        );
        assert_eq!(run_pattern("TestX/a.b(c)"), r"^TestX$/^a\.b\(c\)$");
        assert_eq!(
            run_pattern("Test$(touch pwned)"),
            r"^Test\$\(touch pwned\)$"
        );
    }

    #[test]
    fn ids_split_at_the_first_double_colon() {
        assert_eq!(
            split_id("example.com/m/pkg::TestA/x::y").ok(),
            Some(("example.com/m/pkg", "TestA/x::y"))
        );
        assert_eq!(split_id("TestA").ok(), Some(("./...", "TestA")));
        assert!(split_id("-exec=evil::TestA").is_err());
        assert!(split_id("pkg::").is_err());
    }

    #[test]
    fn listing_keeps_runnable_tests_only() {
        let output = concat!(
            r#"{"Action":"output","Package":"m/p","Output":"TestA\n"}"#,
            "\n",
            r#"{"Action":"output","Package":"m/p","Output":"BenchmarkB\n"}"#,
            "\n",
            r#"{"Action":"output","Package":"m/p","Output":"ExampleC\n"}"#,
            "\n",
            r#"{"Action":"output","Package":"m/p","Output":"ok  \tm/p\t0.01s\n"}"#,
            "\n",
            r#"{"Action":"pass","Package":"m/p","Elapsed":0.01}"#,
            "\n",
        );
        let ids: Vec<String> = parse_listing(output)
            .unwrap_or_default()
            .into_iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(ids, vec!["m/p::TestA", "m/p::ExampleC"]);
    }
}
