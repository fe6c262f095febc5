//! JavaScript runners candor drives through a reporter of its own (mocha, node's test
//! runner): the reporters' sources, written to the scratch folder for each run, and the run
//! that reads what they wrote. Both write jest's JSON report (`results::jestjson`), which
//! keeps what the runners' built-in JUnit and JSON reporters lose: the test's file (node's
//! junit reporter has none, mocha's xunit reporter none either), the describe path as a
//! list rather than one space-joined string, and retried attempts (`invocations`,
//! `retryReasons`).

use std::path::PathBuf;

use super::{Context, ListedTest, RunReport, RunnerError, RunnerKind, Seed, jest};
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

/// What an adapter asks of one run.
pub(super) struct Run<'a> {
    pub kind: RunnerKind,
    pub reporter: &'a Reporter,
    /// The ids the report is cut down to, for a run of chosen tests.
    pub chosen: Option<&'a [String]>,
    pub seed: Option<Seed>,
    pub workers: Option<u32>,
}

impl Run<'_> {
    /// Runs the argv `argv` builds from the paths, checks that the runner ran, and returns
    /// the report with its paths relative to the repository root (and only the chosen
    /// tests); a chosen id the report does not hold is a runner that could not run.
    pub fn execute(
        self,
        context: &Context<'_>,
        argv: impl FnOnce(&Paths) -> Vec<String>,
    ) -> Result<RunReport, RunnerError> {
        let name = self.kind.as_str();
        let paths = Paths {
            reporter: self.reporter.write(context)?,
            report: context.scratch_path(&format!("{name}.json")),
        };
        let mut invocation = context
            .invocation(name, argv(&paths))
            .report_at(&paths.report);
        if self.kind == RunnerKind::Mocha {
            invocation = invocation.env(MOCHA_REPORT_VARIABLE, &paths.report.to_string_lossy());
        }
        let record = context.run(invocation)?;
        context.check_ran(self.kind, &record, &paths.report)?;
        // Stopped by a clock: both reporters write when the run ends (node opens the
        // destination at the start, empty), so there is none to cut down. The run is
        // returned as it is and its caller judges the time-out, as for jest.
        let written = std::fs::metadata(&paths.report).is_ok_and(|m| m.len() > 0);
        let timed_out = record.outcome.timed_out && !written;
        let mut report = paths.report;
        let found = if timed_out {
            Vec::new()
        } else {
            let rewritten = context.scratch_path(&format!("{name}-report.json"));
            let found = jest::rewrite_report(&report, &rewritten, self.chosen, &context.repo_root)?;
            report = rewritten;
            found
        };
        if let Some(missing) = self
            .chosen
            .filter(|_| !timed_out)
            .and_then(|ids| ids.iter().find(|id| !found.contains(id)))
        {
            return Err(RunnerError::CouldNotRun(Box::new(super::NotRun {
                runner: self.kind,
                why: format!("{name} ran no test with the id `{missing}`"),
                quoted: Vec::new(),
                log: record.log.clone(),
                unknown_test: true,
            })));
        }
        let run = RunReport {
            runner: self.kind,
            report,
            format: Some(Format::JestJson),
            seed: self.seed,
            workers: self.workers,
            invocations: vec![record],
        };
        context.check_frames(&run)?;
        Ok(run)
    }

    /// Runs a listing (no test runs) and returns every test it names.
    pub fn list(
        self,
        context: &Context<'_>,
        argv: impl FnOnce(&Paths) -> Vec<String>,
    ) -> Result<Vec<ListedTest>, RunnerError> {
        let name = format!("{}-list", self.kind);
        let paths = Paths {
            reporter: self.reporter.write(context)?,
            report: context.scratch_path(&format!("{name}.json")),
        };
        let mut invocation = context
            .invocation(&name, argv(&paths))
            .report_at(&paths.report);
        if self.kind == RunnerKind::Mocha {
            invocation = invocation.env(MOCHA_REPORT_VARIABLE, &paths.report.to_string_lossy());
        }
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
