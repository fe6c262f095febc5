//! Jest's JSON report (`jest --json --outputFile=PATH`), which vitest's `json` reporter
//! writes too: one document, `testResults` per test file, `assertionResults` per test.
//! Read natively rather than through a JUnit reporter because it keeps what JUnit loses:
//! the describe path as a list (`ancestorTitles`), the test's line, and jest's own retries
//! (`invocations`, `retryReasons`), which are read as retries, never as a plain pass.
//!
//! Ids are `file::describe > … > title` (`results::ids::js`), the file relative to the
//! repository root. A test file that could not run (a syntax error, a failing import:
//! jest's `testExecError`, a suite `failed` with no test in it) is one `error` execution
//! named by the file, as pytest's collection errors are.

use std::io::Read;

use serde::Deserialize;

use super::frames::{Language, build_failure};
use super::model::{Execution, Outcome, cap_text};
use super::{ParseError, ParseOptions, ParseSummary, Position, Sink, ids};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    test_results: Vec<FileResult>,
    /// Written by candor's own mocha and node reporters (`runner::js_reporter`), which
    /// write this format for runners that are not jest: which runner ran.
    #[serde(default)]
    producer: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    name: String,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    assertion_results: Vec<Assertion>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Assertion {
    #[serde(default, deserialize_with = "js_titles")]
    ancestor_titles: Vec<String>,
    #[serde(deserialize_with = "js_title")]
    title: String,
    status: String,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    failure_messages: Vec<String>,
    #[serde(default)]
    invocations: Option<u32>,
    #[serde(default)]
    retry_reasons: Vec<String>,
    #[serde(default)]
    location: Option<Location>,
    /// vitest writes `meta`; jest never does.
    #[serde(default)]
    meta: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct Location {
    line: Option<u32>,
}

/// A title as JavaScript's `String(value)` spells it: jest before 23 kept a title that is
/// no string as it was given (dayjs names tests by arrays: `[2010,1,14]` is the title
/// `2010,1,14`), and a test's id is built from the spelled title.
pub fn spell_js_title(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        // `String([1, null, [2, 3]])` is "1,,2,3": holes and nulls spell as nothing.
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                item => spell_js_title(item),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

fn js_title<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    serde_json::Value::deserialize(deserializer).map(|value| spell_js_title(&value))
}

fn js_titles<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    Vec::<serde_json::Value>::deserialize(deserializer)
        .map(|values| values.iter().map(spell_js_title).collect())
}

/// A JSON report that did not read: malformed JSON, or JSON that is no `what` report.
pub(super) fn json_error(error: &serde_json::Error, what: &str) -> ParseError {
    let position = Position::LineColumn {
        line: error.line() as u64,
        column: (error.column() as u64).max(1),
    };
    if error.is_data() {
        ParseError::NotResults {
            position,
            message: format!("a JSON document that is not a {what} report: {error}"),
        }
    } else {
        ParseError::Syntax {
            position,
            message: format!("malformed {what} JSON: {error}"),
        }
    }
}

/// Parses a whole report and hands each test's execution to `sink`, files in the order
/// the report lists them.
pub fn parse<R: Read>(
    reader: R,
    options: &ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<ParseSummary, ParseError> {
    let report: Report =
        serde_json::from_reader(reader).map_err(|error| json_error(&error, "jest/vitest"))?;
    let mut summary = ParseSummary::default();
    let mut vitest = false;
    for file_result in report.test_results {
        let file = relative(&file_result.name, options.repo_root.as_deref());
        let broken = file_result.assertion_results.is_empty()
            && file_result.status.as_deref() == Some("failed");
        if broken {
            let text = file_result.message.unwrap_or_default();
            let mut execution = Execution::new(file.clone(), Outcome::Error);
            execution.failure = Some(Box::new(build_failure(
                None,
                None,
                text,
                Language::JavaScript,
                options,
            )));
            execution.file = Some(file.clone());
            summary.executions += 1;
            sink(execution)?;
            continue;
        }
        for assertion in file_result.assertion_results {
            vitest |= assertion.meta.is_some();
            let execution = execution(&file, assertion, options);
            summary.executions += 1;
            sink(execution)?;
        }
    }
    summary.producer = Some(match report.producer.as_deref() {
        Some(runner @ ("mocha" | "node")) => runner.to_owned(),
        _ => if vitest { "vitest" } else { "jest" }.to_owned(),
    });
    Ok(summary)
}

fn execution(file: &str, assertion: Assertion, options: &ParseOptions) -> Execution {
    let mut titles = assertion.ancestor_titles;
    titles.push(assertion.title);
    let id = ids::js(file, &titles);
    let final_outcome = match assertion.status.as_str() {
        "passed" => Outcome::Pass,
        "failed" => Outcome::Fail,
        // pending, skipped, todo, disabled, focused-out
        _ => Outcome::Skip,
    };
    let attempts = assertion.invocations.unwrap_or(1).max(1);
    // jest's `retryTimes`: earlier attempts failed. A pass after them is a flaky pass.
    let retried = attempts > 1 || !assertion.retry_reasons.is_empty();
    let outcome = match final_outcome {
        Outcome::Pass if retried => Outcome::FlakyPass,
        other => other,
    };
    let mut execution = Execution::new(id, outcome);
    execution.attempts = if retried {
        attempts.max(u32::try_from(assertion.retry_reasons.len()).unwrap_or(u32::MAX) + 1)
    } else {
        1
    };
    execution.duration = assertion
        .duration
        .filter(|d| d.is_finite() && *d >= 0.0)
        .map(|ms| ms / 1000.0);
    execution.file = Some(file.to_owned());
    execution.line = assertion.location.and_then(|l| l.line);
    // The first failure is the one that made the runner retry.
    let text = assertion.retry_reasons.into_iter().next().or_else(|| {
        (!assertion.failure_messages.is_empty()).then(|| assertion.failure_messages.join("\n\n"))
    });
    if outcome.failed_at_least_once() {
        execution.failure = Some(Box::new(build_failure(
            None,
            None,
            cap_text(text.unwrap_or_default()),
            Language::JavaScript,
            options,
        )));
    }
    execution
}

/// A test file's path relative to the repository root when it lies under it; jest and
/// vitest write absolute paths.
fn relative(path: &str, root: Option<&str>) -> String {
    let path = path.replace('\\', "/");
    if let Some(root) = root {
        let root = root.replace('\\', "/");
        let root = root.trim_end_matches('/');
        if let Some(rest) = path.strip_prefix(root)
            && let Some(rest) = rest.strip_prefix('/')
        {
            return rest.to_owned();
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str, root: Option<&str>) -> (Vec<Execution>, ParseSummary) {
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
        (executions, summary)
    }

    #[test]
    fn titles_that_are_no_strings_are_spelled_as_javascript_does() {
        // jest 22 (dayjs) writes `it([2010, 1, 14], …)`'s title as the array itself.
        let report = r#"{"numTotalTests":2,"testResults":[{"name":"/r/a.test.js","status":"passed","assertionResults":[
            {"ancestorTitles":["parse array", 7],"title":[2010,1,14,null,[2,3]],"status":"passed"},
            {"ancestorTitles":[true],"title":{"a":1},"status":"passed"}
        ]}]}"#;
        let (executions, _) = parse_text(report, Some("/r"));
        let ids: Vec<&str> = executions.iter().map(|e| e.test_id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "a.test.js::parse array > 7 > 2010,1,14,,2,3",
                "a.test.js::true > [object Object]"
            ]
        );
    }

    #[test]
    fn ids_outcomes_and_lines() {
        let report = r#"{"numTotalTests":3,"testResults":[{"name":"/r/__tests__/a.test.js","status":"failed","message":"","assertionResults":[
            {"ancestorTitles":["math","deep"],"title":"adds","status":"passed","duration":2,"failureMessages":[],"invocations":1,"retryReasons":[],"location":{"line":4,"column":3}},
            {"ancestorTitles":[],"title":"top","status":"failed","duration":1,"failureMessages":["Error: boom\n    at Object.<anonymous> (/r/__tests__/a.test.js:9:19)"],"invocations":1},
            {"ancestorTitles":["math"],"title":"later","status":"pending","failureMessages":[]}
        ]}]}"#;
        let (executions, summary) = parse_text(report, Some("/r"));
        assert_eq!(summary.producer.as_deref(), Some("jest"));
        let seen: Vec<(&str, Outcome, Option<u32>)> = executions
            .iter()
            .map(|e| (e.test_id.as_str(), e.outcome, e.line))
            .collect();
        assert_eq!(
            seen,
            [
                (
                    "__tests__/a.test.js::math > deep > adds",
                    Outcome::Pass,
                    Some(4)
                ),
                ("__tests__/a.test.js::top", Outcome::Fail, None),
                ("__tests__/a.test.js::math > later", Outcome::Skip, None),
            ]
        );
        let failure = executions[1].failure.as_ref().expect("a failure");
        assert_eq!(failure.message, "boom");
        assert_eq!(
            failure
                .failing_frame
                .as_ref()
                .map(super::super::model::Frame::location),
            Some("__tests__/a.test.js:9".to_owned())
        );
    }

    /// Issue #20 item 4: jest's own retries (`jest.retryTimes`) are retries, never a
    /// plain pass.
    #[test]
    fn retried_tests_are_flaky_passes_with_their_first_failure() {
        let report = r#"{"numTotalTests":2,"testResults":[{"name":"/r/a.test.js","status":"passed","assertionResults":[
            {"ancestorTitles":[],"title":"flaky","status":"passed","failureMessages":[],"invocations":3,"retryReasons":["Error: first","Error: second"]},
            {"ancestorTitles":[],"title":"always","status":"failed","failureMessages":["Error: third"],"invocations":2,"retryReasons":["Error: first"]}
        ]}]}"#;
        let (executions, _) = parse_text(report, Some("/r"));
        assert_eq!(executions[0].outcome, Outcome::FlakyPass);
        assert_eq!(executions[0].attempts, 3);
        assert_eq!(
            executions[0].failure.as_ref().map(|f| f.message.as_str()),
            Some("first")
        );
        assert_eq!(executions[1].outcome, Outcome::Fail);
        assert_eq!(executions[1].attempts, 2);
    }

    #[test]
    fn a_file_that_could_not_run_is_one_error_named_by_the_file() {
        let report = r#"{"numTotalTests":0,"testResults":[{"name":"/r/b.test.js","status":"failed","message":"SyntaxError: Unexpected token (3:1)","assertionResults":[]}]}"#;
        let (executions, _) = parse_text(report, Some("/r/"));
        assert_eq!(executions.len(), 1);
        assert_eq!(executions[0].test_id, "b.test.js");
        assert_eq!(executions[0].outcome, Outcome::Error);
    }

    #[test]
    fn candor_s_mocha_and_node_reports_are_named_for_their_runner() {
        for runner in ["mocha", "node"] {
            let text = format!(
                r#"{{"numTotalTests":1,"producer":"{runner}","testResults":[{{"name":"t.js","assertionResults":[{{"ancestorTitles":[],"title":"x","status":"passed"}}]}}]}}"#
            );
            let (_, summary) = parse_text(&text, None);
            assert_eq!(summary.producer.as_deref(), Some(runner));
        }
        // Any other value is not trusted to name a runner.
        let (_, summary) = parse_text(
            r#"{"producer":"pytest","testResults":[{"name":"t.js","assertionResults":[]}]}"#,
            None,
        );
        assert_eq!(summary.producer.as_deref(), Some("jest"));
    }

    #[test]
    fn vitest_reports_are_named_for_vitest() {
        let report = r#"{"numTotalTests":1,"testResults":[{"name":"/r/a.test.ts","status":"passed","assertionResults":[{"ancestorTitles":["d"],"fullName":"d t","title":"t","status":"passed","meta":{}}]}]}"#;
        let (executions, summary) = parse_text(report, Some("/r"));
        assert_eq!(summary.producer.as_deref(), Some("vitest"));
        assert_eq!(executions[0].test_id, "a.test.ts::d > t");
    }
}
