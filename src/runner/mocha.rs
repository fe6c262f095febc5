//! The mocha adapter: the suite with candor's own reporter (`--reporter PATH`, the
//! reporter written to the scratch folder, `js_reporter`), which writes jest's JSON report:
//! each test's file, suite path and retried attempts. mocha's built-in reporters keep less:
//! `xunit` has no file and one space-joined suite path, `json` no suite path apart from the
//! title and no retried attempts.
//!
//! One test: `--grep` with the test's full title (mocha's `fullTitle()`: the suite path and
//! the title joined by spaces), each title escaped for a JavaScript `RegExp` and the whole
//! anchored, so it matches that test only (`--fgrep` is a substring match: `adds` would
//! select `adds twice` too), and the test's file after `--` (mocha takes an existing path as
//! it is, never as a glob). A test of the same full title in another file runs too when
//! mocha loads that file (its config's `spec`); the report is cut to the chosen id.
//!
//! Retries: `--retries 0`; a test's own `this.retries(n)` still applies, and each retried
//! attempt is in the report (`invocations`, `retryReasons`): read as retries, never a pass.
//!
//! Order: mocha has no shuffle and no seed. It runs every file in one process, in the order
//! it finds them, each file's tests in definition order; tests of different files share
//! the process (globals, module caches), so the whole run is one scope for `candor order`.

use super::js_reporter::{self, Flavour, OwnReporter, Paths, Selection};
use super::{RunnerKind, jest, option_value, strings};

const NO_SEED: &str = "mocha has no shuffle: it runs the files in the order it finds them and each file's tests in the order they are defined, so a seed changes nothing";

const DEFINITION_ORDER: &str = "mocha runs the chosen tests file by file, in the order the files are named, each file's tests in the order they are defined, whatever order the tests are named in";

/// mocha through a command prefix (the repository's `node_modules/.bin/mocha` unless
/// `[runner] command` says).
pub type Mocha = OwnReporter;

/// mocha's part of the adapter.
pub(super) static MOCHA: Flavour = Flavour {
    kind: RunnerKind::Mocha,
    reporter: &js_reporter::MOCHA,
    no_seed: NO_SEED,
    definition_order: DEFINITION_ORDER,
    no_shuffle: "shuffle tests (mocha has no shuffle)",
    one_file_ordered: false,
    argv,
    pattern,
    workers,
    // Every file runs in the one process: the whole run is the scope.
    scope: |test_id| test_id.contains("::").then(|| &test_id[..0]),
};

/// The adapter for a prefix.
pub fn mocha(command: Option<Vec<String>>) -> Mocha {
    OwnReporter::new(&MOCHA, command)
}

fn argv(selection: &Selection<'_>, paths: Option<&Paths>) -> Vec<String> {
    let mut argv = Vec::new();
    if let Some(paths) = paths {
        argv.push("--reporter".to_owned());
        argv.push(paths.reporter.to_string_lossy().into_owned());
    }
    argv.extend(strings(&["--retries", "0"]));
    match selection {
        Selection::Suite => {}
        Selection::Listing => argv.push("--dry-run".to_owned()),
        Selection::Chosen { files, pattern } => {
            // The pattern starts with `^`: never read as an option. The files after
            // `--`: never read as options either.
            argv.push("--grep".to_owned());
            argv.push(pattern.clone());
            argv.push("--".to_owned());
            argv.extend(files.iter().map(|f| (*f).to_owned()));
        }
    }
    argv
}

/// Each test's full title (mocha's `fullTitle()`), anchored.
fn pattern(titles: &[Vec<&str>]) -> String {
    let alternatives: Vec<String> = titles
        .iter()
        .map(|pieces| jest::title_pattern(pieces))
        .collect();
    js_reporter::anchored(&alternatives)
}

/// 1, or mocha's `--jobs` (default: CPUs − 1) with `--parallel`.
fn workers(prefix: &[String]) -> Option<u32> {
    if !prefix.iter().any(|a| a == "--parallel" || a == "-p") {
        return Some(1);
    }
    match option_value(prefix, &["--jobs", "-j"], false) {
        Some(value) => value.parse().ok(),
        None => super::available_parallelism().map(|n| n.saturating_sub(1).max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{Adapter, Arrangement, RunOptions};

    /// Issue #20 item 1: one test is an anchored, escaped full title and its file after
    /// `--`; retries are off.
    #[test]
    fn one_test_is_an_anchored_full_title_and_its_file_after_a_double_dash() {
        let mocha = mocha(Some(strings(&["mocha"])));
        let ids = ["test/a.test.js::weird (a+b)* > quotes \"q\" :: $HOME".to_owned()];
        let selection = mocha.chosen(&ids, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            mocha.argv(&selection, None),
            strings(&[
                "mocha",
                "--retries",
                "0",
                "--grep",
                r#"^weird \(a\+b\)\*(?: | > )quotes "q" :: \$HOME$"#,
                "--",
                "test/a.test.js",
            ])
        );
        let two = [
            "b.test.js::x".to_owned(),
            "a.test.js::y".to_owned(),
            "b.test.js::z".to_owned(),
        ];
        let Selection::Chosen { files, pattern } =
            mocha.chosen(&two, false).unwrap_or_else(|e| panic!("{e}"))
        else {
            panic!("a chosen selection");
        };
        assert_eq!(files, ["b.test.js", "a.test.js"]);
        assert_eq!(pattern, "^(?:x|y|z)$");
        assert!(mocha.chosen(&["-r=evil.js::x".to_owned()], false).is_err());
        assert!(
            mocha
                .ordered_command(&two, Arrangement::Shuffled(3), RunOptions::default())
                .is_err()
        );
    }

    #[test]
    fn mocha_runs_in_one_process_unless_parallel() {
        assert_eq!(mocha(None).workers(&Selection::Suite), Some(1));
        let parallel = mocha(Some(strings(&["mocha", "--parallel", "--jobs", "3"])));
        assert_eq!(parallel.workers(&Selection::Suite), Some(3));
        let mocha = mocha(None);
        assert_eq!(
            mocha.process_scope("a.js::x"),
            mocha.process_scope("b.js::y")
        );
        assert_eq!(mocha.process_scope("no id"), None);
    }
}
