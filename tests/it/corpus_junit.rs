//! The JUnit parser against the developer corpus (`MANIFEST.tsv`): every `junit/` file
//! parses to one execution per test case, or is refused exactly where the expected-broken
//! list says; every XML and TRX file of `other/` is refused as not results, naming its
//! format; hand-checked tallies hold; and the smallest file of each producing tool is
//! snapshotted.

use crate::corpus_support;

use corpus_support::corpus;
use std::collections::BTreeMap;
use std::path::Path;

use candor::results::{Execution, Outcome, ParseError, ParseOptions, ParseSummary, Position};
use serde::Serialize;

/// One line of `MANIFEST.tsv`.
struct Row {
    file: String,
    tool: String,
    bytes: u64,
}

fn manifest() -> Vec<Row> {
    let text = fs_err::read_to_string(corpus().join("MANIFEST.tsv")).expect("the manifest");
    let rows: Vec<Row> = text
        .lines()
        .skip(1)
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 8, "a manifest line with 8 fields: {line}");
            Row {
                file: fields[0].to_owned(),
                tool: fields[2].to_owned(),
                bytes: fields[7].parse().expect("a byte count"),
            }
        })
        .collect();
    assert!(rows.len() > 150, "the whole manifest was read");
    rows
}

fn parse(file: &str) -> Result<(Vec<Execution>, ParseSummary), ParseError> {
    let input = fs_err::File::open(corpus().join(file))?;
    candor::results::parse_all(input, &ParseOptions::default())
}

/// How a broken file must be refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    Syntax,
    NotResults,
}

/// Every corpus file candor must refuse: the kind of refusal, where (line, column) and a
/// piece of the message.
const EXPECTED_BROKEN: &[(&str, Refusal, u64, u64, &str)] = &[
    (
        "junit/launchable__cucumber__report__dummy.xml",
        Refusal::NotResults,
        1,
        1,
        "the file is empty",
    ),
    (
        "junit/launchable__broken_xml__broken.xml",
        Refusal::NotResults,
        1,
        1,
        "neither XML",
    ),
    (
        "junit/launchable__maven__reports__dummy.xml",
        Refusal::NotResults,
        1,
        1,
        "root element <bogus> is not a JUnit report",
    ),
    (
        "junit/mikepenz__corrupt-junit__e2e-tests__corrupt__target__sf-reports__TEST-test.CorruptTest.xml",
        Refusal::Syntax,
        18,
        17,
        "CDATA section that never ends",
    ),
    (
        "junit/mikepenz__junit-web-test__expected.xml",
        Refusal::Syntax,
        9,
        59,
        "raw `<`",
    ),
    (
        "junit/mikepenz__junit-web-test__expectedRetries.xml",
        Refusal::Syntax,
        9,
        59,
        "raw `<`",
    ),
    (
        "junit/jenkins-junit__testXxe-xxe.xml",
        Refusal::Syntax,
        2,
        1,
        "<!DOCTYPE>",
    ),
    (
        "junit/cargo2junit__expected_outputs__azfunc.xml",
        Refusal::Syntax,
        427,
        60,
        "U+0008",
    ),
];

/// Test cases counted by a separate, plain quick-xml walk: `<testcase>` elements, plus
/// `<failure>`/`<error>` elements sitting directly in a `<testsuite>` (which candor
/// reports as the suite's `<init>`).
fn independent_count(file: &str) -> u64 {
    use quick_xml::events::Event;
    let bytes = fs_err::read(corpus().join(file)).expect("the file");
    let mut reader = quick_xml::Reader::from_reader(&bytes[..]);
    let mut buffer = Vec::new();
    let mut open: Vec<Vec<u8>> = Vec::new();
    let mut count = 0;
    loop {
        let event = reader.read_event_into(&mut buffer).expect("well-formed");
        let (name, empty) = match &event {
            Event::Start(element) => (element.name().as_ref().to_vec(), false),
            Event::Empty(element) => (element.name().as_ref().to_vec(), true),
            Event::End(_) => {
                open.pop();
                buffer.clear();
                continue;
            }
            Event::Eof => break,
            _ => {
                buffer.clear();
                continue;
            }
        };
        let parent = open.last().map(Vec::as_slice);
        let suite_level_red =
            matches!(name.as_slice(), b"failure" | b"error") && parent == Some(b"testsuite");
        if name == b"testcase" || suite_level_red {
            count += 1;
        }
        if !empty {
            open.push(name);
        }
        buffer.clear();
    }
    count
}

#[test]
fn every_junit_file_parses_or_is_refused_as_expected() {
    if !corpus_support::present("every_junit_file_parses_or_is_refused_as_expected") {
        return;
    }
    let rows = manifest();
    let junit: Vec<&Row> = rows
        .iter()
        .filter(|r| r.file.starts_with("junit/"))
        .collect();
    assert_eq!(junit.len(), 147, "the junit/ rows of the manifest");
    for (file, ..) in EXPECTED_BROKEN {
        assert!(
            junit.iter().any(|row| row.file == *file),
            "{file} is in the manifest"
        );
    }
    let mut problems = Vec::new();
    for row in junit {
        let broken = EXPECTED_BROKEN.iter().find(|(file, ..)| *file == row.file);
        match (parse(&row.file), broken) {
            (Ok((merged, summary)), None) => {
                let expected = independent_count(&row.file);
                if summary.executions != expected {
                    problems.push(format!(
                        "{}: {} executions, {expected} test cases",
                        row.file, summary.executions
                    ));
                }
                if merged.len() as u64 > summary.executions {
                    problems.push(format!("{}: merging added executions", row.file));
                }
                if expected > 0 && summary.producer.is_none() {
                    problems.push(format!("{}: no producer", row.file));
                }
            }
            (Ok(_), Some(_)) => problems.push(format!("{}: parsed, expected a refusal", row.file)),
            (Err(error), None) => problems.push(format!("{}: refused: {error}", row.file)),
            (Err(error), Some((_, kind, line, column, fragment))) => {
                let (found, position, message) = match &error {
                    ParseError::Syntax { position, message } => {
                        (Refusal::Syntax, *position, message.as_str())
                    }
                    ParseError::NotResults { position, message } => {
                        (Refusal::NotResults, *position, message.as_str())
                    }
                    other => {
                        problems.push(format!("{}: unexpected error {other:?}", row.file));
                        continue;
                    }
                };
                let wanted = Position::LineColumn {
                    line: *line,
                    column: *column,
                };
                if found != *kind || position != wanted || !message.contains(fragment) {
                    problems.push(format!(
                        "{}: refused as {found:?} at {position}: {message}; expected {kind:?} at {wanted} saying {fragment:?}",
                        row.file
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn other_xml_formats_are_refused_by_name() {
    if !corpus_support::present("other_xml_formats_are_refused_by_name") {
        return;
    }
    let rows = manifest();
    let others: Vec<&Row> = rows
        .iter()
        .filter(|r| {
            let extension = Path::new(&r.file).extension().and_then(|e| e.to_str());
            r.file.starts_with("other/") && matches!(extension, Some("xml" | "trx"))
        })
        .collect();
    assert_eq!(others.len(), 10, "the XML and TRX files of other/");
    for row in others {
        let name = if row.tool.contains("TRX") {
            "TRX"
        } else if row.tool.contains("NUnit 3") {
            "NUnit 3"
        } else if row.tool.contains("CTest") {
            "CTest"
        } else if row.tool.contains("Robot") {
            "Robot Framework"
        } else if row.tool.contains("Android CTS") {
            "Android CTS"
        } else {
            panic!(
                "{}: a format this test does not know: {}",
                row.file, row.tool
            );
        };
        match parse(&row.file) {
            Err(ParseError::NotResults { message, .. }) => assert!(
                message.contains(name) && message.contains("does not read"),
                "{}: {message}",
                row.file
            ),
            other => panic!("{}: expected NotResults, got {other:?}", row.file),
        }
    }
}

/// Outcome tallies after retry merging, and attempts of chosen tests, checked by hand
/// against the files (and, where they are right, against their own counts).
#[test]
fn hand_checked_tallies() {
    struct Expected {
        file: &'static str,
        emitted: u64,
        /// pass, fail, error, skip, flaky-pass after merging.
        tally: [usize; 5],
        attempts: &'static [(&'static str, u32)],
    }
    if !corpus_support::present("hand_checked_tallies") {
        return;
    }
    let cases = [
        Expected {
            file: "junit/jenkins-junit__gh-237__TEST-io.olamy.AlwaysFailTest.xml",
            emitted: 1,
            tally: [0, 1, 0, 0, 0],
            attempts: &[("io.olamy.AlwaysFailTest::testApp", 4)],
        },
        Expected {
            file: "junit/jenkins-junit__gh-237__TEST-io.olamy.FlakyTest.xml",
            emitted: 1,
            tally: [0, 0, 0, 0, 1],
            attempts: &[("io.olamy.FlakyTest::testApp", 3)],
        },
        Expected {
            file: "junit/nextest__fixtures__fixture-project-junit.xml",
            emitted: 3,
            tally: [1, 1, 0, 0, 1],
            attempts: &[
                ("fixture-project::basic::test_failure_assert", 3),
                ("fixture-project::basic::test_flaky_mod_4", 4),
            ],
        },
        Expected {
            file: "junit/mikepenz__flaky_retries__flaky_with_classname_file.xml",
            emitted: 5,
            tally: [2, 0, 0, 0, 1],
            attempts: &[("test_foo.py::TestFoo::test_foo", 3)],
        },
        Expected {
            file: "junit/mikepenz__flaky_retries__flaky_all_failures.xml",
            emitted: 3,
            tally: [0, 0, 1, 0, 0],
            attempts: &[(
                "test_always_fails.py::TestAlwaysFails::test_always_fails",
                3,
            )],
        },
        Expected {
            file: "junit/mikepenz__junit-server-test__report.xml",
            emitted: 4,
            tally: [1, 0, 0, 1, 1],
            attempts: &[(
                "github.com/example/example/server/v8/channels/api4::TestWebSocketReconnectRace",
                2,
            )],
        },
        Expected {
            file: "junit/jenkins-junit__junit-report-huge.xml",
            emitted: 7580,
            tally: [5130, 19, 0, 2430, 1],
            attempts: &[],
        },
        Expected {
            file: "junit/dorny__external__jest__jest-test-results.xml",
            emitted: 4239,
            tally: [3950, 2, 0, 30, 0],
            attempts: &[],
        },
        Expected {
            file: "junit/mikepenz__issues__testDisabled.xml",
            emitted: 22,
            tally: [6, 4, 2, 10, 0],
            attempts: &[],
        },
        Expected {
            file: "junit/spekt__TestResults.xml",
            emitted: 52,
            tally: [32, 14, 0, 6, 0],
            attempts: &[],
        },
        Expected {
            file: "junit/launchable__playwright__report.xml",
            emitted: 93,
            tally: [84, 3, 0, 6, 0],
            attempts: &[],
        },
        Expected {
            file: "junit/mikepenz__tests__email__TEST-action.surefire.report.email.EmailAddressTest.xml",
            emitted: 9,
            tally: [2, 2, 5, 0, 0],
            attempts: &[],
        },
        Expected {
            file: "junit/gojunitreport__012-report.xml",
            emitted: 11,
            tally: [6, 4, 0, 1, 0],
            attempts: &[],
        },
        Expected {
            file: "junit/jenkins-junit__junit-report-6700.xml",
            emitted: 1,
            tally: [0, 0, 1, 0, 0],
            attempts: &[("gda.device.detector.XHDetectorTest::<init>", 1)],
        },
    ];
    for case in cases {
        let (merged, summary) = parse(case.file).unwrap_or_else(|e| panic!("{}: {e}", case.file));
        assert_eq!(summary.executions, case.emitted, "{}", case.file);
        let count = |outcome| merged.iter().filter(|e| e.outcome == outcome).count();
        let tally = [
            count(Outcome::Pass),
            count(Outcome::Fail),
            count(Outcome::Error),
            count(Outcome::Skip),
            count(Outcome::FlakyPass),
        ];
        assert_eq!(tally, case.tally, "{}", case.file);
        for (id, attempts) in case.attempts {
            let execution = merged
                .iter()
                .find(|e| e.test_id == *id)
                .unwrap_or_else(|| panic!("{}: no {id}", case.file));
            assert_eq!(execution.attempts, *attempts, "{}: {id}", case.file);
        }
    }
}

/// What a snapshot shows of an execution: everything, with long texts cut so that the
/// snapshot stays readable.
#[derive(Serialize)]
struct Shown {
    test_id: String,
    outcome: Outcome,
    duration: Option<f64>,
    attempts: u32,
    exception: Option<String>,
    message: Option<String>,
    failure_text: Option<String>,
    failing_frame: Option<String>,
    frames: Option<Vec<String>>,
    signature: Option<String>,
    skip_message: Option<String>,
    file: Option<String>,
    line: Option<u32>,
    stdout: Option<String>,
    stderr: Option<String>,
}

fn cut(text: &str) -> String {
    const KEEP: usize = 240;
    if text.len() <= KEEP {
        return text.to_owned();
    }
    let mut end = KEEP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [{} bytes]", &text[..end], text.len())
}

impl From<&Execution> for Shown {
    fn from(execution: &Execution) -> Shown {
        let failure = execution.failure.as_deref();
        Shown {
            test_id: execution.test_id.clone(),
            outcome: execution.outcome,
            duration: execution.duration,
            attempts: execution.attempts,
            exception: failure.and_then(|f| f.exception.clone()),
            message: failure.map(|f| cut(&f.message)),
            failure_text: failure.map(|f| cut(&f.text)),
            failing_frame: failure
                .and_then(|f| f.failing_frame.as_ref())
                .map(ToString::to_string),
            frames: failure.map(|f| f.frames.iter().take(8).map(ToString::to_string).collect()),
            signature: failure.map(candor::results::Failure::signature),
            skip_message: execution.skip_message.as_deref().map(cut),
            file: execution.file.clone(),
            line: execution.line,
            stdout: execution.stdout.as_deref().map(cut),
            stderr: execution.stderr.as_deref().map(cut),
        }
    }
}

#[derive(Serialize)]
struct Snapshot {
    file: String,
    tool: String,
    producer: Option<String>,
    emitted: u64,
    merged: usize,
    warnings: Vec<String>,
    /// The first [`SHOWN_EXECUTIONS`] executions after merging.
    executions: Vec<Shown>,
}

/// Enough executions to show every dialect's shapes without a 40,000-line snapshot for
/// the one large file some tools have.
const SHOWN_EXECUTIONS: usize = 30;

#[test]
fn the_smallest_file_of_each_tool_is_snapshotted() {
    if !corpus_support::present("the_smallest_file_of_each_tool_is_snapshotted") {
        return;
    }
    let rows = manifest();
    // The smallest file with a test case in it; the smallest at all when a tool has only
    // empty ones.
    let mut smallest: BTreeMap<&str, (bool, &Row)> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.file.starts_with("junit/")) {
        if EXPECTED_BROKEN.iter().any(|(file, ..)| *file == row.file) {
            continue;
        }
        let empty = independent_count(&row.file) == 0;
        let entry = smallest.entry(row.tool.as_str()).or_insert((empty, row));
        if (empty, row.bytes, &row.file) < (entry.0, entry.1.bytes, &entry.1.file) {
            *entry = (empty, row);
        }
    }
    assert!(smallest.len() > 40, "one file per producing tool");
    let corpus_path = corpus().display().to_string();
    for (tool, (_, row)) in smallest {
        let (merged, summary) = parse(&row.file).unwrap_or_else(|e| panic!("{}: {e}", row.file));
        let snapshot = Snapshot {
            file: row.file.clone(),
            tool: tool.to_owned(),
            producer: summary.producer,
            emitted: summary.executions,
            merged: merged.len(),
            warnings: summary.warnings,
            executions: merged
                .iter()
                .take(SHOWN_EXECUTIONS)
                .map(Shown::from)
                .collect(),
        };
        let name: String = row
            .file
            .trim_start_matches("junit/")
            .trim_end_matches(".xml")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        insta::with_settings!({
            filters => vec![(regex_escape(&corpus_path).as_str(), "[corpus]")],
            prepend_module_to_snapshot => true,
        }, {
            insta::assert_yaml_snapshot!(name, snapshot, {
                // Known durations are redacted; an unknown one stays visibly unknown.
                ".executions[].duration" => insta::dynamic_redaction(|value, _| {
                    if value.is_nil() {
                        value
                    } else {
                        "[duration]".into()
                    }
                }),
            });
        });
    }
}

fn regex_escape(text: &str) -> String {
    regex::escape(text)
}
