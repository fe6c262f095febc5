//! Frames, failing frames, exceptions and messages of each language, on traces written by
//! hand and generated ones.

use super::message::{TextReading, looks_like_type, split_type_prefix, strip_type_prefix};
use super::python::{
    CPYTHON_FRAME, PYTEST_LOCATION, PYTHON_CHAIN_SEPARATORS, PYTHON_DEF, PYTHON_EXCEPTION_LINE,
    PytestLocation, lines, pytest_e_line, pytest_location, python_def, python_read,
};
use super::*;
use proptest::prelude::*;

fn options(root: Option<&str>) -> ParseOptions {
    ParseOptions {
        repo_root: root.map(str::to_owned),
        ..ParseOptions::default()
    }
}

fn failing(failure: &Failure) -> Option<String> {
    failure.failing_frame.as_ref().map(Frame::location)
}

#[test]
fn pytest_long_report_with_junit_message() {
    let text = "def test_which_fails():\n        event = { 'attr': 'test'}\n>       assert event['attr'] == 'xyz'\nE       AssertionError: assert 'test' == 'xyz'\nE         - xyz\nE         + test\n\npython/test_sample.py:10: AssertionError";
    let failure = build_failure(
        None,
        Some("AssertionError: assert 'test' == 'xyz'\n  - xyz\n  + test".into()),
        text.into(),
        Language::Python,
        &options(None),
    );
    assert_eq!(failure.exception.as_deref(), Some("AssertionError"));
    assert_eq!(failure.message, "assert 'test' == 'xyz'");
    assert_eq!(
        failing(&failure).as_deref(),
        Some("python/test_sample.py:10")
    );
    assert_eq!(
        failure.frames[0].function.as_deref(),
        Some("test_which_fails")
    );
}

#[test]
fn pytest_message_without_type_gets_type_from_location_line() {
    let text = "def test_always_fail():\n        > assert False\n        E assert False\n\n        tests/test_lib.py:25: AssertionError\n      ";
    let failure = build_failure(
        None,
        Some("assert False".into()),
        text.into(),
        Language::Python,
        &options(None),
    );
    assert_eq!(failure.exception.as_deref(), Some("AssertionError"));
    assert_eq!(failure.message, "assert False");
    assert_eq!(failing(&failure).as_deref(), Some("tests/test_lib.py:25"));
}

#[test]
fn cpython_traceback_is_reversed_and_relativized() {
    let text = "Traceback (most recent call last):\n  File \"/repo/tests/test_x.py\", line 10, in test_f\n    foo()\n  File \"/repo/src/x.py\", line 5, in foo\n    raise ValueError(\"bad 42\")\n  File \"/usr/lib/python3.12/json/__init__.py\", line 346, in loads\n    return _default_decoder.decode(s)\nValueError: bad 42\n";
    let failure = build_failure(
        None,
        None,
        text.into(),
        Language::Python,
        &options(Some("/repo/")),
    );
    assert_eq!(failure.exception.as_deref(), Some("ValueError"));
    assert_eq!(failure.message, "bad 42");
    assert_eq!(failure.frames.len(), 3);
    assert_eq!(
        failure.frames[0].file,
        "/usr/lib/python3.12/json/__init__.py"
    );
    assert_eq!(failing(&failure).as_deref(), Some("src/x.py:5"));
    assert_eq!(failure.frames[2].location(), "tests/test_x.py:10");
}

#[test]
fn rust_old_and_new_panics() {
    let old = "thread 'tests::fails' panicked at 'assertion failed: `(left == right)`\n  left: `4`,\n right: `3`', src/lib.rs:10:9\nnote: Run with `RUST_BACKTRACE=1` for a backtrace.\n";
    let failure = build_failure(None, None, old.into(), Language::Rust, &options(None));
    assert_eq!(failure.exception.as_deref(), Some("panic"));
    assert_eq!(failure.message, "assertion failed: `(left == right)`");
    assert_eq!(failing(&failure).as_deref(), Some("src/lib.rs:10"));

    let new = "thread 'basic::t' panicked at tests/basic.rs:19:5:\nassertion `left == right` failed\n  left: 1\n right: 2\n";
    let failure = build_failure(None, None, new.into(), Language::Rust, &options(None));
    assert_eq!(failure.message, "assertion `left == right` failed");
    assert_eq!(failing(&failure).as_deref(), Some("tests/basic.rs:19"));
}

#[test]
fn vague_runner_type_yields_to_the_panic() {
    let text = "thread 'tests::fails' panicked at 'boom', src\\lib.rs:3:1\n";
    let failure = build_failure(
        Some("cargo test".into()),
        Some("failed tests::fails".into()),
        text.into(),
        Language::Rust,
        &options(None),
    );
    assert_eq!(failure.exception.as_deref(), Some("panic"));
    assert_eq!(failure.message, "boom");
    assert_eq!(failing(&failure).as_deref(), Some("src/lib.rs:3"));
}

#[test]
fn go_log_lines_give_message_without_type() {
    let text = "=== RUN   TestOne\n    main_test.go:6: Error message\n    main_test.go:7: Longer\n        error\n--- FAIL: TestOne (0.00s)\n";
    let failure = build_failure(None, None, text.into(), Language::Go, &options(None));
    assert_eq!(failure.exception, None);
    assert_eq!(failure.message, "Error message");
    assert_eq!(failing(&failure).as_deref(), Some("main_test.go:6"));
}

#[test]
fn go_panic_skips_goroot_and_testmain() {
    let text = "panic: boom [recovered]\n\tpanic: boom\n\ngoroutine 7 [running]:\ntesting.tRunner.func1.2({0x5f8a40, 0x6c9f70})\n\t/usr/local/go/src/testing/testing.go:1545 +0x238\nexample.com/m.TestPanic(0x0?)\n\t/home/u/m/m_test.go:8 +0x1d\nmain.main()\n\t_testmain.go:47 +0x2e4\n";
    let failure = build_failure(
        None,
        None,
        text.into(),
        Language::Go,
        &options(Some("/home/u/m")),
    );
    assert_eq!(failure.exception.as_deref(), Some("panic"));
    assert_eq!(failure.message, "boom");
    assert_eq!(failing(&failure).as_deref(), Some("m_test.go:8"));
    assert_eq!(
        failure.frames[1].function.as_deref(),
        Some("example.com/m.TestPanic")
    );
}

#[test]
fn java_caused_by_and_foreign_packages() {
    let text = "java.lang.AssertionError: unexpected type\n\tat org.junit.Assert.fail(Assert.java:89)\n\tat action.calc.CalcUtilsTest.test error handling(CalcUtilsTest.kt:27)\n\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\nCaused by: java.lang.IllegalArgumentException: Amount\n\tat action.calc.CalcUtilsTest.scale(CalcUtilsTest.kt:31)\n\t... 12 more\n";
    let failure = build_failure(None, None, text.into(), Language::Java, &options(None));
    assert_eq!(
        failure.exception.as_deref(),
        Some("java.lang.AssertionError")
    );
    assert_eq!(failure.message, "unexpected type");
    assert_eq!(failing(&failure).as_deref(), Some("CalcUtilsTest.kt:27"));
    assert_eq!(failure.frames.len(), 4);
    assert_eq!(failure.frames[2].line, None);
}

#[test]
fn javascript_jest_and_node_assert() {
    let text = "Error: expect(received).toBeTruthy()\n\nReceived: false\n    at Object.<anonymous> (C:\\work\\app\\__tests__\\main.test.js:10:21)\n    at Object.asyncJestTest (C:\\work\\app\\node_modules\\jest-jasmine2\\build\\jasmineAsyncInstall.js:106:37)\n    at new Promise (<anonymous>)\n    at processTicksAndRejections (internal/process/task_queues.js:97:5)";
    let failure = build_failure(
        None,
        None,
        text.into(),
        Language::JavaScript,
        &options(Some("C:\\work\\app")),
    );
    assert_eq!(failure.exception.as_deref(), Some("Error"));
    assert_eq!(failure.message, "expect(received).toBeTruthy()");
    assert_eq!(
        failing(&failure).as_deref(),
        Some("__tests__/main.test.js:10")
    );
    assert_eq!(failure.frames.len(), 3);

    let node = "AssertionError [ERR_ASSERTION]: 1 == 2\n    at async run (file:///home/u/app/test/a.test.mjs:4:3)\n    at node:internal/test_runner/test:1:1";
    let failure = build_failure(
        None,
        None,
        node.into(),
        Language::JavaScript,
        &options(Some("/home/u/app")),
    );
    assert_eq!(failure.exception.as_deref(), Some("AssertionError"));
    assert_eq!(failure.message, "1 == 2");
    assert_eq!(failing(&failure).as_deref(), Some("test/a.test.mjs:4"));
}

/// #20 leftover: node's junit reporter writes the kind of failure as the `type` and what
/// the test threw as the wrapper's `cause:` (bare, or the wrapper in brackets when it
/// has no stack); a failure that threw nothing keeps node's kind and message.
#[test]
fn node_junit_failures_name_the_cause_not_the_failure_kind() {
    let bracketed = "[Error [ERR_TEST_FAILURE]: Cannot read properties of null (reading 'length')] {\n  code: 'ERR_TEST_FAILURE',\n  failureType: 'testCodeFailure',\n  cause: TypeError [Error]: Cannot read properties of null (reading 'length')\n      at TestContext.<anonymous> (/repo/t.test.js:4:26)\n      at Test.run (node:internal/test_runner/test:796:25)\n}";
    let failure = build_failure(
        Some("testCodeFailure".into()),
        Some("Cannot read properties of null (reading 'length')".into()),
        bracketed.into(),
        Language::JavaScript,
        &options(Some("/repo")),
    );
    assert_eq!(failure.exception.as_deref(), Some("TypeError"));
    assert_eq!(
        failure.message,
        "Cannot read properties of null (reading 'length')"
    );
    assert_eq!(failing(&failure).as_deref(), Some("t.test.js:4"));
    let bare = "Error [ERR_TEST_FAILURE]: 1 == 2\n    at async Promise.all (index 0) {\n  code: 'ERR_TEST_FAILURE',\n  failureType: 'testCodeFailure',\n  cause: AssertionError [ERR_ASSERTION]: 1 == 2\n      at TestContext.<anonymous> (/repo/t.test.js:9:3) {\n    code: 'ERR_ASSERTION'\n  }\n}";
    let failure = build_failure(
        Some("testCodeFailure".into()),
        None,
        bare.into(),
        Language::JavaScript,
        &options(Some("/repo")),
    );
    assert_eq!(failure.exception.as_deref(), Some("AssertionError"));
    assert_eq!(failure.message, "1 == 2");
    let timeout = "[Error [ERR_TEST_FAILURE]: test timed out after 50ms] { code: 'ERR_TEST_FAILURE', failureType: 'testTimeoutFailure', cause: 'test timed out after 50ms' }";
    let failure = build_failure(
        Some("testTimeoutFailure".into()),
        Some("test timed out after 50ms".into()),
        timeout.into(),
        Language::JavaScript,
        &options(None),
    );
    assert_eq!(failure.exception.as_deref(), Some("testTimeoutFailure"));
    assert_eq!(failure.message, "test timed out after 50ms");
}

#[test]
fn unknown_language_is_guessed() {
    let text = "java.lang.IllegalStateException: nope\n\tat com.acme.Foo.bar(Foo.java:42)\n";
    let failure = build_failure(None, None, text.into(), Language::Unknown, &options(None));
    assert_eq!(
        failure.exception.as_deref(),
        Some("java.lang.IllegalStateException")
    );
    assert_eq!(failing(&failure).as_deref(), Some("Foo.java:42"));
}

#[test]
fn a_wrong_language_falls_back_to_the_guessed_one() {
    let text = "java.lang.IllegalStateException: nope\n\tat com.acme.Foo.bar(Foo.java:42)\n";
    let failure = build_failure(None, None, text.into(), Language::Python, &options(None));
    assert_eq!(failure.frames.len(), 1);
    assert_eq!(failing(&failure).as_deref(), Some("Foo.java:42"));
}

#[test]
fn messages_are_one_capped_line() {
    let long = "x".repeat(MAX_MESSAGE_CHARS * 2);
    let failure = build_failure(
        Some("Boom".into()),
        Some(format!("\n  {long}\nsecond")),
        String::new(),
        Language::Unknown,
        &options(None),
    );
    assert_eq!(failure.message.chars().count(), MAX_MESSAGE_CHARS + 1);
    assert!(!failure.message.contains('\n'));
}

/// The Python reading as it was before [`python_read`] merged its two passes: the
/// oracle the merged pass is compared with.
fn two_pass_frames(text: &str) -> Vec<Frame> {
    let mut blocks: Vec<Vec<Frame>> = vec![Vec::new()];
    let mut last_def: Option<String> = None;
    for line in lines(text) {
        let trimmed = line.trim();
        if PYTHON_CHAIN_SEPARATORS.contains(&trimmed) {
            blocks.push(Vec::new());
            last_def = None;
            continue;
        }
        let Some(block) = blocks.last_mut() else {
            continue;
        };
        if let Some(caps) = CPYTHON_FRAME.captures(line) {
            block.push(frame(
                &caps[1],
                line_number(&caps[2]),
                caps.get(3).map(|m| m.as_str()),
            ));
        } else if let Some(location) = pytest_location(line) {
            let trailer = location.trailer.unwrap_or_default();
            let function = match trailer.strip_prefix("in ") {
                Some(function) => Some(function.to_owned()),
                None => last_def.take(),
            };
            block.push(frame(
                location.path,
                line_number(location.line),
                function.as_deref(),
            ));
            last_def = None;
        } else if let Some(name) = python_def(line) {
            last_def = Some(name.to_owned());
        }
    }
    blocks
        .into_iter()
        .rev()
        .flat_map(|block| block.into_iter().rev())
        .collect()
}

fn two_pass_exception(text: &str) -> TextReading {
    // The location line closing pytest's report names the type: `x.py:10: ValueError`.
    let mut from_location: Option<String> = None;
    let mut first_e_line: Option<&str> = None;
    let mut typed_e_line: Option<(String, String)> = None;
    let mut cpython_final: Option<(String, String)> = None;
    let mut after_cpython_frame = false;
    for line in lines(text) {
        if let Some(location) = pytest_location(line) {
            let trailer = location.trailer.unwrap_or_default();
            if !trailer.starts_with("in ")
                && let Some((kind, _)) = split_type_prefix(trailer, Language::Python)
            {
                from_location = Some(kind);
            }
            continue;
        }
        if let Some(content) = pytest_e_line(line) {
            // `E = 5` is source code that happens to start with `E`, not pytest's marker.
            if content.starts_with('=') {
                continue;
            }
            if first_e_line.is_none() && !content.is_empty() {
                first_e_line = Some(content);
            }
            if typed_e_line.is_none()
                && let Some(split) = split_type_prefix(content, Language::Python)
            {
                typed_e_line = Some(split);
            }
            continue;
        }
        if CPYTHON_FRAME.is_match(line) {
            after_cpython_frame = true;
            continue;
        }
        if after_cpython_frame
            && !line.starts_with(char::is_whitespace)
            && let Some(caps) = PYTHON_EXCEPTION_LINE.captures(line)
            && looks_like_type(&caps[1])
        {
            let message = caps.get(2).map_or("", |m| m.as_str()).to_owned();
            cpython_final = Some((caps[1].to_owned(), message));
            after_cpython_frame = false;
        }
    }
    let exception = from_location
        .or_else(|| typed_e_line.as_ref().map(|(kind, _)| kind.clone()))
        .or_else(|| cpython_final.as_ref().map(|(kind, _)| kind.clone()));
    let message = match first_e_line {
        Some(line) => Some(strip_type_prefix(line, exception.as_deref()).to_owned()),
        None => cpython_final.map(|(_, message)| message),
    };
    TextReading { exception, message }
}

/// Lines of Python tracebacks (pytest's long and short reports, CPython's, chained
/// ones) and lines that come close to them.
fn python_line() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(vec![
            "tests/test_a.py:10: in test_x",
            "src/app/client.py:117: ",
            "src/app/client.py:117: ValueError",
            "tests/test_a.py:3: AssertionError: assert 1 == 2",
            "x.py:1:",
            "C:\\w\\t.py:4: in f",
            "  File \"/usr/lib/python3.12/a.py\", line 3, in f",
            "  File \"tests/t.py\", line 9",
            "File \"x.py:1: y\", line 2",
            "    def test_x(self, client):",
            "    async def helper():",
            "def é(x):",
            "\u{a0}def f(x):",
            "\u{3000}E   AssertionError: x",
            "\u{85}During handling of the above exception, another exception occurred:",
            "\u{b}E  x",
            "\t\u{c}async  def g (",
            "E   AssertionError: assert 1 == 2",
            "E       assert 1",
            "E        +  where 503 = <Response [503]>.status_code",
            "E = 5",
            "E",
            "ValueError: bad value",
            "pkg.errors.Boom",
            "Traceback (most recent call last):",
            "During handling of the above exception, another exception occurred:",
            "  The above exception was the direct cause of the following exception:  ",
            "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",
            ">       result = client.post(\"/api\")",
            "",
            "    ",
        ])
        .prop_map(str::to_owned),
        "[a-zA-Z_ .:/=>E]{0,24}",
    ]
}

proptest! {
    #![proptest_config(crate::test_support::proptest_config(384))]

    #[test]
    fn python_is_read_in_one_pass_as_it_was_in_two(
        lines in proptest::collection::vec(python_line(), 0..40),
        crlf in any::<bool>(),
    ) {
        let text = lines.join(if crlf { "\r\n" } else { "\n" });
        let (frames, reading) = python_read(&text);
        let oracle = two_pass_exception(&text);
        prop_assert_eq!(frames, two_pass_frames(&text));
        prop_assert_eq!(reading.exception, oracle.exception);
        prop_assert_eq!(reading.message, oracle.message);
    }

    #[test]
    fn build_failure_never_panics(
        pieces in proptest::collection::vec(
            prop_oneof![
                Just("  File \"".to_owned()),
                Just("\", line ".to_owned()),
                Just("panicked at '".to_owned()),
                Just("', ".to_owned()),
                Just(".rs:".to_owned()),
                Just(".py:".to_owned()),
                Just(".go:".to_owned()),
                Just("\tat ".to_owned()),
                Just("(".to_owned()),
                Just(")".to_owned()),
                Just(":".to_owned()),
                Just("\n".to_owned()),
                Just("E   ".to_owned()),
                Just("file:///".to_owned()),
                Just("C:\\".to_owned()),
                Just("❯ ".to_owned()),
                Just("stack backtrace:\n".to_owned()),
                Just("panic: ".to_owned()),
                Just("Caused by: ".to_owned()),
                "[0-9]{1,12}",
                "\\PC{0,12}",
            ],
            0..40,
        ),
        root in proptest::option::of("\\PC{0,8}"),
        language in prop_oneof![
            Just(Language::Python),
            Just(Language::Rust),
            Just(Language::Go),
            Just(Language::Java),
            Just(Language::JavaScript),
            Just(Language::Unknown),
        ],
        given in proptest::option::of("\\PC{0,20}"),
    ) {
        let text: String = pieces.concat();
        let failure = build_failure(given.clone(), given, text.clone(), language, &options(root.as_deref()));
        prop_assert!(!failure.message.contains('\n'));
        prop_assert!(failure.frames.len() <= MAX_FRAMES);
        if let Some(frame) = &failure.failing_frame {
            prop_assert!(failure.frames.contains(frame));
        }
        let _ = parse_frames(&text, language);
    }

    #[test]
    fn lines_are_std_lines(text in "[a\r\n\u{e9}]{0,12}") {
        prop_assert_eq!(lines(&text).collect::<Vec<_>>(), text.lines().collect::<Vec<_>>());
    }

    #[test]
    fn pytest_lines_read_by_hand_as_their_patterns_read_them(
        // Lines shaped like location and `E` lines, each part drawn from its likely
        // and unlikely spellings, so that many come close to matching.
        (indent, drive, path, extension, digits, trailer) in (
            prop_oneof![Just(""), Just(" "), Just("\t  "), Just("\u{a0}")],
            prop_oneof![Just(""), Just("C:\\"), Just("c:/"), Just("C:"), Just(" ")],
            "[a-zA-Z/_. :]{0,6}",
            prop_oneof![Just(".py"), Just(".pyx"), Just("py"), Just(".py.py")],
            prop_oneof!["[0-9]{1,3}", "", "\u{663}", "1a"],
            prop_oneof![
                Just(""), Just(" "), Just("\t"), Just(" in f "), Just("x"),
                Just(" \u{a0}"), Just(" a\r"), Just("\t \tE"), Just(": x"),
            ],
        ),
        e_line in "[ \t\u{a0}]{0,2}E[ \t\u{a0}=x]{0,3}[^\n]{0,4}",
        def_line in "[ \t\u{a0}]{0,2}(async[ \u{a0}]{0,2})?(def|de)[ \t\u{a0}]{0,2}[a-zA-Z_0-9é]{0,4}[ \u{a0}(]{0,2}[^\n]{0,3}",
        noise in "[^\n]{0,12}",
    ) {
        let location = format!("{indent}{drive}{path}{extension}:{digits}:{trailer}");
        let e_pattern = Regex::new(r"^\s*E\s+(.*?)\s*$").unwrap();
        for line in [&location, &e_line, &def_line, &noise] {
            let expected = PYTEST_LOCATION.pattern.captures(line).map(|caps| PytestLocation {
                path: caps.get(1).map_or("", |m| m.as_str()),
                line: caps.get(2).map_or("", |m| m.as_str()),
                trailer: caps.get(3).map(|m| m.as_str()),
            });
            prop_assert_eq!(pytest_location(line), expected, "{:?}", line);
            let expected = e_pattern
                .captures(line)
                .map(|caps| caps.get(1).map_or("", |m| m.as_str()));
            prop_assert_eq!(pytest_e_line(line), expected, "{:?}", line);
            let expected = PYTHON_DEF
                .pattern
                .captures(line)
                .map(|caps| caps.get(1).map_or("", |m| m.as_str()));
            prop_assert_eq!(python_def(line), expected, "{:?}", line);
        }
    }
}

#[test]
fn pytest_location_lines_by_hand() {
    let read = |line| pytest_location(line).map(|l| (l.path, l.line, l.trailer));
    assert_eq!(
        read("tests/test_x.py:10: AssertionError"),
        Some(("tests/test_x.py", "10", Some("AssertionError")))
    );
    assert_eq!(
        read("  C:\\src\\x.py:5:"),
        Some(("C:\\src\\x.py", "5", None))
    );
    assert_eq!(read("x.py:7: \t"), Some(("x.py", "7", Some(""))));
    assert_eq!(read("x.py:\u{663}:"), Some(("x.py", "\u{663}", None)));
    assert_eq!(read(".py:1:"), None);
    assert_eq!(read("x.py:1:x"), None);
    assert_eq!(read("a:b.py:1:"), None);
    assert_eq!(python_def("    async  def _send(self):"), Some("_send"));
    assert_eq!(python_def("def f (x)"), Some("f"));
    assert_eq!(python_def("def fé()"), Some("fé"));
    assert_eq!(python_def("def é()"), None);
    assert_eq!(python_def("asyncdef f():"), None);
    assert_eq!(python_def("def 1f():"), None);
    assert_eq!(python_def("define(x)"), None);
}
