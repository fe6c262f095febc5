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

use super::js_reporter::{self, Paths, Run};
use super::{
    Adapter, Arrangement, Context, GivenOrder, ListedTest, OrderSupport, RunOptions, RunReport,
    RunnerError, RunnerKind, SeedSupport, available_parallelism, jest, option_value,
};

const NO_SEED: &str = "node's test runner (node 20) has no shuffle: each file runs in its own process and its tests run in the order they are defined, so a seed changes nothing";

const DEFINITION_ORDER: &str = "node runs a file's chosen tests in the order they are defined in it, whatever order they are named in";

/// A pattern no name matches: the listing reports every test as filtered and runs none.
const MATCH_NOTHING: &str = "(?!)";

/// node's test runner through a command prefix (`node --test` unless `[runner] command`
/// says: `node --test --import tsx`, say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeTest {
    prefix: Vec<String>,
}

/// Which tests a run selects.
enum Selection<'a> {
    Suite,
    Chosen { file: &'a str, pattern: String },
    Listing,
}

impl NodeTest {
    /// The adapter for a prefix.
    pub fn new(command: Option<Vec<String>>) -> Self {
        NodeTest {
            prefix: command.unwrap_or_else(|| RunnerKind::Node.default_command()),
        }
    }

    fn argv(&self, selection: &Selection<'_>, paths: Option<&Paths>) -> Vec<String> {
        let mut argv = self.prefix.clone();
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
            Selection::Chosen { file, pattern } => {
                // Attached, so the pattern is the option's value; `split_id` refused a file
                // starting with `-`.
                argv.push(format!("--test-name-pattern={pattern}"));
                argv.push((*file).to_owned());
            }
        }
        argv
    }

    fn chosen(test_ids: &[String]) -> Result<Selection<'_>, RunnerError> {
        let (files, titles) = js_reporter::files_and_titles(RunnerKind::Node, test_ids)?;
        if files.len() > 1 {
            return Err(RunnerError::NotATestId {
                id: test_ids.join(", "),
                kind: RunnerKind::Node,
                reason: "the tests of one ordered run must be in one file".to_owned(),
            });
        }
        let mut alternatives = Vec::new();
        for pieces in &titles {
            // The own name: the last title, or (a title holding ` > ` was split) the last
            // pieces joined back.
            for start in (0..pieces.len()).rev() {
                alternatives.push(jest::js_regex_escape(
                    &pieces[start..].join(crate::results::ids::JS_SEPARATOR),
                ));
            }
            alternatives.push(jest::title_pattern(pieces));
        }
        Ok(Selection::Chosen {
            file: files[0],
            pattern: js_reporter::anchored(&alternatives),
        })
    }

    /// `--test-concurrency`, else node's default: one less than the machine's parallelism.
    fn workers(&self) -> Option<u32> {
        match option_value(&self.prefix, &["--test-concurrency"], false) {
            Some(value) => value.parse().ok(),
            None => available_parallelism().map(|n| n.saturating_sub(1).max(1)),
        }
    }

    fn run(
        &self,
        context: &Context<'_>,
        selection: &Selection<'_>,
        chosen: Option<&[String]>,
    ) -> Result<RunReport, RunnerError> {
        Run {
            kind: RunnerKind::Node,
            reporter: &js_reporter::NODE,
            chosen,
            seed: None,
            workers: if chosen.is_some() {
                Some(1)
            } else {
                self.workers()
            },
        }
        .execute(context, |paths| self.argv(selection, Some(paths)))
    }
}

impl Adapter for NodeTest {
    fn kind(&self) -> RunnerKind {
        RunnerKind::Node
    }

    fn seed_support(&self) -> SeedSupport {
        SeedSupport::None(NO_SEED)
    }

    fn run_suite(
        &self,
        context: &Context<'_>,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Selection::Suite, None)
    }

    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let ids = [test_id.to_owned()];
        self.run(context, &Self::chosen(&ids)?, Some(&ids))
    }

    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        Run {
            kind: RunnerKind::Node,
            reporter: &js_reporter::NODE,
            chosen: None,
            seed: None,
            workers: None,
        }
        .list(context, |paths| self.argv(&Selection::Listing, Some(paths)))
    }

    fn order_support(&self) -> OrderSupport {
        OrderSupport {
            given: GivenOrder::Fixed(DEFINITION_ORDER),
            shuffles: false,
            repeats: false,
            seed_reseeds_tests: false,
            unseeded: false,
        }
    }

    fn process_scope<'t>(&self, test_id: &'t str) -> Option<&'t str> {
        // Each test file runs in its own process.
        test_id.split_once("::").map(|(file, _)| file)
    }

    fn run_ordered(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        refuse_shuffle(arrangement)?;
        self.run(context, &Self::chosen(test_ids)?, Some(test_ids))
    }

    fn ordered_command(
        &self,
        test_ids: &[String],
        arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<Vec<String>, RunnerError> {
        refuse_shuffle(arrangement)?;
        Ok(self.argv(&Self::chosen(test_ids)?, None))
    }
}

fn refuse_shuffle(arrangement: Arrangement) -> Result<(), RunnerError> {
    match arrangement {
        Arrangement::AsGiven => Ok(()),
        Arrangement::Shuffled(_) => Err(RunnerError::Unsupported {
            kind: RunnerKind::Node,
            what: "shuffle tests (node 20's test runner has no shuffle)",
        }),
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
        let node = NodeTest::new(None);
        let ids = ["test/a.test.js::weird (a+b)* > quotes \"q\" :: $HOME".to_owned()];
        let selection = NodeTest::chosen(&ids).unwrap_or_else(|e| panic!("{e}"));
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
            NodeTest::chosen(&top).unwrap_or_else(|e| panic!("{e}"))
        else {
            panic!("a chosen selection");
        };
        assert_eq!(pattern, "^top$");
        assert!(NodeTest::chosen(&["--eval=x::y".to_owned()]).is_err());
        let two = ["a.test.js::x".to_owned(), "b.test.js::y".to_owned()];
        assert!(NodeTest::chosen(&two).is_err());
    }
}
