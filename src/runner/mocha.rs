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

use super::js_reporter::{self, Paths, Run};
use super::{
    Adapter, Arrangement, Context, GivenOrder, ListedTest, OrderSupport, RunOptions, RunReport,
    RunnerError, RunnerKind, SeedSupport, jest, option_value, strings,
};

const NO_SEED: &str = "mocha has no shuffle: it runs the files in the order it finds them and each file's tests in the order they are defined, so a seed changes nothing";

const DEFINITION_ORDER: &str = "mocha runs the chosen tests file by file, in the order the files are named, each file's tests in the order they are defined, whatever order the tests are named in";

/// mocha through a command prefix (the repository's `node_modules/.bin/mocha` unless
/// `[runner] command` says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mocha {
    prefix: Vec<String>,
}

/// Which tests a run selects.
enum Selection<'a> {
    Suite,
    /// The files and the full-title pattern.
    Chosen {
        files: Vec<&'a str>,
        pattern: String,
    },
    /// Every test collected, none run (`--dry-run`).
    Listing,
}

impl Mocha {
    /// The adapter for a prefix.
    pub fn new(command: Option<Vec<String>>) -> Self {
        Mocha {
            prefix: command.unwrap_or_else(|| RunnerKind::Mocha.default_command()),
        }
    }

    fn argv(&self, selection: &Selection<'_>, paths: Option<&Paths>) -> Vec<String> {
        let mut argv = self.prefix.clone();
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

    fn chosen(test_ids: &[String]) -> Result<Selection<'_>, RunnerError> {
        let (files, titles) = js_reporter::files_and_titles(RunnerKind::Mocha, test_ids)?;
        let alternatives: Vec<String> = titles
            .iter()
            .map(|pieces| jest::title_pattern(pieces))
            .collect();
        Ok(Selection::Chosen {
            files,
            pattern: js_reporter::anchored(&alternatives),
        })
    }

    /// 1, or mocha's `--jobs` (default: CPUs − 1) with `--parallel`.
    fn workers(&self) -> Option<u32> {
        if !self.prefix.iter().any(|a| a == "--parallel" || a == "-p") {
            return Some(1);
        }
        match option_value(&self.prefix, &["--jobs", "-j"], false) {
            Some(value) => value.parse().ok(),
            None => super::available_parallelism().map(|n| n.saturating_sub(1).max(1)),
        }
    }

    fn run(
        &self,
        context: &Context<'_>,
        selection: &Selection<'_>,
        chosen: Option<&[String]>,
    ) -> Result<RunReport, RunnerError> {
        Run {
            kind: RunnerKind::Mocha,
            reporter: &js_reporter::MOCHA,
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

impl Adapter for Mocha {
    fn kind(&self) -> RunnerKind {
        RunnerKind::Mocha
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
            kind: RunnerKind::Mocha,
            reporter: &js_reporter::MOCHA,
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
        // Every file runs in the one process: the whole run is the scope.
        test_id.contains("::").then(|| &test_id[..0])
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
            kind: RunnerKind::Mocha,
            what: "shuffle tests (mocha has no shuffle)",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #20 item 1: one test is an anchored, escaped full title and its file after
    /// `--`; retries are off.
    #[test]
    fn one_test_is_an_anchored_full_title_and_its_file_after_a_double_dash() {
        let mocha = Mocha::new(Some(strings(&["mocha"])));
        let ids = ["test/a.test.js::weird (a+b)* > quotes \"q\" :: $HOME".to_owned()];
        let selection = Mocha::chosen(&ids).unwrap_or_else(|e| panic!("{e}"));
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
            Mocha::chosen(&two).unwrap_or_else(|e| panic!("{e}"))
        else {
            panic!("a chosen selection");
        };
        assert_eq!(files, ["b.test.js", "a.test.js"]);
        assert_eq!(pattern, "^(?:x|y|z)$");
        assert!(Mocha::chosen(&["-r=evil.js::x".to_owned()]).is_err());
        assert!(
            mocha
                .ordered_command(&two, Arrangement::Shuffled(3), RunOptions::default())
                .is_err()
        );
    }

    #[test]
    fn mocha_runs_in_one_process_unless_parallel() {
        assert_eq!(Mocha::new(None).workers(), Some(1));
        let parallel = Mocha::new(Some(strings(&["mocha", "--parallel", "--jobs", "3"])));
        assert_eq!(parallel.workers(), Some(3));
        let mocha = Mocha::new(None);
        assert_eq!(
            mocha.process_scope("a.js::x"),
            mocha.process_scope("b.js::y")
        );
        assert_eq!(mocha.process_scope("no id"), None);
    }
}
