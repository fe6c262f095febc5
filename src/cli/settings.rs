//! The raw arguments resolved once, against the environment, CI variables and git, into
//! the settings every command works from. Commands never see clap types, and never look
//! at the environment themselves.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use jiff::civil::Date;

use super::args::{
    RawArgs, RawColor, RawCommand, RawFormat, RawIngest, RawLedger, RawLint, RawPolicy, RawSource,
    RawTier,
};
use super::args::{RawFreeze, RawHistory, RawLintDiff, RawLock};
use crate::ci_env::CiEnv;
use crate::env_vars::EnvVars;
use crate::git::{Git, GitError};
use crate::history::{Conditions, Location, NewRun, Source};
use crate::results::ParseOptions;

/// Where the history lives when neither `--db` nor `CANDOR_DB` says, relative to the
/// repository root (or the current directory outside a repository).
pub const DEFAULT_DB: &str = ".candor/history.db";

/// Everything a command needs to know, decided.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How to print.
    pub output: OutputSettings,
    /// The history: a SQLite file or a PostgreSQL database.
    pub db: Location,
    /// The repository root (the current directory outside a repository): where
    /// candor.toml, the reliability file and the ledger are.
    pub repo_root: PathBuf,
    /// The command and its own settings.
    pub command: Command,
    /// Today: the current UTC date, or `CANDOR_TODAY`. Fingerprints expire, rerun budgets
    /// count and ledger lines are dated by it.
    pub today: Date,
    /// Things resolution could not find out and the user may want to know (git failed).
    pub warnings: Vec<String>,
}

/// How output looks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSettings {
    /// Text or JSON lines.
    pub format: OutputFormat,
    /// Whether stdout gets color.
    pub color_stdout: bool,
    /// Whether stderr gets color.
    pub color_stderr: bool,
    /// Leave out informational lines.
    pub quiet: bool,
    /// Whether progress lines go to stderr: only on a terminal, and not under `--quiet`.
    pub progress: bool,
    /// Whether long listings are cut to their first lines and a count: text on a
    /// terminal, without `--full`.
    pub summarize: bool,
}

/// `--format`, decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// Aligned text.
    Human,
    /// JSON lines.
    Json,
}

/// A command with its settings.
#[derive(Debug, Clone)]
pub enum Command {
    /// `candor ingest`.
    Ingest(Box<IngestSettings>),
    /// `candor tests`.
    Tests(TestsSettings),
    /// `candor show`.
    Show(ShowSettings),
    /// `candor reliability`.
    Reliability(ReliabilitySettings),
    /// `candor init`.
    Init(InitSettings),
    /// `candor clean`.
    Clean(CleanSettings),
    /// `candor test`.
    Test(Box<TestSettings>),
    /// `candor triage`.
    Triage(Box<TriageSettings>),
    /// `candor rerun`.
    Rerun(Box<RerunSettings>),
    /// `candor gate`.
    Gate(Box<GateSettings>),
    /// `candor compare`.
    Compare(Box<CompareSettings>),
    /// `candor repro`.
    Repro(Box<ReproSettings>),
    /// `candor classify`.
    Classify(ClassifySettings),
    /// `candor ledger stats`.
    LedgerStats,
    /// `candor history copy`.
    HistoryCopy {
        /// Read from.
        from: Location,
        /// Written to.
        to: Location,
    },
    /// `candor history prune`.
    HistoryPrune {
        /// The age as given.
        older_than: String,
        /// Now, which the age counts back from.
        now: Timestamp,
    },
    /// `candor lint summary`.
    LintSummary(LintSummarySettings),
    /// `candor demo`.
    Demo(DemoSettings),
    /// `candor report`.
    Report(Box<ReportSettings>),
    /// `candor lint diff`.
    LintDiff(LintDiffSettings),
    /// `candor lock fixtures` and `candor lock cassettes`.
    Lock(LockSettings),
    /// `candor freeze check`.
    FreezeCheck,
    /// `candor order`.
    Order(Box<OrderSettings>),
    /// `candor agents`.
    Agents(Box<AgentsSettings>),
    /// `candor mcp`.
    Mcp(McpSettings),
}

/// `candor agents`, decided.
#[derive(Debug, Clone)]
pub struct AgentsSettings {
    /// The instruction files, absolute.
    pub files: Vec<PathBuf>,
    /// Compare instead of writing.
    pub check: bool,
    /// Print the block instead of touching files.
    pub print: bool,
    /// The working copy, whose merge base holds the policy.
    pub workspace: Workspace,
}

/// `candor mcp`, decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpSettings {
    /// Offer the tools that run tests and write files.
    pub allow_run: bool,
}

/// `candor lint diff`, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintDiffSettings {
    /// The base commit (full sha), or why there is none.
    pub base: Result<String, String>,
    /// The head commit (full sha), or why there is none.
    pub head: Result<String, String>,
}

/// Which lock `candor lock` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// `[lane] lockfile`.
    Fixtures,
    /// `[lane] cassette_lock`.
    Cassettes,
}

/// `candor lock`, decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockSettings {
    /// Which lock.
    pub kind: LockKind,
    /// Compare instead of writing.
    pub check: bool,
}

/// What candor knows about the working copy it runs in, for the commands that judge red
/// tests and run them.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The CI service, if any.
    pub ci: CiEnv,
    /// HEAD (CI's commit outside a git repository).
    pub commit: Option<String>,
    /// The checked-out branch (CI's branch outside a git repository).
    pub branch: Option<String>,
    /// HEAD's merge base with the default branch.
    pub merge_base: Option<String>,
    /// The default branch's own name, for the history's evidence about a red test.
    pub default_branch: Option<DefaultBranch>,
    /// The change reruns count against, or why it could not be found.
    pub change: Result<Change, String>,
    /// What the parsers need to know.
    pub parse: ParseOptions,
}

/// Where an ingested run's commit came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommitFrom {
    /// `--commit`.
    Option,
    /// The CI service's variables.
    Ci,
    /// The repository's HEAD, assumed for want of the others.
    Head,
}

/// A change: the commits of a branch since its base. Ledger lines whose sha is one of them
/// count against the change's `max_attempts_per_change`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    /// The base: `--change`, else HEAD's merge base with the default branch.
    pub base: Option<String>,
    /// The commits after the base up to HEAD, HEAD included (HEAD alone when it is the
    /// base, as on the default branch itself); empty outside a git repository.
    pub commits: Vec<String>,
}

impl Workspace {
    /// The change, or an empty one when it could not be found.
    pub fn change_commits(&self) -> &[String] {
        self.change.as_ref().map_or(&[], |change| &change.commits)
    }
}

/// `--policy`, decided: where `test`, `triage` and `rerun` read the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyChoice {
    /// The merge base's committed policy (the default).
    Base,
    /// The work tree's files: an explicit local override.
    WorkTree,
}

impl From<RawPolicy> for PolicyChoice {
    fn from(raw: RawPolicy) -> Self {
        match raw {
            RawPolicy::Base => PolicyChoice::Base,
            RawPolicy::Worktree => PolicyChoice::WorkTree,
        }
    }
}

/// `candor test`, decided.
#[derive(Debug, Clone)]
pub struct TestSettings {
    /// Where the policy is read.
    pub policy: PolicyChoice,
    /// Appended to the runner's command.
    pub argv: Vec<String>,
    /// The seed, when given.
    pub seed: Option<u64>,
    /// The working copy.
    pub workspace: Workspace,
}

/// `candor gate`, decided.
#[derive(Debug, Clone)]
pub struct GateSettings {
    /// The base and head, as `lint diff` resolves them.
    pub change: LintDiffSettings,
    /// Where the report goes.
    pub report: PathBuf,
    /// `--approved-by`.
    pub approved_by: Option<String>,
    /// `GITHUB_STEP_SUMMARY`, when set.
    pub step_summary: Option<PathBuf>,
    /// The working copy.
    pub workspace: Workspace,
    /// `--jobs`: runner processes at once, over `[lane] jobs`.
    pub jobs: Option<u32>,
}

/// `candor compare`, decided.
#[derive(Debug, Clone)]
pub struct CompareSettings {
    /// The test.
    pub test_id: String,
    /// The branch or commit whose merge base with HEAD is compared against; `None`: the
    /// default branch.
    pub base: Option<String>,
    /// Most runs per side, overriding `[compare] runs`.
    pub runs: Option<u32>,
    /// Alpha, overriding `[compare] alpha`.
    pub alpha: Option<f64>,
    /// No early stopping.
    pub no_early_stop: bool,
    /// The seed every run's seed derives from.
    pub seed: Option<u64>,
    /// The working copy.
    pub workspace: Workspace,
}

/// `candor repro`, decided.
#[derive(Debug, Clone)]
pub struct ReproSettings {
    /// The test.
    pub test_id: String,
    /// The claimed seed.
    pub seed: u64,
    /// As for compare.
    pub base: Option<String>,
    /// Runs per side.
    pub runs: u32,
    /// The working copy.
    pub workspace: Workspace,
}

/// `candor classify`, decided.
#[derive(Debug, Clone)]
pub struct ClassifySettings {
    /// Record files and folders.
    pub records: Vec<PathBuf>,
}

/// `candor triage`, decided.
#[derive(Debug, Clone)]
pub struct TriageSettings {
    /// Result files; empty means the latest run in the history.
    pub files: Vec<PathBuf>,
    /// Worker count of the run that wrote the files.
    pub workers: Option<u32>,
    /// The runner that wrote the files, when given.
    pub runner: Option<String>,
    /// Where the policy is read.
    pub policy: PolicyChoice,
    /// The working copy.
    pub workspace: Workspace,
}

/// `candor rerun`, decided.
#[derive(Debug, Clone)]
pub struct RerunSettings {
    /// The test.
    pub test_id: String,
    /// Where the policy is read (`WorkTree` is refused).
    pub policy: PolicyChoice,
    /// The seed, when given.
    pub seed: Option<u64>,
    /// The working copy.
    pub workspace: Workspace,
}

/// `candor order`, decided.
#[derive(Debug, Clone)]
pub struct OrderSettings {
    /// The test.
    pub test_id: String,
    /// The results file whose order is the context.
    pub from: Option<PathBuf>,
    /// The base seed, when given.
    pub seed: Option<u64>,
    /// The wall-clock budget.
    pub budget: std::time::Duration,
    /// The working copy.
    pub workspace: Workspace,
}

/// `candor lint summary`, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintSummarySettings {
    /// The summary file.
    pub file: PathBuf,
    /// The file as given, for messages.
    pub shown: String,
}

/// `candor demo`, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoSettings {
    /// Keep the temporary repository.
    pub keep: bool,
}

/// `candor reliability`, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReliabilitySettings {
    /// Whether to write the file, and where: `Some(None)` means candor.toml's path.
    pub write: Option<Option<PathBuf>>,
    /// The branch whose runs count unless `[reliability] branches` says otherwise.
    pub default_branch: Option<DefaultBranch>,
}

/// The default branch as [`crate::git::Git::base_branch`] chooses it: its own name, as
/// runs record their branch, the reference merge bases are taken with, and where it was
/// found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultBranch {
    /// `main`, not `origin/main`.
    pub name: String,
    /// `origin/main` when origin has it, else `main`.
    pub reference: String,
    /// `CI_DEFAULT_BRANCH`, `origin/HEAD`, `init.defaultBranch`, …
    pub found_by: String,
    /// Local commits on `name` that `reference` lacks: runs there are not the default
    /// branch's.
    pub ahead: Vec<String>,
}

impl DefaultBranch {
    /// The branches reliability counts under `config`.
    pub fn selection(
        default: Option<&DefaultBranch>,
        config: &crate::policy::Config,
    ) -> crate::reliability::BranchSelection {
        crate::reliability::BranchSelection::new(
            config.reliability.branches.as_deref(),
            default.map(|d| crate::reliability::DefaultOrigin {
                name: d.name.clone(),
                reference: d.reference.clone(),
                how: d.found_by.clone(),
                ahead: d.ahead.iter().cloned().collect(),
            }),
        )
    }

    /// For people: `origin/main (the default branch, from origin/HEAD)`.
    pub fn described(&self) -> String {
        format!(
            "{} (the default branch, from {})",
            self.reference, self.found_by
        )
    }
}

/// `candor init`, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitSettings {
    /// Print instead of writing.
    pub print: bool,
    /// Replace an existing file.
    pub force: bool,
}

/// `candor clean`, decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CleanSettings {
    /// Only say what would go.
    pub dry_run: bool,
    /// Every run folder, not only those the retention rule lets go.
    pub all: bool,
}

/// A `--tier` filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TierFilter {
    /// Listed with this tier.
    Listed(crate::stats::tiers::Tier),
    /// Not in the reliability file.
    Unlisted,
}

/// `candor ingest`, decided.
#[derive(Debug, Clone)]
pub struct IngestSettings {
    /// Files, directories and patterns as given.
    pub inputs: Vec<String>,
    /// The run every file is stored under (each file gets its own run with its own
    /// `source_path`, format and producer).
    pub run: NewRun,
    /// What the parsers need to know.
    pub parse: ParseOptions,
    /// Where `run.commit` came from.
    pub commit_from: Option<CommitFrom>,
    /// HEAD's commit time, when the commit was taken from HEAD: a file written before it
    /// is likely the results of an earlier commit.
    pub head_committed_at: Option<jiff::Timestamp>,
}

/// `candor tests`, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestsSettings {
    /// Only tests whose latest run was red.
    pub failing_only: bool,
    /// Only tests with this tier.
    pub tier: Option<TierFilter>,
    /// The branch whose runs count unless `[reliability] branches` says otherwise.
    pub default_branch: Option<DefaultBranch>,
}

/// `candor report`, decided.
#[derive(Debug, Clone)]
pub struct ReportSettings {
    /// The default branch, whose runs the HTML report counts unless `--branch` names one.
    pub default_branch: Option<DefaultBranch>,
    /// Where the HTML report goes.
    pub html: Option<PathBuf>,
    /// Print the Markdown comment.
    pub markdown: bool,
    /// Print GitHub annotations.
    pub github_annotations: bool,
    /// Where the GitLab Code Quality report goes.
    pub gitlab_codequality: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`, when set.
    pub step_summary: Option<PathBuf>,
    /// `--since`, resolved against today by the command.
    pub since: Option<crate::report::Since>,
    /// The HTML report's filter (`since` left for the command).
    pub scope: crate::report::Scope,
    /// The red tests to describe (result files, or the latest run).
    pub triage: TriageSettings,
}

/// `candor show`, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowSettings {
    /// The test.
    pub test_id: String,
    /// At most this many executions.
    pub limit: usize,
    /// The branch whose runs count unless `[reliability] branches` says otherwise.
    pub default_branch: Option<DefaultBranch>,
}

/// What settings are resolved against: the process's surroundings, passed in so that
/// resolution can be tested with made-up ones.
pub struct Context<'a> {
    /// The current directory.
    pub cwd: PathBuf,
    /// Reads an environment variable.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Whether stdout is a terminal.
    pub stdout_is_terminal: bool,
    /// Whether stderr is a terminal.
    pub stderr_is_terminal: bool,
    /// Now, for runs that carry no time of their own.
    pub now: Timestamp,
}

impl Context<'_> {
    fn var(&self, name: &str) -> Option<String> {
        (self.env)(name).filter(|value| !value.is_empty())
    }
}

impl Settings {
    /// Decides every setting from the arguments and the context.
    pub fn resolve(args: RawArgs, context: &Context<'_>) -> Settings {
        let format = match args.global.format {
            RawFormat::Human => OutputFormat::Human,
            RawFormat::Json => OutputFormat::Json,
        };
        let no_color = context.var(EnvVars::NO_COLOR).is_some();
        let wants_color = |is_terminal: bool| match args.global.color {
            RawColor::Always => true,
            RawColor::Never => false,
            RawColor::Auto => is_terminal && !no_color,
        };
        let output = OutputSettings {
            format,
            color_stdout: format == OutputFormat::Human && wants_color(context.stdout_is_terminal),
            color_stderr: wants_color(context.stderr_is_terminal),
            quiet: args.global.quiet,
            progress: context.stderr_is_terminal && !args.global.quiet,
            summarize: format == OutputFormat::Human
                && context.stdout_is_terminal
                && !args.global.full,
        };

        let mut warnings = Vec::new();
        let repo = Repo::new(&context.cwd);
        let db = match args.global.db {
            Some(db) => Location::parse(db.as_os_str(), &context.cwd),
            None => Location::Sqlite(
                repo.root(&mut warnings)
                    .unwrap_or_else(|| context.cwd.clone())
                    .join(DEFAULT_DB),
            ),
        };

        let command = match args.command {
            RawCommand::Ingest(raw) => {
                Command::Ingest(Box::new(resolve_ingest(raw, context, &repo, &mut warnings)))
            }
            RawCommand::Tests(raw) => Command::Tests(TestsSettings {
                failing_only: raw.failing,
                tier: raw.tier.map(|tier| {
                    use crate::stats::tiers::Tier;
                    match tier {
                        RawTier::Trusted => TierFilter::Listed(Tier::Trusted),
                        RawTier::Probation => TierFilter::Listed(Tier::Probation),
                        RawTier::Quarantined => TierFilter::Listed(Tier::Quarantined),
                        RawTier::Unlisted => TierFilter::Unlisted,
                    }
                }),
                default_branch: resolve_default_branch(context, &repo, &mut warnings),
            }),
            RawCommand::Reliability(raw) => Command::Reliability(ReliabilitySettings {
                write: raw
                    .write
                    .map(|path| path.map(|path| context.cwd.join(path))),
                default_branch: resolve_default_branch(context, &repo, &mut warnings),
            }),
            RawCommand::Agents(raw) => {
                let root = repo
                    .root(&mut warnings)
                    .unwrap_or_else(|| context.cwd.clone());
                let files = if raw.files.is_empty() {
                    crate::agents::DEFAULT_FILES
                        .iter()
                        .map(|name| root.join(name))
                        .collect()
                } else {
                    raw.files.iter().map(|f| context.cwd.join(f)).collect()
                };
                Command::Agents(Box::new(AgentsSettings {
                    files,
                    check: raw.check,
                    print: raw.print,
                    workspace: resolve_workspace(context, &repo, &mut warnings, None),
                }))
            }
            RawCommand::Mcp(raw) => Command::Mcp(McpSettings {
                allow_run: raw.allow_run,
            }),
            RawCommand::Init(raw) => Command::Init(InitSettings {
                print: raw.print,
                force: raw.force,
            }),
            RawCommand::Clean(raw) => Command::Clean(CleanSettings {
                dry_run: raw.dry_run,
                all: raw.all,
            }),
            RawCommand::Show(raw) => Command::Show(ShowSettings {
                test_id: raw.test,
                limit: raw.limit as usize,
                default_branch: resolve_default_branch(context, &repo, &mut warnings),
            }),
            RawCommand::Test(raw) => Command::Test(Box::new(TestSettings {
                policy: raw.policy.into(),
                argv: raw.argv,
                seed: raw.seed,
                workspace: resolve_workspace(context, &repo, &mut warnings, None),
            })),
            RawCommand::Triage(raw) => Command::Triage(Box::new(TriageSettings {
                files: raw.files.iter().map(|f| context.cwd.join(f)).collect(),
                workers: raw.workers,
                runner: raw.runner,
                policy: raw.policy.into(),
                workspace: resolve_workspace(context, &repo, &mut warnings, None),
            })),
            RawCommand::Rerun(raw) => Command::Rerun(Box::new(RerunSettings {
                test_id: raw.test,
                policy: raw.policy.into(),
                seed: raw.seed,
                workspace: resolve_workspace(context, &repo, &mut warnings, raw.change),
            })),
            RawCommand::Gate(raw) => {
                let against_default_branch = raw.base.is_none();
                let change = resolve_lint_diff(
                    RawLintDiff {
                        base: raw.base,
                        head: "HEAD".to_owned(),
                    },
                    &repo,
                    &mut warnings,
                );
                let workspace = resolve_lane_workspace(
                    context,
                    &repo,
                    &mut warnings,
                    &change,
                    against_default_branch,
                );
                let root = repo
                    .root(&mut warnings)
                    .unwrap_or_else(|| context.cwd.clone());
                Command::Gate(Box::new(GateSettings {
                    change,
                    report: raw.report.map_or_else(
                        || root.join("score-report.json"),
                        |path| context.cwd.join(path),
                    ),
                    approved_by: raw.approved_by,
                    step_summary: context.var(EnvVars::GITHUB_STEP_SUMMARY).map(PathBuf::from),
                    workspace,
                    jobs: raw.jobs,
                }))
            }
            RawCommand::Compare(raw) => Command::Compare(Box::new(CompareSettings {
                test_id: raw.test,
                base: raw.base,
                runs: raw.runs,
                alpha: raw.alpha,
                no_early_stop: raw.no_early_stop,
                seed: raw.seed,
                workspace: resolve_workspace(context, &repo, &mut warnings, None),
            })),
            RawCommand::Repro(raw) => Command::Repro(Box::new(ReproSettings {
                test_id: raw.test,
                seed: raw.seed,
                base: raw.base,
                runs: raw.runs,
                workspace: resolve_workspace(context, &repo, &mut warnings, None),
            })),
            RawCommand::Classify(raw) => Command::Classify(ClassifySettings {
                records: raw.records.iter().map(|r| context.cwd.join(r)).collect(),
            }),
            RawCommand::Ledger(RawLedger::Stats) => Command::LedgerStats,
            RawCommand::History(RawHistory::Copy(raw)) => Command::HistoryCopy {
                from: Location::parse(raw.from.as_os_str(), &context.cwd),
                to: Location::parse(raw.to.as_os_str(), &context.cwd),
            },
            RawCommand::History(RawHistory::Prune(raw)) => Command::HistoryPrune {
                older_than: raw.older_than,
                now: context.now,
            },
            RawCommand::Lint(RawLint::Summary(raw)) => Command::LintSummary(LintSummarySettings {
                shown: raw.file.display().to_string(),
                file: context.cwd.join(raw.file),
            }),
            RawCommand::Demo(raw) => Command::Demo(DemoSettings { keep: raw.keep }),
            RawCommand::Report(raw) => Command::Report(Box::new(ReportSettings {
                html: raw.html.map(|path| context.cwd.join(path)),
                markdown: raw.markdown,
                github_annotations: raw.github_annotations,
                gitlab_codequality: raw.gitlab_codequality.map(|path| context.cwd.join(path)),
                step_summary: context.var(EnvVars::GITHUB_STEP_SUMMARY).map(PathBuf::from),
                default_branch: resolve_default_branch(context, &repo, &mut warnings),
                since: raw.since,
                scope: crate::report::Scope {
                    since: None,
                    branch: raw.branch,
                    // Set by the command once it has read the counted branches.
                    counted: None,
                    tests: raw.tests,
                    top: raw.top as usize,
                    heatmap_runs: raw.heatmap_runs as usize,
                },
                triage: TriageSettings {
                    files: raw.files.iter().map(|f| context.cwd.join(f)).collect(),
                    workers: None,
                    runner: None,
                    policy: PolicyChoice::Base,
                    workspace: resolve_workspace(context, &repo, &mut warnings, None),
                },
            })),
            RawCommand::Lint(RawLint::Diff(raw)) => {
                Command::LintDiff(resolve_lint_diff(raw, &repo, &mut warnings))
            }
            RawCommand::Lock(raw) => Command::Lock(match raw {
                RawLock::Fixtures(raw) => LockSettings {
                    kind: LockKind::Fixtures,
                    check: raw.check,
                },
                RawLock::Cassettes(raw) => LockSettings {
                    kind: LockKind::Cassettes,
                    check: raw.check,
                },
            }),
            RawCommand::Freeze(RawFreeze::Check) => Command::FreezeCheck,
            RawCommand::Order(raw) => Command::Order(Box::new(OrderSettings {
                test_id: raw.test,
                from: raw.from.map(|file| context.cwd.join(file)),
                seed: raw.seed,
                budget: std::time::Duration::from_secs(raw.budget_seconds),
                workspace: resolve_workspace(context, &repo, &mut warnings, None),
            })),
        };
        let repo_root = repo
            .root(&mut warnings)
            .unwrap_or_else(|| context.cwd.clone());
        let today = resolve_today(context, &mut warnings);
        Settings {
            output,
            db,
            repo_root,
            command,
            today,
            warnings,
        }
    }
}

/// The commits `lint diff` compares: HEAD (or `--head`), and the merge base of `--base`
/// (else the default branch) with it, so that what the base branch gained since the change
/// forked is not read as the change taking it away.
fn resolve_lint_diff(
    raw: RawLintDiff,
    repo: &Repo,
    warnings: &mut Vec<String>,
) -> LintDiffSettings {
    if repo.root(warnings).is_none() {
        let outside = Err("not in a git repository".to_owned());
        return LintDiffSettings {
            base: outside.clone(),
            head: outside,
        };
    }
    let head = repo
        .ask(warnings, "the change's head", |git| git.commit(&raw.head))
        .ok_or_else(|| format!("`{}` names no commit here", raw.head));
    let base = match (&head, raw.base) {
        (Err(_), _) => Err("no head commit to compare".to_owned()),
        (Ok(head), Some(given)) => match repo.ask(warnings, "the base", |git| git.commit(&given)) {
            None => Err(format!("--base {given} names no commit here")),
            Some(base) => repo
                .ask(warnings, "the merge base", |git| {
                    git.merge_base(&base, head)
                })
                .ok_or_else(|| format!("--base {given} shares no history with the change")),
        },
        (Ok(head), None) => repo
            .ask(warnings, "the default branch", Git::default_branch)
            .ok_or_else(|| {
                "no default branch (origin's HEAD, main or master) to take the merge base with"
                    .to_owned()
            })
            .and_then(|branch| {
                repo.ask(warnings, "the merge base", |git| {
                    git.merge_base(head, &branch)
                })
                .ok_or_else(|| format!("HEAD shares no history with {branch}"))
            }),
    };
    LintDiffSettings { base, head }
}

/// `CANDOR_TODAY` when it is a date, else the current date in UTC.
fn resolve_today(context: &Context<'_>, warnings: &mut Vec<String>) -> Date {
    let now = crate::reliability::utc_date(context.now);
    let Some(text) = context.var(EnvVars::CANDOR_TODAY) else {
        return now;
    };
    match text.parse::<Date>() {
        Ok(date) if date.to_string() == text => date,
        _ => {
            warnings.push(format!(
                "{} is {text:?}, not a date written YYYY-MM-DD; today is {now}",
                EnvVars::CANDOR_TODAY
            ));
            now
        }
    }
}

/// HEAD, the branch, the merge base and the change, from git (CI variables outside a
/// repository).
fn resolve_workspace(
    context: &Context<'_>,
    repo: &Repo,
    warnings: &mut Vec<String>,
    change: Option<String>,
) -> Workspace {
    let ci = CiEnv::detect(|name| context.var(name));
    let head = repo.ask(warnings, "the commit", Git::head_sha);
    // One choice of the default branch for the merge base and for the branch whose runs
    // are the default branch's (`Git::base_branch`).
    let default_branch = resolve_default_branch(context, repo, warnings);
    let merge_base = head.as_deref().and_then(|head| {
        let default_branch = default_branch.as_ref()?;
        repo.ask(warnings, "the merge base", |git| {
            git.merge_base(head, &default_branch.reference)
        })
    });
    let branch = match head {
        Some(_) => repo.ask(warnings, "the branch", Git::branch),
        None => ci.branch.clone(),
    };
    let change = match (&head, change) {
        (_, Some(given)) => match repo.ask(warnings, "the change", |git| git.commit(&given)) {
            Some(base) => Ok(change_since(repo, warnings, Some(base), head.as_deref())),
            None => Err(format!(
                "--change {given} names no commit in this repository"
            )),
        },
        (Some(head), None) => Ok(change_since(repo, warnings, merge_base.clone(), Some(head))),
        (None, None) => Ok(Change::default()),
    };
    let commit = head.or_else(|| ci.commit.clone());
    // Outside a repository the current directory is the root, as for candor.toml: frames
    // under it are the project's own.
    let repo_root = repo.root(warnings).unwrap_or_else(|| context.cwd.clone());
    Workspace {
        ci,
        commit,
        branch,
        merge_base,
        default_branch,
        change,
        parse: ParseOptions {
            repo_root: Some(repo_root.to_string_lossy().into_owned()),
            ..ParseOptions::default()
        },
    }
}

/// The working copy as the merge lane records it in its runs: the CI service, HEAD and the
/// branch. HEAD is the change's head, and without `--base` the merge base is the change's
/// base (HEAD's merge base with the default branch), both asked of git once for the two,
/// so they name the same commits even if a ref moves meanwhile; with `--base` the
/// workspace has no merge base of its own. The lane counts no reruns against a change and
/// gathers no evidence by branch, so git is not asked the default branch's name or the
/// change's commits (issue #15: up to eight git processes the lane never read).
fn resolve_lane_workspace(
    context: &Context<'_>,
    repo: &Repo,
    warnings: &mut Vec<String>,
    change: &LintDiffSettings,
    against_default_branch: bool,
) -> Workspace {
    let ci = CiEnv::detect(|name| context.var(name));
    let head = change.head.as_ref().ok().cloned();
    let merge_base = against_default_branch
        .then(|| change.base.as_ref().ok().cloned())
        .flatten();
    let branch = match head {
        Some(_) => repo.ask(warnings, "the branch", Git::branch),
        None => ci.branch.clone(),
    };
    let commit = head.or_else(|| ci.commit.clone());
    let repo_root = repo.root(warnings).unwrap_or_else(|| context.cwd.clone());
    Workspace {
        ci,
        commit,
        branch,
        merge_base,
        default_branch: None,
        change: Err("the merge lane counts no reruns against a change".to_owned()),
        parse: ParseOptions {
            repo_root: Some(repo_root.to_string_lossy().into_owned()),
            ..ParseOptions::default()
        },
    }
}

/// The default branch, by the one rule of [`Git::base_branch`]: the CI service's variable
/// when it has one, else git's (`origin/HEAD`, `init.defaultBranch`, `main` or `master`),
/// with `origin/NAME` as the reference where origin has it. Outside a repository, the CI
/// variable's name alone.
fn resolve_default_branch(
    context: &Context<'_>,
    repo: &Repo,
    warnings: &mut Vec<String>,
) -> Option<DefaultBranch> {
    let ci = CiEnv::detect(|name| context.var(name));
    let variable = match ci.provider {
        Some(crate::ci_env::Provider::Buildkite) => EnvVars::BUILDKITE_PIPELINE_DEFAULT_BRANCH,
        _ => EnvVars::CI_DEFAULT_BRANCH,
    };
    let ci_default = ci.default_branch.as_deref().map(|name| (name, variable));
    let from_ci = || {
        ci.default_branch.clone().map(|name| DefaultBranch {
            reference: name.clone(),
            name,
            found_by: variable.to_owned(),
            ahead: Vec::new(),
        })
    };
    match repo.ask(warnings, "the default branch", |git| {
        git.base_branch(ci_default)
    }) {
        Some(base) => Some(DefaultBranch {
            name: base.name,
            reference: base.reference,
            found_by: base.found_by,
            ahead: base.ahead,
        }),
        None => from_ci(),
    }
}

/// The change after `base` up to `head`, `head` included.
fn change_since(
    repo: &Repo,
    warnings: &mut Vec<String>,
    base: Option<String>,
    head: Option<&str>,
) -> Change {
    let Some(head) = head else {
        return Change {
            base,
            commits: Vec::new(),
        };
    };
    let mut commits = base
        .as_deref()
        .and_then(|base| {
            repo.ask(warnings, "the change's commits", |git| {
                git.commits_between(base, head)
            })
        })
        .unwrap_or_default();
    if !commits.iter().any(|commit| commit == head) {
        commits.insert(0, head.to_owned());
    }
    Change { base, commits }
}

fn resolve_ingest(
    raw: RawIngest,
    context: &Context<'_>,
    repo: &Repo,
    warnings: &mut Vec<String>,
) -> IngestSettings {
    let ci = CiEnv::detect(|name| context.var(name));
    let head = OnceCell::new();
    let head_sha = |warnings: &mut Vec<String>| {
        head.get_or_init(|| repo.ask(warnings, "the commit", Git::head_sha))
            .clone()
    };
    // A commit given by an abbreviated sha is stored as the full sha where git knows it:
    // the content key and every lookup of runs by commit (the merge base's, the ledger's)
    // use full shas, so `--commit 3f2a9c1` and `--commit 3f2a9c1e…` are one run.
    let given = raw.commit.map(|given| full_commit(given, repo, warnings));
    let commit_from = if given.is_some() {
        Some(CommitFrom::Option)
    } else if ci.commit.is_some() {
        Some(CommitFrom::Ci)
    } else {
        head_sha(warnings).map(|_| CommitFrom::Head)
    };
    let commit = given.or(ci.commit).or_else(|| head_sha(warnings));
    let head_committed_at = (commit_from == Some(CommitFrom::Head))
        .then(|| {
            repo.ask(warnings, "HEAD's commit time", |git| {
                git.commit_time("HEAD")
            })
        })
        .flatten();
    // The checked-out branch says nothing about a commit given explicitly that is not HEAD.
    let commit_is_head = commit
        .as_deref()
        .is_none_or(|commit| head_sha(warnings).is_some_and(|head| head.starts_with(commit)));
    let branch = raw.branch.or(ci.branch).or_else(|| {
        commit_is_head
            .then(|| repo.ask(warnings, "the branch", Git::branch))
            .flatten()
    });
    let merge_base = commit.as_deref().and_then(|commit| {
        let default_branch = repo.ask(warnings, "the default branch", Git::default_branch)?;
        repo.ask(warnings, "the merge base", |git| {
            git.merge_base(commit, &default_branch)
        })
    });
    let source = match raw.source {
        Some(RawSource::Ci) => Source::Ci,
        Some(RawSource::Local) => Source::Local,
        None => {
            if ci.detected {
                Source::Ci
            } else {
                Source::Local
            }
        }
    };
    let repo_root = repo.root(warnings);
    IngestSettings {
        inputs: raw.paths,
        run: NewRun {
            commit,
            branch,
            merge_base,
            started_at: context.now,
            source,
            ci_provider: ci.provider.map(|p| p.as_str().to_owned()),
            job: raw.job.or(ci.job),
            ci_run: crate::history::CiRun::new(ci.repository, ci.run_id, ci.attempt),
            workers: raw.workers,
            seed: raw.seed,
            conditions: Conditions {
                ci: source == Source::Ci,
                runner: None,
                os: Some(std::env::consts::OS.to_owned()),
            },
            format: None,
            producer: None,
            source_path: None,
        },
        parse: ParseOptions {
            repo_root: repo_root.map(|root| root.to_string_lossy().into_owned()),
            test_binary: raw.binary.or(raw.crate_name),
        },
        commit_from,
        head_committed_at,
    }
}

/// `given` (a sha of 4 to 64 hex digits, lowercase) as the full sha git resolves it to;
/// as given outside a work tree, or when git knows no such commit (said in a warning).
fn full_commit(given: String, repo: &Repo, warnings: &mut Vec<String>) -> String {
    if crate::git::is_object_id(&given) {
        return given;
    }
    // git prefers a ref to an abbreviated sha of the same spelling (a branch named
    // `abcd1234`): only a commit whose sha the given digits begin is the one meant.
    if let Some(full) = repo
        .ask(warnings, "the commit", |git| git.commit(&given))
        .filter(|full| full.starts_with(&given))
    {
        return full;
    }
    if repo.root(warnings).is_some() {
        warnings.push(format!(
            "git resolves --commit {given} to no single commit in this repository: stored as given (the same file ingested with the full sha would be a second run)"
        ));
    }
    given
}

/// git questions about the current directory, asked at most once each and only when a
/// setting needs the answer. A git that fails becomes a warning and "unknown": a result
/// file is worth storing even when git cannot say which commit it belongs to.
struct Repo {
    git: Git,
    root: OnceCell<Option<PathBuf>>,
}

impl Repo {
    fn new(cwd: &Path) -> Repo {
        Repo {
            git: Git::new(cwd),
            root: OnceCell::new(),
        }
    }

    fn root(&self, warnings: &mut Vec<String>) -> Option<PathBuf> {
        self.root
            .get_or_init(|| self.answer(warnings, "the repository root", Git::repo_root))
            .clone()
    }

    /// git's answer, or `None` without asking outside a work tree (where each question
    /// would start a `git` only to hear "not a git repository").
    fn ask<T>(
        &self,
        warnings: &mut Vec<String>,
        what: &str,
        question: impl FnOnce(&Git) -> Result<Option<T>, GitError>,
    ) -> Option<T> {
        self.root(warnings)?;
        self.answer(warnings, what, question)
    }

    fn answer<T>(
        &self,
        warnings: &mut Vec<String>,
        what: &str,
        question: impl FnOnce(&Git) -> Result<Option<T>, GitError>,
    ) -> Option<T> {
        match question(&self.git) {
            Ok(answer) => answer,
            Err(error) if error.is_missing_program() => None,
            Err(error) => {
                warnings.push(format!("could not read {what} from git: {error}"));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use clap::Parser;

    use super::*;

    fn resolve(command_line: &[&str], vars: &[(&str, &str)], stdout_is_terminal: bool) -> Settings {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let lookup = move |name: &str| vars.get(name).cloned();
        let cwd = tempfile::tempdir().expect("temp dir");
        let context = Context {
            cwd: cwd.path().to_owned(),
            env: &lookup,
            stdout_is_terminal,
            stderr_is_terminal: stdout_is_terminal,
            now: Timestamp::UNIX_EPOCH,
        };
        let args = RawArgs::try_parse_from(command_line).expect("arguments parse");
        Settings::resolve(args, &context)
    }

    /// Issue #12 item 8: long listings are cut only for a person at a terminal.
    #[test]
    fn listings_are_summarized_on_a_terminal_unless_full_or_json() {
        let summarize = |line: &[&str], terminal| resolve(line, &[], terminal).output.summarize;
        assert!(summarize(&["candor", "reliability"], true));
        assert!(!summarize(&["candor", "reliability"], false));
        assert!(!summarize(&["candor", "reliability", "--full"], true));
        assert!(!summarize(&["candor", "--full", "gate"], true));
        assert!(!summarize(
            &["candor", "reliability", "--format", "json"],
            true
        ));
    }

    #[test]
    fn auto_color_needs_a_terminal_and_no_no_color() {
        assert!(resolve(&["candor", "tests"], &[], true).output.color_stdout);
        assert!(
            !resolve(&["candor", "tests"], &[], false)
                .output
                .color_stdout
        );
        assert!(
            !resolve(&["candor", "tests"], &[("NO_COLOR", "1")], true)
                .output
                .color_stdout
        );
        assert!(
            resolve(&["candor", "tests"], &[("NO_COLOR", "")], true)
                .output
                .color_stdout,
            "an empty NO_COLOR is unset"
        );
        assert!(
            resolve(
                &["candor", "--color", "always", "tests"],
                &[("NO_COLOR", "1")],
                false
            )
            .output
            .color_stdout
        );
        assert!(
            !resolve(
                &["candor", "--color", "always", "--format", "json", "tests"],
                &[],
                true
            )
            .output
            .color_stdout,
            "JSON is never colored"
        );
    }

    #[test]
    fn outside_a_repository_the_db_is_under_the_current_directory() {
        let settings = resolve(&["candor", "tests"], &[], false);
        assert!(settings.db.shown().ends_with(DEFAULT_DB), "{}", settings.db);
        assert!(settings.warnings.is_empty(), "{:?}", settings.warnings);
    }

    #[test]
    fn ci_variables_fill_the_run_and_flags_win() {
        let sha = "89abcdef0123456789abcdef0123456789abcdef";
        let vars = [
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_SHA", sha),
            ("GITHUB_REF_NAME", "main"),
            ("GITHUB_JOB", "unit"),
        ];
        let Command::Ingest(from_ci) =
            resolve(&["candor", "ingest", "r.xml"], &vars, false).command
        else {
            panic!("ingest");
        };
        assert_eq!(from_ci.run.commit.as_deref(), Some(sha));
        assert_eq!(from_ci.run.branch.as_deref(), Some("main"));
        assert_eq!(from_ci.run.job.as_deref(), Some("unit"));
        assert_eq!(from_ci.run.source, Source::Ci);
        assert!(from_ci.run.conditions.ci);
        assert_eq!(from_ci.run.ci_provider.as_deref(), Some("github-actions"));

        let Command::Ingest(flags) = resolve(
            &[
                "candor",
                "ingest",
                "r.xml",
                "--branch",
                "mine",
                "--job",
                "j",
                "--source",
                "local",
                "--workers",
                "4",
                "--seed",
                "rs=1",
            ],
            &vars,
            false,
        )
        .command
        else {
            panic!("ingest");
        };
        assert_eq!(flags.run.branch.as_deref(), Some("mine"));
        assert_eq!(flags.run.job.as_deref(), Some("j"));
        assert_eq!(flags.run.source, Source::Local);
        assert!(!flags.run.conditions.ci);
        assert_eq!(flags.run.workers, Some(4));
        assert_eq!(flags.run.seed.as_deref(), Some("rs=1"));
    }

    #[test]
    fn without_ci_or_git_the_run_is_local_and_unknown() {
        let Command::Ingest(ingest) = resolve(&["candor", "ingest", "r.xml"], &[], false).command
        else {
            panic!("ingest");
        };
        assert_eq!(ingest.run.source, Source::Local);
        assert_eq!(ingest.run.commit, None);
        assert_eq!(ingest.run.branch, None);
        assert_eq!(ingest.parse.repo_root, None);
    }
}
