//! The rules block agents read: rendered from the policy (the merge base's candor.toml) as
//! Markdown between `<!-- candor:begin -->` and `<!-- candor:end -->`, and spliced into an
//! instruction file (AGENTS.md, CLAUDE.md) leaving every byte outside the markers as it
//! was. Pure: the caller reads and writes the files.

use std::fmt::Write as _;

use crate::policy::{Ban, Config, Fingerprint, FingerprintConditions};

/// The line that opens the block.
pub const BEGIN: &str = "<!-- candor:begin -->";
/// The line that closes the block.
pub const END: &str = "<!-- candor:end -->";

/// The files `candor agents` keeps when none are named: the instruction files Codex and
/// most agents read (AGENTS.md) and Claude Code reads (CLAUDE.md).
pub const DEFAULT_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The MCP tools the server offers without `--allow-run`.
pub const READ_ONLY_TOOLS: [&str; 8] = [
    "triage",
    "show",
    "tests",
    "reliability",
    "ledger",
    "lint_summary",
    "lint_diff",
    "explain",
];

/// The MCP tools that run tests or write files, offered only with `--allow-run`.
pub const ACTING_TOOLS: [&str; 6] = ["test", "rerun", "compare", "repro", "order", "gate"];

/// The block, markers included, ending with a newline.
pub fn render(config: &Config) -> String {
    let rerun = &config.rerun;
    let mut out = String::new();
    let _ = writeln!(out, "{BEGIN}");
    out.push_str(
        "<!-- Written by `candor agents` from the merge base's candor.toml; edit candor.toml \
         and run `candor agents` again, never this block. -->\n",
    );
    out.push_str("## Red tests: candor's rules\n\n");
    out.push_str(
        "A red test is evidence until candor says otherwise. Ask `candor triage` (MCP tool \
         `triage`) for every red test's verdict before you act on it, and act only on the \
         verdict.\n\n",
    );

    out.push_str("### Reruns\n\n");
    out.push_str(
        "- Rerun only a red test whose verdict is `known-flake`: its failure matched one \
         fingerprint below exactly (test, exception, whole message, failing frame, \
         conditions). Never rerun a `regression`, `unverified`, `not-evidence` or \
         `expired` one: fix it, or measure it with `candor compare`.\n",
    );
    let _ = writeln!(
        out,
        "- Rerun only through `candor rerun TEST` (MCP tool `rerun`): it writes the ledger \
         line to {} before the runner starts. A rerun by any other means (the runner \
         itself, a retry plugin, a CI re-run) is not allowed.",
        code(&config.rerun.ledger.display().to_string())
    );
    let reruns = rerun.max_attempts_per_change.saturating_sub(1);
    let _ = writeln!(
        out,
        "- A change may run one test at most {} times: the red that was judged counts as \
         the first, so {reruns} {} per test per change.",
        rerun.max_attempts_per_change,
        if reruns == 1 { "rerun" } else { "reruns" }
    );
    let _ = writeln!(
        out,
        "- A test with {} reruns in the ledger within the last {} days gets no rerun at all \
         (`flake-budget-exceeded`): fix it or ask its owner.",
        rerun.budget_entries, rerun.budget_days
    );
    let _ = writeln!(
        out,
        "- A fingerprint expires {} days after its `last_seen`; an expired one pardons \
         nothing until a human confirms it again.",
        rerun.fingerprint_expiry_days
    );
    out.push('\n');

    out.push_str("### Known flakes (fingerprints)\n\n");
    if config.fingerprints.is_empty() {
        out.push_str("None. No red test may be rerun as a known flake.\n");
    } else {
        for fingerprint in &config.fingerprints {
            fingerprint_lines(&mut out, fingerprint, rerun.fingerprint_expiry_days);
        }
    }
    out.push('\n');

    out.push_str("### Banned lines\n\n");
    if config.bans.is_empty() {
        out.push_str(
            "No `[[ban]]`s. The diff rules still refuse added lines that skip, mark or \
             retry tests, and code under test that asks whether a test is running, \
             reads the tests' files, reaches into the test framework, ends the process \
             itself or looks at its caller (`candor lint diff`).\n",
        );
    } else {
        out.push_str(
            "An added line that matches one of these is refused by the merge lane, besides \
             the diff rules that refuse skipping, marking or retrying tests and code under \
             test that asks whether a test is running, reads the tests' files, reaches \
             into the test framework, ends the process itself or looks at its caller:\n\n",
        );
        for ban in &config.bans {
            ban_lines(&mut out, ban);
        }
    }
    out.push('\n');

    out.push_str("### Tiers (the reliability file)\n\n");
    let _ = writeln!(
        out,
        "The tiers are in {}; only candor writes them.\n",
        code(&config.reliability.file.display().to_string())
    );
    out.push_str(
        "- `trusted`: its failures are evidence. Investigate; do not rerun.\n\
         - `probation`: its failures must be measured (`candor compare`, branch against merge \
         base) before anyone reasons about them.\n\
         - `quarantined`: its failures are not evidence, but a new failure shape still is a \
         regression.\n\
         - unlisted: treated as `probation`.\n\n",
    );

    out.push_str("### Summaries and pull-request descriptions\n\n");
    let phrases: Vec<String> = config
        .triage
        .summary_phrases
        .iter()
        .map(|phrase| code(phrase))
        .collect();
    if phrases.is_empty() {
        out.push_str(
            "No phrases are configured; still quote the ledger line of every rerun you \
             mention.\n\n",
        );
    } else {
        let _ = writeln!(
            out,
            "A sentence that says any of {} must quote a ledger line verbatim; \
             `candor lint summary FILE` (MCP tool `lint_summary`) refuses one that does \
             not.\n",
            phrases.join(", ")
        );
    }

    out.push_str("### Commands and MCP tools\n\n");
    out.push_str(
        "`candor mcp` serves these as MCP tools over stdio; the tools that run tests need \
         `candor mcp --allow-run`.\n\n",
    );
    for (what, command, tool) in [
        ("verdicts of the red tests", "candor triage", "triage"),
        ("one test's history and tier", "candor show TEST", "show"),
        ("the tests, by tier or failing", "candor tests", "tests"),
        ("tiers and why", "candor reliability", "reliability"),
        ("reruns per test", "candor ledger stats", "ledger"),
        (
            "check a summary",
            "candor lint summary FILE",
            "lint_summary",
        ),
        ("check the diff", "candor lint diff", "lint_diff"),
        ("run the suite", "candor test", "test"),
        ("rerun a known flake", "candor rerun TEST", "rerun"),
        (
            "branch against merge base",
            "candor compare TEST",
            "compare",
        ),
        (
            "check a seed reproduces",
            "candor repro TEST --seed S",
            "repro",
        ),
        ("order dependence", "candor order TEST", "order"),
        ("the merge lane's verdict", "candor gate", "gate"),
    ] {
        let _ = writeln!(out, "- {what}: `{command}`, tool `{tool}`");
    }
    let _ = writeln!(
        out,
        "- these rules, for your own reasoning: tool `explain`\n{END}"
    );
    out
}

fn fingerprint_lines(out: &mut String, fingerprint: &Fingerprint, expiry_days: u32) {
    let expires = fingerprint
        .last_seen
        .checked_add(jiff::Span::new().days(i64::from(expiry_days)))
        .map_or_else(
            |_| "never (out of range)".to_owned(),
            |date| date.to_string(),
        );
    let _ = writeln!(
        out,
        "- {}: test {}, exception {}, message matching {} (whole), frame {}, conditions: \
         {}; last seen {}, holds through {expires}; owner {}",
        code(&fingerprint.id),
        code(&fingerprint.test),
        code(&fingerprint.exception),
        code(fingerprint.message.as_str()),
        code(&fingerprint.frame),
        conditions(&fingerprint.conditions),
        fingerprint.last_seen,
        code(&fingerprint.owner),
    );
}

fn conditions(conditions: &FingerprintConditions) -> String {
    let mut parts = Vec::new();
    if let Some(ci) = conditions.ci {
        parts.push(if ci { "under CI" } else { "not under CI" }.to_owned());
    }
    match (conditions.min_workers, conditions.max_workers) {
        (Some(min), Some(max)) => parts.push(format!("{min} to {max} workers")),
        (Some(min), None) => parts.push(format!("at least {min} workers")),
        (None, Some(max)) => parts.push(format!("at most {max} workers")),
        (None, None) => {}
    }
    if let Some(runner) = &conditions.runner {
        parts.push(format!("runner {}", code(runner)));
    }
    if let Some(os) = &conditions.os {
        parts.push(format!("os {}", code(os)));
    }
    if parts.is_empty() {
        "any run".to_owned()
    } else {
        parts.join(", ")
    }
}

fn ban_lines(out: &mut String, ban: &Ban) {
    let paths: Vec<String> = ban.paths.iter().map(|glob| code(glob.as_str())).collect();
    let _ = writeln!(
        out,
        "- {}: in {}, a line matching {}: {} (incident: {})",
        code(&ban.id),
        paths.join(", "),
        code(ban.pattern.as_str()),
        inline(&ban.message),
        inline(&ban.source),
    );
}

/// Text from candor.toml on one line, unable to close the block or open a comment that
/// would swallow it.
fn inline(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("<!--", "<!\u{200B}--")
        .replace("-->", "--\u{200B}>")
}

/// `text` as a Markdown code span: a fence longer than any backtick run inside it, padded
/// when it starts or ends with a backtick.
fn code(text: &str) -> String {
    let text = inline(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

/// Why an instruction file's block cannot be found unambiguously.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpliceError {
    /// A second begin marker, or an end marker before any begin.
    #[error("line {line}: {found} where {expected} was expected")]
    Misplaced {
        /// 1-based line of the marker.
        line: usize,
        /// The marker found.
        found: &'static str,
        /// What was expected there.
        expected: &'static str,
    },
    /// A begin marker never closed.
    #[error("line {line}: {BEGIN} is never closed by {END}")]
    Unclosed {
        /// 1-based line of the begin marker.
        line: usize,
    },
}

/// `existing` (the file's text, `None` when there is no file) with its block replaced by
/// `block`, or the block appended after a blank line when it has none. Markers count only
/// as whole lines, so a file quoting them in a sentence is left alone.
pub fn splice(existing: Option<&str>, block: &str) -> Result<String, SpliceError> {
    let Some(text) = existing.filter(|text| !text.is_empty()) else {
        return Ok(block.to_owned());
    };
    let mut begin: Option<(usize, usize)> = None;
    let mut span: Option<(usize, usize)> = None;
    let mut offset = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let number = index + 1;
        let bare = line.trim_end_matches(['\n', '\r']).trim();
        if bare == BEGIN {
            if begin.is_some() || span.is_some() {
                return Err(SpliceError::Misplaced {
                    line: number,
                    found: BEGIN,
                    expected: if begin.is_some() {
                        END
                    } else {
                        "no second block"
                    },
                });
            }
            begin = Some((offset, number));
        } else if bare == END {
            match begin.take() {
                Some((start, _)) => span = Some((start, offset + line.len())),
                None => {
                    return Err(SpliceError::Misplaced {
                        line: number,
                        found: END,
                        expected: BEGIN,
                    });
                }
            }
        }
        offset += line.len();
    }
    if let Some((_, line)) = begin {
        return Err(SpliceError::Unclosed { line });
    }
    let Some((start, end)) = span else {
        let separator = if text.ends_with("\n\n") {
            ""
        } else if text.ends_with('\n') {
            "\n"
        } else {
            "\n\n"
        };
        return Ok(format!("{text}{separator}{block}"));
    };
    let mut block = block.to_owned();
    // The file's own line ending after the block is kept; a block at the very end of a
    // file without a final newline stays without one.
    if !text[..end].ends_with('\n') {
        block.pop();
    }
    Ok(format!("{}{block}{}", &text[..start], &text[end..]))
}

/// A unified diff from `old` to `new` naming `path`, for `--check`.
pub fn diff(path: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: &str = "<!-- candor:begin -->\nnew\n<!-- candor:end -->\n";

    #[test]
    fn a_missing_or_empty_file_becomes_the_block() {
        assert_eq!(splice(None, BLOCK).unwrap(), BLOCK);
        assert_eq!(splice(Some(""), BLOCK).unwrap(), BLOCK);
    }

    #[test]
    fn a_file_without_a_block_gets_it_after_a_blank_line() {
        assert_eq!(
            splice(Some("# Notes\nkeep"), BLOCK).unwrap(),
            format!("# Notes\nkeep\n\n{BLOCK}")
        );
        assert_eq!(
            splice(Some("# Notes\n"), BLOCK).unwrap(),
            format!("# Notes\n\n{BLOCK}")
        );
    }

    #[test]
    fn only_the_block_changes_and_a_second_splice_changes_nothing() {
        let file = "top\r\n<!-- candor:begin -->\nold\n<!-- candor:end -->\r\nbottom `x`\n";
        let once = splice(Some(file), BLOCK).unwrap();
        assert_eq!(once, format!("top\r\n{BLOCK}bottom `x`\n"));
        assert_eq!(splice(Some(&once), BLOCK).unwrap(), once);
    }

    #[test]
    fn markers_quoted_inside_a_line_are_text() {
        let file = "Use `<!-- candor:begin -->` markers.\n";
        assert_eq!(
            splice(Some(file), BLOCK).unwrap(),
            format!("{file}\n{BLOCK}")
        );
    }

    #[test]
    fn ambiguous_markers_are_refused_with_their_line() {
        let two = format!("{BLOCK}{BLOCK}");
        assert!(matches!(
            splice(Some(&two), BLOCK),
            Err(SpliceError::Misplaced { line: 4, .. })
        ));
        assert_eq!(
            splice(Some("a\n<!-- candor:begin -->\nb\n"), BLOCK),
            Err(SpliceError::Unclosed { line: 2 })
        );
        assert!(matches!(
            splice(Some("<!-- candor:end -->\n"), BLOCK),
            Err(SpliceError::Misplaced { line: 1, .. })
        ));
    }

    #[test]
    fn values_from_the_policy_cannot_close_the_block_or_break_a_code_span() {
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        let closing = code("x <!-- candor:end --> y");
        assert!(!closing.contains(END), "{closing}");
        assert!(!inline("a\nb").contains('\n'));
    }

    #[test]
    fn the_default_policy_names_its_numbers() {
        let block = render(&Config::default());
        assert!(block.starts_with(BEGIN) && block.ends_with(&format!("{END}\n")));
        assert!(block.contains("at most 2 times"), "{block}");
        assert!(block.contains("3 reruns in the ledger within the last 7 days"));
        assert!(block.contains("expires 60 days"));
        assert!(block.contains("`passed on rerun`"));
        for tool in READ_ONLY_TOOLS.iter().chain(&ACTING_TOOLS) {
            assert!(block.contains(&format!("`{tool}`")), "{tool}");
        }
    }
}
