//! Playwright Test's JSON report (`playwright test --reporter=json`): one document,
//! `suites` per test file, nested `suites` per `describe`, `specs` per test, and under
//! each spec one `tests` entry per project, each with every attempt in `results`. Read
//! natively rather than through the `junit` reporter because it keeps what JUnit loses:
//! the project, the describe path as a list, the line, and every retry with its own
//! status (the `junit` reporter writes one test case per test and drops the retries).
//!
//! Ids: `[project] file::describe > … > title`, the jest form (`results::ids::js`) with
//! the project in front as Playwright prints it (`[chromium] › a.spec.ts › …`); no
//! `[project] ` when the project has no name (a config without `projects`). The file is
//! relative to the repository root when the report's files lie under it, else to the
//! folder of the Playwright config (`config.configFile`), which is the project's root in
//! the usual layout; Playwright itself writes it relative to `config.rootDir` (the
//! `testDir`), which would drop `tests/` from every id.
//!
//! Every result of a test is one execution with the test's id, in the order Playwright
//! ran them, so the store merges them as attempts (`Execution::absorb_retry`): a pass
//! after a failed attempt is a flaky pass, never a plain pass. A result's outcome is its
//! `status` against the test's `expectedStatus`: `test.fail()` that fails passes, one that
//! passes fails; `timedOut` and `interrupted` are errors. Report-level `errors` (a file
//! that does not load, a failing global setup) are one `error` execution each, named by
//! the file when the error has a location.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;

use super::frames::{Language, build_failure};
use super::model::{Execution, Outcome, cap_text};
use super::{ParseError, ParseOptions, ParseSummary, Sink, ids};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    #[serde(default)]
    config: Config,
    suites: Vec<Suite>,
    #[serde(default)]
    errors: Vec<ReportedError>,
}

/// The paths that place the report's files.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    /// The folder the report's `file` fields are relative to.
    #[serde(default)]
    pub root_dir: Option<String>,
    /// The Playwright config the run used.
    #[serde(default)]
    pub config_file: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Suite {
    #[serde(default)]
    title: String,
    #[serde(default)]
    file: String,
    #[serde(default)]
    suites: Vec<Suite>,
    #[serde(default)]
    specs: Vec<Spec>,
}

#[derive(Debug, Deserialize)]
struct Spec {
    title: String,
    #[serde(default)]
    file: String,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    tests: Vec<TestEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TestEntry {
    #[serde(default)]
    project_name: String,
    #[serde(default = "passed")]
    expected_status: String,
    #[serde(default)]
    annotations: Vec<Annotation>,
    #[serde(default)]
    results: Vec<TestResult>,
}

fn passed() -> String {
    "passed".to_owned()
}

#[derive(Debug, Deserialize)]
struct Annotation {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Debug, Deserialize)]
struct TestResult {
    status: String,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    error: Option<ReportedError>,
    #[serde(default)]
    errors: Vec<ReportedError>,
    #[serde(default)]
    stdout: Vec<Chunk>,
    #[serde(default)]
    stderr: Vec<Chunk>,
}

#[derive(Debug, Deserialize)]
struct ReportedError {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    stack: Option<String>,
    #[serde(default)]
    location: Option<ErrorLocation>,
}

#[derive(Debug, Deserialize)]
struct ErrorLocation {
    file: String,
    #[serde(default)]
    line: Option<u32>,
}

/// A piece of a test's output: text, or base64 bytes (`buffer`), which are not kept.
#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    text: Option<String>,
}

/// How a report's files become the files of ids.
#[derive(Debug, Clone)]
pub struct Files {
    root_dir: Option<String>,
    config_dir: Option<String>,
    repo_root: Option<String>,
}

impl Files {
    /// From the report's `config` and the repository root.
    pub fn new(config: &Config, repo_root: Option<&str>) -> Self {
        let config_dir = config.config_file.as_deref().and_then(|file| {
            Path::new(file)
                .parent()
                .map(|dir| dir.to_string_lossy().into_owned())
        });
        Files {
            root_dir: config.root_dir.clone(),
            config_dir,
            repo_root: repo_root.map(str::to_owned),
        }
    }

    /// The id's file for a report `file` (relative to `rootDir`) or an absolute path.
    pub fn id_file(&self, file: &str) -> String {
        let file = file.replace('\\', "/");
        let absolute = if file.starts_with('/') {
            file
        } else {
            match &self.root_dir {
                Some(root) => format!("{}/{file}", root.replace('\\', "/").trim_end_matches('/')),
                None => return file,
            }
        };
        for base in [&self.repo_root, &self.config_dir].into_iter().flatten() {
            let base = base.replace('\\', "/");
            if let Some(rest) = absolute
                .strip_prefix(base.trim_end_matches('/'))
                .and_then(|rest| rest.strip_prefix('/'))
            {
                return rest.to_owned();
            }
        }
        absolute
    }
}

/// A Playwright test id from its project, file and titles.
pub fn test_id(project: &str, file: &str, titles: &[String]) -> String {
    let id = ids::js(file, titles);
    if project.is_empty() {
        id
    } else {
        format!("[{project}] {id}")
    }
}

/// A Playwright id split into its project (empty for none), file and titles; `None` when
/// it is not one.
pub fn split_test_id(id: &str) -> Option<(&str, &str, Vec<&str>)> {
    let (project, rest) = match id.strip_prefix('[') {
        Some(rest) => {
            let (project, rest) = rest.split_once("] ")?;
            (project, rest)
        }
        None => ("", id),
    };
    let (file, titles) = ids::js_titles(rest)?;
    Some((project, file, titles))
}

/// Calls `visit` with every test entry of a report (a `serde_json::Value`), its id, so
/// that a caller can keep or drop it (`true` keeps). Returns the ids kept.
pub fn retain_tests(
    report: &mut serde_json::Value,
    repo_root: Option<&str>,
    mut keep: impl FnMut(&str) -> bool,
) -> Vec<String> {
    let config: Config = report
        .get("config")
        .and_then(|c| serde_json::from_value(c.clone()).ok())
        .unwrap_or_default();
    let files = Files::new(&config, repo_root);
    let mut kept = Vec::new();
    if let Some(suites) = report
        .get_mut("suites")
        .and_then(serde_json::Value::as_array_mut)
    {
        for suite in suites {
            retain_in_suite(suite, &files, &mut Vec::new(), true, &mut keep, &mut kept);
        }
    }
    kept
}

fn retain_in_suite(
    suite: &mut serde_json::Value,
    files: &Files,
    titles: &mut Vec<String>,
    file_level: bool,
    keep: &mut impl FnMut(&str) -> bool,
    kept: &mut Vec<String>,
) {
    let depth = titles.len();
    if !file_level {
        titles.push(text_of(suite, "title"));
    }
    if let Some(specs) = suite
        .get_mut("specs")
        .and_then(serde_json::Value::as_array_mut)
    {
        for spec in specs.iter_mut() {
            let file = files.id_file(&text_of(spec, "file"));
            let mut spec_titles = titles.clone();
            spec_titles.push(text_of(spec, "title"));
            if let Some(tests) = spec
                .get_mut("tests")
                .and_then(serde_json::Value::as_array_mut)
            {
                tests.retain(|test| {
                    let id = test_id(&text_of(test, "projectName"), &file, &spec_titles);
                    let keep = keep(&id);
                    if keep {
                        kept.push(id);
                    }
                    keep
                });
            }
        }
        specs.retain(|spec| {
            spec.get("tests")
                .and_then(serde_json::Value::as_array)
                .is_some_and(|tests| !tests.is_empty())
        });
    }
    if let Some(children) = suite
        .get_mut("suites")
        .and_then(serde_json::Value::as_array_mut)
    {
        for child in children {
            retain_in_suite(child, files, titles, false, keep, kept);
        }
    }
    titles.truncate(depth);
}

fn text_of(value: &serde_json::Value, key: &str) -> String {
    value
        .get(key)
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Parses a whole report and hands each attempt of each test to `sink`, in the report's
/// order (file, describe, test, project, attempt).
pub fn parse<R: Read>(
    reader: R,
    options: &ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<ParseSummary, ParseError> {
    let report: Report = serde_json::from_reader(reader)
        .map_err(|error| super::jestjson::json_error(&error, "Playwright"))?;
    let files = Files::new(&report.config, options.repo_root.as_deref());
    let mut summary = ParseSummary {
        producer: Some("playwright".to_owned()),
        ..ParseSummary::default()
    };
    for error in report.errors {
        let name = error.location.as_ref().map_or_else(
            || "playwright".to_owned(),
            |location| files.id_file(&location.file),
        );
        let mut execution = Execution::new(name.clone(), Outcome::Error);
        if let Some(location) = &error.location {
            execution.file = Some(name);
            execution.line = location.line;
        }
        execution.failure = Some(Box::new(failure_of(&error, options)));
        summary.executions += 1;
        sink(execution)?;
    }
    for suite in &report.suites {
        walk(
            suite,
            &files,
            &mut Vec::new(),
            true,
            options,
            &mut summary,
            sink,
        )?;
    }
    Ok(summary)
}

fn walk(
    suite: &Suite,
    files: &Files,
    titles: &mut Vec<String>,
    file_level: bool,
    options: &ParseOptions,
    summary: &mut ParseSummary,
    sink: &mut Sink<'_>,
) -> Result<(), ParseError> {
    let depth = titles.len();
    if !file_level {
        titles.push(suite.title.clone());
    }
    for spec in &suite.specs {
        let spec_file = if spec.file.is_empty() {
            &suite.file
        } else {
            &spec.file
        };
        let file = files.id_file(spec_file);
        let mut spec_titles = titles.clone();
        spec_titles.push(spec.title.clone());
        for test in &spec.tests {
            let id = test_id(&test.project_name, &file, &spec_titles);
            for execution in attempts(&id, &file, spec.line, test, options) {
                summary.executions += 1;
                sink(execution)?;
            }
        }
    }
    for child in &suite.suites {
        walk(child, files, titles, false, options, summary, sink)?;
    }
    titles.truncate(depth);
    Ok(())
}

/// One execution per result; a test that never ran (skipped at collection, or cut off by
/// `--max-failures`) is one skip.
fn attempts(
    id: &str,
    file: &str,
    line: Option<u32>,
    test: &TestEntry,
    options: &ParseOptions,
) -> Vec<Execution> {
    let skip_message = || {
        test.annotations
            .iter()
            .find(|a| matches!(a.kind.as_str(), "skip" | "fixme"))
            .map(|a| a.description.clone().unwrap_or_else(|| a.kind.clone()))
    };
    let base = |outcome: Outcome| {
        let mut execution = Execution::new(id.to_owned(), outcome);
        execution.file = Some(file.to_owned());
        execution.line = line;
        execution
    };
    if test.results.is_empty() {
        let mut execution = base(Outcome::Skip);
        execution.skip_message = skip_message();
        return vec![execution];
    }
    test.results
        .iter()
        .map(|result| {
            let expected = result.status == test.expected_status;
            let outcome = match result.status.as_str() {
                "skipped" => Outcome::Skip,
                _ if expected => Outcome::Pass,
                "passed" | "failed" => Outcome::Fail,
                // timedOut, interrupted
                _ => Outcome::Error,
            };
            let mut execution = base(outcome);
            execution.duration = result
                .duration
                .filter(|d| d.is_finite() && *d >= 0.0)
                .map(|ms| ms / 1000.0);
            match outcome {
                Outcome::Skip => execution.skip_message = skip_message(),
                Outcome::Fail | Outcome::Error => {
                    execution.failure = Some(Box::new(
                        match result.error.as_ref().or(result.errors.first()) {
                            Some(error) => failure_of(error, options),
                            None => build_failure(
                                None,
                                None,
                                unexplained(&result.status, &test.expected_status),
                                Language::JavaScript,
                                options,
                            ),
                        },
                    ));
                }
                _ => {}
            }
            execution.stdout = joined(&result.stdout);
            execution.stderr = joined(&result.stderr);
            execution
        })
        .collect()
}

/// Why a result with no error is red: `test.fail()` that passed, or a status alone.
fn unexplained(status: &str, expected: &str) -> String {
    if status == "passed" {
        format!("Error: the test passed and was expected to be {expected} (`test.fail()`)")
    } else {
        format!("Error: the test ended {status}, expected {expected}")
    }
}

fn failure_of(error: &ReportedError, options: &ParseOptions) -> super::Failure {
    // The stack starts with the message; the message alone when there is no stack.
    let text = error
        .stack
        .clone()
        .or_else(|| error.message.clone())
        .unwrap_or_default();
    build_failure(None, None, cap_text(text), Language::JavaScript, options)
}

fn joined(chunks: &[Chunk]) -> Option<String> {
    let text: String = chunks.iter().filter_map(|c| c.text.as_deref()).collect();
    (!text.is_empty()).then(|| cap_text(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str, root: Option<&str>) -> Vec<Execution> {
        let options = ParseOptions {
            repo_root: root.map(str::to_owned),
            ..ParseOptions::default()
        };
        let mut executions = Vec::new();
        let summary = parse(text.as_bytes(), &options, &mut |e| {
            executions.push(e);
            Ok(())
        })
        .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(summary.producer.as_deref(), Some("playwright"));
        executions
    }

    const REPORT: &str = r#"{"config":{"configFile":"/r/playwright.config.ts","rootDir":"/r/tests"},
      "suites":[{"title":"a.spec.ts","file":"a.spec.ts","specs":[
        {"title":"top","file":"a.spec.ts","line":3,"tests":[
          {"projectName":"chromium","expectedStatus":"passed","results":[
            {"status":"failed","duration":12,"retry":0,"error":{"message":"Error: \u001b[31mboom\u001b[39m","stack":"Error: boom\n    at /r/tests/a.spec.ts:4:19"}},
            {"status":"passed","duration":10,"retry":1}]},
          {"projectName":"firefox","expectedStatus":"passed","results":[{"status":"passed","duration":9}]}]}],
       "suites":[{"title":"outer","file":"a.spec.ts","specs":[],"suites":[{"title":"in > ner","file":"a.spec.ts","specs":[
          {"title":"x::y","file":"a.spec.ts","line":9,"tests":[
            {"projectName":"","expectedStatus":"failed","results":[{"status":"failed","duration":1}]},
            {"projectName":"p","expectedStatus":"failed","results":[{"status":"passed","duration":1}]},
            {"projectName":"q","expectedStatus":"skipped","annotations":[{"type":"skip","description":"not here"}],"results":[{"status":"skipped"}]},
            {"projectName":"t","expectedStatus":"passed","results":[{"status":"timedOut","errors":[{"message":"Test timeout of 30000ms exceeded."}]}]}]}]}]}]}],
      "errors":[],"stats":{}}"#;

    /// Issue #20 (Playwright): every attempt is its own execution, ids carry the project
    /// and the file relative to the repository root, `expectedStatus` decides.
    #[test]
    fn attempts_projects_and_expected_statuses() {
        let executions = parse_text(REPORT, Some("/r"));
        let seen: Vec<(&str, Outcome)> = executions
            .iter()
            .map(|e| (e.test_id.as_str(), e.outcome))
            .collect();
        assert_eq!(
            seen,
            [
                ("[chromium] tests/a.spec.ts::top", Outcome::Fail),
                ("[chromium] tests/a.spec.ts::top", Outcome::Pass),
                ("[firefox] tests/a.spec.ts::top", Outcome::Pass),
                ("tests/a.spec.ts::outer > in > ner > x::y", Outcome::Pass),
                (
                    "[p] tests/a.spec.ts::outer > in > ner > x::y",
                    Outcome::Fail
                ),
                (
                    "[q] tests/a.spec.ts::outer > in > ner > x::y",
                    Outcome::Skip
                ),
                (
                    "[t] tests/a.spec.ts::outer > in > ner > x::y",
                    Outcome::Error
                ),
            ]
        );
        let failure = executions[0].failure.as_ref().expect("a failure");
        assert_eq!(failure.message, "boom");
        assert_eq!(
            failure
                .failing_frame
                .as_ref()
                .map(super::super::model::Frame::location),
            Some("tests/a.spec.ts:4".to_owned())
        );
        assert_eq!(executions[0].line, Some(3));
        assert_eq!(executions[5].skip_message.as_deref(), Some("not here"));
        assert!(
            executions[4]
                .failure
                .as_ref()
                .is_some_and(|f| f.message.contains("test.fail()"))
        );
    }

    /// Issue #20 (Playwright) item 4: merged as the store merges them, a retry's pass is a
    /// flaky pass with both attempts, never a plain pass.
    #[test]
    fn a_retried_pass_merges_into_a_flaky_pass() {
        let options = ParseOptions {
            repo_root: Some("/r".to_owned()),
            ..ParseOptions::default()
        };
        let (merged, _) =
            crate::results::parse_all(REPORT.as_bytes(), &options).expect("the report parses");
        let top = &merged[0];
        assert_eq!(top.test_id, "[chromium] tests/a.spec.ts::top");
        assert_eq!((top.outcome, top.attempts), (Outcome::FlakyPass, 2));
        assert_eq!(merged[1].outcome, Outcome::Pass);
    }

    #[test]
    fn without_a_repository_root_files_are_relative_to_the_config() {
        let executions = parse_text(REPORT, None);
        assert_eq!(executions[0].test_id, "[chromium] tests/a.spec.ts::top");
        let elsewhere = REPORT.replace("/r/playwright.config.ts", "/ci/playwright.config.ts");
        let executions = parse_text(&elsewhere, None);
        assert_eq!(executions[0].test_id, "[chromium] /r/tests/a.spec.ts::top");
    }

    #[test]
    fn a_file_that_does_not_load_is_one_error_named_by_the_file() {
        let report = r#"{"config":{"configFile":"/r/playwright.config.js","rootDir":"/r/tests"},"suites":[],
          "errors":[{"message":"SyntaxError: /r/tests/bad.spec.js: Unexpected token (1:67)","location":{"file":"/r/tests/bad.spec.js","line":1,"column":68}}]}"#;
        let executions = parse_text(report, Some("/r"));
        assert_eq!(executions.len(), 1);
        assert_eq!(executions[0].test_id, "tests/bad.spec.js");
        assert_eq!(executions[0].outcome, Outcome::Error);
    }

    #[test]
    fn ids_split_back_into_project_file_and_titles() {
        let id = test_id(
            "a] b",
            "tests/x.spec.ts",
            &["d".to_owned(), "t :: [u]".to_owned()],
        );
        assert_eq!(id, "[a] b] tests/x.spec.ts::d > t :: [u]");
        assert_eq!(
            split_test_id("[chromium] tests/x.spec.ts::d > t"),
            Some(("chromium", "tests/x.spec.ts", vec!["d", "t"]))
        );
        assert_eq!(
            split_test_id("tests/x.spec.ts::t"),
            Some(("", "tests/x.spec.ts", vec!["t"]))
        );
        assert_eq!(split_test_id("[chromium]tests/x.spec.ts::t"), None);
        assert_eq!(split_test_id("no separator"), None);
    }

    #[test]
    fn retain_cuts_a_report_to_chosen_ids() {
        let mut report: serde_json::Value = serde_json::from_str(REPORT).expect("json");
        let kept = retain_tests(&mut report, Some("/r"), |id| {
            id == "[firefox] tests/a.spec.ts::top"
        });
        assert_eq!(kept, ["[firefox] tests/a.spec.ts::top"]);
        let text = serde_json::to_string(&report).expect("json");
        let executions = parse_text(&text, Some("/r"));
        assert_eq!(executions.len(), 1);
    }
}
