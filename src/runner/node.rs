//! The adapter of node's built-in test runner (`node --test`): the suite with candor's
//! own reporter (`--test-reporter=PATH --test-reporter-destination=REPORT`, the reporter
//! written to the scratch folder, `js_reporter`), which writes jest's JSON report. node's
//! `junit` reporter (node 20.11 and later) has no file attribute, so tests of the same
//! name in two files would be one; candor's reporter keeps the file and the describe path.
//!
//! One test: `--test-name-pattern` and the test's file. node 20 matches the pattern against
//! each test's own name (a `describe` whose name matches runs all its tests; later nodes
//! also match the full name), so the pattern is anchored and accepts either: the test's
//! own title, or the describe path and title joined by spaces, each title escaped for a
//! JavaScript `RegExp`. A test of the same own title elsewhere in the file runs too; the
//! report is cut to the chosen id. A subtest made with `t.test()` inside a test runs only
//! through its parent, whose name does not match: it cannot be run alone.
//!
//! node's test runner has no retries (nothing to turn off) and, in node 20, no shuffle and
//! no seed. Each test file runs in its own process (`--test-isolation=process`, node's
//! default), so a file is the scope tests share state in; its tests run in definition
//! order.

use super::js_reporter::{self, Flavour, OwnReporter, Paths, Selection};
use super::{RunnerKind, available_parallelism, jest, option_value};

const NO_SEED: &str = "node's test runner (node 20) has no shuffle: each file runs in its own process and its tests run in the order they are defined, so a seed changes nothing";

const DEFINITION_ORDER: &str = "node runs a file's chosen tests in the order they are defined in it, whatever order they are named in";

/// A pattern no name matches: the listing reports every test as filtered and runs none.
const MATCH_NOTHING: &str = "(?!)";

/// node's test runner through a command prefix (`node --test` unless `[runner] command`
/// says: `node --test --import tsx`, say).
pub type NodeTest = OwnReporter;

/// node's part of the adapter.
pub(super) static NODE: Flavour = Flavour {
    kind: RunnerKind::Node,
    reporter: &js_reporter::NODE,
    no_seed: NO_SEED,
    definition_order: DEFINITION_ORDER,
    no_shuffle: "shuffle tests (node 20's test runner has no shuffle)",
    one_file_ordered: true,
    argv,
    pattern,
    workers,
    // Each test file runs in its own process.
    scope: |test_id| test_id.split_once("::").map(|(file, _)| file),
};

/// The adapter for a prefix.
pub fn node_test(command: Option<Vec<String>>) -> NodeTest {
    OwnReporter::new(&NODE, command)
}

fn argv(selection: &Selection<'_>, paths: Option<&Paths>) -> Vec<String> {
    let mut argv = Vec::new();
    if let Some(paths) = paths {
        argv.push(format!("--test-reporter={}", paths.reporter.display()));
        argv.push(format!(
            "--test-reporter-destination={}",
            paths.report.display()
        ));
    }
    match selection {
        Selection::Suite => {}
        Selection::Listing => argv.push(format!("--test-name-pattern={MATCH_NOTHING}")),
        Selection::Chosen { files, pattern } => {
            // Attached, so the pattern is the option's value; `split_id` refused a file
            // starting with `-`.
            argv.push(format!("--test-name-pattern={pattern}"));
            argv.extend(files.iter().map(|f| (*f).to_owned()));
        }
    }
    argv
}

/// Each test's own name (the last title, or, when a title holding ` > ` was split, the
/// last pieces joined back) or its full name, anchored.
fn pattern(titles: &[Vec<&str>]) -> String {
    let mut alternatives = Vec::new();
    for pieces in titles {
        for start in (0..pieces.len()).rev() {
            alternatives.push(jest::js_regex_escape(
                &pieces[start..].join(crate::results::ids::JS_SEPARATOR),
            ));
        }
        alternatives.push(jest::title_pattern(pieces));
    }
    js_reporter::anchored(&alternatives)
}

/// `--test-concurrency`, else node's default: one less than the machine's parallelism.
fn workers(prefix: &[String]) -> Option<u32> {
    match option_value(prefix, &["--test-concurrency"], false) {
        Some(value) => value.parse().ok(),
        None => available_parallelism().map(|n| n.saturating_sub(1).max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::strings;

    /// Issue #20 item 2: the own name or the full name, anchored and escaped, then the
    /// file.
    #[test]
    fn one_test_is_its_own_or_full_name_anchored_then_its_file() {
        let node = node_test(None);
        let ids = ["test/a.test.js::weird (a+b)* > quotes \"q\" :: $HOME".to_owned()];
        let selection = node.chosen(&ids, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            node.argv(&selection, None),
            strings(&[
                "node",
                "--test",
                r#"--test-name-pattern=^(?:quotes "q" :: \$HOME|weird \(a\+b\)\* > quotes "q" :: \$HOME|weird \(a\+b\)\*(?: | > )quotes "q" :: \$HOME)$"#,
                "test/a.test.js",
            ])
        );
        let top = ["test/a.test.js::top".to_owned()];
        let Selection::Chosen { pattern, .. } =
            node.chosen(&top, false).unwrap_or_else(|e| panic!("{e}"))
        else {
            panic!("a chosen selection");
        };
        assert_eq!(pattern, "^top$");
        assert!(node.chosen(&["--eval=x::y".to_owned()], false).is_err());
        let two = ["a.test.js::x".to_owned(), "b.test.js::y".to_owned()];
        assert!(node.chosen(&two, false).is_err());
        // A batch may hold several files: each runs in its own process.
        assert!(node.chosen(&two, true).is_ok());
    }
}
