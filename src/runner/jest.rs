//! The jest and vitest adapters (vitest writes jest's JSON report and takes the same kind
//! of title pattern; where they differ is said below).
//!
//! jest: jest's JSON report (`--json --outputFile=PATH` in the scratch folder,
//! read natively by `results::jestjson`: describe path, line, retry `invocations`), one
//! test selected by its file (`--runTestsByPath`, after `--`) and an anchored, escaped
//! `--testNamePattern`, the order shuffled by `--randomize --seed=N`.
//!
//! Retries: jest has no command-line switch for `jest.retryTimes` (test code calls it);
//! a retried test's `invocations` and `retryReasons` are in the report and read as
//! retries (a pass after them is a flaky pass), never as a plain pass.
//!
//! For `candor order`: each test file runs in its own module registry, so a file is the
//! scope tests share state in. jest runs a file's selected tests in the order they are
//! defined in it, whatever order they are named in; `--randomize --seed=N` shuffles them.
//! A custom `testSequencer` orders files, which share nothing, so it cannot give a
//! chosen order of tests either. jest cannot repeat a test inside one process.
//!
//! vitest: `vitest run --reporter=default --reporter=json --outputFile.json=PATH`, the
//! same JSON (`results::jestjson`); one test by `--testNamePattern` and its file as a
//! filter (vitest's positional arguments are path filters, and its argument parser takes
//! nothing after `--` as a filter, so a file starting with `-` is refused instead);
//! `--retry=0` turns its retries off; `--sequence.shuffle --sequence.seed=N` shuffles
//! files and the tests inside them. A file's tests share its module state, as in jest;
//! vitest's `sequence.sequencer` orders files only, so "as given" is definition order.

use std::path::Path;

use super::js_reporter;
use super::{
    Adapter, Arrangement, BatchOrdering, Context, GivenOrder, ListedTest, OrderSupport, RunOptions,
    RunReport, RunnerError, RunnerKind, Seed, SeedSupport, available_parallelism, option_value,
    strings,
};
use crate::results::{Format, ids, jestjson};

const NO_SHUFFLE: &str = "this jest is older than 29.2 and has no --randomize or --seed: files run in jest's own order and each file's tests in the order they are defined";

/// The first jest with `--randomize` and `--seed`.
const FIRST_SHUFFLING_JEST: (u64, u64) = (29, 2);

const SEED_CONTROLS: &str = "jest's --seed with --randomize fixes the shuffled order of the tests inside each file and the value of jest.getSeed(); it does not fix the order files run in across workers, timers, or Math.random";

const BATCH_SEED_CONTROLS: &str = "jest's --seed without --randomize fixes the value of jest.getSeed(); each file's tests run in the order they are defined";

const VITEST_BATCH_SEED_CONTROLS: &str = "vitest's --sequence.seed without --sequence.shuffle changes no order: each file's tests run in the order they are defined";

const VITEST_SEED_CONTROLS: &str = "vitest's --sequence.seed with --sequence.shuffle fixes the shuffled order of files and of the tests inside each file; it does not fix how files spread over workers, timers, or Math.random";

const DEFINITION_ORDER: &str = "jest runs a file's chosen tests in the order they are defined in it, whatever order they are named in; other orders come from --randomize seeds";

const VITEST_DEFINITION_ORDER: &str = "vitest runs a file's chosen tests in the order they are defined in it, whatever order they are named in; other orders come from --sequence.shuffle seeds";

/// jest takes a seed between -2^31 and 2^31-1.
const SEED_MASK: u64 = 0x7fff_ffff;

/// A pattern no title matches: the listing collects every test and runs none.
const MATCH_NOTHING: &str = "(?!)";

/// jest or vitest through a command prefix (the repository's `node_modules/.bin/jest`,
/// or `node_modules/.bin/vitest run`, unless `[runner] command` says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jest {
    prefix: Vec<String>,
    kind: RunnerKind,
    /// Whether the runner takes a shuffle seed: jest before 29.2 refuses `--randomize`.
    shuffles: bool,
}

/// Which tests a run selects.
enum Selection<'a> {
    Suite,
    /// The files (one, except in a batch) and the titles pattern.
    Chosen {
        files: Vec<&'a str>,
        pattern: String,
        /// The ids the report is cut down to.
        ids: Vec<String>,
    },
    /// Every test collected, none run.
    Listing,
}

impl Jest {
    /// The adapter for a prefix.
    pub fn new(command: Option<Vec<String>>) -> Self {
        Jest {
            prefix: command.unwrap_or_else(|| RunnerKind::Jest.default_command()),
            kind: RunnerKind::Jest,
            shuffles: true,
        }
    }

    /// The jest adapter for a prefix, told by the installed jest's version whether it can
    /// shuffle (a version it cannot read is taken to be a current one).
    pub fn probe(command: Option<Vec<String>>, repo_root: &Path) -> Self {
        let mut jest = Jest::new(command);
        jest.shuffles = installed_jest_version(&jest.prefix, repo_root)
            .is_none_or(|version| version >= FIRST_SHUFFLING_JEST);
        jest
    }

    /// The vitest adapter for a prefix.
    pub fn vitest(command: Option<Vec<String>>) -> Self {
        Jest {
            prefix: command.unwrap_or_else(|| RunnerKind::Vitest.default_command()),
            kind: RunnerKind::Vitest,
            shuffles: true,
        }
    }

    fn vitest_flavour(&self) -> bool {
        self.kind == RunnerKind::Vitest
    }

    fn seed_controls(&self) -> &'static str {
        if self.vitest_flavour() {
            VITEST_SEED_CONTROLS
        } else {
            SEED_CONTROLS
        }
    }

    fn seed_argument(&self, seed: u64) -> String {
        if self.vitest_flavour() {
            format!("--sequence.seed={seed}")
        } else {
            format!("--seed={seed}")
        }
    }

    fn argv(
        &self,
        selection: &Selection<'_>,
        shuffle: Option<u64>,
        report: Option<&Path>,
    ) -> Vec<String> {
        let shuffle = shuffle.filter(|_| self.shuffles);
        let mut argv = self.prefix.clone();
        if self.vitest_flavour() {
            // No retries; in CI vitest never writes a missing snapshot.
            argv.push("--retry=0".to_owned());
            if let Some(report) = report {
                argv.extend(strings(&["--reporter=default", "--reporter=json"]));
                argv.push(format!("--outputFile.json={}", report.display()));
            }
            if let Some(seed) = shuffle {
                argv.push("--sequence.shuffle".to_owned());
                argv.push(self.seed_argument(seed));
            }
        } else {
            // `--ci`: a missing snapshot fails instead of being written.
            argv.extend(strings(&["--ci", "--watchAll=false"]));
            if let Some(report) = report {
                argv.extend(strings(&["--json", "--testLocationInResults"]));
                argv.push(format!("--outputFile={}", report.display()));
            }
            if let Some(seed) = shuffle {
                argv.push("--randomize".to_owned());
                argv.push(self.seed_argument(seed));
            }
        }
        match selection {
            Selection::Suite => {}
            Selection::Listing => argv.push(format!("--testNamePattern={MATCH_NOTHING}")),
            Selection::Chosen { files, pattern, .. } => {
                // Attached, so a pattern starting with `-` is the option's value; the files
                // after `--`, so they are never read as options.
                argv.push(format!("--testNamePattern={pattern}"));
                if self.vitest_flavour() {
                    // Filters; `split_id` refused a file starting with `-`.
                    argv.extend(files.iter().map(|f| (*f).to_owned()));
                } else {
                    argv.push("--runTestsByPath".to_owned());
                    argv.push("--".to_owned());
                    argv.extend(files.iter().map(|f| (*f).to_owned()));
                }
            }
        }
        argv
    }

    fn run(
        &self,
        context: &Context<'_>,
        selection: &Selection<'_>,
        shuffle: Option<u64>,
        batch: Option<u64>,
    ) -> Result<RunReport, RunnerError> {
        let shuffle = shuffle.filter(|_| self.shuffles);
        let name = self.kind.as_str();
        let mut report = context.scratch_path(&format!("{name}.json"));
        let mut argv = self.argv(selection, shuffle, Some(&report));
        // A batch keeps definition order (the lane spreads a file's tests over its rounds'
        // processes) and still gets the lane's seed, which `jest.getSeed()` returns.
        let pinned = batch.filter(|_| self.shuffles && shuffle.is_none());
        if let Some(seed) = pinned {
            argv.insert(self.prefix.len(), self.seed_argument(seed));
        }
        let invocation = context.invocation(name, argv).report_at(&report);
        let record = context.run(invocation)?;
        context.check_ran(self.kind, &record, &report)?;
        let chosen = match selection {
            Selection::Chosen { ids, .. } => Some(ids.as_slice()),
            _ => None,
        };
        // Stopped by a clock: jest writes its report when it ends, so there is none to cut
        // down. The run is returned as it is and its caller judges the time-out (the lane
        // counts a replay not made, a comparison a timed-out run), as for every runner.
        let timed_out = record.outcome.timed_out && !report.is_file();
        let found = if timed_out {
            Vec::new()
        } else {
            let rewritten = context.scratch_path(&format!("{name}-report.json"));
            let cut = rewrite_report(&report, &rewritten, chosen, &context.repo_root)?;
            report = rewritten;
            let scope = |id: &str| self.process_scope(id).map(str::to_owned);
            if let Some(why) = batch.and_then(|_| cut.inexact(chosen.unwrap_or_default(), scope)) {
                return Err(inexact_selection(self.kind, why, &record));
            }
            cut.found
        };
        if let Some(chosen) = chosen.filter(|_| !timed_out) {
            js_reporter::check_found(self.kind, chosen, &found, &record)?;
        }
        let run = RunReport {
            runner: self.kind,
            report,
            format: Some(Format::JestJson),
            seed: match (shuffle, pinned) {
                (Some(value), _) => Some(Seed {
                    value,
                    argument: self.seed_argument(value),
                    controls: self.seed_controls(),
                }),
                (None, Some(value)) => Some(Seed {
                    value,
                    argument: self.seed_argument(value),
                    controls: if self.vitest_flavour() {
                        VITEST_BATCH_SEED_CONTROLS
                    } else {
                        BATCH_SEED_CONTROLS
                    },
                }),
                (None, None) => None,
            },
            workers: match selection {
                Selection::Chosen { files, .. } if files.len() == 1 => Some(1),
                _ => self.workers(),
            },
            invocations: vec![record],
            warnings: Vec::new(),
        };
        context.check_frames(&run)?;
        Ok(run)
    }

    /// The selection of tests by their ids: of one file, unless `many_files` (a batch).
    fn chosen<'a>(
        &self,
        test_ids: &'a [String],
        many_files: bool,
    ) -> Result<Selection<'a>, RunnerError> {
        let (files, titles) = js_reporter::files_and_titles(self.kind, test_ids)?;
        if files.len() > 1 && !many_files {
            return Err(RunnerError::NotATestId {
                id: test_ids.join(", "),
                kind: self.kind,
                reason: "the tests of one ordered run must be in one file".to_owned(),
            });
        }
        let alternatives: Vec<String> = titles.iter().map(|t| title_pattern(t)).collect();
        Ok(Selection::Chosen {
            files,
            pattern: js_reporter::anchored(&alternatives),
            ids: test_ids.to_vec(),
        })
    }

    /// `--maxWorkers`/`-w` from the prefix, 1 for `--runInBand`/`-i`, else jest's default:
    /// one less than the machine's parallelism.
    fn workers(&self) -> Option<u32> {
        if self.prefix.iter().any(|a| a == "--runInBand" || a == "-i") {
            return Some(1);
        }
        match option_value(&self.prefix, &["--maxWorkers", "-w"], false) {
            Some(value) => value.parse().ok(),
            None => available_parallelism().map(|n| n.saturating_sub(1).max(1)),
        }
    }
}

impl Adapter for Jest {
    fn kind(&self) -> RunnerKind {
        self.kind
    }

    fn seed_support(&self) -> SeedSupport {
        if self.shuffles {
            SeedSupport::Controls(self.seed_controls())
        } else {
            SeedSupport::None(NO_SHUFFLE)
        }
    }

    fn run_suite(
        &self,
        context: &Context<'_>,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Selection::Suite, Some(jest_seed(options)), None)
    }

    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let ids = [test_id.to_owned()];
        self.run(
            context,
            &self.chosen(&ids, false)?,
            Some(jest_seed(options)),
            None,
        )
    }

    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        let name = format!("{}-list", self.kind);
        let report = context.scratch_path(&format!("{name}.json"));
        let argv = self.argv(&Selection::Listing, None, Some(&report));
        let record = context.run(context.invocation(&name, argv).report_at(&report))?;
        context.check_ran(self.kind, &record, &report)?;
        let options = crate::results::ParseOptions {
            repo_root: Some(context.repo_root.to_string_lossy().into_owned()),
            ..crate::results::ParseOptions::default()
        };
        let (executions, _) = crate::results::parse_all(fs_err::File::open(&report)?, &options)
            .map_err(|error| RunnerError::Output {
                what: format!("{} --json (listing)", self.kind),
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
            given: GivenOrder::Fixed(if self.vitest_flavour() {
                VITEST_DEFINITION_ORDER
            } else {
                DEFINITION_ORDER
            }),
            shuffles: self.shuffles,
            repeats: false,
            seed_reseeds_tests: false,
            unseeded: false,
        }
    }

    fn process_scope<'t>(&self, test_id: &'t str) -> Option<&'t str> {
        // Each test file has its own module registry: files share no state.
        test_id.split_once("::").map(|(file, _)| file)
    }

    fn run_ordered(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let shuffle = match arrangement {
            Arrangement::AsGiven => None,
            Arrangement::Shuffled(seed) => Some(seed & SEED_MASK),
        };
        self.run(context, &self.chosen(test_ids, false)?, shuffle, None)
    }

    fn ordered_command(
        &self,
        test_ids: &[String],
        arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<Vec<String>, RunnerError> {
        let shuffle = match arrangement {
            Arrangement::AsGiven => None,
            Arrangement::Shuffled(seed) => Some(seed & SEED_MASK),
        };
        Ok(self.argv(&self.chosen(test_ids, false)?, shuffle, None))
    }

    fn batches(&self) -> bool {
        true
    }

    fn batch_ordering(&self) -> BatchOrdering {
        match self.order_support().given {
            GivenOrder::Fixed(sentence) | GivenOrder::Unsupported(sentence) => {
                BatchOrdering::Fixed(sentence)
            }
            GivenOrder::Kept => BatchOrdering::Kept,
        }
    }

    /// The batch's files (`--runTestsByPath -- FILES` for jest, path filters for vitest)
    /// and one anchored pattern of every test's full name, with the lane's seed. A pattern
    /// that also ran a test outside the batch in the file of one of its tests, or one of
    /// two tests under the same id, is no exact selection: the runner could not run the
    /// batch, and the lane replays its tests alone.
    fn run_batch(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(
            context,
            &self.chosen(test_ids, true)?,
            None,
            Some(jest_seed(options)),
        )
    }
}

/// A batch whose pattern selected more than its tests: the runner could not run it as
/// asked.
pub(super) fn inexact_selection(
    kind: RunnerKind,
    inexact: Inexact,
    record: &super::InvocationRecord,
) -> RunnerError {
    RunnerError::CouldNotRun(Box::new(super::NotRun {
        apart: inexact.apart,
        runner: kind,
        why: inexact.why,
        quoted: Vec::new(),
        log: record.log.clone(),
        unknown_test: false,
    }))
}

/// The (major, minor) version of the jest the prefix starts: from the `package.json` of
/// the `jest` or `jest-cli` package its program lives in (`node_modules/.bin/jest` links
/// into it), else the repository's `node_modules/jest`. Read from disk because asking jest
/// costs a node start on every run.
fn installed_jest_version(prefix: &[String], repo_root: &Path) -> Option<(u64, u64)> {
    let program = prefix.first().map(Path::new);
    let package_dirs = program
        .and_then(|program| program.canonicalize().ok())
        .into_iter()
        .flat_map(|program| {
            program
                .ancestors()
                .skip(1)
                .map(Path::to_path_buf)
                .collect::<Vec<_>>()
        })
        .chain(std::iter::once(repo_root.join("node_modules").join("jest")));
    package_dirs
        .filter_map(|dir| std::fs::read_to_string(dir.join("package.json")).ok())
        .filter_map(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .find(|package| matches!(package["name"].as_str(), Some("jest" | "jest-cli")))
        .and_then(|package| major_minor(package["version"].as_str()?))
}

/// `29.7.0`, `30.0.0-alpha.1` → (29, 7), (30, 0).
fn major_minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.split(['.', '-']);
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The seed as jest takes it: below 2^31.
fn jest_seed(options: RunOptions) -> u64 {
    options.seed() & SEED_MASK
}

/// `file::describe > title` into the file and the titles.
pub(super) fn split_id(kind: RunnerKind, test_id: &str) -> Result<(&str, Vec<&str>), RunnerError> {
    let not_an_id = |reason: &str| RunnerError::NotATestId {
        id: test_id.to_owned(),
        kind,
        reason: reason.to_owned(),
    };
    let Some((file, titles)) = ids::js_titles(test_id) else {
        return Err(not_an_id(
            "a JavaScript test id is `path/to/file.test.js::describe > title`",
        ));
    };
    if file.starts_with('-') {
        return Err(not_an_id("the file part starts with `-`"));
    }
    Ok((file, titles))
}

/// The pattern matching one test's full name, which jest builds by joining the describe
/// titles and the test's title with spaces. Each piece is escaped for a JavaScript
/// `RegExp`; between pieces a space or ` > ` (a title that itself holds ` > ` was split
/// at it).
pub(super) fn title_pattern(titles: &[&str]) -> String {
    titles
        .iter()
        .map(|title| js_regex_escape(title))
        .collect::<Vec<_>>()
        .join("(?: | > )")
}

/// Escapes every character that is special in a JavaScript regular expression (with or
/// without the `u` flag), so the title matches itself only.
pub(super) fn js_regex_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '^'
                | '$'
                | '.'
                | '*'
                | '+'
                | '?'
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '|'
                | '/'
        ) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Writes to `rewritten` the report at `raw` with its test files' paths relative to the
/// repository root (jest writes absolute ones: the report then reads the same wherever it
/// is ingested, and a merge base's worktree gives the ids the branch does), and, when
/// `chosen` names tests, with only those (jest reports every other test of the file it
/// ran as skipped); returns the ids it holds and the tests it dropped that ran. A file that could not run is kept whole:
/// that is the run's answer. A test the run's title filter left out (`filtered`, as
/// candor's reporter for node's test runner marks it) is dropped: it did not run.
pub(super) fn rewrite_report(
    raw: &Path,
    rewritten: &Path,
    chosen: Option<&[String]>,
    repo_root: &Path,
) -> Result<Cut, RunnerError> {
    let output_error = |message: String| RunnerError::Output {
        what: "the JSON report".to_owned(),
        message,
    };
    let mut report: serde_json::Value = serde_json::from_slice(&fs_err::read(raw)?)
        .map_err(|error| output_error(error.to_string()))?;
    // jest prints real paths: the root as given and as resolved (a temporary folder
    // behind a symbolic link).
    let roots: Vec<String> = [Some(repo_root.to_path_buf()), repo_root.canonicalize().ok()]
        .into_iter()
        .flatten()
        .map(|root| {
            root.to_string_lossy()
                .replace('\\', "/")
                .trim_end_matches('/')
                .to_owned()
        })
        .collect();
    // Coverage is no test result, and with jest's keys sorted it would come first and push
    // the results past what a reader sniffs (dayjs: 600 KB of it, #20).
    if let Some(report) = report.as_object_mut() {
        report.remove("coverageMap");
    }
    let mut found = Vec::new();
    let mut dropped = Vec::new();
    if let Some(files) = report
        .get_mut("testResults")
        .and_then(serde_json::Value::as_array_mut)
    {
        for file in files {
            let name = file
                .get("name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .replace('\\', "/");
            let relative = roots
                .iter()
                .find_map(|root| name.strip_prefix(root.as_str())?.strip_prefix('/'))
                .unwrap_or(&name)
                .to_owned();
            file["name"] = serde_json::Value::String(relative.clone());
            let Some(assertions) = file
                .get_mut("assertionResults")
                .and_then(serde_json::Value::as_array_mut)
            else {
                continue;
            };
            assertions.retain(|assertion| {
                if assertion.get("status").and_then(serde_json::Value::as_str) == Some("filtered") {
                    return false;
                }
                let mut titles: Vec<String> = assertion
                    .get("ancestorTitles")
                    .and_then(serde_json::Value::as_array)
                    .map(|titles| titles.iter().map(jestjson::spell_js_title).collect())
                    .unwrap_or_default();
                titles.push(
                    assertion
                        .get("title")
                        .map(jestjson::spell_js_title)
                        .unwrap_or_default(),
                );
                let id = ids::js(&relative, &titles);
                let keep = chosen.is_none_or(|ids| ids.contains(&id));
                let status = assertion.get("status").and_then(serde_json::Value::as_str);
                if keep {
                    found.push(id);
                } else if matches!(status, Some("passed" | "failed")) {
                    dropped.push(id);
                }
                keep
            });
        }
    }
    let bytes = serde_json::to_vec(&report).map_err(|error| output_error(error.to_string()))?;
    fs_err::write(rewritten, bytes)?;
    Ok(Cut {
        found,
        ran_outside: dropped,
    })
}

/// What cutting a report to the chosen tests found.
pub(super) struct Cut {
    /// The ids kept, in the report's order (an id twice when two tests share it).
    pub found: Vec<String>,
    /// Tests the run ran that were not chosen (a title pattern matched them too).
    pub ran_outside: Vec<String>,
}

impl Cut {
    /// Why the run was no exact selection of `chosen`, if it was not: a chosen id the
    /// report holds twice (two tests under one id), or a test outside the chosen ones that
    /// ran in the process scope (`scope`) of a chosen one, where it could change the
    /// chosen one's outcome. A test that ran in another scope shares nothing with them.
    pub fn inexact(
        &self,
        chosen: &[String],
        scope: impl Fn(&str) -> Option<String>,
    ) -> Option<Inexact> {
        let twice: Vec<String> = chosen
            .iter()
            .filter(|id| self.found.iter().filter(|f| f == id).count() > 1)
            .cloned()
            .collect();
        if let Some(first) = twice.first() {
            return Some(Inexact {
                why: format!(
                    "two tests have the id `{first}`: no title pattern selects one of them"
                ),
                apart: twice,
            });
        }
        let scopes: Vec<String> = chosen.iter().filter_map(|id| scope(id)).collect();
        let outside = self
            .ran_outside
            .iter()
            .find(|id| scope(id).is_some_and(|s| scopes.contains(&s)))?;
        Some(Inexact {
            why: format!("the batch's title pattern also ran `{outside}`, beside its tests"),
            apart: Vec::new(),
        })
    }
}

/// Why a batch's run was no exact selection of its tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inexact {
    /// In one clause, for the report.
    pub why: String,
    /// The chosen ids no selection can run apart from other tests (each names two tests);
    /// empty when the pattern as a whole caught a test outside the batch.
    pub apart: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository whose `node_modules/.bin/jest` links into a jest of `version`.
    fn repository_with_jest(version: &str) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let package = root.path().join("node_modules/jest");
        std::fs::create_dir_all(package.join("bin")).unwrap();
        std::fs::create_dir_all(root.path().join("node_modules/.bin")).unwrap();
        std::fs::write(package.join("bin/jest.js"), "").unwrap();
        std::fs::write(
            package.join("package.json"),
            format!(r#"{{"name": "jest", "version": "{version}"}}"#),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            "../jest/bin/jest.js",
            root.path().join("node_modules/.bin/jest"),
        )
        .unwrap();
        root
    }

    #[test]
    fn a_report_with_coverage_is_still_read_as_jest_s_report() {
        let folder = tempfile::tempdir().unwrap();
        let raw = folder.path().join("jest.json");
        let big_map = format!(r#"{{"/r/src/a.js": {{"s": "{}"}}}}"#, "1".repeat(300_000));
        std::fs::write(
            &raw,
            format!(
                r#"{{"numTotalTests":1,"testResults":[{{"name":"/r/a.test.js","status":"passed","assertionResults":[{{"ancestorTitles":[],"title":"t","status":"passed"}}]}}],"coverageMap":{big_map}}}"#
            ),
        )
        .unwrap();
        let rewritten = folder.path().join("report.json");
        let cut = rewrite_report(&raw, &rewritten, None, Path::new("/r")).unwrap();
        assert_eq!(cut.found, ["a.test.js::t"]);
        let text = std::fs::read(&rewritten).unwrap();
        assert!(
            text.len() < 1_000,
            "the coverage map was kept: {} bytes",
            text.len()
        );
        assert_eq!(crate::results::detect(&text).unwrap(), Format::JestJson);
    }

    #[test]
    fn a_jest_before_29_2_runs_unshuffled_and_says_so() {
        // dayjs pins jest 22, which refuses `--randomize` and ran nothing (#20).
        let old = repository_with_jest("22.4.4");
        let prefix = vec![
            old.path()
                .join("node_modules/.bin/jest")
                .display()
                .to_string(),
        ];
        let jest = Jest::probe(Some(prefix), old.path());
        let argv = jest.argv(&Selection::Suite, Some(7), None);
        assert!(
            !argv
                .iter()
                .any(|a| a == "--randomize" || a.starts_with("--seed")),
            "{argv:?}"
        );
        assert!(matches!(jest.seed_support(), SeedSupport::None(_)));
        assert!(!jest.order_support().shuffles);

        let current = repository_with_jest("29.7.0");
        let jest = Jest::probe(None, current.path());
        let argv = jest.argv(&Selection::Suite, Some(7), None);
        assert!(argv.iter().any(|a| a == "--randomize"), "{argv:?}");
        assert!(argv.iter().any(|a| a == "--seed=7"), "{argv:?}");
        assert!(jest.order_support().shuffles);
        assert_eq!(major_minor("30.0.0-alpha.1"), Some((30, 0)));
        assert_eq!(major_minor("next"), None);
    }

    #[test]
    fn titles_are_escaped_for_javascript_regexps() {
        assert_eq!(
            title_pattern(&["weird (a+b)* [x] | ^$", "a.b/c\\d"]),
            r"weird \(a\+b\)\* \[x\] \| \^\$(?: | > )a\.b\/c\\d"
        );
        // Quotes, backquotes, unicode and `::` are plain characters.
        assert_eq!(
            js_regex_escape("\"q\" 'q' `b` ünï :: $HOME"),
            "\"q\" 'q' `b` ünï :: \\$HOME"
        );
    }

    #[test]
    fn one_test_is_its_file_after_a_double_dash_and_an_anchored_pattern() {
        let jest = Jest::new(Some(strings(&["jest"])));
        let ids = ["__tests__/a.test.js::math > adds".to_owned()];
        let selection = jest.chosen(&ids, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            jest.argv(&selection, Some(7), None),
            strings(&[
                "jest",
                "--ci",
                "--watchAll=false",
                "--randomize",
                "--seed=7",
                "--testNamePattern=^math(?: | > )adds$",
                "--runTestsByPath",
                "--",
                "__tests__/a.test.js",
            ])
        );
        assert!(split_id(RunnerKind::Jest, "-c=evil.js::x").is_err());
        assert!(split_id(RunnerKind::Jest, "no-separator").is_err());
        let two = ["a.test.js::x".to_owned(), "b.test.js::y".to_owned()];
        assert!(jest.chosen(&two, false).is_err());
        assert!(jest.chosen(&two, true).is_ok());
    }

    #[test]
    fn seeds_fit_jest() {
        let seed = jest_seed(RunOptions {
            seed: Some(u64::from(u32::MAX)),
        });
        assert!(seed <= 0x7fff_ffff);
    }
}
