//! The JUnit parser on small documents written for each rule: retries, skips, encodings,
//! refusals and their positions, and a round trip of generated reports.

use std::fmt::Write as _;

use proptest::prelude::*;

use crate::results::model::MAX_TEXT_BYTES;
use crate::results::{Execution, Outcome, ParseError, ParseOptions, ParseSummary, Position};

/// Every execution as the parser emits it, before retry merging.
fn stream(input: &[u8]) -> Result<(Vec<Execution>, ParseSummary), ParseError> {
    let mut executions = Vec::new();
    let summary = super::parse(input, &ParseOptions::default(), &mut |execution| {
        executions.push(execution);
        Ok(())
    })?;
    Ok((executions, summary))
}

fn merged(input: &str) -> (Vec<Execution>, ParseSummary) {
    crate::results::parse_all(input.as_bytes(), &ParseOptions::default())
        .unwrap_or_else(|error| panic!("{error}"))
}

fn only(input: &str) -> Execution {
    let (mut executions, _) = merged(input);
    assert_eq!(executions.len(), 1, "{executions:#?}");
    executions.remove(0)
}

fn refusal(input: &[u8]) -> (Position, String) {
    match stream(input) {
        Ok(parsed) => panic!("expected a refusal, got {parsed:#?}"),
        Err(
            ParseError::Syntax { position, message } | ParseError::NotResults { position, message },
        ) => (position, message),
        Err(other) => panic!("unexpected error {other:?}"),
    }
}

fn at(line: u64, column: u64) -> Position {
    Position::LineColumn { line, column }
}

fn suite(cases: &str) -> String {
    format!("<testsuites>\n<testsuite name=\"s\">\n{cases}\n</testsuite>\n</testsuites>\n")
}

#[test]
fn flaky_failures_make_a_flaky_pass_with_one_attempt_each() {
    let execution = only(&suite(
        r#"<testcase classname="a.B" name="t" time="0.5">
             <flakyFailure message="first" type="java.lang.AssertionError">
               <stackTrace>java.lang.AssertionError: first
	at a.B.t(B.java:3)</stackTrace>
               <system-out>attempt 1</system-out>
             </flakyFailure>
             <flakyError message="second" type="java.io.IOException"><stackTrace>x</stackTrace></flakyError>
             <system-out>final</system-out>
           </testcase>"#,
    ));
    assert_eq!(execution.outcome, Outcome::FlakyPass);
    assert_eq!(execution.attempts, 3);
    assert_eq!(execution.duration, Some(0.5));
    let failure = execution.failure.expect("the first flaky failure");
    assert_eq!(failure.message, "first");
    assert_eq!(
        failure.exception.as_deref(),
        Some("java.lang.AssertionError")
    );
    assert_eq!(
        failure.text,
        "java.lang.AssertionError: first\n\tat a.B.t(B.java:3)"
    );
    assert_eq!(
        execution.stdout.as_deref(),
        Some("final"),
        "retry output is not the test's"
    );
}

#[test]
fn rerun_failures_stay_red_with_one_attempt_each() {
    let execution = only(&suite(
        r#"<testcase classname="a.B" name="t">
             <failure message="built to fail" type="junit.framework.AssertionFailedError">trace</failure>
             <rerunFailure message="again"><stackTrace>trace 2</stackTrace></rerunFailure>
             <rerunFailure message="again"><stackTrace>trace 3</stackTrace></rerunFailure>
           </testcase>"#,
    ));
    assert_eq!(execution.outcome, Outcome::Fail);
    assert_eq!(execution.attempts, 3);
    assert_eq!(execution.failure.unwrap().message, "built to fail");

    let execution = only(&suite(
        r#"<testcase classname="a.B" name="t"><rerunError message="boom">x</rerunError></testcase>"#,
    ));
    assert_eq!(execution.outcome, Outcome::Error);
    assert_eq!(execution.attempts, 2);
    assert_eq!(execution.failure.unwrap().message, "boom");
}

#[test]
fn a_repeated_test_case_is_emitted_twice_and_merged_as_a_retry() {
    let input = suite(
        r#"<testcase classname="tests.test_x" name="test_y" time="1"><failure message="flaky">E</failure></testcase>
           <testcase classname="tests.test_x" name="test_y" time="2"/>"#,
    );
    let (emitted, summary) = stream(input.as_bytes()).unwrap();
    assert_eq!(emitted.len(), 2);
    assert_eq!(summary.executions, 2);
    let (executions, _) = merged(&input);
    assert_eq!(executions.len(), 1);
    assert_eq!(executions[0].outcome, Outcome::FlakyPass);
    assert_eq!(executions[0].attempts, 2);
    assert_eq!(executions[0].duration, Some(2.0));
    assert_eq!(executions[0].failure.as_ref().unwrap().message, "flaky");
}

#[test]
fn every_form_of_skip() {
    let (executions, _) = merged(&suite(
        r#"<testcase name="a"><skipped/></testcase>
           <testcase name="b"><skipped message="not today"/></testcase>
           <testcase name="c"><skipped><![CDATA[Given a pending step]]></skipped></testcase>
           <testcase name="d" status="disabled"/>
           <testcase name="e" status="notrun"/>
           <testcase name="f" status="run" result="skipped"/>
           <testcase name="g" status="run" result="completed"/>
           <testcase name="h"><skipped type="pytest.skip" message="">why
           </skipped></testcase>"#,
    ));
    let seen: Vec<(&str, Outcome, Option<&str>)> = executions
        .iter()
        .map(|e| (e.test_id.as_str(), e.outcome, e.skip_message.as_deref()))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("s::a", Outcome::Skip, None),
            ("s::b", Outcome::Skip, Some("not today")),
            ("s::c", Outcome::Skip, Some("Given a pending step")),
            ("s::d", Outcome::Skip, Some("disabled")),
            ("s::e", Outcome::Skip, Some("notrun")),
            ("s::f", Outcome::Skip, None),
            ("s::g", Outcome::Pass, None),
            ("s::h", Outcome::Skip, Some("why")),
        ]
    );
}

#[test]
fn a_disabled_test_with_a_failure_counts_red_and_says_so() {
    let (executions, summary) = merged(&suite(
        r#"<testcase classname="Misc" name="t" status="disabled"><failure type="Test Failure">Assert failed</failure></testcase>"#,
    ));
    assert_eq!(executions[0].outcome, Outcome::Fail);
    assert_eq!(
        executions[0].failure.as_ref().unwrap().exception,
        None,
        "a placeholder type"
    );
    assert!(
        summary.warnings.iter().any(|w| w.contains("disabled")),
        "{summary:?}"
    );
}

#[test]
fn a_status_that_says_failed_without_a_failure_element_is_red() {
    let (executions, _) = merged(&suite(
        r#"<testcase name="a" status="failed"/><testcase name="b" status="errored"/>"#,
    ));
    assert_eq!(executions[0].outcome, Outcome::Fail);
    assert_eq!(executions[1].outcome, Outcome::Error);
}

#[test]
fn several_failures_keep_the_first_and_append_the_others() {
    let (executions, summary) = merged(&suite(
        r#"<testcase classname="c" name="t">
             <failure message="first" type="AssertionError" file="a.cpp" line="3">first text</failure>
             <error message="second"/>
             <failure message="third">third text</failure>
           </testcase>"#,
    ));
    let execution = &executions[0];
    assert_eq!(execution.outcome, Outcome::Fail);
    assert_eq!(execution.file.as_deref(), Some("a.cpp"));
    assert_eq!(execution.line, Some(3));
    let failure = execution.failure.as_ref().unwrap();
    assert_eq!(failure.message, "first");
    assert_eq!(failure.text, "first text\n\nsecond\n\nthird text");
    assert!(summary.warnings.iter().any(|w| w.contains("several")));
}

#[test]
fn a_failure_directly_in_a_suite_is_the_suite_s_init() {
    let (executions, summary) = merged(
        r#"<testsuite name="gda.XTest" tests="1" errors="1">
             <properties><property name="a" value="b"/> stray text </properties>
             <error message="gda/DAServer" type="java.lang.NoClassDefFoundError">java.lang.NoClassDefFoundError: gda/DAServer</error>
             <system-out><![CDATA[]]></system-out>
           </testsuite>"#,
    );
    assert_eq!(executions.len(), 1);
    assert_eq!(executions[0].test_id, "gda.XTest::<init>");
    assert_eq!(executions[0].outcome, Outcome::Error);
    let failure = executions[0].failure.as_ref().unwrap();
    assert_eq!(
        failure.exception.as_deref(),
        Some("java.lang.NoClassDefFoundError")
    );
    assert_eq!(summary.warnings.len(), 1);
}

#[test]
fn nameless_test_cases_get_a_fallback_id_and_a_warning() {
    let (executions, summary) = merged(&suite(
        r#"<testcase name="" classname="test.BeforeAllFails"><failure>x</failure></testcase>
           <testcase time="1"/>"#,
    ));
    let ids: Vec<&str> = executions.iter().map(|e| e.test_id.as_str()).collect();
    assert_eq!(ids, vec!["test.BeforeAllFails", "s"]);
    assert!(summary.warnings[0].starts_with("2 test case(s) have no name"));
}

#[test]
fn odd_times_are_unknown_never_failures() {
    let (executions, summary) = merged(&suite(
        r#"<testcase name="a" time="-345345"/>
           <testcase name="b" time="2,503.1"/>
           <testcase name="c" time="1.4e-05"/>
           <testcase name="d" time="n/a"/>
           <testcase name="e"/>"#,
    ));
    let durations: Vec<(Outcome, Option<f64>)> =
        executions.iter().map(|e| (e.outcome, e.duration)).collect();
    assert_eq!(
        durations,
        vec![
            (Outcome::Pass, None),
            (Outcome::Pass, Some(2503.1)),
            (Outcome::Pass, Some(1.4e-05)),
            (Outcome::Pass, None),
            (Outcome::Pass, None),
        ]
    );
    assert!(summary.warnings[0].starts_with("2 test case(s) have an unusable time"));
}

#[test]
fn nested_suites_properties_with_text_and_cdata_pieces() {
    let (executions, _) = merged(
        "<testsuites><testsuite name=\"a\"><testsuite name=\"b\"><testsuite name=\"c\">\
         <properties><property name=\"multiline\">\n line 1\n line 2\n</property></properties>\
         <testcase name=\"deep\"><failure><![CDATA[one ]]>\n<![CDATA[two]]>&#13;\r\nthree&amp;&#x41;</failure>\
         <system-out><![CDATA[out\r\n]]></system-out></testcase>\
         </testsuite><testcase name=\"mid\"/></testsuite></testsuite></testsuites>",
    );
    assert_eq!(executions[0].test_id, "c::deep");
    assert_eq!(
        executions[0].failure.as_ref().unwrap().text,
        "one \ntwo\r\nthree&A"
    );
    assert_eq!(executions[0].stdout.as_deref(), Some("out"));
    assert_eq!(executions[1].test_id, "b::mid");
}

#[test]
fn an_empty_testsuites_is_zero_tests() {
    let (executions, summary) = stream(b"<?xml version=\"1.0\"?>\n<testsuites/>\n").unwrap();
    assert!(executions.is_empty());
    assert_eq!(summary.executions, 0);
    assert_eq!(summary.producer, None);
}

#[test]
fn per_test_text_is_capped_while_reading() {
    let big = "x".repeat(3 * MAX_TEXT_BYTES);
    let execution = only(&suite(&format!(
        "<testcase name=\"t\"><system-out>{big}</system-out><failure>{big}</failure></testcase>"
    )));
    let stdout = execution.stdout.unwrap();
    assert!(stdout.len() < MAX_TEXT_BYTES + 64);
    assert!(stdout.ends_with(&format!(
        "[candor: {} more bytes not kept]",
        2 * MAX_TEXT_BYTES
    )));
    assert!(execution.failure.unwrap().text.len() < MAX_TEXT_BYTES + 64);
}

#[test]
fn utf16_with_a_byte_order_mark_in_both_byte_orders() {
    let xml = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<testsuite name=\"s\">\n<testcase classname=\"Ünïcode\" name=\"tëst ✓\"/>\n</testsuite>\n";
    let units: Vec<u16> = xml.encode_utf16().collect();
    let little: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(units.iter().flat_map(|u| u.to_le_bytes()))
        .collect();
    let big: Vec<u8> = [0xFE, 0xFF]
        .into_iter()
        .chain(units.iter().flat_map(|u| u.to_be_bytes()))
        .collect();
    for bytes in [little, big] {
        let (executions, _) =
            crate::results::parse_all(&bytes[..], &ParseOptions::default()).unwrap();
        assert_eq!(executions.len(), 1);
        assert_eq!(executions[0].test_id, "Ünïcode::tëst ✓");
    }
    let broken = "<testsuite>\n<testcase name=\"a\"/>\n<testcase name=\"&nope;\"/>\n</testsuite>";
    let bytes: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(broken.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let (position, message) = refusal(&bytes);
    assert_eq!(
        position,
        at(3, 17),
        "lines and UTF-8 columns of the decoded text"
    );
    assert!(message.contains("&nope;"), "{message}");
}

#[test]
fn latin1_and_windows_1252_per_the_declaration() {
    let mut bytes = b"<?xml version='1.0' encoding='ISO-8859-1'?>\n<testsuite name='caf\xE9'>\
        <testcase classname='Fran\xE7ais' name='\xE9t\xE9'><failure message='\x80 100'/></testcase></testsuite>"
        .to_vec();
    let execution = &crate::results::parse_all(&bytes[..], &ParseOptions::default())
        .unwrap()
        .0[0];
    assert_eq!(execution.test_id, "Français::été");
    // encoding_rs reads ISO-8859-1 as windows-1252, as browsers do: 0x80 is the euro sign.
    assert_eq!(execution.failure.as_ref().unwrap().message, "€ 100");
    bytes.splice(30..40, b"windows-1252".iter().copied());
    assert!(stream(&bytes).is_ok());
}

#[test]
fn a_utf8_bom_is_read_and_counted_in_line_one_columns() {
    let (executions, _) =
        stream(b"\xEF\xBB\xBF<testsuite><testcase name=\"a\"/></testsuite>").unwrap();
    assert_eq!(executions.len(), 1);
    let (position, _) = refusal(b"\xEF\xBB\xBF<bogus/>");
    assert_eq!(position, at(1, 4));
}

#[test]
fn an_unknown_declared_encoding_is_refused() {
    let (position, message) =
        refusal(b"<?xml version=\"1.0\" encoding=\"EBCDIC-klingon\"?><testsuite/>");
    assert_eq!(position, at(1, 31));
    assert!(message.contains("EBCDIC-klingon"));
}

#[test]
fn any_doctype_is_refused_where_it_starts() {
    let (position, message) = refusal(
        b"<?xml version=\"1.0\"?>\n  <!DOCTYPE testsuites SYSTEM \"http://example.invalid/x.dtd\">\n<testsuites/>",
    );
    assert_eq!(position, at(2, 3));
    assert!(message.contains("DOCTYPE"));
}

#[test]
fn the_billion_laughs_are_refused_before_any_entity_is_read() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/junit/billion-laughs.xml"
    );
    let bytes = fs_err::read(path).unwrap();
    let mut calls = 0;
    let result = crate::results::parse(&bytes[..], &ParseOptions::default(), &mut |_| {
        calls += 1;
        Ok(())
    });
    let Err(ParseError::Syntax { position, message }) = result else {
        panic!("expected a syntax error, got {result:?}");
    };
    assert_eq!(position, at(5, 1));
    assert!(message.contains("DOCTYPE"));
    assert_eq!(calls, 0, "no test case reaches the sink");

    // Without its DOCTYPE the entity is merely undefined: still refused, never expanded.
    let text = String::from_utf8(bytes).unwrap();
    let start = text.find("<!DOCTYPE").unwrap();
    let end = text.find("]>").unwrap() + 2;
    let stripped = format!("{}{}", &text[..start], &text[end..]);
    let (position, message) = refusal(stripped.as_bytes());
    assert!(message.contains("unknown entity `&lol9;`"), "{message}");
    assert_eq!(position, at(8, 38));
}

#[test]
fn raw_control_characters_are_refused_where_they_are() {
    let cases: [(&[u8], Position); 4] = [
        (b"<testsuite>\n<testcase name=\"src\x08bindings\"/></testsuite>", at(2, 20)),
        (b"<testsuite><testcase name=\"a\">\n<system-out>ok\x1b[0m</system-out></testcase></testsuite>", at(2, 15)),
        (b"<testsuite><testcase name=\"a\"><system-out><![CDATA[\x00]]></system-out></testcase></testsuite>", at(1, 52)),
        (b"<!-- \x0c --><testsuite/>", at(1, 6)),
    ];
    for (input, position) in cases {
        let (found, message) = refusal(input);
        assert_eq!(found, position, "{}", String::from_utf8_lossy(input));
        assert!(message.contains("control character"), "{message}");
    }
    // Tab, LF and CR are characters; escaped controls are the writer's deliberate choice.
    let execution = &stream(b"<testsuite>\t\r\n<testcase name=\"a\"><system-out>\x1b&#27;[0m</system-out></testcase></testsuite>")
        .map(|_| ())
        .err();
    assert!(execution.is_some(), "the raw ESC is refused");
    let (executions, _) =
        stream(b"<testsuite>\t\r\n<testcase name=\"a\"><system-out>&#27;[0m</system-out></testcase></testsuite>").unwrap();
    assert_eq!(executions[0].stdout.as_deref(), Some("\u{1b}[0m"));
}

#[test]
fn malformed_documents_are_refused_with_positions() {
    let cases: [(&[u8], Position, &str); 9] = [
        (
            b"<testsuite>\n  <testcase name=\"a\" time=\"<<computed>>\"/>\n</testsuite>",
            at(2, 28),
            "raw `<`",
        ),
        (
            b"<testsuite>\n<testcase name=\"a\">\n<system-out><![CDATA[cut",
            at(3, 13),
            "CDATA",
        ),
        (
            b"<testsuites>\n  <testsuite>\n    <testcase name=\"a\">",
            at(3, 24),
            "<testcase> (opened at 3:5)",
        ),
        (b"<testsuite>\n</testsuites>", at(2, 1), "</testsuites>"),
        (b"<testsuite/>\n<testsuite/>", at(2, 1), "second root"),
        (b"<testsuite/>\ntrailing", at(1, 13), "outside the root"),
        (
            b"<testsuite><testcase name=\"a\" name=\"b\"/></testsuite>",
            at(1, 31),
            "twice",
        ),
        (
            b"<testsuite>\n<testcase>a &oops; b</testcase></testsuite>",
            at(2, 13),
            "&oops;",
        ),
        (b"<!-- only a comment -->\n", at(2, 1), "no root element"),
    ];
    for (input, position, fragment) in cases {
        let (found, message) = refusal(input);
        assert_eq!(found, position, "{}", String::from_utf8_lossy(input));
        assert!(message.contains(fragment), "{message}");
    }
}

#[test]
fn foreign_roots_are_not_results_and_named() {
    let cases: [(&[u8], &str); 6] = [
        (b"<?xml version=\"1.0\"?>\n<TestRun xmlns=\"http://microsoft.com/schemas/VisualStudio/TeamTest/2010\"/>", "TRX"),
        (b"<test-run id=\"2\"/>", "NUnit 3"),
        (b"<Site BuildName=\"x\"/>", "CTest"),
        (b"<robot generator=\"Robot 3.2.2\"/>", "Robot Framework"),
        (b"<?xml version='1.0'?><?xml-stylesheet href=\"x.xsl\"?>\n<Result/>", "Android CTS"),
        (b"<bogus>text</bogus>", "root element <bogus> is not a JUnit report"),
    ];
    for (input, fragment) in cases {
        match stream(input) {
            Err(ParseError::NotResults { message, .. }) => {
                assert!(message.contains(fragment), "{message}");
            }
            other => panic!("expected NotResults, got {other:?}"),
        }
    }
}

#[test]
fn producers_and_their_ids() {
    let cases = [
        (
            "<testsuites><testsuite name=\"pytest\"><testcase classname=\"tests.x.test_y.TestC\" name=\"test_z[p]\"/></testsuite></testsuites>",
            "pytest",
            "tests/x/test_y.py::TestC::test_z[p]",
        ),
        (
            "<testsuites name=\"nextest-run\"><testsuite name=\"fixture-project::basic\"><testcase classname=\"fixture-project::basic\" name=\"test_cwd\"/></testsuite></testsuites>",
            "nextest",
            "fixture-project::basic::test_cwd",
        ),
        (
            "<testsuites><testsuite name=\"package/name\"><properties><property name=\"go.version\" value=\"1.0\"/></properties><testcase classname=\"package/name\" name=\"TestOne/sub\"/></testsuite></testsuites>",
            "go-junit-report",
            "package/name::TestOne/sub",
        ),
        (
            "<testsuites name=\"Mocha Tests\"><testsuite name=\"Window\"><testcase classname=\"cy.window()\" name=\"Window cy.window()\"/></testsuite></testsuites>",
            "mocha",
            "Window cy.window()",
        ),
        (
            "<testsuites id=\"\" name=\"\"><testsuite name=\"a.spec.ts\" hostname=\"firefox\"><testcase classname=\"a.spec.ts\" name=\"works\"/></testsuite></testsuites>",
            "playwright",
            "[firefox] a.spec.ts::works",
        ),
        (
            "<testsuites name=\"jest tests\"><testsuite name=\"src/a.test.js\"><testcase classname=\"\" name=\"adds\"/></testsuite></testsuites>",
            "jest-junit",
            "src/a.test.js::adds",
        ),
    ];
    for (input, producer, id) in cases {
        let (executions, summary) = merged(input);
        assert_eq!(summary.producer.as_deref(), Some(producer), "{input}");
        assert_eq!(executions[0].test_id, id);
    }
}

/// Issue #20 item 5 (corpus B): mocha's built-in xunit reporter writes the suite path in
/// `classname` and the title in `name`. Two tests with the same title in different suites
/// are two tests, each under its full title, as mocha-junit-reporter names them.
#[test]
fn mocha_xunit_ids_keep_the_suite_path() {
    let xunit = concat!(
        "<testsuite name=\"Mocha Tests\" tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\">",
        "<testcase classname=\"bibtexParser\" name=\"should throw SyntaxError\" time=\"0\"/>",
        "<testcase classname=\"latexParser\" name=\"should throw SyntaxError\" time=\"0\">",
        "<failure>expected [Function] to throw SyntaxError</failure></testcase>",
        "<testcase classname=\"\" name=\"top-level test\" time=\"0\"/>",
        "</testsuite>"
    );
    let (executions, summary) = merged(xunit);
    assert_eq!(summary.producer.as_deref(), Some("mocha-xunit"));
    let ids: Vec<(&str, u32)> = executions
        .iter()
        .map(|e| (e.test_id.as_str(), e.attempts))
        .collect();
    assert_eq!(
        ids,
        [
            ("bibtexParser should throw SyntaxError", 1),
            ("latexParser should throw SyntaxError", 1),
            ("top-level test", 1),
        ]
    );
    // The same test through mocha-junit-reporter gets the same id.
    let reporter = "<testsuites name=\"Mocha Tests\"><testsuite name=\"latexParser\"><testcase classname=\"should throw SyntaxError\" name=\"latexParser should throw SyntaxError\"/></testsuite></testsuites>";
    let (executions, summary) = merged(reporter);
    assert_eq!(summary.producer.as_deref(), Some("mocha"));
    assert_eq!(
        executions[0].test_id,
        "latexParser should throw SyntaxError"
    );
}

#[test]
fn absolute_pytest_files_are_made_relative_to_the_repository() {
    let input = "<testsuite name=\"pytest\"><testcase classname=\"tests.test_order.TestOrder\" name=\"test_a\" file=\"/home/ci/repo/tests/test_order.py\"/></testsuite>";
    let options = ParseOptions {
        repo_root: Some("/home/ci/repo".into()),
        ..ParseOptions::default()
    };
    let (executions, _) = crate::results::parse_all(input.as_bytes(), &options).unwrap();
    assert_eq!(
        executions[0].test_id,
        "tests/test_order.py::TestOrder::test_a"
    );
    assert_eq!(
        executions[0].file.as_deref(),
        Some("/home/ci/repo/tests/test_order.py")
    );
}

/// One generated test case: its name pieces and what happened.
#[derive(Debug, Clone)]
struct Generated {
    classname: String,
    name: String,
    outcome: Outcome,
    message: String,
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\n', "&#10;")
}

fn generated_case() -> impl Strategy<Value = Generated> {
    let outcome = prop_oneof![
        Just(Outcome::Pass),
        Just(Outcome::Fail),
        Just(Outcome::Error),
        Just(Outcome::Skip),
        Just(Outcome::FlakyPass),
    ];
    (
        "[a-z][a-zA-Z0-9_.]{0,12}",
        "[a-zA-Z0-9_<>&\"'é✓\\[\\]-][a-zA-Z0-9_ <>&\"'é✓\\[\\]-]{0,15}",
        outcome,
        "[a-zA-Z0-9<>&\"'][a-zA-Z0-9 <>&\"']{0,22}[a-zA-Z0-9<>&\"']",
    )
        .prop_map(|(classname, name, outcome, message)| Generated {
            classname,
            name,
            outcome,
            message,
        })
}

fn render(cases: &[Generated]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"g\">\n",
    );
    for case in cases {
        let child = match case.outcome {
            Outcome::Pass => String::new(),
            Outcome::Fail => format!("<failure message=\"{}\"/>", escape(&case.message)),
            Outcome::Error => format!(
                "<error message=\"{}\">{}</error>",
                escape(&case.message),
                escape(&case.message)
            ),
            Outcome::Skip => "<skipped/>".to_owned(),
            Outcome::FlakyPass => format!("<flakyFailure message=\"{}\"/>", escape(&case.message)),
        };
        let _ = writeln!(
            xml,
            "<testcase classname=\"{}\" name=\"{}\" time=\"0.5\">{child}</testcase>",
            escape(&case.classname),
            escape(&case.name)
        );
    }
    xml.push_str("</testsuite>\n</testsuites>\n");
    xml
}

proptest! {
    #![proptest_config(crate::test_support::proptest_config(128))]

    #[test]
    fn generated_reports_read_back_case_by_case(cases in proptest::collection::vec(generated_case(), 0..24)) {
        let xml = render(&cases);
        let (executions, summary) = stream(xml.as_bytes()).unwrap();
        prop_assert_eq!(summary.executions as usize, cases.len());
        for (case, execution) in cases.iter().zip(&executions) {
            // A classname equal to the name is said once.
            let id = if case.classname == case.name {
                case.name.clone()
            } else {
                format!("{}::{}", case.classname, case.name)
            };
            prop_assert_eq!(&execution.test_id, &id);
            prop_assert_eq!(execution.outcome, case.outcome);
            prop_assert_eq!(execution.duration, Some(0.5));
            if matches!(case.outcome, Outcome::Fail | Outcome::Error | Outcome::FlakyPass) {
                prop_assert_eq!(&execution.failure.as_ref().unwrap().message, &case.message);
            }
        }
    }

    #[test]
    fn line_numbers_read_as_the_integer_parser_reads_them(raw in "[ 0-9+a\u{a0}-]{0,12}") {
        prop_assert_eq!(super::tag::parse_line(&raw), raw.trim().parse().ok());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = stream(&bytes);
    }

    #[test]
    fn truncated_reports_are_refused_not_misread(cases in proptest::collection::vec(generated_case(), 1..8), cut in 0.0..1.0f64) {
        let xml = render(&cases);
        let end = xml.trim_end().len();
        let mut at = (end as f64 * cut) as usize;
        while !xml.is_char_boundary(at) {
            at -= 1;
        }
        prop_assert!(stream(&xml.as_bytes()[..at]).is_err(), "cut at {}", at);
    }
}

// ---------------------------------------------------------------------------------------
// The content reader against quick-xml's events: the same documents, read both ways, must
// give the same executions, summary and refusal (message and place), whatever size the
// input buffer is.

/// One piece of text: mostly ordinary, sometimes broken in one of the ways the parser
/// refuses (or, for `]]>` and a reference-like `&#+65;`, tolerates).
fn text_atom(clean: bool) -> impl Strategy<Value = Vec<u8>> {
    let fixed = |pieces: &[&'static [u8]]| {
        proptest::sample::select(pieces.to_vec()).prop_map(<[u8]>::to_vec)
    };
    prop_oneof![
        16 => "[a-zA-Z0-9 .,:=()\\[\\]'\"/_>-]{1,12}".prop_map(String::into_bytes),
        4 => fixed(&[b"\n", b"\t", b"\r", b"\r\n", b"  ", b"\n    ", b"\r\r\n", b"\n\r"]),
        4 => fixed(&["é".as_bytes(), "✓".as_bytes(), "😀".as_bytes(), "\u{a0}".as_bytes(), "\u{3000}".as_bytes()]),
        6 => fixed(&[
            b"&lt;", b"&gt;", b"&amp;", b"&quot;", b"&apos;", b"&#10;", b"&#13;", b"&#x41;",
            b"&#27;", b"&#x1F600;", b"&#xe9;", b"&#11;", b"&#32;",
        ]),
        u32::from(!clean) => fixed(&[
            b"&", b"&bogus;", b"&;", b"&#0;", b"&#xD800;", b"&#x110000;", b"&#+65;", b"& lt;",
            b"&lt", b"&lt&gt;", b"\x01", b"\x08", b"\x0b", b"\x0c", b"\xff", b"\xe2\x82",
            b"\xc0\xaf", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"]]>",
        ]),
    ]
}

fn text_run(clean: bool, atoms: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(text_atom(clean), atoms).prop_map(|atoms| atoms.concat())
}

/// Whitespace, usually; sometimes any text.
fn between(clean: bool) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => proptest::sample::select(vec![&b""[..], b"\n", b"\n  ", b"\r\n    ", b" \t"])
            .prop_map(<[u8]>::to_vec),
        u32::from(!clean) => text_run(clean, 1..3),
    ]
}

/// An element inside a test case, with its text.
fn case_child(clean: bool) -> impl Strategy<Value = Vec<u8>> {
    let tags = proptest::sample::select(vec![
        "failure",
        "error",
        "skipped",
        "system-out",
        "system-err",
        "flakyFailure",
        "rerunError",
        "properties",
        "other",
    ]);
    (tags, text_run(clean, 0..6), text_run(clean, 0..4), 0..5u8).prop_map(
        |(tag, text, more, shape)| {
            let mut xml = format!("<{tag} message=\"m\">").into_bytes();
            xml.extend(&text);
            match shape {
                0 => {
                    xml.extend(b"<![CDATA[");
                    xml.extend(more.iter().filter(|&&b| b != b'>'));
                    xml.extend(b"]]>");
                }
                1 => {
                    xml.extend(b"<stackTrace>");
                    xml.extend(&more);
                    xml.extend(b"</stackTrace>");
                }
                2 => xml.extend(b"<!-- a comment -->"),
                _ => {}
            }
            xml.extend(&more);
            xml.extend(format!("</{tag}>").as_bytes());
            xml
        },
    )
}

/// What may follow `<testcase` in a start tag: the usual attributes, then sometimes
/// ones the fast path leaves to the general one (each key at most once), and in documents
/// that are not clean, ones that make the tag malformed.
fn case_attributes(clean: bool) -> impl Strategy<Value = String> {
    let unusual = proptest::sample::subsequence(
        vec![
            " line=\"12\"",
            " file=\"tests/test_k.py\"",
            " status=\"skipped\"",
            " result=\"suppressed\"",
            " a=\"x>y\"",
            " b='say \"hi\"'",
            " c=\"&amp;\"",
            "\td=\"tab\"",
            " e = \"spaced\"",
            " names=\"x\"",
            " filename=\"f.py\"",
            " classnames=\"x\"",
            "  f=\"two spaces\"",
            " g='single'",
            " h=\"1\"",
        ],
        0..4,
    );
    let time = proptest::sample::select(vec![
        " time=\"0.5\"",
        " time=\"\"",
        " time=\"-3\"",
        " time=\"1,5\"",
        " time='1.5'",
        " time=\"x\"",
    ]);
    let broken = proptest::sample::select(vec![
        "",
        " a=\"b\" a=\"c\"",
        " name=\"again\"",
        " classname=\"again\"",
        " a=\"unclosed",
        " a=\"x<y\"",
        " a=\"\u{1}\"",
        " weird",
        " ",
    ]);
    (
        0..1000u32,
        0..120u8,
        time,
        unusual,
        proptest::collection::vec(broken, if clean { 0..1 } else { 0..3 }),
    )
        .prop_flat_map(|(number, present, time, unusual, broken)| {
            // Each usual attribute is there in most tags, missing from some.
            let mut attributes = Vec::new();
            if present % 8 != 0 {
                attributes.push(format!(" name=\"t{number}\""));
            }
            if present % 5 != 0 {
                attributes.push(" classname=\"c.K\"".to_owned());
            }
            if present % 3 != 0 {
                attributes.push(time.to_owned());
            }
            attributes.extend(unusual.iter().map(|attribute| (*attribute).to_owned()));
            attributes.extend(broken.iter().map(|attribute| (*attribute).to_owned()));
            // In any order: the fast path reads known keys wherever they are.
            Just(attributes).prop_shuffle()
        })
        .prop_map(|attributes| attributes.concat())
}

fn case_element(clean: bool) -> impl Strategy<Value = Vec<u8>> {
    (
        case_attributes(clean),
        proptest::collection::vec((between(clean), case_child(clean)), 0..4),
        between(clean),
        any::<bool>(),
    )
        .prop_map(|(attributes, children, last, empty)| {
            let open = format!("<testcase{attributes}");
            if empty && children.is_empty() {
                return format!("{open}/>").into_bytes();
            }
            let mut xml = format!("{open}>").into_bytes();
            for (space, child) in children {
                xml.extend(space);
                xml.extend(child);
            }
            xml.extend(last);
            xml.extend(b"</testcase>");
            xml
        })
}

fn suite_part(clean: bool) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        12 => case_element(clean),
        1 => text_run(clean, 0..4).prop_map(|text| {
            let mut xml = b"<properties><property name=\"go.version\" value=\"go1.22\">".to_vec();
            xml.extend(text);
            xml.extend(b"</property></properties>");
            xml
        }),
        1 => text_run(clean, 0..4).prop_map(|text| {
            let mut xml = b"<system-out>".to_vec();
            xml.extend(text);
            xml.extend(b"</system-out>");
            xml
        }),
        1 => text_run(clean, 0..4).prop_map(|text| {
            let mut xml = b"<error message=\"class failed\">".to_vec();
            xml.extend(text);
            xml.extend(b"</error>");
            xml
        }),
    ]
}

/// A whole document, sometimes with a byte-order mark or as UTF-16, with text of every
/// kind before, between and after its elements. A `clean` one has nothing the parser
/// refuses, so that half the documents are read to the end.
fn document(clean: bool) -> impl Strategy<Value = Vec<u8>> {
    (
        any::<bool>(),
        between(clean),
        proptest::collection::vec((between(clean), suite_part(clean)), 0..12),
        between(clean),
        between(clean),
        0..6u8,
    )
        .prop_map(|(declared, prolog, parts, last, epilog, wrapping)| {
            let mut xml = Vec::new();
            if declared {
                xml.extend(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
            }
            xml.extend(prolog);
            xml.extend(b"<testsuites>\n<testsuite name=\"s\">");
            for (space, part) in parts {
                xml.extend(space);
                xml.extend(part);
            }
            xml.extend(last);
            xml.extend(b"</testsuite>\n</testsuites>");
            xml.extend(epilog);
            match (wrapping, String::from_utf8(xml)) {
                (0, Ok(text)) => {
                    let mut utf16 = vec![0xFF, 0xFE];
                    utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
                    utf16
                }
                (1, Ok(text)) => [&b"\xEF\xBB\xBF"[..], text.as_bytes()].concat(),
                (_, Ok(text)) => text.into_bytes(),
                (_, Err(error)) => error.into_bytes(),
            }
        })
}

/// The parse of `input` with `reading`, written out in full for comparison.
fn read_with(input: &[u8], reading: super::Reading) -> String {
    let mut executions = Vec::new();
    let result = super::read(
        input,
        &ParseOptions::default(),
        &mut |execution| {
            executions.push(execution);
            Ok(())
        },
        reading,
    );
    format!("{result:#?}\n{executions:#?}")
}

proptest! {
    #![proptest_config(crate::test_support::proptest_config(2048))]

    #[test]
    fn text_read_by_the_content_reader_is_read_as_quick_xml_events_read_it(
        (whole, cut) in any::<bool>().prop_flat_map(|clean| (
            document(clean),
            prop_oneof![3 => Just(None), u32::from(!clean) => (0.0..1.0f64).prop_map(Some)],
        )),
        buffer_bytes in prop_oneof![4..48usize, Just(super::source::BUFFER_BYTES)],
    ) {
        // Sometimes cut short anywhere, inside a character or a reference too.
        let xml = &whole[..cut.map_or(whole.len(), |cut| (whole.len() as f64 * cut) as usize)];
        // quick-xml's events and the general path for every test case, against the
        // content reader with the fast path for passing test cases.
        let events = read_with(
            xml,
            super::Reading { own_text: false, fast_cases: false, buffer_bytes },
        );
        let content = read_with(xml, super::Reading { own_text: true, fast_cases: true, buffer_bytes });
        prop_assert_eq!(content, events, "{}", String::from_utf8_lossy(xml));
    }
}

/// The shared corpus, found as `tests/it/support/corpus.rs` finds it; `None` (with a printed
/// line) when a clone has none beside it, and a failure under CI, which must run this.
fn corpus_dir(test: &str) -> Option<std::path::PathBuf> {
    let dir: std::path::PathBuf = match std::env::var_os(crate::env_vars::EnvVars::CANDOR_CORPUS) {
        Some(dir) => dir.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/results"),
    };
    if dir.join("MANIFEST.tsv").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var_os(crate::env_vars::EnvVars::CI).is_none(),
        "{test}: no shared corpus at {}; CI must run the corpus tests",
        dir.display()
    );
    // Past the harness's capture, so the skip is seen.
    let line = format!("skipped {test}: no shared corpus at {}\n", dir.display());
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    None
}

#[test]
fn every_corpus_xml_file_reads_the_same_through_the_content_reader_and_through_events() {
    let Some(root) = corpus_dir(
        "every_corpus_xml_file_reads_the_same_through_the_content_reader_and_through_events",
    ) else {
        return;
    };
    let manifest = fs_err::read_to_string(root.join("MANIFEST.tsv")).expect("the corpus manifest");
    let mut compared = 0;
    for line in manifest
        .lines()
        .skip(1)
        .filter(|line| !line.trim().is_empty())
    {
        let file = line.split('\t').next().unwrap_or_default();
        let bytes = fs_err::read(root.join(file)).expect("a manifest file");
        if crate::results::detect(&bytes).ok() != Some(crate::results::Format::Junit) {
            continue;
        }
        for buffer_bytes in [super::source::BUFFER_BYTES, 61, 5] {
            let events = read_with(
                &bytes,
                super::Reading {
                    own_text: false,
                    fast_cases: false,
                    buffer_bytes,
                },
            );
            let content = read_with(
                &bytes,
                super::Reading {
                    own_text: true,
                    fast_cases: true,
                    buffer_bytes,
                },
            );
            assert_eq!(content, events, "{file} with a buffer of {buffer_bytes}");
        }
        compared += 1;
    }
    assert!(compared > 140, "only {compared} XML files in the corpus");
}

#[test]
fn known_attributes_are_only_the_five_keys_with_their_spelling() {
    use super::tag::{known_attribute, slot};
    let cases: [(&str, Option<(usize, usize)>); 12] = [
        (" name=\"t\"", Some((slot::NAME, 4))),
        (" classname=\"c\"", Some((slot::CLASSNAME, 9))),
        (" file=\"f\"", Some((slot::FILE, 4))),
        (" time=\"1\"", Some((slot::TIME, 4))),
        (" line=\"12\"", Some((slot::LINE, 4))),
        (" names=\"t\"", None),
        (" classnames=\"c\"", None),
        (" name='t'", None),
        (" name =\"t\"", None),
        ("  name=\"t\"", None),
        ("\tname=\"t\"", None),
        // Fewer than eight bytes after the space: left to the general step.
        (" line=\"", None),
    ];
    for (attribute, expected) in cases {
        assert_eq!(
            known_attribute(attribute.as_bytes(), 0),
            expected,
            "{attribute}"
        );
    }
}
