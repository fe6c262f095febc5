//! `candor demo`'s story: the small shop (`examples/demo`, built into the binary) in a
//! temporary git repository with a change under review on a branch, and the steps that
//! show every verdict, a rerun with its receipt, a refusal, a spent budget, the ledger's
//! statistics and the summary lint. `cli` runs each step as a real candor command.

use std::path::Path;
use std::process::{Command, Stdio};

use jiff::ToSpan;
use jiff::civil::Date;
use sha2::{Digest, Sha256};

use crate::cli::error::CliError;
use crate::env_vars::EnvVars;
use crate::exit_codes;
use crate::ledger::{self, LedgerEntry, LedgerOutcome};
use crate::results::Outcome;

/// The shop's files on the default branch, as `examples/demo` holds them.
const FILES: [(&str, &str); 10] = [
    ("Cargo.toml", include_str!("../../examples/demo/Cargo.toml")),
    ("src/lib.rs", include_str!("../../examples/demo/src/lib.rs")),
    (
        "src/pool.rs",
        include_str!("../../examples/demo/src/pool.rs"),
    ),
    (
        "src/checkout.rs",
        include_str!("../../examples/demo/src/checkout.rs"),
    ),
    (
        "src/discount.rs",
        include_str!("../../examples/demo/src/discount.rs"),
    ),
    (
        "src/plugins.rs",
        include_str!("../../examples/demo/src/plugins.rs"),
    ),
    (
        "src/receipts.rs",
        include_str!("../../examples/demo/src/receipts.rs"),
    ),
    (
        "src/search.rs",
        include_str!("../../examples/demo/src/search.rs"),
    ),
    (
        ".ci/test-reliability.yaml",
        include_str!("../../examples/demo/.ci/test-reliability.yaml"),
    ),
    (
        ".gitignore",
        "/target/\n/Cargo.lock\n/.candor/\n/.pool-warm-*\n/summary*.md\n",
    ),
];

/// `candor.toml`, with `@RECENT@` and `@LONG_AGO@` for dates relative to today.
const POLICY: &str = include_str!("../../examples/demo/candor.toml.template");

/// The change under review: the one file it touches.
const CHANGE: (&str, &str) = (
    "src/discount.rs",
    include_str!("../../examples/demo/change/src/discount.rs"),
);

/// The seed that, with one test thread, runs `starts_empty` after `registers_the_defaults`.
const SEED: &str = "4";

const CHECKOUT: &str = "shop::checkout::tests::completes_within_deadline";
const DISCOUNT: &str = "shop::discount::tests::applies_the_percentage";

/// One step: what it shows, the command, and the exit code the story expects.
pub struct Step {
    /// What the step shows.
    pub says: &'static str,
    /// candor's arguments.
    pub args: Vec<String>,
    /// The exit code the story expects.
    pub expected: u8,
}

/// The story's steps, in order.
pub fn steps() -> Vec<Step> {
    let step = |says: &'static str, args: &[&str], expected: u8| Step {
        says,
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        expected,
    };
    vec![
        step(
            "Run the suite on the change: every red test gets its verdict; every red but a known-flake or not-evidence fails the command, an unverified one included.",
            &["test", "--seed", SEED],
            exit_codes::NEGATIVE,
        ),
        step(
            "The checkout timeout is a known flake: one rerun, its ledger line first.",
            &["rerun", CHECKOUT, "--seed", SEED],
            exit_codes::OK,
        ),
        step(
            "The discount failure is a new shape in a quarantined test: never rerun.",
            &["rerun", DISCOUNT],
            exit_codes::NEGATIVE,
        ),
        step(
            "Triage the run again: the checkout test has used its budget now, and the unverified plugin test still fails the command.",
            &["triage"],
            exit_codes::NEGATIVE,
        ),
        step(
            "A second rerun of the checkout test is refused, and the ledger stays as it is.",
            &["rerun", CHECKOUT],
            exit_codes::NEGATIVE,
        ),
        step(
            "What the ledger says about its reruns.",
            &["ledger", "stats"],
            exit_codes::OK,
        ),
        step(
            "The agent's draft summary (summary-draft.md) claims a rerun without its receipt.",
            &["lint", "summary", "summary-draft.md"],
            exit_codes::NEGATIVE,
        ),
        step(
            "The summary that quotes the receipt passes.",
            &["lint", "summary", "summary.md"],
            exit_codes::OK,
        ),
    ]
}

/// The shop on `main` with its policy, reliability file and ledger, then the change on
/// `agent/lowercase-codes`.
pub fn build_repository(repo: &Path, today: Date) -> Result<(), CliError> {
    for (name, content) in FILES {
        write(&repo.join(name), content)?;
    }
    let date = |days: i32| {
        today
            .checked_sub(days.days())
            .map_err(|source| demo_error("date the fingerprints", source))
    };
    let policy = POLICY
        .replace("@RECENT@", &date(6)?.to_string())
        .replace("@LONG_AGO@", &date(90)?.to_string());
    write(&repo.join("candor.toml"), &policy)?;
    // Two earlier reruns of the checkout test, on other changes this week.
    let earlier = [(2, "5f2c9a1", "1901737722"), (5, "8be07d4", "83526417")]
        .into_iter()
        .map(|(days_ago, sha, seed)| {
            Ok(LedgerEntry {
                date: date(days_ago)?,
                sha: sha.to_owned(),
                test_id: CHECKOUT.to_owned(),
                fingerprint: "FP-001".to_owned(),
                first_fail_sha256: hex::encode(Sha256::digest(format!("{sha} {seed}"))),
                seed: Some(seed.to_owned()),
                workers: Some(1),
                attempts: 2,
                outcome: LedgerOutcome::Pending,
            })
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    let mut lines = Vec::new();
    for claim in earlier {
        lines.push(claim.clone());
        lines.push(LedgerEntry {
            outcome: LedgerOutcome::Finished(Outcome::Pass),
            ..claim
        });
    }
    ledger::append(&repo.join(ledger::LEDGER_FILE), &lines)?;
    git(repo, &["init", "--quiet", "--initial-branch=main"])?;
    git(repo, &["add", "--all"])?;
    git(repo, &["commit", "--quiet", "--message", "The shop"])?;
    git(
        repo,
        &["checkout", "--quiet", "-b", "agent/lowercase-codes"],
    )?;
    write(&repo.join(CHANGE.0), CHANGE.1)?;
    git(
        repo,
        &[
            "commit",
            "--quiet",
            "--all",
            "--message",
            "Accept discount codes in any case",
        ],
    )?;
    Ok(())
}

/// The agent's draft, which claims the rerun in words only, and the summary that quotes
/// the receipt: the ledger's last line.
pub fn write_summaries(repo: &Path) -> Result<(), CliError> {
    let ledger = ledger::Ledger::load(&repo.join(ledger::LEDGER_FILE))?;
    let receipt = ledger
        .lines
        .last()
        .map(|line| line.text.clone())
        .unwrap_or_default();
    write(
        &repo.join("summary-draft.md"),
        "Accept discount codes in any case.\n\nThe checkout test failed once; it is a known flake and passed on rerun.\n",
    )?;
    write(
        &repo.join("summary.md"),
        &format!(
            "Accept discount codes in any case.\n\nThe discount test fails with a new shape: that is mine to fix before merging.\nThe checkout test is a known flake and passed on rerun:\n```\n{receipt}\n```\n"
        ),
    )
}

fn write(path: &Path, content: &str) -> Result<(), CliError> {
    if let Some(parent) = path.parent() {
        fs_err::create_dir_all(parent).map_err(|source| CliError::Write {
            path: parent.to_owned(),
            source,
        })?;
    }
    fs_err::write(path, content).map_err(|source| CliError::Write {
        path: path.to_owned(),
        source,
    })
}

/// git in the demo's repository, argv only, with a fixed identity and no hooks or
/// signing from the user's configuration.
fn git(repo: &Path, args: &[&str]) -> Result<(), CliError> {
    let mut command = Command::new("git");
    command
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(repo)
        .env("GIT_AUTHOR_NAME", "candor demo")
        .env("GIT_AUTHOR_EMAIL", "demo@candor.invalid")
        .env("GIT_COMMITTER_NAME", "candor demo")
        .env("GIT_COMMITTER_EMAIL", "demo@candor.invalid")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for name in EnvVars::GIT_LOCATION_OVERRIDES {
        command.env_remove(name);
    }
    let what = || format!("run `git {}`", args.join(" "));
    let output = command
        .output()
        .map_err(|source| demo_error(&what(), source))?;
    if output.status.success() {
        Ok(())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        Err(demo_error(&what(), std::io::Error::other(stderr)))
    }
}

pub(crate) fn demo_error(
    what: &str,
    source: impl std::error::Error + Send + Sync + 'static,
) -> CliError {
    CliError::Demo {
        what: what.to_owned(),
        source: Box::new(source),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn example_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/demo")
    }

    /// The fingerprints name the pool's panic by its line: moving the line would turn
    /// every known flake of the demo into a regression.
    #[test]
    fn the_fingerprints_name_the_line_the_pool_panics_at() {
        let pool = fs_err::read_to_string(example_dir().join("src/pool.rs")).unwrap_or_default();
        let line = pool
            .lines()
            .position(|line| line.trim_start().starts_with("panic!("))
            .map(|index| index + 1);
        let frame = format!("frame = \"src/pool.rs:{}\"", line.unwrap_or_default());
        assert_eq!(POLICY.matches(&frame).count(), 4, "{frame}");
    }

    #[test]
    fn the_policy_parses_once_dated() {
        let policy = POLICY
            .replace("@RECENT@", "2026-10-01")
            .replace("@LONG_AGO@", "2026-07-09");
        let config = crate::policy::Config::parse(&policy, Path::new("candor.toml"))
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(config.fingerprints.len(), 4);
        let reliability = crate::reliability::ReliabilityFile::parse(
            FILES[8].1,
            Path::new(".ci/test-reliability.yaml"),
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(reliability.tests.len(), 5);
    }

    #[test]
    fn every_source_file_of_the_example_is_built_in() {
        let mut sources: Vec<String> = fs_err::read_dir(example_dir().join("src"))
            .map(|dir| {
                dir.filter_map(Result::ok)
                    .map(|entry| format!("src/{}", entry.file_name().to_string_lossy()))
                    .collect()
            })
            .unwrap_or_default();
        sources.sort();
        let mut built_in: Vec<&str> = FILES
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| name.starts_with("src/"))
            .collect();
        built_in.sort_unstable();
        assert_eq!(sources, built_in);
    }
}
