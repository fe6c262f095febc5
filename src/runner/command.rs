//! The `command` adapter: a user's argv template with `{test}`, `{report}` and `{seed}`
//! placeholders, filled element by element, never through a shell.
//!
//! The suite runs the template without the elements that mention `{test}`; one test runs
//! it with `{test}` replaced. `{report}` is a path in the scratch directory; without it
//! the command's stdout is taken as the report. `{seed}`, when present, gets a recorded
//! seed.

use super::{
    Adapter, Context, ListedTest, RunOptions, RunReport, RunnerError, RunnerKind, Seed, SeedSupport,
};

const TEST: &str = "{test}";
const REPORT: &str = "{report}";
const SEED: &str = "{seed}";

const SEED_CONTROLS: &str =
    "the command receives the seed in place of {seed}; what it fixes is up to the command";
const NO_SEED: &str = "the command's template has no {seed}, so there is no seed to record";

/// A user's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserCommand {
    template: Vec<String>,
}

impl UserCommand {
    /// The adapter for a template; it must name a program.
    pub fn new(command: Option<Vec<String>>) -> Result<Self, RunnerError> {
        match command {
            Some(template) if template.first().is_some_and(|p| !p.is_empty()) => {
                Ok(UserCommand { template })
            }
            _ => Err(RunnerError::BadCommand {
                kind: RunnerKind::Command,
                problem: "it needs `command = [\"program\", \"arg\", …]` with `{test}` and `{report}` placeholders".to_owned(),
            }),
        }
    }

    fn mentions(&self, placeholder: &str) -> bool {
        self.template
            .iter()
            .any(|element| element.contains(placeholder))
    }

    fn run(
        &self,
        context: &Context<'_>,
        test_id: Option<&str>,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let report = context.scratch_path("command-report");
        let report_text = report.to_string_lossy().into_owned();
        let seed = self.mentions(SEED).then(|| options.seed());
        let seed_text = seed.map(|s| s.to_string()).unwrap_or_default();
        let argv: Vec<String> = self
            .template
            .iter()
            .filter(|element| test_id.is_some() || !element.contains(TEST))
            .map(|element| {
                fill(
                    element,
                    &[
                        (TEST, test_id.unwrap_or_default()),
                        (REPORT, &report_text),
                        (SEED, &seed_text),
                    ],
                )
            })
            .collect();
        let invocation = context.invocation("command", argv);
        let invocation = if self.mentions(REPORT) {
            invocation.report_at(&report)
        } else {
            invocation.stdout_to(&report)
        };
        let record = context.run(invocation)?;
        context.check_ran(RunnerKind::Command, &record, &report)?;
        let run = RunReport {
            runner: RunnerKind::Command,
            report,
            format: None,
            seed: seed.map(|value| Seed {
                value,
                argument: value.to_string(),
                controls: SEED_CONTROLS,
            }),
            workers: None,
            invocations: vec![record],
            warnings: Vec::new(),
        };
        context.check_frames(&run)?;
        Ok(run)
    }
}

/// Replaces placeholders in one pass, left to right, so that text put in (a test id that
/// contains `{report}`) is never replaced again.
fn fill(element: &str, values: &[(&str, &str)]) -> String {
    let mut filled = String::with_capacity(element.len());
    let mut rest = element;
    'scan: while !rest.is_empty() {
        for (placeholder, value) in values {
            if let Some(after) = rest.strip_prefix(placeholder) {
                filled.push_str(value);
                rest = after;
                continue 'scan;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            filled.push(c);
        }
        rest = chars.as_str();
    }
    filled
}

impl Adapter for UserCommand {
    fn kind(&self) -> RunnerKind {
        RunnerKind::Command
    }

    fn seed_support(&self) -> SeedSupport {
        if self.mentions(SEED) {
            SeedSupport::Controls(SEED_CONTROLS)
        } else {
            SeedSupport::None(NO_SEED)
        }
    }

    fn run_suite(
        &self,
        context: &Context<'_>,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, None, options)
    }

    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        if !self.mentions(TEST) {
            return Err(RunnerError::Unsupported {
                kind: RunnerKind::Command,
                what: "run one test: its template has no {test}",
            });
        }
        self.run(context, Some(test_id), options)
    }

    fn list(&self, _context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        Err(RunnerError::Unsupported {
            kind: RunnerKind::Command,
            what: "list tests: a command template has no listing form",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filling_never_replaces_inserted_text() {
        let values = [(TEST, "{report}$(x)"), (REPORT, "/tmp/r.xml"), (SEED, "7")];
        assert_eq!(fill("--filter={test}", &values), "--filter={report}$(x)");
        assert_eq!(fill("{report}", &values), "/tmp/r.xml");
        assert_eq!(fill("s{seed}-{test}é", &values), "s7-{report}$(x)é");
        assert_eq!(fill("{tes", &values), "{tes");
    }
}
