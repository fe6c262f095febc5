//! `cargo bench --bench junit-corpus`: reads every JUnit file of the shared corpus with
//! candor's parser and with quick-junit's reader, next to a plain quick-xml count of what
//! the file holds, and prints a Markdown table of what each reads and loses. The evidence
//! behind docs/junit-parser-choice.md.

use std::fmt::Write as _;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use candor::results::{Outcome, ParseOptions, parse, parse_all};
use quick_junit::{NonSuccessKind, Report, TestCaseStatus};
use quick_xml::events::Event;

fn main() -> ExitCode {
    let corpus = corpus_dir().join("junit");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&corpus) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.is_file())
            .collect(),
        Err(error) => {
            eprintln!("error: {}: {error}", corpus.display());
            eprintln!("hint: set CANDOR_CORPUS to the corpus's `results` folder");
            return ExitCode::FAILURE;
        }
    };
    files.sort();

    let rows: Vec<Row> = files.iter().map(|path| Row::read(path)).collect();
    println!("{}", table(&rows));
    println!("{}", summary(&rows));
    println!("{}", probes());
    ExitCode::SUCCESS
}

/// env `CANDOR_CORPUS`, else `<crate>/../shared/corpus/results`, else the shared copy.
fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CANDOR_CORPUS") {
        return PathBuf::from(dir);
    }
    let sibling = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/results");
    if sibling.is_dir() {
        sibling
    } else {
        PathBuf::from("/work/shared/corpus/results")
    }
}

/// What a plain event scan finds in the file: the ground truth both readers are held to.
#[derive(Debug, Default)]
struct Census {
    testcases: u64,
    retry_elements: u64,
    properties_with_text: u64,
    nested_suites: u64,
    /// Where the scan stopped, when the XML is not well formed.
    error: Option<String>,
}

#[derive(Debug)]
struct CandorView {
    executions: u64,
    merged: u64,
    flaky_passes: u64,
    extra_attempts: u64,
}

#[derive(Debug)]
struct QuickJunitView {
    testcases: u64,
    reruns: u64,
}

struct Row {
    name: String,
    census: Census,
    candor: Result<CandorView, String>,
    quick_junit: Result<QuickJunitView, String>,
}

impl Row {
    fn read(path: &Path) -> Row {
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        Row {
            name,
            census: census(path),
            candor: read_with_candor(path),
            quick_junit: read_with_quick_junit(path),
        }
    }
}

fn census(path: &Path) -> Census {
    let mut census = Census::default();
    let Ok(file) = File::open(path) else {
        census.error = Some("unreadable".into());
        return census;
    };
    let mut reader = quick_xml::Reader::from_reader(BufReader::new(file));
    let mut buffer = Vec::new();
    let mut suite_depth = 0u32;
    let mut in_property = false;
    loop {
        let event = match reader.read_event_into(&mut buffer) {
            Ok(Event::Eof) => break,
            Ok(event) => event,
            Err(error) => {
                census.error = Some(format!("byte {}: {error}", reader.error_position()));
                break;
            }
        };
        match &event {
            Event::Start(element) | Event::Empty(element) => {
                let is_start = matches!(event, Event::Start(_));
                match element.local_name().as_ref() {
                    b"testcase" => census.testcases += 1,
                    b"testsuite" => {
                        if suite_depth > 0 {
                            census.nested_suites += 1;
                        }
                        if is_start {
                            suite_depth += 1;
                        }
                    }
                    b"flakyFailure" | b"flakyError" | b"rerunFailure" | b"rerunError" => {
                        census.retry_elements += 1;
                    }
                    b"property" => in_property = is_start,
                    _ => {}
                }
            }
            Event::End(element) => match element.local_name().as_ref() {
                b"testsuite" => suite_depth = suite_depth.saturating_sub(1),
                b"property" => in_property = false,
                _ => {}
            },
            Event::Text(text) if in_property && !text.iter().all(u8::is_ascii_whitespace) => {
                census.properties_with_text += 1;
                in_property = false;
            }
            Event::CData(_) if in_property => {
                census.properties_with_text += 1;
                in_property = false;
            }
            _ => {}
        }
        buffer.clear();
    }
    census
}

fn read_with_candor(path: &Path) -> Result<CandorView, String> {
    let file = File::open(path).map_err(|error| error.to_string())?;
    let (executions, summary) =
        parse_all(file, &ParseOptions::default()).map_err(|error| error.to_string())?;
    Ok(CandorView {
        executions: summary.executions,
        merged: executions.len() as u64,
        flaky_passes: executions
            .iter()
            .filter(|execution| execution.outcome == Outcome::FlakyPass)
            .count() as u64,
        extra_attempts: executions
            .iter()
            .map(|execution| u64::from(execution.attempts.saturating_sub(1)))
            .sum(),
    })
}

fn read_with_quick_junit(path: &Path) -> Result<QuickJunitView, String> {
    let file = File::open(path).map_err(|error| error.to_string())?;
    let report = Report::deserialize(BufReader::new(file)).map_err(|error| error.to_string())?;
    let cases = report
        .test_suites
        .iter()
        .flat_map(|suite| &suite.test_cases);
    let mut view = QuickJunitView {
        testcases: 0,
        reruns: 0,
    };
    for case in cases {
        view.testcases += 1;
        view.reruns += match &case.status {
            TestCaseStatus::Success { flaky_runs } => flaky_runs.len() as u64,
            TestCaseStatus::NonSuccess { reruns, .. } => reruns.runs.len() as u64,
            TestCaseStatus::Skipped { .. } => 0,
        };
    }
    Ok(view)
}

fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| file | testcases in file | retry elements | candor executions (merged) | candor flaky-pass / extra attempts | quick-junit testcases | quick-junit reruns | candor error | quick-junit error |"
    );
    let _ = writeln!(
        out,
        "| --- | --: | --: | --: | --: | --: | --: | --- | --- |"
    );
    for row in rows {
        let census_cases = match &row.census.error {
            None => row.census.testcases.to_string(),
            Some(_) => format!("{} (scan stops)", row.census.testcases),
        };
        let (candor_cases, candor_retries, candor_error) = match &row.candor {
            Ok(view) => (
                format!("{} ({})", view.executions, view.merged),
                format!("{} / {}", view.flaky_passes, view.extra_attempts),
                String::new(),
            ),
            Err(error) => ("—".into(), "—".into(), cell(error)),
        };
        let (qj_cases, qj_reruns, qj_error) = match &row.quick_junit {
            Ok(view) => (
                view.testcases.to_string(),
                view.reruns.to_string(),
                String::new(),
            ),
            Err(error) => ("—".into(), "—".into(), cell(error)),
        };
        let _ = writeln!(
            out,
            "| {} | {census_cases} | {} | {candor_cases} | {candor_retries} | {qj_cases} | {qj_reruns} | {candor_error} | {qj_error} |",
            row.name, row.census.retry_elements
        );
    }
    out
}

fn summary(rows: &[Row]) -> String {
    // "Well formed" as far as quick-xml's lenient reader can tell: it accepts a raw `<`
    // in an attribute or a control character, so this set includes a few broken files.
    let well_formed: Vec<&Row> = rows
        .iter()
        .filter(|row| row.census.error.is_none())
        .collect();
    let malformed = rows.len() - well_formed.len();
    let read = |reader: fn(&Row) -> bool| rows.iter().filter(|row| reader(row)).count();
    let candor_ok = read(|row| row.candor.is_ok());
    let qj_ok = read(|row| row.quick_junit.is_ok());
    let truth: u64 = well_formed.iter().map(|row| row.census.testcases).sum();
    let candor_cases: u64 = well_formed
        .iter()
        .filter_map(|row| row.candor.as_ref().ok())
        .map(|view| view.executions)
        .sum();
    let qj_cases: u64 = well_formed
        .iter()
        .filter_map(|row| row.quick_junit.as_ref().ok())
        .map(|view| view.testcases)
        .sum();
    let complete = |count: fn(&Row) -> Option<u64>| {
        well_formed
            .iter()
            .filter(|row| count(row) == Some(row.census.testcases))
            .count()
    };
    let candor_complete = complete(|row| row.candor.as_ref().ok().map(|view| view.executions));
    let qj_complete = complete(|row| row.quick_junit.as_ref().ok().map(|view| view.testcases));
    let retry_truth: u64 = well_formed
        .iter()
        .map(|row| row.census.retry_elements)
        .sum();
    let qj_reruns: u64 = well_formed
        .iter()
        .filter_map(|row| row.quick_junit.as_ref().ok())
        .map(|view| view.reruns)
        .sum();
    let candor_flaky: u64 = well_formed
        .iter()
        .filter_map(|row| row.candor.as_ref().ok())
        .map(|view| view.flaky_passes)
        .sum();
    let candor_attempts: u64 = well_formed
        .iter()
        .filter_map(|row| row.candor.as_ref().ok())
        .map(|view| view.extra_attempts)
        .sum();
    let with_text_properties = well_formed
        .iter()
        .filter(|row| row.census.properties_with_text > 0)
        .count();
    let with_nested = well_formed
        .iter()
        .filter(|row| row.census.nested_suites > 0)
        .count();

    let mut out = String::new();
    let _ = writeln!(
        out,
        "| measure | candor | quick-junit |\n| --- | --: | --: |"
    );
    let _ = writeln!(
        out,
        "| files read without error (of {}; {malformed} stop a plain quick-xml scan) | {candor_ok} | {qj_ok} |",
        rows.len()
    );
    let _ = writeln!(
        out,
        "| files that scan cleanly and whose every testcase was read (of {}) | {candor_complete} | {qj_complete} |",
        well_formed.len()
    );
    let _ = writeln!(
        out,
        "| testcases read from those files (they hold {truth}) | {candor_cases} | {qj_cases} |"
    );
    let _ = writeln!(
        out,
        "| retries (files hold {retry_truth} flaky/rerun elements) | {candor_flaky} flaky-pass, {candor_attempts} extra attempts | {qj_reruns} reruns |"
    );
    let _ = writeln!(
        out,
        "\n{with_nested} files nest testsuites; {with_text_properties} have a property with text content."
    );
    out
}

/// A table cell: one line, no pipes, not too long.
fn cell(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|ch| match ch {
            '|' => '/',
            '\n' | '\r' => ' ',
            other => other,
        })
        .collect();
    if flat.chars().count() > 160 {
        let cut: String = flat.chars().take(160).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

/// Small documents, one quirk each, read by both: what each makes of the quirk. The
/// corpus shows how often a quirk stops a reader; these show what a reader does with it.
fn probes() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| probe | candor | quick-junit |\n| --- | --- | --- |");
    for (name, document) in probe_documents() {
        let _ = writeln!(
            out,
            "| {name} | {} | {} |",
            cell(&probe_candor(&document)),
            cell(&probe_quick_junit(&document))
        );
    }
    out
}

fn suite(cases: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"s\" tests=\"1\" timestamp=\"2024-01-03T11:23:00Z\">\n{cases}\n</testsuite>\n</testsuites>\n"
    )
}

fn probe_documents() -> Vec<(&'static str, Vec<u8>)> {
    let mut documents: Vec<(&'static str, Vec<u8>)> = vec![
        (
            "flakyFailure then pass (Surefire, nextest)",
            suite(r#"<testcase classname="c" name="t" time="1"><flakyFailure message="boom" type="E"><stackTrace>E: boom</stackTrace></flakyFailure></testcase>"#),
        ),
        (
            "failure with rerunFailure",
            suite(r#"<testcase classname="c" name="t" time="1"><failure message="boom" type="E"/><rerunFailure message="boom again" type="E"/></testcase>"#),
        ),
        (
            "repeated testcase: fail, then pass (pytest-rerunfailures)",
            suite(r#"<testcase classname="c" name="t" time="1"><failure message="boom"/></testcase><testcase classname="c" name="t" time="2"/>"#),
        ),
        (
            "two `<failure>` in one testcase (gtest)",
            suite(r#"<testcase classname="c" name="t" time="1"><failure message="first"/><failure message="second"/></testcase>"#),
        ),
        (
            "property with text content",
            suite(r#"<properties><property name="multiline">line one
line two</property></properties><testcase classname="c" name="t" time="1"/>"#),
        ),
        ("time=\"2,503.1\"", suite(r#"<testcase classname="c" name="t" time="2,503.1"/>"#)),
        ("time=\"-345345\"", suite(r#"<testcase classname="c" name="t" time="-345345"/>"#)),
        ("time=\"1.4e-05\"", suite(r#"<testcase classname="c" name="t" time="1.4e-05"/>"#)),
        ("time=\"999638317\" (nanoseconds)", suite(r#"<testcase classname="c" name="t" time="999638317"/>"#)),
        ("no time attribute", suite(r#"<testcase classname="c" name="t"/>"#)),
        (
            "timestamp without zone",
            suite(r#"<testcase classname="c" name="t" time="1"/>"#)
                .replace("2024-01-03T11:23:00Z", "2024-01-03T11:23:00"),
        ),
        (
            "bare `<testsuite>` root",
            "<testsuite name=\"s\" tests=\"1\"><testcase classname=\"c\" name=\"t\" time=\"1\"/></testsuite>".to_string(),
        ),
        (
            "nested testsuites",
            suite(r#"<testsuite name="inner"><testcase classname="c" name="t" time="1"/></testsuite>"#),
        ),
        (
            "suite-level `<error>` and no testcase",
            suite(r#"<error message="java.lang.NoClassDefFoundError: X" type="java.lang.NoClassDefFoundError">trace</error>"#),
        ),
        (
            "file cut short",
            suite(r#"<testcase classname="c" name="t" time="1"/>"#)[..90].to_string(),
        ),
    ]
    .into_iter()
    .map(|(name, text)| (name, text.into_bytes()))
    .collect();

    // One non-ASCII classname and name in each encoding a JUnit writer may use.
    let body = |declared: &str| {
        format!(
            "<?xml version=\"1.0\" encoding=\"{declared}\"?>\n<testsuites><testsuite name=\"s\" tests=\"1\" timestamp=\"2024-01-03T11:23:00Z\"><testcase classname=\"pkg.Caf\u{e9}\" name=\"test_\u{fc}ber\" time=\"1\"/></testsuite></testsuites>\n"
        )
    };
    let utf16 = |text: &str, little_endian: bool| -> Vec<u8> {
        let mut bytes = if little_endian {
            vec![0xFF, 0xFE]
        } else {
            vec![0xFE, 0xFF]
        };
        for unit in text.encode_utf16() {
            let pair = if little_endian {
                unit.to_le_bytes()
            } else {
                unit.to_be_bytes()
            };
            bytes.extend_from_slice(&pair);
        }
        bytes
    };
    let latin1 = |text: &str| -> Vec<u8> {
        text.chars()
            .map(|ch| u8::try_from(u32::from(ch)).unwrap_or(b'?'))
            .collect()
    };
    let mut bom_utf8 = vec![0xEF, 0xBB, 0xBF];
    bom_utf8.extend_from_slice(body("UTF-8").as_bytes());
    documents.extend([
        ("UTF-8 with BOM, non-ASCII names", bom_utf8),
        (
            "UTF-16LE with BOM, non-ASCII names",
            utf16(&body("UTF-16"), true),
        ),
        (
            "UTF-16BE with BOM, non-ASCII names",
            utf16(&body("UTF-16"), false),
        ),
        ("ISO-8859-1, non-ASCII names", latin1(&body("ISO-8859-1"))),
    ]);
    documents
}

fn probe_candor(document: &[u8]) -> String {
    let mut raw = 0u64;
    if let Err(error) = parse(document, &ParseOptions::default(), &mut |_| {
        raw += 1;
        Ok(())
    }) {
        return format!("error: {error}");
    }
    match parse_all(document, &ParseOptions::default()) {
        Ok((executions, _)) => {
            let described: Vec<String> = executions
                .iter()
                .map(|execution| {
                    let duration = execution
                        .duration
                        .map_or_else(|| "no time".to_string(), |seconds| format!("{seconds} s"));
                    format!(
                        "`{}` {} ×{}, {duration}{}",
                        execution.test_id,
                        execution.outcome,
                        execution.attempts,
                        execution
                            .failure
                            .as_ref()
                            .map(|failure| format!(", message `{}`", failure.message))
                            .unwrap_or_default()
                    )
                })
                .collect();
            format!(
                "{raw} read, {} kept: {}",
                executions.len(),
                described.join("; ")
            )
        }
        Err(error) => format!("error: {error}"),
    }
}

fn probe_quick_junit(document: &[u8]) -> String {
    match Report::deserialize(document) {
        Ok(report) => {
            let described: Vec<String> = report
                .test_suites
                .iter()
                .flat_map(|suite| &suite.test_cases)
                .map(|case| {
                    let status = match &case.status {
                        TestCaseStatus::Success { flaky_runs } if flaky_runs.is_empty() => {
                            "pass".to_string()
                        }
                        TestCaseStatus::Success { flaky_runs } => {
                            format!("pass after {} flaky runs", flaky_runs.len())
                        }
                        TestCaseStatus::NonSuccess {
                            kind,
                            reruns,
                            message,
                            ..
                        } => format!(
                            "{}{}{}",
                            match kind {
                                NonSuccessKind::Failure => "failure",
                                NonSuccessKind::Error => "error",
                            },
                            if reruns.runs.is_empty() {
                                String::new()
                            } else {
                                format!(" with {} reruns", reruns.runs.len())
                            },
                            message
                                .as_ref()
                                .map(|text| format!(", message `{}`", text.as_str()))
                                .unwrap_or_default()
                        ),
                        TestCaseStatus::Skipped { .. } => "skipped".to_string(),
                    };
                    let time = case.time.map_or_else(
                        || "no time".to_string(),
                        |time| format!("{} s", time.as_secs_f64()),
                    );
                    format!(
                        "`{}::{}` {status}, {time}",
                        case.classname.as_ref().map_or("", |name| name.as_str()),
                        case.name.as_str()
                    )
                })
                .collect();
            let properties: usize = report
                .test_suites
                .iter()
                .map(|suite| suite.properties.len())
                .sum();
            let suffix = if properties > 0 {
                format!(" ({properties} properties)")
            } else {
                String::new()
            };
            format!(
                "{} testcases{suffix}: {}",
                described.len(),
                described.join("; ")
            )
        }
        Err(error) => format!("error: {error}"),
    }
}
