//! The raw command line as clap parses it. Nothing outside this module sees these types:
//! [`super::settings`] turns them into the settings every command works from.

use std::path::PathBuf;

use clap::builder::NonEmptyStringValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::ci_env::is_sha;
use crate::env_vars::EnvVars;

/// Makes red and green mean something again: test history, reliability tiers, exact flake
/// fingerprints.
#[derive(Debug, Parser)]
#[command(name = "candor", version, about, max_term_width = 100)]
pub struct RawArgs {
    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command.
    #[command(subcommand)]
    pub command: RawCommand,
}

/// Options every command takes, before or after the command's name.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Output for people, or JSON lines for programs (see docs/json-output.md).
    #[arg(long, value_enum, global = true, default_value_t = RawFormat::Human)]
    pub format: RawFormat,
    /// When to color the output; `auto` colors only a terminal and honours NO_COLOR.
    #[arg(long, value_enum, global = true, default_value_t = RawColor::Auto)]
    pub color: RawColor,
    /// The history: a SQLite file [default: <repository root>/.candor/history.db], or a
    /// PostgreSQL URL (postgres://…) that every CI runner shares.
    #[arg(long, global = true, env = EnvVars::CANDOR_DB, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Print only errors and warnings (and the data `tests` and `show` are asked for).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// List everything: on a terminal, long listings are cut to their first lines and a
    /// count (JSON output is always complete).
    #[arg(long, global = true)]
    pub full: bool,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RawFormat {
    /// Aligned text for people.
    Human,
    /// One JSON object per line.
    Json,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RawColor {
    /// Color when writing to a terminal and NO_COLOR is unset.
    Auto,
    /// Always color.
    Always,
    /// Never color.
    Never,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum RawCommand {
    /// Run the suite through its runner, store the results, and give every red test its
    /// verdict.
    Test(RawTest),
    /// Give every red test its verdict: regression, unverified, known-flake,
    /// budget-exceeded, not-evidence or expired.
    Triage(RawTriage),
    /// Rerun one known flake in isolation, after writing its ledger line.
    Rerun(RawRerun),
    /// Measure one test's failure rate on the branch against the merge base, interleaved,
    /// before anyone writes a fix: same-rate writes a quarantine ticket.
    Compare(RawCompare),
    /// Check a claimed deterministic reproduction: with the seed, the test fails on the
    /// merge base every run and passes on the branch every run.
    Repro(RawRepro),
    /// Bucket run records per test (invariant-miss, fixture-drift, noise, unclassified,
    /// stable-pass, untrusted-green) with what to spend on each.
    Classify(RawClassify),
    /// The merge lane's verdict for a change (HEAD against its merge base), flake budget
    /// zero: policy from the base, diff rules, fixture and cassette locks, touched tests
    /// replayed; writes score-report.json.
    Gate(RawGate),
    /// Store result files (JUnit XML, libtest JSON, `go test -json`) in the history.
    Ingest(RawIngest),
    /// List every test in the history with its record.
    Tests(RawTests),
    /// Show one test's executions, newest first.
    Show(RawShow),
    /// Give every test a reliability tier from its rolling window; `--write` writes them to
    /// the reliability file.
    Reliability(RawReliability),
    /// The history itself: copy it between stores, drop what is old.
    #[command(subcommand)]
    History(RawHistory),
    /// The rerun ledger.
    #[command(subcommand)]
    Ledger(RawLedger),
    /// Check text against candor's records.
    #[command(subcommand)]
    Lint(RawLint),
    /// Write a commented starter candor.toml at the repository root.
    Init(RawInit),
    /// Write the rules block (reruns, fingerprints, bans, tiers, tools) from the merge
    /// base's candor.toml into AGENTS.md and CLAUDE.md, between candor's markers.
    Agents(RawAgents),
    /// Serve candor's commands to agents as MCP tools over stdio (read-only unless
    /// `--allow-run`).
    Mcp(RawMcp),
    /// Remove the run folders (reports and logs) under .candor/runs that the [runs]
    /// retention rule lets go; never anything outside .candor/runs.
    Clean(RawClean),
    /// Show the whole loop on a small example repository, in a temporary directory.
    Demo(RawDemo),
    /// Reports for people: a self-contained HTML history report, a Markdown comment for a
    /// pull request, GitHub annotations or a GitLab Code Quality file.
    Report(RawReport),
    /// Write the fixture or cassette lock the merge lane checks.
    #[command(subcommand)]
    Lock(RawLock),
    /// The freezes in candor.toml.
    #[command(subcommand)]
    Freeze(RawFreeze),
    /// Find out whether a test's red depends on the tests before it (a polluter or a
    /// state-setter), on the seed, or on running twice in one process.
    Order(RawOrder),
}

/// `--policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RawPolicy {
    /// The merge base's committed policy.
    Base,
    /// The work tree's files.
    Worktree,
}

/// `candor test`.
#[derive(Debug, Args)]
pub struct RawTest {
    /// Where the policy (candor.toml, fingerprints, tiers, freezes, the ledger's past) is
    /// read: the merge base, as the merge lane does, or the work tree, as an explicit local
    /// override.
    #[arg(long, value_name = "SOURCE", default_value = "base")]
    pub policy: RawPolicy,
    /// The seed to hand the runner, where it takes one [default: a new one, recorded].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Arguments appended to the runner's command (after `--`).
    #[arg(last = true, value_name = "ARGV")]
    pub argv: Vec<String>,
}

/// `candor triage`.
#[derive(Debug, Args)]
pub struct RawTriage {
    /// Result files to triage, read without being stored [default: the latest run in the
    /// history that is not a rerun].
    #[arg(value_name = "RESULT_FILE")]
    pub files: Vec<PathBuf>,
    /// How many workers the run that wrote the files used (fingerprints may depend on it).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: Option<u32>,
    /// The runner that wrote the files (`pytest`, `cargo`, `nextest`, `go`, …), for
    /// fingerprints' `runner` condition [default: the tool the file names].
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    pub runner: Option<String>,
    /// Where the policy (candor.toml, fingerprints, tiers, freezes, the ledger's past) is
    /// read: the merge base, as the merge lane does, or the work tree, as an explicit local
    /// override.
    #[arg(long, value_name = "SOURCE", default_value = "base")]
    pub policy: RawPolicy,
}

/// `candor rerun`.
#[derive(Debug, Args)]
pub struct RawRerun {
    /// The test's id, as `candor tests` lists it.
    #[arg(value_name = "TEST")]
    pub test: String,
    /// The change the rerun counts against, named by its base commit [default: the merge
    /// base of HEAD with the default branch].
    #[arg(long, value_name = "ID", value_parser = parse_commit)]
    pub change: Option<String>,
    /// Where the policy is read: only `base` (the merge base, or the commit `--change`
    /// names) is accepted; `worktree` is refused, since a rerun spends a budget.
    #[arg(long, value_name = "SOURCE", default_value = "base")]
    pub policy: RawPolicy,
    /// The seed to hand the runner, where it takes one [default: a new one, recorded].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}

/// `candor compare`.
#[derive(Debug, Args)]
pub struct RawCompare {
    /// The test's id, as `candor tests` lists it.
    #[arg(value_name = "TEST")]
    pub test: String,
    /// Compare against the merge base of HEAD with this branch or commit [default: the
    /// default branch].
    #[arg(long, value_name = "REF", value_parser = NonEmptyStringValueParser::new())]
    pub base: Option<String>,
    /// Most runs per side [default: candor.toml's `[compare] runs`, 30].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=60))]
    pub runs: Option<u32>,
    /// Largest false branch-worse rate [default: `[compare] alpha`, 0.05].
    #[arg(long, value_name = "A", value_parser = parse_alpha)]
    pub alpha: Option<f64>,
    /// Run every planned run: no early stopping.
    #[arg(long)]
    pub no_early_stop: bool,
    /// Derive every run's seed from this one, to replay a comparison [default: a new one,
    /// printed].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}

/// `candor gate`.
#[derive(Debug, Args)]
pub struct RawGate {
    /// Judge HEAD against its merge base with REF [default: the default branch]. The
    /// policy is read from that merge base.
    #[arg(long, value_name = "REF", value_parser = NonEmptyStringValueParser::new())]
    pub base: Option<String>,
    /// Where to write the report [default: score-report.json at the repository root].
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,
    /// A human's approval (a CI label) for changes to human-owned files and cassette
    /// losses; recorded in the report. It never excuses a red replay or a diff rule.
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    pub approved_by: Option<String>,
    /// Runner processes the lane runs at once [default: `[lane] jobs` at the base, else
    /// the CPUs available]; 1 runs them one after another.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: Option<u32>,
}

/// `candor repro`.
#[derive(Debug, Args)]
pub struct RawRepro {
    /// The test's id.
    #[arg(value_name = "TEST")]
    pub test: String,
    /// The seed that is claimed to reproduce the failure.
    #[arg(long, value_name = "S")]
    pub seed: u64,
    /// The merge base of HEAD with this branch or commit [default: the default branch].
    #[arg(long, value_name = "REF", value_parser = NonEmptyStringValueParser::new())]
    pub base: Option<String>,
    /// Runs per side.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,
}

/// `candor classify`.
#[derive(Debug, Args)]
pub struct RawClassify {
    /// Run record files (`*.record.json`) or folders holding them (`.candor/runs/…`).
    #[arg(value_name = "RECORD", required = true)]
    pub records: Vec<PathBuf>,
}

fn parse_alpha(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(alpha) if alpha > 0.0 && alpha <= 0.5 => Ok(alpha),
        _ => Err(format!("{text} is not a number above 0 and at most 0.5")),
    }
}

/// `candor history`.
#[derive(Debug, Subcommand)]
pub enum RawHistory {
    /// Copy every run of one history into another (a SQLite file or a PostgreSQL URL,
    /// either way). Runs the target holds already are skipped, so running it again adds
    /// nothing and an interrupted copy resumes.
    Copy(RawHistoryCopy),
    /// Drop the history older than an age, as whole monthly partitions (PostgreSQL).
    Prune(RawHistoryPrune),
}

/// `candor history copy`.
#[derive(Debug, Args)]
pub struct RawHistoryCopy {
    /// The history to read: a SQLite file or a PostgreSQL URL / connection string.
    #[arg(long, value_name = "DB")]
    pub from: PathBuf,
    /// The history to write (created when missing).
    #[arg(long, value_name = "DB")]
    pub to: PathBuf,
}

/// `candor history prune`.
#[derive(Debug, Args)]
pub struct RawHistoryPrune {
    /// Drop months that ended longer ago than this (`180d`, `26w`, `6 months`).
    #[arg(long, value_name = "AGE")]
    pub older_than: String,
}

/// `candor ledger`.
#[derive(Debug, Subcommand)]
pub enum RawLedger {
    /// Per test: reruns, distinct first failures, worker counts, and signs of a real race.
    Stats,
}

/// `candor lint`.
#[derive(Debug, Subcommand)]
pub enum RawLint {
    /// Refuse rerun claims ("passed on rerun", "known flake", …) that quote no ledger line.
    Summary(RawLintSummary),
    /// Refuse the lines a change adds that hide or retry tests (skip, xfail, flaky marks,
    /// retry plugins and settings), match the base's [[ban]]s or its presets.
    Diff(RawLintDiff),
}

/// `candor lint diff`.
#[derive(Debug, Args)]
pub struct RawLintDiff {
    /// Compare against the merge base of REF and HEAD [default: the merge base of HEAD
    /// with the default branch]. Its candor.toml is the policy.
    #[arg(long, value_name = "REF", value_parser = NonEmptyStringValueParser::new())]
    pub base: Option<String>,
    /// The change's last commit.
    #[arg(long, value_name = "REF", default_value = "HEAD", value_parser = NonEmptyStringValueParser::new())]
    pub head: String,
}

/// `candor lock`.
#[derive(Debug, Subcommand)]
pub enum RawLock {
    /// Write the sha256 of every file under [lane] fixtures to [lane] lockfile.
    Fixtures(RawLockWrite),
    /// Validate every cassette under [lane] cassettes and write [lane] cassette_lock.
    Cassettes(RawLockWrite),
}

/// `candor lock fixtures|cassettes`.
#[derive(Debug, Args)]
pub struct RawLockWrite {
    /// Write nothing; exit 1 when the files differ from the lock.
    #[arg(long)]
    pub check: bool,
}

/// `candor freeze`.
#[derive(Debug, Subcommand)]
pub enum RawFreeze {
    /// Fail when a freeze has expired while its test is still skipped or quarantined;
    /// list the freezes that expire within 7 days.
    Check,
}

/// `candor lint summary`.
#[derive(Debug, Args)]
pub struct RawLintSummary {
    /// The summary (a pull request's description, say).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// `candor demo`.
#[derive(Debug, Args)]
pub struct RawDemo {
    /// Keep the demo's repository and print where it is.
    #[arg(long)]
    pub keep: bool,
}

/// `candor reliability`.
#[derive(Debug, Args)]
pub struct RawReliability {
    /// Write the reliability file: to PATH, or where candor.toml's `[reliability] file`
    /// says (default .ci/test-reliability.yaml). Without it nothing is written.
    #[arg(long, value_name = "PATH", num_args = 0..=1)]
    // Absent, `--write`, and `--write PATH` are three different requests.
    pub write: Option<Option<PathBuf>>,
}

/// `candor init`.
#[derive(Debug, Args)]
pub struct RawInit {
    /// Print the starter file instead of writing it.
    #[arg(long)]
    pub print: bool,
    /// Replace an existing candor.toml.
    #[arg(long, conflicts_with = "print")]
    pub force: bool,
}

/// `candor agents`.
#[derive(Debug, Args)]
pub struct RawAgents {
    /// The instruction file to keep; repeat for several [default: AGENTS.md and CLAUDE.md
    /// at the repository root].
    #[arg(long = "file", value_name = "PATH")]
    pub files: Vec<PathBuf>,
    /// Write nothing; exit 1 printing the diff when a file's block is missing or stale.
    #[arg(long)]
    pub check: bool,
    /// Print the block, touch no file.
    #[arg(long, conflicts_with_all = ["check", "files"])]
    pub print: bool,
}

/// `candor mcp`.
#[derive(Debug, Args)]
pub struct RawMcp {
    /// Also offer the tools that run tests and write files (test, rerun, compare, repro,
    /// order, gate); without it the server only reads.
    #[arg(long)]
    pub allow_run: bool,
}

/// `candor clean`.
#[derive(Debug, Args)]
pub struct RawClean {
    /// Say what would be removed, remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Remove every run folder, not only those older than the retention rule keeps.
    #[arg(long)]
    pub all: bool,
}

/// `--tier`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RawTier {
    /// Failures are evidence.
    Trusted,
    /// Failures must be measured first.
    Probation,
    /// Failures are not evidence (new failure shapes still are).
    Quarantined,
    /// Not in the reliability file yet (treated as probation).
    Unlisted,
}

/// `candor ingest`.
#[derive(Debug, Args)]
pub struct RawIngest {
    /// Result files, directories or glob patterns.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<String>,
    /// The commit the results are for; an abbreviated sha is stored as the full sha git
    /// resolves it to [default: from CI variables, else git HEAD].
    #[arg(long, value_name = "SHA", value_parser = parse_commit)]
    pub commit: Option<String>,
    /// The branch [default: from CI variables, else the checked-out branch].
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    pub branch: Option<String>,
    /// The CI job's name [default: from CI variables].
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    pub job: Option<String>,
    /// How many workers the run used.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: Option<u32>,
    /// The seed the run used, as the runner spells it.
    #[arg(long, value_name = "S", value_parser = NonEmptyStringValueParser::new())]
    pub seed: Option<String>,
    /// Where the run happened [default: ci when a CI service is detected, else local].
    #[arg(long, value_enum)]
    pub source: Option<RawSource>,
    /// The test binary a libtest JSON file's tests ran in, as nextest names it (`pkg`,
    /// `pkg::integration_test`, `pkg::bin/name`): their ids become `ID::module::test`, the
    /// ids `cargo nextest` and `candor test` give them. libtest's JSON does not name it.
    #[arg(long, value_name = "ID", value_parser = NonEmptyStringValueParser::new(), conflicts_with = "crate_name")]
    pub binary: Option<String>,
    /// The package whose library unit tests a libtest JSON file holds (`cargo test -p NAME
    /// --lib`): the same as `--binary NAME`.
    #[arg(long = "crate", value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    pub crate_name: Option<String>,
}

/// `--source`: the sources a user may claim; candor's own commands set the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RawSource {
    /// A CI job's own run of the suite.
    Ci,
    /// A run on a developer's or agent's machine.
    Local,
}

/// `candor tests`.
#[derive(Debug, Args)]
pub struct RawTests {
    /// Only tests whose latest run was red.
    #[arg(long)]
    pub failing: bool,
    /// Only tests with this tier in the reliability file.
    #[arg(long, value_enum)]
    pub tier: Option<RawTier>,
}

/// `candor report`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("output").required(true).multiple(true)
    .args(["html", "markdown", "github_annotations", "gitlab_codequality"])))]
pub struct RawReport {
    /// Write the HTML history report (one self-contained file) here.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Print a Markdown comment for the pull request: one row per red test of the latest
    /// run (or of RESULT_FILEs); also appended to GITHUB_STEP_SUMMARY when it is set.
    #[arg(long)]
    pub markdown: bool,
    /// Print GitHub workflow commands annotating each regression at its failing frame.
    #[arg(long)]
    pub github_annotations: bool,
    /// Write a GitLab Code Quality report of the regressions here.
    #[arg(long, value_name = "PATH")]
    pub gitlab_codequality: Option<PathBuf>,
    /// Result files whose red tests the Markdown and annotations describe [default: the
    /// latest run in the history that is not a rerun].
    #[arg(value_name = "RESULT_FILE")]
    pub files: Vec<PathBuf>,
    /// HTML: only runs since this date (2026-11-01), instant (2026-11-01T12:00:00Z) or
    /// span before today (30d).
    #[arg(long, value_name = "WHEN", value_parser = crate::report::Since::parse)]
    pub since: Option<crate::report::Since>,
    /// HTML: only runs of this branch.
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    pub branch: Option<String>,
    /// HTML: only tests whose id matches this glob (`tests/api/*`).
    #[arg(long, value_name = "GLOB", value_parser = NonEmptyStringValueParser::new())]
    pub tests: Option<String>,
    /// HTML: how many of the flakiest tests the detailed sections show.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub top: u32,
    /// HTML: how many of the newest runs the heatmap shows.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub heatmap_runs: u32,
}

/// `candor show`.
#[derive(Debug, Args)]
pub struct RawShow {
    /// The test's id, as `candor tests` lists it.
    #[arg(value_name = "TEST")]
    pub test: String,
    /// Show at most this many executions.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: u32,
}

/// `candor order`.
#[derive(Debug, Args)]
pub struct RawOrder {
    /// The test's id, as `candor tests` lists it.
    #[arg(value_name = "TEST")]
    pub test: String,
    /// A results file of the run the test went red in (JUnit XML, `go test -json`,
    /// libtest JSON): the tests before TEST in it are the order to reproduce [default: the
    /// runner's listing order].
    #[arg(long, value_name = "RESULT_FILE")]
    pub from: Option<PathBuf>,
    /// The base seed: the first run alone uses it and every other seed derives from it;
    /// give the failing run's seed to try it first [default: a new one, printed].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Wall-clock limit of the whole investigation, in seconds; running out is reported.
    #[arg(long, value_name = "N", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub budget_seconds: u64,
}

/// A commit given on the command line: a (possibly abbreviated) hex sha, stored lowercase.
fn parse_commit(text: &str) -> Result<String, String> {
    if is_sha(text) {
        Ok(text.to_ascii_lowercase())
    } else {
        Err("expected a commit sha: 4 to 64 hexadecimal digits".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        RawArgs::command().debug_assert();
    }

    #[test]
    fn global_options_go_before_or_after_the_command() {
        let before =
            RawArgs::try_parse_from(["candor", "--format", "json", "tests"]).expect("parses");
        let after =
            RawArgs::try_parse_from(["candor", "tests", "--format", "json", "-q"]).expect("parses");
        assert_eq!(before.global.format, RawFormat::Json);
        assert_eq!(after.global.format, RawFormat::Json);
        assert!(after.global.quiet);
    }

    #[test]
    fn zero_workers_and_zero_limit_are_refused() {
        assert!(RawArgs::try_parse_from(["candor", "ingest", "x", "--workers", "0"]).is_err());
        assert!(RawArgs::try_parse_from(["candor", "show", "t", "--limit", "0"]).is_err());
    }
}
