//! The words around a verdict: the reproduction command quoted for pasting, the
//! suggested fix and the quarantine ticket, each naming the polluter or state-setter and
//! the shared state when the failure shows it.

use std::fmt::Write as _;

use super::driver::{Investigation, Verdict};
use super::state::SharedState;

/// `argv` as one line a POSIX shell reads back into the same arguments: an argument of
/// only safe characters stays bare, any other is single-quoted (a `'` inside becomes
/// `'\''`).
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|argument| shell_word(argument))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_word(argument: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    if !argument.is_empty() && argument.chars().all(safe) {
        argument.to_owned()
    } else {
        format!("'{}'", argument.replace('\'', r"'\''"))
    }
}

fn listed(tests: &[String]) -> String {
    tests
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(" and ")
}

fn state_words(states: &[SharedState]) -> Option<String> {
    (!states.is_empty()).then(|| {
        states
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// The seed finding in one line: without reseeding (when that ran), how many of the seeds
/// tried failed it, and the seeds named; `None` unless the verdict is seed-dependent.
pub fn seed_words(investigation: &Investigation) -> Option<String> {
    let Verdict::SeedDependent {
        failing_seed,
        passing_seed,
    } = &investigation.verdict
    else {
        return None;
    };
    let mut parts = Vec::new();
    if let Some(unseeded) = investigation.unseeded.filter(|t| t.runs > 0 && t.red == 0) {
        parts.push(format!(
            "passes without reseeding ({} of {} runs)",
            unseeded.runs, unseeded.runs
        ));
    }
    let seeds = investigation.alone_by_seed.len();
    let failing = investigation
        .alone_by_seed
        .iter()
        .filter(|entry| entry.outcomes.first().is_some_and(|o| o.is_red()))
        .count();
    parts.push(format!("fails with {failing} of {seeds} seeds tried"));
    parts.push(match passing_seed {
        Some(passing) => {
            format!("fails with seed {failing_seed} every run, passes with seed {passing}")
        }
        None => format!("fails with seed {failing_seed} every run; no seed tried passed"),
    });
    Some(parts.join("; "))
}

/// What to change, in one paragraph; `None` when the verdict explains nothing.
pub fn suggested_fix(investigation: &Investigation, states: &[SharedState]) -> Option<String> {
    let test = &investigation.test;
    let state = state_words(states);
    Some(match &investigation.verdict {
        Verdict::OrderDependentVictim { polluters } => {
            let what = state.map_or_else(
                || "state it changes".to_owned(),
                |state| format!("the state it changes ({state})"),
            );
            format!(
                "{} leaves {what} behind, and `{test}` assumes it is untouched. Make the polluter restore it when it ends (a fixture with teardown, monkeypatch, t.Cleanup), or make `{test}` set up the state it relies on.",
                listed(polluters)
            )
        }
        Verdict::OrderDependentBrittle { state_setters } => {
            let what = state.map_or_else(|| "state".to_owned(), |state| format!("state ({state})"));
            format!(
                "`{test}` passes only after {} has set up {what}. Give `{test}` its own setup (a fixture) so that it passes alone and in any order.",
                listed(state_setters)
            )
        }
        Verdict::SeedDependent { failing_seed, .. } => {
            let others = if investigation
                .unseeded
                .is_some_and(|t| t.runs > 0 && t.red == 0)
            {
                "passes without the runner's reseeding"
            } else {
                "passes with others"
            };
            format!(
                "`{test}` fails with seed {failing_seed} and {others}: its outcome follows the random values it draws. Make it hold for every value, or draw from a generator it seeds itself (a `random.Random(n)` of its own rather than a module-level `random.seed`, which the runner's reseeding overrides)."
            )
        }
        Verdict::RepeatDependent { count } => {
            let what = state.map_or_else(|| "state".to_owned(), |state| format!("state ({state})"));
            format!(
                "`{test}` fails when it runs {count} times in one process: its first run leaves {what} that its own setup does not reset. Reset it in the test's setup or teardown."
            )
        }
        _ => return None,
    })
}

/// A quarantine ticket's title and body.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Ticket {
    /// One line.
    pub title: String,
    /// Markdown.
    pub body: String,
}

/// The ticket for a verdict that explains a red; `None` otherwise.
pub fn ticket(
    investigation: &Investigation,
    states: &[SharedState],
    reproduction: Option<&str>,
) -> Option<Ticket> {
    let fix = suggested_fix(investigation, states)?;
    let test = &investigation.test;
    let verdict = &investigation.verdict;
    let title = match verdict {
        Verdict::OrderDependentVictim { polluters } => {
            format!("{test} fails after {}", polluters.join(", "))
        }
        Verdict::OrderDependentBrittle { state_setters } => {
            format!("{test} passes only after {}", state_setters.join(", "))
        }
        Verdict::SeedDependent { failing_seed, .. } => {
            format!("{test} fails with seed {failing_seed}")
        }
        Verdict::RepeatDependent { count } => {
            format!("{test} fails when run {count} times in one process")
        }
        _ => return None,
    };
    let mut body = format!("candor order: **{}**\n\n", verdict.as_str());
    if let Some(seeds) = seed_words(investigation) {
        let _ = write!(body, "{seeds}.\n\n");
    }
    if let Some(state) = state_words(states) {
        let _ = write!(body, "Shared state seen in the failure: {state}.\n\n");
    }
    if let Some(command) = reproduction {
        let _ = write!(body, "Reproduce:\n\n```\n{command}\n```\n\n");
    }
    let _ = writeln!(body, "Suggested fix: {fix}");
    Some(Ticket { title, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn safe_words_stay_bare_and_others_are_quoted() {
        assert_eq!(
            shell_words(&strings(&[
                "python3",
                "-m",
                "pytest",
                "--",
                "tests/t.py::test_a"
            ])),
            "python3 -m pytest -- tests/t.py::test_a"
        );
        assert_eq!(
            shell_words(&strings(&["-run", "^(TestA|TestB)$", "it's", ""])),
            r"-run '^(TestA|TestB)$' 'it'\''s' ''"
        );
        assert_eq!(
            shell_words(&strings(&["t.py::test[a b]", "$(touch pwned)"])),
            "'t.py::test[a b]' '$(touch pwned)'"
        );
    }
}
