//! JavaScript runners candor drives through a reporter of its own (mocha, node's test
//! runner): the reporters' sources, written to the scratch folder for each run, and the run
//! that reads what they wrote. Both write jest's JSON report (`results::jestjson`), which
//! keeps what the runners' built-in JUnit and JSON reporters lose: the test's file (node's
//! junit reporter has none, mocha's xunit reporter none either), the describe path as a
//! list rather than one space-joined string, and retried attempts (`invocations`,
//! `retryReasons`).

//!
//! The two runners differ only in how they are told which tests to run and where to
//! report, so one adapter ([`OwnReporter`]) drives both, told by a [`Flavour`] (`mocha`'s
//! and `node`'s modules hold theirs, and what is particular to each runner).

use std::path::PathBuf;

use super::{
    Adapter, Arrangement, BatchOrdering, Context, GivenOrder, ListedTest, OrderSupport, RunOptions,
    RunReport, RunnerError, RunnerKind, SeedSupport, jest,
};
use crate::results::Format;

/// A reporter's source and the name it is written under (the extension decides how node
/// loads it: `.cjs` is CommonJS, `.mjs` an ES module, whatever the project's `type`).
pub(super) struct Reporter {
    file_name: &'static str,
    source: &'static str,
}

/// mocha's: `--reporter PATH`, the report's path in [`MOCHA_REPORT_VARIABLE`].
pub(super) const MOCHA: Reporter = Reporter {
    file_name: "candor-mocha-reporter.cjs",
    source: include_str!("reporters/mocha.cjs"),
};

/// node's test runner's: `--test-reporter=PATH --test-reporter-destination=REPORT`.
pub(super) const NODE: Reporter = Reporter {
    file_name: "candor-node-reporter.mjs",
    source: include_str!("reporters/node.mjs"),
};

/// Where candor's mocha reporter writes: a variable rather than `--reporter-option
/// output=PATH`, which mocha splits at commas, and a checkout's path may hold one.
pub(super) const MOCHA_REPORT_VARIABLE: &str = "CANDOR_MOCHA_REPORT";

impl Reporter {
    /// Writes the reporter into the scratch folder; its path.
    fn write(&self, context: &Context<'_>) -> Result<PathBuf, RunnerError> {
        fs_err::create_dir_all(&context.scratch)?;
        let path = context.scratch_path(self.file_name);
        fs_err::write(&path, self.source)?;
        Ok(path)
    }
}

/// The paths of one run: the reporter's source and the report it writes.
pub(super) struct Paths {
    pub reporter: PathBuf,
    pub report: PathBuf,
}

/// Which tests a run selects.
pub(super) enum Selection<'a> {
    Suite,
    /// The files, each once in the order first named, and the titles pattern.
    Chosen {
        files: Vec<&'a str>,
        pattern: String,
    },
    /// Every test collected, none run.
    Listing,
}

/// What one of the runners driven through candor's reporter is: its reporter, its
/// sentences, and how it is told what to run.
pub(super) struct Flavour {
    pub kind: RunnerKind,
    pub reporter: &'static Reporter,
    /// Why a seed changes nothing.
    pub no_seed: &'static str,
    /// What "as given" means for an ordered run.
    pub definition_order: &'static str,
    /// What a refused shuffle says.
    pub no_shuffle: &'static str,
    /// Whether the tests of an ordered run must be in one file (node: a file is a process).
    pub one_file_ordered: bool,
    /// The argv after the prefix: the reporter's options (when `paths`), then the
    /// selection's.
    pub argv: fn(&Selection<'_>, Option<&Paths>) -> Vec<String>,
    /// The anchored pattern selecting tests by their titles (each test's pieces).
    pub pattern: fn(&[Vec<&str>]) -> String,
    /// How many tests may run at once in a run of the whole suite or of several files,
    /// from the prefix.
    pub workers: fn(&[String]) -> Option<u32>,
    /// The process a test runs in (`Adapter::process_scope`).
    pub scope: fn(&str) -> Option<&str>,
}

/// mocha or node's test runner through a command prefix.
#[derive(Clone)]
pub struct OwnReporter {
    prefix: Vec<String>,
    flavour: &'static Flavour,
}

impl std::fmt::Debug for OwnReporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnReporter")
            .field("kind", &self.flavour.kind)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl OwnReporter {
    /// The adapter for a prefix (the runner's usual command when `None`).
    pub(super) fn new(flavour: &'static Flavour, command: Option<Vec<String>>) -> Self {
        OwnReporter {
            prefix: command.unwrap_or_else(|| flavour.kind.default_command()),
            flavour,
        }
    }

    pub(super) fn argv(&self, selection: &Selection<'_>, paths: Option<&Paths>) -> Vec<String> {
        let mut argv = self.prefix.clone();
        argv.extend((self.flavour.argv)(selection, paths));
        argv
    }

    /// The selection of chosen tests: of one file where an ordered run must be, unless
    /// `many_files` (a batch).
    pub(super) fn chosen<'a>(
        &self,
        test_ids: &'a [String],
        many_files: bool,
    ) -> Result<Selection<'a>, RunnerError> {
        let kind = self.flavour.kind;
        let (files, titles) = files_and_titles(kind, test_ids)?;
        if files.len() > 1 && self.flavour.one_file_ordered && !many_files {
            return Err(RunnerError::NotATestId {
                id: test_ids.join(", "),
                kind,
                reason: "the tests of one ordered run must be in one file".to_owned(),
            });
        }
        Ok(Selection::Chosen {
            files,
            pattern: (self.flavour.pattern)(&titles),
        })
    }

    /// The workers of a run: one for chosen tests of one file.
    pub(super) fn workers(&self, selection: &Selection<'_>) -> Option<u32> {
        match selection {
            Selection::Chosen { files, .. } if files.len() == 1 => Some(1),
            _ => (self.flavour.workers)(&self.prefix),
        }
    }

    fn run(
        &self,
        context: &Context<'_>,
        selection: &Selection<'_>,
        chosen: Option<&[String]>,
        exact: bool,
    ) -> Result<RunReport, RunnerError> {
        Run {
            kind: self.flavour.kind,
            reporter: self.flavour.reporter,
            chosen,
            exact_in: exact.then_some(self.flavour.scope),
            workers: self.workers(selection),
        }
        .execute(context, |paths| self.argv(selection, Some(paths)))
    }

    fn refuse_shuffle(&self, arrangement: Arrangement) -> Result<(), RunnerError> {
        match arrangement {
            Arrangement::AsGiven => Ok(()),
            Arrangement::Shuffled(_) => Err(RunnerError::Unsupported {
                kind: self.flavour.kind,
                what: self.flavour.no_shuffle,
            }),
        }
    }
}

impl Adapter for OwnReporter {
    fn kind(&self) -> RunnerKind {
        self.flavour.kind
    }

    fn seed_support(&self) -> SeedSupport {
        SeedSupport::None(self.flavour.no_seed)
    }

    fn run_suite(
        &self,
        context: &Context<'_>,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Selection::Suite, None, false)
    }

    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let ids = [test_id.to_owned()];
        self.run(context, &self.chosen(&ids, false)?, Some(&ids), false)
    }

    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        Run {
            kind: self.flavour.kind,
            reporter: self.flavour.reporter,
            chosen: None,
            exact_in: None,
            workers: None,
        }
        .list(context, |paths| self.argv(&Selection::Listing, Some(paths)))
    }

    fn order_support(&self) -> OrderSupport {
        OrderSupport {
            given: GivenOrder::Fixed(self.flavour.definition_order),
            shuffles: false,
            repeats: false,
            seed_reseeds_tests: false,
            unseeded: false,
        }
    }

    fn process_scope<'t>(&self, test_id: &'t str) -> Option<&'t str> {
        (self.flavour.scope)(test_id)
    }

    fn run_ordered(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.refuse_shuffle(arrangement)?;
        self.run(
            context,
            &self.chosen(test_ids, false)?,
            Some(test_ids),
            false,
        )
    }

    fn ordered_command(
        &self,
        test_ids: &[String],
        arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<Vec<String>, RunnerError> {
        self.refuse_shuffle(arrangement)?;
        Ok(self.argv(&self.chosen(test_ids, false)?, None))
    }

    fn batches(&self) -> bool {
        true
    }

    fn batch_ordering(&self) -> BatchOrdering {
        BatchOrdering::Fixed(self.flavour.definition_order)
    }

    /// The batch's files and one anchored pattern of its titles, in one run; a pattern
    /// that also ran a test outside the batch in a chosen test's process scope, or two
    /// tests under one id, is no exact selection: the runner could not run the batch, and
    /// the lane replays its tests alone.
    fn run_batch(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &self.chosen(test_ids, true)?, Some(test_ids), true)
    }
}

/// What an adapter asks of one run.
struct Run<'a> {
    kind: RunnerKind,
    reporter: &'a Reporter,
    /// The ids the report is cut down to, for a run of chosen tests.
    chosen: Option<&'a [String]>,
    /// For a batch: the process scope of a test, in which a test outside the chosen ones
    /// must not have run.
    exact_in: Option<fn(&str) -> Option<&str>>,
    workers: Option<u32>,
}

impl Run<'_> {
    fn invocation(
        &self,
        context: &Context<'_>,
        name: &str,
        argv: Vec<String>,
        paths: &Paths,
    ) -> super::process::Invocation {
        let invocation = context.invocation(name, argv).report_at(&paths.report);
        if self.kind == RunnerKind::Mocha {
            invocation.env(MOCHA_REPORT_VARIABLE, &paths.report.to_string_lossy())
        } else {
            invocation
        }
    }

    /// Runs the argv `argv` builds from the paths, checks that the runner ran, and returns
    /// the report with its paths relative to the repository root (and only the chosen
    /// tests); a chosen id the report does not hold is a runner that could not run.
    fn execute(
        self,
        context: &Context<'_>,
        argv: impl FnOnce(&Paths) -> Vec<String>,
    ) -> Result<RunReport, RunnerError> {
        let name = self.kind.as_str();
        let paths = Paths {
            reporter: self.reporter.write(context)?,
            report: context.scratch_path(&format!("{name}.json")),
        };
        let invocation = self.invocation(context, name, argv(&paths), &paths);
        let record = context.run(invocation)?;
        context.check_ran(self.kind, &record, &paths.report)?;
        // Stopped by a clock: both reporters write when the run ends (node opens the
        // destination at the start, empty), so there is usually none to cut down. One
        // written while the runner was being stopped may be cut short by the kill, or
        // leave out the test that hung: it is no report, and the run is returned as the
        // time-out it is, for its caller to judge, as for jest.
        let stopped = record.outcome.timed_out;
        let written = std::fs::metadata(&paths.report).is_ok_and(|m| m.len() > 0);
        let mut report = paths.report;
        let mut found = Vec::new();
        if written {
            let rewritten = context.scratch_path(&format!("{name}-report.json"));
            match jest::rewrite_report(&report, &rewritten, self.chosen, &context.repo_root) {
                Ok(cut) => {
                    report = rewritten;
                    if let Some(scope) = self.exact_in {
                        let scope = |id: &str| scope(id).map(str::to_owned);
                        if let Some(why) = cut.inexact(self.chosen.unwrap_or_default(), scope) {
                            return Err(jest::inexact_selection(self.kind, why, &record));
                        }
                    }
                    found = cut.found;
                }
                Err(_) if stopped => {
                    fs_err::write(&report, b"")?;
                }
                Err(error) => return Err(error),
            }
        }
        if let Some(chosen) = self.chosen.filter(|_| !stopped) {
            check_found(self.kind, chosen, &found, &record)?;
        }
        let run = RunReport {
            runner: self.kind,
            report,
            format: Some(Format::JestJson),
            seed: None,
            workers: self.workers,
            invocations: vec![record],
            warnings: Vec::new(),
        };
        context.check_frames(&run)?;
        Ok(run)
    }

    /// Runs a listing (no test runs) and returns every test it names.
    fn list(
        self,
        context: &Context<'_>,
        argv: impl FnOnce(&Paths) -> Vec<String>,
    ) -> Result<Vec<ListedTest>, RunnerError> {
        let name = format!("{}-list", self.kind);
        let paths = Paths {
            reporter: self.reporter.write(context)?,
            report: context.scratch_path(&format!("{name}.json")),
        };
        let invocation = self.invocation(context, &name, argv(&paths), &paths);
        let record = context.run(invocation)?;
        context.check_ran(self.kind, &record, &paths.report)?;
        let options = crate::results::ParseOptions {
            repo_root: Some(context.repo_root.to_string_lossy().into_owned()),
            ..crate::results::ParseOptions::default()
        };
        let (executions, _) =
            crate::results::parse_all(fs_err::File::open(&paths.report)?, &options).map_err(
                |error| RunnerError::Output {
                    what: format!("{} (listing)", self.kind),
                    message: error.to_string(),
                },
            )?;
        let mut listed: Vec<ListedTest> = executions
            .into_iter()
            .map(|execution| ListedTest {
                file: execution.file,
                id: execution.test_id,
            })
            .collect();
        listed.dedup();
        Ok(listed)
    }
}

/// The files of chosen tests, each once, in the order first named; every id split by
/// the JavaScript id rule (`file::describe > title`).
pub(super) fn files_and_titles(
    kind: RunnerKind,
    test_ids: &[String],
) -> Result<(Vec<&str>, Vec<Vec<&str>>), RunnerError> {
    let mut files: Vec<&str> = Vec::new();
    let mut titles = Vec::new();
    for test_id in test_ids {
        let (file, pieces) = jest::split_id(kind, test_id)?;
        if !files.contains(&file) {
            files.push(file);
        }
        titles.push(pieces);
    }
    if titles.is_empty() {
        return Err(RunnerError::NotATestId {
            id: String::new(),
            kind,
            reason: "a run of chosen tests needs at least one test".to_owned(),
        });
    }
    Ok((files, titles))
}

/// `^(?:A|B)$` from alternatives, or `^A$` for one.
pub(super) fn anchored(alternatives: &[String]) -> String {
    let mut unique: Vec<&String> = Vec::new();
    for alternative in alternatives {
        if !unique.contains(&alternative) {
            unique.push(alternative);
        }
    }
    if unique.len() == 1 {
        format!("^{}$", unique[0])
    } else {
        let joined: Vec<&str> = unique.iter().map(|a| a.as_str()).collect();
        format!("^(?:{})$", joined.join("|"))
    }
}

/// A chosen id the report does not hold: the runner could not run it (an unknown test).
pub(super) fn check_found(
    kind: RunnerKind,
    chosen: &[String],
    found: &[String],
    record: &super::InvocationRecord,
) -> Result<(), RunnerError> {
    match chosen.iter().find(|id| !found.contains(id)) {
        Some(missing) => Err(RunnerError::CouldNotRun(Box::new(super::NotRun {
            apart: Vec::new(),
            runner: kind,
            why: format!("{kind} ran no test with the id `{missing}`"),
            quoted: Vec::new(),
            log: record.log.clone(),
            unknown_test: true,
        }))),
        None => Ok(()),
    }
}
