//! The cargo-nextest adapter: JUnit XML through a generated tool configuration (a
//! `candor` profile with retries off and its store in the scratch directory), one test
//! selected by its target's cargo options and `--exact`.
//!
//! Why JUnit rather than nextest's libtest-json: libtest-json names a library's tests
//! `package::crate_name$test` and a binary's `package::name$test`, while nextest's own
//! binary ids (in JUnit, `cargo nextest list` and filtersets) are `package` and
//! `package::bin/name`; JUnit gives the ids `cargo nextest list` gives. It is also stable,
//! where libtest-json needs `NEXTEST_EXPERIMENTAL_LIBTEST_JSON=1`.
//!
//! nextest cannot run doc tests. The suite's run (and a doc test's id) runs them as the
//! cargo adapter does, through its doc-test step ([`run_doc_tests`]: `cargo test --doc
//! -p PKG` per library, libtest JSON), and adds their executions to the JUnit report as
//! one `<testsuite>` per library, classname `PKG::doc`: the ids are the cargo adapter's,
//! `PKG::doc::src/lib.rs - f (line 4)`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Deserialize;

use super::cargo::{
    CargoPrefix, DocCommand, DocPackage, doc_packages, find_doc_test, locate, run_doc_tests,
    runner_variable, test_targets,
};
use super::{
    Adapter, BatchOrdering, Context, InvocationRecord, ListedTest, RunOptions, RunReport,
    RunnerError, RunnerKind, SeedSupport, available_parallelism, option_value, strings,
};
use crate::results::{Execution, Format, Outcome, ids};

const NO_SEED: &str = "nextest has no shuffle: each test runs in its own process, started in a fixed order, so there is no seed to record";

const ISOLATED: &str = "nextest starts each test in a process of its own, in its own order, several at once (its `-j`)";

/// The profile candor defines in its tool configuration.
const PROFILE: &str = "candor";

/// cargo-nextest through a command prefix (`cargo nextest run` unless `[runner] command`
/// says; it must contain `nextest run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nextest {
    prefix: CargoPrefix,
}

impl Nextest {
    /// The adapter for a prefix.
    pub fn new(command: Option<Vec<String>>) -> Result<Self, RunnerError> {
        Ok(Nextest {
            prefix: CargoPrefix::parse(command, &["nextest", "run"], RunnerKind::Nextest)?,
        })
    }

    fn run(
        &self,
        context: &Context<'_>,
        selection: &Selection<'_>,
    ) -> Result<RunReport, RunnerError> {
        let store = context.scratch_path("nextest-store");
        let report = store.join(PROFILE).join("junit.xml");
        let config = context.scratch_path("nextest-tool.toml");
        fs_err::create_dir_all(&context.scratch)?;
        fs_err::write(&config, tool_config(&store.to_string_lossy()))?;
        let mut invocations = Vec::new();
        let mut warnings = Vec::new();

        let (doc_runs, nextest_selection) = match selection {
            Selection::Suite((packages, cannot)) => {
                warnings.extend(cannot.iter().cloned());
                let runs = packages.iter().map(|p| (p, Vec::new())).collect();
                (runs, Some(None))
            }
            Selection::One(..) | Selection::Batch(_) => (Vec::new(), Some(Some(selection))),
            Selection::OneDoc(package, name) => (vec![(package, vec![name.as_str()])], None),
        };
        match nextest_selection {
            Some(selection) => {
                // A crate whose tests are all doc tests: nextest finding none is no
                // failure when the doc tests run after it.
                let none_pass = !doc_runs.is_empty();
                invocations
                    .push(self.run_nextest(context, selection, &config, &report, none_pass)?);
            }
            // Only a doc test: no nextest process, and no report of an earlier one.
            None => match fs_err::remove_file(&report) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                    return Err(error.into());
                }
                _ => {}
            },
        }
        if !doc_runs.is_empty() {
            self.run_docs(context, &doc_runs, &report, &mut invocations, &mut warnings)?;
        }
        let run = RunReport {
            runner: RunnerKind::Nextest,
            report,
            format: Some(Format::Junit),
            seed: None,
            workers: self.workers(),
            invocations,
            warnings,
        };
        context.check_frames(&run)?;
        Ok(run)
    }

    /// One `cargo nextest run` of the whole suite (`None`) or a selection, its JUnit
    /// written to `report`; with `none_pass`, finding no test is no failure.
    fn run_nextest(
        &self,
        context: &Context<'_>,
        selection: Option<&Selection<'_>>,
        config: &std::path::Path,
        report: &std::path::Path,
        none_pass: bool,
    ) -> Result<InvocationRecord, RunnerError> {
        let mut argv = self.prefix.command(&["nextest", "run"]);
        argv.extend(strings(&[
            "--no-fail-fast",
            "--retries",
            "0",
            "--tool-config-file",
        ]));
        argv.push(format!("{PROFILE}:{}", config.display()));
        argv.extend(strings(&["--profile", PROFILE]));
        match selection {
            Some(Selection::One(selector, _)) => argv.extend(selector.iter().cloned()),
            // One expression for the whole batch: nextest still starts each test in a
            // process of its own.
            Some(Selection::Batch(expression)) => {
                argv.push("-E".to_owned());
                argv.push(expression.clone());
            }
            _ => {}
        }
        let one = matches!(selection, Some(Selection::One(..)));
        if one || !self.prefix.binary_options.is_empty() {
            argv.push("--".to_owned());
            argv.extend(self.prefix.binary_options.iter().cloned());
        }
        if let Some(Selection::One(_, name)) = selection {
            argv.extend(strings(&["--exact", name]));
        }
        let mut invocation = context.invocation("nextest-run", argv).report_at(report);
        if none_pass {
            // The variable, not `--no-tests=pass`: a nextest older than the option
            // refuses the option, ignores the variable, and never exits 4 either.
            invocation = invocation.env(crate::env_vars::EnvVars::NEXTEST_NO_TESTS, "pass");
        }
        if let Some(target) = context.cargo_target() {
            invocation = invocation.env("CARGO_TARGET_DIR", &target);
        }
        let record = context.run(invocation)?;
        context.check_ran(RunnerKind::Nextest, &record, report)?;
        Ok(record)
    }

    /// The doc-test step the cargo adapter runs (`cargo test --doc -p PKG` per library,
    /// its cargo options those of the prefix `cargo test` accepts, no seed: nextest
    /// records none), its executions added to the JUnit `report`.
    fn run_docs(
        &self,
        context: &Context<'_>,
        runs: &[(&DocPackage, Vec<&str>)],
        report: &std::path::Path,
        invocations: &mut Vec<InvocationRecord>,
        warnings: &mut Vec<String>,
    ) -> Result<(), RunnerError> {
        let runner_variable = runner_variable(context)?;
        let mut cargo_test = self.prefix.base.clone();
        cargo_test.push("test".to_owned());
        cargo_test.extend(cargo_test_options(&self.prefix.cargo_options));
        let command = DocCommand {
            cargo_test,
            binary_options: &self.prefix.binary_options,
            seed: None,
            runner_variable: &runner_variable,
        };
        let doc_report = context.scratch_path("nextest-doc-tests.jsonl");
        let mut doc_file = std::io::BufWriter::new(fs_err::File::create(&doc_report)?);
        let before = invocations.len();
        run_doc_tests(
            context,
            &command,
            runs,
            &mut doc_file,
            invocations,
            warnings,
        )?;
        std::io::Write::flush(&mut doc_file)?;
        drop(doc_file);
        if invocations.len() == before {
            return Ok(());
        }
        let (executions, _) = crate::results::parse_all(
            fs_err::File::open(&doc_report)?,
            &crate::results::ParseOptions::default(),
        )
        .map_err(|error| RunnerError::Output {
            what: format!("the doc tests' libtest JSON ({})", doc_report.display()),
            message: error.to_string(),
        })?;
        let packages: Vec<&DocPackage> = runs.iter().map(|(package, _)| *package).collect();
        let suites = doc_suites(&packages, &executions);
        let existing = match fs_err::read_to_string(report) {
            Ok(text) => Some(text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(error) => return Err(error.into()),
        };
        if let Some(parent) = report.parent() {
            fs_err::create_dir_all(parent)?;
        }
        fs_err::write(
            report,
            with_suites(existing.as_deref(), &suites, executions.len()),
        )?;
        Ok(())
    }

    /// `-j`/`--test-threads` from the prefix, else `NEXTEST_TEST_THREADS`, else the
    /// machine's parallelism, nextest's default (a profile's `test-threads` is not read).
    /// `num-cpus` and negative counts are left to nextest and reported as unknown.
    fn workers(&self) -> Option<u32> {
        let spelled = option_value(&self.prefix.cargo_options, &["-j", "--test-threads"], true)
            .map(str::to_owned)
            .or_else(|| std::env::var(crate::env_vars::EnvVars::NEXTEST_TEST_THREADS).ok());
        match spelled {
            Some(value) => value.parse().ok(),
            None => available_parallelism(),
        }
    }
}

/// What a nextest run covers.
enum Selection<'a> {
    /// Every test, then every library's doc tests (with the warnings about libraries
    /// whose doc tests cargo does not run).
    Suite(super::cargo::Docs),
    /// One test: its target's cargo options and its name.
    One(&'a [String], &'a str),
    /// One doc test: its library and its name, run by `cargo test --doc` alone.
    OneDoc(DocPackage, String),
    /// Several tests: a filterset naming each exactly.
    Batch(String),
}

/// The options of a `cargo nextest run` prefix that `cargo test` takes too, for the doc
/// tests' `cargo test --doc`: features, profile (nextest's `--cargo-profile`), target,
/// manifest, target folder, configuration and the lock flags. nextest's own (`-j`,
/// `--profile`, filters) are left out.
fn cargo_test_options(options: &[String]) -> Vec<String> {
    const FLAGS: [&str; 6] = [
        "--all-features",
        "--no-default-features",
        "--release",
        "--locked",
        "--frozen",
        "--offline",
    ];
    const VALUED: [&str; 7] = [
        "--features",
        "-F",
        "--target",
        "--manifest-path",
        "--target-dir",
        "--config",
        "-Z",
    ];
    let mut kept = Vec::new();
    let mut options = options.iter();
    while let Some(option) = options.next() {
        let (name, inline) = match option.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (option.as_str(), None),
        };
        let renamed = match name {
            "--cargo-profile" => "--profile",
            other => other,
        };
        if FLAGS.contains(&name) && inline.is_none() {
            kept.push(option.clone());
        } else if VALUED.contains(&name) || name == "--cargo-profile" {
            let value = match inline {
                Some(value) => Some(value.to_owned()),
                None => options.next().cloned(),
            };
            if let Some(value) = value {
                kept.push(renamed.to_owned());
                kept.push(value);
            }
        } else if inline.is_none() && takes_value(name) {
            // A nextest option's value is not an option of its own.
            options.next();
        }
    }
    kept
}

/// nextest options (besides [`cargo_test_options`]'s) whose value is a separate argument.
fn takes_value(name: &str) -> bool {
    [
        "-j",
        "--test-threads",
        "-P",
        "--profile",
        "-E",
        "--filterset",
        "--partition",
        "--retries",
        "--run-ignored",
        "--tool-config-file",
        "--color",
        "--message-format",
        "--message-format-version",
        "-p",
        "--package",
        "--bin",
        "--test",
        "--example",
        "--bench",
        "--exclude",
        "--archive-file",
        "--workspace-remap",
        "--target-dir-remap",
        "--binaries-metadata",
        "--cargo-metadata",
        "--no-tests",
        "--status-level",
        "--final-status-level",
        "--success-output",
        "--failure-output",
        "--hide-progress-bar",
        "--max-fail",
        "--stress-count",
        "--stress-duration",
    ]
    .contains(&name)
}

/// Each library's doc tests as a JUnit `<testsuite>` in nextest's spelling: classname
/// `PKG::doc`, name as rustdoc gives it, so the JUnit reader's id is the cargo adapter's.
fn doc_suites(packages: &[&DocPackage], executions: &[Execution]) -> String {
    let mut xml = String::new();
    for package in packages {
        let prefix = format!("{}::", package.binary_id);
        let cases: Vec<(&str, &Execution)> = executions
            .iter()
            .filter_map(|e| Some((e.test_id.strip_prefix(&prefix)?, e)))
            .collect();
        if cases.is_empty() {
            continue;
        }
        let count = |outcomes: &[Outcome]| {
            cases
                .iter()
                .filter(|(_, e)| outcomes.contains(&e.outcome))
                .count()
        };
        let _ = writeln!(
            xml,
            "    <testsuite name=\"{}\" tests=\"{}\" skipped=\"{}\" errors=\"{}\" failures=\"{}\">",
            xml_text(&package.binary_id),
            cases.len(),
            count(&[Outcome::Skip]),
            count(&[Outcome::Error]),
            count(&[Outcome::Fail]),
        );
        for (name, execution) in cases {
            xml.push_str(&doc_case(&package.binary_id, name, execution));
        }
        xml.push_str("    </testsuite>\n");
    }
    xml
}

/// One `<testcase>`: a red one's failure as `<failure>` or `<error>` (message, type
/// when the reader found one, text), a skip's reason, the captured output.
fn doc_case(classname: &str, name: &str, execution: &Execution) -> String {
    let mut xml = format!(
        "        <testcase name=\"{}\" classname=\"{}\"",
        xml_text(name),
        xml_text(classname)
    );
    if let Some(seconds) = execution.duration {
        let _ = write!(xml, " time=\"{seconds:.3}\"");
    }
    let mut body = String::new();
    match execution.outcome {
        Outcome::Fail | Outcome::Error => {
            let element = if execution.outcome == Outcome::Fail {
                "failure"
            } else {
                "error"
            };
            let (message, exception, text) = match &execution.failure {
                Some(failure) => (
                    failure.message.as_str(),
                    failure.exception.as_deref(),
                    failure.text.as_str(),
                ),
                None => ("", None, ""),
            };
            let _ = writeln!(
                body,
                "            <{element} message=\"{}\" type=\"{}\">{}</{element}>",
                xml_text(message),
                xml_text(exception.unwrap_or("test failure")),
                xml_text(text)
            );
        }
        Outcome::Skip => match &execution.skip_message {
            Some(message) => {
                let _ = writeln!(
                    body,
                    "            <skipped message=\"{}\"/>",
                    xml_text(message)
                );
            }
            None => body.push_str("            <skipped/>\n"),
        },
        Outcome::Pass | Outcome::FlakyPass => {}
    }
    if execution.outcome.is_red() {
        for (element, text) in [
            ("system-out", &execution.stdout),
            ("system-err", &execution.stderr),
        ] {
            if let Some(text) = text {
                let _ = writeln!(
                    body,
                    "            <{element}>{}</{element}>",
                    xml_text(text)
                );
            }
        }
    }
    if body.is_empty() {
        xml.push_str("/>\n");
    } else {
        xml.push_str(">\n");
        xml.push_str(&body);
        xml.push_str("        </testcase>\n");
    }
    xml
}

/// Text escaped for XML, without the characters XML 1.0 cannot hold (a terminal's
/// colour codes).
fn xml_text(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t' | '\r'))
        .collect();
    quick_xml::escape::escape(kept.as_str()).into_owned()
}

/// nextest's JUnit (`existing`, when it wrote one) with `suites` before its closing
/// `</testsuites>`; without one, a `nextest-run` root holding them (`tests` cases).
fn with_suites(existing: Option<&str>, suites: &str, tests: usize) -> String {
    if let Some(existing) = existing
        && let Some(end) = existing.rfind("</testsuites>")
    {
        let mut merged = existing[..end].to_owned();
        if !merged.ends_with('\n') {
            merged.push('\n');
        }
        merged.push_str(suites);
        merged.push_str(&existing[end..]);
        return merged;
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"nextest-run\" tests=\"{tests}\">\n{suites}</testsuites>\n"
    )
}

/// A filterset that selects exactly the tests named, each as `binary-id::name`:
/// `(binary_id(=B) & test(=N)) | …`. Each string is escaped for the filterset grammar,
/// whose strings end at an unescaped `)` or `,`.
fn batch_filterset(located: &[(String, String)]) -> String {
    let escape = |text: &str| {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            if matches!(c, '\\' | ')' | ',' | '(') {
                out.push('\\');
            }
            out.push(c);
        }
        out
    };
    located
        .iter()
        .map(|(binary, name)| format!("(binary_id(={}) & test(={}))", escape(binary), escape(name)))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The tool configuration: a profile without retries that keeps going after a failure
/// and writes JUnit, its store in candor's scratch directory so nothing lands in the
/// user's `target/`.
fn tool_config(store: &str) -> String {
    let mut junit = toml::Table::new();
    junit.insert("path".into(), "junit.xml".into());
    let mut profile = toml::Table::new();
    profile.insert("retries".into(), 0.into());
    profile.insert("fail-fast".into(), false.into());
    profile.insert("junit".into(), junit.into());
    let mut profiles = toml::Table::new();
    profiles.insert(PROFILE.into(), profile.into());
    let mut store_table = toml::Table::new();
    store_table.insert("dir".into(), store.into());
    let mut config = toml::Table::new();
    config.insert("store".into(), store_table.into());
    config.insert("profile".into(), profiles.into());
    config.to_string()
}

impl Adapter for Nextest {
    fn kind(&self) -> RunnerKind {
        RunnerKind::Nextest
    }

    fn seed_support(&self) -> SeedSupport {
        SeedSupport::None(NO_SEED)
    }

    /// Every test, then each library's doc tests through `cargo test --doc`.
    fn run_suite(
        &self,
        context: &Context<'_>,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let docs = doc_packages(&self.prefix, context)?;
        self.run(context, &Selection::Suite(docs))
    }

    /// A doc test's id (`pkg::doc::src/lib.rs - f (line 4)`) runs `cargo test --doc -p
    /// pkg -- f` as under the cargo adapter; any other, `cargo nextest run` of its target.
    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        if let Some((package, name)) = find_doc_test(&self.prefix, context, test_id)? {
            return self.run(context, &Selection::OneDoc(package, name));
        }
        let targets = test_targets(&self.prefix, context)?;
        let (target, name) = locate(&targets, test_id, RunnerKind::Nextest)?;
        self.run(context, &Selection::One(&target.selector, &name))
    }

    fn batches(&self) -> bool {
        true
    }

    fn batch_ordering(&self) -> BatchOrdering {
        BatchOrdering::Isolated(ISOLATED)
    }

    /// One `cargo nextest run -E '(binary_id(=B) & test(=N)) | …'`, retries off, its
    /// own parallelism (`workers`).
    fn run_batch(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let targets = test_targets(&self.prefix, context)?;
        let located = test_ids
            .iter()
            .map(|id| {
                locate(&targets, id, RunnerKind::Nextest)
                    .map(|(target, name)| (target.binary_id.clone(), name))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.run(context, &Selection::Batch(batch_filterset(&located)))
    }

    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        #[derive(Deserialize)]
        struct Listing {
            #[serde(rename = "rust-suites")]
            suites: BTreeMap<String, Suite>,
        }
        #[derive(Deserialize)]
        struct Suite {
            #[serde(default)]
            testcases: BTreeMap<String, serde_json::Value>,
        }
        let targets = test_targets(&self.prefix, context)?;
        let mut argv = self.prefix.base.clone();
        argv.extend(strings(&["nextest", "list", "--message-format", "json"]));
        let output = context.probe("nextest-list", argv, &[])?;
        let listing: Listing =
            serde_json::from_str(&output).map_err(|error| RunnerError::Output {
                what: "cargo nextest list --message-format json".to_owned(),
                message: error.to_string(),
            })?;
        let mut tests = Vec::new();
        for (binary_id, suite) in listing.suites {
            let file = targets
                .iter()
                .find(|t| t.binary_id == binary_id)
                .and_then(|t| t.file.clone());
            tests.extend(suite.testcases.into_keys().map(|name| ListedTest {
                id: ids::cargo(Some(&binary_id), &name),
                file: file.clone(),
            }));
        }
        Ok(tests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_filterset_names_each_test_exactly_and_escapes_its_strings() {
        let located = vec![
            ("my-crate".to_owned(), "api::adds".to_owned()),
            ("my-crate::it".to_owned(), "odd),name\\".to_owned()),
        ];
        assert_eq!(
            batch_filterset(&located),
            r"(binary_id(=my-crate) & test(=api::adds)) | (binary_id(=my-crate::it) & test(=odd\)\,name\\))"
        );
    }

    #[test]
    fn tool_config_turns_retries_off_and_keeps_the_store_in_scratch() {
        let config: toml::Table =
            toml::from_str(&tool_config("/tmp/x \"y\"/store")).unwrap_or_default();
        assert_eq!(config["store"]["dir"].as_str(), Some("/tmp/x \"y\"/store"));
        assert_eq!(config["profile"]["candor"]["retries"].as_integer(), Some(0));
        assert_eq!(
            config["profile"]["candor"]["fail-fast"].as_bool(),
            Some(false)
        );
        assert_eq!(
            config["profile"]["candor"]["junit"]["path"].as_str(),
            Some("junit.xml")
        );
    }

    #[test]
    fn only_the_options_cargo_test_takes_too_reach_the_doc_tests() {
        let options = strings(&[
            "--features",
            "a b",
            "-j",
            "2",
            "--cargo-profile=ci",
            "--no-default-features",
            "-E",
            "test(x)",
            "--profile",
            "default",
            "--target-dir",
            "/t",
            "--run-ignored=all",
            "--locked",
        ]);
        assert_eq!(
            cargo_test_options(&options),
            [
                "--features",
                "a b",
                "--profile",
                "ci",
                "--no-default-features",
                "--target-dir",
                "/t",
                "--locked"
            ]
        );
    }

    /// The doc tests' JUnit reads back, with nextest's report, as the cargo adapter's
    /// ids and outcomes: a pass, a failure with its text, a skip with its reason.
    #[test]
    fn doc_tests_read_back_from_the_junit_under_the_cargo_adapter_s_ids() {
        let package = DocPackage {
            binary_id: "calc::doc".to_owned(),
            spec: "calc@0.1.0".to_owned(),
        };
        let id = |name: &str| format!("calc::doc::src/lib.rs - {name}");
        let mut failed = Execution::new(id("sub (line 10)"), Outcome::Fail);
        failed.failure = Some(Box::new(crate::results::Failure {
            exception: None,
            message: "assertion `left == right` failed <&>".to_owned(),
            text: "thread 'main' panicked at src/lib.rs:3:1:\nassertion `left == right` failed <&>\x1b[0m".to_owned(),
            frames: Vec::new(),
            failing_frame: None,
        }));
        let mut skipped = Execution::new(id("mul (line 20)"), Outcome::Skip);
        skipped.skip_message = Some("not today".to_owned());
        let mut passed = Execution::new(id("add (line 3)"), Outcome::Pass);
        passed.duration = Some(0.25);
        let other = Execution::new("other::doc::src/lib.rs - f (line 1)", Outcome::Pass);
        let suites = doc_suites(&[&package], &[passed, failed, skipped, other]);
        let nextest = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"nextest-run\" tests=\"1\">\n    <testsuite name=\"calc\" tests=\"1\">\n        <testcase name=\"tests::adds\" classname=\"calc\" time=\"0.001\"/>\n    </testsuite>\n</testsuites>\n";
        for (existing, ids) in [
            (Some(nextest), vec!["calc::tests::adds".to_owned()]),
            (None, Vec::new()),
        ] {
            let xml = with_suites(existing, &suites, 3);
            let (executions, summary) =
                crate::results::parse_all(xml.as_bytes(), &crate::results::ParseOptions::default())
                    .unwrap_or_else(|e| panic!("{e}\n{xml}"));
            assert!(summary.warnings.is_empty(), "{:?}\n{xml}", summary.warnings);
            let read: Vec<(String, Outcome)> = executions
                .iter()
                .map(|e| (e.test_id.clone(), e.outcome))
                .collect();
            let mut expected: Vec<(String, Outcome)> =
                ids.iter().map(|id| (id.clone(), Outcome::Pass)).collect();
            expected.extend([
                (id("add (line 3)"), Outcome::Pass),
                (id("sub (line 10)"), Outcome::Fail),
                (id("mul (line 20)"), Outcome::Skip),
            ]);
            assert_eq!(read, expected, "{xml}");
            let failure = executions[ids.len() + 1]
                .failure
                .as_ref()
                .unwrap_or_else(|| panic!("a failure: {xml}"));
            assert_eq!(failure.message, "assertion `left == right` failed <&>");
            assert!(failure.text.contains("panicked at src/lib.rs:3:1"), "{xml}");
            assert_eq!(
                executions[ids.len() + 2].skip_message.as_deref(),
                Some("not today")
            );
            assert_eq!(executions[ids.len()].duration, Some(0.25));
        }
    }
}
