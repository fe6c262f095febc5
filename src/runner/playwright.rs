//! The Playwright Test adapter (`@playwright/test`'s `playwright test`, not the Python
//! library): the suite with Playwright's JSON reporter, read natively
//! (`results::playwrightjson`: projects, describe path, every retry), one test by its
//! project, file and title.
//!
//! The report: `--reporter=list,json` on the command line replaces every reporter of the
//! user's config, and `PLAYWRIGHT_JSON_OUTPUT_FILE` (`PLAYWRIGHT_JSON_OUTPUT_NAME` too,
//! for releases before the `_FILE` variable) points the JSON at candor's scratch folder,
//! so the config is never edited and a config's own `outputFile` is never written.
//! `--output=DIR` sends the tests' artifacts (traces, screenshots) to the scratch folder
//! rather than the repository's `test-results/`. `--retries=0` always: a retry the
//! config or `CI` asks for would hide a red; a report that has retries anyway (one
//! ingested from CI) has every attempt read as an attempt.
//!
//! One test: `--project=NAME` (when the id has a project), the file as an anchored,
//! escaped path pattern (Playwright's positional arguments are regular expressions on
//! the absolute path: `/(?:^|\/)tests\/a\.spec\.ts$/`, written between slashes so it is
//! case-sensitive and never read as an option), and `--grep=/…/` with the describe path
//! and title escaped for a JavaScript `RegExp`, anchored at the end (allowing the tags
//! Playwright appends to the title it matches). The report is then cut to the test's id:
//! a pattern that also matched another test (a describe named like the end of another)
//! never adds it.
//!
//! No seed, no shuffle: Playwright runs files in a fixed order and a file's tests in the
//! order they are defined. `--workers`, `fullyParallel` and `--shard` are the user's: they
//! spread files (or, with `fullyParallel`, tests) over worker processes and CI jobs; a
//! worker that sees a failure is replaced, so module state lives until a failure.
//!
//! For `candor order`: one worker (`--workers=1`) runs a file's chosen tests in
//! definition order, whatever order they are named in; Playwright cannot run a given
//! order, shuffle, or repeat inside one process (`--repeat-each` gives each copy its own
//! worker).

use std::path::Path;

use super::{
    Adapter, Arrangement, BatchOrdering, Context, GivenOrder, ListedTest, OrderSupport, RunOptions,
    RunReport, RunnerError, RunnerKind, SeedSupport, jest, jest::js_regex_escape, js_reporter,
    option_value,
};
use crate::results::{Format, playwrightjson};

const NO_SEED: &str = "Playwright Test has no seed and no shuffle: files run in a fixed order, a file's tests in the order they are defined";

const DEFINITION_ORDER: &str = "Playwright runs a file's chosen tests in one worker (--workers=1) in the order they are defined, whatever order they are named in; it has no shuffle";

/// The variables the JSON reporter takes its output path from.
const OUTPUT_VARIABLES: [&str; 2] = ["PLAYWRIGHT_JSON_OUTPUT_FILE", "PLAYWRIGHT_JSON_OUTPUT_NAME"];

/// Playwright Test through a command prefix (the repository's
/// `node_modules/.bin/playwright test`, unless `[runner] command` says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Playwright {
    prefix: Vec<String>,
}

/// Which tests a run selects.
enum Selection {
    Suite,
    /// The projects and files (one each, except in a batch), and the titles pattern.
    Chosen {
        projects: Vec<String>,
        files: Vec<String>,
        pattern: String,
        /// The ids the report is cut down to.
        ids: Vec<String>,
    },
    /// Every test collected, none run.
    Listing,
}

impl Playwright {
    /// The adapter for a prefix.
    pub fn new(command: Option<Vec<String>>) -> Self {
        Playwright {
            prefix: command.unwrap_or_else(|| RunnerKind::Playwright.default_command()),
        }
    }

    fn argv(&self, selection: &Selection, output: Option<&Path>) -> Vec<String> {
        let mut argv = self.prefix.clone();
        argv.push("--retries=0".to_owned());
        if let Some(output) = output {
            argv.push("--reporter=list,json".to_owned());
            argv.push(format!("--output={}", output.display()));
        }
        match selection {
            Selection::Suite => {}
            Selection::Listing => argv.push("--list".to_owned()),
            Selection::Chosen {
                projects,
                files,
                pattern,
                ..
            } => {
                argv.push("--workers=1".to_owned());
                for project in projects.iter().filter(|p| !p.is_empty()) {
                    argv.push(format!("--project={project}"));
                }
                argv.push(format!("--grep=/{pattern}/"));
                for file in files {
                    argv.push(format!("/(?:^|\\/){}$/", js_regex_escape(file)));
                }
            }
        }
        argv
    }

    fn run(
        &self,
        context: &Context<'_>,
        selection: &Selection,
        exact: bool,
    ) -> Result<RunReport, RunnerError> {
        let report = context.scratch_path("playwright.json");
        let output = context.scratch_path("playwright-output");
        let argv = self.argv(selection, Some(&output));
        let record = context.run(with_report(context.invocation("playwright", argv), &report))?;
        context.check_ran(RunnerKind::Playwright, &record, &report)?;
        // Stopped by a clock: the JSON reporter writes when the run ends, so there is no
        // report to cut down. The run is returned as it is and its caller judges the
        // time-out (the lane counts a replay not made), as for every runner.
        let timed_out = record.outcome.timed_out && !report.is_file();
        let report = match selection {
            Selection::Chosen { .. } if timed_out => report,
            Selection::Chosen { ids, .. } => {
                let cut = context.scratch_path("playwright-report.json");
                let found = cut_report(&report, &cut, ids, &context.repo_root)?;
                if exact {
                    let scope = |id: &str| self.process_scope(id).map(str::to_owned);
                    if let Some(why) = found.inexact(ids, scope) {
                        return Err(jest::inexact_selection(
                            RunnerKind::Playwright,
                            why,
                            &record,
                        ));
                    }
                }
                js_reporter::check_found(RunnerKind::Playwright, ids, &found.found, &record)?;
                cut
            }
            _ => report,
        };
        let run = RunReport {
            runner: RunnerKind::Playwright,
            report,
            format: Some(Format::PlaywrightJson),
            seed: None,
            workers: match selection {
                Selection::Chosen { .. } => Some(1),
                _ => self.workers(),
            },
            invocations: vec![record],
            warnings: Vec::new(),
        };
        context.check_frames(&run)?;
        Ok(run)
    }

    /// The selection of tests by their ids: of one project and file, unless `many` (a
    /// batch: every project and file named, each once).
    fn chosen(test_ids: &[String], many: bool) -> Result<Selection, RunnerError> {
        let mut place: Option<(&str, &str)> = None;
        let mut alternatives = Vec::new();
        let (mut projects, mut files): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
        for test_id in test_ids {
            let (project, file, titles) = split_id(test_id)?;
            if !projects.iter().any(|p| p == project) {
                projects.push(project.to_owned());
            }
            if !files.iter().any(|f| f == file) {
                files.push(file.to_owned());
            }
            if place.is_some_and(|p| p != (project, file)) && !many {
                return Err(RunnerError::NotATestId {
                    id: test_id.clone(),
                    kind: RunnerKind::Playwright,
                    reason: "the tests of one ordered run must be in one file and one project"
                        .to_owned(),
                });
            }
            place = Some((project, file));
            alternatives.push(title_pattern(&titles));
        }
        if place.is_none() {
            return Err(RunnerError::NotATestId {
                id: String::new(),
                kind: RunnerKind::Playwright,
                reason: "an ordered run needs at least one test".to_owned(),
            });
        }
        // Playwright matches ` project file describe… title @tag…` (its title path
        // joined by spaces, tags last).
        let pattern = format!("(?:^| )(?:{})(?: @\\S+)*$", alternatives.join("|"));
        Ok(Selection::Chosen {
            projects,
            files,
            pattern,
            ids: test_ids.to_vec(),
        })
    }

    /// `--workers`/`-j` from the prefix, else Playwright's default: half the machine's
    /// parallelism (a percentage is left unknown).
    fn workers(&self) -> Option<u32> {
        match option_value(&self.prefix, &["--workers", "-j"], false) {
            Some(value) => value.parse().ok(),
            None => super::available_parallelism().map(|n| (n / 2).max(1)),
        }
    }
}

/// The invocation writing its JSON report to `report`.
fn with_report(
    mut invocation: super::process::Invocation,
    report: &Path,
) -> super::process::Invocation {
    let path = report.to_string_lossy().into_owned();
    for name in OUTPUT_VARIABLES {
        invocation = invocation.env(name, &path);
    }
    invocation.report_at(report)
}

impl Adapter for Playwright {
    fn kind(&self) -> RunnerKind {
        RunnerKind::Playwright
    }

    fn seed_support(&self) -> SeedSupport {
        SeedSupport::None(NO_SEED)
    }

    fn run_suite(
        &self,
        context: &Context<'_>,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Selection::Suite, false)
    }

    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(
            context,
            &Playwright::chosen(&[test_id.to_owned()], false)?,
            false,
        )
    }

    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        let report = context.scratch_path("playwright-list.json");
        let mut argv = self.argv(&Selection::Listing, None);
        argv.push("--reporter=json".to_owned());
        let record = context.run(with_report(
            context.invocation("playwright-list", argv),
            &report,
        ))?;
        context.check_ran(RunnerKind::Playwright, &record, &report)?;
        let options = crate::results::ParseOptions {
            repo_root: Some(context.repo_root.to_string_lossy().into_owned()),
            ..crate::results::ParseOptions::default()
        };
        let (executions, _) = crate::results::parse_all(fs_err::File::open(&report)?, &options)
            .map_err(|error| RunnerError::Output {
                what: "playwright test --list --reporter=json".to_owned(),
                message: error.to_string(),
            })?;
        Ok(executions
            .into_iter()
            .map(|execution| ListedTest {
                file: execution.file,
                id: execution.test_id,
            })
            .collect())
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
        // A file's tests run in one worker, per project, unless `fullyParallel`.
        split_id(test_id)
            .ok()
            .and_then(|_| test_id.split_once("::").map(|(scope, _)| scope))
    }

    fn run_ordered(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        refuse_shuffle(arrangement)?;
        self.run(context, &Playwright::chosen(test_ids, false)?, false)
    }

    fn ordered_command(
        &self,
        test_ids: &[String],
        arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<Vec<String>, RunnerError> {
        refuse_shuffle(arrangement)?;
        Ok(self.argv(&Playwright::chosen(test_ids, false)?, None))
    }

    fn batches(&self) -> bool {
        true
    }

    fn batch_ordering(&self) -> BatchOrdering {
        BatchOrdering::Fixed(DEFINITION_ORDER)
    }

    /// Every project and file of the batch and one `--grep` of its titles, in one worker;
    /// a pattern that also ran a test outside the batch in one of its tests' project and
    /// file is no exact selection: the runner could not run the batch, and the lane
    /// replays its tests alone.
    fn run_batch(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Playwright::chosen(test_ids, true)?, true)
    }
}

fn refuse_shuffle(arrangement: Arrangement) -> Result<(), RunnerError> {
    match arrangement {
        Arrangement::AsGiven => Ok(()),
        Arrangement::Shuffled(_) => Err(RunnerError::Unsupported {
            kind: RunnerKind::Playwright,
            what: "shuffle tests: Playwright Test has no shuffle",
        }),
    }
}

/// `[project] file::describe > title` into its parts.
fn split_id(test_id: &str) -> Result<(&str, &str, Vec<&str>), RunnerError> {
    let not_an_id = |reason: &str| RunnerError::NotATestId {
        id: test_id.to_owned(),
        kind: RunnerKind::Playwright,
        reason: reason.to_owned(),
    };
    let Some((project, file, titles)) = playwrightjson::split_test_id(test_id) else {
        return Err(not_an_id(
            "a Playwright test id is `[project] path/to/file.spec.ts::describe > title` (no `[project] ` for a config without projects)",
        ));
    };
    Ok((project, file, titles))
}

/// The pattern matching a describe path and title as Playwright joins them: by spaces,
/// with a describe's tags after its title. Between pieces a space or ` > ` (a title that
/// itself holds ` > ` was split at it).
fn title_pattern(titles: &[&str]) -> String {
    titles
        .iter()
        .map(|title| js_regex_escape(title))
        .collect::<Vec<_>>()
        .join("(?: @\\S+)*(?: | > )")
}

/// Writes to `cut` the report at `raw` with only the `chosen` tests; returns their ids as
/// found, and the tests dropped (Playwright reports only the tests its filters selected:
/// each ran, or was skipped by its own code).
fn cut_report(
    raw: &Path,
    cut: &Path,
    chosen: &[String],
    repo_root: &Path,
) -> Result<jest::Cut, RunnerError> {
    let output_error = |message: String| RunnerError::Output {
        what: "the Playwright JSON report".to_owned(),
        message,
    };
    let mut report: serde_json::Value = serde_json::from_slice(&fs_err::read(raw)?)
        .map_err(|error| output_error(error.to_string()))?;
    // Files under the root as given, else under the config's folder (Playwright prints
    // real paths, which a root behind a symbolic link does not prefix).
    let root = repo_root.to_string_lossy().into_owned();
    let mut dropped = Vec::new();
    let found = playwrightjson::retain_tests(&mut report, Some(&root), |id| {
        let keep = chosen.iter().any(|c| c == id);
        if !keep {
            dropped.push(id.to_owned());
        }
        keep
    });
    let bytes = serde_json::to_vec(&report).map_err(|error| output_error(error.to_string()))?;
    fs_err::write(cut, bytes)?;
    Ok(jest::Cut {
        found,
        ran_outside: dropped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::strings;

    #[test]
    fn one_test_is_its_project_an_anchored_file_and_an_anchored_title() {
        let playwright = Playwright::new(Some(strings(&["playwright", "test"])));
        let ids = ["[alpha] tests/a.spec.js::math > adds (1+1)".to_owned()];
        let selection = Playwright::chosen(&ids, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            playwright.argv(&selection, None),
            strings(&[
                "playwright",
                "test",
                "--retries=0",
                "--workers=1",
                "--project=alpha",
                r"--grep=/(?:^| )(?:math(?: @\S+)*(?: | > )adds \(1\+1\))(?: @\S+)*$/",
                r"/(?:^|\/)tests\/a\.spec\.js$/",
            ])
        );
        // No project: no `--project`.
        let ids = ["tests/a.spec.js::top".to_owned()];
        let argv = playwright.argv(&Playwright::chosen(&ids, false).expect("an id"), None);
        assert!(!argv.iter().any(|a| a.starts_with("--project")), "{argv:?}");
        assert!(split_id("no-separator").is_err());
        let two = [
            "[alpha] a.spec.js::x".to_owned(),
            "[beta] a.spec.js::y".to_owned(),
        ];
        assert!(Playwright::chosen(&two, false).is_err());
        // A batch names every project and file once.
        let Selection::Chosen {
            projects, files, ..
        } = Playwright::chosen(&two, true).expect("a batch")
        else {
            panic!("a chosen selection");
        };
        assert_eq!(
            (projects, files),
            (strings(&["alpha", "beta"]), strings(&["a.spec.js"]))
        );
    }

    #[test]
    fn the_suite_always_turns_retries_off_and_owns_its_report() {
        let playwright = Playwright::new(None);
        let argv = playwright.argv(&Selection::Suite, Some(Path::new("/scratch/out")));
        assert_eq!(
            argv,
            strings(&[
                "node_modules/.bin/playwright",
                "test",
                "--retries=0",
                "--reporter=list,json",
                "--output=/scratch/out",
            ])
        );
        assert!(matches!(
            refuse_shuffle(Arrangement::Shuffled(3)),
            Err(RunnerError::Unsupported { .. })
        ));
    }
}
