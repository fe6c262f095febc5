//! Reading real-format stack traces (tests/data/traces/) into exception, message, frames
//! and the failing frame, for every language; and the same reading when the language
//! must be guessed.

use std::path::Path;

use candor::results::frames::{Language, build_failure, guess_language};
use candor::results::{Frame, ParseOptions};

struct Case {
    file: &'static str,
    language: Language,
    repo_root: Option<&'static str>,
    exception: Option<&'static str>,
    message: &'static str,
    failing_frame: Option<&'static str>,
    failing_function: Option<&'static str>,
    frames: usize,
}

const CASES: &[Case] = &[
    Case {
        file: "python_cpython_chained.txt",
        language: Language::Python,
        repo_root: Some("/home/ci/work/app"),
        exception: Some("app.repo.RepositoryError"),
        message: "fetch 42 failed",
        failing_frame: Some("src/app/repo.py:88"),
        failing_function: Some("fetch"),
        frames: 4,
    },
    Case {
        file: "pytest_long.txt",
        language: Language::Python,
        repo_root: None,
        exception: Some("KeyError"),
        message: "'eu-west-3'",
        failing_frame: Some("src/shop/tax.py:9"),
        failing_function: Some("apply_tax"),
        frames: 3,
    },
    Case {
        file: "pytest_short.txt",
        language: Language::Python,
        repo_root: None,
        exception: Some("requests.exceptions.ConnectionError"),
        message: "HTTPConnectionPool(host='localhost', port=8080): Max retries exceeded with url: /users/7",
        failing_frame: Some("tests/test_api.py:22"),
        failing_function: Some("test_get_user"),
        frames: 2,
    },
    Case {
        file: "rust_backtrace.txt",
        language: Language::Rust,
        repo_root: None,
        exception: Some("panic"),
        message: "called `Result::unwrap()` on an `Err` value: Io(Os { code: 2, kind: NotFound, message: \"No such file or directory\" })",
        failing_frame: Some("src/store.rs:212"),
        failing_function: None,
        frames: 8,
    },
    Case {
        file: "rust_backtrace_full.txt",
        language: Language::Rust,
        repo_root: Some("/home/ci/mycrate/"),
        exception: Some("panic"),
        message: "internal error: entered unreachable code",
        failing_frame: Some("src/parse.rs:44"),
        failing_function: Some("mycrate::parse::parse_config"),
        frames: 7,
    },
    Case {
        file: "go_panic.txt",
        language: Language::Go,
        repo_root: Some("/home/runner/work/conf/conf"),
        exception: Some("panic"),
        message: "runtime error: index out of range [3] with length 3",
        failing_frame: Some("internal/parse/parse.go:57"),
        failing_function: Some("github.com/acme/conf/internal/parse.field"),
        frames: 8,
    },
    Case {
        file: "go_errorf.txt",
        language: Language::Go,
        repo_root: None,
        exception: None,
        message: "attempt 1 of 3",
        failing_frame: Some("retry_test.go:31"),
        failing_function: None,
        frames: 2,
    },
    Case {
        file: "java_caused_by.txt",
        language: Language::Java,
        repo_root: None,
        exception: Some("org.springframework.dao.DataAccessResourceFailureException"),
        message: "Unable to acquire JDBC Connection; nested exception is java.sql.SQLTransientConnectionException: pool - Connection is not available, request timed out after 30000ms.",
        failing_frame: Some("OrderRepository.java:48"),
        failing_function: Some("com.acme.orders.OrderRepository.findOpen"),
        frames: 8,
    },
    Case {
        file: "js_jest.txt",
        language: Language::JavaScript,
        repo_root: Some("/home/ci/shop"),
        exception: Some("Error"),
        message: "expect(received).toBe(expected) // Object.is equality",
        failing_frame: Some("src/cart.test.ts:14"),
        failing_function: Some("Object.toBe"),
        frames: 4,
    },
    Case {
        file: "js_node_test.txt",
        language: Language::JavaScript,
        repo_root: Some("/home/ci/lib"),
        exception: Some("AssertionError"),
        message: "Expected values to be strictly equal:",
        failing_frame: Some("test/sum.test.mjs:9"),
        failing_function: Some("TestContext.<anonymous>"),
        frames: 4,
    },
    Case {
        file: "js_vitest.txt",
        language: Language::JavaScript,
        repo_root: None,
        exception: Some("TypeError"),
        message: "Cannot read properties of undefined (reading 'id')",
        failing_frame: Some("src/users.ts:8"),
        failing_function: Some("getUserId"),
        frames: 2,
    },
];

fn trace(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/traces")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn check(case: &Case, language: Language) {
    let options = ParseOptions {
        repo_root: case.repo_root.map(str::to_owned),
        ..ParseOptions::default()
    };
    let failure = build_failure(None, None, trace(case.file), language, &options);
    let name = case.file;
    assert_eq!(
        failure.exception.as_deref(),
        case.exception,
        "{name}: exception"
    );
    assert_eq!(failure.message, case.message, "{name}: message");
    assert_eq!(
        failure.frames.len(),
        case.frames,
        "{name}: frames {:#?}",
        failure.frames
    );
    let failing = failure.failing_frame.as_ref();
    assert_eq!(
        failing.map(Frame::location).as_deref(),
        case.failing_frame,
        "{name}: failing frame in {:#?}",
        failure.frames
    );
    assert_eq!(
        failing.and_then(|f| f.function.as_deref()),
        case.failing_function,
        "{name}: failing function"
    );
    if let Some(root) = case.repo_root {
        let root = root.trim_end_matches('/');
        assert!(
            failure.frames.iter().all(|f| !f.file.starts_with(root)),
            "{name}: a path under the root was left absolute: {:#?}",
            failure.frames
        );
    }
}

#[test]
fn each_language_reads_its_traces() {
    for case in CASES {
        check(case, case.language);
    }
}

#[test]
fn the_language_is_guessed_from_the_trace() {
    for case in CASES {
        assert_eq!(
            guess_language(&trace(case.file)),
            case.language,
            "{}",
            case.file
        );
        check(case, Language::Unknown);
    }
}

#[test]
fn runner_given_type_and_message_are_kept() {
    let failure = build_failure(
        Some("java.lang.AssertionError".into()),
        Some("expected:<1> but was:<2>".into()),
        trace("java_caused_by.txt"),
        Language::Java,
        &ParseOptions::default(),
    );
    assert_eq!(
        failure.exception.as_deref(),
        Some("java.lang.AssertionError")
    );
    assert_eq!(failure.message, "expected:<1> but was:<2>");
    assert_eq!(
        failure
            .failing_frame
            .as_ref()
            .map(Frame::location)
            .as_deref(),
        Some("OrderRepository.java:48")
    );
}
