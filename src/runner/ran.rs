//! Whether a runner ran: per runner, the rule that tells "the runner ran and tests failed"
//! from "the runner could not run" (no report, a build or collection error, an unknown
//! test, a usage error), and the runner's own error lines, quoted so that the reader sees
//! what it said without opening a log. Pure: exit codes, log text and report bytes in.
//!
//! | runner | ran | could not run |
//! | --- | --- | --- |
//! | pytest | exit 0 or 1 and a report | exit 2 (interrupted: a collection error), 3 (internal error), 4 (usage error, an unknown node id), 5 (no tests ran), any other exit or signal, or no report |
//! | cargo | every test binary started its suite (libtest's `suite started` event) | a binary whose suite never started: cargo failed before it (a build error, an ambiguous package spec) |
//! | nextest | exit 0 or 100 (tests failed) and a report | exit 101 (build failed), 4 (no tests to run: for one test, an unknown id), 96 (setup error), 102 (test list failed), any other exit or signal, or no report |
//! | go | a JSON report with no `[build failed]` or `[setup failed]` package | an empty report, or a package that failed to build or set up |
//! | the lane's builds of test binaries (`cargo test --no-run`, `go test -c`) | exit 0 | any other exit, or the time limit: the compiler's lines quoted |
//! | command | a report | no report |
//! | jest, vitest | a JSON report in which every test file ran | no report (a bad option or config), a report that does not parse, a test file jest could not run (a syntax error, a failing import, a missing path: `numRuntimeErrorTestSuites`), no test file |
//! | playwright | exit 0 or 1 and a JSON report with tests and no report-level error | no report (a bad option, a config that does not load), a report that does not parse, report-level `errors` (a test file that does not load, `No tests found`, a failing global setup), no test, a browser that is not installed (`Executable doesn't exist`: `npx playwright install` or Debian's chromium), any other exit |
//! | mocha | candor's reporter wrote its report (mocha ended its run) and it names a test | no report: mocha failed before running (a syntax error or a missing module in a test file, `No test files found`, a bad option); a report with no test (for one test: an unknown id) |
//! | node | candor's reporter wrote its report, no test file's process failed, and it names a test | no report (`Could not find` a named file, a bad option); a test file whose process failed outside any test (a syntax error, a missing module, a crash: `testExecError`); a report with no test |
//!
//! A run stopped by the timeout ran: a test hung, which is the test's red, not the runner's
//! failure.

use std::path::PathBuf;

use super::RunnerKind;

/// At most this many of the runner's lines are quoted.
const MAX_QUOTED: usize = 8;
/// A quoted line longer than this (in characters) is cut.
const MAX_LINE_CHARS: usize = 300;

/// How pytest's exit code 5 is worded: it ran and collected no test.
const PYTEST_NO_TESTS: &str = "(no tests ran)";

/// Why a runner could not run, in its own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRun {
    /// The runner.
    pub runner: RunnerKind,
    /// What candor saw, in one clause ("pytest exited with code 4 (usage error)").
    pub why: String,
    /// The runner's own error lines, as it printed them.
    pub quoted: Vec<String>,
    /// The log that holds everything the runner printed.
    pub log: PathBuf,
    /// Whether the runner said the test id names no test (pytest's `not found`).
    pub unknown_test: bool,
    /// For a batch: the tests that made it inexact, which no selection can run apart from
    /// others (two tests under one id); the rest of the batch can run without them.
    /// Empty when the runner could not say which.
    pub apart: Vec<String>,
}

impl NotRun {
    /// Whether the runner started and found no test to run (pytest's exit code 5): for a
    /// lane's whole-suite run that is a suite that ran nothing, a verdict, not an error.
    pub fn ran_no_test(&self) -> bool {
        self.runner == RunnerKind::Pytest && self.why.ends_with(PYTEST_NO_TESTS)
    }
}

impl std::fmt::Display for NotRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} could not run: {}", self.runner, self.why)?;
        if self.quoted.is_empty() {
            write!(f, "; it printed no error line")?;
        } else {
            write!(f, "; it said:")?;
            for line in &self.quoted {
                write!(f, "\n  | {line}")?;
            }
        }
        Ok(())
    }
}

/// What one finished child left behind, as the rules need it.
#[derive(Debug, Clone, Copy)]
pub struct Finished<'a> {
    /// Its exit code (128+N for a signal).
    pub exit_code: i32,
    /// Whether the timeout stopped it.
    pub timed_out: bool,
    /// Its log's text (header, stdout and stderr).
    pub log: &'a str,
    /// The report's bytes; `None` when it was not written or is empty.
    pub report: Option<&'a [u8]>,
}

/// The problem and its quoted lines, before the caller adds runner and log.
type Verdict = Option<(String, Vec<String>, bool)>;

/// pytest: exit 0 or 1 with a report is a run; every other ending is not.
pub fn pytest(finished: &Finished<'_>) -> Verdict {
    if finished.timed_out {
        return None;
    }
    let meaning = match finished.exit_code {
        0 | 1 => {
            if finished.report.is_some() {
                return None;
            }
            "and wrote no report"
        }
        2 => "(interrupted: a collection error or a keyboard interrupt)",
        3 => "(internal error)",
        4 => "(usage error: an unknown option or test id)",
        5 => PYTEST_NO_TESTS,
        _ => "before writing its report",
    };
    let quoted = quote(finished.log, |line| {
        let trimmed = line.trim_start();
        line.starts_with("ERROR")
            || line.starts_with("E   ")
            || line.starts_with("INTERNALERROR>")
            || line.starts_with("Interrupted:")
            || line.starts_with("no tests ran")
            || trimmed.starts_with("pytest: error:")
            || trimmed.starts_with("error:")
            || line.starts_with("Fatal Python error")
            || line.starts_with("ImportError while")
            || is_python_exception_line(line)
    });
    let unknown_test = finished.exit_code == 4
        && finished.log.lines().any(|l| {
            l.starts_with("ERROR: not found:") || l.contains("file or directory not found:")
        });
    Some((
        format!("pytest exited with code {} {meaning}", finished.exit_code),
        quoted,
        unknown_test,
    ))
}

/// `ModuleNotFoundError: No module named 'x'` and the like, unindented.
fn is_python_exception_line(line: &str) -> bool {
    line.split_once(": ").is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            && (name.ends_with("Error") || name.ends_with("Exception"))
    })
}

/// cargo test: one binary's run, from its libtest JSON.
pub fn cargo(finished: &Finished<'_>) -> Verdict {
    let started = finished.report.is_some_and(|report| {
        report.split(|b| *b == b'\n').any(|line| {
            serde_json::from_slice::<serde_json::Value>(line).is_ok_and(|event| {
                event.get("type").and_then(serde_json::Value::as_str) == Some("suite")
                    && event.get("event").and_then(serde_json::Value::as_str) == Some("started")
            })
        })
    });
    if started || finished.timed_out {
        return None;
    }
    Some((
        format!(
            "cargo exited with code {} before the test binary started",
            finished.exit_code
        ),
        quote(finished.log, is_cargo_error_line),
        false,
    ))
}

fn is_cargo_error_line(line: &str) -> bool {
    let trimmed = line.trim_start();
    line.starts_with("error")
        || trimmed.starts_with("--> ")
        || line.starts_with("warning: unused manifest key")
        || trimmed.starts_with("Caused by:")
}

/// cargo-nextest: exit 0 or 100 with a report is a run.
pub fn nextest(finished: &Finished<'_>) -> Verdict {
    if finished.timed_out {
        return None;
    }
    let meaning = match finished.exit_code {
        0 | 100 => {
            if finished.report.is_some() {
                return None;
            }
            "and wrote no report"
        }
        101 => "(build failed)",
        4 => "(no tests to run)",
        96 => "(setup error)",
        102 => "(listing the tests failed)",
        _ => "before writing its report",
    };
    Some((
        format!(
            "cargo nextest exited with code {} {meaning}",
            finished.exit_code
        ),
        quote(finished.log, is_cargo_error_line),
        // No test matched the filter: for one test, the id names no test.
        finished.exit_code == 4,
    ))
}

/// go test: a report that names no package that failed to build or set up.
pub fn go(finished: &Finished<'_>) -> Verdict {
    if finished.timed_out {
        return None;
    }
    let Some(report) = finished.report else {
        return Some((
            format!(
                "go test exited with code {} and printed no JSON",
                finished.exit_code
            ),
            quote(finished.log, |line| {
                !line.starts_with('#') || line.starts_with("# ")
            }),
            false,
        ));
    };
    let text = String::from_utf8_lossy(report);
    let mut broken = Vec::new();
    for line in text.lines() {
        // Inside a JSON event's output, or (go before 1.24) as a plain line on stdout.
        let output = match serde_json::from_str::<serde_json::Value>(line) {
            Ok(event) => event
                .get("Output")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            Err(_) => line.to_owned(),
        };
        if output.contains("[build failed]") || output.contains("[setup failed]") {
            broken.push(cut(&output));
        }
    }
    if broken.is_empty() {
        return None;
    }
    // The compiler's lines go to stderr, which is the log; the report names the packages.
    let mut quoted = quote(finished.log, |line| {
        line.starts_with("# ") || is_go_compiler_line(line)
    });
    quoted.extend(broken);
    quoted.truncate(MAX_QUOTED);
    Some((
        "go test could not build or set up a package".to_owned(),
        quoted,
        false,
    ))
}

/// A build of test binaries the lane then runs itself (`cargo test --no-run`, `go test
/// -c`, issue #15): any ending but exit 0 means no test can run, and the compiler's lines
/// are quoted (cargo's `error…` and `-->` lines; go's `# pkg` headers and `file:line:`
/// lines). `what` is the command as a reader would type it.
pub fn build(kind: RunnerKind, what: &str, finished: &Finished<'_>) -> Verdict {
    if finished.exit_code == 0 && !finished.timed_out {
        return None;
    }
    let how = if finished.timed_out {
        "was stopped by the time limit".to_owned()
    } else {
        format!("exited with code {}", finished.exit_code)
    };
    let quoted = match kind {
        RunnerKind::Go => quote(finished.log, |line| {
            line.starts_with("# ") || is_go_compiler_line(line)
        }),
        _ => quote(finished.log, is_cargo_error_line),
    };
    Some((
        format!("`{what}` {how}: the test binaries were not built"),
        quoted,
        false,
    ))
}

/// `./x.go:3:1: message`, `x.go:3:1: message` or `pkg/x.go:3: message`.
fn is_go_compiler_line(line: &str) -> bool {
    line.split_once(".go:")
        .is_some_and(|(_, rest)| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// jest: a JSON report in which every test file ran. jest exits 1 both for failed tests
/// and for a configuration it cannot load, so the report decides: none (a bad option or
/// config, jest not installed), or a test file jest could not run (a syntax error, a
/// failing import, a path that is no test file: `numRuntimeErrorTestSuites`, or a file
/// with a message and no test), or no test file at all.
pub fn jest(finished: &Finished<'_>) -> Verdict {
    jest_json("jest", finished)
}

/// vitest: its JSON report (jest's format), by jest's rule. A bad option is a `CACError`
/// and no report; a path filter that matches no file is `No test files found` and no
/// report (for one test, an unknown id).
pub fn vitest(finished: &Finished<'_>) -> Verdict {
    jest_json("vitest", finished)
}

/// mocha, through candor's reporter: it writes its report when mocha ends its run, so a
/// run that failed before it (mocha loads every test file first: a syntax error, a missing
/// module, no test file, a bad option) left none. mocha exits with the number of failed
/// tests, so the exit code says nothing of whether it ran.
pub fn mocha(finished: &Finished<'_>) -> Verdict {
    if finished.timed_out {
        return None;
    }
    if finished.report.is_none() {
        let is_error_line = |line: &str| {
            let trimmed = strip_ansi_codes(line.trim_start());
            trimmed.starts_with("Exception during run:")
                || trimmed.starts_with("Error:")
                || trimmed.starts_with("Error [")
                || is_js_error_line(&trimmed)
                || trimmed.starts_with("Warning: Cannot find any files")
        };
        let no_files = finished.log.contains("No test files found");
        // mocha colours its errors even into a file.
        let quoted = quote(finished.log, is_error_line)
            .iter()
            .map(|line| strip_ansi_codes(line))
            .collect();
        return Some((
            format!(
                "mocha exited with code {} before running any test",
                finished.exit_code
            ),
            quoted,
            no_files,
        ));
    }
    no_test_ran(jest_json("mocha", finished))
}

/// node's test runner, through candor's reporter: no report is a run that failed before
/// any file ran (`Could not find` a named file, a bad option); a test file whose process
/// failed outside any test is a file that could not run, as jest's rule says.
pub fn node(finished: &Finished<'_>) -> Verdict {
    if finished.timed_out {
        return None;
    }
    if finished.report.is_none() {
        let unknown = finished
            .log
            .lines()
            .any(|line| line.starts_with("Could not find"));
        return Some((
            format!(
                "node --test exited with code {} and wrote no report",
                finished.exit_code
            ),
            quote(finished.log, |line| {
                let trimmed = line.trim_start();
                trimmed.starts_with("Could not find") || is_js_error_line(trimmed)
            }),
            unknown,
        ));
    }
    no_test_ran(jest_json("node --test", finished))
}

/// `SyntaxError: …`, `Error: Cannot find module …`, `TypeError [ERR_…]: …`.
fn is_js_error_line(line: &str) -> bool {
    line.split_once(':').is_some_and(|(name, _)| {
        let name = name.split_once(" [").map_or(name, |(n, _)| n);
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric())
            && name.ends_with("Error")
    })
}

/// jest's "found no test file" for a runner whose report lists only files that had a
/// test: it ran none.
fn no_test_ran(verdict: Verdict) -> Verdict {
    verdict.map(|(why, quoted, unknown)| {
        (
            why.replace("and found no test file", "and ran no test"),
            quoted,
            unknown,
        )
    })
}

fn jest_json(runner: &str, finished: &Finished<'_>) -> Verdict {
    if finished.timed_out {
        return None;
    }
    let is_error_line = |line: &str| {
        let trimmed = line.trim_start();
        trimmed.starts_with('●')
            || trimmed.starts_with("Error:")
            || trimmed.starts_with("SyntaxError:")
            || trimmed.starts_with("TypeError:")
            || trimmed.starts_with("ReferenceError:")
            || trimmed.starts_with("Cannot find module")
            || trimmed.starts_with("ENOENT")
            || trimmed.starts_with("No test")
            || trimmed.starts_with("CACError:")
            || trimmed.contains("No such file or directory")
            || trimmed.contains("not found")
    };
    let Some(report) = finished.report else {
        // `--runTestsByPath` with a path that is no file: for one test, an unknown id.
        let no_tests = finished
            .log
            .lines()
            .any(|line| line.trim_start().starts_with("No test"));
        return Some((
            format!(
                "{runner} exited with code {} and wrote no report",
                finished.exit_code
            ),
            quote(finished.log, is_error_line),
            no_tests,
        ));
    };
    let Ok(report) = serde_json::from_slice::<serde_json::Value>(report) else {
        return Some((
            format!(
                "{runner} exited with code {} and its JSON report does not parse",
                finished.exit_code
            ),
            quote(finished.log, is_error_line),
            false,
        ));
    };
    let files = report
        .get("testResults")
        .and_then(serde_json::Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let broken: Vec<String> = files
        .iter()
        .filter(|file| {
            let no_tests = file
                .get("assertionResults")
                .and_then(serde_json::Value::as_array)
                .is_none_or(Vec::is_empty);
            let message = file
                .get("message")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            file.get("testExecError").is_some_and(|e| !e.is_null())
                || (no_tests && !message.trim().is_empty())
        })
        .map(|file| {
            let name = file
                .get("name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("?");
            let message = file
                .get("message")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            let first = strip_ansi_codes(message)
                .lines()
                .map(str::trim)
                .find(|line| !line.is_empty() && !line.starts_with('●'))
                .unwrap_or_default()
                .to_owned();
            cut(&format!("{name}: {first}"))
        })
        .collect();
    let runtime_errors = report
        .get("numRuntimeErrorTestSuites")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    if !broken.is_empty() || runtime_errors > 0 {
        let mut quoted = broken;
        quoted.truncate(MAX_QUOTED);
        // A path that is no file: for one test, the id names no test.
        let unknown_test = quoted.iter().any(|line| line.contains("ENOENT"));
        return Some((
            format!(
                "{runner} could not run {} test file(s)",
                runtime_errors.max(quoted.len() as u64)
            ),
            quoted,
            unknown_test,
        ));
    }
    if files.is_empty() {
        return Some((
            format!(
                "{runner} exited with code {} and found no test file",
                finished.exit_code
            ),
            quote(finished.log, is_error_line),
            true,
        ));
    }
    None
}

/// What Playwright says when a browser project's browser is not downloaded.
const MISSING_BROWSER: &str = "Executable doesn't exist at";

/// Playwright Test: a JSON report with no report-level error and at least one test, exit
/// 0 or 1. Playwright exits 1 for failed tests and for a run that never started alike,
/// so the report decides: none (a bad option, a config that does not load), report-level
/// `errors` (a test file that does not load stops the whole run; `No tests found`; a
/// failing global setup or teardown), no test in it, or a test whose browser is not
/// installed (a browser project on a machine without `npx playwright install`), which is
/// the machine's problem, not the test's red.
pub fn playwright(finished: &Finished<'_>) -> Verdict {
    if finished.timed_out {
        return None;
    }
    let is_error_line = |line: &str| {
        let trimmed = line.trim_start();
        trimmed.starts_with("Error:")
            || trimmed.starts_with("SyntaxError:")
            || trimmed.starts_with("TypeError:")
            || trimmed.starts_with("ReferenceError:")
            || trimmed.starts_with("error:")
            || trimmed.contains("Cannot find module")
            || trimmed.contains(MISSING_BROWSER)
    };
    let code = finished.exit_code;
    let Some(report) = finished.report else {
        return Some((
            format!("playwright exited with code {code} and wrote no report"),
            quote(finished.log, is_error_line),
            false,
        ));
    };
    let Ok(report) = serde_json::from_slice::<serde_json::Value>(report) else {
        return Some((
            format!("playwright exited with code {code} and its JSON report does not parse"),
            quote(finished.log, is_error_line),
            false,
        ));
    };
    let first_line = |error: &serde_json::Value| {
        let message = error
            .get("message")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let first = strip_ansi_codes(message)
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or_default()
            .to_owned();
        let place = error.get("location").and_then(|l| {
            Some(format!(
                "{}:{}: ",
                l.get("file")?.as_str()?,
                l.get("line")?.as_u64()?
            ))
        });
        cut(&format!("{}{first}", place.unwrap_or_default()))
    };
    let errors: Vec<String> = report
        .get("errors")
        .and_then(serde_json::Value::as_array)
        .map(|errors| errors.iter().map(first_line).collect())
        .unwrap_or_default();
    if !errors.is_empty() {
        let unknown_test = errors.iter().any(|line| line.contains("No tests found"));
        let mut quoted = errors;
        quoted.truncate(MAX_QUOTED);
        return Some((
            format!("playwright exited with code {code} and reported errors outside any test"),
            quoted,
            unknown_test,
        ));
    }
    let mut results = Vec::new();
    let mut tests = 0_usize;
    collect_playwright_results(&report, &mut tests, &mut results);
    let missing_browser: Vec<String> = results
        .iter()
        .flat_map(|result| {
            result
                .get("errors")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
        })
        .map(first_line)
        .filter(|line| line.contains(MISSING_BROWSER))
        .collect();
    if let Some(line) = missing_browser.first() {
        return Some((
            "a browser project's browser is not installed: run `npx playwright install` (or `npx playwright install chromium`), or set the project's `use.launchOptions.executablePath` to an installed browser such as Debian's /usr/bin/chromium".to_owned(),
            vec![line.clone()],
            false,
        ));
    }
    if tests == 0 {
        return Some((
            format!("playwright exited with code {code} and its report holds no test"),
            quote(finished.log, is_error_line),
            true,
        ));
    }
    if code != 0 && code != 1 {
        return Some((
            format!("playwright exited with code {code}"),
            quote(finished.log, is_error_line),
            false,
        ));
    }
    None
}

/// Every spec's test entries and their results, through the nested suites.
fn collect_playwright_results<'a>(
    suite: &'a serde_json::Value,
    tests: &mut usize,
    results: &mut Vec<&'a serde_json::Value>,
) {
    let items = |key: &str| {
        suite
            .get(key)
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    for spec in items("specs") {
        for test in spec
            .get("tests")
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            *tests += 1;
            results.extend(
                test.get("results")
                    .and_then(serde_json::Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default(),
            );
        }
    }
    for child in items("suites") {
        collect_playwright_results(child, tests, results);
    }
}

/// Text without terminal colour codes (jest colours its messages even in JSON).
fn strip_ansi_codes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A user's command: a report is a run.
pub fn command(finished: &Finished<'_>) -> Verdict {
    if finished.timed_out || finished.report.is_some() {
        return None;
    }
    Some((
        format!(
            "the command exited with code {} and wrote no report",
            finished.exit_code
        ),
        last_lines(finished.log),
        false,
    ))
}

/// The log's lines that `pick` chooses, in order, at most [`MAX_QUOTED`] (the first ones:
/// a compiler's first error is the one to fix); the last lines when it chooses none.
fn quote(log: &str, pick: impl Fn(&str) -> bool) -> Vec<String> {
    let mut quoted: Vec<String> = Vec::new();
    for line in output_lines(log) {
        if pick(line) && !line.trim().is_empty() {
            let line = cut(line);
            if !quoted.contains(&line) {
                quoted.push(line);
            }
            if quoted.len() == MAX_QUOTED {
                break;
            }
        }
    }
    if quoted.is_empty() {
        last_lines(log)
    } else {
        quoted
    }
}

/// The log's last few non-empty output lines.
fn last_lines(log: &str) -> Vec<String> {
    let lines: Vec<&str> = output_lines(log)
        .filter(|line| !line.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(4)..]
        .iter()
        .map(|line| cut(line))
        .collect()
}

/// The runner's own lines: candor's `# ` header and footer lines are left out.
fn output_lines(log: &str) -> impl Iterator<Item = &str> {
    log.lines().filter(|line| {
        !(line.starts_with("# candor runner log")
            || line.starts_with("# argv: ")
            || line.starts_with("# cwd: ")
            || line.starts_with("# started: ")
            || line.starts_with("# env ")
            || line.starts_with("# stdout: ")
            || line.starts_with("# report: ")
            || line.starts_with("# timeout: ")
            || line.starts_with("# ended: "))
    })
}

fn cut(line: &str) -> String {
    let line = line.trim_end();
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// A failed helper command's error lines (cargo metadata, a listing): lines that say
/// `error`, else the last lines.
pub fn probe_lines(log: &str) -> Vec<String> {
    quote(log, |line| {
        let lower = line.trim_start().to_ascii_lowercase();
        lower.starts_with("error") || lower.starts_with("e   ") || is_python_exception_line(line)
    })
}

/// `; it said:` and the quoted lines, one per line; empty when there are none.
pub fn quoted_suffix(quoted: &[String]) -> String {
    if quoted.is_empty() {
        return String::new();
    }
    let mut text = "; it said:".to_owned();
    for line in quoted {
        text.push_str("\n  | ");
        text.push_str(line);
    }
    text
}

/// Builds the error from a rule's verdict.
pub(super) fn not_run(runner: RunnerKind, log: PathBuf, verdict: Verdict) -> Option<NotRun> {
    verdict.map(|(why, quoted, unknown_test)| NotRun {
        apart: Vec::new(),
        runner,
        why,
        quoted,
        log,
        unknown_test,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// #15 (lane binaries run directly): a failed build of the lane's test binaries is a
    /// runner that could not run, quoting the compiler, never a red test.
    #[test]
    fn a_failed_build_of_test_binaries_quotes_the_compiler() {
        let log = "# candor runner log\n# argv: [\"go\"]\n# example.com/m/a [example.com/m/a.test]\na/c.go:2:14: syntax error: unexpected {, expecting )\nunrelated\n";
        let finished = Finished {
            exit_code: 2,
            timed_out: false,
            log,
            report: None,
        };
        let (why, quoted, unknown) =
            build(RunnerKind::Go, "go test -c", &finished).unwrap_or_default();
        assert_eq!(
            why,
            "`go test -c` exited with code 2: the test binaries were not built"
        );
        assert_eq!(
            quoted,
            [
                "# example.com/m/a [example.com/m/a.test]",
                "a/c.go:2:14: syntax error: unexpected {, expecting )"
            ]
        );
        assert!(!unknown);
        let cargo_log =
            "   Compiling calc v0.1.0\nerror[E0425]: cannot find value `x`\n  --> tests/a.rs:2:5\n";
        let failed = Finished {
            exit_code: 101,
            timed_out: false,
            log: cargo_log,
            report: None,
        };
        let (_, quoted, _) =
            build(RunnerKind::Cargo, "cargo test --no-run", &failed).unwrap_or_default();
        assert_eq!(
            quoted,
            [
                "error[E0425]: cannot find value `x`",
                "  --> tests/a.rs:2:5"
            ]
        );
        let fine = Finished {
            exit_code: 0,
            timed_out: false,
            log: "",
            report: None,
        };
        assert!(build(RunnerKind::Cargo, "cargo test --no-run", &fine).is_none());
    }

    fn finished<'a>(exit_code: i32, log: &'a str, report: Option<&'a [u8]>) -> Finished<'a> {
        Finished {
            exit_code,
            timed_out: false,
            log,
            report,
        }
    }

    #[test]
    fn pytest_ran_only_with_exit_0_or_1_and_a_report() {
        assert_eq!(pytest(&finished(1, "", Some(b"<x/>"))), None);
        assert_eq!(pytest(&finished(0, "", Some(b"<x/>"))), None);
        assert!(pytest(&finished(1, "", None)).is_some());
        let log = "# candor runner log\nImportError while importing test module '/r/tests/test_a.py'.\nE   ModuleNotFoundError: No module named 'nope'\nERROR tests/test_a.py\nInterrupted: 1 error during collection\n";
        let (why, quoted, unknown) = pytest(&finished(2, log, Some(b"<x/>"))).unwrap_or_default();
        assert!(why.contains("code 2"), "{why}");
        assert!(!unknown);
        assert!(
            quoted.contains(&"E   ModuleNotFoundError: No module named 'nope'".to_owned()),
            "{quoted:?}"
        );
        let log = "ERROR: not found: /r/tests/test_a.py::nope\n(no match in any of [<Module test_a.py>])\n";
        let (_, quoted, unknown) = pytest(&finished(4, log, None)).unwrap_or_default();
        assert!(unknown);
        assert_eq!(quoted, vec!["ERROR: not found: /r/tests/test_a.py::nope"]);
    }

    #[test]
    fn a_timed_out_run_ran() {
        let mut hung = finished(137, "", None);
        hung.timed_out = true;
        assert_eq!(pytest(&hung), None);
        assert_eq!(cargo(&hung), None);
        assert_eq!(nextest(&hung), None);
        assert_eq!(go(&hung), None);
        assert_eq!(command(&hung), None);
        assert_eq!(jest(&hung), None);
        assert_eq!(vitest(&hung), None);
    }

    #[test]
    fn cargo_ran_when_the_suite_started() {
        let started = br#"{ "type": "suite", "event": "started", "test_count": 1 }
{ "type": "test", "event": "failed", "name": "x" }"#;
        assert_eq!(cargo(&finished(101, "", Some(started))), None);
        let log = "   Compiling foo v0.2.0 (/r)\nerror[E0425]: cannot find value `y` in this scope\n --> src/lib.rs:2:5\n  |\nerror: could not compile `foo` (lib test) due to 1 previous error\n";
        let (why, quoted, _) = cargo(&finished(101, log, None)).unwrap_or_default();
        assert!(why.contains("before the test binary started"), "{why}");
        assert_eq!(
            quoted,
            vec![
                "error[E0425]: cannot find value `y` in this scope",
                " --> src/lib.rs:2:5",
                "error: could not compile `foo` (lib test) due to 1 previous error",
            ]
        );
    }

    #[test]
    fn nextest_exit_codes() {
        assert_eq!(nextest(&finished(100, "", Some(b"<x/>"))), None);
        assert!(nextest(&finished(101, "error: x", Some(b"<x/>"))).is_some());
        assert!(nextest(&finished(4, "", None)).is_some());
    }

    #[test]
    fn go_build_failures_are_not_runs() {
        let report = concat!(
            r#"{"Action":"output","Package":"m/p","Output":"FAIL\tm/p [build failed]\n"}"#,
            "\n",
            r#"{"Action":"fail","Package":"m/p","Elapsed":0}"#,
            "\n"
        );
        let log = "# m/p\n./p.go:3:9: undefined: y\n";
        let (_, quoted, _) = go(&finished(2, log, Some(report.as_bytes()))).unwrap_or_default();
        assert_eq!(
            quoted,
            vec![
                "# m/p",
                "./p.go:3:9: undefined: y",
                "FAIL\tm/p [build failed]"
            ]
        );
        // go 1.19 prints the package's line as plain text among the JSON.
        let plain = "FAIL\tm/p [build failed]\n";
        let (_, quoted, _) = go(&finished(2, log, Some(plain.as_bytes()))).unwrap_or_default();
        assert_eq!(
            quoted.last().map(String::as_str),
            Some("FAIL\tm/p [build failed]")
        );
        let ran = r#"{"Action":"fail","Package":"m/p","Test":"TestA"}"#;
        assert_eq!(go(&finished(1, "", Some(ran.as_bytes()))), None);
        assert!(go(&finished(1, "go: cannot find main module", None)).is_some());
    }

    /// Issue #20 (Playwright) item 2: Playwright exits 1 for red tests and for a run that
    /// never started; the report tells them apart.
    #[test]
    fn playwright_ran_when_its_report_holds_tests_and_no_error() {
        let ran = br#"{"config":{},"errors":[],"suites":[{"title":"a.spec.ts","specs":[{"title":"t","tests":[{"projectName":"p","results":[{"status":"failed","errors":[{"message":"Error: expect(received).toBe(expected)"}]}]}]}]}]}"#;
        assert_eq!(playwright(&finished(1, "", Some(ran))), None);
        assert_eq!(playwright(&finished(0, "", Some(ran))), None);
        // No report: an unknown option, a config that does not load.
        let log = "error: unknown option '--nope'\n";
        let (why, quoted, unknown) = playwright(&finished(1, log, None)).unwrap_or_default();
        assert!(why.contains("wrote no report"), "{why}");
        assert_eq!(quoted, ["error: unknown option '--nope'"]);
        assert!(!unknown);
        // A file that does not load stops the run; its error has the file and line.
        let broken = br#"{"config":{},"suites":[],"errors":[{"message":"SyntaxError: /r/tests/b.spec.js: Unexpected token (1:67)","location":{"file":"/r/tests/b.spec.js","line":1,"column":68}}]}"#;
        let (why, quoted, unknown) = playwright(&finished(1, "", Some(broken))).unwrap_or_default();
        assert!(why.contains("errors outside any test"), "{why}");
        assert_eq!(
            quoted,
            ["/r/tests/b.spec.js:1: SyntaxError: /r/tests/b.spec.js: Unexpected token (1:67)"]
        );
        assert!(!unknown);
        let none = br#"{"config":{},"suites":[],"errors":[{"message":"Error: No tests found"}]}"#;
        let (_, _, unknown) = playwright(&finished(1, "", Some(none))).unwrap_or_default();
        assert!(unknown);
        // A browser that is not installed is the machine's problem, not the test's red.
        let browser = br#"{"config":{},"errors":[],"suites":[{"title":"a.spec.ts","specs":[{"title":"t","tests":[{"projectName":"chromium","results":[{"status":"failed","errors":[{"message":"Error: browserType.launch: Executable doesn't exist at /root/.cache/ms-playwright/chromium-1/chrome"}]}]}]}]}]}"#;
        let (why, _, _) = playwright(&finished(1, "", Some(browser))).unwrap_or_default();
        assert!(why.contains("npx playwright install"), "{why}");
        // A signal, or a report without tests.
        assert!(playwright(&finished(137, "", Some(ran))).is_some());
        let empty = br#"{"config":{},"errors":[],"suites":[]}"#;
        assert!(playwright(&finished(0, "", Some(empty))).is_some_and(|v| v.2));
        assert!(playwright(&finished(1, "", Some(b"{not json"))).is_some());
    }

    #[test]
    fn jest_ran_when_every_test_file_ran() {
        let ran = br#"{"numRuntimeErrorTestSuites":0,"testResults":[{"name":"/r/a.test.js","message":"\u001b[1m\u25cf math \u203a adds","assertionResults":[{"title":"adds","status":"failed"}]}]}"#;
        assert_eq!(jest(&finished(1, "", Some(ran))), None);
        let (why, quoted, unknown) = jest(&finished(
            1,
            "● Validation Error:\n  Module x in the setupFiles option was not found.\n",
            None,
        ))
        .unwrap_or_default();
        assert!(why.contains("wrote no report"), "{why}");
        assert!(!unknown);
        assert_eq!(
            quoted,
            vec![
                "● Validation Error:",
                "  Module x in the setupFiles option was not found."
            ]
        );
        let broken = br#"{"numRuntimeErrorTestSuites":1,"testResults":[{"name":"/r/b.test.js","message":"  \u001b[1m\u25cf Test suite failed to run\n\n    SyntaxError: /r/b.test.js: Unexpected token (3:1)","assertionResults":[]}]}"#;
        let (why, quoted, unknown) = jest(&finished(1, "", Some(broken))).unwrap_or_default();
        assert_eq!(why, "jest could not run 1 test file(s)");
        assert_eq!(
            quoted,
            vec!["/r/b.test.js: SyntaxError: /r/b.test.js: Unexpected token (3:1)"]
        );
        assert!(!unknown);
        let missing = br#"{"numRuntimeErrorTestSuites":1,"testResults":[{"name":"/r/nope.test.js","message":"ENOENT: no such file or directory, open '/r/nope.test.js'","assertionResults":[]}]}"#;
        assert!(jest(&finished(1, "", Some(missing))).is_some_and(|(_, _, unknown)| unknown));
        let none = br#"{"numRuntimeErrorTestSuites":0,"testResults":[]}"#;
        assert!(
            jest(&finished(
                1,
                "No tests found, exiting with code 1",
                Some(none)
            ))
            .is_some()
        );
    }

    #[test]
    fn quoted_lines_are_cut_and_bounded() {
        let wide = format!("ERROR {}", "x".repeat(1000));
        let log = std::iter::repeat_n(wide.as_str(), 3)
            .chain((0..20).map(|_| "ERROR y"))
            .collect::<Vec<_>>()
            .join("\n");
        let (_, quoted, _) = pytest(&finished(2, &log, None)).unwrap_or_default();
        assert_eq!(quoted.len(), 2, "repeated lines once: {quoted:?}");
        assert!(quoted[0].chars().count() <= MAX_LINE_CHARS + 1);
    }
}
